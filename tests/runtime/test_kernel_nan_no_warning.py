"""Device kernels compute inf and nan silently, as an NPU does: garbage inputs to a model or a
single operator give garbage outputs and no numpy RuntimeWarning in the learner's program."""

from __future__ import annotations

import warnings
from types import ModuleType

import numpy as np

from acl_lab import zoo
from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from tests.helpers import ok

ACL_FLOAT = 0
ACL_FORMAT_ND = 2


def _to_device(acl: ModuleType, data: bytes) -> int:
    dev = ok(acl.rt.malloc(len(data), ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy(dev, len(data), acl.util.bytes_to_ptr(data), len(data),
                         ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    return dev


def _from_device(acl: ModuleType, dev: int, size: int) -> np.ndarray:
    out = bytes(size)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), size, dev, size,
                         ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    return np.frombuffer(out, dtype=np.float32)


def test_model_fed_garbage_bytes_warns_nothing(ready: ModuleType) -> None:
    """The zoo MLP fed float64 bytes as float32 (huge, tiny and nan values): execute
    succeeds, the logits are nan, no warning."""
    acl = ready
    model_id = ok(acl.mdl.load_from_file(zoo.path("mlp")))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == ACL_SUCCESS
    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    out_size = acl.mdl.get_output_size_by_index(desc, 0)
    images = np.random.default_rng(0).standard_normal((8, 784))  # float64
    dev_in = _to_device(acl, images.tobytes()[:in_size])
    dev_out = ok(acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY))
    in_ds, out_ds = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(in_ds, acl.create_data_buffer(dev_in, in_size))
    acl.mdl.add_dataset_buffer(out_ds, acl.create_data_buffer(dev_out, out_size))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acl.mdl.execute(model_id, in_ds, out_ds) == ACL_SUCCESS
        logits = _from_device(acl, dev_out, out_size)
    assert np.isnan(logits).any()


def test_operator_overflowing_warns_nothing(ready: ModuleType) -> None:
    """Add of [3e38, -3e38, inf] to itself on a stream: [inf, -inf, inf], no warning."""
    acl = ready
    stream = ok(acl.rt.create_stream())
    desc = acl.create_tensor_desc(ACL_FLOAT, [3], ACL_FORMAT_ND)
    x = _to_device(acl, np.array([3e38, -3e38, np.inf], dtype=np.float32).tobytes())
    y = ok(acl.rt.malloc(12, ACL_MEM_MALLOC_NORMAL_ONLY))
    bufs = [acl.create_data_buffer(p, 12) for p in (x, x, y)]
    attr = acl.op.create_attr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acl.op.execute_v2("Add", [desc, desc], bufs[:2], [desc], bufs[2:], attr,
                                 stream) == ACL_SUCCESS
        assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
    got = _from_device(acl, y, 12)
    assert got.tolist() == [np.inf, -np.inf, np.inf]
