"""Pitfall and resource findings: every kind triggered by a minimal program, and its fixed twin.

Kinds: ``leak`` (every object kind, loaded models, aclnn executors, error paths),
``destroy_order``, ``size_mismatch``, ``context_not_set``, ``wrong_context``,
``pageable_async_copy`` and ``misaligned_host_buffer``. The exercise 04 scenarios (the four
buffer pitfalls) are here as broken program + fixed twin; a fixed twin has no findings at all.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import Finding
from acl_lab.tracer.checks.pitfalls import CHECKS as PITFALL_CHECKS
from tests.helpers import compile_singleop

from .programs import FOOTER, HEADER, Run, run_source

PRELUDE = """\
import threading

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_FLOAT = 0
ACL_INT32 = 3
ACL_FORMAT_ND = 2
"""


def run_program(tmp_path: Path, body: str, **subst: str) -> Run:
    """Write PRELUDE + ``body`` (``{name}`` replaced from ``subst``), run it, check it.

    Lines ending in ``# <- name`` are recorded in ``marks`` by name.
    """
    text = textwrap.dedent(body)
    for k, v in subst.items():
        text = text.replace("{" + k + "}", v)
    return run_source(tmp_path, PRELUDE + text)


def line_of(run: Run, text: str) -> int:
    """The first line of the program containing ``text``."""
    lines = run.path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def describe(findings: list[Finding]) -> str:
    """One line per finding, for assertion messages."""
    return "\n".join(str(f) for f in findings) or "(no findings)"


def only(run: Run, mark: str, kind: str) -> Finding:
    """The single finding of ``kind`` at ``mark``, asserting there is no other finding."""
    found = run.at(mark, kind)
    assert len(found) == 1 and len(run.findings) == 1, describe(run.findings)
    return found[0]


def clean(run: Run) -> None:
    """A fixed twin: no findings at all."""
    assert run.findings == [], describe(run.findings)


@pytest.fixture(scope="module")
def mlp() -> str:
    """The zoo's MLP (input float32[8, 784], output float32[8, 10])."""
    return zoo.path("mlp")


# =========================================================================== leaks of objects
OBJECTS = HEADER + """
model_id, ret = acl.mdl.load_from_file("{mlp}")
assert ret == 0
desc = acl.mdl.create_desc()  # <- model_desc
assert acl.mdl.get_desc(desc, model_id) == 0
ds = acl.mdl.create_dataset()  # <- dataset
dev, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
buf = acl.create_data_buffer(dev, 64)  # <- data_buffer
assert acl.mdl.add_dataset_buffer(ds, buf)[1] == 0
td = acl.create_tensor_desc(ACL_INT32, [8, 16], ACL_FORMAT_ND)  # <- tensor_desc
attr = acl.op.create_attr()  # <- op_attr
assert acl.op.set_model_dir("{ops}") == 0
handle, ret = acl.op.create_handle("Add", [td, td], [td], attr)  # <- op_handle
assert ret == 0
chan = acl.media.dvpp_create_channel_desc()  # <- channel_desc
assert acl.media.dvpp_create_channel(chan) == 0  # <- channel
pic = acl.media.dvpp_create_pic_desc()  # <- pic_desc
resize = acl.media.dvpp_create_resize_config()  # <- resize_config
tensor = acl_lab.aclnn.create_tensor([4, 4], ACL_FLOAT, dev)  # <- aclnn_tensor
scalar = acl_lab.aclnn.create_scalar(1.0, ACL_FLOAT)  # <- aclnn_scalar
if RELEASE:
    acl_lab.aclnn.destroy_scalar(scalar)
    acl_lab.aclnn.destroy_tensor(tensor)
    acl.media.dvpp_destroy_resize_config(resize)
    acl.media.dvpp_destroy_pic_desc(pic)
    acl.media.dvpp_destroy_channel(chan)
    acl.media.dvpp_destroy_channel_desc(chan)
    acl.op.destroy_handle(handle)
    acl.op.destroy_attr(attr)
    acl.destroy_tensor_desc(td)
    acl.destroy_data_buffer(buf)
    acl.mdl.destroy_dataset(ds)
    acl.mdl.destroy_desc(desc)
assert acl.rt.free(dev) == 0
assert acl.mdl.unload(model_id) == 0
""" + FOOTER

OBJECT_FIXES = {
    "model_desc": "acl.mdl.destroy_desc", "dataset": "acl.mdl.destroy_dataset",
    "data_buffer": "acl.destroy_data_buffer", "tensor_desc": "acl.destroy_tensor_desc",
    "op_attr": "acl.op.destroy_attr", "op_handle": "acl.op.destroy_handle",
    "channel_desc": "acl.media.dvpp_destroy_channel_desc",
    "channel": "acl.media.dvpp_destroy_channel", "pic_desc": "acl.media.dvpp_destroy_pic_desc",
    "resize_config": "acl.media.dvpp_destroy_resize_config",
    "aclnn_tensor": "acl_lab.aclnn.destroy_tensor",
    "aclnn_scalar": "acl_lab.aclnn.destroy_scalar",
}


