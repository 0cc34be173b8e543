"""Moving to real hardware: what a program of yours calls in C, and what the emulator changes.

Notebook 09 uses these to put a learner's program beside its C version. ``c_calls`` lists the
ACL functions a trace called, each with its C name (the name in the CANN documentation and
in ``acl/acl.h``) and how often; ``differences`` gathers, from the emulated functions' own
docstrings, what each one does differently from a real NPU (every emulated function's
docstring ends with "Differs from real ACL: ..."), so the list can never fall behind the
code. ``differences`` follows "as X" references ("Differs from real ACL: as execute.") to the
text they point at.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from typing import Any

#: The sentence every emulated function's docstring ends with.
MARK = "Differs from real ACL:"


def _registry() -> dict[str, dict[str, Any]]:
    from .acl import _boundary

    return _boundary.registry()


def _own_text(entry: dict[str, Any]) -> str:
    doc = inspect.getdoc(entry["impl"]) or ""
    i = doc.find(MARK)
    return " ".join(doc[i + len(MARK):].split()) if i >= 0 else ""


def differences(names: Iterable[str] | None = None) -> dict[str, str]:
    """pyACL name -> how the emulator differs from a real NPU there (one line of text).

    Args:
        names: pyACL names (``"acl.rt.malloc"``); default every emulated function.

    Returns:
        In the order given (or sorted). An "as X" text is completed with X's own text
        (``as execute`` -> ``as acl.mdl.execute: ...``); a name the emulator does not have
        maps to ``"(not emulated)"``.
    """
    reg = _registry()
    wanted = sorted(reg) if names is None else list(dict.fromkeys(names))
    out: dict[str, str] = {}
    for name in wanted:
        entry = reg.get(name)
        if entry is None:
            out[name] = "(not emulated)"
            continue
        text = _own_text(entry)
        m = re.fullmatch(r"[Aa]s (?:acl\.\w+\.)?(\w+)\.?", text)
        if m:
            prefix = name.rsplit(".", 1)[0]
            target = next((n for n in (f"{prefix}.{m.group(1)}", m.group(1)) if n in reg),
                          None)
            if target is not None and target != name:
                text = f"as {target}: {_own_text(reg[target])}"
        out[name] = text
    return out


def c_calls(trace: Any) -> list[tuple[str, str, int]]:
    """``(pyACL name, C name, calls)`` for every ACL function ``trace`` called, in the order
    of first use (the order a C version of the program calls them in)."""
    reg = _registry()
    names = trace.calls["name"]
    order: dict[int, int] = {}
    for sid in names.tolist():
        order[int(sid)] = order.get(int(sid), 0) + 1
    out = []
    for sid, n in order.items():
        name = trace.string(sid)
        entry = reg.get(name)
        cname = entry["cname"] if entry else name
        if name.startswith("acl.util."):
            cname = "(pyACL only)"  # Python buffer helpers: a C program has the pointer
        out.append((name, cname, n))
    return out


__all__ = ["MARK", "c_calls", "differences"]
