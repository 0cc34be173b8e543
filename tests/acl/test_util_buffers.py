"""Data buffers, data-type sizes, module layout and the ``acl.util`` pointer helpers.

Facts come from docs/sources.md sections 1.1, 1.6, 1.7, 2.7, 4.3 and 5(h).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_DDR_MEM,
    ACL_ERROR_INVALID_PARAM,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from tests.helpers import ok

NPY_UINT8 = np.dtype(np.uint8).num
NPY_INT32 = np.dtype(np.int32).num



def free_bytes(acl: ModuleType) -> int:
    """Free device memory of the current device."""
    free, _total, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
    assert ret == ACL_SUCCESS
    return free


# ----------------------------------------------------------------------------- module layout


def test_top_level_functions_live_at_the_top(acl: ModuleType) -> None:
    """init, version, SoC name and data-buffer functions are top-level, not under acl.rt."""
    for name in ("init", "finalize", "finalize_reference", "get_version", "get_soc_name",
                 "get_recent_err_msg", "create_data_buffer", "destroy_data_buffer",
                 "get_data_buffer_addr", "get_data_buffer_size", "get_data_buffer_size_v2",
                 "update_data_buffer", "data_type_size"):
        assert callable(getattr(acl, name)), name
    assert not hasattr(acl.rt, "get_soc_name")
    assert not hasattr(acl.rt, "get_version")
    assert callable(acl.rt.set_context) and callable(acl.rt.get_context)
    assert callable(acl.rt.stream_query)


def test_module_exports_no_constants(acl: ModuleType) -> None:
    """Like the real binding, ``acl`` defines no constants such as ACL_SUCCESS."""
    assert not hasattr(acl, "ACL_SUCCESS")
    assert not hasattr(acl.rt, "ACL_MEMCPY_HOST_TO_DEVICE")


def test_both_pointer_helpers_are_offered(acl: ModuleType) -> None:
    """Samples test ``"bytes_to_ptr" in dir(acl.util)`` and fall back to numpy_to_ptr."""
    assert "bytes_to_ptr" in dir(acl.util)
    assert "numpy_to_ptr" in dir(acl.util)


# ----------------------------------------------------------------------------- data buffers


def test_data_buffer_reports_its_pointer_and_size(ready: ModuleType) -> None:
    """create_data_buffer returns a handle whose addr and size read back unchanged."""
    dev = ok(ready.rt.malloc(1000, ACL_MEM_MALLOC_NORMAL_ONLY))
    buf = ready.create_data_buffer(dev, 1000)
    assert isinstance(buf, int) and buf not in (0, dev)
    assert ready.get_data_buffer_addr(buf) == dev
    assert ready.get_data_buffer_size(buf) == 1000
    assert ready.get_data_buffer_size_v2(buf) == 1000


def test_data_buffer_is_not_validated(ready: ModuleType) -> None:
    """create_data_buffer accepts (0, 0) and sizes larger than any allocation."""
    assert ready.create_data_buffer(0, 0) != 0
    assert ready.create_data_buffer(0x1234, 1 << 40) != 0


def test_get_data_buffer_size_truncates_to_uint32(ready: ModuleType) -> None:
    """get_data_buffer_size returns the size as uint32; _v2 returns the whole size_t."""
    size = (1 << 32) + 5
    buf = ready.create_data_buffer(0, size)
    assert ready.get_data_buffer_size(buf) == 5
    assert ready.get_data_buffer_size_v2(buf) == size


def test_destroy_data_buffer_does_not_free_memory(ready: ModuleType) -> None:
    """destroy_data_buffer deletes the wrapper only: the memory stays allocated."""
    before = free_bytes(ready)
    dev = ok(ready.rt.malloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY))
    taken = before - free_bytes(ready)
    buf = ready.create_data_buffer(dev, 4096)
    assert ready.destroy_data_buffer(buf) == ACL_SUCCESS
    assert before - free_bytes(ready) == taken
    assert ready.rt.memset(dev, 4096, 1, 4096) == ACL_SUCCESS
    assert ready.rt.free(dev) == ACL_SUCCESS
    assert free_bytes(ready) == before


def test_destroy_null_data_buffer_returns_100000(ready: ModuleType) -> None:
    """destroy_data_buffer(0) returns 100000."""
    assert ready.destroy_data_buffer(0) == ACL_ERROR_INVALID_PARAM


def test_null_data_buffer_reads_as_zero(ready: ModuleType) -> None:
    """get_data_buffer_addr and the size getters of a null buffer return 0."""
    assert ready.get_data_buffer_addr(0) == 0
    assert ready.get_data_buffer_size(0) == 0
    assert ready.get_data_buffer_size_v2(0) == 0


def test_update_data_buffer_repoints_it(ready: ModuleType) -> None:
    """update_data_buffer changes the pointer and size of an existing buffer."""
    a = ok(ready.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY))
    b = ok(ready.rt.malloc(200, ACL_MEM_MALLOC_NORMAL_ONLY))
    buf = ready.create_data_buffer(a, 100)
    assert ready.update_data_buffer(buf, b, 200) == ACL_SUCCESS
    assert ready.get_data_buffer_addr(buf) == b
    assert ready.get_data_buffer_size_v2(buf) == 200


@pytest.mark.parametrize(("dtype", "size"), [
    (-1, 0), (0, 4), (1, 2), (2, 1), (3, 4), (4, 1), (6, 2), (7, 2), (8, 4), (9, 8), (10, 8),
    (11, 8), (12, 1), (13, 0), (16, 8), (17, 16), (27, 2), (29, 1), (30, 1), (33, 4), (34, 1),
    (37, 1), (38, 8), (41, 8),
])
def test_data_type_size_follows_the_runtime_table(acl: ModuleType, dtype: int,
                                                  size: int) -> None:
    """data_type_size returns aclDataTypeSize's value (reference section 4.3) as a bare int."""
    assert acl.data_type_size(dtype) == size


