"""The findings gate, the no-result gates and results from the device (``provenance``), on
runs made in this process (no ``acl-lab grade``): each rule fails a run it must fail, with
its cause, and lets the honest run through.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from acl_lab import acl
from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.grading import Exercise, Item, Run, get_exercise, grade_run, run_exercise
from acl_lab.grading.exercises import ex04, ex05, ex06, ex07, ex08
from acl_lab.grading.provenance import from_device, origins
from acl_lab.runtime.kinds import TaskKind

pytestmark = pytest.mark.timeout(120)


def _vector(seed: int) -> tuple[np.ndarray]:
    return (np.random.default_rng(seed).standard_normal(32).astype(np.float32),)


def _values_right(run: Run) -> tuple[bool, str]:
    if run.result is None:
        return False, "nothing returned"
    ok = np.array_equal(np.asarray(run.result), _vector(run.seed)[0] * 2)
    return ok, "right" if ok else "wrong"


def _no_leak(run: Run) -> tuple[bool, str]:
    return (not run.of_kind("leak")), "leaks checked"


def _exercise(claims: tuple[str, ...] = (), waives: tuple[tuple[str, str], ...] = ()
              ) -> Exercise:
    return Exercise("t.gate", "double a vector on the device", "double", (
        Item("right", "returns 2x", 2, _values_right, "copy back"),
        Item("tidy", "frees everything", 1, _no_leak, "free", claims=claims),
    ), make_args=_vector, time_limit=30.0, waives=waives)


def _double_on_device(x: np.ndarray, *, free: bool = True, launder: bool = False) -> Any:
    """2x through an Add operator (x + x) on the device, copied back."""
    acl.init()
    acl.rt.set_device(0)
    n = x.nbytes
    a, _ = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
    out, _ = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
    src = x.tobytes()
    acl.rt.memcpy(a, n, acl.util.bytes_to_ptr(src), n, ACL_MEMCPY_HOST_TO_DEVICE)
    desc = acl.create_tensor_desc(0, [x.size], 2)
    bufs = [acl.create_data_buffer(a, n), acl.create_data_buffer(a, n)]
    outs = [acl.create_data_buffer(out, n)]
    attr = acl.op.create_attr()
    stream, _ = acl.rt.create_stream()
    assert acl.op.execute_v2("Add", [desc, desc], bufs, [desc], outs, attr, stream) == 0
    acl.rt.synchronize_stream(stream)
    acl.rt.destroy_stream(stream)
    acl.op.destroy_attr(attr)
    if launder:  # the host's answer, sent to the device over the operator's output
        answer = (x * 2).tobytes()
        acl.rt.memcpy(out, n, acl.util.bytes_to_ptr(answer), n, ACL_MEMCPY_HOST_TO_DEVICE)
    far, _ = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)  # one device-to-device hop
    acl.rt.memcpy(far, n, out, n, ACL_MEMCPY_DEVICE_TO_DEVICE)
    host, _ = acl.rt.malloc_host(n)
    acl.rt.memcpy(host, n, far, n, ACL_MEMCPY_DEVICE_TO_HOST)
    y = np.frombuffer(acl.util.ptr_to_bytes(host, n), dtype=np.float32).copy()
    for b in (*bufs, *outs):
        acl.destroy_data_buffer(b)
    acl.destroy_tensor_desc(desc)
    for p in (a, out, far):
        acl.rt.free(p)
    if free:
        acl.rt.free_host(host)
    acl.rt.reset_device(0)
    acl.finalize()
    return y


def test_the_honest_run_passes_every_gate() -> None:
    ex = _exercise(claims=("leak",))
    report = grade_run(ex, run_exercise(ex, _double_on_device, seed=3))
    assert report.gate is None and report.passed_all, report.text()
    assert from_device(report.run, work=("kernel",))[0]


def test_an_unclaimed_finding_fails_every_item_with_its_own_explanation() -> None:
    """A leak no item claims: the value item would pass, yet every item scores 0, the reason
    is the finding's message and the view is the memory map."""
    ex = _exercise()
    run = run_exercise(ex, lambda x: _double_on_device(x, free=False), seed=3)
    report = grade_run(ex, run)
    (leak,) = run.of_kind("leak")
    assert report.score == 0
    assert report.gate is not None and leak.message in report.gate
    assert report.result("right").reason == report.gate
    assert report.result("right").view == "memory_map"
    assert report.figure("right") is not None


def test_a_claimed_finding_costs_only_its_item_and_a_waiver_says_why() -> None:
    for ex in (_exercise(claims=("leak",)), _exercise(waives=(("leak", "not this lesson"),))):
        report = grade_run(ex, run_exercise(ex, lambda x: _double_on_device(x, free=False),
                                            seed=3))
        assert report.gate is None, report.text()
        assert report.result("right").passed
        assert not report.result("tidy").passed
    assert report.waived == ["leak findings do not count here: not this lesson"]
    assert "not this lesson" in report.text() and "not this lesson" in report.to_html()


@pytest.mark.parametrize("fn,cause", [
    (lambda x: None, "returned None"),
    (lambda x: 1 / 0, "raised ZeroDivisionError"),
    (lambda x: x * 2, "no ACL call in the trace"),
])
def test_no_result_or_no_acl_call_scores_nothing(fn: Any, cause: str) -> None:
    ex = _exercise(claims=("leak",))
    report = grade_run(ex, run_exercise(ex, fn, seed=3))
    assert report.score == 0 and cause in (report.gate or ""), report.text()
    assert cause in report.text()


