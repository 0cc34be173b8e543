"""Every trace that loads renders: whatever ``Trace.load`` accepts, every check, view and export
handles.

The loader validates each column's value domain as ``schema.TABLES`` declares it (enum members,
ranges, id references, row spans checked without int64 overflow, device numbers below the
trace's device count) and the meta entries ``schema.META`` types, so the views never index past
a name table or size an array by a number read from a file. The tests:

* one regression per hostile value of issue 11, through the ``acl-lab report`` and
  ``acl-lab export`` entry points (each crashed them before: MemoryError, IndexError, KeyError,
  ValueError): now a refusal naming table, column and row, exit code 2 and no output file;
* a gzip bomb of 1.1 GiB (and a plain file of the same size) is refused with at most 64 MiB
  allocated (it used to be inflated to 1 GiB first);
* a Hypothesis property: values of a real trace with findings (leak, race, deadlock,
  uninitialised read, double and invalid free) are mutated towards and past each column's
  domain; every document the loader accepts goes through all checks, every view, the HTML
  report and the Chrome export without an exception, and every other document raises
  ValueError. ``HYPOTHESIS_PROFILE=long`` (``make fuzz``) runs many more examples.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import threading
import tracemalloc
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acl_lab
from acl_lab import DeadlockError
from acl_lab.cli import main
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer import schema
from acl_lab.tracer.trace import MAX_LOAD_BYTES, Trace
from acl_lab.tracer.views import call_table, memory_map, race_view, timeline, wait_graph
from acl_lab.tracer.views.report import report_html

LONG = os.environ.get("HYPOTHESIS_PROFILE", "default") == "long"
pytestmark = pytest.mark.timeout(3600 if LONG else 600)
#: Examples of the property test: few by default (each renders a report), many with
#: HYPOTHESIS_PROFILE=long.
RENDER_EXAMPLES = 300 if LONG else 25
RENDER = settings(max_examples=RENDER_EXAMPLES, deadline=None, derandomize=not LONG,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
N = 4096
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY
#: A refused file may cost at most this much memory while it is read.
REFUSE_MEMORY = 64 << 20


# --------------------------------------------------------------------------- the base trace
def _program(acl: ModuleType) -> None:
    """Streams, an event edge, a callback, an uninitialised read, a race, a double and an
    invalid free, leaks, a destroyed stream and (last) a deadlock on a reset event."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    spare, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    host, _ = acl.rt.malloc_host(N)
    a, _ = acl.rt.malloc(N, NORMAL)
    b, _ = acl.rt.malloc(N, NORMAL)
    c, _ = acl.rt.malloc(N, NORMAL)
    acl.rt.memset(host, N, 3, N)
    acl.rt.memcpy_async(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1)
    acl.rt.record_event(ev, s1)
    acl.rt.stream_wait_event(s2, ev)
    acl.rt.memcpy_async(host, N, c, N, ACL_MEMCPY_DEVICE_TO_HOST, s2)  # uninitialised read
    acl.rt.memcpy_async(b, N, a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s1)
    acl.rt.memcpy_async(c, N, b, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s2)  # races with s1
    assert acl.rt.subscribe_report(threading.get_ident(), s2) == 0
    acl.rt.launch_callback(lambda _: None, ["user", 1.5], ACL_CALLBACK_BLOCK, s2)
    acl.rt.process_report(1000)
    acl.rt.synchronize_stream(s1)
    acl.rt.synchronize_stream(s2)
    acl.rt.free(12345)  # invalid free
    acl.rt.free(a)
    acl.rt.free(a)  # double free
    acl.rt.destroy_stream(spare)
    late, _ = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
    s3, _ = acl.rt.create_stream()
    acl.rt.record_event(late, s1)
    acl.rt.synchronize_stream(s1)
    acl.rt.reset_event(late, s3)
    acl.rt.synchronize_stream(s3)
    acl.rt.stream_wait_event(s2, late)
    with pytest.raises(DeadlockError):
        acl.rt.synchronize_stream(s2)


