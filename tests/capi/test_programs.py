"""C++ AscendCL programs compiled with ``acl-lab cc`` and run with ``acl-lab run``: their
results, their findings at C lines, and their traces call for call against the same programs
written in Python."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .conftest import PROGRAMS, acl_lab, calls, compile_program, line_of, run_traced


def _model(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    """A small MatMul + Add + Relu ONNX model converted with ``acl-lab atc``."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"]),
             helper.make_node("Add", ["m", "B"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "demo",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
                              [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    src = tmp_path / "demo.onnx"
    onnx.save(model, str(src))
    proc = acl_lab("atc", f"--model={src}", "--framework=5", f"--output={tmp_path / 'demo'}",
                   "--soc_version=Ascend310P3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp_path / "demo.om", w, b


def test_first_inference_demo(libascendcl: Path, tmp_path: Path) -> None:
    om, w, b = _model(tmp_path)
    x = ["0.5", "-1.25", "2.0", "0.75"]
    binary = compile_program("first_inference", tmp_path)
    proc, trace, summary = run_traced(binary, str(om), *x, cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stderr
    got = np.array([float(v) for v in proc.stdout.split()], dtype=np.float32)
    want = np.maximum(np.array(x, dtype=np.float32) @ w + b, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert summary["findings"] == []
    # every call is recorded at its C line
    src = str(PROGRAMS / "first_inference.cpp")
    sites = {trace.call_site(c) for c in range(trace.calls.rows)
             if trace.call_name(c) == "acl.mdl.execute"}
    assert sites == {(src, line_of("first_inference", "aclmdlExecute(modelId"))}
    py_proc, py_trace, _ = run_traced(PROGRAMS / "first_inference.py", str(om), *x,
                                      cwd=tmp_path, tag="py")
    assert py_proc.returncode == 0, py_proc.stderr
    assert py_proc.stdout == proc.stdout
    assert calls(trace) == calls(py_trace)


def test_matrix_add_through_an_operator(libascendcl: Path, tmp_path: Path) -> None:
    binary = compile_program("matrix_add", tmp_path)
    proc, trace, summary = run_traced(binary, str(tmp_path), cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [float(v) for v in proc.stdout.split()] == [11, 22, 33, 44, 55, 66]
    assert summary["findings"] == []
    execs = trace.calls_named("acl.op.execute_v2")
    assert len(execs) == 1 and int(trace.calls["ret"][execs[0]]) == 0
    at = line_of("matrix_add", "aclError ret = aclopExecuteV2")
    assert trace.call_site(int(execs[0])) == (str(PROGRAMS / "matrix_add.cpp"), at)
    py_proc, py_trace, _ = run_traced(PROGRAMS / "matrix_add.py", str(tmp_path), cwd=tmp_path,
                                      tag="py")
    assert py_proc.stdout == proc.stdout
    assert calls(trace) == calls(py_trace)


def test_two_streams_with_an_event(libascendcl: Path, tmp_path: Path) -> None:
    binary = compile_program("two_streams", tmp_path)
    proc, trace, summary = run_traced(binary, cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stderr
    assert [int(v) for v in proc.stdout.split()] == [i * i for i in range(16)]
    assert summary["findings"] == []  # the event orders the streams: no race
    assert trace.tasks.rows >= 4  # two copies, the record and the wait ran on the device
    py_proc, py_trace, _ = run_traced(PROGRAMS / "two_streams.py", cwd=tmp_path, tag="py")
    assert py_proc.stdout == proc.stdout
    assert calls(trace) == calls(py_trace)


def test_worker_thread_without_a_context_gets_107002(libascendcl: Path,
                                                     tmp_path: Path) -> None:
    binary = compile_program("worker_no_context", tmp_path)
    proc, trace, summary = run_traced(binary, cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "worker without context 107002" in lines
    assert "worker with context 0" in lines
    assert lines[0] == "set_device(-1) 107001"  # ACL_ERROR_RT_INVALID_DEVICEID
    src = str(PROGRAMS / "worker_no_context.cpp")
    mallocs = [int(c) for c in trace.calls_named("acl.rt.malloc")]
    assert [int(trace.calls["ret"][c]) for c in mallocs] == [107002, 0]
    # each call is recorded in the C thread that made it: three threads
    assert len({int(trace.calls["thread"][c]) for c in range(trace.calls.rows)}) == 3
    found = [f for f in summary["findings"] if f["kind"] == "context_not_set"]
    assert [(f["file"], f["line"]) for f in found] == \
        [(src, line_of("worker_no_context", "NO-CONTEXT"))]
    py_proc, py_trace, _ = run_traced(PROGRAMS / "worker_no_context.py", cwd=tmp_path,
                                      tag="py")
    assert py_proc.stdout == proc.stdout
    assert calls(trace) == calls(py_trace)


def test_leak_on_an_error_path_is_found_at_its_c_line(libascendcl: Path,
                                                      tmp_path: Path) -> None:
    binary = compile_program("leak_error_path", tmp_path)
    proc, trace, summary = run_traced(binary, cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stderr
    leaks = [f for f in summary["findings"] if f["kind"] == "leak"]
    assert [(f["file"], f["line"]) for f in leaks] == \
        [(str(PROGRAMS / "leak_error_path.cpp"), line_of("leak_error_path", "LEAK-SITE"))]
    copies = [int(trace.calls["ret"][c]) for c in trace.calls_named("acl.rt.memcpy")]
    assert copies == [0, 107000]
    py_proc, py_trace, py_summary = run_traced(PROGRAMS / "leak_error_path.py", cwd=tmp_path,
                                               tag="py")
    assert py_proc.stdout == proc.stdout
    assert calls(trace) == calls(py_trace)
    assert [f["kind"] for f in py_summary["findings"]] == [f["kind"] for f in
                                                          summary["findings"]]
    # the advice speaks each program's language
    (c_leak,) = leaks
    (py_leak,) = [f for f in py_summary["findings"] if f["kind"] == "leak"]
    assert "cleanup label or RAII" in c_leak["message"] and "try/finally" not in c_leak["message"]
    assert "try/finally" in py_leak["message"] and "RAII" not in py_leak["message"]


def test_callback_runs_in_the_subscribed_c_thread(libascendcl: Path, tmp_path: Path) -> None:
    binary = compile_program("callback", tmp_path)
    proc, trace, summary = run_traced(binary, cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    # The reporter runs the callback as soon as it is placed, concurrently with the launching
    # thread's printf after aclrtLaunchCallback returns (on a card too): either may print
    # first. The blocking callback has run before the synchronize returns.
    assert out[0] == "subscribe 0" and out[3] == "sync 0"
    assert sorted(out[1:3]) == ["callback in reporter 1", "launch 0"]
    assert out[4] == "count 1"
    assert int(trace.calls["ret"][trace.calls_named("acl.rt.launch_callback")[0]]) == 0
    assert not [f for f in summary["findings"] if f["severity"] == "error"]


def test_device_pointer_dereference_is_a_finding_at_its_c_line(libascendcl: Path,
                                                               tmp_path: Path) -> None:
    binary = compile_program("device_deref", tmp_path)
    proc, trace, summary = run_traced(binary, cwd=tmp_path, tag="c")
    assert proc.returncode == 128 + 11  # ends as a SIGSEGV would, after the report
    assert "not reached" not in proc.stdout
    at = (str(PROGRAMS / "device_deref.cpp"), line_of("device_deref", "DEVICE-WRITE"))
    found = [(f["kind"], f["file"], f["line"]) for f in summary["findings"]]
    assert ("device_dereference", *at) in found
    assert f"{at[0]}:{at[1]}" in proc.stderr
    # the allocation it wrote into is still reported as leaked: nothing was lost
    assert "leak" in {f["kind"] for f in summary["findings"]}
    assert summary["exit_code"] == 139
    assert trace.call_name(trace.calls.rows - 1) == "acl_lab.exit"


def test_callback_thread_subscribed_right_after_pthread_create(libascendcl: Path,
                                                               tmp_path: Path) -> None:
    binary = compile_program("callback_sample", tmp_path)
    proc, trace, summary = run_traced(binary, cwd=tmp_path, tag="c")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["subscribe 0", "sync 0", "count 3"]
    launches = [int(trace.calls["ret"][c]) for c in trace.calls_named("acl.rt.launch_callback")]
    assert launches == [0, 0, 0]
    assert not [f for f in summary["findings"] if f["severity"] == "error"]
