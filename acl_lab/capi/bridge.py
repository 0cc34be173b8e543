"""The Python side of ``libascendcl.so``: each C API function calls the pyACL layer.

Runs inside the C program's process (cffi embedding, see :mod:`.build`). Every C function
is a call to the same ``acl_lab.acl`` function a Python program makes, through its
``@acl_api`` boundary, so the trace and the return codes of a C program are those of the
same program in Python. The differences are the C calling conventions: out-pointers are
written here (the Python functions return their outputs), handles and device pointers are
the emulated addresses cast to pointers, host pointers are the C program's real memory, and
the call site recorded is the C caller's file:line (its return address, resolved by
:mod:`.sites`) instead of a Python line.

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
from ..acl._boundary import register_foreign_caller, registry
from ..constants import ErrorCode
from ..runtime import costs
from ..runtime.errors import AclError, DeadlockError
from ..runtime.session import current_session, set_current_session
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


def _out(ptr: Any, ctype: str, value: Any) -> None:
    _ffi.cast(ctype + " *", ptr)[0] = value


def _outp(ptr: Any, value: int) -> None:
    _ffi.cast("void **", ptr)[0] = _ffi.cast("void *", value)


def _ptrs(arr: Any, n: int) -> list[int]:
    a = _ffi.cast("uintptr_t *", arr)
    return [int(a[i]) for i in range(n)]


# ----------------------------------------------------------------------------- base


def aclFloat16ToFloat(value: int) -> float:
    """C ``aclFloat16ToFloat``: ``acl.float16_to_float``."""
    return float(A.float16_to_float(value))


def aclFloatToFloat16(value: float) -> int:
    """C ``aclFloatToFloat16``: ``acl.float_to_float16``."""
    return int(A.float_to_float16(value))


def aclCreateDataBuffer(data: Any, size: int) -> Any:
    """C ``aclCreateDataBuffer``: ``acl.create_data_buffer``."""
    return _ffi.cast("void *", A.create_data_buffer(_p(data), size))


def aclDestroyDataBuffer(buf: Any) -> int:
    """C ``aclDestroyDataBuffer``: ``acl.destroy_data_buffer``."""
    return int(A.destroy_data_buffer(_p(buf)))


def aclUpdateDataBuffer(buf: Any, data: Any, size: int) -> int:
    """C ``aclUpdateDataBuffer``: ``acl.update_data_buffer``."""
    return int(A.update_data_buffer(_p(buf), _p(data), size))


def aclGetDataBufferAddr(buf: Any) -> Any:
    """C ``aclGetDataBufferAddr``: ``acl.get_data_buffer_addr``."""
    return _ffi.cast("void *", A.get_data_buffer_addr(_p(buf)))


def aclGetDataBufferSizeV2(buf: Any) -> int:
    """C ``aclGetDataBufferSizeV2``: ``acl.get_data_buffer_size_v2``."""
    return int(A.get_data_buffer_size_v2(_p(buf)))


def aclDataTypeSize(dtype: int) -> int:
    """C ``aclDataTypeSize``: ``acl.data_type_size``."""
    return int(A.data_type_size(dtype))


def aclCreateTensorDesc(dtype: int, num_dims: int, dims: Any, fmt: int) -> Any:
    """C ``aclCreateTensorDesc``: ``acl.create_tensor_desc``."""
    if num_dims < 0 or (num_dims > 0 and _null(dims)):
        return _ffi.NULL
    d = _ffi.cast("int64_t *", dims)
    return _ffi.cast("void *", A.create_tensor_desc(dtype, [int(d[i]) for i in range(num_dims)],
                                                    fmt))


def aclDestroyTensorDesc(desc: Any) -> None:
    """C ``aclDestroyTensorDesc``: ``acl.destroy_tensor_desc``."""
    A.destroy_tensor_desc(_p(desc))


def aclGetTensorDescSize(desc: Any) -> int:
    """C ``aclGetTensorDescSize``: ``acl.get_tensor_desc_size``."""
    return int(A.get_tensor_desc_size(_p(desc)))


def aclGetTensorDescElementCount(desc: Any) -> int:
    """C ``aclGetTensorDescElementCount``: ``acl.get_tensor_desc_element_count``."""
    return int(A.get_tensor_desc_element_count(_p(desc)))


def aclInit(path: Any) -> int:
    """C ``aclInit``: ``acl.init``."""
    return int(A.init() if _null(path) else A.init(_str(path)))


def aclFinalize() -> int:
    """C ``aclFinalize``: ``acl.finalize``."""
    return int(A.finalize())


def aclGetRecentErrMsg() -> Any:
    """C ``aclGetRecentErrMsg``: ``acl.get_recent_err_msg``."""
    text = A.get_recent_err_msg()
    if not text:
        return _ffi.NULL
    buf = _ffi.new("char[]", text.encode("utf-8", "replace"))
    _errbufs[threading.get_ident()] = buf  # kept until this thread's next call
    return buf


# ----------------------------------------------------------------------------- devices


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


def _int_out(ptr: Any, ctype: str, fn: Callable[[], tuple[int, int]]) -> int:
    if _null(ptr):
        return _refuse("the output pointer")
    value, ret = fn()
    if ret == 0:
        _out(ptr, ctype, value)
    return int(ret)


def _ptr_out(ptr: Any, fn: Callable[[], tuple[int, int]]) -> int:
    if _null(ptr):
        return _refuse("the output pointer")
    value, ret = fn()
    _outp(ptr, value if ret == 0 else 0)
    return int(ret)


def aclrtSetDevice(device: int) -> int:
    """C ``aclrtSetDevice``: ``acl.rt.set_device``."""
    return int(A.rt.set_device(device))


def aclrtResetDevice(device: int) -> int:
    """C ``aclrtResetDevice``: ``acl.rt.reset_device``."""
    return int(A.rt.reset_device(device))


def aclrtGetDevice(ptr: Any) -> int:
    """C ``aclrtGetDevice``: ``acl.rt.get_device``, outputs written to the C pointers."""
    return _int_out(ptr, "int32_t", lambda: A.rt.get_device())


def aclrtGetDeviceCount(ptr: Any) -> int:
    """C ``aclrtGetDeviceCount``: ``acl.rt.get_device_count``, outputs written to the C pointers."""
    return _int_out(ptr, "uint32_t", lambda: A.rt.get_device_count())


def aclrtGetRunMode(ptr: Any) -> int:
    """C ``aclrtGetRunMode``: ``acl.rt.get_run_mode``, outputs written to the C pointers."""
    return _int_out(ptr, "int32_t", lambda: A.rt.get_run_mode())


def aclrtSynchronizeDevice() -> int:
    """C ``aclrtSynchronizeDevice``: ``acl.rt.synchronize_device``."""
    return int(A.rt.synchronize_device())


def aclrtCreateContext(ptr: Any, device: int) -> int:
    """C ``aclrtCreateContext``: ``acl.rt.create_context``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.rt.create_context(device))


