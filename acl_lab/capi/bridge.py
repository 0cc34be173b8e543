"""The Python side of ``libascendcl.so``: each C API function calls the pyACL layer.

Runs inside the C program's process (cffi embedding, see :mod:`.build`). Every C function
of the table (:mod:`.api`) is a call to the same ``acl_lab.acl`` function a Python program
makes, through its ``@acl_api`` boundary, so the trace and the return codes of a C program
are those of the same program in Python. The differences are the C calling conventions,
which :func:`generic` applies to every row from its C declaration: out-pointers are written
here (the Python functions return their outputs), arrays with a count become lists, C
strings become ``str``, handles and device pointers are the emulated addresses cast to
pointers, host pointers are the C program's real memory, and the call site recorded is the
C caller's file:line (its return address, resolved by :mod:`.sites`) instead of a Python
line. Rows whose C shape the rule cannot read (callbacks, batches of crop areas, text copied
into a caller's buffer) have a hand-written function here, named after the C function.

Each C thread is a Python thread here (cffi keeps one thread state per C thread), so it has
its own current context; a C callback passed to ``aclrtLaunchCallback`` is called in the
thread that runs ``aclrtProcessReport``.

Environment: ``ACL_LAB_CAPI_TRACE`` names the trace file written when the program exits
(``acl-lab run`` sets it); ``ACL_LAB_PROFILE``, ``ACL_LAB_DEVICES``, ``ACL_LAB_PAGEABLE_ASYNC``
and ``ACL_LAB_RUN_MODE`` configure the session.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from .. import acl as _acl
from .. import op_compiler as _op_compiler  # noqa: F401  (registers aclopCompile*)
from ..acl._boundary import register_foreign_caller, registry
from ..constants import ErrorCode
from ..runtime import costs
from ..runtime.errors import AclError, DeadlockError
from ..runtime.session import current_session, set_current_session
from . import api
from .runenv import session_from_env, started_marker
from .sites import SiteResolver

#: ACL_ERROR_INVALID_PARAM: a NULL out-pointer or array (the runtime's own null checks)
_INVALID_PARAM = ErrorCode.ACL_ERROR_INVALID_PARAM
#: ACL_ERROR_INTERNAL_ERROR: an unexpected Python exception inside the bridge
_INTERNAL = ErrorCode.ACL_ERROR_INTERNAL_ERROR

#: the pyACL layer, called positionally as a program calls it (its functions are typed by
#: their implementations, which take the session first)
A: Any = _acl
_tls = threading.local()
#: C name -> pyACL name of every emulated function
_PYACL_NAME = {entry["cname"]: name for name, entry in registry().items()}
_resolver = SiteResolver()
_ffi: Any = None
_errbufs: dict[int, Any] = {}
_finished = False


def _call_site() -> tuple[str, int]:
    """The C caller of the current bridge call on this thread."""
    return _resolver.resolve(getattr(_tls, "ra", 0))


def _p(x: Any) -> int:
    """A C pointer as the int the pyACL layer uses."""
    return int(_ffi.cast("uintptr_t", x))


def _null(x: Any) -> bool:
    return x == _ffi.NULL


def _str(x: Any) -> str:
    return _ffi.string(_ffi.cast("char *", x)).decode("utf-8", "replace")


def _ptrs(arr: Any, n: int) -> list[int]:
    a = _ffi.cast("uintptr_t *", arr)
    return [int(a[i]) for i in range(n)]


def _refuse(what: str) -> int:
    """A C argument the pyACL layer cannot be given (a NULL out-pointer, callback or array):
    the call is recorded at its C line with ACL_ERROR_INVALID_PARAM, as the runtime's own
    null checks return, and nothing is created."""
    cname = getattr(_tls, "cname", "")
    name = _PYACL_NAME.get(cname, cname)
    s = current_session()
    assert s is not None
    file, line = _call_site()
    with s.lock:
        th, cid, _ = s.api_enter(name, costs.api_call_ns(s.profile, False), (), "", file,
                                 line)
        ret = s.fail(th, cid, AclError(_INVALID_PARAM, f"{cname}: {what} is NULL"))
        s.api_exit(th, cid, ret)
    return int(ret)


def _pyacl(f: api.CFunc) -> Any:
    """The pyACL function a row runs (the registered wrapper)."""
    name = f.hint.py or _PYACL_NAME[f.name]
    return registry()[name]["wrapper"]


# ----------------------------------------------------------------------------- generic rule

#: pointee types whose non-const pointer is an output of the scalar kind named
_OUT_SCALARS = {**{t: c for t, c in api.SCALARS.items() if t != "void"},
                **{e: "int32_t" for e in api.ENUMS}}
#: the element C type of an input array of these types
_ARRAY_ELEMS = {**_OUT_SCALARS, "char *": "char *"}
#: C strings handed back by value-returning functions (kept alive: one per distinct text)
_strings: dict[str, Any] = {}


def _base(ctype: str) -> str:
    return ctype.replace("const ", "").strip()


def _role(f: api.CFunc, p: api.Param) -> str:
    """How the generic rule treats ``p``: in (a value or address passed on), str (a C
    string), array, count (an array's length, dropped), ignore, out (a scalar or handle the
    pyACL function returns), struct_in / struct_out (an aclmdlIODims-like struct)."""
    h = f.hint
    if p.name in h.arrays:
        return "array"
    if p.name in h.arrays.values() and p.name not in h.keep:
        return "count"
    if p.name in h.ignore:
        return "ignore"
    if p.name in h.ptrs:
        return "in"
    base = _base(p.ctype)
    if p.ctype == "const char *":
        return "str"
    if base.endswith("*"):
        pointee = base[:-1].strip()
        if pointee in api.STRUCTS:
            return "struct_in" if p.ctype.startswith("const ") else "struct_out"
        if p.ctype.startswith("const "):
            return "in"
        if pointee in _OUT_SCALARS or pointee in api.POINTER_TYPES or pointee.endswith("*"):
            return "out"
    if base in api.CALLBACK_TYPES:
        raise TypeError(f"{f.name}: a callback parameter needs a custom bridge")
    return "in"


def _dims_out(ptr: Any, value: Any) -> None:
    items = value if isinstance(value, list) else [value]
    arr = _ffi.cast("aclmdlIODims *", ptr)
    for i, d in enumerate(items):
        name = str(d.get("name", "")).encode("utf-8")[:127]
        arr[i].name = name
        dims = list(d.get("dims", []))
        arr[i].dimCount = int(d.get("dimCount", len(dims)))
        for j, v in enumerate(dims[:128]):
            arr[i].dims[j] = int(v)


def _batch_out(ptr: Any, value: Any) -> None:
    b = _ffi.cast("aclmdlBatch *", ptr)
    batch = list(value.get("batch", []))
    b.batchCount = int(value.get("batchCount", len(batch)))
    for i, v in enumerate(batch[:128]):
        b.batch[i] = int(v)


def _hw_out(ptr: Any, value: Any) -> None:
    hw = _ffi.cast("aclmdlHW *", ptr)
    pairs = list(value.get("hw", []))
    hw.hwCount = int(value.get("hwCount", len(pairs)))
    for i, (h, w) in enumerate(pairs[:128]):
        hw.hw[i][0], hw.hw[i][1] = int(h), int(w)


_STRUCT_WRITERS = {"aclmdlIODims": _dims_out, "aclmdlBatch": _batch_out, "aclmdlHW": _hw_out}


def _dims_in(ptr: Any) -> dict[str, Any]:
    d = _ffi.cast("aclmdlIODims *", ptr)
    n = int(d.dimCount)
    return {"name": _ffi.string(d.name).decode("utf-8", "replace"), "dimCount": n,
            "dims": [int(d.dims[i]) for i in range(min(n, 128))]}


def _writer(p: api.Param) -> Callable[[Any, Any], None]:
    pointee = _base(p.ctype)[:-1].strip()
    if pointee in api.STRUCTS:
        return _STRUCT_WRITERS[pointee]
    if pointee in _OUT_SCALARS:
        ctype = _OUT_SCALARS[pointee] + " *"
        return lambda ptr, v: _ffi.cast(ctype, ptr).__setitem__(0, v)
    return lambda ptr, v: _ffi.cast("void **", ptr).__setitem__(0, _ffi.cast("void *", v))


def _array(p: api.Param, ptr: Any, n: int) -> list[Any]:
    elem = _base(p.ctype)[:-1].strip()
    if elem.endswith("*") and elem.replace("const", "").strip() != "char *":
        return _ptrs(ptr, n)  # an array of handles
    elem = elem.replace("const", "").strip()
    arr = _ffi.cast(_ARRAY_ELEMS[elem] + " *", ptr)
    if elem == "char *":
        return [_ffi.string(arr[i]).decode("utf-8", "replace") for i in range(n)]
    return [arr[i] for i in range(n)]


def _returner(f: api.CFunc) -> Callable[[Any], Any]:
    """How a value-returning function's pyACL result becomes its C return value."""
    if f.ret == "const char *":
        def text(v: Any) -> Any:
            if v is None:
                return _ffi.NULL
            buf = _strings.get(v)
            if buf is None:
                buf = _strings[v] = _ffi.new("char[]", str(v).encode("utf-8", "replace"))
            return buf
        return text
    if f.ret_ffi == "void *":
        return lambda v: _ffi.cast("void *", v or 0)
    if f.ret_ffi in ("float", "double"):
        return lambda v: float(v or 0.0)
    return lambda v: int(v or 0)