def test_every_object_kind_never_destroyed_is_a_leak_at_its_line(tmp_path: Path,
                                                                 mlp: str) -> None:
    """Model descs, datasets, data buffers, tensor descs, op attrs and handles, DVPP objects
    and aclnn tensors/scalars never destroyed: one leak each at the creating line, naming
    the fix."""
    run = run_program(tmp_path, "import acl_lab.aclnn\nRELEASE = False\n" + OBJECTS, mlp=mlp,
                      ops=_add_models(tmp_path))
    for mark, fix in OBJECT_FIXES.items():
        found = run.at(mark, "leak")
        assert len(found) == 1, (mark, describe(run.findings))
        assert fix in found[0].message, (mark, found[0].message)
        assert "never destroyed" in found[0].message
    assert len(run.findings) == len(OBJECT_FIXES), describe(run.findings)


def test_every_object_kind_destroyed_is_clean(tmp_path: Path, mlp: str) -> None:
    """The same program releasing everything has no findings."""
    clean(run_program(tmp_path, "import acl_lab.aclnn\nRELEASE = True\n" + OBJECTS, mlp=mlp,
                      ops=_add_models(tmp_path)))


def _add_models(tmp_path: Path) -> str:
    """The compiled Add single-op model the op handle of OBJECTS needs."""
    i32 = ([8, 16], "int32")
    return str(compile_singleop(tmp_path / "ops", "Add", [i32, i32], [i32]))


def test_objects_leaked_in_a_loop_are_one_finding_with_a_count(tmp_path: Path) -> None:
    """Five data buffers from one line: one leak with the count."""
    run = run_program(tmp_path, HEADER + """
dev, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
for i in range(5):
    buf = acl.create_data_buffer(dev, 64)  # <- buf
assert acl.rt.free(dev) == 0
""" + FOOTER)
    f = only(run, "buf", "leak")
    assert "5 data buffers" in f.message
    assert len(f.ids["objects"]) == 5


# =========================================================================== loaded models
def test_model_never_unloaded_is_one_leak_at_the_load(tmp_path: Path, mlp: str) -> None:
    """A loaded model never unloaded: one leak at load_from_file naming unload and the bytes
    it holds; its weight/work memory is not reported again as a memory leak."""
    run = run_program(tmp_path, HEADER + """
model_id, ret = acl.mdl.load_from_file("{mlp}")  # <- load
assert ret == 0
""" + FOOTER, mlp=mlp)
    f = only(run, "load", "leak")
    assert "never unloaded" in f.message and "acl.mdl.unload" in f.message
    assert "reset_device" in f.message
    assert re.search(r"\d+(\.\d)? (KiB|MiB|bytes)", f.message)


def test_model_unloaded_is_clean(tmp_path: Path, mlp: str) -> None:
    """Load + unload: no findings."""
    clean(run_program(tmp_path, HEADER + """
model_id, ret = acl.mdl.load_from_file("{mlp}")
assert ret == 0
assert acl.mdl.unload(model_id) == 0
""" + FOOTER, mlp=mlp))


# =========================================================================== aclnn executors
ACLNN = HEADER + """
import acl_lab.aclnn as aclnn

x, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
assert acl.rt.memset(x, 64, 0, 64) == 0
out, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
tx = aclnn.create_tensor([16], ACL_FLOAT, x)
to = aclnn.create_tensor([16], ACL_FLOAT, out)
one = aclnn.create_scalar(1.0, ACL_FLOAT)
ws, once, ret = aclnn.add_get_workspace_size(tx, tx, one, to)
assert ret == 0 and ws == 0
assert aclnn.add(0, 0, once, stream) == 0          # single-use: consumed here
ws, ex, ret = aclnn.add_get_workspace_size(tx, tx, one, to)  # <- repeatable
assert aclnn.set_executor_repeatable(ex) == 0
for _ in range(3):
    assert aclnn.add(0, 0, ex, stream) == 0
assert acl.rt.synchronize_stream(stream) == 0
if DESTROY:
    assert aclnn.destroy_executor(ex) == 0
for h in (tx, to):
    assert aclnn.destroy_tensor(h) == 0
assert aclnn.destroy_scalar(one) == 0
assert acl.rt.free(x) == 0
assert acl.rt.free(out) == 0
""" + FOOTER


def test_repeatable_executor_never_destroyed_is_a_leak(tmp_path: Path) -> None:
    """A repeatable executor never destroyed leaks; the consumed single-use one does not."""
    run = run_program(tmp_path, "DESTROY = False\n" + ACLNN)
    f = only(run, "repeatable", "leak")
    assert "repeatable" in f.message and "destroy_executor" in f.message


def test_repeatable_executor_destroyed_is_clean(tmp_path: Path) -> None:
    """Destroying the repeatable executor: no findings (single-use needs no destroy)."""
    clean(run_program(tmp_path, "DESTROY = True\n" + ACLNN))


def test_single_use_executor_never_run_is_a_leak(tmp_path: Path) -> None:
    """Phase 1 without phase 2 (e.g. an early return): the executor is neither consumed nor
    destroyed, a leak at the *_get_workspace_size line."""
    run = run_program(tmp_path, HEADER + """
import acl_lab.aclnn as aclnn

x, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
tx = aclnn.create_tensor([16], ACL_FLOAT, x)
one = aclnn.create_scalar(1.0, ACL_FLOAT)
ws, ex, ret = aclnn.add_get_workspace_size(tx, tx, one, tx)  # <- phase1
assert ret == 0
assert aclnn.destroy_tensor(tx) == 0
assert aclnn.destroy_scalar(one) == 0
assert acl.rt.free(x) == 0
""" + FOOTER)
    f = only(run, "phase1", "leak")
    assert "phase 2" in f.message and "destroy_executor" in f.message


