"""Figures the course text quotes from a run (µs, ms, bytes, ratios, codes) agree with the run.

Each ``Quote`` names a notebook, a pattern that finds the figure in its markdown (group 1 is
the number as written), the code cell after which the figure can be read from the
notebook's own variables, and how to read it. The test runs the notebook's code cells in
order (in a copy of its folder, as a kernel would) and compares: the number comes from the
markdown, so changing the cost model breaks this test instead of silently making the text
wrong, and rewording the text without updating its quote fails too (each pattern must match
exactly once). Figures a notebook already prints from its own run (03's LeNet-5 time, 06's
event timings) need no quote unless the text also states them.

Audited: notebooks 00-08 (09 quotes no figure of a run). Not quoted here, on purpose: the
article's published figures (08's ladder table, 45% / 85% utilisation), the profile's and
the host profile's documented rates the text cites as inputs (20 GB/s, 150 Mpixel/s), and
sizes that follow from shapes alone (03's 64 and 32 bytes, 04's 25088 bytes).
"""

from __future__ import annotations

import json
import linecache
import math
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acl_lab.grading.notebook import cell_source, strip_ipython
from acl_lab.runtime.session import Session, current_session, set_current_session
from acl_lab.tracer.schema import TASK_KINDS

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
Value = float | list[float]


@dataclass(frozen=True)
class Quote:
    """One figure the text quotes, and where the run shows it.

    ``compare``: ``"about"`` (within ``rel`` of the quoted number), ``"below"`` (every value
    under it) or ``"at_most"``; ``scale`` turns the quoted number into the value's unit.
    """

    notebook: str
    pattern: str
    after: str
    value: Callable[[dict[str, Any]], Value]
    compare: str = "about"
    rel: float = 0.1
    scale: float = 1.0

    @property
    def id(self) -> str:
        """A readable test id."""
        return f"{self.notebook[:2]}:{self.pattern[:40]}"


def _durations_us(trace: Any, kind: str, name: str | None = None) -> np.ndarray:
    """Device time (µs) of the trace's tasks of ``kind`` (queued by ``name`` calls)."""
    t = trace.tasks
    rows = (t["kind"] == TASK_KINDS.index(kind)) & (t["start_ns"] >= 0) & (t["end_ns"] >= 0)
    if name is not None:
        calls = set(trace.calls_named(name).tolist())
        rows &= np.isin(t["call"], list(calls))
    return np.asarray((t["end_ns"][rows] - t["start_ns"][rows]) / 1e3, dtype=float)


def _steady_us(trace: Any) -> float:
    """Mean interval (µs) between the first and the last result copied back (D2H ends): the
    steady rate of a pipeline, without the time to fill it."""
    ends = np.sort(trace.tasks["end_ns"][trace.tasks["kind"] == TASK_KINDS.index("D2H")])
    return float(ends[-1] - ends[0]) / (len(ends) - 1) / 1e3


def _three_slots(ns: dict[str, Any]) -> Any:
    """The trace of 06's pipeline with three slots (the notebook keeps only the last run)."""
    return ns["measure"](ns["run_pipelined"], n_slots=3)[2]


def _call_us(trace: Any, name: str) -> list[float]:
    c = trace.calls
    return [float(c["end_ns"][i] - c["start_ns"][i]) / 1e3 for i in trace.calls_named(name)]


def _all_calls_us(trace: Any) -> np.ndarray:
    c = trace.calls
    return np.asarray((c["end_ns"] - c["start_ns"]) / 1e3, dtype=float)


def _alloc(trace: Any, column: str, requested: int, policy: int | None = None) -> list[float]:
    a = trace.allocs
    rows = a["requested"] == requested
    if policy is not None:
        rows &= a["policy"] == policy
    return [float(v) for v in a[column][rows]]


def _rets(trace: Any, name: str) -> list[float]:
    return [float(trace.calls["ret"][i]) for i in trace.calls_named(name)
            if int(trace.calls["ret"][i]) != 0]


def _h2d_gbps(trace: Any) -> list[float]:
    t, a = trace.tasks, trace.accesses
    out = []
    for i in np.nonzero(t["kind"] == TASK_KINDS.index("H2D"))[0]:
        nbytes = int(a["length"][a["task"] == i].max())
        out.append(nbytes / float(t["end_ns"][i] - t["start_ns"][i]))
    return out