@pytest.fixture(scope="module")
def base_doc() -> dict[str, Any]:
    """The saved form of the program's trace (a valid document with findings)."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            _program(acl)
            trace = s.trace()
        finally:
            acl_lab.uninstall()
    kinds = {f.kind for f in trace.findings()}
    assert {"leak", "race", "deadlock", "double_free", "invalid_free",
            "uninitialized_read"} <= kinds, kinds
    doc = trace.to_dict()
    Trace.from_dict(copy.deepcopy(doc))
    return doc


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory for this module's files (module scope: usable under Hypothesis)."""
    return tmp_path_factory.mktemp("trace_render")


def _row(doc: dict[str, Any], table: str, pick: str) -> int:
    """A row of ``table`` that the views use: ``stream`` (a stream object), ``args`` (a call
    with arguments), ``device`` (a device allocation) or ``first``."""
    t = doc["tables"][table]
    if pick == "stream":
        return t["kind"].index(1)
    if pick == "args":
        return next(i for i, n in enumerate(t["arg_count"]) if n >= 1)
    if pick == "device":
        return t["kind"].index(schema.ALLOC_KINDS.index("device"))
    return 0


# --------------------------------------------------------------------------- issue 11 values
#: (table, column, row pick, value) -> words the refusal must contain. Before the loader
#: checked domains each of these crashed ``acl-lab report`` or ``acl-lab export``.
HOSTILE: dict[str, tuple[str, str, str, Any, tuple[str, ...]]] = {
    # report sized its lanes by device number: MemoryError (16 GiB per array)
    "objects.device 2**31-1": ("objects", "device", "stream", 2**31 - 1,
                               ("tables.objects.device[", "device")),
    # start + count overflowed int64 and passed the bounds check: IndexError
    "calls.arg_start 2**63-1": ("calls", "arg_start", "args", 2**63 - 1,
                                ("tables.calls[", "arg_start", "args")),
    # TASK_KINDS[-128]: IndexError in export
    "tasks.kind -128": ("tasks", "kind", "first", -128, ("tables.tasks.kind[0]", "range")),
    # a kind that names no ALLOC_KINDS entry: KeyError in report
    "allocs.kind -1": ("allocs", "kind", "device", -1, ("tables.allocs.kind[", "range")),
    # POOLS[-128]: IndexError
    "allocs.pool -128": ("allocs", "pool", "device", -128, ("tables.allocs.pool[", "range")),
    # int("abc") in the report's header: ValueError
    "meta.virtual_time_ns 'abc'": ("meta", "virtual_time_ns", "", "abc",
                                   ("meta.virtual_time_ns", "integer")),
}


def _hostile(doc: dict[str, Any], case: str) -> dict[str, Any]:
    table, column, pick, value, _ = HOSTILE[case]
    d = copy.deepcopy(doc)
    if table == "meta":
        d["meta"][column] = value
    else:
        d["tables"][table][column][_row(d, table, pick)] = value
    return d


