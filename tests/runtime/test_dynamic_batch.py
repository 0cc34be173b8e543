"""Dynamic batch as real ACL does it: the extra input, the chosen gear, the buffer sizes.

A dynamic-batch model (``atc --dynamic_batch_size``; the zoo's ``mlp_dynamic``, gears 1/2/4/8)
has one more input than its graph, ``ascend_mbatch_shape_data`` (``ACL_DYNAMIC_TENSOR_NAME``):
int64 [1], ND, 8 bytes, last (the Ascend samples' dynamic-batch yolov3 log prints
``name[ascend_mbatch_shape_data], inputSize[8], format[2], dataType[9]``). Samples allocate a
buffer of ``get_input_size_by_index`` bytes for every input and pass the shape-data input's
index to ``set_dynamic_batch_size``, which writes the gear there (GE
``GeExecutor::SetDynamicBatchSize``). ``get_cur_output_dims`` gives the outputs of the model's
current gear (``aclmdlGetCurOutputDims``: the largest before one is set). Data buffers sized
for the largest gear are normal at every gear.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save

from acl_lab import atc, zoo
from acl_lab.constants import (
    ACL_DYNAMIC_TENSOR_NAME,
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
    ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
    ACL_ERROR_GE_PARAM_INVALID,
    ACL_ERROR_INVALID_PARAM,
    ACL_FORMAT_ND,
    ACL_INT64,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.om import load_om
from acl_lab.runtime.session import Session
from tests.helpers import ok

GEARS = [1, 2, 4, 8]
FEATURES, CLASSES = 784, 10
ROW = FEATURES * 4  # bytes of one float32 sample
SLACK = 64  # GE kDataMemAlignSizeCompare


def malloc(acl: ModuleType, size: int) -> int:
    """Device memory of ``size`` bytes."""
    return int(ok(acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)))


def to_device(acl: ModuleType, ptr: int, data: bytes) -> None:
    """Copy ``data`` to device memory at ``ptr``."""
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data),
                         ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS


def from_device(acl: ModuleType, ptr: int, nbytes: int) -> bytes:
    """``nbytes`` of device memory at ``ptr``."""
    host = bytes(nbytes)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(host), nbytes, ptr, nbytes,
                         ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    return host


def dataset(acl: ModuleType, bufs: list[tuple[int, int]]) -> int:
    """A dataset with one data buffer per ``(pointer, size)``."""
    ds = acl.mdl.create_dataset()
    for ptr, size in bufs:
        assert acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))[1] == 0
    return int(ds)


def diag_kinds(session: Session) -> list[str]:
    """The kind of every diag recorded so far."""
    tr = session.trace()
    return [tr.string(int(k)) for k in tr.diags["kind"]]


def size_findings(session: Session) -> list[tuple[str, str]]:
    """(severity, message) of the size_mismatch findings of the trace so far."""
    return [(f.severity, f.message) for f in session.trace().findings()
            if f.kind == "size_mismatch"]


@dataclass
class Dyn:
    """mlp_dynamic loaded the way samples do it: a desc, a device buffer of
    get_input_size_by_index / get_output_size_by_index bytes per input and output."""

    acl: ModuleType
    path: str
    mid: int
    desc: int
    shape_index: int
    in_ptrs: list[int]
    in_sizes: list[int]
    out_ptr: int
    out_size: int
    in_ds: int
    out_ds: int

    def feed(self, x: np.ndarray, ptr: int | None = None) -> None:
        """Copy ``x`` (float32) into the data input's buffer."""
        to_device(self.acl, self.in_ptrs[0] if ptr is None else ptr,
                  np.ascontiguousarray(x, np.float32).tobytes())

    def set_batch(self, batch: int, ds: int | None = None) -> int:
        """set_dynamic_batch_size at the shape-data input's index."""
        return int(self.acl.mdl.set_dynamic_batch_size(
            self.mid, self.in_ds if ds is None else ds, self.shape_index, batch))

    def execute(self, in_ds: int | None = None) -> int:
        """acl.mdl.execute with ``in_ds`` (default: the full input dataset)."""
        return int(self.acl.mdl.execute(self.mid, self.in_ds if in_ds is None else in_ds,
                                        self.out_ds))

    def logits(self, batch: int) -> np.ndarray:
        """The first ``batch`` rows of the output buffer."""
        raw = from_device(self.acl, self.out_ptr, batch * CLASSES * 4)
        return np.frombuffer(raw, np.float32).reshape(batch, CLASSES)

    def cur_dims(self) -> list[int]:
        """get_cur_output_dims(desc, 0)['dims']."""
        return list(ok(self.acl.mdl.get_cur_output_dims(self.desc, 0))["dims"])

    def shape_value(self) -> int:
        """The int64 in the shape-data buffer."""
        raw = from_device(self.acl, self.in_ptrs[self.shape_index], 8)
        return int(np.frombuffer(raw, np.int64)[0])