# =========================================================================== destroy order
def test_stream_released_by_destroy_context_is_one_leak_naming_both(tmp_path: Path) -> None:
    """Sample 7.1's mistake: one leak at create_stream that also names the destroy_context
    line that released the stream (not a second destroy_order finding)."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
stream, ret = acl.rt.create_stream()  # <- stream
assert acl.rt.destroy_context(ctx) == 0  # <- destroy_ctx
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
""")
    f = only(run, "stream", "leak")
    assert (f"acl.rt.destroy_context (aclrtDestroyContext) at {run.path}:"
            f"{run.marks['destroy_ctx']}") in f.message
    assert "destroy_stream" in f.message and "before acl.rt.destroy_context" in f.message
    assert (str(run.path), run.marks["destroy_ctx"]) in f.sites


def test_destroy_stream_after_destroy_context_is_destroy_order(tmp_path: Path) -> None:
    """destroy_stream after destroy_context fails: one destroy_order at the late call (no
    leak, no context_not_set for its 107002)."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
stream, ret = acl.rt.create_stream()
assert acl.rt.destroy_context(ctx) == 0  # <- destroy_ctx
assert acl.rt.destroy_stream(stream) != 0  # <- late
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
""")
    f = only(run, "late", "destroy_order")
    assert f.severity == "warning"
    assert f"acl.rt.destroy_context at {run.path}:{run.marks['destroy_ctx']}" in f.message
    assert "Fix: move acl.rt.destroy_stream before acl.rt.destroy_context" in f.message


def test_destroy_context_and_free_after_reset_device_are_destroy_order(tmp_path: Path) -> None:
    """reset_device while an explicit context, its event and device memory are alive, then
    releasing them: each late release is a destroy_order naming reset_device."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
event, ret = acl.rt.create_event()
dev, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY)
assert acl.rt.reset_device(0) == 0  # <- reset
assert acl.rt.destroy_event(event) != 0  # <- event
assert acl.rt.free(dev) != 0  # <- free
assert acl.rt.destroy_context(ctx) != 0  # <- ctx
assert acl.finalize() == 0
""")
    assert run.kinds() == sorted(("destroy_order", run.marks[m])
                                 for m in ("event", "free", "ctx")), describe(run.findings)
    for f in run.findings:
        assert f"acl.rt.reset_device at {run.path}:{run.marks['reset']}" in f.message


def test_context_and_stream_left_to_reset_device_are_leaks_naming_it(tmp_path: Path) -> None:
    """reset_device with an explicit context and its stream still alive, never destroyed: one
    leak each, naming the reset_device that released them (no destroy_order: nothing was
    released late)."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)  # <- ctx
stream, ret = acl.rt.create_stream()  # <- stream
assert acl.rt.reset_device(0) == 0  # <- reset
assert acl.finalize() == 0
""")
    assert run.kinds() == [("leak", run.marks["ctx"]), ("leak", run.marks["stream"])], \
        describe(run.findings)
    reset = f"acl.rt.reset_device (aclrtResetDevice) at {run.path}:{run.marks['reset']}"
    assert all(reset in f.message for f in run.findings), describe(run.findings)
    assert "acl.rt.destroy_context" in run.at("ctx")[0].message
    assert "acl.rt.destroy_stream" in run.at("stream")[0].message


def test_release_in_order_is_clean(tmp_path: Path) -> None:
    """events, streams, memory, contexts, then reset and finalize: no findings."""
    clean(run_program(tmp_path, HEADER + """
event, ret = acl.rt.create_event()
dev, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY)
assert acl.rt.record_event(event, stream) == 0
assert acl.rt.synchronize_stream(stream) == 0
assert acl.rt.destroy_event(event) == 0
assert acl.rt.free(dev) == 0
""" + FOOTER))


# =========================================================================== (1) size mismatch
MODEL_RUN = HEADER + """
model_id, ret = acl.mdl.load_from_file("{model}")
desc = acl.mdl.create_desc()
assert acl.mdl.get_desc(desc, model_id) == 0
images = np.random.default_rng(0).standard_normal(IN_SHAPE).astype(np.float32)
data = PREPARE(images)
in_size = IN_SIZE(desc, data)
dev_in, ret = acl.rt.malloc(in_size, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
assert ret == 0
copy = min(len(data), in_size)
assert acl.rt.memcpy(dev_in, in_size, acl.util.bytes_to_ptr(data), copy,
                     ACL_MEMCPY_HOST_TO_DEVICE) == 0
out_size = OUT_SIZE(desc)
dev_out, ret = acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- out_malloc
in_ds, out_ds = acl.mdl.create_dataset(), acl.mdl.create_dataset()
in_buf = acl.create_data_buffer(dev_in, in_size)  # <- in_buf
out_buf = acl.create_data_buffer(dev_out, out_size)  # <- out_buf
assert acl.mdl.add_dataset_buffer(in_ds, in_buf)[1] == 0
assert acl.mdl.add_dataset_buffer(out_ds, out_buf)[1] == 0
ret = acl.mdl.execute(model_id, in_ds, out_ds)  # <- execute
result = None
if ret == 0:
    out = bytes(out_size)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), out_size, dev_out, out_size,
                         ACL_MEMCPY_DEVICE_TO_HOST) == 0
    result = np.frombuffer(out, dtype=np.float32)
for b in (in_buf, out_buf):
    acl.destroy_data_buffer(b)
for d in (in_ds, out_ds):
    acl.mdl.destroy_dataset(d)
assert acl.rt.free(dev_in) == 0
assert acl.rt.free(dev_out) == 0
assert acl.mdl.unload(model_id) == 0
assert acl.mdl.destroy_desc(desc) == 0
""" + FOOTER
FULL_IN = "lambda desc, data: acl.mdl.get_input_size_by_index(desc, 0)"
FULL_OUT = "lambda desc: acl.mdl.get_output_size_by_index(desc, 0)"
MLP_SHAPE = (8, 784)


