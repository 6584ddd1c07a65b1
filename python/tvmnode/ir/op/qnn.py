"""tvmnode.ir.op.qnn: the qnn.* operators, generated from the registry."""
from typing import List

from ._gen import populate as _populate

__all__: List[str] = _populate(globals(), "qnn")