MIB = 1 << 20
HUGE_FIRST, HUGE_ONLY = 0, 1
QUOTES = (
    # ---------------------------------------------------------------- 00: the first trace
    Quote("00_welcome_first_trace.ipynb", r"`execute_v2` returned after about (\d+) µs",
          "longest = int(np.argmax(took))",
          lambda ns: _call_us(ns["trace"], "acl.op.execute_v2"), rel=0.25),
    Quote("00_welcome_first_trace.ipynb", r"Most calls cost (\d+) µs of virtual time",
          "longest = int(np.argmax(took))",
          lambda ns: float(np.median(_all_calls_us(ns["trace"]))), rel=0.25),
    # ------------------------------------------------------ 01: devices, contexts, streams
    Quote("01_devices_contexts_streams.ipynb",
          r"Before `set_device` the thread had no context: `\(0, (\d+)\)`",
          "before = acl.rt.get_context()", lambda ns: float(ns["before"][1]), rel=0.0),
    Quote("01_devices_contexts_streams.ipynb",
          r"Before `set_device` the thread had no context: `\((\d+), \d+\)`",
          "before = acl.rt.get_context()", lambda ns: float(ns["before"][0]), rel=0.0),
    # ---------------------------------------------------------------------- 02: memory
    Quote("02_memory.ipynb", r"`malloc\(1\)` takes \*\*(\d+) bytes\*\*",
          "requests = [1, 32, 33, 100, 1000]",
          lambda ns: _alloc(ns["trace"], "size", 1), rel=0.0),
    Quote("02_memory.ipynb", r"the 100-byte request reserves a whole (\d+) MiB page",
          "for n in (100, 3 * MiB):",
          lambda ns: _alloc(ns["trace"], "reserved", 100, HUGE_ONLY), rel=0.0, scale=MIB),
    Quote("02_memory.ipynb", r"3 MiB reserves two pages \((\d+) MiB\) under both huge-page",
          "for n in (100, 3 * MiB):",
          lambda ns: _alloc(ns["trace"], "reserved", 3 * MIB, HUGE_ONLY)
          + _alloc(ns["trace"], "reserved", 3 * MIB, HUGE_FIRST), rel=0.0, scale=MIB),
    Quote("02_memory.ipynb", r"\(`acl.rt.malloc_host` / `aclrtMallocHost`\): about (\d\.\d)x",
          "pageable = acl.util.numpy_to_ptr(data)",
          lambda ns: ns["took"]["pageable"] / ns["took"]["pinned"], rel=0.05),
    # ------------------------------------------------------------- 04: buffer pitfalls
    Quote("04_buffer_pitfalls.ipynb", r"Three 4 MiB copies at 20 GB/s are about (0\.\d+) ms",
          "ms_pinned = upload(host)", lambda ns: ns["ms_pinned"], rel=0.05),
    Quote("04_buffer_pitfalls.ipynb", r"staging pageable memory costs about (\d+)% more",
          "ms_pinned = upload(host)",
          lambda ns: 100 * (ns["ms_pageable"] / ns["ms_pinned"] - 1), rel=0.15),
    Quote("04_buffer_pitfalls.ipynb", r"\(hover one: about (\d+) GB/s instead of 20\)",
          "ms_pinned = upload(host)", lambda ns: _h2d_gbps(ns["trace_pageable"]), rel=0.1),
    Quote("04_buffer_pitfalls.ipynb", r"\(hover one: about \d+ GB/s instead of (\d+)\)",
          "ms_pinned = upload(host)", lambda ns: _h2d_gbps(ns["trace_pinned"]), rel=0.1),
    # --------------------------------------------------------------- 05: threads
    Quote("05_multi_context_threading.ipynb",
          r"its first call that needs a context \(`create_stream`, (\d+)\)",
          "def worker_a(ctx, results):",
          lambda ns: _rets(ns["trace"], "acl.rt.create_stream"), rel=0.0),
    Quote("05_multi_context_threading.ipynb",
          r"queues work on a stream of another context and returns (\d+)",
          "def worker_a(ctx, results):",
          lambda ns: _rets(ns["trace"], "acl.op.execute_v2"), rel=0.0),
    # ------------------------------------------------------ 06: streams, events, pipelines
    Quote("06_streams_events_pipelines.ipynb", r"\(the copy takes about (\d+) µs\)",
          "y = upload_then_add(x, wait=True)",
          lambda ns: list(_durations_us(ns["trace"], "H2D")), rel=0.05),
    Quote("06_streams_events_pipelines.ipynb", r"16 MiB at 20 GB/s is (0\.\d+) ms, plus",
          "COPY_BYTES = 16 << 20", lambda ns: ns["copy_ms"], rel=0.02),
    Quote("06_streams_events_pipelines.ipynb",
          r"\| H2D copy of `x` \(1 MiB\) \| host → device DMA engine \| about (\d+) µs \|",
          "def run_pipelined(job, n_slots=2):",
          lambda ns: list(_durations_us(ns["trace_pipe"], "H2D", "acl.rt.memcpy_async")),
          rel=0.05),
    Quote("06_streams_events_pipelines.ipynb",
          r"\| `MatMul` \(0\.54 GFLOP in float32\) \| AI cores \| about (\d+) µs \|",
          "def run_pipelined(job, n_slots=2):",
          lambda ns: list(_durations_us(ns["trace_pipe"], "kernel")), rel=0.05),
    Quote("06_streams_events_pipelines.ipynb",
          r"\| D2H copy of `y` \(1 MiB\) \| device → host DMA engine \| about (\d+) µs \|",
          "def run_pipelined(job, n_slots=2):",
          lambda ns: list(_durations_us(ns["trace_pipe"], "D2H")), rel=0.05),
    Quote("06_streams_events_pipelines.ipynb", r"instead of per ~(\d+) µs, the three steps",
          "def run_pipelined(job, n_slots=2):",
          lambda ns: 1e3 * ns["sync_ms"] / ns["N_BATCHES"], rel=0.05),
    Quote("06_streams_events_pipelines.ipynb", r"each taking the three steps \(~(\d+) µs\)",
          "def run_pipelined(job, n_slots=2):",
          lambda ns: float(sum(_durations_us(ns["trace_pipe"], k, name).mean()
                               for k, name in (("H2D", "acl.rt.memcpy_async"),
                                               ("kernel", None), ("D2H", None)))), rel=0.05),
    Quote("06_streams_events_pipelines.ipynb", r"so a batch finishes every ~(\d+) µs",
          "def run_pipelined(job, n_slots=2):", lambda ns: _steady_us(ns["trace_pipe"]),
          rel=0.05),
    Quote("06_streams_events_pipelines.ipynb", r"not every 54 µs: about (\d\.\d)x",
          "def run_pipelined(job, n_slots=2):",
          lambda ns: ns["sync_ms"] / ns["pipe_ms"], rel=0.03),
    Quote("06_streams_events_pipelines.ipynb", r"\(~(\d+) µs per batch\): about \d\.\dx",
          "for n_slots in (3, 4):", lambda ns: _steady_us(_three_slots(ns)), rel=0.05),
    Quote("06_streams_events_pipelines.ipynb", r"µs per batch\): about (\d\.\d)x\. A fourth",
          "for n_slots in (3, 4):", lambda ns: ns["speedup"][3], rel=0.03),
    # ---------------------------------------------------------------- 07: hangs
    Quote("07_deadlocks_hangs_races.ipynb",
          r"`aclrtSynchronizeStreamWithTimeout` returns (\d+) `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`",
          "acl.rt.synchronize_stream_with_timeout(consumer_b, 1000)",
          lambda ns: float(ns["ret"]), rel=0.0),
    # ---------------------------------------------------------------- 08: the capstone
    Quote("08_capstone_engine.ipynb", r"decodes on the host pays about (\d+) ms per picture",
          "host_costs = {", lambda ns: ns["host_costs"]["decode the JPEG (libjpeg)"] / 1e6,
          rel=0.1),
    Quote("08_capstone_engine.ipynb", r"the host's decode alone is about (\d+) ms",
          "host_costs = {", lambda ns: ns["host_costs"]["decode the JPEG (libjpeg)"] / 1e6,
          rel=0.1),
    Quote("08_capstone_engine.ipynb", r"Per picture the host needs about (\d+) ms",
          "engine = Engine(zoo.path(\"resnet50\"))", lambda ns: ns["host"] / 1e6, rel=0.1),
    Quote("08_capstone_engine.ipynb", r"a picture is done every ~(\d+) ms",
          "engine = Engine(zoo.path(\"resnet50\"))", lambda ns: ns["every"] / 1e6, rel=0.1),
    Quote("08_capstone_engine.ipynb", r"the model's execution \(about (\d\.\d) ms\)",
          "engine = Engine(zoo.path(\"resnet50\"))", lambda ns: ns["device"] / 1e6, rel=0.1),
    Quote("08_capstone_engine.ipynb", r"B reuses them: about (\d+) ms\)",
          "host_costs = {",
          lambda ns: ns["host_costs"]["page faults, if every buffer is new"] / 1e6, rel=0.3),
    Quote("08_capstone_engine.ipynb", r"reproduces the \*ratios\* of the article within about "
          r"(\d+)%", "result = ladder.run_ladder(",
          lambda ns: [100 * abs(ns["result"].ratio_error(k)) for k in "BCD"],
          compare="at_most"),
    Quote("08_capstone_engine.ipynb", r"\*\*B\*\* gains the least, and less than the "
          r"article's (\d\.\d+)x", "result = ladder.run_ladder(",
          lambda ns: ns["result"].ratio("B"), compare="below"),
    Quote("08_capstone_engine.ipynb", r"so D lands below the article's (\d\.\d+)x",
          "result = ladder.run_ladder(", lambda ns: ns["result"].ratio("D"), compare="below"),
)