def _model_program(shape: tuple[int, ...], prepare: str, in_size: str = FULL_IN,
                   out_size: str = FULL_OUT) -> str:
    return (f"IN_SHAPE = {shape}\nPREPARE = {prepare}\nIN_SIZE = {in_size}\n"
            f"OUT_SIZE = {out_size}\n" + MODEL_RUN)


def test_pitfall1_float64_input_is_a_size_mismatch(tmp_path: Path, mlp: str) -> None:
    """Exercise 04 (1) on the zoo MLP: the images stay float64 (numpy's default), so the input
    buffer is twice the model's input; execute succeeds with the runtime's warning and the
    model reads garbage. One size_mismatch warning at execute naming the buffer's lines."""
    run = run_program(tmp_path, _model_program(
        MLP_SHAPE, "lambda a: a.astype(np.float64).tobytes()", "lambda desc, data: len(data)"),
        model=mlp)
    assert run.env["ret"] == 0
    f = only(run, "execute", "size_mismatch")
    assert f.severity == "warning"
    assert "50176" in f.message and "25088" in f.message and "dtype" in f.message
    assert "get_input_size_by_index" in f.message
    assert f"{run.path}:{run.marks['in_buf']}" in f.message
    assert f"{run.path}:{run.marks['malloc']}" in f.message


def test_pitfall1_fixed_gives_the_right_output_and_no_findings(tmp_path: Path,
                                                                mlp: str) -> None:
    """The fix: float32 data in a buffer of get_input_size_by_index bytes; the output equals
    a direct forward pass of the model, and there are no findings."""
    from acl_lab.runtime.om import load_om
    run = run_program(tmp_path, _model_program(MLP_SHAPE, "lambda a: a.tobytes()"), model=mlp)
    clean(run)
    images = np.random.default_rng(0).standard_normal(MLP_SHAPE).astype(np.float32)
    want = load_om(mlp).run([images])[0]
    got = np.asarray(run.env["result"]).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_undersized_input_of_a_static_model_is_145000(tmp_path: Path) -> None:
    """LeNet-5 (static shape) given half its input: execute returns 145000; one size_mismatch
    error at execute with both sizes, the rule and the buffer's lines."""
    run = run_program(tmp_path, _model_program(
        (1, 1, 28, 28), "lambda a: a.tobytes()[:1568]", "lambda desc, data: len(data)"),
        model=zoo.path("lenet5"))
    assert run.env["ret"] == 145000
    f = only(run, "execute", "size_mismatch")
    assert f.severity == "error"
    assert "145000" in f.message and "get_input_size_by_index" in f.message
    assert "3136" in f.message and "1568" in f.message
    assert f"{run.path}:{run.marks['in_buf']}" in f.message


def test_output_buffer_too_small_is_a_size_mismatch(tmp_path: Path, mlp: str) -> None:
    """An MLP output buffer for one row while the model writes eight: 145000 at execute, one
    size_mismatch naming the output buffer's line."""
    run = run_program(tmp_path, _model_program(MLP_SHAPE, "lambda a: a.tobytes()",
                                               out_size="lambda desc: 40"), model=mlp)
    assert run.env["ret"] == 145000
    f = only(run, "execute", "size_mismatch")
    assert "output 0" in f.message and "get_output_size_by_index" in f.message
    assert f"{run.path}:{run.marks['out_buf']}" in f.message
    assert f"{run.path}:{run.marks['out_malloc']}" in f.message


