"""Host source over-reads (issue 12): a copy whose host source runs past the buffer
``acl.util`` handed out.

Real ACL does not know how large a host buffer is: the driver copies the bytes that follow it
(whatever lies there, or the process crashes if they are unmapped). The emulator copies the
same bytes when the whole range is mapped readable, keeps an error-level ``out_of_bounds``
finding that says so, refuses an unmapped range with 107000 (the raw-address rule) and never
writes past a host destination.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
import warnings
from collections.abc import Iterator
from types import ModuleType

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import run_checks
from tests.helpers import ok

PAGE = mmap.PAGESIZE
COUNT = 256


def np_ptr(acl: ModuleType, arr: np.ndarray) -> int:
    """acl.util.numpy_to_ptr without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return int(acl.util.numpy_to_ptr(arr))


def device_bytes(acl: ModuleType, dev: int, n: int) -> bytes:
    """The first ``n`` bytes of device buffer ``dev``, copied into a fresh array."""
    out = np.zeros(n, np.uint8)
    assert acl.rt.memcpy(out.ctypes.data, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    return out.tobytes()


def out_of_bounds(session: Session) -> list:
    """The session's out_of_bounds findings so far."""
    return [f for f in run_checks(session.trace()) if f.kind == "out_of_bounds"]


@pytest.fixture
def dev(ready: ModuleType) -> Iterator[int]:
    """A device buffer of COUNT bytes."""
    d = int(ok(ready.rt.malloc(COUNT, ACL_MEM_MALLOC_NORMAL_ONLY)))
    yield d
    ready.rt.free(d)


def test_numpy_source_over_read_copies_the_bytes_that_follow(
        ready: ModuleType, session: Session, dev: int) -> None:
    """numpy_to_ptr of a 100-byte view of a larger array, copied with count 256: ret 0 and
    the device holds the 256 bytes at that address (the view's, then the 156 after it)."""
    big = (np.arange(4096) * 7 % 251).astype(np.uint8)
    src = np_ptr(ready, big[:100])
    assert ready.rt.memcpy(dev, COUNT, src, COUNT, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    got = device_bytes(ready, dev, COUNT)
    assert got == ctypes.string_at(src, COUNT)
    assert got == big[:COUNT].tobytes()


def test_bytes_source_over_read_copies_what_follows_the_object(
        ready: ModuleType, dev: int) -> None:
    """bytes_to_ptr of a 200-byte object copied with count 201: the extra byte is the one
    that follows the object's data (CPython ends every bytes object with a NUL)."""
    data = bytes(range(200))
    src = int(ready.util.bytes_to_ptr(data))
    assert ready.rt.memcpy(dev, COUNT, src, 201, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    got = device_bytes(ready, dev, 201)
    assert got == ctypes.string_at(src, 201)
    assert got[:200] == data
    if sys.implementation.name == "cpython":
        assert got[200] == 0


def test_async_source_over_read_copies_the_bytes_that_follow(
        ready: ModuleType, dev: int) -> None:
    """The same over-read through memcpy_async: the task copies the bytes that follow."""
    big = (np.arange(4096) * 13 % 249).astype(np.uint8)
    src = np_ptr(ready, big[:64])
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev, COUNT, src, COUNT, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.rt.destroy_stream(stream) == ACL_SUCCESS
    assert device_bytes(ready, dev, COUNT) == big[:COUNT].tobytes()


def test_the_finding_is_an_error_saying_what_real_acl_does(
        ready: ModuleType, session: Session, dev: int) -> None:
    """One out_of_bounds finding, error level, at the copy's line: it says 156 bytes past
    the end, that real ACL copies the bytes that follow and that they were copied here."""
    big = np.zeros(4096, np.uint8)
    src = np_ptr(ready, big[:100])
    line = sys._getframe().f_lineno + 1
    assert ready.rt.memcpy(dev, COUNT, src, COUNT, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    (f,) = out_of_bounds(session)
    assert f.severity == "error" and f.line == line
    assert "ran 156 bytes past its end" in f.message
    assert "real ACL copies the 156 bytes that follow the buffer" in f.message
    assert "here they were copied too" in f.message
    assert "or a crash if unmapped" in f.message
    assert "refused" not in f.message


@pytest.fixture
def guarded_page() -> Iterator[np.ndarray]:
    """An array filling one page whose next page is mapped PROT_NONE (unreadable)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    mm = mmap.mmap(-1, 2 * PAGE)
    arr = np.frombuffer(mm, np.uint8, count=2 * PAGE)
    base = arr.ctypes.data
    assert libc.mprotect(base + PAGE, PAGE, 0) == 0, ctypes.get_errno()
    try:
        arr[:PAGE] = 0x33
        yield arr[:PAGE]
    finally:
        # Readable again before anyone else may look; the session's registry still holds
        # the view, so the mapping is left for the garbage collector (no close).
        assert libc.mprotect(base + PAGE, PAGE, mmap.PROT_READ | mmap.PROT_WRITE) == 0


def test_an_unmapped_over_read_keeps_the_raw_address_code(
        ready: ModuleType, session: Session, dev: int, guarded_page: np.ndarray) -> None:
    """A source buffer at the end of the readable pages, copied 16 bytes too far: 107000
    (as for any unreadable host address), nothing copied, and the finding says the bytes
    that follow were not mapped."""
    assert ready.rt.memset(dev, COUNT, 0x11, COUNT) == ACL_SUCCESS
    src = np_ptr(ready, guarded_page[PAGE - 240:])
    ret = ready.rt.memcpy(dev, COUNT, src, COUNT, ACL_MEMCPY_HOST_TO_DEVICE)
    assert ret == ACL_ERROR_RT_PARAM_INVALID
    assert device_bytes(ready, dev, COUNT) == b"\x11" * COUNT
    (f,) = out_of_bounds(session)
    assert f.severity == "error" and "ran 16 bytes past its end" in f.message
    assert "not mapped, so the copy was refused with 107000" in f.message


def test_a_host_destination_over_write_stays_refused(
        ready: ModuleType, session: Session, dev: int) -> None:
    """A D2H copy of 256 bytes into a 100-byte host view: refused (507053), the bytes after
    the view are untouched, and the finding is the refusal's."""
    assert ready.rt.memset(dev, COUNT, 0x77, COUNT) == ACL_SUCCESS
    big = np.zeros(4096, np.uint8)
    dst = np_ptr(ready, big[:100])
    ret = ready.rt.memcpy(dst, COUNT, dev, COUNT, ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == 507053
    assert not big[100:].any()
    (f,) = out_of_bounds(session)
    assert "refused it with 507053" in f.message and "real ACL copies" not in f.message
