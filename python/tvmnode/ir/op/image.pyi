"""Generated from the operator registry by tvmnode.ir.op._gen.stub_text("image"); do not edit."""
from typing import Any, Optional, Sequence, Union
from tvmnode.ir import Call, Expr

def resize2d(data: Expr, size: Any, method: Any = ..., align_corners: Any = ..., half_pixel_centers: Any = ..., layout: Any = ...) -> Call: ...
