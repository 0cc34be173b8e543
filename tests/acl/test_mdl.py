"""Offline models through ``acl.mdl``: load, describe, datasets, execution and its checks.

Facts come from docs/sources.md sections 1.2 (return shapes), 2.7, 2.8, 5(f)
and 9.1 (load and execute codes). Models are the zoo's mlp (static batch 8), mlp_dynamic (the
same network with dynamic batch 1/2/4/8), lenet5 and tiny_resnet; every result is compared with
an independent forward pass (``load_om(...).run``). tests/runtime/test_dynamic_batch.py covers
dynamic batch in depth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.constants import (
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
    ACL_ERROR_GE_PARAM_INVALID,
    ACL_ERROR_INVALID_MODEL_ID,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_FLOAT,
    ACL_FORMAT_NCHW,
    ACL_FORMAT_ND,
    ACL_INT64,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.om import load_om
from acl_lab.runtime.session import Session
from acl_lab.tracer.schema import TASK_KINDS

BAD_MODEL_ID = 4242
#: An input buffer may be this many bytes short (reference 5(f), GE kDataMemAlignSizeCompare)
SLACK = 64


def ok(result: tuple[Any, ...]) -> Any:
    """The value(s) of a ``(value..., ret)`` tuple, asserting ret is ACL_SUCCESS."""
    *values, ret = result
    assert ret == ACL_SUCCESS, f"ret={ret}"
    return values[0] if len(values) == 1 else tuple(values)


def malloc(acl: ModuleType, size: int) -> int:
    """Device memory of ``size`` bytes."""
    return int(ok(acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)))


def to_device(acl: ModuleType, ptr: int, arr: np.ndarray) -> None:
    """Copy ``arr``'s bytes to device memory at ``ptr``."""
    data = np.ascontiguousarray(arr).tobytes()
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data),
                         ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS


