"""Exercise 04, the four buffer pitfalls: one graded part per pitfall, all on LeNet-5.

The notebook is ``exercises/04_buffer_pitfalls.ipynb``. Every part runs the zoo's LeNet-5
(``acl_lab.zoo.path("lenet5")``: one 1x1x28x28 float32 image in, 10 class probabilities
out); the starter of each part is a plausible program with one of the pitfalls, and the
rubric reads what went wrong from the trace:

* ``04.1`` ``classify(model_path, image)``: the input buffer sized from a float64 array
  (``image / 255.0``) instead of the model's input: a ``size_mismatch`` and wrong output.
* ``04.2`` ``classify_requests(model_path, requests)``: 100 requests, some malformed (too
  many values, so ``acl.rt.memcpy`` returns 107000); the starter returns early without
  freeing its device buffer: an error-path ``leak``.
* ``04.3`` ``classify_in_threads(model_path, images, n_workers)``: workers in
  ``threading.Thread`` with no current context (the starter sets it in the main thread):
  107002 in every worker, ``context_not_set``.
* ``04.4`` ``classify_batch_async(model_path, images)``: ``memcpy_async`` from a pageable
  ``bytes`` buffer and into packed 40-byte result slots of one pinned block:
  ``pageable_async_copy`` and ``misaligned_host_buffer``.

Arguments are drawn from the run's seed by ``make_args``; predicates draw them again from
``run.seed`` and compute the expected probabilities with the model's own graph executor on
the host (``OmModel.run``, numpy kernels), so a hard-coded answer cannot pass.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import zoo
from ...constants import ErrorCode, MemcpyKind, explain
from ...runtime.om import OmModel, load_om
from ..provenance import device_result
from ..rubric import THREADED_SCHEDULES, Exercise, Hidden, Item, Run, Verdict, register
from .ex05 import finding_head

MODEL = "lenet5"
#: LeNet-5's input: one image of 28x28 float32 values (3136 bytes).
IMAGE_SHAPE = (1, 1, 28, 28)
N_CLASSES = 10
#: Requests of part 2, and the lengths of its malformed ones (a 32x32 image, an RGB image).
N_REQUESTS = 100
BAD_LENGTHS = (32 * 32, 3 * 28 * 28)
#: Images and worker threads of part 3; images of part 4.
N_THREAD_IMAGES = 8
N_WORKERS = 4
N_BATCH = 8
#: Sizes of the hidden runs ``acl-lab grade`` makes (never the visible ones above): requests
#: of part 2, images and workers of part 3, batch of part 4 (ranges, drawn per run).
HIDDEN_REQUESTS = (40, 80)
HIDDEN_THREAD_IMAGES = (9, 21)
HIDDEN_WORKERS = (5, 6, 7)
HIDDEN_BATCH = (3, 7)
#: Tolerance against the host forward pass (same kernels; only float32 rounding differs).
RTOL, ATOL = 1e-4, 1e-5

_FREED = re.compile(r"^(.*?\bfreed on (\d+) of (\d+) iterations)")
_LEAKING = re.compile(r"In the leaking iterations (.*?), and the code skipped the free\.")


# ------------------------------------------------------------------------------ helpers


@functools.lru_cache(maxsize=1)
def _model() -> OmModel:
    """LeNet-5 as a host-side graph (for the expected outputs)."""
    return load_om(zoo.path(MODEL))


def forward(images: np.ndarray) -> np.ndarray:
    """LeNet-5's class probabilities for each image, computed on the host: ``(n, 10)``.

    Args:
        images: ``n`` images of 784 values each (any shape with ``n * 784`` elements),
            converted to float32 first.
    """
    x = np.ascontiguousarray(images, dtype=np.float32).reshape(-1, *IMAGE_SHAPE[1:])
    model = _model()
    return np.stack([model.run([img.reshape(IMAGE_SHAPE)])[0].ravel() for img in x])


def _code(code: int) -> str:
    """``107002 (ACL_ERROR_RT_CONTEXT_NULL: Current context is null.)``."""
    info = explain(code)
    return f"{code} ({info.name}: {info.meaning.rstrip('.')})"


def _as_probs(value: Any, what: str) -> tuple[np.ndarray | None, str]:
    """``value`` as 10 float probabilities, or None and why not."""
    if value is None:
        return None, f"{what} is None"
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None, f"{what} is a {type(value).__name__}, not an array of numbers"
    if arr.size != N_CLASSES:
        return None, f"{what} has {arr.size} values, not {N_CLASSES} class probabilities"
    return arr.ravel(), ""


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return bool(np.allclose(got, want, rtol=RTOL, atol=ATOL))


def _compare_list(value: Any, want: list[np.ndarray | None], what: str) -> Verdict:
    """Check a list of per-item results (``None`` where ``want`` is None)."""
    if isinstance(value, np.ndarray) and value.ndim >= 1:
        value = list(value)
    if not isinstance(value, (list, tuple)):
        return False, (f"the function returned a {type(value).__name__}; expected a list of "
                       f"{len(want)} results, one per {what}")
    if len(value) != len(want):
        return False, f"the function returned {len(value)} results for {len(want)} {what}s"
    wrong: list[str] = []
    for i, (got, exp) in enumerate(zip(value, want, strict=True)):
        if exp is None:
            if got is not None:
                wrong.append(f"{what} {i} is malformed and should give None, got "
                             f"{type(got).__name__}")
            continue
        arr, why = _as_probs(got, f"the result of {what} {i}")
        if arr is None:
            wrong.append(why)
        elif not _close(arr, exp):
            wrong.append(f"{what} {i}: probabilities differ from the model's by up to "
                         f"{float(np.max(np.abs(arr - exp))):.3g}")
    if wrong:
        more = f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else ""
        return False, (f"{len(wrong)} of {len(want)} results are wrong: "
                       + "; ".join(wrong[:3]) + more)
    return True, f"all {len(want)} results match the model's probabilities"


def _calls_by_thread(run: Run) -> dict[int, list[int]]:
    calls = run.trace.calls
    names = [run.trace.string(int(n)) for n in calls["name"]]
    out: dict[int, list[int]] = defaultdict(list)
    for cid, t in enumerate(calls["thread"].tolist()):
        if not names[cid].startswith("acl_lab."):
            out[int(t)].append(cid)
    return dict(out)


def _main_thread(run: Run) -> int:
    """The thread that called ``acl.init`` (the one the function started in)."""
    inits = run.trace.calls_named("acl.init")
    cid = int(inits[0]) if len(inits) else 0
    return int(run.trace.calls["thread"][cid]) if run.trace.calls.rows else 0


def _thread_label(run: Run, t: int) -> str:
    return f"thread {t} ({run.trace.string(int(run.trace.threads['name'][t]))})"


# ------------------------------------------------------------------------------ 04.1


def args_041(seed: int) -> tuple[str, np.ndarray]:
    """``(model_path, image)``: a 28x28 uint8 image (0-255 pixels) drawn from ``seed``."""
    rng = np.random.default_rng([4, 1, seed])
    image = rng.integers(0, 256, size=(28, 28), dtype=np.uint8)
    return zoo.path(MODEL), image


def expected_041(seed: int) -> np.ndarray:
    """The probabilities of part 1: the image scaled to [0, 1] as float32."""
    _, image = args_041(seed)
    return forward(image / np.float32(255.0))[0]


def _misread_041(seed: int) -> np.ndarray:
    """What the model computes when it reads the float64 image's first bytes as float32."""
    _, image = args_041(seed)
    raw = np.frombuffer((image / 255.0).tobytes()[: 28 * 28 * 4], dtype=np.float32)
    return forward(raw)[0]


