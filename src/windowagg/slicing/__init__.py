"""General stream slicing (Scotty paper): window types, the slicer, the slice and window
managers, the aggregate stores and the :class:`WindowOperator` that ties them together."""

from .manager import WindowResult
from .operator import WindowOperator
from .windows import (
    ContextAwareWindow,
    ContextFreeWindow,
    EdgeContext,
    FixedBand,
    Punctuation,
    Session,
    Sliding,
    Tumbling,
    Window,
)

__all__ = [
    "ContextAwareWindow",
    "ContextFreeWindow",
    "EdgeContext",
    "FixedBand",
    "Punctuation",
    "Session",
    "Sliding",
    "Tumbling",
    "Window",
    "WindowOperator",
    "WindowResult",
]