@pytest.mark.parametrize("command", ["report", "export"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_value_is_refused_by_the_cli(scratch: Path, base_doc: dict[str, Any],
                                             capsys: pytest.CaptureFixture[str], case: str,
                                             command: str) -> None:
    """``acl-lab report`` / ``acl-lab export`` of a file with one of issue 11's values: exit
    code 2, the refusal names table, column and row on stderr, and nothing is written."""
    src = scratch / "hostile.acltrace"
    src.write_text(json.dumps(_hostile(base_doc, case)), encoding="utf-8")
    out = scratch / ("hostile.html" if command == "report" else "hostile.json")
    out.unlink(missing_ok=True)
    args = ([command, str(src), "-o", str(out)] if command == "report"
            else [command, str(src), "--chrome", str(out)])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"acl-lab {command}: trace file:" in err
    for word in HOSTILE[case][4]:
        assert word in err, (case, err)
    assert not out.exists()


def test_the_base_trace_renders_through_the_cli(scratch: Path, base_doc: dict[str, Any],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The unmutated document goes through both entry points (the refusals above are not a
    loader that refuses everything)."""
    src = scratch / "base.acltrace"
    src.write_text(json.dumps(base_doc), encoding="utf-8")
    html_out, chrome_out = scratch / "base.html", scratch / "base.json"
    assert main(["report", str(src), "-o", str(html_out)]) == 0
    assert main(["export", str(src), "--chrome", str(chrome_out)]) == 0
    assert 'data-kind="deadlock"' in html_out.read_text(encoding="utf-8")
    events = json.loads(chrome_out.read_text(encoding="utf-8"))["traceEvents"]
    assert sum(1 for e in events if e.get("cat") == "task") > 0
    capsys.readouterr()


@pytest.mark.parametrize("where, value, words", [
    (("tables", "calls", "arg_start"), 2**62, ("tables.calls[", "run past")),
    (("tables", "calls", "arg_count"), 127, ("tables.calls[", "run past")),
    (("tables", "tasks", "device"), 1, ("tables.tasks.device[0]", "1 device(s)")),
    (("tables", "objects", "kind"), 10, ("tables.objects.kind[0]", "not a known")),
    (("tables", "tasks", "engine"), len(schema.ENGINES), ("tables.tasks.engine[0]",)),
    (("tables", "syncs", "kind"), len(schema.SYNC_KINDS), ("tables.syncs.kind[0]",)),
    (("tables", "diags", "level"), -1, ("tables.diags.level[0]",)),
    (("tables", "frees", "how"), 2, ("tables.frees.how[0]",)),
    (("tables", "tasks", "start_ns"), -2, ("tables.tasks.start_ns[0]", "range")),
    (("tables", "tasks", "end_ns"), 2**63 - 1, ("tables.tasks.end_ns[0]", "range")),
    (("tables", "accesses", "length"), -1, ("tables.accesses.length[0]",)),
    (("tables", "accesses", "task"), -1, ("tables.accesses.task[0]", "tasks")),
    (("tables", "calls", "thread"), -1, ("tables.calls.thread[0]", "threads")),
    (("meta", "device_count"), 0, ("meta.device_count", "range")),
    (("meta", "device_count"), True, ("meta.device_count", "integer")),
    (("meta", "profile"), 7, ("meta.profile", "string")),
    (("meta", "virtual_time_ns"), -5, ("meta.virtual_time_ns", "range")),
])
def test_each_domain_is_checked(base_doc: dict[str, Any], where: tuple[str, ...], value: Any,
                                words: tuple[str, ...]) -> None:
    """One value just outside a declared domain: refused, naming table, column and row."""
    doc = copy.deepcopy(base_doc)
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    if isinstance(target, dict) and isinstance(target.get(where[-1]), list):
        row = _row(doc, where[1], "args") if where[1] == "calls" and "arg" in where[2] else 0
        target[where[-1]][row] = value
    else:
        target[where[-1]] = value
    with pytest.raises(ValueError) as info:
        Trace.from_dict(doc)
    for word in words:
        assert word in str(info.value), (where, str(info.value))


def test_more_devices_in_the_meta_allow_more_device_numbers(base_doc: dict[str, Any]) -> None:
    """The device bound follows ``meta.device_count``: device 1 loads in a 2-device trace."""
    doc = copy.deepcopy(base_doc)
    doc["meta"]["device_count"] = 2
    doc["tables"]["tasks"]["device"][0] = 1
    assert int(Trace.from_dict(doc).tasks["device"][0]) == 1


# --------------------------------------------------------------------------- gzip bomb
def _write_bomb(path: Path, nbytes: int) -> None:
    """Write ``nbytes`` of JSON whitespace, gzip-compressed, streaming (never in memory)."""
    block = b" " * (8 << 20)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        left = nbytes
        while left:
            n = min(left, len(block))
            fh.write(comp.compress(block[:n]))
            left -= n
        fh.write(comp.flush())


def _peak_while_refused(path: Path) -> tuple[str, int]:
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            Trace.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(info.value), peak


def test_gzip_bomb_is_refused_in_bounded_memory(scratch: Path) -> None:
    """1.1 GiB of whitespace in a ~1 MiB gzip file: refused as larger than the default limit,
    with at most 64 MiB allocated (it used to be inflated up to the 1 GiB limit first)."""
    path = scratch / "bomb.acltrace"
    _write_bomb(path, MAX_LOAD_BYTES + (MAX_LOAD_BYTES >> 3))
    assert path.stat().st_size < 4 << 20
    msg, peak = _peak_while_refused(path)
    path.unlink()
    assert "larger than" in msg
    assert peak < REFUSE_MEMORY, peak


def test_plain_file_over_the_limit_is_refused_unread(scratch: Path) -> None:
    """A plain 1.1 GiB file (sparse: no disk used) is refused by its size, not by reading
    1 GiB of it."""
    path = scratch / "huge.acltrace"
    with open(path, "wb") as fh:
        fh.write(b"{")
        fh.truncate(MAX_LOAD_BYTES + (MAX_LOAD_BYTES >> 3))
    msg, peak = _peak_while_refused(path)
    path.unlink()
    assert "larger than" in msg
    assert peak < REFUSE_MEMORY, peak


def test_gzip_above_the_hold_size_but_allowed_loads(scratch: Path,
                                                    base_doc: dict[str, Any]) -> None:
    """A valid trace padded past the in-memory hold size (inflated twice) still loads whole."""
    from acl_lab.tracer.trace import HOLD_BYTES
    raw = json.dumps(base_doc).encode()
    path = scratch / "padded.acltrace"
    path.write_bytes(gzip.compress(raw[:-1] + b" " * (HOLD_BYTES + 1) + raw[-1:], mtime=0))
    trace = Trace.load(path)
    assert trace.calls.rows == len(base_doc["tables"]["calls"]["name"])
    path.unlink()


# --------------------------------------------------------------------------- the property
def _lengths(doc: dict[str, Any]) -> dict[str, int]:
    lengths = {t: len(next(iter(v.values()))) for t, v in doc["tables"].items()}
    lengths[schema.STR] = len(doc["strings"])
    return lengths


def _domain_values(doc: dict[str, Any], col: schema.Column) -> list[int]:
    """Values at and just past the edges of a column's domain, and its members."""
    out = [0, 1, -1, -2]
    if col.ref is not None:
        n = _lengths(doc)[col.ref]
        out += [n - 1, n, n // 2]
    if col.members is not None:
        out += sorted(col.members)
    if col.lo is not None:
        out += [col.lo, col.lo - 1]
    if isinstance(col.hi, int):
        out += [col.hi, col.hi + 1]
    out += [schema.MAX_NS, 2**31 - 1, 2**63 - 1, -(2**31), 127, -128]
    return out


@st.composite
def value_mutations(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """The base document with 1-8 cells (or meta entries) set to edge values of their domain,
    to values taken from another cell, or with a table cut short; or (half the documents)
    with 1-8 cells set to any value their declared domain allows or tables emptied (their
    references set to -1)."""
    doc = copy.deepcopy(base)
    tables = doc["tables"]
    names = [t for t in schema.TABLES if tables[t][schema.TABLES[t][0].name]]
    inside_only = draw(st.booleans())  # half the documents: only values the domains allow
    for _ in range(draw(st.integers(1, 8))):
        what = draw(st.sampled_from(["cell", "cell", "cell", "meta", "cut", "empty"]))
        if inside_only and what not in ("cell", "empty"):
            what = "inside"
        if what == "meta":
            key = draw(st.sampled_from([*schema.META, "extra"]))
            doc["meta"][key] = draw(st.one_of(
                st.sampled_from([0, 1, 2, 16, 17, -1, 2**62, 2**63 - 1, "abc", "", 1.5, None,
                                 True])))
            continue
        if not names:
            break
        table = draw(st.sampled_from(names))
        spec = schema.TABLES[table]
        rows = len(tables[table][spec[0].name])
        if rows == 0:
            continue
        if what == "empty":
            _empty(doc, table)
            names = [t for t in names if tables[t][schema.TABLES[t][0].name]]
            continue
        if what == "cut":
            keep = draw(st.integers(0, rows - 1))
            for c in spec:
                del tables[table][c.name][keep:]
            names = [t for t in names if t != table or keep]
            continue
        col = draw(st.sampled_from(spec))
        row = draw(st.integers(0, rows - 1))
        if inside_only or what == "inside":
            tables[table][col.name][row] = draw(_inside(doc, col))
            continue
        other = draw(st.sampled_from(spec)).name
        tables[table][col.name][row] = draw(st.one_of(
            _inside(doc, col), _inside(doc, col), st.sampled_from(_domain_values(doc, col)),
            st.integers(-(1 << 63), (1 << 63) - 1), st.just(tables[table][other][row])))
    return doc


def _empty(doc: dict[str, Any], table: str) -> None:
    """Drop every row of ``table`` and keep the document valid: references to it become -1,
    tables that must refer to it are emptied too, pointer arguments into allocations become
    None arguments, calls lose their arguments with the args table."""
    tables = doc["tables"]
    for c in schema.TABLES[table]:
        tables[table][c.name] = []
    for other, spec in schema.TABLES.items():
        for c in spec:
            if c.ref != table or not tables[other][c.name]:
                continue
            if c.null:
                tables[other][c.name] = [-1] * len(tables[other][c.name])
            else:
                _empty(doc, other)
    if table == "allocs":
        args = tables["args"]
        args["kind"] = [schema.ARG_NONE if k == schema.ARG_PTR else k for k in args["kind"]]
    if table == "args":
        n = len(tables["calls"]["arg_start"])
        tables["calls"]["arg_start"] = [0] * n
        tables["calls"]["arg_count"] = [0] * n


def _inside(doc: dict[str, Any], col: schema.Column) -> st.SearchStrategy[int]:
    """Any value of the column's declared domain (what the loader should accept)."""
    if col.ref is not None:
        n = _lengths(doc)[col.ref]
        lo = -1 if col.null else 0
        return st.integers(lo, max(lo, n - 1))
    if col.members is not None:
        return st.sampled_from(sorted(col.members))
    hi = col.hi if isinstance(col.hi, int) else 1 if col.hi == schema.DEVICES else None
    return st.integers(col.lo, hi) if col.lo is not None else st.integers(-(1 << 31), 1 << 31)


def _render_everything(trace: Trace) -> None:
    """Checks, every view, the HTML report and the Chrome export, as a user would run them.
    The report draws the timeline with the findings, a memory map per device with
    allocations, an overlap figure per device with tasks and each finding's graph; it turns a
    view's exception into a note, so a note saying a figure is missing fails here."""
    found = trace.findings()
    for f in found:
        f.to_summary()
    trace.stats()
    page = report_html(trace, findings=found)
    failed = re.findall(r"not drawn: (?!the report draws at most)|\(no timeline:|"
                        r"\(no memory map|\(no overlap figure", page)
    assert not failed, failed
    timeline(trace, engines=True)
    call_table(trace, only_errors=True)
    memory_map(trace, device=0, pools=list(schema.POOLS))
    for f in found[:3]:
        if f.kind == "deadlock":
            wait_graph(f, trace)
        elif f.kind == "race":
            race_view(f, trace)
    json.dumps(trace.to_chrome_trace(), allow_nan=False)


def test_every_accepted_document_renders(base_doc: dict[str, Any]) -> None:
    """Mutated values of a real trace: a document load accepts renders everywhere without an
    exception; one it refuses raises ValueError("trace file: ...") and nothing else."""
    _render_everything(Trace.from_dict(copy.deepcopy(base_doc)))
    seen = {"loaded": 0, "refused": 0}

    @RENDER
    @given(doc=value_mutations(base_doc))
    def check(doc: dict[str, Any]) -> None:
        try:
            trace = Trace.from_json_bytes(json.dumps(doc).encode())
        except ValueError as e:
            assert str(e).startswith("trace file:"), str(e)[:300]
            seen["refused"] += 1
            return
        seen["loaded"] += 1
        _render_everything(trace)

    check()
    assert seen["loaded"] > 0 and seen["refused"] > 0, seen