def generic(f: api.CFunc) -> Callable[..., Any]:
    """The Python side of a row without a custom bridge: C arguments in, the pyACL call, C
    outputs written and the C return value made (see the module docstring of :mod:`.api`)."""
    fn = _pyacl(f)
    entry = registry()[f.hint.py or _PYACL_NAME[f.name]]
    out = entry["out"]
    roles = [_role(f, p) for p in f.params]
    index = {p.name: i for i, p in enumerate(f.params)}
    outs = [(i, _writer(p)) for i, (p, r) in enumerate(zip(f.params, roles, strict=True))
            if r in ("out", "struct_out")]
    optional = "|" in (entry["fmt"] or "")
    letters = (entry["fmt"] or "").replace("|", "")
    threads = {index[t] for t in f.hint.threads}
    value = _returner(f) if out == "value" else None
    params = f.params

    def call(*cargs: Any) -> Any:
        args: list[Any] = []
        for i, (p, r) in enumerate(zip(params, roles, strict=True)):
            a = cargs[i]
            if r == "in":
                if p.ffi_type == "void *":
                    a = _p(a)
                if i in threads:
                    _wait_for_thread(int(a))
                args.append(a)
            elif r == "str":
                if _null(a):
                    if len(args) < len(letters) and letters[len(args)] == "z":
                        args.append(None)
                        continue
                    if optional:
                        continue
                    return _refuse(p.name)
                args.append(_str(a))
            elif r == "array":
                n = int(cargs[index[f.hint.arrays[p.name]]])
                if n < 0 or (n > 0 and _null(a)):
                    return _refuse(f"{p.name} (or its count)")
                args.append(_array(p, a, n) if n else [])
            elif r == "struct_in":
                if _null(a):
                    return _refuse(p.name)
                args.append(_dims_in(a))
            elif r in ("out", "struct_out") and _null(a) and p.name not in f.hint.optional:
                return _refuse(f"the output pointer {p.name}")
        result = fn(*args)
        if value is not None:
            return value(result)
        if out == "none":
            return None
        if out == 0:
            return int(result)
        *values, ret = result
        if outs:
            for (i, write), v in zip(outs, values, strict=True):
                if _null(cargs[i]):
                    continue  # an optional output the caller left NULL
                if ret == 0:
                    write(cargs[i], v)
                elif roles[i] == "out" and _writer_is_pointer(params[i]):
                    write(cargs[i], 0)
        return int(ret)

    call.__name__ = f.name
    call.__doc__ = f"C ``{f.name}``: ``{entry['wrapper'].__acl_name__}`` by the generic rule."
    return call


