"""Plotly views of a Trace: pure functions, Trace or Finding in, ``go.Figure`` out.

Only this package imports plotly (``import acl_lab`` does not). No view calls ``show()``;
notebooks display the returned figure. Names are imported lazily so that importing one view
does not load the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "timeline": "timeline",
    "memory_map": "memory_map",
    "wait_graph": "graphs",
    "race_view": "graphs",
    "overlap_figure": "overlap",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(import_module(f"{__name__}.{module}"), name)
