"""The one boundary between pyACL calls and the runtime: ``@acl_api``.

Each emulated function is declared with its C name, an argument format in the spirit of
``PyArg_ParseTuple`` and its return shape. The decorator parses arguments (wrong types raise
``TypeError`` with the binding's own text for that function, from ``_binding.TABLE``, and the
runtime is not called), publishes the API-call hook with the caller's file:line, maps
``AclError`` to the integer code, shapes ``(value..., ret)``, and advances the device to the
caller's clock. ``DeadlockError`` is the one exception that passes through: a hang has no
return code.

Under the decorator sits a transport, the way HTTPX puts one under its client: the wrapper
parses and finds the caller's site, then hands ``(args, file, line)`` to the bound call of the
current ``Transport``. ``InProcess`` (the default) runs the runtime on this process's Session;
``acl_lab.transport.Pipe`` forwards the call to an emulator process (``acl-lab grade`` uses it
so that the trace is recorded outside the learner's reach). ``set_transport`` switches.

Format letters are the binding's (CPython's ``PyArg_ParseTuple`` rules): ``i`` int32, ``h``
int16 and ``b`` uint8 (range-checked), ``l``/``L`` int64, ``I``/``H``/``B`` unsigned 32/16/8
bits (masked, no overflow check), all of which take any object with ``__index__`` (numpy
integers too); ``k``/``K`` uint64 (handles and addresses: only a real ``int`` or ``bool``,
negative values wrap like ``PyLong_AsUnsignedLongMask``); ``s`` str without NUL; ``z`` str or
None; ``f``/``d`` float (ints too); ``O`` any object; ``|`` starts the optional arguments.
acl_lab adds two refinements the audit maps back to the binding's letter: ``p`` is ``k`` for
a pointer (recorded relative to its allocation in the trace) and ``C`` is ``O`` that must be
callable (checked after parsing, ``TypeError("parameter must be callable")`` like the
binding's wrappers). An empty format is the binding's wrapper that parses nothing: it accepts
and ignores any positional arguments (53 entries, e.g. ``acl.rt.get_device(0)``).
"""

from __future__ import annotations

import inspect
import operator
import sys
import threading as _threading
from collections.abc import Callable
from functools import wraps
from types import CodeType, FunctionType
from typing import Any, TypeVar

from ..constants import ErrorCode
from ..runtime import hostsched as _hostsched
from ..runtime import pysync as _pysync
from ..runtime import scheduler
from ..runtime import session as _sessions
from ..runtime.errors import AclError
from ..runtime.session import current_session
from ._binding import BY_NAME

F = TypeVar("F", bound=Callable[..., Any])

#: Host cost classes (ns) for the virtual clock; the profile refines launch costs.
PLAIN = 0
LAUNCH = 1

_REGISTRY: dict[str, dict[str, Any]] = {}
#: How the in-process transport names threads to the program's primitives (itself).
_IN_PROCESS_NAMES = _pysync.Resolver()
_EXITED = _hostsched.EXITED
#: Marks a positional argument the caller did not pass (generated wrappers only).
_MISSING = object()
_MASK64 = (1 << 64) - 1


def _bad(name: str, cpython: str = "") -> TypeError:
    """The binding's TypeError for a parse failure of ``name`` (``cpython``: the text
    CPython itself gives, used where the binding lets it through)."""
    entry = BY_NAME.get(name)
    text = entry.message() if entry is not None else f"{name} args parse failed"
    return TypeError(text if text is not None else cpython or f"{name}() bad arguments")


def _no_keywords(name: str) -> TypeError:
    """CPython's TypeError for a keyword argument to a METH_VARARGS function (every entry
    of the binding is one)."""
    return TypeError(f"{name.rpartition('.')[2]}() takes no keyword arguments")


#: what each integer letter accepts: (low, high) range checked, or a mask applied
_RANGE = {"i": (-(1 << 31), (1 << 31) - 1), "h": (-(1 << 15), (1 << 15) - 1),
          "b": (0, 255), "l": (-(1 << 63), (1 << 63) - 1), "L": (-(1 << 63), (1 << 63) - 1)}
_MASK = {"I": 0xFFFFFFFF, "H": 0xFFFF, "B": 0xFF, "k": _MASK64, "K": _MASK64, "p": _MASK64}
_INTS = "ihblLIHBkKp"