def _writer_is_pointer(p: api.Param) -> bool:
    pointee = _base(p.ctype)[:-1].strip()
    return pointee not in _OUT_SCALARS and pointee not in api.STRUCTS


# ----------------------------------------------------------------------------- custom rows


def aclInit(path: Any) -> int:
    """C ``aclInit``: ``acl.init`` (a NULL path is no config file)."""
    return int(A.init() if _null(path) else A.init(_str(path)))


def aclGetRecentErrMsg() -> Any:
    """C ``aclGetRecentErrMsg``: ``acl.get_recent_err_msg`` (NULL when there is none; the
    text stays valid until this thread's next call)."""
    text = A.get_recent_err_msg()
    if not text:
        return _ffi.NULL
    buf = _ffi.new("char[]", text.encode("utf-8", "replace"))
    _errbufs[threading.get_ident()] = buf
    return buf


def aclAppLog(level: int, func: Any, file: Any, line: int, text: Any) -> None:
    """C ``aclAppLog`` (the ``ACL_APP_LOG`` macro): ``acl.app_log`` with the formatted text,
    prefixed by the function, file and line the macro passed."""
    where = f"{_str(func) if not _null(func) else '?'}:" \
            f"{_str(file) if not _null(file) else '?'}:{line}"
    A.app_log(level, f"{where}: {_str(text)}")


