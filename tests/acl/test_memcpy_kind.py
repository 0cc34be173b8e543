"""A copy kind that does not match the pointers (issue 12 §4(b)).

Real runtime (hicann/runtime ``api_error.cc``, ``MemcpyKindAutoCorrect``): an async copy
between registered memory (device, page-locked host) gets its kind forced to what the pointers
say; with an unregistered (pageable) side only the kinds listed for that pair are accepted and
the others return 107000. A synchronous copy goes by the addresses. Either way the program is
told nothing, so acl_lab reports ``memcpy_kind_mismatch`` at the copy's line: a warning when
the copy ran, an error when it was refused.
"""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np

from acl_lab.constants import (
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import run_checks
from tests.helpers import ok


def kind_findings(session: Session) -> list:
    """The memcpy_kind_mismatch findings of the session's trace so far."""
    return [f for f in run_checks(session.trace()) if f.kind == "memcpy_kind_mismatch"]


def test_sync_d2h_from_a_pinned_host_buffer_copies_host_bytes_and_warns(
        ready: ModuleType, session: Session) -> None:
    """memcpy DEVICE_TO_HOST whose source is host memory: ret 0, the destination gets the
    host source's bytes (the kind is corrected to HOST_TO_HOST), one warning at the line."""
    src = ok(ready.rt.malloc_host(16))
    dst = ok(ready.rt.malloc_host(16))
    assert ready.rt.memset(src, 16, 0x33, 16) == ACL_SUCCESS
    line = sys._getframe().f_lineno + 1
    ret = ready.rt.memcpy(dst, 16, src, 16, ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == ACL_SUCCESS
    assert ready.util.ptr_to_bytes(dst, 16) == b"\x33" * 16
    (f,) = kind_findings(session)
    assert f.severity == "warning" and f.line == line
    assert "ACL_MEMCPY_DEVICE_TO_HOST" in f.message and "ACL_MEMCPY_HOST_TO_HOST" in f.message
    assert "host_pinned -> host_pinned" in f.message


def test_matching_kinds_give_no_finding(ready: ModuleType, session: Session) -> None:
    """Every copy with the right kind, sync and async, pageable and pinned: no finding."""
    dev = ok(ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
    dev2 = ok(ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
    pin = ok(ready.rt.malloc_host(64))
    arr = np.arange(64, dtype=np.uint8)
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy(dev, 64, arr.ctypes.data, 64, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert ready.rt.memcpy(dev2, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    assert ready.rt.memcpy(pin, 64, dev2, 64, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert ready.rt.memcpy_async(dev, 64, pin, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.synchronize_stream(stream) == 0
    assert ready.rt.memcpy(pin, 64, arr.ctypes.data, 64, ACL_MEMCPY_HOST_TO_HOST) == 0
    assert kind_findings(session) == []


def test_async_registered_pair_is_corrected_with_a_warning(
        ready: ModuleType, session: Session) -> None:
    """memcpy_async HOST_TO_DEVICE from device to pinned host: both sides registered, the
    runtime forces DEVICE_TO_HOST (MemcpyReviseMap rule 2); the bytes arrive, one warning."""
    dev = ok(ready.rt.malloc(32, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memset(dev, 32, 0x7E, 32) == 0
    pin = ok(ready.rt.malloc_host(32))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(pin, 32, dev, 32, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.synchronize_stream(stream) == 0
    assert ready.util.ptr_to_bytes(pin, 32) == b"\x7e" * 32
    (f,) = kind_findings(session)
    assert f.severity == "warning" and "ACL_MEMCPY_DEVICE_TO_HOST" in f.message


def test_async_pageable_pair_with_a_kind_not_listed_is_refused(
        ready: ModuleType, session: Session) -> None:
    """memcpy_async DEVICE_TO_HOST from a numpy array into device memory: unregistered ->
    device accepts only HOST_TO_DEVICE or DEVICE_TO_DEVICE, so 107000, nothing copied, and
    an error finding at the line naming the accepted kinds."""
    dev = ok(ready.rt.malloc(16, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memset(dev, 16, 0, 16) == 0
    arr = np.full(16, 9, np.uint8)
    stream = ok(ready.rt.create_stream())
    line = sys._getframe().f_lineno + 1
    ret = ready.rt.memcpy_async(dev, 16, arr.ctypes.data, 16, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    assert ret == ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.synchronize_stream(stream) == 0
    back = np.zeros(16, np.uint8)
    assert ready.rt.memcpy(back.ctypes.data, 16, dev, 16, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert back.tolist() == [0] * 16
    (f,) = kind_findings(session)
    assert f.severity == "error" and f.line == line and "107000" in f.message
    assert "ACL_MEMCPY_HOST_TO_DEVICE or ACL_MEMCPY_DEVICE_TO_DEVICE" in f.message


def test_async_pageable_pair_with_a_listed_kind_is_accepted_with_a_warning(
        ready: ModuleType, session: Session) -> None:
    """memcpy_async DEVICE_TO_DEVICE from a numpy array to device memory is in the list for
    unregistered -> device: accepted (ret 0, the bytes arrive), a warning, not an error."""
    dev = ok(ready.rt.malloc(16, ACL_MEM_MALLOC_NORMAL_ONLY))
    arr = np.full(16, 5, np.uint8)
    stream = ok(ready.rt.create_stream())
    ret = ready.rt.memcpy_async(dev, 16, arr.ctypes.data, 16, ACL_MEMCPY_DEVICE_TO_DEVICE,
                                stream)
    assert ret == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == 0
    back = np.zeros(16, np.uint8)
    assert ready.rt.memcpy(back.ctypes.data, 16, dev, 16, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert back.tolist() == [5] * 16
    kinds = [(f.severity, "accepts it" in f.message) for f in kind_findings(session)]
    assert kinds == [("warning", True)]


def test_a_loop_of_wrong_kinds_is_one_finding_with_a_count(
        ready: ModuleType, session: Session) -> None:
    """Three wrong copies at one line: one finding saying 3 times."""
    a = ok(ready.rt.malloc_host(8))
    b = ok(ready.rt.malloc_host(8))
    for _ in range(3):
        assert ready.rt.memcpy(b, 8, a, 8, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    (f,) = kind_findings(session)
    assert "(3 times)" in f.message and len(f.calls) == 3