def test_provenance_follows_device_copies_back_to_the_operator() -> None:
    ex = _exercise(claims=("leak",))
    run = run_exercise(ex, _double_on_device, seed=3)
    kinds = run.trace.tasks["kind"]
    (row, data), = [(r, d) for r, d in run.landed if int(kinds[r]) == TaskKind.D2H]
    assert data == (_vector(3)[0] * 2).tobytes()
    # the upload is kept too (what the host knew before the device ran)
    assert [d for r, d in run.landed if int(kinds[r]) == TaskKind.H2D] == [_vector(3)[0]
                                                                          .tobytes()]
    assert [k for k, _ in origins(run.trace, row)] == ["kernel"]


def test_laundered_host_values_are_named_as_such() -> None:
    """The operator ran, but the bytes copied back were written by the host over its output:
    the value item fails and says which copy filled the buffer."""
    ex = _exercise(claims=("leak",))
    run = run_exercise(ex, lambda x: _double_on_device(x, launder=True), seed=3)
    ok, why = from_device(run, work=("kernel",))
    assert not ok and "your code filled from the host" in why and "acl.rt.memcpy" in why
    ok, why = from_device(run, np.zeros(4, np.float32), work=("kernel",))
    assert not ok and "not what any device-to-host copy delivered" in why


def _identity_on_device(x: np.ndarray, *, reupload: bool = False) -> Any:
    """The host's answer (2x) uploaded and passed through Add(answer, zeros) on the device;
    ``reupload``: the honest 2x instead, whose result the host then uploads again."""
    acl.init()
    acl.rt.set_device(0)
    n = x.nbytes
    a, z, out = (acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)[0] for _ in range(3))
    first = x.tobytes() if reupload else (x * 2).tobytes()
    second = x.tobytes() if reupload else bytes(n)
    acl.rt.memcpy(a, n, acl.util.bytes_to_ptr(first), n, ACL_MEMCPY_HOST_TO_DEVICE)
    acl.rt.memcpy(z, n, acl.util.bytes_to_ptr(second), n, ACL_MEMCPY_HOST_TO_DEVICE)
    desc = acl.create_tensor_desc(0, [x.size], 2)
    bufs = [acl.create_data_buffer(a, n), acl.create_data_buffer(z, n)]
    outs = [acl.create_data_buffer(out, n)]
    attr = acl.op.create_attr()
    stream, _ = acl.rt.create_stream()
    assert acl.op.execute_v2("Add", [desc, desc], bufs, [desc], outs, attr, stream) == 0
    acl.rt.synchronize_stream(stream)
    host, _ = acl.rt.malloc_host(n)
    acl.rt.memcpy(host, n, out, n, ACL_MEMCPY_DEVICE_TO_HOST)
    y = np.frombuffer(acl.util.ptr_to_bytes(host, n), dtype=np.float32).copy()
    if reupload:  # the next stage of a pipeline takes the result back to the device
        acl.rt.memcpy(z, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE)
    acl.rt.destroy_stream(stream)
    acl.op.destroy_attr(attr)
    for b in (*bufs, *outs):
        acl.destroy_data_buffer(b)
    acl.destroy_tensor_desc(desc)
    for p in (a, z, out):
        acl.rt.free(p)
    acl.rt.free_host(host)
    acl.rt.reset_device(0)
    acl.finalize()
    return y


def test_an_answer_uploaded_and_passed_through_an_identity_operator_does_not_count() -> None:
    """Add(answer, 0): the operator wrote the bytes copied back, but the host had uploaded
    them before it ran; a result uploaded again after the device computed it still counts."""
    ex = _exercise(claims=("leak",))
    run = run_exercise(ex, _identity_on_device, seed=3)
    assert np.array_equal(run.result, _vector(3)[0] * 2)
    ok, why = from_device(run, work=("kernel",))
    assert not ok and "is bytes your code uploaded before an operator ran" in why, why
    honest = run_exercise(ex, lambda x: _identity_on_device(x, reupload=True), seed=3)
    assert np.array_equal(honest.result, _vector(3)[0] * 2)
    assert from_device(honest, work=("kernel",))[0]


def test_widened_results_and_gathered_rows_still_count() -> None:
    """float64 made from the float32 output, and a batch stacked from one copy per row."""
    ex = _exercise(claims=("leak",))
    run = run_exercise(ex, _double_on_device, seed=3)
    y = run.result
    assert from_device(run, y.astype(np.float64), work=("kernel",))[0]
    assert from_device(run, [float(v) for v in y], work=("kernel",))[0]
    assert from_device(run, np.stack([y[:8], y[8:16]]), work=("kernel",))[0]
    assert not from_device(run, y + np.float32(1e-3), work=("kernel",))[0]


#: Every course part, with what its entry returns for the seed when computed on the host.
HOST_ANSWERS = {
    "04.1": lambda s: ex04.expected_041(s),
    "04.2": lambda s: list(ex04.expected_042(s)),
    "04.3": lambda s: list(ex04.expected_043(s)),
    "04.4": lambda s: ex04.expected_044(s),
    "05": lambda s: [a + b for a, b in ex05.make_args(s)[0]],
    "06.1": lambda s: sum(ex06.make_args_1(s)),
    "07.3": lambda s: [x * ex07.make_args_3(s)[1] + ex07.make_args_3(s)[2]
                       for x in ex07.make_args_3(s)[0]],
    "08": lambda s: list(ex08.expected(s)),
}


@pytest.mark.parametrize("part", sorted(HOST_ANSWERS))
def test_no_acl_call_at_all_scores_zero_on_every_part(part: str) -> None:
    """The right values computed on the host, with no ACL call: 0 points, said plainly."""
    ex = get_exercise(part)
    seed = 5

    def on_host(*args: Any) -> Any:
        return HOST_ANSWERS[part](seed)

    report = grade_run(ex, run_exercise(ex, on_host, seed=seed))
    assert report.score == 0, report.text()
    assert "no ACL call in the trace" in (report.gate or ""), report.text()