# ----------------------------------------------------------------------------- callbacks


#: How long aclrtSubscribeReport waits for a C thread that has not called ACL yet (s).
SUBSCRIBE_WAIT_S = 2.0


def _wait_for_thread(tid: int) -> None:
    """Let a just-created C thread make its first ACL call (which makes it known here).

    C programs subscribe a thread right after ``pthread_create``, before it has called
    anything (the public samples do); the emulator knows a thread from its first call. The
    wait is bounded: a thread that never calls in gets the layer's own answer (100000).
    """
    deadline = time.monotonic() + SUBSCRIBE_WAIT_S
    while time.monotonic() < deadline:
        if any(t.ident == tid for t in threading.enumerate()):
            return
        time.sleep(0.001)


class _CCallback:
    """A C ``aclrtCallback`` as the callable the pyACL layer queues."""

    def __init__(self, fn: Any) -> None:
        self.fn = _ffi.cast("void (*)(void *)", fn)
        self.name = f"aclrtCallback@{_p(fn):#x}"

    def __call__(self, user_data: int) -> None:
        self.fn(_ffi.cast("void *", user_data))

    def __repr__(self) -> str:
        return self.name




def aclrtLaunchCallback(fn: Any, user_data: Any, block: int, stream: Any) -> int:
    """C ``aclrtLaunchCallback``: ``acl.rt.launch_callback``."""
    if _null(fn):
        return _refuse("fn (the callback)")
    return int(A.rt.launch_callback(_CCallback(fn), _p(user_data), block, _p(stream)))


class _CMediaCallback:
    """A C ``aclvdecCallback`` / ``aclvencCallback`` (three pointers) as the callable the
    pyACL layer stores; it runs in the channel's report thread (``aclrtProcessReport``)."""

    def __init__(self, fn: Any, kind: str) -> None:
        self.fn = _ffi.cast("void (*)(void *, void *, void *)", fn)
        self.name = f"{kind}@{_p(fn):#x}"

    def __call__(self, first: int, second: int, user_data: Any) -> None:
        ud = user_data if isinstance(user_data, int) else 0
        self.fn(_ffi.cast("void *", first), _ffi.cast("void *", second),
                _ffi.cast("void *", ud))

    def __repr__(self) -> str:
        return self.name


def _set_media_callback(set_fn: Any, desc: Any, fn: Any, kind: str) -> int:
    if _null(fn):
        return _refuse("callback")
    return int(set_fn(_p(desc), _CMediaCallback(fn, kind)))