# ----------------------------------------------------------------------------- pointer helpers


def test_numpy_to_ptr_is_the_array_address_and_warns(ready: ModuleType) -> None:
    """numpy_to_ptr returns the data address (no copy) with a deprecation Warning."""
    arr = np.arange(16, dtype=np.int32)
    with pytest.warns(Warning, match="bytes_to_ptr"):
        ptr = ready.util.numpy_to_ptr(arr)
    assert ptr == arr.ctypes.data


def test_numpy_to_ptr_warns_twice_for_non_contiguous_arrays(ready: ModuleType) -> None:
    """A non-contiguous array gives a second warning."""
    arr = np.arange(32, dtype=np.int32)[::2]
    with pytest.warns(Warning) as record:
        ready.util.numpy_to_ptr(arr)
    assert len(record) >= 2


def test_numpy_to_ptr_rejects_non_arrays(ready: ModuleType) -> None:
    """numpy_to_ptr of something that is not an ndarray raises ValueError."""
    with pytest.raises(ValueError):
        ready.util.numpy_to_ptr([1, 2, 3])


@pytest.mark.parametrize("obj", [bytearray(8), "text", np.zeros(4, np.uint8)],
                         ids=["bytearray", "str", "ndarray"])
def test_bytes_to_ptr_needs_bytes(ready: ModuleType, obj: Any) -> None:
    """bytes_to_ptr of anything but bytes raises ValueError."""
    with pytest.raises(ValueError):
        ready.util.bytes_to_ptr(obj)


def test_writes_through_numpy_to_ptr_change_the_array(ready: ModuleType) -> None:
    """A D2H copy to numpy_to_ptr(arr) changes ``arr`` itself (no copy in between)."""
    data = np.arange(256, dtype=np.int32)
    dev = ok(ready.rt.malloc(data.nbytes, ACL_MEM_MALLOC_NORMAL_ONLY))
    src = ready.util.bytes_to_ptr(data.tobytes())
    assert ready.rt.memcpy(dev, data.nbytes, src, data.nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    out = np.zeros_like(data)
    with pytest.warns(Warning):
        dst = ready.util.numpy_to_ptr(out)
    assert ready.rt.memcpy(dst, out.nbytes, dev, data.nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(out, data)


def test_ptr_to_numpy_aliases_host_memory(ready: ModuleType) -> None:
    """ptr_to_numpy is a writable view: changes show in both directions."""
    host = ok(ready.rt.malloc_host(64))
    view = ready.util.ptr_to_numpy(host, (16,), NPY_INT32)
    assert view.shape == (16,) and view.dtype == np.int32
    view[:] = 7
    assert np.frombuffer(ready.util.ptr_to_bytes(host, 64), np.int32).tolist() == [7] * 16
    assert ready.rt.memset(host, 64, 0, 64) == ACL_SUCCESS
    assert view.tolist() == [0] * 16


def test_ptr_to_bytes_is_a_copy(ready: ModuleType) -> None:
    """ptr_to_bytes returns a copy: later changes to the memory do not show in it."""
    host = ok(ready.rt.malloc_host(32))
    assert ready.rt.memset(host, 32, 5, 32) == ACL_SUCCESS
    snapshot = ready.util.ptr_to_bytes(host, 32)
    assert ready.rt.memset(host, 32, 9, 32) == ACL_SUCCESS
    assert snapshot == b"\x05" * 32
    assert ready.util.ptr_to_bytes(host, 32) == b"\x09" * 32


def test_ptr_to_numpy_shape_must_be_a_tuple(ready: ModuleType) -> None:
    """ptr_to_numpy with a list shape raises TypeError (the binding parses a tuple)."""
    host = ok(ready.rt.malloc_host(16))
    with pytest.raises(TypeError):
        ready.util.ptr_to_numpy(host, [16], NPY_UINT8)


def test_ptr_to_numpy_with_multi_dimensional_shape(ready: ModuleType) -> None:
    """ptr_to_numpy reshapes to the given tuple in C order."""
    host = ok(ready.rt.malloc_host(24))
    flat = ready.util.ptr_to_numpy(host, (24,), NPY_UINT8)
    flat[:] = np.arange(24, dtype=np.uint8)
    grid = ready.util.ptr_to_numpy(host, (2, 3, 4), NPY_UINT8)
    np.testing.assert_array_equal(grid, np.arange(24, dtype=np.uint8).reshape(2, 3, 4))


def test_numpy_contiguous_to_ptr_returns_a_contiguous_copy(ready: ModuleType) -> None:
    """numpy_contiguous_to_ptr returns (address, contiguous copy) of a strided array."""
    arr = np.arange(32, dtype=np.int32)[::2]
    ptr, arr_c = ready.util.numpy_contiguous_to_ptr(arr)
    assert arr_c.flags.c_contiguous
    np.testing.assert_array_equal(arr_c, arr)
    assert ptr == arr_c.ctypes.data