def load(acl: ModuleType, name: str = "mlp_dynamic") -> Dyn:
    """Load a zoo model and build its datasets over device buffers (sample 7.1's flow)."""
    path = zoo.path(name)
    mid = int(ok(acl.mdl.load_from_file(path)))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == ACL_SUCCESS
    n = acl.mdl.get_num_inputs(desc)
    sizes = [int(acl.mdl.get_input_size_by_index(desc, i)) for i in range(n)]
    ptrs = [malloc(acl, size) for size in sizes]
    index, ret = acl.mdl.get_input_index_by_name(desc, ACL_DYNAMIC_TENSOR_NAME)
    out_size = int(acl.mdl.get_output_size_by_index(desc, 0))
    out_ptr = malloc(acl, out_size)
    return Dyn(acl, path, mid, desc, int(index) if ret == ACL_SUCCESS else -1, ptrs, sizes,
               out_ptr, out_size, dataset(acl, list(zip(ptrs, sizes, strict=True))),
               dataset(acl, [(out_ptr, out_size)]))


def forward(path: str, x: np.ndarray, batch: int) -> np.ndarray:
    """The model file's own forward pass at ``batch`` (independent of acl.mdl)."""
    return load_om(path).run([x], batch=batch)[0]


def rows(batch: int, seed: int = 0) -> np.ndarray:
    """``batch`` random float32 samples."""
    return np.random.default_rng(seed).standard_normal((batch, FEATURES)).astype(np.float32)


@pytest.fixture
def dyn(ready: ModuleType) -> Iterator[Dyn]:
    """mlp_dynamic loaded with a buffer for each of its inputs."""
    yield load(ready)


# ------------------------------------------------------------------------------ the extra input


def test_the_shape_data_input_is_described_as_ge_reports_it(dyn: Dyn) -> None:
    """Two inputs; the second is ascend_mbatch_shape_data: int64, ND, dims [1], 8 bytes."""
    acl, d = dyn.acl, dyn.desc
    assert acl.mdl.get_num_inputs(d) == 2 and dyn.shape_index == 1
    assert acl.mdl.get_input_name_by_index(d, 1) == ACL_DYNAMIC_TENSOR_NAME
    assert acl.mdl.get_input_size_by_index(d, 1) == 8
    assert acl.mdl.get_input_data_type(d, 1) == ACL_INT64
    assert acl.mdl.get_input_format(d, 1) == ACL_FORMAT_ND
    assert acl.mdl.get_input_dims(d, 1) == (
        {"name": ACL_DYNAMIC_TENSOR_NAME, "dimCount": 1, "dims": [1]}, ACL_SUCCESS)
    assert dyn.in_sizes == [max(GEARS) * ROW, 8]  # the data input is the largest gear's size
    dims, ret = acl.mdl.get_input_dims(d, 0)
    assert ret == ACL_SUCCESS and dims["dims"] == [-1, FEATURES]


@pytest.mark.parametrize("name", ["mlp", "lenet5"])
def test_static_models_have_no_shape_data_input(ready: ModuleType, name: str) -> None:
    """A static model keeps its inputs; the name lookup fails (how samples tell them apart)."""
    m = load(ready, name)
    assert ready.mdl.get_num_inputs(m.desc) == len(load_om(m.path).inputs) == 1
    assert m.shape_index == -1
    assert ready.mdl.get_input_index_by_name(m.desc, ACL_DYNAMIC_TENSOR_NAME)[1] == \
        ACL_ERROR_INVALID_PARAM


def test_set_writes_the_gear_into_the_shape_data_buffer(dyn: Dyn) -> None:
    """set_dynamic_batch_size puts the batch, as int64, into the shape-data buffer."""
    for batch in (4, 1):
        assert dyn.set_batch(batch) == ACL_SUCCESS
        assert dyn.shape_value() == batch


