"""``acl.util``: pointers to host buffers, and threads for callback processing.

Host buffers handed out here keep their real addresses (so their alignment is real) and are
registered with the emulator, with whether the program may write them: a ``bytes`` object
never, a numpy array while its ``writeable`` flag is set. Other host addresses (raw memory)
are checked against the process's memory map when they are used.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ..runtime import buffers, threads
from ..runtime.errors import AclError
from ..runtime.objects import HostThread
from ..runtime.session import Session
from ..runtime.sites import warn_at_caller
from ._boundary import acl_api

S = Session


def _array_ptr(s: S, cid: int, arr: np.ndarray) -> int:
    lo, hi = _byte_bounds(arr)
    r = s.memory.register_pageable(arr, lo, hi - lo, cid)
    if r.size and r.alloc_call == cid:
        s.hooks.on_alloc(r, cid)
    return int(arr.ctypes.data)


def _byte_bounds(arr: np.ndarray) -> tuple[int, int]:
    fn = getattr(np, "byte_bounds", None) or np.lib.array_utils.byte_bounds
    lo, hi = fn(arr)
    return int(lo), int(hi)


@acl_api("acl.util.numpy_to_ptr", "numpy_to_ptr", "O", out="value")
def numpy_to_ptr(s: S, th: HostThread, cid: int, arr: Any) -> int:
    """The address of an ndarray's data (no copy); writes through it change the array.

    Deprecated in pyACL (warns, as the binding does); use bytes_to_ptr.
    Differs from real ACL: the array is kept alive while the program may still use the
    pointer (real pyACL keeps nothing alive), and a copy or memset into a read-only array
    (``writeable=False``, e.g. ``np.memmap(mode="r")``) is refused with 107000 instead of
    crashing the interpreter with SIGSEGV.
    """
    if not isinstance(arr, np.ndarray):
        raise ValueError("acl.util.numpy_to_ptr needs a numpy.ndarray as argument")
    # warnings.warn, naming a notebook cell as the cell (runtime.sites)
    warn_at_caller("numpy_to_ptr will be deprecated. Please use acl.util.bytes_to_ptr",
                   Warning, stacklevel=2)
    if not arr.flags.c_contiguous:
        warn_at_caller("the array is not contiguous", Warning, stacklevel=2)
    return _array_ptr(s, cid, arr)


@acl_api("acl.util.numpy_contiguous_to_ptr", "numpy_contiguous_to_ptr", "O", out="value",
         default=None)
def numpy_contiguous_to_ptr(s: S, th: HostThread, cid: int, arr: Any) -> tuple[int, np.ndarray]:
    """``(ptr, contiguous_array)``: a contiguous copy and its address; keep the array.

    Deprecated in pyACL. Differs from real ACL: no difference known.
    """
    if not isinstance(arr, np.ndarray):
        raise ValueError("acl.util.numpy_contiguous_to_ptr needs a numpy.ndarray")
    c = np.ascontiguousarray(arr)
    return _array_ptr(s, cid, c), c


@acl_api("acl.util.ptr_to_numpy", "ptr_to_numpy", "pOi", out="value", default=None)
def ptr_to_numpy(s: S, th: HostThread, cid: int, ptr: int, shape: Any, npy_type: int) -> np.ndarray:
    """A writable ndarray view (no copy) of host memory at ``ptr``.

    ``shape`` must be a tuple; ``npy_type`` is a numpy type number (11 = float32).
    Differs from real ACL: an unmapped pointer, or a device address in the host run mode
    (device memory is host memory only in the device run mode), raises ValueError (real
    pyACL would read arbitrary memory or crash), and the view of memory the program may not
    write (a ``bytes`` object, a read-only array or page) is read-only (writeable=False)
    instead of writable.
    """
    if not isinstance(shape, tuple) or not all(isinstance(d, (int, np.integer)) for d in shape):
        raise TypeError("acl.util.ptr_to_numpy args parse failed")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    try:
        dtype = _dtype_from_num(npy_type)
    except KeyError:
        raise ValueError(f"numpy type number {npy_type} is unknown") from None
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    try:
        region, view = buffers.host_view(s, ptr, n, "acl.util.ptr_to_numpy")
    except AclError as e:
        raise ValueError(e.message) from None
    out = view.view(dtype).reshape(shape)
    if s.memory.may_write(region):
        out.flags.writeable = False  # a write through it would change a bytes or crash
    else:
        region.mark_written(ptr - region.addr, ptr - region.addr + n)  # the program may
    return out


def _dtype_from_num(num: int) -> np.dtype[Any]:
    for t in np.sctypeDict.values():
        dt = np.dtype(t)
        if dt.num == num:
            return dt
    raise KeyError(num)


@acl_api("acl.util.bytes_to_ptr", "bytes_to_ptr", "O", out="value")
def bytes_to_ptr(s: S, th: HostThread, cid: int, data: Any) -> int:
    """The address of a ``bytes`` object's buffer (no copy), to copy *from*. The bytes
    must outlive the pointer.

    Differs from real ACL: the object is kept alive for a while (real pyACL does not), so
    ``bytes_to_ptr(arr.tobytes())`` used at once works as it happens to on hardware; and a
    copy or memset *into* bytes that Python shares (a cached one-byte or empty object such
    as ``b"A"``, or a hashed one: a constant of the code, a dict key) is refused with 107000
    and a ``read_only_destination`` finding (real pyACL lets the copy rewrite it, and it then
    changes for the whole process); bytes the program made for itself (``out = bytes(n)``,
    as the public samples do) may be written (``runtime.memory.MemorySystem.may_write``).
    Copy into a numpy array (``arr.ctypes.data``) or acl.rt.malloc_host memory to be safe.
    """
    if not isinstance(data, bytes):
        raise ValueError("bytes_to_ptr needs an byte as argument")
    addr = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    r = s.memory.register_pageable(data, addr, len(data), cid)
    if r.size and r.alloc_call == cid:
        s.hooks.on_alloc(r, cid)
    return addr


@acl_api("acl.util.ptr_to_bytes", "ptr_to_bytes", "pk", out="value", default=b"")
def ptr_to_bytes(s: S, th: HostThread, cid: int, ptr: int, size: int) -> bytes:
    """A copy of ``size`` bytes of host memory at ``ptr`` (of device memory too in the
    device run mode, where host and device memory are one).

    Differs from real ACL: an unmapped pointer, or a device address in the host run mode
    (EP, the default), raises ValueError.
    """
    if size < 0:
        raise ValueError("size must not be negative")
    try:
        _, view = buffers.host_view(s, ptr, size, "acl.util.ptr_to_bytes")
    except AclError as e:
        raise ValueError(e.message) from None
    return view.tobytes()


@acl_api("acl.util.start_thread", "start_thread", "CO", out=1)
def start_thread(s: S, th: HostThread, cid: int, fn: Any, args: Any) -> int:
    """``(tid, ret)``: a thread calling ``fn(args)`` (``fn()`` when args is None).

    Differs from real ACL: a Python daemon thread instead of a pthread; the tid is its
    ``threading`` ident (on Linux CPython that is the pthread_t).
    """
    return threads.start_thread(s, th, cid, fn, args)


@acl_api("acl.util.stop_thread", "stop_thread", "k")
def stop_thread(s: S, th: HostThread, cid: int, tid: int) -> None:
    """Join a start_thread thread; if it raised, raise RuntimeError("exception=...").

    Differs from real ACL: joining a thread that can never finish raises DeadlockError.
    """
    threads.stop_thread(s, th, cid, tid)