def _markdown(notebook: str) -> str:
    doc = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))
    text = "\n\n".join("".join(c["source"]) for c in doc["cells"]
                       if c["cell_type"] == "markdown")
    return re.sub(r"[ \t]*\n[ \t]*(?!\n)", " ", text)   # a line break inside a paragraph


def quoted(q: Quote) -> float:
    """The number ``q`` finds in its notebook's markdown (it must occur exactly once)."""
    found = re.findall(q.pattern, _markdown(q.notebook))
    assert len(found) == 1, (f"{q.notebook}: the pattern {q.pattern!r} matches "
                             f"{len(found)} times in the markdown; update its Quote")
    return float(found[0]) * q.scale


@cache
def figures(notebook: str, workdir: str) -> dict[int, Value]:
    """Run ``notebook``'s code cells in order in ``workdir``; the value of every quote of it,
    read right after its cell ran (later cells reuse names such as ``trace``)."""
    mine = [(i, q) for i, q in enumerate(QUOTES) if q.notebook == notebook]
    doc = json.loads((Path(workdir) / notebook).read_text(encoding="utf-8"))
    ns: dict[str, Any] = {"__name__": "__main__", "display": lambda *a, **k: None}
    out: dict[int, Value] = {}
    previous_dir, previous = os.getcwd(), current_session(create=False)
    session = Session(watchdog=60.0)
    set_current_session(session)
    try:
        os.chdir(workdir)
        for index, cell in enumerate(doc["cells"]):
            if cell["cell_type"] != "code":
                continue
            source = strip_ipython(cell_source(cell))
            name = f"{notebook}[cell {index}]"
            linecache.cache[name] = (len(source), None, source.splitlines(True), name)
            if source.lstrip().startswith("%%"):
                continue          # a cell magic (C++ for %%acl_cpp): not Python
            exec(compile(source, name, "exec"), ns)
            for i, q in mine:
                if q.after in source and i not in out:
                    out[i] = q.value(ns)
            if len(out) == len(mine):
                break             # every quote read: the rest of the notebook is not needed
    finally:
        os.chdir(previous_dir)
        set_current_session(previous)
        session.close()
    missing = [QUOTES[i].after for i, _ in mine if i not in out]
    assert not missing, f"{notebook}: no code cell contains {missing}"
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy of the notebooks folder (the notebooks write files, as in a kernel)."""
    dest = tmp_path_factory.mktemp("quoted") / "notebooks"
    shutil.copytree(NOTEBOOKS, dest)
    return str(dest)


def test_every_quote_is_found_once_in_its_notebook() -> None:
    for q in QUOTES:
        assert not math.isnan(quoted(q))


@pytest.mark.slow   # executes notebooks 00-08 (about a minute), like test_notebooks' run
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("index", range(len(QUOTES)), ids=[q.id for q in QUOTES])
def test_quoted_figure_matches_the_run(index: int, workdir: str) -> None:
    q = QUOTES[index]
    want = quoted(q)
    got = figures(q.notebook, workdir)[index]
    values = got if isinstance(got, list) else [got]
    assert values, f"{q.notebook}: the run has no value for {q.pattern!r}"
    for v in values:
        if q.compare == "about":
            assert abs(v - want) <= q.rel * want + 1e-9, (
                f"{q.notebook} says {want:g} ({q.pattern!r}); the run gives {v:.4g}")
        elif q.compare == "below":
            assert v < want, f"{q.notebook} says below {want:g}; the run gives {v:.4g}"
        else:
            assert v <= want, f"{q.notebook} says at most {want:g}; the run gives {v:.4g}"