def test_a_4_byte_shape_buffer_gets_a_uint32_and_a_smaller_one_is_145012(dyn: Dyn) -> None:
    """GE writes 4 bytes into a 4..7-byte buffer and refuses one under 4 bytes (145012)."""
    acl = dyn.acl
    ptr = malloc(acl, 8)
    to_device(acl, ptr, bytes([0xAA] * 8))
    four = dataset(acl, [(dyn.in_ptrs[0], dyn.in_sizes[0]), (ptr, 4)])
    assert dyn.set_batch(2, four) == ACL_SUCCESS
    assert from_device(acl, ptr, 8) == (2).to_bytes(4, "little") + bytes([0xAA] * 4)
    three = dataset(acl, [(dyn.in_ptrs[0], dyn.in_sizes[0]), (ptr, 3)])
    assert dyn.set_batch(2, three) == ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID


def test_the_index_must_be_the_shape_data_inputs(dyn: Dyn) -> None:
    """The data input's index, an index with no buffer and batch 0 give 100000 and write
    nothing; the right index works afterwards."""
    acl = dyn.acl
    x = rows(8, seed=1)
    dyn.feed(x)
    for index, batch in ((0, 2), (2, 2), (dyn.shape_index, 0)):
        assert acl.mdl.set_dynamic_batch_size(dyn.mid, dyn.in_ds, index, batch) == \
            ACL_ERROR_INVALID_PARAM
    assert from_device(acl, dyn.in_ptrs[0], dyn.in_sizes[0]) == x.tobytes()  # not corrupted
    assert dyn.execute() == ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID  # still no gear set
    assert dyn.set_batch(8) == ACL_SUCCESS and dyn.execute() == ACL_SUCCESS
    np.testing.assert_allclose(dyn.logits(8), forward(dyn.path, x, 8), rtol=1e-6, atol=1e-6)


def test_wrong_index_message_names_the_shape_data_input(dyn: Dyn) -> None:
    """The 100000 for the data input's index says which index to pass instead."""
    assert dyn.acl.mdl.set_dynamic_batch_size(dyn.mid, dyn.in_ds, 0, 2) == \
        ACL_ERROR_INVALID_PARAM
    msg = dyn.acl.get_recent_err_msg()
    assert ACL_DYNAMIC_TENSOR_NAME in msg and "pass 1" in msg


def test_static_model_and_bad_gear_are_145013(ready: ModuleType, dyn: Dyn) -> None:
    """A batch that is not a gear, or any batch on a static model, gives 145013 (GE's gear
    check: IsDynamicBatchSizeMatchModel fails on an empty gear list too)."""
    assert dyn.set_batch(3) == ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    lenet = load(ready, "lenet5")
    assert ready.mdl.set_dynamic_batch_size(lenet.mid, lenet.in_ds, 0, 1) == \
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID


def test_execute_without_a_gear_is_145013(dyn: Dyn) -> None:
    """Executing a dynamic-batch model with a dataset whose gear was never set fails."""
    assert dyn.execute() == ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    assert dyn.set_batch(1) == ACL_SUCCESS and dyn.execute() == ACL_SUCCESS


def test_execute_without_the_shape_data_buffer_is_100000(dyn: Dyn) -> None:
    """A dataset holding only the data buffer is one buffer short: 100000, with a message
    that names the missing input."""
    acl = dyn.acl
    only_data = dataset(acl, [(dyn.in_ptrs[0], dyn.in_sizes[0])])
    assert dyn.execute(only_data) == ACL_ERROR_INVALID_PARAM
    assert ACL_DYNAMIC_TENSOR_NAME in acl.get_recent_err_msg()
    assert acl.mdl.set_dynamic_batch_size(dyn.mid, only_data, 1, 2) == ACL_ERROR_INVALID_PARAM


def test_each_dataset_runs_at_its_own_gear(dyn: Dyn) -> None:
    """Two input datasets with gears 2 and 4 each give their forward pass."""
    acl = dyn.acl
    other = [malloc(acl, size) for size in dyn.in_sizes]
    ds4 = dataset(acl, list(zip(other, dyn.in_sizes, strict=True)))
    x2, x4 = rows(2, seed=2), rows(4, seed=4)
    dyn.feed(x2)
    dyn.feed(x4, other[0])
    assert dyn.set_batch(2) == ACL_SUCCESS
    assert dyn.set_batch(4, ds4) == ACL_SUCCESS
    assert dyn.execute() == ACL_SUCCESS
    np.testing.assert_allclose(dyn.logits(2), forward(dyn.path, x2, 2), rtol=1e-6, atol=1e-6)
    assert dyn.execute(ds4) == ACL_SUCCESS
    np.testing.assert_allclose(dyn.logits(4), forward(dyn.path, x4, 4), rtol=1e-6, atol=1e-6)