def aclvdecSetChannelDescCallback(desc: Any, fn: Any) -> int:
    """C ``aclvdecSetChannelDescCallback``: ``acl.media.vdec_set_channel_desc_callback``;
    the C function is called in the desc's report thread."""
    return _set_media_callback(A.media.vdec_set_channel_desc_callback, desc, fn,
                               "aclvdecCallback")


def aclvencSetChannelDescCallback(desc: Any, fn: Any) -> int:
    """C ``aclvencSetChannelDescCallback``: ``acl.media.venc_set_channel_desc_callback``."""
    return _set_media_callback(A.media.venc_set_channel_desc_callback, desc, fn,
                               "aclvencCallback")


def _get_media_callback(get_fn: Any, desc: Any) -> Any:
    try:
        cb = get_fn(_p(desc))
    except RuntimeError:
        return _ffi.NULL
    return _ffi.cast("void *", cb.fn) if isinstance(cb, _CMediaCallback) else _ffi.NULL


def aclvdecGetChannelDescCallback(desc: Any) -> Any:
    """C ``aclvdecGetChannelDescCallback``: ``acl.media.vdec_get_channel_desc_callback``
    (NULL when none is set)."""
    return _get_media_callback(A.media.vdec_get_channel_desc_callback, desc)


def aclvencGetChannelDescCallback(desc: Any) -> Any:
    """C ``aclvencGetChannelDescCallback``: ``acl.media.venc_get_channel_desc_callback``
    (NULL when none is set)."""
    return _get_media_callback(A.media.venc_get_channel_desc_callback, desc)


def aclopSetAttrListListInt(attr: Any, name: Any, n_lists: int, n_values: Any,
                            values: Any) -> int:
    """C ``aclopSetAttrListListInt``: ``acl.op.set_attr_list_list_int`` with the lists read
    from ``values[i][0:numValues[i]]``."""
    if _null(name) or n_lists < 0 or (n_lists and (_null(n_values) or _null(values))):
        return _refuse("attrName, numValues or values")
    counts = _ffi.cast("int *", n_values)
    rows = _ffi.cast("int64_t **", values)
    lists = [[int(rows[i][j]) for j in range(counts[i])] for i in range(n_lists)]
    return int(A.op.set_attr_list_list_int(_p(attr), _str(name), lists))


def aclprofCreateSubscribeConfig(time_info: int, metrics: int, fd: Any) -> Any:
    """C ``aclprofCreateSubscribeConfig``: ``acl.prof.create_subscribe_config`` with the
    pipe's write descriptor read from ``*fd``."""
    if _null(fd):
        _refuse("fd")
        return _ffi.NULL
    return _ffi.cast("void *", A.prof.create_subscribe_config(
        time_info, metrics, int(_ffi.cast("int *", fd)[0])))


def _prof_text(get: Any, info: Any, info_len: int, index: int, buf: Any, size: int) -> int:
    if _null(buf):
        return _refuse("the output buffer")
    text, ret = get(_p(info), info_len, index, size)
    if ret == 0:
        data = str(text).encode("utf-8", "replace")[:max(size - 1, 0)]
        _ffi.memmove(buf, data + b"\0", len(data) + 1)
    return int(ret)


def aclprofGetOpType(info: Any, info_len: int, index: int, buf: Any, size: int) -> int:
    """C ``aclprofGetOpType``: ``acl.prof.get_op_type``, the text copied into ``opType``."""
    return _prof_text(A.prof.get_op_type, info, info_len, index, buf, size)


def aclprofGetOpName(info: Any, info_len: int, index: int, buf: Any, size: int) -> int:
    """C ``aclprofGetOpName``: ``acl.prof.get_op_name``, the text copied into ``opName``."""
    return _prof_text(A.prof.get_op_name, info, info_len, index, buf, size)