def _count_text(nreq: int, nmax: int, given: int) -> str:
    if nreq == nmax:
        return f"function takes exactly {nmax} arguments ({given} given)"
    if given < nreq:
        return f"function takes at least {nreq} arguments ({given} given)"
    return f"function takes at most {nmax} arguments ({given} given)"


def _parse(name: str, fmt: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Check and convert arguments like PyArg_ParseTuple would (CPython's getargs.c rules:
    ``k``/``K`` want ``PyLong_Check``, the other integer letters go through ``__index__``)."""
    required = fmt.find("|")
    letters = fmt.replace("|", "")
    nreq = len(letters) if required < 0 else required
    if not nreq <= len(args) <= len(letters):
        raise _bad(name, _count_text(nreq, len(letters), len(args)))
    out = list(args)
    callable_needed = False
    for i, a in enumerate(args):
        c = letters[i]
        if c in _INTS:
            if c in "kKp":
                if not isinstance(a, int):
                    raise _bad(name, f"argument {i + 1} must be int, not {type(a).__name__}")
                a = int(a)
            elif type(a) is not int:
                if isinstance(a, (float, str, bytes)):
                    raise _bad(name, f"argument {i + 1} must be int, not {type(a).__name__}")
                try:
                    a = operator.index(a)
                except TypeError:
                    raise _bad(name, f"argument {i + 1} must be int, not "
                                     f"{type(a).__name__}") from None
            if c in _RANGE:
                lo, hi = _RANGE[c]
                if not lo <= a <= hi:
                    raise _bad(name, f"argument {i + 1} is out of range")
            else:
                a &= _MASK[c]
            out[i] = a
        elif c == "s":
            if not isinstance(a, str) or "\0" in a:
                raise _bad(name, f"argument {i + 1} must be str, not {type(a).__name__}")
        elif c == "z":
            if a is not None and (not isinstance(a, str) or "\0" in a):
                raise _bad(name, f"argument {i + 1} must be str or None, not "
                                 f"{type(a).__name__}")
        elif c == "C":
            callable_needed = callable_needed or not callable(a)
        elif c in "fd":
            if isinstance(a, (str, bytes)) or a is None:
                raise _bad(name, f"argument {i + 1} must be real number, not "
                                 f"{type(a).__name__}")
            try:
                out[i] = float(a)
            except (TypeError, ValueError):
                raise _bad(name, f"argument {i + 1} must be real number, not "
                                 f"{type(a).__name__}") from None
    if callable_needed:
        # the binding's callback wrappers parse "O" and then check PyCallable_Check
        raise TypeError("parameter must be callable")
    return tuple(out)


#: Generated functions' compiled code by source text, with their defaults: the wrappers of
#: one format (and the bound calls of one return shape) share one compile.
_COMPILED: dict[str, tuple[CodeType, Any]] = {}


def _generate(src: str, fname: str, name: str, filename: str, env: dict[str, Any]) -> Any:
    """The function ``fname`` that ``src`` defines, with globals ``env``, named ``name`` and
    shown as ``filename`` in tracebacks. Compiling is most of the cost of declaring an API
    function (over 300 at ``import acl``), so a source text is compiled once; its defaults
    are shared (they are only the ``_MISSING`` marker)."""
    hit = _COMPILED.get(src)
    if hit is None:
        scratch = dict(env)
        exec(compile(src, filename, "exec"), scratch)
        fn = scratch[fname]
        hit = _COMPILED[src] = (fn.__code__, fn.__defaults__)
    code, defaults = hit
    changes: dict[str, Any] = {"co_name": name, "co_filename": filename}
    if sys.version_info >= (3, 11):
        changes["co_qualname"] = name
    return FunctionType(code.replace(**changes), env, name, defaults)


def _fast_check(fmt: str) -> str:
    """Source of a boolean expression that is True when every argument already has the
    plain type and range the format wants (the common case, checked without a loop); an
    unsigned 64-bit letter only needs an int, which the wrapper masks."""
    letters = fmt.replace("|", "")
    parts = []
    for i, c in enumerate(letters):
        a = f"a{i}"
        if c == "i":
            parts.append(f"type({a}) is int and -2147483648 <= {a} <= 2147483647")
        elif c == "I":
            parts.append(f"type({a}) is int and 0 <= {a} <= 4294967295")
        elif c in "lL":
            parts.append(f"type({a}) is int and -9223372036854775808 <= {a} "
                         "<= 9223372036854775807")
        elif c in "kKp":
            parts.append(f"type({a}) is int")  # masked to 64 bits in the fast tuple
        elif c == "h":
            parts.append(f"type({a}) is int and -32768 <= {a} <= 32767")
        elif c in "bB":
            parts.append(f"type({a}) is int and 0 <= {a} <= 255")
        elif c == "H":
            parts.append(f"type({a}) is int and 0 <= {a} <= 65535")
        elif c == "s":
            parts.append(f"type({a}) is str and '\\0' not in {a}")
        else:
            parts.append("False")
    return " and ".join(parts) if parts else "True"


#: ACL_ERROR_REPEAT_FINALIZE: aclFinalize after finalize (``aclFinalizeImpl`` checks
#: ``aclFinalizeFlag``; ``aclFinalizeReferenceImpl`` a count below 1: hicann/runtime
#: src/acl/aclrt_impl/acl.cpp).
_REPEAT_FINALIZE = int(ErrorCode.ACL_ERROR_REPEAT_FINALIZE)
#: ACL_ERROR_UNINITIALIZE ("aclInit was not called", docs/zh/api_ref/25-01_aclError.md).
_UNINITIALIZE = int(ErrorCode.ACL_ERROR_UNINITIALIZE)


def _after_exit_code(name: str) -> int:
    """The code of a call made during interpreter shutdown when no session is bound (no ACL
    call ever set one up, or the program unbound it): a finalize is a repeat finalize, any
    other call finds ACL uninitialised. Nothing is built or imported to answer it."""
    return _REPEAT_FINALIZE if name in ("acl.finalize", "acl.finalize_reference") \
        else _UNINITIALIZE


class ApiSpec:
    """What the decorator knows of one emulated function, handed to a transport's ``bind``.

    ``shape`` is the return expression over ``value`` and ``ret`` (``"ret"``,
    ``"(value, ret)"``, ``"(*value, ret)"``, ``"value"`` or ``"None"``); ``slot[0]`` the
    transport's bound call the generated wrapper makes when the transport does not inline
    its call (rebound by ``set_transport``).
    """

    __slots__ = ("cname", "default", "fmt", "impl", "launch", "name", "out", "shape", "slot")

    def __init__(self, name: str, cname: str, fmt: str, out: int | str, launch: bool,
                 default: Any, impl: Callable[..., Any], shape: str) -> None:
        self.name, self.cname, self.fmt, self.out = name, cname, fmt, out
        self.launch, self.default, self.impl = launch, default, impl
        self.shape = shape
        self.slot: list[Callable[[tuple[Any, ...], str, int], Any]] = [_unbound]

    def with_impl(self, impl: Callable[..., Any]) -> ApiSpec:
        """The same function carried out by ``impl`` (an unbound spec of its own; a
        transport's server side swaps an implementation this way)."""
        return ApiSpec(self.name, self.cname, self.fmt, self.out, self.launch, self.default,
                       impl, self.shape)


def _unbound(args: tuple[Any, ...], file: str, line: int) -> Any:  # pragma: no cover
    raise RuntimeError("acl_api wrapper called before its transport was bound")


class Transport:
    """Where a parsed pyACL call goes: the seam under ``@acl_api``.

    The decorator parses the arguments and finds the caller's site, then calls the bound
    function ``bind(spec)`` returned, as ``call(args, file, line)``, on the calling thread
    (the calling thread is the thread that makes that call). ``InProcess`` runs the runtime
    here; ``acl_lab.transport.Pipe`` forwards the call to an emulator in another process.

    A transport may also offer ``inline(spec)``: the same call as source text that the
    wrapper runs in its own frame (one frame less on every call; ``InProcess`` does).
    """

    def bind(self, spec: ApiSpec) -> Callable[[tuple[Any, ...], str, int], Any]:
        """The function that carries out calls of ``spec``: ``(args, file, line) -> result``
        (already shaped like the pyACL function's return)."""
        raise NotImplementedError

    def inline(self, spec: ApiSpec) -> tuple[str, dict[str, Any]] | None:
        """``(body, globals)``: the statements of ``bind(spec)``'s call, indented four
        spaces, over the locals ``args``, ``file`` and ``line``, and the globals they use;
        None (the default) when the wrapper is to call ``bind``'s function instead."""
        return None

    # The host schedule's side of the program's Python primitives (``acl_lab.pythreads``):
    # the calling thread's token, whether turns can switch, and the host operations of
    # ``runtime.pysync.handle``.
    def host_thread(self) -> Any | None:
        """The calling thread's token in the host schedule, or None when it takes no part
        (no session, a thread outside the schedule, a schedule that ended): its primitives
        then behave as the operating system's."""
        return None

    def host_multi(self) -> bool:
        """Whether more than one thread takes part (a lone thread's operations that cannot
        block need not be reported)."""
        return False

    def host(self, op: str, args: tuple[Any, ...], file: str, line: int) -> Any:
        """Carry out host operation ``op`` (``runtime.pysync.handle``) for the calling
        thread, made at the program's ``file``:``line``."""
        raise NotImplementedError


class InProcess(Transport):
    """The default transport: run the implementation on this process's Session.

    Publishes the API-call hook with the caller's site, maps ``AclError`` to its code, shapes
    the return and advances the device to the caller's clock. The call is generated per
    function (like the wrapper) and written into the wrapper itself (``inline``), so the
    common call makes no call of its own before the implementation's.
    """

    def inline(self, spec: ApiSpec) -> tuple[str, dict[str, Any]]:
        """The in-process call of ``spec`` as the wrapper's own statements (see the class
        docstring)."""
        # ``Session.api_enter`` and ``api_exit`` (the bracket of hostwork, the transport
        # server and the C bridge), written out: this is every pyACL call's path, and calling
        # the two costs ~0.8 µs a call (a traced memcpy_async 13.3 -> 14.1 µs, tracing
        # 1.47x -> 1.68x; python -m benchmarks --only api_overhead). Change them together.
        # The host cost is the profile field ``costs.api_call_ns`` returns, read in place.
        cost = "launch_call_ns" if spec.launch else "api_call_ns"
        # The bound session is read in place (``current_session`` makes one on first use).
        body = f"""    s = _SESSIONS._current
    if s is None:
        s = _current()
        if s is None:  # interpreter shutdown, no session: ACL is gone (see AFTER_EXIT)
            value, ret = DEFAULT, AFTER_EXIT
            return {spec.shape}
    with s.lock:
        th = getattr(s.tls, "th", None) or s.thread()
        if s.sched.multi and th.controlled:
            POINT(s, th)
        cid = s.call_count
        s.call_count = cid + 1
        start = th.clock
        th.clock = start + s.profile.{cost}
        ctx = th.ctx
        s.hooks.on_call_begin(cid, NAME, th.idx, ctx.oid if ctx is not None else -1, file,
                              line, start, args, FMT)
        try:
            value = IMPL(s, th, cid, *args)
            ret = 0
        except AclError as e:
            ret = s.fail(th, cid, e)
            value = DEFAULT
        except BaseException:
            s.api_exit(th, cid, -1)
            raise
        eff = s.effects
        if eff and eff[0][0] <= th.clock:
            ADVANCE(s, th.clock)
        s.hooks.on_call_end(cid, th.clock, ret)
        if not th.controlled and s.sched.running is None:
            KICK(s)  # a thread outside the schedule may have ended a wait
        if s.interrupt_pending:
            s.deliver_interrupt()
    return {spec.shape}
"""
        env: dict[str, Any] = {"NAME": spec.name, "FMT": spec.fmt,
                               "_current": current_session, "_SESSIONS": _sessions,
                               "POINT": _hostsched.point, "KICK": _hostsched.kick,
                               "AclError": AclError,
                               "IMPL": spec.impl, "ADVANCE": scheduler.advance,
                               "DEFAULT": spec.default,
                               "AFTER_EXIT": _after_exit_code(spec.name)}
        return body, env

    def host_thread(self) -> Any | None:
        """The calling thread's HostThread when it takes part in the schedule (see
        ``Transport.host_thread``); registers a thread of the program on first use."""
        s = _sessions._current
        if s is None or s.sched.closed:
            return None
        th = getattr(s.tls, "th", None)
        if th is None:
            t = _threading.current_thread()
            if getattr(t, "_acl_lab_external", False) or (
                    t is not s.sched.owner and t not in s.threads
                    and t in s.background_threads):
                return None
            with s.lock:
                th = s.thread()
        return th if th.controlled and th.turn != _EXITED else None

    def host_multi(self) -> bool:
        """Whether several threads take part in the current session's schedule."""
        s = _sessions._current
        return s is not None and s.sched.multi

    def host(self, op: str, args: tuple[Any, ...], file: str, line: int) -> Any:
        """Run host operation ``op`` on the current session (``runtime.pysync.handle``); an
        operation left over from a session that ended (a thread still running after it) is
        answered without touching the current one (``pysync.late``)."""
        s = _sessions._current
        if s is None:
            return _pysync.late(op)
        with s.lock:
            th = getattr(s.tls, "th", None) or s.threads.get(_threading.current_thread())
            if th is None:
                return _pysync.late(op)
            return _pysync.handle(s, th, op, args, file, line, _IN_PROCESS_NAMES)

    def bind(self, spec: ApiSpec) -> Callable[[tuple[Any, ...], str, int], Any]:
        """The in-process call of ``spec`` as a function of its own (for callers that hold
        parsed arguments: the transport server)."""
        body, env = self.inline(spec)
        fn: Callable[[tuple[Any, ...], str, int], Any] = _generate(
            "def call(args, file, line):\n" + body, "call", "call",
            f"<acl_api {spec.name} in-process>", env)
        return fn


#: The transport every wrapper is bound to (one-element list: rebound by set_transport).
_TRANSPORT: list[Transport] = [InProcess()]


def current_transport() -> Transport:
    """The transport pyACL calls go through now (``InProcess`` unless one was set)."""
    return _TRANSPORT[0]


def set_transport(transport: Transport) -> Transport:
    """Route every pyACL call through ``transport`` from now on; returns the previous one.

    Every declared function is rebound at once, so a call never sees half of one transport.
    """
    previous = _TRANSPORT[0]
    _TRANSPORT[0] = transport
    for entry in list(_REGISTRY.values()):
        _bind_wrapper(entry["wrapper"], entry["spec"], entry["head"], transport)
    return previous


#: How every wrapper finds its caller's site, after the arguments are parsed.
_SITE = """    f = _getframe(1)
    file = f.f_code.co_filename
    site = FOREIGN.get(file)
    line = f.f_lineno if site is None else 0
    if site is not None:
        file, line = site()
"""


def _wrapper_for(spec: ApiSpec, head: str, transport: Transport, name: str,
                 env: dict[str, Any]) -> Any:
    """The wrapper of ``spec`` for ``transport`` (globals ``env``, completed here): the
    transport's call written into it (``Transport.inline``), or a call of the function
    ``bind`` returns."""
    inlined = transport.inline(spec)
    if inlined is None:
        spec.slot[0] = transport.bind(spec)
        src = head + _SITE + "    return CALL[0](args, file, line)\n"
    else:
        body, extra = inlined
        env.update(extra)
        spec.slot[0] = _unbound  # the wrapper makes the call itself
        src = head + _SITE + body
    return _generate(src, "wrapper", name, f"<acl_api {spec.name}>", env)


def _bind_wrapper(wrapper: Any, spec: ApiSpec, head: str, transport: Transport) -> None:
    """Give ``wrapper`` the code of ``transport`` (``_wrapper_for``). The wrapper object
    stays the same (programs hold it: ``from acl.rt import malloc``); its code and globals
    change, so every call after this goes the new way."""
    wrapper.__code__ = _wrapper_for(spec, head, transport, wrapper.__name__,
                                    wrapper.__globals__).__code__


def acl_api(name: str, cname: str, fmt: str, out: int | str = 0, launch: bool = False,
            default: Any = 0) -> Callable[[F], F]:
    """Declare an emulated pyACL function.

    Args:
        name: the pyACL spelling, e.g. ``"acl.rt.malloc"``.
        cname: the C API, e.g. ``"aclrtMalloc"``.
        fmt: argument format (see the module docstring); ``""`` for a wrapper that parses
            nothing and ignores any positional arguments.
        out: 0 -> return ``ret``; n >= 1 -> ``(v1, ..., vn, ret)``; ``"value"`` -> return the
            value only (C functions that return a pointer or size); ``"none"`` -> None.
        launch: the call submits device work (charged the profile's launch cost).
        default: the output value(s) on failure (what C leaves in the out-pointer: 0).

    The implementation receives ``(session, thread, call_id, *parsed_args)`` and returns the
    output value (a tuple when ``out > 1``). The wrapper is generated with the exact
    positional parameters so the common, well-typed call is checked without a loop; after
    parsing it hands ``(args, file, line)`` to the current transport's bound call.
    """
    letters = fmt.replace("|", "")
    nreq = len(letters) if "|" not in fmt else fmt.index("|")
    if out == 0:
        shape = "ret"
    elif out == "value":
        shape = "value"
    elif out == "none":
        shape = "None"
    elif out == 1:
        shape = "(value, ret)"
    else:
        shape = "(*value, ret)"

    def deco(impl: F) -> F:
        _REGISTRY[name] = {"cname": cname, "fmt": fmt, "out": out, "impl": impl}
        names = [f"a{i}" for i in range(len(letters))]
        if not fmt:
            # the binding's wrappers that parse nothing ignore whatever they are given
            head = ("def wrapper(*ignored, **kw):\n"
                    "    if kw:\n        raise _no_keywords(NAME)\n"
                    "    args = ()\n")
        elif nreq == len(letters):
            params = ", ".join(f"{n}=_M" for n in names)
            tup = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
            fast = _fast_check(fmt)
            # an unsigned 64-bit letter's int is masked in place of a range test (what
            # ``_parse`` does too: a negative handle wraps like PyLong_AsUnsignedLongMask)
            masked = [f"{n} & {_MASK64}" if c in "kKp" else n for n, c in zip(names, letters,
                                                                             strict=True)]
            fast_tup = f"({', '.join(masked)}{',' if len(names) == 1 else ''})"
            head = (f"def wrapper({params}, /, *extra, **kw):\n"
                    f"    if kw:\n        raise _no_keywords(NAME)\n"
                    f"    if not extra and {fast}:\n"
                    f"        args = {fast_tup}\n"
                    f"    else:\n"
                    f"        args = _parse(NAME, FMT, tuple(x for x in {tup} + extra "
                    "if x is not _M))\n")
        else:
            head = ("def wrapper(*args, **kw):\n"
                    "    if kw:\n        raise _no_keywords(NAME)\n"
                    "    args = _parse(NAME, FMT, args)\n")
        spec = ApiSpec(name, cname, fmt, out, launch, default, impl, shape)
        env: dict[str, Any] = {"_parse": _parse, "_no_keywords": _no_keywords,
                               "_M": _MISSING, "NAME": name, "FMT": fmt,
                               "_getframe": sys._getframe, "CALL": spec.slot,
                               "FOREIGN": _FOREIGN_CALLERS}
        # one compile per format and transport: the globals make each function its own
        wrapper: Any = wraps(impl)(_wrapper_for(spec, head, _TRANSPORT[0], impl.__name__,
                                                env))
        _REGISTRY[name].update(spec=spec, wrapper=wrapper, head=head)
        wrapper.__acl_name__ = name
        wrapper.__acl_cname__ = cname
        wrapper.__signature__ = _pyacl_signature(impl, len(letters))
        return wrapper

    return deco


_POSITIONAL = inspect.Parameter.POSITIONAL_ONLY


def _pyacl_signature(impl: Callable[..., Any], n: int) -> inspect.Signature:
    """The signature a pyACL caller sees (``help()``, Jupyter's Shift-Tab): the
    implementation's parameters after ``(session, thread, call_id)``, positional only (the
    binding's functions are METH_VARARGS: no keywords), with their defaults. Read from the
    code object, not ``inspect.signature(impl)``: it is made for every function at import."""
    code = impl.__code__
    names = code.co_varnames[3:min(code.co_argcount, 3 + n)]
    defaults = impl.__defaults__ or ()
    first_default = len(names) - len(defaults)
    params = [inspect.Parameter(p, _POSITIONAL, default=defaults[i - first_default]
                                if i >= first_default else inspect.Parameter.empty)
              for i, p in enumerate(names)]
    if len(names) < n and code.co_flags & inspect.CO_VARARGS:  # e.g. (aipp, switch, *coeffs)
        rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
        params.append(inspect.Parameter(rest, inspect.Parameter.VAR_POSITIONAL))
    return inspect.Signature(params)


#: Call sites of callers in another language: the file of a bridge module -> a function
#: that returns the (file, line) of the foreign code that called the bridge on this thread
#: (the C API sets the C caller's source line; see acl_lab/capi/bridge.py).
_FOREIGN_CALLERS: dict[str, Callable[[], tuple[str, int]]] = {}


def register_foreign_caller(filename: str, site: Callable[[], tuple[str, int]]) -> None:
    """Record calls made from the code of ``filename`` at ``site()`` instead of at the
    Python line of that code (a bridge from another language names its own caller)."""
    _FOREIGN_CALLERS[filename] = site


def registry() -> dict[str, dict[str, Any]]:
    """Every declared pyACL function: name -> {cname, fmt, out, impl, spec}."""
    return dict(_REGISTRY)


def c_name(name: str) -> str:
    """The C API name of a pyACL function name (``acl.rt.malloc`` -> ``aclrtMalloc``)."""
    entry = _REGISTRY.get(name)
    return entry["cname"] if entry else name
