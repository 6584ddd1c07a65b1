"""tvmnode.ir.op.image: the image.* operators, generated from the registry."""
from typing import List

from ._gen import populate as _populate

__all__: List[str] = _populate(globals(), "image")