def _correct_041(run: Run) -> Verdict:
    why = run.no_result()
    if why:
        return False, why
    got, why = _as_probs(run.result, "the result")
    if got is None:
        return False, why
    want = expected_041(run.seed)
    if _close(got, want):
        return True, "the probabilities match LeNet-5 on the scaled image"
    if _close(got, _misread_041(run.seed)):
        return False, ("the probabilities are what LeNet-5 gives when it reads the first "
                       "3136 bytes of your float64 array as float32 values: the model got "
                       "garbage, not the image")
    _, image = args_041(run.seed)
    if _close(got, forward(image.astype(np.float32))[0]):
        return False, "the probabilities are those of the unscaled image (0-255, not 0-1)"
    return False, (f"the probabilities differ from LeNet-5's on the scaled image by up to "
                   f"{float(np.max(np.abs(got - want))):.3g}")


def _no_size_mismatch(run: Run) -> Verdict:
    found = run.of_kind("size_mismatch")
    if found:
        return False, "; ".join(finding_head(f.message) for f in found)
    if not len(run.trace.calls_named("acl.mdl.execute")):
        return False, "no acl.mdl.execute in the trace: the model never ran"
    return True, "every buffer the model read matched its input and output sizes"


def _execute_ok(run: Run) -> Verdict:
    rets = run.rets("acl.mdl.execute")
    if not rets:
        return False, "no acl.mdl.execute in the trace: the model never ran"
    bad = [r for r in rets if r != 0]
    if bad:
        return False, f"acl.mdl.execute returned {_code(bad[0])}"
    return True, "acl.mdl.execute returned 0"


