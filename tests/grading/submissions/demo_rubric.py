"""A small rubric used only by the grading tests (registered through ACL_LAB_GRADING_EXTRA).

Exercise ``90.1`` (``round_trip(x)``): copy a float32 array to the device and back and return
the copy, freeing what was allocated. Exercise ``90.2`` (``scale(x, k)``): return ``x * k``.
The arguments are drawn from the run's seed, so a hard-coded answer fails ``correct``.
"""

from __future__ import annotations

import numpy as np

from acl_lab.grading.rubric import Exercise, Item, Run, Verdict, register


def round_trip_args(seed: int) -> tuple[np.ndarray]:
    """The argument of ``round_trip`` for ``seed``: a float32 vector of 8 to 63 values."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(int(rng.integers(8, 64))).astype(np.float32),)


def scale_args(seed: int) -> tuple[np.ndarray, int]:
    """The arguments of ``scale`` for ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.integers(-100, 100, size=int(rng.integers(4, 32))), int(rng.integers(2, 9))


def _same(run: Run, expected: np.ndarray) -> Verdict:
    if run.error is not None:
        return False, f"the function did not return a value: {run.error}"
    got = run.result
    if not isinstance(got, np.ndarray):
        return False, f"expected a numpy array, got {type(got).__name__}"
    if got.shape != expected.shape or not np.array_equal(got, expected):
        return False, f"the returned array (shape {got.shape}) is not the expected one"
    return True, "the returned array is right"


def _round_trip_correct(run: Run) -> Verdict:
    return _same(run, round_trip_args(run.seed)[0])


def _round_trip_on_device(run: Run) -> Verdict:
    rets = run.rets("acl.rt.memcpy")
    ok = sum(1 for r in rets if r == 0)
    if ok < 2:
        return False, f"{ok} successful acl.rt.memcpy call(s) of {len(rets)}; a round trip " \
                      "needs two"
    return True, "the data went to the device and back"


def _round_trip_no_leak(run: Run) -> Verdict:
    leaks = run.of_kind("leak")
    if leaks:
        return False, f"{len(leaks)} leak finding(s)"
    return True, "everything allocated was freed"


def _scale_correct(run: Run) -> Verdict:
    x, k = scale_args(run.seed)
    return _same(run, x * k)


ROUND_TRIP = register(Exercise(
    id="90.1", title="Round trip through device memory", entry="round_trip",
    items=(
        Item("correct", "returns the input values unchanged", 2, _round_trip_correct,
             "copy back what you copied in"),
        Item("on_device", "copies host to device and back with acl.rt.memcpy", 1,
             _round_trip_on_device, "two memcpy calls, one each way", view="timeline"),
        Item("no_leak", "frees every allocation", 1, _round_trip_no_leak,
             "free the device and host buffers", view="memory_map", claims=("leak",)),
    ),
    make_args=round_trip_args, time_limit=10.0, needs_device=False))

SCALE = register(Exercise(
    id="90.2", title="Scale an array", entry="scale",
    items=(Item("correct", "returns x * k", 1, _scale_correct, "multiply"),),
    make_args=scale_args, time_limit=10.0, needs_device=False))