def test_execute_async_at_a_gear(dyn: Dyn) -> None:
    """execute_async after set_dynamic_batch_size, then synchronize: the gear's output."""
    acl = dyn.acl
    x = rows(2, seed=5)
    dyn.feed(x)
    stream = ok(acl.rt.create_stream())
    assert dyn.set_batch(2) == ACL_SUCCESS
    assert acl.mdl.execute_async(dyn.mid, dyn.in_ds, dyn.out_ds, stream) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
    np.testing.assert_allclose(dyn.logits(2), forward(dyn.path, x, 2), rtol=1e-6, atol=1e-6)


def test_an_overwritten_shape_data_buffer_fails_the_model_task(dyn: Dyn) -> None:
    """If the shape-data buffer no longer holds the dataset's gear when the model starts, the
    model task fails (507015) instead of running a gear the host did not prepare."""
    acl = dyn.acl
    assert dyn.set_batch(2) == ACL_SUCCESS
    to_device(acl, dyn.in_ptrs[dyn.shape_index], np.int64(4).tobytes())
    ret = dyn.execute()
    assert ret == 507015
    assert ACL_DYNAMIC_TENSOR_NAME in acl.get_recent_err_msg()


def test_static_model_executes_as_before(ready: ModuleType, session: Session) -> None:
    """The static mlp: one input, no gear needed, its batch-8 output, no warnings."""
    m = load(ready, "mlp")
    x = rows(8, seed=6)
    to_device(ready, m.in_ptrs[0], x.tobytes())
    assert m.execute() == ACL_SUCCESS
    np.testing.assert_allclose(m.logits(8), load_om(m.path).run([x])[0], rtol=1e-6, atol=1e-6)
    assert "oversized_input" not in diag_kinds(session)


# ------------------------------------------------------------------------------ current dims


def test_cur_output_dims_follow_the_gear(dyn: Dyn) -> None:
    """Largest gear before any set; then the gear of the last set_dynamic_batch_size, with
    or without an execution; get_output_dims keeps the largest gear."""
    assert dyn.cur_dims() == [max(GEARS), CLASSES]
    for batch in (1, 4, 2):
        x = rows(batch, seed=batch)
        dyn.feed(x)
        assert dyn.set_batch(batch) == ACL_SUCCESS
        assert dyn.cur_dims() == [batch, CLASSES]
        assert dyn.execute() == ACL_SUCCESS
        assert dyn.cur_dims() == [batch, CLASSES]
        got = dyn.logits(batch).reshape(dyn.cur_dims())
        np.testing.assert_allclose(got, forward(dyn.path, x, batch), rtol=1e-6, atol=1e-6)
    dims, ret = dyn.acl.mdl.get_output_dims(dyn.desc, 0)
    assert ret == ACL_SUCCESS and dims["dims"] == [max(GEARS), CLASSES]


def test_a_failed_set_keeps_the_current_gear(dyn: Dyn) -> None:
    """A rejected batch leaves the model's current gear as it was."""
    assert dyn.set_batch(2) == ACL_SUCCESS
    assert dyn.set_batch(3) == ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    assert dyn.cur_dims() == [2, CLASSES]


def test_cur_output_dims_of_a_second_desc(dyn: Dyn) -> None:
    """The current gear belongs to the model: another desc of it sees the same dims."""
    acl = dyn.acl
    assert dyn.set_batch(4) == ACL_SUCCESS
    other = acl.mdl.create_desc()
    assert acl.mdl.get_desc(other, dyn.mid) == ACL_SUCCESS
    assert ok(acl.mdl.get_cur_output_dims(other, 0))["dims"] == [4, CLASSES]


# ------------------------------------------------------------------------------ buffer sizes