register(Exercise(
    id="04.1",
    title="input size mismatch",
    entry="classify",
    make_args=args_041,
    items=(
        Item("correct", "returns LeNet-5's 10 class probabilities for the image scaled to "
             "[0, 1]", 2, device_result(_correct_041, work=("model",)),
             "Print the dtype and nbytes of the array you copy to the device, and compare "
             "them with what the model desc says about input 0.",
             # the timeline marks the size_mismatch a wrong dtype makes at the execute (the
             # device memory map shows no dtype)
             "timeline"),
        Item("no_size_mismatch", "no size_mismatch finding: every model buffer has the size "
             "the model desc gives", 2, _no_size_mismatch,
             "Where does the size of your input buffer come from: the data, or the model?",
             "timeline", claims=("size_mismatch",)),
        Item("execute_ok", "acl.mdl.execute returns 0", 1, _execute_ok,
             "Decode the code with acl_lab.explain(code).", "timeline",
             # the starter's execute already returns 0: the point is for the fixed buffer
             counts_with=("correct", "no_size_mismatch")),
    ),
))


# ------------------------------------------------------------------------------ 04.2


def args_042(seed: int, hidden: bool = False) -> tuple[str, list[np.ndarray]]:
    """``(model_path, requests)``: 100 flattened float32 images, 10-20 of them malformed
    (``hidden``: 40 to 79 requests, a tenth to a fifth of them malformed)."""
    rng = np.random.default_rng([4, 2, seed, 1] if hidden else [4, 2, seed])
    count = int(rng.integers(*HIDDEN_REQUESTS)) if hidden else N_REQUESTS
    n_bad = int(rng.integers(count // 10, count // 5 + 1)) if hidden else int(
        rng.integers(10, 21))
    bad = set(rng.choice(count, size=n_bad, replace=False).tolist())
    requests = []
    for i in range(count):
        n = int(rng.choice(BAD_LENGTHS)) if i in bad else 28 * 28
        requests.append(rng.random(n, dtype=np.float32))
    return zoo.path(MODEL), requests


def _hidden_args_042(seed: int) -> tuple[str, list[np.ndarray]]:
    return args_042(seed, hidden=True)


@functools.lru_cache(maxsize=4)
def expected_042(seed: int, hidden: bool = False) -> tuple[np.ndarray | None, ...]:
    """Per request: the probabilities, or None for a malformed request."""
    _, requests = args_042(seed, hidden)
    good = [i for i, x in enumerate(requests) if x.size == 28 * 28]
    probs = forward(np.stack([requests[i] for i in good]))
    out: list[np.ndarray | None] = [None] * len(requests)
    for k, i in enumerate(good):
        out[i] = probs[k]
    return tuple(out)


def _n_bad_042(seed: int, hidden: bool = False) -> int:
    return sum(1 for e in expected_042(seed, hidden) if e is None)


def _no_leak_042(run: Run) -> Verdict:
    found = run.of_kind("leak")
    n_bad = _n_bad_042(run.seed, run.hidden)
    if not found:
        if not len(run.trace.calls_named("acl.rt.malloc")):
            return False, "no acl.rt.malloc in the trace: nothing ran on the device"
        count = len(expected_042(run.seed, run.hidden))
        return True, (f"no leaks: every buffer of the {count} requests was freed, "
                      f"including the {n_bad} malformed ones")
    parts = []
    for f in found:
        m = _FREED.match(f.message)
        if m:
            text = (f"freed on the happy path only: {m.group(1)}, so "
                    f"{int(m.group(3)) - int(m.group(2))} were never freed")
            cause = _LEAKING.search(f.message)
            if cause:
                text += (f". In the leaking iterations, {cause.group(1)}, and the function "
                         "returned without freeing")
            parts.append(text)
        else:
            parts.append(finding_head(f.message))
    return False, "; ".join(parts)


def _correct_042(run: Run) -> Verdict:
    why = run.no_result()
    if why:
        return False, why
    return _compare_list(run.result, list(expected_042(run.seed, run.hidden)), "request")


def _error_path_042(run: Run) -> Verdict:
    n_bad = _n_bad_042(run.seed, run.hidden)
    calls = run.trace.calls
    failed = np.nonzero(calls["ret"] != 0)[0].tolist()
    by: Counter[tuple[str, int]] = Counter(
        (run.trace.call_name(c), int(calls["ret"][c])) for c in failed)
    listing = ", ".join(f"{name} returned {code} ({n} times)" if n > 1
                        else f"{name} returned {code} (once)"
                        for (name, code), n in sorted(by.items()))
    if len(failed) < n_bad:
        seen = f" ({listing})" if listing else ""
        return False, (f"{n_bad} requests are malformed but the trace shows only "
                       f"{len(failed)} failed ACL calls{seen}: the malformed requests did "
                       "not go through the error path")
    return True, f"{n_bad} malformed requests went through the error path: {listing}"


register(Exercise(
    id="04.2",
    title="device memory leak on an error path",
    entry="classify_requests",
    make_args=args_042,
    items=(
        Item("no_leak", f"no leak finding after the {N_REQUESTS} requests, the failing ones "
             "included", 3, _no_leak_042,
             "Follow one malformed request through your code on the memory map: which "
             "allocation is still live when the function returns?", "memory_map",
             claims=("leak",)),
        Item("correct", "good requests give LeNet-5's probabilities, malformed ones None", 2,
             device_result(_correct_042, work=("model",)),
             "Each good request is one image of 784 float32 values; check what your function "
             "returns for it.", "timeline", counts_with=("no_leak",)),
        Item("error_path", "the malformed requests still reach ACL and fail there (the trace "
             "shows their error codes)", 1, _error_path_042,
             "Keep the ACL calls that reject the malformed requests: the exercise is about "
             "cleaning up after them, not about avoiding them.", "timeline",
             counts_with=("no_leak",)),
    ),
    hidden=(Hidden(
        "other_sizes", f"{HIDDEN_REQUESTS[0]} to {HIDDEN_REQUESTS[1] - 1} requests instead of "
        f"{N_REQUESTS}, from a seed drawn by the grader", _hidden_args_042, (
            Item("sizes_no_leak", "no leak finding on a request list of another length", 1,
                 _no_leak_042, "Does anything in your cleanup depend on how many requests "
                 "there are, or which of them fail?", "memory_map", claims=("leak",)),
            Item("sizes_correct", "the right result or None for every request of that list",
                 1, device_result(_correct_042, work=("model",)),
                 "Return one entry per request, whatever the number of requests.",
                 "timeline", counts_with=("sizes_no_leak",)),
        )),),
))


# ------------------------------------------------------------------------------ 04.3


def args_043(seed: int, hidden: bool = False) -> tuple[str, np.ndarray, int]:
    """``(model_path, images, n_workers)``: 8 float32 images (8, 28, 28) and 4 workers
    (``hidden``: 9 to 20 images over 5, 6 or 7 workers)."""
    rng = np.random.default_rng([4, 3, seed, 1] if hidden else [4, 3, seed])
    n = int(rng.integers(*HIDDEN_THREAD_IMAGES)) if hidden else N_THREAD_IMAGES
    workers = int(rng.choice(HIDDEN_WORKERS)) if hidden else N_WORKERS
    images = rng.random((n, 28, 28), dtype=np.float32)
    return zoo.path(MODEL), images, workers


def _hidden_args_043(seed: int) -> tuple[str, np.ndarray, int]:
    return args_043(seed, hidden=True)


def _workers_ok(run: Run) -> Verdict:
    main = _main_thread(run)
    by_thread = _calls_by_thread(run)
    workers = sorted(t for t in by_thread if t != main)
    n_workers = args_043(run.seed, run.hidden)[2]
    if len(workers) < n_workers:
        return False, (f"{len(workers)} threads other than the one that called acl.init made "
                       f"ACL calls; the work must run in the {n_workers} worker threads "
                       "the function was given")
    rets = run.trace.calls["ret"]
    failing: dict[int, list[int]] = {t: [c for c in by_thread[t] if int(rets[c]) != 0]
                                     for t in workers}
    failing = {t: cs for t, cs in failing.items() if cs}
    if not failing:
        total = sum(len(by_thread[t]) for t in workers)
        return True, f"all {total} calls of the {len(workers)} worker threads returned 0"
    by_code: Counter[tuple[int, str]] = Counter(
        (int(rets[c]), run.trace.call_name(c)) for cs in failing.values() for c in cs)
    listing = "; ".join(f"{name} returned {_code(code)} {n} time{'s' if n > 1 else ''}"
                        for (code, name), n in sorted(by_code.items()))
    total = sum(len(cs) for cs in failing.values())
    return False, (f"{total} calls failed in {len(failing)} of the {len(workers)} worker "
                   f"threads: {listing}")


def _no_context_not_set(run: Run) -> Verdict:
    found = run.of_kind("context_not_set")
    wrong = run.of_kind("wrong_context")
    if not found:
        if wrong:
            return False, "; ".join(finding_head(f.message) for f in wrong)
        return True, "every thread had a current context for its calls"
    main = _main_thread(run)
    calls = run.trace.calls
    sets = [int(c) for c in run.trace.calls_named("acl.rt.set_context")
            if int(calls["ret"][c]) == 0]
    setters = {int(calls["thread"][c]) for c in sets}
    failing = sorted({t for f in found for t in f.ids.get("threads", ())})
    if sets and setters <= {main} and not setters & set(failing):
        fails = [c for f in found for c in f.calls
                 if int(calls["ret"][c]) == ErrorCode.ACL_ERROR_RT_CONTEXT_NULL]
        first = (f" (the first: {run.trace.call_name(min(fails))} at {run.site(min(fails))})"
                 if fails else "")
        return False, (f"context bound in the main thread instead of the worker: "
                       f"acl.rt.set_context at {run.site(sets[0])} ran in "
                       f"{_thread_label(run, main)}, while the {len(failing)} worker threads "
                       f"never set a context, so their calls returned 107002{first}")
    return False, "; ".join(finding_head(f.message) for f in found)


@functools.lru_cache(maxsize=4)
def expected_043(seed: int, hidden: bool = False) -> tuple[np.ndarray, ...]:
    """The probabilities of each image of part 3."""
    _, images, _ = args_043(seed, hidden)
    return tuple(forward(images))


def _correct_043(run: Run) -> Verdict:
    why = run.no_result()
    if why:
        return False, why
    return _compare_list(run.result, list(expected_043(run.seed, run.hidden)), "image")


register(Exercise(
    id="04.3",
    schedules=THREADED_SCHEDULES,
    title="worker thread with no context",
    entry="classify_in_threads",
    make_args=args_043,
    items=(
        Item("workers_ok", "every ACL call made in the worker threads returns 0", 2,
             _workers_ok,
             "Decode the codes with acl_lab.explain(code), and look at which thread made "
             "each failing call on the timeline.", "timeline"),
        Item("no_context_not_set", "no context_not_set (or wrong_context) finding", 2,
             _no_context_not_set,
             "Which thread runs the worker function, and what does that thread have as its "
             "current context?", "timeline", claims=("context_not_set", "wrong_context")),
        Item("correct", "each image gets LeNet-5's probabilities at its own index", 2,
             device_result(_correct_043, work=("model",)),
             "Results are written by the workers; an image whose calls failed keeps None.",
             "timeline"),
    ),
    hidden=(Hidden(
        "other_sizes", f"{HIDDEN_THREAD_IMAGES[0]} to {HIDDEN_THREAD_IMAGES[1] - 1} images over "
        f"{', '.join(map(str, HIDDEN_WORKERS[:-1]))} or {HIDDEN_WORKERS[-1]} workers instead "
        f"of {N_THREAD_IMAGES} over "
        f"{N_WORKERS}, from a seed drawn by the grader", _hidden_args_043, (
            Item("sizes_workers_ok", "with another number of images and workers, every ACL "
                 "call of the worker threads returns 0", 1, _workers_ok,
                 "Use the n_workers the function is given, and give every worker thread a "
                 "current context.", "timeline",
                 claims=("context_not_set", "wrong_context")),
            Item("sizes_correct", "each of those images gets LeNet-5's probabilities at its "
                 "own index", 1, device_result(_correct_043, work=("model",)),
                 "Worker k takes images k, k + n_workers, ... up to len(images).",
                 "timeline"),
        )),),
))


# ------------------------------------------------------------------------------ 04.4


def args_044(seed: int, hidden: bool = False) -> tuple[str, np.ndarray]:
    """``(model_path, images)``: a batch of 8 float32 images (8, 1, 28, 28) (``hidden``:
    3 to 6 images)."""
    rng = np.random.default_rng([4, 4, seed, 1] if hidden else [4, 4, seed])
    n = int(rng.integers(*HIDDEN_BATCH)) if hidden else N_BATCH
    images = rng.random((n, 1, 28, 28), dtype=np.float32)
    return zoo.path(MODEL), images


def _hidden_args_044(seed: int) -> tuple[str, np.ndarray]:
    return args_044(seed, hidden=True)


@functools.lru_cache(maxsize=4)
def expected_044(seed: int, hidden: bool = False) -> np.ndarray:
    """The ``(n, 10)`` probabilities of the batch of part 4."""
    _, images = args_044(seed, hidden)
    return forward(images)


def _finding_free(kind: str, ok: str) -> Callable[[Run], Verdict]:
    """An item predicate: no finding of ``kind``, and some async copy to judge."""

    def check(run: Run) -> Verdict:
        found = run.of_kind(kind)
        if found:
            return False, "; ".join(finding_head(f.message) for f in found)
        if not len(run.trace.calls_named("acl.rt.memcpy_async")):
            return False, "no acl.rt.memcpy_async in the trace: nothing was copied async"
        return True, ok

    return check


def _correct_044(run: Run) -> Verdict:
    why = run.no_result()
    if why:
        return False, why
    want = expected_044(run.seed, run.hidden)
    n = len(want)
    try:
        got = np.asarray(run.result, dtype=np.float64)
    except (TypeError, ValueError):
        return False, (f"the function returned a {type(run.result).__name__}, not an array "
                       f"of {n}x{N_CLASSES} probabilities")
    if got.size != want.size:
        return False, (f"the result has {got.size} values; expected {n} rows of "
                       f"{N_CLASSES} probabilities, one per image of the batch")
    got = got.reshape(want.shape)
    rows = [i for i in range(n) if not _close(got[i], want[i])]
    if rows:
        return False, (f"{len(rows)} of {n} images have wrong probabilities (images "
                       f"{rows[:8]}; largest difference "
                       f"{float(np.max(np.abs(got[rows] - want[rows]))):.3g})")
    return True, f"all {n} images match LeNet-5's probabilities"


def _pinned_and_aligned(run: Run) -> Verdict:
    """Both host-memory rules of part 4 at once (the hidden run's item)."""
    for kind, ok in (("pageable_async_copy", "pinned"), ("misaligned_host_buffer", "aligned")):
        passed, why = _finding_free(kind, ok)(run)
        if not passed:
            return False, why
    return True, "every async copy's host memory was page-locked and 64-byte aligned"


_H2D, _D2H = MemcpyKind.HOST_TO_DEVICE, MemcpyKind.DEVICE_TO_HOST


def _copies_async(run: Run) -> Verdict:
    trace = run.trace
    rets = trace.calls["ret"]
    kinds: Counter[int] = Counter()
    for c in trace.calls_named("acl.rt.memcpy_async").tolist():
        args = trace.call_args(c)
        if int(rets[c]) == 0 and len(args) >= 5 and isinstance(args[4], int):
            kinds[args[4]] += 1
    sync = [c for c in trace.calls_named("acl.rt.memcpy").tolist()
            if len(a := trace.call_args(c)) >= 5 and a[4] in (_H2D, _D2H)]
    if sync:
        return False, (f"{len(sync)} host<->device copies are synchronous (acl.rt.memcpy, "
                       f"the first at {run.site(sync[0])}); the batch must be copied with "
                       "acl.rt.memcpy_async on the stream")
    missing = [name for kind, name in ((_H2D, "host-to-device"), (_D2H, "device-to-host"))
               if not kinds[kind]]
    if missing:
        return False, (f"no successful acl.rt.memcpy_async {' or '.join(missing)} copy in "
                       "the trace")
    return True, (f"{kinds[_H2D]} host-to-device and {kinds[_D2H]} device-to-host copies "
                  "queued with acl.rt.memcpy_async")


register(Exercise(
    id="04.4",
    title="host buffer not pinned or not aligned for an async copy",
    entry="classify_batch_async",
    make_args=args_044,
    items=(
        Item("pinned", "no pageable_async_copy finding: every async copy uses page-locked "
             "host memory", 2, _finding_free(
                 "pageable_async_copy", "every async copy used page-locked host memory"),
             "Where does the host memory of each memcpy_async come from? Only one kind of "
             "host memory is page-locked.", "timeline", claims=("pageable_async_copy",)),
        Item("aligned", "no misaligned_host_buffer finding: every async copy's host address "
             "is 64-byte aligned", 2, _finding_free(
                 "misaligned_host_buffer", "every async copy's host address was 64-byte "
                 "aligned"),
             "Print each host address you pass to memcpy_async modulo 64.",
             # the timeline marks the misaligned copy; the device memory map shows no host
             # address
             "timeline", claims=("misaligned_host_buffer",)),
        Item("correct", "returns LeNet-5's probabilities for each image of the batch", 2,
             device_result(_correct_044, work=("model",)),
             "Row i of the result must come from the output slot image i was copied to.",
             "timeline", counts_with=("pinned", "aligned")),
        Item("async", "the copies stay asynchronous: acl.rt.memcpy_async on the stream, both "
             "ways", 1, _copies_async,
             "Queue the copies and the executions on the stream and synchronize once.",
             "timeline", counts_with=("pinned", "aligned")),
    ),
    hidden=(Hidden(
        "other_sizes", f"a batch of {HIDDEN_BATCH[0]} to {HIDDEN_BATCH[1] - 1} images instead "
        f"of {N_BATCH}, from a seed drawn by the grader", _hidden_args_044, (
            Item("sizes_pinned_aligned", "with another batch size, every async copy uses "
                 "pinned, 64-byte aligned host memory", 1, _pinned_and_aligned,
                 "Size the host buffers from the batch you are given.", "timeline",
                 claims=("pageable_async_copy", "misaligned_host_buffer")),
            Item("sizes_correct", "LeNet-5's probabilities for each image of that batch", 1,
                 device_result(_correct_044, work=("model",)),
                 "One row per image of the batch you are given.", "timeline",
                 counts_with=("sizes_pinned_aligned",)),
        )),),
))
