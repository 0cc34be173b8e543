"""Tensor descriptors and op attributes (top-level acl.*_tensor_desc*, acl.op.*attr*)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_ERROR_INVALID_PARAM,
    ACL_FLOAT,
    ACL_FLOAT16,
    ACL_FORMAT_NCHW,
    ACL_FORMAT_ND,
    ACL_INT32,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session


def test_desc_size_is_element_count_times_type_size(ready: ModuleType) -> None:
    """The sample's int32 (8, 16) desc is 512 bytes; float16 halves the element size."""
    d = ready.create_tensor_desc(ACL_INT32, [8, 16], ACL_FORMAT_ND)
    assert ready.get_tensor_desc_size(d) == 512
    assert ready.get_tensor_desc_element_count(d) == 128
    h = ready.create_tensor_desc(ACL_FLOAT16, [8, 16], ACL_FORMAT_ND)
    assert ready.get_tensor_desc_size(h) == 256


def test_desc_getters_return_what_was_set(ready: ModuleType) -> None:
    """Type, format, dims, name and shape changes read back."""
    d = ready.create_tensor_desc(ACL_FLOAT, [1, 3, 4, 5], ACL_FORMAT_NCHW)
    assert ready.get_tensor_desc_type(d) == ACL_FLOAT
    assert ready.get_tensor_desc_format(d) == ACL_FORMAT_NCHW
    assert ready.get_tensor_desc_num_dims(d) == 4
    assert ready.get_tensor_desc_dim_v2(d, 2) == (4, ACL_SUCCESS)
    assert ready.get_tensor_desc_dim_v2(d, 9) == (0, ACL_ERROR_INVALID_PARAM)
    assert ready.set_tensor_shape(d, [2, 3]) == ACL_SUCCESS
    assert ready.get_tensor_desc_size(d) == 24
    assert ready.set_tensor_format(d, ACL_FORMAT_ND) == ACL_SUCCESS
    assert ready.get_tensor_desc_format(d) == ACL_FORMAT_ND
    assert ready.set_tensor_desc_name(d, "x") is None
    assert ready.get_tensor_desc_name(d) == "x"
    assert ready.destroy_tensor_desc(d) is None


def test_dims_must_be_a_list(ready: ModuleType) -> None:
    """A tuple of dims raises TypeError like pyACL ("argument 2 is not list")."""
    with pytest.raises(TypeError, match=r"^argument 2 is not list$"):
        ready.create_tensor_desc(ACL_FLOAT, (2, 3), ACL_FORMAT_ND)


def test_set_tensor_const_copies_host_bytes(ready: ModuleType) -> None:
    """set_tensor_const takes host data; a device pointer is refused."""
    d = ready.create_tensor_desc(ACL_INT32, [2], ACL_FORMAT_ND)
    data = np.array([1, 0], np.int32).tobytes()
    assert ready.set_tensor_const(d, ready.util.bytes_to_ptr(data), 8) == ACL_SUCCESS
    dev, _ = ready.rt.malloc(8, 0)
    assert ready.set_tensor_const(d, dev, 8) != ACL_SUCCESS


def test_attr_setters_and_data_type_shape(ready: ModuleType) -> None:
    """Attribute setters return 0; set_attr_data_type returns (attr, ret)."""
    attr = ready.op.create_attr()
    assert attr != 0
    assert ready.op.set_attr_bool(attr, "transpose_x1", True) == ACL_SUCCESS
    assert ready.op.set_attr_int(attr, "groups", 1) == ACL_SUCCESS
    assert ready.op.set_attr_float(attr, "epsilon", 1e-5) == ACL_SUCCESS
    assert ready.op.set_attr_string(attr, "padding", "SAME") == ACL_SUCCESS
    assert ready.op.set_attr_list_int(attr, "strides", [1, 1, 2, 2]) == ACL_SUCCESS
    assert ready.op.set_attr_list_int(attr, "pads", np.array([1, 1, 1, 1])) == ACL_SUCCESS
    assert ready.op.set_attr_data_type(attr, "dst_type", ACL_FLOAT16) == (attr, ACL_SUCCESS)
    assert ready.op.set_attr_list_int(attr, "x", 5) == ACL_ERROR_INVALID_PARAM
    assert ready.op.destroy_attr(attr) is None


def test_set_model_dir_needs_a_folder_and_is_set_once(ready: ModuleType, tmp_path) -> None:
    """A missing folder gives 100003; a second call gives 100002."""
    assert ready.op.set_model_dir(str(tmp_path / "missing")) == 100003
    assert ready.op.set_model_dir(str(tmp_path)) == ACL_SUCCESS
    assert ready.op.set_model_dir(str(tmp_path)) == 100002


# ----------------------------------------------------------------------------- C-type sizes


def _ret_of_last_call(session: Session) -> int:
    return int(session.trace().calls["ret"][-1])


def test_dims_outside_int64_are_refused_with_100000(ready: ModuleType, session: Session) -> None:
    """A dim that does not fit int64_t gives a null desc and 100000, no OverflowError."""
    assert ready.create_tensor_desc(ACL_FLOAT, [2**64], ACL_FORMAT_ND) == 0
    assert _ret_of_last_call(session) == ACL_ERROR_INVALID_PARAM
    assert ready.create_tensor_desc(ACL_FLOAT, [-(2**63) - 1], ACL_FORMAT_ND) == 0
    d = ready.create_tensor_desc(ACL_FLOAT, [2], ACL_FORMAT_ND)
    assert ready.set_tensor_shape(d, [2**63]) == ACL_ERROR_INVALID_PARAM
    assert ready.get_tensor_desc_dim_v2(d, 0) == (2, ACL_SUCCESS)


@pytest.mark.parametrize(("dims", "count", "size"), [
    ([2**63 - 1], 2**63 - 1, 0),          # count fits size_t, x 4 bytes does not
    ([2**63 - 1, 2], 2**64 - 2, 0),       # count still fits size_t
    ([4, 2**62], 0, 0),                   # count overflows size_t: 0
    ([2**30, 2**30], 2**60, 2**62),       # fits both
    ([3, -1], 0, 0),                      # dynamic dim
    ([], 1, 4),                           # scalar
])
def test_counts_and_sizes_are_size_t_with_overflow_to_zero(ready: ModuleType, dims: list[int],
                                                           count: int, size: int) -> None:
    """Element count and size as aclGetTensorDescElementCount / Size compute them: a product
    that overflows size_t is 0, never a number larger than 2**64."""
    d = ready.create_tensor_desc(ACL_FLOAT, dims, ACL_FORMAT_ND)
    assert d != 0
    assert ready.get_tensor_desc_element_count(d) == count
    assert ready.get_tensor_desc_size(d) == size