def test_short_copy_into_a_model_input_is_a_size_mismatch(tmp_path: Path, mlp: str) -> None:
    """The second execution copies half an input (and 8 bytes: not whole batch rows, which
    would be a partial last batch, a warning) into a buffer the model reads whole: the
    rest is stale data from the first image. Reported at execute with the copy's line."""
    run = run_program(tmp_path, HEADER + """
model_id, ret = acl.mdl.load_from_file("{mlp}")
desc = acl.mdl.create_desc()
assert acl.mdl.get_desc(desc, model_id) == 0
size = acl.mdl.get_input_size_by_index(desc, 0)
out_size = acl.mdl.get_output_size_by_index(desc, 0)
dev_in, _ = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
dev_out, _ = acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY)
in_ds, out_ds = acl.mdl.create_dataset(), acl.mdl.create_dataset()
in_buf = acl.create_data_buffer(dev_in, size)
out_buf = acl.create_data_buffer(dev_out, out_size)
acl.mdl.add_dataset_buffer(in_ds, in_buf)
acl.mdl.add_dataset_buffer(out_ds, out_buf)
for n in (SIZES):
    data = np.ones(n // 4, dtype=np.float32).tobytes()
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.rt.memcpy(dev_in, size, ptr, n, ACL_MEMCPY_HOST_TO_DEVICE) == 0  # <- copy
    assert acl.mdl.execute(model_id, in_ds, out_ds) == 0  # <- execute
for b in (in_buf, out_buf):
    acl.destroy_data_buffer(b)
for d in (in_ds, out_ds):
    acl.mdl.destroy_dataset(d)
acl.rt.free(dev_in)
acl.rt.free(dev_out)
acl.mdl.unload(model_id)
acl.mdl.destroy_desc(desc)
""".replace("SIZES", "size, size // 2 + 8") + FOOTER, mlp=mlp)
    f = only(run, "execute", "size_mismatch")
    assert f"{run.path}:{run.marks['copy']}" in f.message
    assert "wrote only 12552" in f.message and "25088" in f.message


def test_full_copies_into_a_reused_model_input_are_clean(tmp_path: Path, mlp: str) -> None:
    """Full copies before each execution, and a second execution with no new copy (the same
    input run again): no findings."""
    run = run_program(tmp_path, HEADER + """
model_id, ret = acl.mdl.load_from_file("{mlp}")
desc = acl.mdl.create_desc()
assert acl.mdl.get_desc(desc, model_id) == 0
size = acl.mdl.get_input_size_by_index(desc, 0)
out_size = acl.mdl.get_output_size_by_index(desc, 0)
dev_in, _ = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
dev_out, _ = acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY)
in_ds, out_ds = acl.mdl.create_dataset(), acl.mdl.create_dataset()
in_buf = acl.create_data_buffer(dev_in, size)
out_buf = acl.create_data_buffer(dev_out, out_size)
acl.mdl.add_dataset_buffer(in_ds, in_buf)
acl.mdl.add_dataset_buffer(out_ds, out_buf)
half = size // 2
for k in range(2):
    data = np.full(size // 4, k, dtype=np.float32).tobytes()
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.rt.memcpy(dev_in, size, ptr, half, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.rt.memcpy(dev_in + half, size - half, ptr + half, size - half,
                         ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.mdl.execute(model_id, in_ds, out_ds) == 0
assert acl.mdl.execute(model_id, in_ds, out_ds) == 0
for b in (in_buf, out_buf):
    acl.destroy_data_buffer(b)
for d in (in_ds, out_ds):
    acl.mdl.destroy_dataset(d)
acl.rt.free(dev_in)
acl.rt.free(dev_out)
acl.mdl.unload(model_id)
acl.mdl.destroy_desc(desc)
""" + FOOTER, mlp=mlp)
    clean(run)


OP_ADD = HEADER + """
descs, bufs, ptrs = [], [], []
for k in range(3):
    td = acl.create_tensor_desc(ACL_INT32, [8, 16], ACL_FORMAT_ND)  # <- desc
    size = acl.get_tensor_desc_size(td)
    n = SHORT if k == 1 else size
    dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert acl.rt.memset(dev, size, 1, size) == 0
    descs.append(td)
    bufs.append(acl.create_data_buffer(dev, n))  # <- buf
    ptrs.append(dev)
attr = acl.op.create_attr()
ret = acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:], attr, stream)  # <- execute
assert acl.rt.synchronize_stream(stream) == 0
for td, b, p in zip(descs, bufs, ptrs):
    acl.destroy_data_buffer(b)
    acl.rt.free(p)
    acl.destroy_tensor_desc(td)
acl.op.destroy_attr(attr)
""" + FOOTER


def test_op_buffer_smaller_than_its_desc_is_a_size_mismatch(tmp_path: Path) -> None:
    """An Add input data buffer of 256 bytes for a 512-byte int32[8, 16] desc: 100000 and one
    size_mismatch naming the desc's and the buffer's lines."""
    run = run_program(tmp_path, "SHORT = 256\n" + OP_ADD)
    assert run.env["ret"] == 100000
    f = only(run, "execute", "size_mismatch")
    assert "get_tensor_desc_size" in f.message and "512" in f.message and "256" in f.message
    assert f"{run.path}:{run.marks['desc']}" in f.message
    assert f"{run.path}:{run.marks['buf']}" in f.message


def test_op_buffers_of_their_desc_size_are_clean(tmp_path: Path) -> None:
    """Buffers of get_tensor_desc_size bytes: no findings."""
    run = run_program(tmp_path, "SHORT = 512\n" + OP_ADD)
    assert run.env["ret"] == 0
    clean(run)