def _batch(fn: Any, chan: Any, src: Any, roi_nums: Any, size: int, dst: Any, crops: Any,
           pastes: Any, extra: tuple[Any, ...], stream: Any) -> int:
    if _null(roi_nums) or _null(crops) or size == 0 or (pastes is not None and _null(pastes)):
        return _refuse("roiNums, cropAreas or pasteAreas (or size 0)")
    nums = [int(_ffi.cast("uint32_t *", roi_nums)[i]) for i in range(size)]
    total = sum(nums)
    args: list[Any] = [_p(chan), _p(src), nums, _p(dst), _ptrs(crops, total)]
    if pastes is not None:
        args.append(_ptrs(pastes, total))
    got = fn(*args, *(_p(x) for x in extra), _p(stream))
    return int(got[-1] if isinstance(got, tuple) else got)


def acldvppVpcBatchCropAsync(chan: Any, src: Any, roi_nums: Any, size: int, dst: Any,
                             crops: Any, stream: Any) -> int:
    """C ``acldvppVpcBatchCropAsync``: ``acl.media.dvpp_vpc_batch_crop_async`` (the crop
    areas are ``sum(roiNums[0:size])`` pointers)."""
    return _batch(A.media.dvpp_vpc_batch_crop_async, chan, src, roi_nums, size, dst, crops,
                  None, (), stream)


def acldvppVpcBatchCropAndPasteAsync(chan: Any, src: Any, roi_nums: Any, size: int, dst: Any,
                                     crops: Any, pastes: Any, stream: Any) -> int:
    """C ``acldvppVpcBatchCropAndPasteAsync``:
    ``acl.media.dvpp_vpc_batch_crop_and_paste_async``."""
    return _batch(A.media.dvpp_vpc_batch_crop_and_paste_async, chan, src, roi_nums, size, dst,
                  crops, pastes, (), stream)


def acldvppVpcBatchCropResizeAsync(chan: Any, src: Any, roi_nums: Any, size: int, dst: Any,
                                   crops: Any, cfg: Any, stream: Any) -> int:
    """C ``acldvppVpcBatchCropResizeAsync``: ``acl.media.dvpp_vpc_batch_crop_resize_async``."""
    return _batch(A.media.dvpp_vpc_batch_crop_resize_async, chan, src, roi_nums, size, dst,
                  crops, None, (cfg,), stream)


def acldvppVpcBatchCropResizePasteAsync(chan: Any, src: Any, roi_nums: Any, size: int,
                                        dst: Any, crops: Any, pastes: Any, cfg: Any,
                                        stream: Any) -> int:
    """C ``acldvppVpcBatchCropResizePasteAsync``:
    ``acl.media.dvpp_vpc_batch_crop_resize_paste_async``."""
    return _batch(A.media.dvpp_vpc_batch_crop_resize_paste_async, chan, src, roi_nums, size,
                  dst, crops, pastes, (cfg,), stream)


# ----------------------------------------------------------------------------- wiring


def at_exit() -> None:
    """The C program exits (its ``atexit``): tear the session down and write the trace."""
    global _finished
    if _finished:
        return
    _finished = True
    s = current_session(create=False)
    if s is None:
        return
    s.close()
    trace = s.finish()
    set_current_session(None)
    path = os.environ.get("ACL_LAB_CAPI_TRACE")
    if path:
        trace.save(path)
    _resolver.close()


#: kind of the diagnostic (and finding) of a host access to a device address
DEVICE_DEREFERENCE = "device_dereference"


def device_fault(addr: Any, pc: Any) -> None:
    """The C program read or wrote an emulated device address (the guard's fault handler):
    record it at the faulting C line, write the trace and end like a SIGSEGV (the handler
    exits)."""
    a, where = _p(addr), _p(pc)
    file, line = _resolver.resolve(where + 1) if where else ("<unknown>", 0)
    msg = (f"the host read or wrote device address {a:#x} at {file}:{line}: device memory "
           "(aclrtMalloc) is not host memory. Rule: the host reaches device memory only "
           "through aclrtMemcpy; copy it into a host buffer first (on a real card this "
           "read crashes or returns garbage).")
    print(f"acl-lab: {file}:{line}: {msg}", file=sys.stderr)
    s = current_session(create=False)
    if s is not None and not _finished:
        with s.lock:
            th, cid, _ = s.api_enter("acl_lab.device_fault", 0, (a,), "", file, line)
            s.diag(cid, DEVICE_DEREFERENCE, msg, level=2)
            s.api_exit(th, cid, -1)
    at_exit()
    sys.stderr.flush()