def aclrtDestroyContext(ctx: Any) -> int:
    """C ``aclrtDestroyContext``: ``acl.rt.destroy_context``."""
    return int(A.rt.destroy_context(_p(ctx)))


def aclrtSetCurrentContext(ctx: Any) -> int:
    """C ``aclrtSetCurrentContext``: ``acl.rt.set_context``."""
    return int(A.rt.set_context(_p(ctx)))


def aclrtGetCurrentContext(ptr: Any) -> int:
    """C ``aclrtGetCurrentContext``: ``acl.rt.get_context``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.rt.get_context())


def aclrtCreateStream(ptr: Any) -> int:
    """C ``aclrtCreateStream``: ``acl.rt.create_stream``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.rt.create_stream())


def aclrtDestroyStream(stream: Any) -> int:
    """C ``aclrtDestroyStream``: ``acl.rt.destroy_stream``."""
    return int(A.rt.destroy_stream(_p(stream)))


def aclrtSynchronizeStream(stream: Any) -> int:
    """C ``aclrtSynchronizeStream``: ``acl.rt.synchronize_stream``."""
    return int(A.rt.synchronize_stream(_p(stream)))


def aclrtStreamWaitEvent(stream: Any, event: Any) -> int:
    """C ``aclrtStreamWaitEvent``: ``acl.rt.stream_wait_event``."""
    return int(A.rt.stream_wait_event(_p(stream), _p(event)))