# =========================================================================== (2) error path
ERROR_PATH = HEADER + """
SIZE = 4096
host, ret = acl.rt.malloc_host(SIZE)
codes = []
for i in range(100):
    dev, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
    assert ret == 0
    src = 0 if i % 10 == 3 else host  # every tenth input is missing
    PROCESS
assert acl.rt.free_host(host) == 0
""" + FOOTER
LEAKY = """
    ret = acl.rt.memcpy(dev, SIZE, src, SIZE, ACL_MEMCPY_HOST_TO_DEVICE)  # <- fails
    codes.append(ret)
    if ret != 0:
        continue  # the error path forgets the free
    acl.rt.free(dev)
"""
FIXED = """
    try:
        ret = acl.rt.memcpy(dev, SIZE, src, SIZE, ACL_MEMCPY_HOST_TO_DEVICE)
        codes.append(ret)
        if ret != 0:
            continue
    finally:
        acl.rt.free(dev)
"""


def _error_path(process: str) -> str:
    return ERROR_PATH.replace("    PROCESS\n", textwrap.indent(textwrap.dedent(process), "    "))


def test_pitfall2_leak_on_the_error_path_is_one_leak(tmp_path: Path) -> None:
    """Exercise 04 (2): 100 iterations, 10 fail and skip the free: one leak at the malloc line
    (not a plain leak plus a pitfall), with the iteration counts and the failing call."""
    run = run_program(tmp_path, _error_path(LEAKY))
    codes = run.env["codes"]
    assert isinstance(codes, list) and len(codes) == 100
    assert sum(1 for c in codes if c) == 10
    f = only(run, "malloc", "leak")
    assert ("freed on 90 of 100 iterations; the others leak — free on the error path too "
            "(try/finally)") in f.message
    assert (f"acl.rt.memcpy (aclrtMemcpy) at {run.path}:{run.marks['fails']} failed (100000) "
            "in 10") in f.message
    assert len(f.ids["allocs"]) == 10
    assert "40.0 KiB" in f.message


def test_pitfall2_fixed_with_try_finally_has_no_findings(tmp_path: Path) -> None:
    """The fix frees on every path: zero leak findings after 100 iterations with failures."""
    run = run_program(tmp_path, _error_path(FIXED))
    codes = run.env["codes"]
    assert isinstance(codes, list) and len(codes) == 100
    assert sum(1 for c in codes if c) == 10
    clean(run)


OVERWRITE = HEADER + """
SIZE = 4096
mdl_desc = acl.mdl.create_desc()


class Batcher:
    def __init__(self):
        self.total = None

    def batch(self):
        # An unrelated lookup that fails on every call (a static model has no such input).
        index, ret = acl.mdl.get_input_index_by_name(mdl_desc, "ascend_mbatch_shape_data")
        self.total, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
        assert ret == 0


b = Batcher()
for i in range(5):
    b.batch()
assert acl.rt.free(b.total) == 0
assert acl.mdl.destroy_desc(mdl_desc) == 0
""" + FOOTER


def test_overwritten_pointer_is_not_called_an_error_path(tmp_path: Path) -> None:
    """Issue 12 §4: a pointer overwritten on every call leaks 4 of 5 blocks; a lookup that
    fails on every call (also in the iteration that freed) is not named as the cause."""
    run = run_program(tmp_path, OVERWRITE)
    f = only(run, "malloc", "leak")
    assert "this is not an error path" in f.message
    assert "overwrote the only pointer to the previous block" in f.message
    assert "Only the last one was freed" in f.message
    assert "4 of 5 allocations" in f.message
    assert "error path too" not in f.message
    assert "acl.mdl.get_input_index_by_name" in f.message  # named as unrelated, with why
    assert "failed in iterations that freed too" in f.message.replace("\n", " ")
    assert len(f.ids["allocs"]) == 4
    assert len(f.sites) == 1  # the malloc line only: no cause site


# =========================================================================== (3) contexts
WORKERS = HEADER + """
results = {}


def worker(k):
    SETUP
    dev, ret = acl.rt.malloc(1024, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
    codes = [ret]
    if ret == 0:
        codes.append(acl.rt.memset(dev, 1024, k, 1024))
        codes.append(acl.rt.free(dev))
    results[k] = codes


threads = [threading.Thread(target=worker, args=(k,), name=f"worker-{k}") for k in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join()
""" + FOOTER


def _workers(setup: str, n: int) -> str:
    return f"N = {n}\n" + WORKERS.replace("SETUP", setup)


def test_pitfall3_worker_thread_without_context(tmp_path: Path) -> None:
    """Exercise 04 (3): a worker thread calls malloc with no context (107002): one
    context_not_set at that line naming the thread, the call, and where ctx was created."""
    run = run_program(tmp_path, _workers("pass", 1))
    assert run.env["results"] == {0: [107002]}
    f = only(run, "malloc", "context_not_set")
    assert "worker-0" in f.message and "acl.rt.malloc" in f.message
    create = line_of(run, "acl.rt.create_context(0)")
    assert ("call acl.rt.set_context(ctx) (aclrtSetCurrentContext) in this thread; ctx was "
            "created at "
            f"{run.path}:{create} in thread 0 (MainThread)") in f.message


def test_pitfall3_many_workers_are_one_finding(tmp_path: Path) -> None:
    """Four workers failing at the same line: one finding that names all four threads."""
    run = run_program(tmp_path, _workers("pass", 4))
    f = only(run, "malloc", "context_not_set")
    assert "4 threads" in f.message
    for k in range(4):
        assert f"worker-{k}" in f.message
    assert len(f.ids["threads"]) == 4