def from_device(acl: ModuleType, ptr: int, nbytes: int, dtype: Any = np.float32) -> np.ndarray:
    """``nbytes`` of device memory at ``ptr`` as a flat array (through malloc_host)."""
    host = ok(acl.rt.malloc_host(nbytes))
    assert acl.rt.memcpy(host, nbytes, ptr, nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    out = np.frombuffer(acl.util.ptr_to_bytes(host, nbytes), dtype=dtype).copy()
    assert acl.rt.free_host(host) == ACL_SUCCESS
    return out


def dataset_of(acl: ModuleType, ptrs_sizes: list[tuple[int, int]]) -> int:
    """A dataset holding one data buffer per ``(pointer, size)``."""
    ds = acl.mdl.create_dataset()
    for ptr, size in ptrs_sizes:
        buf = acl.create_data_buffer(ptr, size)
        assert acl.mdl.add_dataset_buffer(ds, buf) == (ds, ACL_SUCCESS)
    return int(ds)


@dataclass
class Loaded:
    """A loaded zoo model with a desc and datasets of device buffers (as sample 7.1 does)."""

    acl: ModuleType
    path: str
    mid: int
    desc: int
    in_ptrs: list[int]
    out_ptrs: list[int]
    in_ds: int
    out_ds: int

    def in_size(self, i: int = 0) -> int:
        """get_input_size_by_index."""
        return int(self.acl.mdl.get_input_size_by_index(self.desc, i))

    def out_size(self, i: int = 0) -> int:
        """get_output_size_by_index."""
        return int(self.acl.mdl.get_output_size_by_index(self.desc, i))

    def feed(self, x: np.ndarray) -> None:
        """Copy ``x`` into input 0's device buffer."""
        to_device(self.acl, self.in_ptrs[0], x)

    def output(self, nbytes: int | None = None) -> np.ndarray:
        """Output 0 (its first ``nbytes``) as float32."""
        return from_device(self.acl, self.out_ptrs[0], nbytes or self.out_size())

    def execute(self, in_ds: int | None = None, out_ds: int | None = None) -> int:
        """acl.mdl.execute with these (default: the model's own) datasets."""
        return int(self.acl.mdl.execute(self.mid, self.in_ds if in_ds is None else in_ds,
                                        self.out_ds if out_ds is None else out_ds))

    def input_dataset(self, ptr: int, size: int) -> int:
        """A one-buffer input dataset over ``(ptr, size)``."""
        return dataset_of(self.acl, [(ptr, size)])


def load(acl: ModuleType, name: str) -> Loaded:
    """Load zoo model ``name``, fill a desc and build I/O datasets of device buffers."""
    path = zoo.path(name)
    mid = ok(acl.mdl.load_from_file(path))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == ACL_SUCCESS
    ins = [acl.mdl.get_input_size_by_index(desc, i)
           for i in range(acl.mdl.get_num_inputs(desc))]
    outs = [acl.mdl.get_output_size_by_index(desc, i)
            for i in range(acl.mdl.get_num_outputs(desc))]
    in_ptrs, out_ptrs = [malloc(acl, n) for n in ins], [malloc(acl, n) for n in outs]
    return Loaded(acl, path, mid, desc, in_ptrs, out_ptrs,
                  dataset_of(acl, list(zip(in_ptrs, ins, strict=True))),
                  dataset_of(acl, list(zip(out_ptrs, outs, strict=True))))


def sample(path: str, batch: int | None = None, seed: int = 0) -> np.ndarray:
    """A random float32 input for the model at ``path`` (``batch`` rows if dynamic)."""
    om = load_om(path)
    shape = om.input_specs(batch)[0].shape
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def expected(path: str, x: np.ndarray, batch: int | None = None) -> np.ndarray:
    """Output 0 of an independent forward pass of the model file."""
    return load_om(path).run([x], batch=batch)[0].ravel()


@pytest.fixture
def lenet(ready: ModuleType) -> Loaded:
    """lenet5 loaded (static shapes, so the input size checks apply), input filled."""
    m = load(ready, "lenet5")
    m.feed(sample(m.path))
    return m


@pytest.fixture
def mlp(ready: ModuleType) -> Loaded:
    """The dynamic-batch mlp (mlp_dynamic) loaded, with a buffer for every input."""
    return load(ready, "mlp_dynamic")


def diag_kinds(session: Session) -> list[tuple[str, int]]:
    """(kind, level) of every diag in the trace so far."""
    tr = session.trace()
    return [(tr.string(int(k)), int(lv))
            for k, lv in zip(tr.diags["kind"], tr.diags["level"], strict=True)]


# ------------------------------------------------------------------------------ describing

DESCRIPTIONS = {
    "mlp": {"inputs": [("input", [8, 784], ACL_FORMAT_ND, 8 * 784 * 4)],
            "outputs": [(8 * 10 * 4, [8, 10])]},
    "mlp_dynamic": {"inputs": [("input", [-1, 784], ACL_FORMAT_ND, 8 * 784 * 4),
                               ("ascend_mbatch_shape_data", [1], ACL_FORMAT_ND, 8)],
                    "outputs": [(8 * 10 * 4, [8, 10])]},
    "lenet5": {"inputs": [("input", [1, 1, 28, 28], ACL_FORMAT_NCHW, 28 * 28 * 4)],
               "outputs": [(10 * 4, [1, 10])]},
}


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_load_from_file_gives_model_id_and_ret(ready: ModuleType, name: str) -> None:
    """load_from_file returns (model_id, 0) and get_desc fills a desc (ret 0)."""
    mid, ret = ready.mdl.load_from_file(zoo.path(name))
    assert ret == ACL_SUCCESS and isinstance(mid, int)
    desc = ready.mdl.create_desc()
    assert desc != 0 and ready.mdl.get_desc(desc, mid) == ACL_SUCCESS


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_io_counts_and_sizes(ready: ModuleType, name: str) -> None:
    """Input/output counts and byte sizes (the largest gear for mlp_dynamic, whose second
    input is the 8-byte ascend_mbatch_shape_data)."""
    m, want = load(ready, name), DESCRIPTIONS[name]
    assert ready.mdl.get_num_inputs(m.desc) == len(want["inputs"])
    assert ready.mdl.get_num_outputs(m.desc) == len(want["outputs"])
    assert [m.in_size(i) for i in range(len(want["inputs"]))] == [w[3] for w in want["inputs"]]
    assert [m.out_size(i) for i in range(len(want["outputs"]))] == [w[0]
                                                                    for w in want["outputs"]]


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_input_dims_type_format_and_name(ready: ModuleType, name: str) -> None:
    """get_input_dims is ({'name', 'dimCount', 'dims'}, 0); dtype ACL_FLOAT; format; name."""
    m = load(ready, name)
    in_name, dims, fmt, _ = DESCRIPTIONS[name]["inputs"][0]
    assert ready.mdl.get_input_dims(m.desc, 0) == (
        {"name": in_name, "dimCount": len(dims), "dims": dims}, ACL_SUCCESS)
    assert ready.mdl.get_input_data_type(m.desc, 0) == ACL_FLOAT
    assert ready.mdl.get_input_format(m.desc, 0) == fmt
    assert ready.mdl.get_input_name_by_index(m.desc, 0) == in_name
    assert ready.mdl.get_input_index_by_name(m.desc, in_name) == (0, ACL_SUCCESS)


def test_shape_data_input_desc(mlp: Loaded) -> None:
    """mlp_dynamic's ascend_mbatch_shape_data input is int64 [1] in ND, found by name."""
    acl, i = mlp.acl, 1
    assert acl.mdl.get_input_index_by_name(mlp.desc, "ascend_mbatch_shape_data") == (i, 0)
    assert acl.mdl.get_input_name_by_index(mlp.desc, i) == "ascend_mbatch_shape_data"
    assert acl.mdl.get_input_data_type(mlp.desc, i) == ACL_INT64
    assert acl.mdl.get_input_format(mlp.desc, i) == ACL_FORMAT_ND
    assert acl.mdl.get_input_dims(mlp.desc, i) == (
        {"name": "ascend_mbatch_shape_data", "dimCount": 1, "dims": [1]}, ACL_SUCCESS)


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_cur_output_dims(ready: ModuleType, name: str) -> None:
    """get_cur_output_dims gives the concrete output dims (largest gear before any batch)."""
    m = load(ready, name)
    dims, ret = ready.mdl.get_cur_output_dims(m.desc, 0)
    assert ret == ACL_SUCCESS
    assert dims["dims"] == DESCRIPTIONS[name]["outputs"][0][1]
    assert dims["dimCount"] == len(dims["dims"])


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_bad_index_gives_empty_dict_and_error(ready: ModuleType, name: str) -> None:
    """An out-of-range index gives ({}, ret != 0) for the dims getters."""
    m = load(ready, name)
    for getter in (ready.mdl.get_input_dims, ready.mdl.get_output_dims,
                   ready.mdl.get_cur_output_dims):
        dims, ret = getter(m.desc, 7)
        assert dims == {} and ret != ACL_SUCCESS


# ------------------------------------------------------------------------------ datasets


def test_get_dataset_buffer_out_of_range_is_zero(lenet: Loaded) -> None:
    """get_dataset_buffer returns 0 for an index past the end (GE model_om2.cpp)."""
    acl = lenet.acl
    assert acl.mdl.get_dataset_num_buffers(lenet.in_ds) == 1
    assert acl.mdl.get_dataset_buffer(lenet.in_ds, 0) != 0
    assert acl.mdl.get_dataset_buffer(lenet.in_ds, 1) == 0


def test_add_dataset_buffer_returns_dataset_and_ret(ready: ModuleType) -> None:
    """add_dataset_buffer returns the odd (dataset, 0) pair and appends."""
    ds = ready.mdl.create_dataset()
    buf = ready.create_data_buffer(malloc(ready, 64), 64)
    assert ready.mdl.add_dataset_buffer(ds, buf) == (ds, ACL_SUCCESS)
    assert ready.mdl.get_dataset_num_buffers(ds) == 1
    assert ready.mdl.get_dataset_buffer(ds, 0) == buf


def test_destroy_dataset_keeps_buffer_memory(lenet: Loaded) -> None:
    """destroy_dataset frees neither the data buffers nor their memory (a later free is 0)."""
    acl = lenet.acl
    bufs = [acl.mdl.get_dataset_buffer(lenet.in_ds, 0), acl.mdl.get_dataset_buffer(lenet.out_ds, 0)]
    assert acl.mdl.destroy_dataset(lenet.in_ds) == ACL_SUCCESS
    assert acl.mdl.destroy_dataset(lenet.out_ds) == ACL_SUCCESS
    assert [acl.destroy_data_buffer(b) for b in bufs] == [ACL_SUCCESS, ACL_SUCCESS]
    assert [acl.rt.free(p) for p in (*lenet.in_ptrs, *lenet.out_ptrs)] == [ACL_SUCCESS] * 2


# ------------------------------------------------------------------------------ execution


@pytest.mark.parametrize("name", ["mlp", "lenet5", "tiny_resnet"])
def test_execute_matches_forward_pass(ready: ModuleType, name: str) -> None:
    """execute returns 0 and its output equals load_om(path).run on the same input."""
    m = load(ready, name)
    x = sample(m.path)
    m.feed(x)
    assert m.execute() == ACL_SUCCESS
    np.testing.assert_allclose(m.output(), expected(m.path, x), rtol=1e-6, atol=1e-6)


def test_execute_async_then_synchronize(ready: ModuleType) -> None:
    """execute_async on a stream + synchronize_stream gives the forward pass's output."""
    m = load(ready, "tiny_resnet")
    x = sample(m.path, seed=3)
    m.feed(x)
    stream = ok(ready.rt.create_stream())
    assert ready.mdl.execute_async(m.mid, m.in_ds, m.out_ds, stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    np.testing.assert_allclose(m.output(), expected(m.path, x), rtol=1e-6, atol=1e-6)


def test_query_size_and_load_with_mem(ready: ModuleType) -> None:
    """query_size gives (work, weight, 0) with weight > 0; loading into such buffers works."""
    path = zoo.path("lenet5")
    work, weight, ret = ready.mdl.query_size(path)
    assert ret == ACL_SUCCESS and weight > 0 and work >= 0
    work_ptr, weight_ptr = malloc(ready, max(work, 1)), malloc(ready, weight)
    mid = ok(ready.mdl.load_from_file_with_mem(path, work_ptr, work, weight_ptr, weight))
    m = load(ready, "lenet5")
    x = sample(path, seed=5)
    m.feed(x)
    assert ready.mdl.execute(mid, m.in_ds, m.out_ds) == ACL_SUCCESS
    np.testing.assert_allclose(m.output(), expected(path, x), rtol=1e-6, atol=1e-6)


def test_load_from_mem(ready: ModuleType) -> None:
    """load_from_mem over bytes_to_ptr(file bytes) loads a model that executes correctly."""
    m = load(ready, "lenet5")
    data = Path(m.path).read_bytes()
    mid = ok(ready.mdl.load_from_mem(ready.util.bytes_to_ptr(data), len(data)))
    x = sample(m.path, seed=6)
    m.feed(x)
    assert ready.mdl.execute(mid, m.in_ds, m.out_ds) == ACL_SUCCESS
    np.testing.assert_allclose(m.output(), expected(m.path, x), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ bad loads


def test_missing_file_is_145002(lenet: Loaded, tmp_path: Path) -> None:
    """A missing model path gives 145002; the session stays usable."""
    ret = lenet.acl.mdl.load_from_file(str(tmp_path / "nope.om"))[1]
    assert ret == ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID
    assert lenet.execute() == ACL_SUCCESS


def test_garbage_file_is_145006(lenet: Loaded, tmp_path: Path) -> None:
    """A file of garbage bytes is not an OM: 145006; the session stays usable."""
    bad = tmp_path / "garbage.om"
    bad.write_bytes(os.urandom(4096))
    assert lenet.acl.mdl.load_from_file(str(bad))[1] == ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID
    assert lenet.execute() == ACL_SUCCESS


def test_truncated_om_is_145006(lenet: Loaded, tmp_path: Path) -> None:
    """A truncated copy of a zoo .om gives 145006; the session stays usable."""
    bad = tmp_path / "truncated.om"
    data = Path(lenet.path).read_bytes()
    bad.write_bytes(data[:len(data) // 2])
    assert lenet.acl.mdl.load_from_file(str(bad))[1] == ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID
    assert lenet.execute() == ACL_SUCCESS


def test_unknown_model_id(lenet: Loaded) -> None:
    """An unknown id: execute 145003, get_desc and unload 100011; the session stays usable."""
    acl = lenet.acl
    assert acl.mdl.execute(BAD_MODEL_ID, lenet.in_ds, lenet.out_ds) == \
        ACL_ERROR_GE_EXEC_MODEL_ID_INVALID
    assert acl.mdl.get_desc(acl.mdl.create_desc(), BAD_MODEL_ID) == ACL_ERROR_INVALID_MODEL_ID
    assert acl.mdl.unload(BAD_MODEL_ID) == ACL_ERROR_INVALID_MODEL_ID
    assert lenet.execute() == ACL_SUCCESS


# ------------------------------------------------------------------------------ bad executes


def test_null_datasets_are_100000(lenet: Loaded) -> None:
    """A null input or output dataset gives 100000; the session stays usable."""
    assert lenet.acl.mdl.execute(lenet.mid, 0, lenet.out_ds) == ACL_ERROR_INVALID_PARAM
    assert lenet.acl.mdl.execute(lenet.mid, lenet.in_ds, 0) == ACL_ERROR_INVALID_PARAM
    assert lenet.execute() == ACL_SUCCESS


def test_too_few_input_buffers_is_100000(lenet: Loaded) -> None:
    """An input dataset with fewer buffers than model inputs gives 100000."""
    assert lenet.execute(in_ds=lenet.acl.mdl.create_dataset()) == ACL_ERROR_INVALID_PARAM
    assert lenet.execute() == ACL_SUCCESS


def test_input_64_bytes_short_is_accepted(lenet: Loaded) -> None:
    """An input buffer up to 64 bytes short of the model input is accepted."""
    ds = lenet.input_dataset(lenet.in_ptrs[0], lenet.in_size() - SLACK)
    assert lenet.execute(in_ds=ds) == ACL_SUCCESS


def test_input_65_bytes_short_is_145000(lenet: Loaded) -> None:
    """An input buffer more than 64 bytes short gives 145000; the session stays usable."""
    for short in (SLACK + 1, SLACK + 4, lenet.in_size() // 2):
        ds = lenet.input_dataset(lenet.in_ptrs[0], lenet.in_size() - short)
        assert lenet.execute(in_ds=ds) == ACL_ERROR_GE_PARAM_INVALID
    assert lenet.execute() == ACL_SUCCESS


def test_oversized_input_warns(lenet: Loaded, session: Session) -> None:
    """A larger input buffer executes (0) with an "oversized_input" warning diag."""
    size = lenet.in_size() + 256
    ptr = malloc(lenet.acl, size)
    to_device(lenet.acl, ptr, np.zeros(size // 4, np.float32))
    assert lenet.execute(in_ds=lenet.input_dataset(ptr, size)) == ACL_SUCCESS
    assert ("oversized_input", 1) in diag_kinds(session)
    assert lenet.execute() == ACL_SUCCESS


def test_host_pointer_input_is_100000(lenet: Loaded) -> None:
    """A malloc_host pointer in the input dataset gives 100000 (I/O must be device memory)."""
    acl = lenet.acl
    host = ok(acl.rt.malloc_host(lenet.in_size()))
    assert lenet.execute(in_ds=lenet.input_dataset(host, lenet.in_size())) == \
        ACL_ERROR_INVALID_PARAM
    out = dataset_of(acl, [(ok(acl.rt.malloc_host(lenet.out_size())), lenet.out_size())])
    assert lenet.execute(out_ds=out) == ACL_ERROR_INVALID_PARAM
    assert lenet.execute() == ACL_SUCCESS


def test_freed_device_pointer_fails(lenet: Loaded) -> None:
    """A freed device pointer in the input dataset gives a non-zero code."""
    ptr = malloc(lenet.acl, lenet.in_size())
    assert lenet.acl.rt.free(ptr) == ACL_SUCCESS
    assert lenet.execute(in_ds=lenet.input_dataset(ptr, lenet.in_size())) != ACL_SUCCESS
    assert lenet.execute() == ACL_SUCCESS


def test_execute_in_another_context_is_107004(lenet: Loaded) -> None:
    """Executing in a context other than the loading one gives 107004."""
    acl = lenet.acl
    home = ok(acl.rt.get_context())
    other = ok(acl.rt.create_context(0))
    assert lenet.execute() == ACL_ERROR_RT_MODEL_CONTEXT
    assert acl.rt.set_context(home) == ACL_SUCCESS
    assert lenet.execute() == ACL_SUCCESS
    assert acl.rt.destroy_context(other) == ACL_SUCCESS


def test_unload_then_execute_is_145003(lenet: Loaded) -> None:
    """After unload, executing the model id gives 145003."""
    assert lenet.acl.mdl.unload(lenet.mid) == ACL_SUCCESS
    assert lenet.execute() == ACL_ERROR_GE_EXEC_MODEL_ID_INVALID


# ------------------------------------------------------------------------------ dynamic batch


def test_get_dynamic_batch(mlp: Loaded) -> None:
    """get_dynamic_batch gives ({'batchCount': 4, 'batch': [1, 2, 4, 8]}, 0) for the mlp."""
    assert mlp.acl.mdl.get_dynamic_batch(mlp.desc) == (
        {"batchCount": 4, "batch": [1, 2, 4, 8]}, ACL_SUCCESS)


def test_dynamic_batch_execute_matches_forward_pass(mlp: Loaded) -> None:
    """With gear 2 set at the shape-data input's index, a batch-2 input gives the forward
    pass's batch-2 output."""
    x = sample(mlp.path, batch=2, seed=9)
    mlp.feed(x)
    index = ok(mlp.acl.mdl.get_input_index_by_name(mlp.desc, "ascend_mbatch_shape_data"))
    assert mlp.acl.mdl.set_dynamic_batch_size(mlp.mid, mlp.in_ds, index, 2) == ACL_SUCCESS
    assert mlp.execute() == ACL_SUCCESS
    want = expected(mlp.path, x, batch=2)
    np.testing.assert_allclose(mlp.output(want.nbytes), want, rtol=1e-6, atol=1e-6)


def test_batch_that_is_not_a_gear_is_145013(mlp: Loaded) -> None:
    """A batch size that is not one of the gears gives 145013."""
    assert mlp.acl.mdl.set_dynamic_batch_size(mlp.mid, mlp.in_ds, 1, 3) == \
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID


def test_dynamic_batch_on_static_model_is_145013(lenet: Loaded) -> None:
    """set_dynamic_batch_size on the static lenet5 gives 145013, as GE's gear check does for
    a model with no gears (IsDynamicBatchSizeMatchModel on an empty gear list)."""
    assert lenet.acl.mdl.set_dynamic_batch_size(lenet.mid, lenet.in_ds, 0, 1) == \
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID


# ------------------------------------------------------------------------------ concurrency, trace


def test_same_model_on_two_streams_is_reported(lenet: Loaded, session: Session) -> None:
    """One model executed on two streams back to back records model_concurrent_use (level 2)."""
    acl = lenet.acl
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    assert acl.mdl.execute_async(lenet.mid, lenet.in_ds, lenet.out_ds, s1) == ACL_SUCCESS
    assert acl.mdl.execute_async(lenet.mid, lenet.in_ds, lenet.out_ds, s2) == ACL_SUCCESS
    assert ("model_concurrent_use", 2) in diag_kinds(session)
    assert acl.rt.synchronize_stream(s1) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(s2) == ACL_SUCCESS


def test_execute_is_a_model_task_in_the_trace(lenet: Loaded, session: Session) -> None:
    """An execute is a "model" task with start < end that reads the input allocation and
    writes the output allocation."""
    assert lenet.execute() == ACL_SUCCESS
    tr = session.trace()
    tasks = [t for t in range(tr.tasks.rows) if int(tr.tasks["kind"][t]) == 6]
    assert TASK_KINDS[6] == "model" and len(tasks) == 1
    t = tasks[0]
    assert 0 <= tr.tasks["start_ns"][t] < tr.tasks["end_ns"][t]
    acc = tr.accesses
    addr = {int(tr.allocs["addr"][a]): a for a in range(tr.allocs.rows)}
    touched = {(int(acc["alloc"][i]), int(acc["write"][i]))
               for i in range(acc.rows) if int(acc["task"][i]) == t}
    assert (addr[lenet.in_ptrs[0]], 0) in touched
    assert (addr[lenet.out_ptrs[0]], 1) in touched