def _on_error(exc: type[BaseException], value: BaseException, tb: Any) -> None:
    """An exception escaped a C entry point: a deadlock ends the program like ``acl-lab
    run`` ends a Python one (exit 1, the report, the trace written); anything else is
    printed and the call returns ACL_ERROR_INTERNAL_ERROR (0 or NULL for value returns)."""
    if isinstance(value, DeadlockError):
        print(value.report, file=sys.stderr)
        try:
            at_exit()
        finally:
            sys.stderr.flush()
            os._exit(1)
    traceback.print_exception(exc, value, tb)


#: idents of C threads that have called in (a pthread id is reused after a join)
_seen_idents: set[int] = set()


def _new_c_thread() -> None:
    """First call of this C thread (a fresh thread state: its thread-locals are empty).

    A C thread is a ``threading._DummyThread`` here, which CPython never removes when the
    thread ends; a later C thread that gets the same pthread id would be that thread again
    (with its context). The stale entry is dropped so this thread is a new one.
    """
    ident = threading.get_ident()
    if ident in _seen_idents and threading.main_thread().ident != ident:
        with threading._active_limbo_lock:  # type: ignore[attr-defined]
            old = threading._active.get(ident)  # type: ignore[attr-defined]
            if isinstance(old, threading._DummyThread):
                del threading._active[ident]  # type: ignore[attr-defined]
    _seen_idents.add(ident)
    _tls.known = True
    threading.current_thread()  # registers this C thread (aclrtSubscribeReport looks for it)


def _entry(fn: Callable[..., Any]) -> Callable[..., Any]:
    def entry(ra: Any, *args: Any) -> Any:
        if not hasattr(_tls, "known"):
            _new_c_thread()
        _tls.ra = _p(ra)
        _tls.cname = fn.__name__
        return fn(*args)
    entry.__name__ = fn.__name__
    return entry


def handler(f: api.CFunc) -> Callable[..., Any]:
    """The Python side of one row: its custom function here, or the generic rule."""
    if f.hint.custom:
        fn: Callable[..., Any] = globals()[f.name]
        return fn
    return generic(f)


def bind(ffi: Any, lib: Any) -> None:
    """Attach every C entry point of the library to its function here, bind a session from
    the environment and register the exit hook (called once, by the library's init code)."""
    global _ffi
    _ffi = ffi
    from .api import functions
    set_current_session(session_from_env())
    path = os.environ.get("ACL_LAB_CAPI_TRACE")
    if path:
        # the marker tells ``acl-lab run`` that the program did call ACL: a missing trace is
        # then a program that ended without its exit handlers, not one that made no call
        with open(started_marker(path), "w"):
            pass
    register_foreign_caller(__file__, _call_site)
    for f in functions():
        fn = handler(f)
        # on an unexpected exception: ACL_ERROR_INTERNAL_ERROR, else cffi's 0 / NULL
        kw: dict[str, Any] = {"error": _INTERNAL} if f.ret == "aclError" else {}
        ffi.def_extern(name=f"_lab_{f.name}", onerror=_on_error, **kw)(_entry(fn))
    ffi.def_extern(name="_lab_at_exit", onerror=_on_error)(at_exit)
    ffi.def_extern(name="_lab_device_fault", onerror=_on_error)(device_fault)
    lib._lab_install_atexit()
    if not os.environ.get("ACL_LAB_CAPI_NO_GUARD"):
        from ..runtime.memory import DEVICE_BASE, DEVICE_END
        lib._lab_guard_device(DEVICE_BASE, DEVICE_END)