def test_pitfall3_fixed_with_set_context_in_the_worker(tmp_path: Path) -> None:
    """The fix: set_context(ctx) in the worker; every worker returns 0 codes, no findings."""
    run = run_program(tmp_path, _workers("assert acl.rt.set_context(ctx) == 0", 4))
    assert run.env["results"] == {k: [0, 0, 0] for k in range(4)}
    clean(run)


PROBE = """
import threading
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.get_context()
results = []


def work():
    dev, ret = acl.rt.get_device()  # <- probe
    if ret != 0 and SET:
        assert acl.rt.set_context(ctx) == 0
    ptr, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
    results.append(ret)
    if ret == 0:
        assert acl.rt.free(ptr) == 0


t = threading.Thread(target=work)
t.start()
t.join()
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
"""


def test_a_checked_get_device_probe_is_a_note_not_an_error(tmp_path: Path) -> None:
    """A worker asks get_device whether it has a context (107002: no), checks the code and
    sets one: the probe is an info note at its line, not an error (issue 28)."""
    run = run_program(tmp_path, "SET = True\n" + PROBE)
    assert run.env["results"] == [0]
    f = only(run, "probe", "context_not_set")
    assert f.severity == "info"
    assert "probe, not a mistake" in f.message


def test_a_probe_followed_by_a_failing_call_is_still_an_error(tmp_path: Path) -> None:
    """The same worker ignoring the answer: its malloc fails too, so the thread's 107002s
    are an error that lists both calls."""
    run = run_program(tmp_path, "SET = False\n" + PROBE)
    assert run.env["results"] == [107002]
    f = only(run, "probe", "context_not_set")
    assert f.severity == "error"
    assert "acl.rt.get_device" in f.message and "acl.rt.malloc" in f.message


def test_context_not_set_after_reset_device_names_the_reset(tmp_path: Path) -> None:
    """A call after reset_device released the thread's context: context_not_set says which
    call released it."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
assert acl.rt.reset_device(0) == 0  # <- reset
dev, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
assert ret == 107002
assert acl.finalize() == 0
""")
    f = only(run, "malloc", "context_not_set")
    assert (f"acl.rt.reset_device (aclrtResetDevice) at {run.path}:{run.marks['reset']}"
            in f.message)


WRONG_CTX = """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx_a, ret = acl.rt.create_context(0)  # <- ctx_a
stream, ret = acl.rt.create_stream()  # <- stream
ctx_b, ret = acl.rt.create_context(0)  # <- ctx_b
host, ret = acl.rt.malloc_host(256)
dev, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY)
SWITCH
ret = acl.rt.memcpy_async(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, stream)  # <- copy
assert acl.rt.synchronize_stream(stream) == 0
assert acl.rt.free(dev) == 0
assert acl.rt.free_host(host) == 0
assert acl.rt.set_context(ctx_a) == 0
assert acl.rt.destroy_stream(stream) == 0
assert acl.rt.destroy_context(ctx_b) == 0
assert acl.rt.destroy_context(ctx_a) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
"""


def test_stream_of_another_context_is_wrong_context(tmp_path: Path) -> None:
    """A stream of ctx_a used while ctx_b is current (107003): wrong_context with the stream's
    line, its context's line and the current context's line."""
    run = run_program(tmp_path, WRONG_CTX.replace("SWITCH", "pass"))
    assert run.env["ret"] == 107003
    f = only(run, "copy", "wrong_context")
    for mark in ("stream", "ctx_a", "ctx_b"):
        assert f"{run.path}:{run.marks[mark]}" in f.message, mark
    assert "acl.rt.set_context" in f.message


def test_stream_used_in_its_own_context_is_clean(tmp_path: Path) -> None:
    """set_context(ctx_a) before using its stream: no findings."""
    run = run_program(tmp_path, WRONG_CTX.replace("SWITCH", "assert acl.rt.set_context(ctx_a) "
                                                            "== 0"))
    assert run.env["ret"] == 0
    clean(run)


def test_model_of_another_context_is_wrong_context(tmp_path: Path, mlp: str) -> None:
    """A model loaded in ctx_a and unloaded while ctx_b is current (107004): wrong_context
    naming the load line; unloading it in ctx_a is clean."""
    body = """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx_a, ret = acl.rt.create_context(0)
model_id, ret = acl.mdl.load_from_file("{mlp}")  # <- load
ctx_b, ret = acl.rt.create_context(0)
SWITCH
ret = acl.mdl.unload(model_id)  # <- unload
assert acl.rt.set_context(ctx_a) == 0
if ret != 0:
    assert acl.mdl.unload(model_id) == 0
assert acl.rt.destroy_context(ctx_b) == 0
assert acl.rt.destroy_context(ctx_a) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
"""
    run = run_program(tmp_path, body.replace("SWITCH", "pass"), mlp=mlp)
    assert run.env["ret"] == 107004
    f = only(run, "unload", "wrong_context")
    assert f"{run.path}:{run.marks['load']}" in f.message
    clean(run_program(tmp_path, body.replace("SWITCH", "acl.rt.set_context(ctx_a)"), mlp=mlp))


