"""The one boundary between pyACL calls and the runtime: ``@acl_api``.

Each emulated function is declared with its C name, an argument format in the spirit of
``PyArg_ParseTuple`` and its return shape. The decorator parses arguments (wrong types raise
``TypeError("acl.x.y args parse failed")`` like the binding, and the runtime is not called),
publishes the API-call hook with the caller's file:line, maps ``AclError`` to the integer
code, shapes ``(value..., ret)``, and advances the device to the caller's clock.
``DeadlockError`` is the one exception that passes through: a hang has no return code.

Format letters: ``i`` int32, ``I`` uint32, ``L`` int64, ``k`` uint64 (handle; negative
values wrap like ``PyLong_AsUnsignedLongMask``), ``p`` a uint64 pointer (recorded relative to
its allocation in the trace), ``s`` str, ``z`` str or None, ``O`` any object, ``C`` a
callable, ``f`` float, ``|`` marks the start of optional arguments.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from ..runtime.errors import AclError
from ..runtime.session import Session, current_session

F = TypeVar("F", bound=Callable[..., Any])

#: Host cost classes (ns) for the virtual clock; the profile refines launch costs.
PLAIN = 0
LAUNCH = 1

_REGISTRY: dict[str, dict[str, Any]] = {}
_MASK64 = (1 << 64) - 1


def _bad(name: str) -> TypeError:
    return TypeError(f"{name} args parse failed")


def _parse(name: str, fmt: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Check and convert arguments like PyArg_ParseTuple would."""
    required = fmt.find("|")
    letters = fmt.replace("|", "")
    nreq = len(letters) if required < 0 else required
    if not nreq <= len(args) <= len(letters):
        raise _bad(name)
    out = list(args)
    for i, a in enumerate(args):
        c = letters[i]
        if c in "iILkp":
            if type(a) is not int:
                if isinstance(a, (float, str, bytes)):
                    raise _bad(name)
                try:
                    a = operator.index(a)
                except TypeError:
                    raise _bad(name) from None
            if c == "i" and not -(1 << 31) <= a < (1 << 31):
                raise _bad(name)
            if c == "I":
                a &= 0xFFFFFFFF
            elif c == "L" and not -(1 << 63) <= a < (1 << 63):
                raise _bad(name)
            elif c in "kp":
                a &= _MASK64
            out[i] = a
        elif c == "s":
            if not isinstance(a, str):
                raise _bad(name)
        elif c == "z":
            if a is not None and not isinstance(a, str):
                raise _bad(name)
        elif c == "C":
            if not callable(a):
                raise _bad(name)
        elif c == "f":
            if isinstance(a, (str, bytes)) or a is None:
                raise _bad(name)
            try:
                out[i] = float(a)
            except (TypeError, ValueError):
                raise _bad(name) from None
    return tuple(out)


def acl_api(name: str, cname: str, fmt: str, out: int | str = 0, launch: bool = False,
            default: Any = 0) -> Callable[[F], F]:
    """Declare an emulated pyACL function.

    Args:
        name: the pyACL spelling, e.g. ``"acl.rt.malloc"``.
        cname: the C API, e.g. ``"aclrtMalloc"``.
        fmt: argument format (see the module docstring).
        out: 0 -> return ``ret``; n >= 1 -> ``(v1, ..., vn, ret)``; ``"value"`` -> return the
            value only (C functions that return a pointer or size); ``"none"`` -> None.
        launch: the call submits device work (charged the profile's launch cost).
        default: the output value(s) on failure (what C leaves in the out-pointer: 0).

    The implementation receives ``(session, thread, call_id, *parsed_args)`` and returns the
    output value (a tuple when ``out > 1``).
    """
    letters = fmt.replace("|", "")
    ptrs = sum(1 << i for i, c in enumerate(letters) if c == "p")

    def deco(impl: F) -> F:
        _REGISTRY[name] = {"cname": cname, "fmt": fmt, "out": out, "impl": impl}

        @wraps(impl)
        def wrapper(*args: Any) -> Any:
            parsed = _parse(name, fmt, args)
            s = current_session()
            assert s is not None
            f = sys._getframe(1)
            with s.lock:
                cost = s.profile.launch_call_ns if launch else s.profile.api_call_ns
                th, cid, _ = s.api_enter(name, cost, parsed, ptrs, f.f_code.co_filename,
                                         f.f_lineno)
                try:
                    value = impl(s, th, cid, *parsed)
                    ret = 0
                except AclError as e:
                    ret = s.fail(th, cid, e)
                    value = default
                except BaseException:
                    s.api_exit(th, cid, -1)
                    raise
                s.api_exit(th, cid, ret)
            if out == 0:
                return ret
            if out == "value":
                return value
            if out == "none":
                return None
            if out == 1:
                return value, ret
            return (*value, ret)

        wrapper.__acl_name__ = name  # type: ignore[attr-defined]
        wrapper.__acl_cname__ = cname  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return deco


def registry() -> dict[str, dict[str, Any]]:
    """Every declared pyACL function: name -> {cname, fmt, out, impl}."""
    return dict(_REGISTRY)


def c_name(name: str) -> str:
    """The C API name of a pyACL function name (``acl.rt.malloc`` -> ``aclrtMalloc``)."""
    entry = _REGISTRY.get(name)
    return entry["cname"] if entry else name


def session_or_none() -> Session | None:
    """The bound session without creating one."""
    return current_session(create=False)
