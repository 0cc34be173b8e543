"""Memory: rounding, alignment, page policies, frees, copies, memset and data in virtual time.

Facts come from docs/sources.md sections 2.6, 5(a), 5(b), 5(e), 8 and 9.1(b)-(d),
(i), (j). Sizes are observed through get_mem_info deltas, never assumed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from types import ModuleType

import numpy as np
import pytest

import acl_lab
from acl_lab.constants import (
    ACL_DDR_MEM,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_DEVICE_MEM_ERROR,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_HBM_MEM,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_STREAM_STATUS_NOT_READY,
    ACL_SUCCESS,
)
from acl_lab.runtime.profiles import get_profile
from acl_lab.runtime.session import Session
from tests.helpers import ok

KiB = 1 << 10
MiB = 1 << 20
NPY_UINT8 = np.dtype(np.uint8).num
NPY_FLOAT32 = np.dtype(np.float32).num



def free_bytes(acl: ModuleType) -> int:
    """Free device memory of the current device (DDR on the default Ascend310P3 profile)."""
    free, total, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
    assert ret == ACL_SUCCESS and 0 <= free <= total
    return free


def taken_by(acl: ModuleType, alloc: Callable[[], tuple[int, int]]) -> tuple[int, int]:
    """(pointer, bytes of device memory the allocation took) for one allocating call."""
    before = free_bytes(acl)
    ptr = ok(alloc())
    return ptr, before - free_bytes(acl)


def np_ptr(acl: ModuleType, arr: np.ndarray) -> int:
    """acl.util.numpy_to_ptr without its deprecation warning (tested in test_util_buffers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return int(acl.util.numpy_to_ptr(arr))


def pattern(nbytes: int) -> np.ndarray:
    """Deterministic non-zero uint8 test data."""
    return np.resize(np.arange(1, 252, dtype=np.uint8), nbytes)


def read_device(acl: ModuleType, dev: int, nbytes: int) -> np.ndarray:
    """Device bytes, read with a synchronous D2H copy into a numpy array."""
    out = np.zeros(nbytes, np.uint8)
    assert acl.rt.memcpy(np_ptr(acl, out), nbytes, dev, nbytes,
                         ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    return out


# ----------------------------------------------------------------------------- sizes and pages


@pytest.mark.parametrize(("size", "taken"), [(1, 64), (31, 64), (32, 64), (33, 96), (100, 160)])
def test_malloc_rounds_up_to_32_then_adds_32(ready: ModuleType, size: int, taken: int) -> None:
    """malloc takes ((n + 63) // 32) * 32 bytes (NORMAL_ONLY pages)."""
    ptr, got = taken_by(ready, lambda: ready.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert got == taken == ((size + 63) // 32) * 32
    assert ready.rt.free(ptr) == ACL_SUCCESS


@pytest.mark.parametrize(("size", "taken"), [(1, 32), (32, 32), (33, 64), (100, 128)])
def test_malloc_align32_has_no_padding(ready: ModuleType, size: int, taken: int) -> None:
    """malloc_align32 rounds up to a multiple of 32 without the extra 32 bytes."""
    _, got = taken_by(ready, lambda: ready.rt.malloc_align32(size, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert got == taken


def test_malloc_cached_rounds_like_malloc(ready: ModuleType) -> None:
    """malloc_cached takes the same rounded size as malloc."""
    _, got = taken_by(ready, lambda: ready.rt.malloc_cached(100, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert got == 160


def test_free_gives_the_memory_back(ready: ModuleType) -> None:
    """After free, get_mem_info reports the memory as free again."""
    before = free_bytes(ready)
    ptrs = [ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)) for n in (1, 1000, MiB)]
    assert free_bytes(ready) < before
    for p in ptrs:
        assert ready.rt.free(p) == ACL_SUCCESS
    assert free_bytes(ready) == before


@pytest.mark.parametrize("policy", [ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY,
                                    ACL_MEM_MALLOC_NORMAL_ONLY])
@pytest.mark.parametrize("size", [1, 63, 100, 4097, MiB + 1])
def test_device_pointers_are_64_byte_aligned(ready: ModuleType, policy: int, size: int) -> None:
    """malloc returns 64-byte-aligned start addresses for every size and policy."""
    ptrs = [ok(ready.rt.malloc(size, policy)) for _ in range(3)]
    assert len(set(ptrs)) == 3
    assert all(p % 64 == 0 for p in ptrs)


@pytest.mark.parametrize("size", [1, 63, 100, 4097])
def test_host_pointers_are_64_byte_aligned(ready: ModuleType, size: int) -> None:
    """malloc_host returns 64-byte-aligned start addresses."""
    ptrs = [ok(ready.rt.malloc_host(size)) for _ in range(3)]
    assert all(p != 0 and p % 64 == 0 for p in ptrs)


def test_huge_first_above_1mib_takes_2mib_granules(ready: ModuleType) -> None:
    """HUGE_FIRST above 1 MiB uses huge pages: free memory drops by a multiple of 2 MiB."""
    for size in (MiB + 1, 3 * MiB, 5 * MiB + 7):
        _, got = taken_by(ready, lambda s=size: ready.rt.malloc(s, ACL_MEM_MALLOC_HUGE_FIRST))
        assert got % (2 * MiB) == 0
        assert size < got <= size + 2 * MiB + 64


def test_huge_first_at_1mib_uses_normal_pages(ready: ModuleType) -> None:
    """HUGE_FIRST at 1 MiB or less uses normal pages: plain malloc rounding."""
    _, got = taken_by(ready, lambda: ready.rt.malloc(MiB, ACL_MEM_MALLOC_HUGE_FIRST))
    assert got == ((MiB + 63) // 32) * 32


def test_huge_only_takes_2mib_even_for_small_sizes(ready: ModuleType) -> None:
    """HUGE_ONLY allocates whole 2 MiB huge pages whatever the size."""
    _, got = taken_by(ready, lambda: ready.rt.malloc(100, ACL_MEM_MALLOC_HUGE_ONLY))
    assert got == 2 * MiB


def test_out_of_range_policy_uses_huge_pages_from_2mib(ready: ModuleType) -> None:
    """A policy outside the enum means huge pages from 2 MiB up, normal pages below."""
    _, small = taken_by(ready, lambda: ready.rt.malloc(100, 8))
    assert small == 160
    _, large = taken_by(ready, lambda: ready.rt.malloc(2 * MiB, 8))
    assert large % (2 * MiB) == 0


def test_size_zero_is_invalid(ready: ModuleType) -> None:
    """malloc(0) and malloc_host(0) return (0, 100000) and take nothing."""
    before = free_bytes(ready)
    assert ready.rt.malloc(0, ACL_MEM_MALLOC_NORMAL_ONLY) == (0, ACL_ERROR_INVALID_PARAM)
    assert ready.rt.malloc(0, ACL_MEM_MALLOC_HUGE_FIRST) == (0, ACL_ERROR_INVALID_PARAM)
    assert ready.rt.malloc_host(0) == (0, ACL_ERROR_INVALID_PARAM)
    assert free_bytes(ready) == before


def test_hbm_query_on_ddr_device_reports_ddr(ready: ModuleType, session: Session) -> None:
    """On a DDR device (Ascend310P3), get_mem_info(ACL_HBM_MEM) reports the DDR figures."""
    assert session.profile.memory_kind == "ddr"
    assert ready.rt.get_mem_info(ACL_HBM_MEM) == ready.rt.get_mem_info(ACL_DDR_MEM)


@pytest.fixture
def small_device() -> Iterator[ModuleType]:
    """``acl`` on a device with only 192 MiB usable, after init + set_device(0)."""
    profile = get_profile("Ascend310P3", memory_bytes=256 * MiB, reserved_bytes=64 * MiB)
    with Session(profile=profile, watchdog=2.0):
        acl = acl_lab.install()
        try:
            assert acl.init() == ACL_SUCCESS
            assert acl.rt.set_device(0) == ACL_SUCCESS
            yield acl
        finally:
            acl_lab.uninstall()


def test_out_of_device_memory_returns_207001(small_device: ModuleType) -> None:
    """Allocating past the device capacity returns (0, 207001); freeing makes room again."""
    acl = small_device
    free = free_bytes(acl)
    most = ok(acl.rt.malloc(free - MiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    left = free_bytes(acl)
    assert acl.rt.malloc(2 * MiB, ACL_MEM_MALLOC_NORMAL_ONLY) == (0,
                                                                   ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert acl.rt.malloc(2 * MiB, ACL_MEM_MALLOC_HUGE_FIRST) == (0,
                                                                  ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert free_bytes(acl) == left
    assert acl.get_recent_err_msg()
    assert acl.rt.malloc(left // 2, ACL_MEM_MALLOC_NORMAL_ONLY)[1] == ACL_SUCCESS
    assert acl.rt.free(most) == ACL_SUCCESS
    assert acl.rt.malloc(2 * MiB, ACL_MEM_MALLOC_NORMAL_ONLY)[1] == ACL_SUCCESS


# ----------------------------------------------------------------------------- frees


def test_double_free_returns_107000(ready: ModuleType) -> None:
    """Freeing the same device pointer twice returns 107000 the second time."""
    ptr = ok(ready.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.free(ptr) == ACL_SUCCESS
    assert ready.rt.free(ptr) == ACL_ERROR_RT_PARAM_INVALID


def test_free_of_host_pointer_returns_107000(ready: ModuleType) -> None:
    """acl.rt.free of a malloc_host pointer returns 107000 and leaves it allocated."""
    host = ok(ready.rt.malloc_host(100))
    assert ready.rt.free(host) == ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.free_host(host) == ACL_SUCCESS


def test_free_host_of_device_pointer_returns_107000(ready: ModuleType) -> None:
    """acl.rt.free_host of a device pointer returns 107000 and leaves it allocated."""
    before = free_bytes(ready)
    dev = ok(ready.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.free_host(dev) == ACL_ERROR_RT_PARAM_INVALID
    assert free_bytes(ready) < before
    assert ready.rt.free(dev) == ACL_SUCCESS
    assert free_bytes(ready) == before


def test_double_free_host_returns_107000(ready: ModuleType) -> None:
    """Freeing the same malloc_host pointer twice returns 107000 the second time."""
    host = ok(ready.rt.malloc_host(100))
    assert ready.rt.free_host(host) == ACL_SUCCESS
    assert ready.rt.free_host(host) == ACL_ERROR_RT_PARAM_INVALID


def test_free_of_null_returns_100000(ready: ModuleType) -> None:
    """free(0) and free_host(0) return 100000."""
    assert ready.rt.free(0) == ACL_ERROR_INVALID_PARAM
    assert ready.rt.free_host(0) == ACL_ERROR_INVALID_PARAM


def test_free_of_foreign_pointers_returns_107000(ready: ModuleType) -> None:
    """free of an interior pointer, a pageable buffer or a made-up address returns 107000."""
    dev = ok(ready.rt.malloc(1000, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.free(dev + 64) == ACL_ERROR_RT_PARAM_INVALID
    buf = bytes(128)
    assert ready.rt.free(ready.util.bytes_to_ptr(buf)) == ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.free(0x1000) == ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.free(dev) == ACL_SUCCESS


def test_free_host_of_pageable_buffer_returns_107000(ready: ModuleType) -> None:
    """free_host of a bytes buffer's pointer returns 107000 (Python owns that memory)."""
    buf = bytes(256)
    assert ready.rt.free_host(ready.util.bytes_to_ptr(buf)) == ACL_ERROR_RT_PARAM_INVALID


def test_free_needs_no_context(ready: ModuleType) -> None:
    """free works after the thread lost its context (RT2 uses no current context)."""
    ctx = ok(ready.rt.create_context(0))
    dev = ok(ready.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.destroy_context(ctx) == ACL_SUCCESS
    assert ready.rt.free(dev) == ACL_SUCCESS


# ----------------------------------------------------------------------------- copy checks


def sync_copy(acl: ModuleType, dst: int, dmax: int, src: int, n: int, kind: int) -> int:
    return acl.rt.memcpy(dst, dmax, src, n, kind)


def async_copy(acl: ModuleType, dst: int, dmax: int, src: int, n: int, kind: int) -> int:
    return acl.rt.memcpy_async(dst, dmax, src, n, kind, 0)


COPIERS = [sync_copy, async_copy]


@pytest.fixture
def buffers(ready: ModuleType) -> tuple[ModuleType, int, int]:
    """(acl, host pointer, device pointer), 1 KiB each."""
    return ready, ok(ready.rt.malloc_host(KiB)), ok(ready.rt.malloc(KiB, 2))


@pytest.mark.parametrize("copy", COPIERS, ids=["memcpy", "memcpy_async"])
def test_count_above_dest_max_returns_107000(buffers: tuple[ModuleType, int, int],
                                             copy: Callable[..., int]) -> None:
    """A copy with count > dest_max returns 107000."""
    acl, host, dev = buffers
    assert copy(acl, dev, 100, host, 101, ACL_MEMCPY_HOST_TO_DEVICE) == \
        ACL_ERROR_RT_PARAM_INVALID


@pytest.mark.parametrize("copy", COPIERS, ids=["memcpy", "memcpy_async"])
def test_count_zero_does_nothing(buffers: tuple[ModuleType, int, int],
                                 copy: Callable[..., int]) -> None:
    """A copy of 0 bytes succeeds and does nothing."""
    acl, host, dev = buffers
    assert copy(acl, dev, KiB, host, 0, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS


@pytest.mark.parametrize("copy", COPIERS, ids=["memcpy", "memcpy_async"])
def test_copy_to_itself_does_nothing(buffers: tuple[ModuleType, int, int],
                                     copy: Callable[..., int]) -> None:
    """A copy with dst == src succeeds and does nothing."""
    acl, _, dev = buffers
    assert copy(acl, dev, KiB, dev, KiB, ACL_MEMCPY_DEVICE_TO_DEVICE) == ACL_SUCCESS


@pytest.mark.parametrize("copy", COPIERS, ids=["memcpy", "memcpy_async"])
def test_null_pointer_returns_100000(buffers: tuple[ModuleType, int, int],
                                     copy: Callable[..., int]) -> None:
    """A null destination or source returns 100000."""
    acl, host, dev = buffers
    assert copy(acl, 0, KiB, host, KiB, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_ERROR_INVALID_PARAM
    assert copy(acl, dev, KiB, 0, KiB, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_ERROR_INVALID_PARAM


def test_memcpy_async_host_to_host_returns_207000(buffers: tuple[ModuleType, int, int]) -> None:
    """memcpy_async between two host buffers returns 207000; synchronous memcpy allows it."""
    acl, host, _ = buffers
    other = ok(acl.rt.malloc_host(KiB))
    assert async_copy(acl, other, KiB, host, KiB, ACL_MEMCPY_HOST_TO_HOST) == \
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert sync_copy(acl, other, KiB, host, KiB, ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS


def test_copy_may_use_the_padding_but_not_beyond(ready: ModuleType) -> None:
    """A copy into [ptr, ptr + rounded size) is legal; one byte further is refused."""
    dev = ok(ready.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY))  # 160 bytes really
    host = ok(ready.rt.malloc_host(KiB))
    assert ready.rt.memcpy(dev, 160, host, 160, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    assert ready.rt.memcpy(dev, 161, host, 161, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS


def test_copy_into_freed_memory_fails(ready: ModuleType) -> None:
    """A synchronous copy into freed device memory does not succeed."""
    dev = ok(ready.rt.malloc(KiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    host = ok(ready.rt.malloc_host(KiB))
    assert ready.rt.free(dev) == ACL_SUCCESS
    assert ready.rt.memcpy(dev, KiB, host, KiB, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS


def test_misaligned_async_copy_is_accepted(ready: ModuleType) -> None:
    """memcpy_async does not check 64-byte alignment at call time: it returns 0 (RT2)."""
    host = ok(ready.rt.malloc_host(KiB))
    dev = ok(ready.rt.malloc(KiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev + 1, KiB - 1, host + 3, 100, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS


def test_freeing_memory_of_a_queued_copy_fails_the_copy(ready: ModuleType) -> None:
    """free does not wait for queued tasks; the copy that still needed the memory fails."""
    n = 4 * MiB
    host = ok(ready.rt.malloc_host(n))
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.free(dev) == ACL_SUCCESS  # returns at once
    assert ready.rt.synchronize_stream(stream) != ACL_SUCCESS


def test_pageable_async_copy_in_sync_mode_completes_in_the_call() -> None:
    """With the newest runtime's rule (pageable_async="sync") the copy is done on return."""
    with Session(pageable_async="sync", watchdog=2.0):
        acl = acl_lab.install()
        try:
            assert acl.init() == ACL_SUCCESS
            assert acl.rt.set_device(0) == ACL_SUCCESS
            n = 4 * MiB
            arr = pattern(n)
            dev = ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
            stream = ok(acl.rt.create_stream())
            assert acl.rt.memcpy_async(dev, n, np_ptr(acl, arr), n, ACL_MEMCPY_HOST_TO_DEVICE,
                                       stream) == ACL_SUCCESS
            arr[:] = 0  # too late to matter: the copy already happened
            assert acl.rt.stream_query(stream) == (0, ACL_SUCCESS)
            assert (read_device(acl, dev, n) == pattern(n)).all()
        finally:
            acl_lab.uninstall()


# ----------------------------------------------------------------------------- memset


def test_memset_uses_the_low_8_bits(ready: ModuleType) -> None:
    """memset writes value & 0xFF into every byte: 0x1234 fills with 0x34."""
    dev = ok(ready.rt.malloc(KiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memset(dev, KiB, 0x1234, KiB) == ACL_SUCCESS
    assert (read_device(ready, dev, KiB) == 0x34).all()
    host = ok(ready.rt.malloc_host(KiB))
    assert ready.rt.memset(host, KiB, 0x1234, KiB) == ACL_SUCCESS
    assert ready.util.ptr_to_bytes(host, KiB) == b"\x34" * KiB


def test_memset_count_above_max_returns_107000(ready: ModuleType) -> None:
    """memset and memset_async with count > max_count return 107000; count 0 does nothing."""
    dev = ok(ready.rt.malloc(KiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memset(dev, 10, 1, 11) == ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.memset_async(dev, 10, 1, 11, 0) == ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.memset(dev, 10, 1, 0) == ACL_SUCCESS


def test_a_negative_count_read_as_size_t_fails_its_task_and_keeps_the_trace(
        ready: ModuleType) -> None:
    """The binding reads counts as size_t, so -5 arrives as 2**64 - 5: past the allocation,
    memset fails with 507053 and memset_async's task fails at the stream's synchronize, as
    any range past the end does; the trace records both (its sizes bounded), no recorder
    error escapes the calls."""
    dev = ok(ready.rt.malloc(KiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memset(dev, -5, 213, -5) == ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert ready.rt.memset_async(dev, -5, 213, -5, 0) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(0) == ACL_ERROR_RT_DEVICE_MEM_ERROR
    trace = acl_lab.current_session().finish()
    assert trace.tasks.rows == 2
    assert int(np.max(trace.accesses["length"])) == (1 << 63) - 1
    names = [trace.call_name(c) for c in range(trace.calls.rows)]
    assert "acl.rt.memset" in names and "acl.rt.memset_async" in names


def test_memset_async_on_host_memory_applies_at_once(ready: ModuleType) -> None:
    """memset_async on malloc_host memory is done when the call returns, not on the stream."""
    stream = ok(ready.rt.create_stream())
    big = 32 * MiB
    big_host = ok(ready.rt.malloc_host(big))
    big_dev = ok(ready.rt.malloc(big, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy_async(big_dev, big, big_host, big, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS
    host = ok(ready.rt.malloc_host(KiB))
    assert ready.rt.memset_async(host, KiB, 7, KiB, stream) == ACL_SUCCESS
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)
    assert ready.util.ptr_to_bytes(host, KiB) == b"\x07" * KiB


def test_memset_async_on_device_memory_is_a_stream_task(ready: ModuleType) -> None:
    """memset_async on device memory takes effect by synchronize_stream."""
    stream = ok(ready.rt.create_stream())
    dev = ok(ready.rt.malloc(KiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memset_async(dev, KiB, 0x1FF, KiB, stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert (read_device(ready, dev, KiB) == 0xFF).all()


# ----------------------------------------------------------------------------- data round trips


def test_round_trip_with_numpy_buffers(ready: ModuleType) -> None:
    """H2D -> D2D -> D2H with numpy_to_ptr host buffers gives the bytes back."""
    data = np.linspace(-1, 1, 4096, dtype=np.float32)
    n = data.nbytes
    a = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    b = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy(a, n, np_ptr(ready, data), n, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert ready.rt.memcpy(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    out = np.zeros_like(data)
    assert ready.rt.memcpy(np_ptr(ready, out), n, b, n, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(out, data)


def test_round_trip_with_bytes_source_and_raw_numpy_destination(ready: ModuleType) -> None:
    """bytes_to_ptr works as a source; the result comes back into a numpy array through its
    raw address (``arr.ctypes.data``), which real ACL accepts like any valid host address."""
    data = np.arange(1000, dtype=np.int32)
    src = data.tobytes()
    n = len(src)
    a = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    b = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy(a, n, ready.util.bytes_to_ptr(src), n,
                           ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    assert ready.rt.memcpy(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE) == ACL_SUCCESS
    out = np.zeros_like(data)
    assert ready.rt.memcpy(out.ctypes.data, n, b, n, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    np.testing.assert_array_equal(out, data)


def test_round_trip_with_pinned_memory(ready: ModuleType) -> None:
    """malloc_host + ptr_to_numpy in, async H2D -> D2D -> D2H, ptr_to_bytes out."""
    n = 64 * KiB
    data = pattern(n)
    h_in, h_out = ok(ready.rt.malloc_host(n)), ok(ready.rt.malloc_host(n))
    ready.util.ptr_to_numpy(h_in, (n,), NPY_UINT8)[:] = data
    a = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    b = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(a, n, h_in, n, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.memcpy_async(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE, stream) == 0
    assert ready.rt.memcpy_async(h_out, n, b, n, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.util.ptr_to_bytes(h_out, n) == data.tobytes()
    view = ready.util.ptr_to_numpy(h_out, (n // 4,), NPY_FLOAT32)
    np.testing.assert_array_equal(view, data.view(np.float32))


def test_async_result_is_there_only_after_synchronize(ready: ModuleType) -> None:
    """The destination of a queued D2H copy is unchanged until the stream is synchronized."""
    n = 4 * MiB
    data = pattern(n)
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy(dev, n, np_ptr(ready, data), n, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    host = ok(ready.rt.malloc_host(n))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert ready.util.ptr_to_bytes(host, n) == bytes(n)  # not yet written
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.util.ptr_to_bytes(host, n) == data.tobytes()


def test_pageable_change_before_the_task_starts_is_copied(ready: ModuleType) -> None:
    """Changing a pageable source right after memcpy_async changes what gets copied.

    In virtual time the call returns after its launch cost, but the task starts only after
    the launch latency; Python code between API calls takes no virtual time, so the write
    below happens before the task reads its input: the device receives the new value (2).
    """
    n = MiB
    arr = np.full(n, 1, np.uint8)
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev, n, np_ptr(ready, arr), n, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS
    arr[:] = 2
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert (read_device(ready, dev, n) == 2).all()


def test_pageable_change_after_the_task_started_is_not_copied(ready: ModuleType,
                                                              session: Session) -> None:
    """Once the copy has started in virtual time it has read its input: later writes are lost.

    Each stream_query costs the host one API call of virtual time; after enough of them the
    host clock passes the task's start (launch latency) while the 32 MiB copy is still in
    flight (NOT_READY). The copy read the old value (1) at its start, so the device gets 1.
    """
    n = 32 * MiB
    arr = np.full(n, 1, np.uint8)
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev, n, np_ptr(ready, arr), n, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS
    p = session.profile
    for _ in range(p.launch_latency_ns // p.api_call_ns + 2):
        assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)
    arr[:] = 2
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert (read_device(ready, dev, n) == 1).all()