def aclrtCreateEvent(ptr: Any) -> int:
    """C ``aclrtCreateEvent``: ``acl.rt.create_event``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.rt.create_event())


def aclrtDestroyEvent(event: Any) -> int:
    """C ``aclrtDestroyEvent``: ``acl.rt.destroy_event``."""
    return int(A.rt.destroy_event(_p(event)))


def aclrtRecordEvent(event: Any, stream: Any) -> int:
    """C ``aclrtRecordEvent``: ``acl.rt.record_event``."""
    return int(A.rt.record_event(_p(event), _p(stream)))


def aclrtSynchronizeEvent(event: Any) -> int:
    """C ``aclrtSynchronizeEvent``: ``acl.rt.synchronize_event``."""
    return int(A.rt.synchronize_event(_p(event)))


def aclrtEventElapsedTime(ptr: Any, start: Any, end: Any) -> int:
    """C ``aclrtEventElapsedTime``: ``acl.rt.event_elapsed_time``, ms written to ``*ms``."""
    if _null(ptr):
        return _refuse("ms (the output pointer)")
    ms, ret = A.rt.event_elapsed_time(_p(start), _p(end))
    if ret == 0:
        _out(ptr, "float", ms)
    return int(ret)


# ----------------------------------------------------------------------------- memory


def aclrtMalloc(ptr: Any, size: int, policy: int) -> int:
    """C ``aclrtMalloc``: ``acl.rt.malloc``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.rt.malloc(size, policy))


def aclrtFree(ptr: Any) -> int:
    """C ``aclrtFree``: ``acl.rt.free``."""
    return int(A.rt.free(_p(ptr)))