# =========================================================================== (4) async copies
ASYNC_COPY = HEADER + """
N = 4096
dev, ret = acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)
HOST
for i in range(3):
    ret = acl.rt.memcpy_async(dev, N, src, N, ACL_MEMCPY_HOST_TO_DEVICE, stream)  # <- copy
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
back = bytes(N)
assert acl.rt.memcpy(acl.util.bytes_to_ptr(back), N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST) == 0
FREE
assert acl.rt.free(dev) == 0
"""
PAGEABLE = """
data = np.arange(N, dtype=np.uint8).tobytes()
src = acl.util.bytes_to_ptr(data)  # <- host
"""
MISALIGNED = """
host, ret = acl.rt.malloc_host(N + 64)  # <- host
src = host + 8
"""
PINNED = """
host, ret = acl.rt.malloc_host(N)
src = host
"""


def _async_copy(host: str, free: bool) -> str:
    return (ASYNC_COPY.replace("HOST\n", textwrap.dedent(host).lstrip("\n"))
            .replace("FREE", "assert acl.rt.free_host(host) == 0" if free else "") + FOOTER)


def test_pitfall4_pageable_host_buffer_in_memcpy_async(tmp_path: Path) -> None:
    """Exercise 04 (4a): three memcpy_async calls from a bytes buffer: one finding at the call
    with the count, the buffer's line and the malloc_host fix."""
    run = run_program(tmp_path, _async_copy(PAGEABLE, False))
    f = only(run, "copy", "pageable_async_copy")
    assert "3 times" in f.message and "acl.rt.malloc_host" in f.message
    assert f"acl.util.bytes_to_ptr at {run.path}:{run.marks['host']}" in f.message


def test_pitfall4_misaligned_host_buffer_in_memcpy_async(tmp_path: Path) -> None:
    """Exercise 04 (4b): a pinned buffer used 8 bytes in: one misaligned_host_buffer at the
    call naming the 64-byte rule and the malloc_host line."""
    run = run_program(tmp_path, _async_copy(MISALIGNED, True))
    f = only(run, "copy", "misaligned_host_buffer")
    assert "64-byte" in f.message and "3 times" in f.message
    assert (f"acl.rt.malloc_host (aclrtMallocHost) at {run.path}:{run.marks['host']}"
            in f.message)


#: Exercise 04.4's results: 40-byte pieces (10 float32), each copied back into one pinned
#: block at ``host + i * STRIDE``.
PIECES = HEADER + """
PIECE, N = 40, 8
dev, ret = acl.rt.malloc(PIECE, ACL_MEM_MALLOC_NORMAL_ONLY)
assert ret == 0
assert acl.rt.memset(dev, PIECE, 0, PIECE) == 0
host, ret = acl.rt.malloc_host(N * STRIDE)
assert ret == 0
for i in range(N):
    ret = acl.rt.memcpy_async(host + i * STRIDE, PIECE, dev, PIECE,  # <- copy
                              ACL_MEMCPY_DEVICE_TO_HOST, stream)
    assert ret == 0
assert acl.rt.synchronize_stream(stream) == 0
assert acl.rt.free_host(host) == 0
assert acl.rt.free(dev) == 0
""" + FOOTER
#: The stride the misaligned_host_buffer finding advises: ``ALIGN_UP(len, k)``, maybe ``+ m``.
ADVISED_STRIDE = re.compile(r"stride = ALIGN_UP\(len, (\d+)\)(?: \+ (\d+))?")


def test_pitfall4_following_the_alignment_advice_is_clean(tmp_path: Path) -> None:
    """Packed 40-byte pieces of one pinned block are misaligned; the finding's advice, taken
    literally (pieces at ALIGN_UP(40, k) + m in one block), gives no finding at all, while
    the old advice ALIGN_UP(len, 32) + 32 (96 bytes) still does."""
    piece = 40
    packed = run_program(tmp_path, PIECES.replace("STRIDE", str(piece)))
    f = only(packed, "copy", "misaligned_host_buffer")
    m = ADVISED_STRIDE.search(f.message)
    assert m is not None, f.message
    granule, extra = int(m.group(1)), int(m.group(2) or 0)
    stride = -(-piece // granule) * granule + extra
    assert stride == 64
    clean(run_program(tmp_path, PIECES.replace("STRIDE", str(stride))))
    old = run_program(tmp_path, PIECES.replace("STRIDE", str(-(-piece // 32) * 32 + 32)))
    assert [k for k, _ in old.kinds()] == ["misaligned_host_buffer"]


def test_pitfall4_fixed_with_malloc_host(tmp_path: Path) -> None:
    """The fix: a malloc_host buffer used from its start: no findings."""
    clean(run_program(tmp_path, _async_copy(PINNED, True)))


# =========================================================================== the module itself
def test_pitfall_checks_are_pure_and_empty_on_an_empty_trace(session: Session) -> None:
    """Every pitfall check returns [] for a trace with no calls, and does not change it."""
    trace = session.trace()
    for check in PITFALL_CHECKS:
        assert check(trace) == []


def test_ready_fixture_trace_has_no_pitfalls(ready: ModuleType, session: Session) -> None:
    """init + set_device and a clean copy in the test session: the pitfall checks are quiet."""
    dev, ret = ready.rt.malloc(64, 0)
    assert ret == 0
    assert ready.rt.free(dev) == 0
    trace = session.trace()
    assert [f for check in PITFALL_CHECKS for f in check(trace)] == []