@pytest.mark.parametrize("batch", GEARS)
def test_largest_gear_buffers_give_no_warning(dyn: Dyn, session: Session, batch: int) -> None:
    """Buffers of get_input_size_by_index bytes (the largest gear) at any gear: no
    oversized_input diag and no size_mismatch finding."""
    dyn.feed(rows(batch))
    assert dyn.set_batch(batch) == ACL_SUCCESS
    assert dyn.execute() == ACL_SUCCESS
    assert "oversized_input" not in diag_kinds(session)
    assert size_findings(session) == []


def test_a_buffer_larger_than_the_largest_gear_warns(dyn: Dyn, session: Session) -> None:
    """More than the largest gear's size is still an oversized_input warning and a
    size_mismatch warning finding."""
    acl = dyn.acl
    size = dyn.in_sizes[0] + ROW
    ptr = malloc(acl, size)
    to_device(acl, ptr, bytes(size))
    big = dataset(acl, [(ptr, size), (dyn.in_ptrs[1], dyn.in_sizes[1])])
    assert dyn.set_batch(1, big) == ACL_SUCCESS
    assert dyn.execute(big) == ACL_SUCCESS
    assert diag_kinds(session).count("oversized_input") == 1
    found = size_findings(session)
    assert [sev for sev, _ in found] == ["warning"]
    assert str(dyn.in_sizes[0]) in found[0][1]


def test_a_buffer_smaller_than_the_gear_needs_is_145000(dyn: Dyn) -> None:
    """At gear 2 a buffer more than 64 bytes short of two samples is 145000; up to 64
    bytes short is accepted, as for a static model."""
    acl = dyn.acl
    need = 2 * ROW
    for size, want in ((ROW, ACL_ERROR_GE_PARAM_INVALID),
                       (need - SLACK - 4, ACL_ERROR_GE_PARAM_INVALID),
                       (need - SLACK, ACL_SUCCESS), (need, ACL_SUCCESS)):
        ds = dataset(acl, [(dyn.in_ptrs[0], size), (dyn.in_ptrs[1], dyn.in_sizes[1])])
        assert dyn.set_batch(2, ds) == ACL_SUCCESS
        assert dyn.execute(ds) == want, size


# ------------------------------------------------------------------------------ atc


def _onnx_mlp(path: Path, input_name: str) -> Path:
    rng = np.random.default_rng(11)
    w = numpy_helper.from_array(rng.standard_normal((6, 3)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", [input_name, "W"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["N", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    save(model, str(path))
    return path


def test_atc_dynamic_batch_model_gets_the_shape_data_input(
        tmp_path: Path, ready: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """atc --dynamic_batch_size gives a model whose desc lists x, then the shape data."""
    src = _onnx_mlp(tmp_path / "m.onnx", "x")
    rc = atc.main([f"--model={src}", "--framework=5", f"--output={tmp_path / 'm'}",
                   "--soc_version=Ascend310P3", "--input_shape=x:-1,6",
                   "--dynamic_batch_size=1,2", "--input_format=ND"])
    assert rc == 0, capsys.readouterr().err
    om = load_om(tmp_path / "m.om")
    assert [d.name for d in om.inputs] == ["x"]
    assert [d.name for d in om.acl_inputs] == ["x", ACL_DYNAMIC_TENSOR_NAME]
    assert ACL_DYNAMIC_TENSOR_NAME in om.describe()
    mid = ok(ready.mdl.load_from_file(str(tmp_path / "m.om")))
    desc = ready.mdl.create_desc()
    assert ready.mdl.get_desc(desc, mid) == ACL_SUCCESS
    assert ready.mdl.get_num_inputs(desc) == 2
    assert ready.mdl.get_input_index_by_name(desc, ACL_DYNAMIC_TENSOR_NAME) == (1, 0)
    assert ready.mdl.get_input_size_by_index(desc, 0) == 2 * 6 * 4


def test_atc_rejects_an_input_named_like_the_shape_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A source input called ascend_mbatch_shape_data cannot get dynamic batch."""
    src = _onnx_mlp(tmp_path / "m.onnx", ACL_DYNAMIC_TENSOR_NAME)
    rc = atc.main([f"--model={src}", "--framework=5", f"--output={tmp_path / 'm'}",
                   "--soc_version=Ascend310P3",
                   f"--input_shape={ACL_DYNAMIC_TENSOR_NAME}:-1,6",
                   "--dynamic_batch_size=1,2", "--input_format=ND"])
    assert rc == 255
    assert ACL_DYNAMIC_TENSOR_NAME in capsys.readouterr().err
    assert not (tmp_path / "m.om").exists()