def aclrtMallocHost(ptr: Any, size: int) -> int:
    """C ``aclrtMallocHost``: ``acl.rt.malloc_host``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.rt.malloc_host(size))


def aclrtFreeHost(ptr: Any) -> int:
    """C ``aclrtFreeHost``: ``acl.rt.free_host``."""
    return int(A.rt.free_host(_p(ptr)))


def aclrtMemcpy(dst: Any, dest_max: int, src: Any, count: int, kind: int) -> int:
    """C ``aclrtMemcpy``: ``acl.rt.memcpy``."""
    return int(A.rt.memcpy(_p(dst), dest_max, _p(src), count, kind))


def aclrtMemcpyAsync(dst: Any, dest_max: int, src: Any, count: int, kind: int,
                     stream: Any) -> int:
    """C ``aclrtMemcpyAsync``: ``acl.rt.memcpy_async``."""
    return int(A.rt.memcpy_async(_p(dst), dest_max, _p(src), count, kind, _p(stream)))


def aclrtMemset(ptr: Any, max_count: int, value: int, count: int) -> int:
    """C ``aclrtMemset``: ``acl.rt.memset``."""
    return int(A.rt.memset(_p(ptr), max_count, value, count))


def acldvppMalloc(ptr: Any, size: int) -> int:
    """C ``acldvppMalloc``: ``acl.media.dvpp_malloc``, outputs written to the C pointers."""
    return _ptr_out(ptr, lambda: A.media.dvpp_malloc(size))


def acldvppFree(ptr: Any) -> int:
    """C ``acldvppFree``: ``acl.media.dvpp_free``."""
    return int(A.media.dvpp_free(_p(ptr)))


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


def aclrtSubscribeReport(tid: int, stream: Any) -> int:
    """C ``aclrtSubscribeReport``: ``acl.rt.subscribe_report``."""
    # pthread_t is the thread's ident in CPython on Linux (PyThread_get_thread_ident)
    _wait_for_thread(tid)
    return int(A.rt.subscribe_report(tid, _p(stream)))


def aclrtUnSubscribeReport(tid: int, stream: Any) -> int:
    """C ``aclrtUnSubscribeReport``: ``acl.rt.unsubscribe_report``."""
    return int(A.rt.unsubscribe_report(tid, _p(stream)))


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


def aclrtProcessReport(timeout: int) -> int:
    """C ``aclrtProcessReport``: ``acl.rt.process_report``."""
    return int(A.rt.process_report(timeout))


# ----------------------------------------------------------------------------- models


def aclmdlLoadFromFile(path: Any, ptr: Any) -> int:
    """C ``aclmdlLoadFromFile``: ``acl.mdl.load_from_file``, outputs written to the C pointers."""
    if _null(path):
        return _refuse("modelPath")
    return _int_out(ptr, "uint32_t", lambda: A.mdl.load_from_file(_str(path)))


def aclmdlUnload(mid: int) -> int:
    """C ``aclmdlUnload``: ``acl.mdl.unload``."""
    return int(A.mdl.unload(mid))


def aclmdlCreateDesc() -> Any:
    """C ``aclmdlCreateDesc``: ``acl.mdl.create_desc``."""
    return _ffi.cast("void *", A.mdl.create_desc())


def aclmdlDestroyDesc(desc: Any) -> int:
    """C ``aclmdlDestroyDesc``: ``acl.mdl.destroy_desc``."""
    return int(A.mdl.destroy_desc(_p(desc)))


def aclmdlGetDesc(desc: Any, mid: int) -> int:
    """C ``aclmdlGetDesc``: ``acl.mdl.get_desc``."""
    return int(A.mdl.get_desc(_p(desc), mid))


def aclmdlGetNumInputs(desc: Any) -> int:
    """C ``aclmdlGetNumInputs``: ``acl.mdl.get_num_inputs``."""
    return int(A.mdl.get_num_inputs(_p(desc)))


def aclmdlGetNumOutputs(desc: Any) -> int:
    """C ``aclmdlGetNumOutputs``: ``acl.mdl.get_num_outputs``."""
    return int(A.mdl.get_num_outputs(_p(desc)))


def aclmdlGetInputSizeByIndex(desc: Any, i: int) -> int:
    """C ``aclmdlGetInputSizeByIndex``: ``acl.mdl.get_input_size_by_index``."""
    return int(A.mdl.get_input_size_by_index(_p(desc), i))


def aclmdlGetOutputSizeByIndex(desc: Any, i: int) -> int:
    """C ``aclmdlGetOutputSizeByIndex``: ``acl.mdl.get_output_size_by_index``."""
    return int(A.mdl.get_output_size_by_index(_p(desc), i))


def aclmdlCreateDataset() -> Any:
    """C ``aclmdlCreateDataset``: ``acl.mdl.create_dataset``."""
    return _ffi.cast("void *", A.mdl.create_dataset())


def aclmdlDestroyDataset(ds: Any) -> int:
    """C ``aclmdlDestroyDataset``: ``acl.mdl.destroy_dataset``."""
    return int(A.mdl.destroy_dataset(_p(ds)))


def aclmdlAddDatasetBuffer(ds: Any, buf: Any) -> int:
    """C ``aclmdlAddDatasetBuffer``: ``acl.mdl.add_dataset_buffer``."""
    _, ret = A.mdl.add_dataset_buffer(_p(ds), _p(buf))
    return int(ret)


def aclmdlGetDatasetNumBuffers(ds: Any) -> int:
    """C ``aclmdlGetDatasetNumBuffers``: ``acl.mdl.get_dataset_num_buffers``."""
    return int(A.mdl.get_dataset_num_buffers(_p(ds)))


def aclmdlGetDatasetBuffer(ds: Any, i: int) -> Any:
    """C ``aclmdlGetDatasetBuffer``: ``acl.mdl.get_dataset_buffer``."""
    return _ffi.cast("void *", A.mdl.get_dataset_buffer(_p(ds), i))


def aclmdlExecute(mid: int, inp: Any, out: Any) -> int:
    """C ``aclmdlExecute``: ``acl.mdl.execute``."""
    return int(A.mdl.execute(mid, _p(inp), _p(out)))


def aclmdlExecuteAsync(mid: int, inp: Any, out: Any, stream: Any) -> int:
    """C ``aclmdlExecuteAsync``: ``acl.mdl.execute_async``."""
    return int(A.mdl.execute_async(mid, _p(inp), _p(out), _p(stream)))


# ----------------------------------------------------------------------------- operators


def aclopSetModelDir(path: Any) -> int:
    """C ``aclopSetModelDir``: ``acl.op.set_model_dir``."""
    if _null(path):
        return _refuse("modelDir")
    return int(A.op.set_model_dir(_str(path)))


def aclopCreateAttr() -> Any:
    """C ``aclopCreateAttr``: ``acl.op.create_attr``."""
    return _ffi.cast("void *", A.op.create_attr())


def aclopDestroyAttr(attr: Any) -> None:
    """C ``aclopDestroyAttr``: ``acl.op.destroy_attr``."""
    A.op.destroy_attr(_p(attr))


def aclopSetAttrBool(attr: Any, name: Any, value: int) -> int:
    """C ``aclopSetAttrBool``: ``acl.op.set_attr_bool``."""
    return int(A.op.set_attr_bool(_p(attr), _str(name), value))


def aclopSetAttrInt(attr: Any, name: Any, value: int) -> int:
    """C ``aclopSetAttrInt``: ``acl.op.set_attr_int``."""
    return int(A.op.set_attr_int(_p(attr), _str(name), value))


def aclopSetAttrFloat(attr: Any, name: Any, value: float) -> int:
    """C ``aclopSetAttrFloat``: ``acl.op.set_attr_float``."""
    return int(A.op.set_attr_float(_p(attr), _str(name), value))


def aclopExecuteV2(op_type: Any, n_in: int, in_descs: Any, in_bufs: Any, n_out: int,
                   out_descs: Any, out_bufs: Any, attr: Any, stream: Any) -> int:
    """C ``aclopExecuteV2``: ``acl.op.execute_v2``."""
    if _null(op_type) or n_in < 0 or n_out < 0:
        return _refuse("opType (or a count below 0)")
    if (n_in and (_null(in_descs) or _null(in_bufs))) or \
            (n_out and (_null(out_descs) or _null(out_bufs))):
        return _refuse("a descriptor or buffer array")
    return int(A.op.execute_v2(_str(op_type), _ptrs(in_descs, n_in), _ptrs(in_bufs, n_in),
                               _ptrs(out_descs, n_out), _ptrs(out_bufs, n_out), _p(attr),
                               _p(stream)))


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


def bind(ffi: Any, lib: Any) -> None:
    """Attach every C entry point of the library to its function here, bind a session from
    the environment and register the exit hook (called once, by the library's init code)."""
    global _ffi
    _ffi = ffi
    from .build import functions
    set_current_session(session_from_env())
    path = os.environ.get("ACL_LAB_CAPI_TRACE")
    if path:
        # the marker tells ``acl-lab run`` that the program did call ACL: a missing trace is
        # then a program that ended without its exit handlers, not one that made no call
        with open(started_marker(path), "w"):
            pass
    register_foreign_caller(__file__, _call_site)
    here = globals()
    for f in functions():
        fn = here[f.name]
        # on an unexpected exception: ACL_ERROR_INTERNAL_ERROR, else cffi's 0 / NULL
        kw: dict[str, Any] = {"error": _INTERNAL} if f.ret_ffi == "int" else {}
        ffi.def_extern(name=f"_lab_{f.name}", onerror=_on_error, **kw)(_entry(fn))
    ffi.def_extern(name="_lab_at_exit", onerror=_on_error)(at_exit)
    ffi.def_extern(name="_lab_device_fault", onerror=_on_error)(device_fault)
    lib._lab_install_atexit()
    if not os.environ.get("ACL_LAB_CAPI_NO_GUARD"):
        from ..runtime.memory import DEVICE_BASE, DEVICE_END
        lib._lab_guard_device(DEVICE_BASE, DEVICE_END)
