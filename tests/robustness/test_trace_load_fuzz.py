"""``Trace.load`` on broken and hostile files: a clear ValueError, in bounded time and memory.

Named cases cover truncated files (gzip and plain), corrupted bytes, wrong versions and
adversarial documents (deep nesting, huge numbers, ids pointing nowhere, wrong types, NaN,
duplicate keys, enormous string tables, decompression bombs). The Hypothesis fuzz tests mutate
a valid saved trace (drop and replace fields, change types, flip bytes) and require that load
either returns a Trace with the document's row counts or raises ValueError: never KeyError,
TypeError, IndexError, RecursionError or anything else. ``HYPOTHESIS_PROFILE=long`` (``make
fuzz``) runs many more examples.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acl_lab
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace

pytestmark = pytest.mark.timeout(300)

LONG = os.environ.get("HYPOTHESIS_PROFILE", "default") == "long"
#: Examples per fuzz test: bounded by default, many more with HYPOTHESIS_PROFILE=long.
FUZZ_EXAMPLES = 3_000 if LONG else 150
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=not LONG,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY


# --------------------------------------------------------------------------- the base trace
def _program(acl: ModuleType) -> None:
    """A program that fills every table a check reads (and some it does not)."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    ctx, _ = acl.rt.get_context()
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    host, _ = acl.rt.malloc_host(256)
    dev, _ = acl.rt.malloc(256, NORMAL)
    fresh, _ = acl.rt.malloc(256, NORMAL)
    acl.rt.memset(host, 256, 3, 256)
    acl.rt.memcpy_async(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, s1)
    acl.rt.record_event(ev, s1)
    acl.rt.stream_wait_event(s2, ev)
    acl.rt.memcpy_async(host, 256, fresh, 256, ACL_MEMCPY_DEVICE_TO_HOST, s2)  # uninit read
    assert acl.rt.subscribe_report(threading.get_ident(), s2) == 0
    acl.rt.launch_callback(lambda _: None, ["user", 1.5], ACL_CALLBACK_BLOCK, s2)
    acl.rt.process_report(1000)
    acl.rt.synchronize_stream(s2)
    acl.rt.set_context(ctx)
    acl.rt.free(12345)  # a failing call (invalid free) with a diagnostic
    acl.rt.free(fresh)
    acl.rt.free(fresh)  # double free
    acl.rt.free(dev)
    acl.rt.destroy_event(ev)
    acl.rt.destroy_stream(s1)  # s2 and host leak


@pytest.fixture(scope="module")
def base_doc() -> dict[str, Any]:
    """A valid trace document with rows in every table the checks read."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            _program(acl)
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    doc = trace.to_dict()
    rows = row_counts(doc)
    for name in ("calls", "args", "tasks", "accesses", "allocs", "frees", "edges", "syncs",
                 "callbacks", "diags", "objects", "destroys", "uninit", "threads"):
        assert rows[name] > 0, name
    Trace.from_dict(copy.deepcopy(doc))
    return doc


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory for the files of this module (module scope: usable under Hypothesis)."""
    return tmp_path_factory.mktemp("trace_load")


def dumps(doc: Any) -> bytes:
    """Compact JSON as ``Trace.save`` writes it (NaN allowed, as a hostile writer would)."""
    return json.dumps(doc, separators=(",", ":")).encode()


def refused(path: Path, max_bytes: int | None = None) -> str:
    """Load ``path``: it must raise ValueError; returns the message.

    Time is bounded by the file's pytest-timeout mark (a hang guard); load speed is measured
    in ``benchmarks/bench_trace_load.py``.
    """
    with pytest.raises(ValueError) as info:
        if max_bytes is None:
            Trace.load(path)
        else:
            Trace.load(path, max_bytes=max_bytes)
    msg = str(info.value)
    assert msg.startswith("trace file:"), msg
    return msg


def row_counts(doc: dict[str, Any]) -> dict[str, int]:
    """Rows per table of a (valid) document."""
    return {n: len(next(iter(t.values()))) if t else 0 for n, t in doc["tables"].items()}


# --------------------------------------------------------------------------- truncated, corrupt
@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.1, 0.5, 0.9, 0.999])
def test_truncated_files_are_refused(scratch: Path, base_doc: dict[str, Any],
                                     fraction: float) -> None:
    """A file cut anywhere, plain or gzip-compressed, names JSON or gzip as the problem."""
    raw = dumps(base_doc)
    packed = gzip.compress(raw, mtime=0)
    cut = scratch / f"cut{fraction}.acltrace"
    cut.write_bytes(raw[:int(len(raw) * fraction)])
    assert "JSON" in refused(cut)
    cut.write_bytes(packed[:max(2, int(len(packed) * fraction))])  # keep the gzip magic
    assert "gzip" in refused(cut)


@pytest.mark.parametrize("where", [0.05, 0.3, 0.6, 0.95])
def test_corrupted_bytes_are_refused(scratch: Path, base_doc: dict[str, Any],
                                     where: float) -> None:
    """Flipped bytes inside a gzip stream (bad deflate data or CRC) and invalid UTF-8 in a
    plain file are refused as corrupt data, not as a zlib or decode error."""
    packed = bytearray(gzip.compress(dumps(base_doc), mtime=0))
    i = max(10, int(len(packed) * where))
    packed[i:i + 4] = bytes(b ^ 0xA5 for b in packed[i:i + 4])
    path = scratch / "flip.acltrace"
    path.write_bytes(bytes(packed))
    assert "gzip" in refused(path)
    plain = bytearray(dumps(base_doc))
    plain[int(len(plain) * where)] = 0xFF
    path.write_bytes(bytes(plain))
    assert "JSON" in refused(path)


# --------------------------------------------------------------------------- adversarial
def _nest(depth: int, leaf: str = "0") -> str:
    return "[" * depth + leaf + "]" * depth


def _nest_obj(depth: int) -> str:
    return '{"a":' * depth + "0" + "}" * depth


def _text_case(doc_text: Callable[[str], str]) -> Callable[[dict[str, Any]], bytes]:
    """A case built by editing the document's JSON text."""
    return lambda doc: doc_text(dumps(doc).decode()).encode()


def _doc_case(mutate: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], bytes]:
    """A case built by editing a copy of the document."""
    def build(doc: dict[str, Any]) -> bytes:
        d = copy.deepcopy(doc)
        mutate(d)
        return dumps(d)
    return build


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    keys: list[Any] = [int(k) if k.isdigit() else k for k in path.split(".")]

    def mutate(doc: dict[str, Any]) -> None:
        target: Any = doc
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return mutate


def _huge_strings(doc: dict[str, Any]) -> None:
    doc["strings"] = doc["strings"] + ["x"] * 1_000_000
    doc["tables"]["calls"]["name"][0] = len(doc["strings"]) + 1


def _top(text: str, extra: str) -> str:
    return "{" + extra + "," + text[1:]


CASES: dict[str, tuple[Callable[[dict[str, Any]], bytes], tuple[str, ...]]] = {
    # versions and format
    "version 0": (_doc_case(_set("version", 0)), ("version 0",)),
    "version 2": (_doc_case(_set("version", 2)), ("version 2",)),
    "version 10**400": (_doc_case(_set("version", 10**400)), ("version", "not supported")),
    "version float": (_doc_case(_set("version", 1.0)), ("'version'", "integer")),
    "version NaN": (_doc_case(_set("version", float("nan"))), ("'version'", "integer")),
    "version true": (_doc_case(_set("version", True)), ("'version'", "integer")),
    "version missing": (_doc_case(lambda d: d.pop("version")), ("'version'",)),
    "format list": (_doc_case(_set("format", ["acltrace"])), ("'format'",)),
    "empty object": (lambda doc: b"{}", ("'format'",)),
    "empty file": (lambda doc: b"", ("JSON",)),
    "only whitespace": (lambda doc: b" \n\t " * 1000, ("JSON",)),
    # deep nesting, valid JSON and not
    "1e5 nested lists": (lambda doc: _nest(100_000).encode(), ("nested too deeply",)),
    "1e5 open brackets": (lambda doc: b"[" * 100_000, ("JSON",)),
    "1e5 nested objects": (lambda doc: _nest_obj(100_000).encode(), ("nested too deeply",)),
    "deep list in meta": (_text_case(lambda t: t.replace('"meta":{', '"meta":{"x":'
                                                         + _nest(100_000) + ",", 1)),
                          ("nested too deeply",)),
    "deep list in a column": (_text_case(lambda t: t.replace('"line":[', '"line":['
                                                             + _nest(100_000) + ",", 1)),
                              ("nested too deeply",)),
    "shallow nesting in a column": (_doc_case(_set("tables.calls.line.0", [[[1]]])),
                                    ("tables.calls.line[0]", "integer")),
    # huge numbers
    "10**400 in a column": (_doc_case(_set("tables.calls.line.0", 10**400)),
                            ("tables.calls.line[0]", "range")),
    "-10**400 in a column": (_doc_case(_set("tables.tasks.start_ns.0", -10**400)),
                             ("tables.tasks.start_ns[0]", "range")),
    "5000 digits": (_text_case(lambda t: t.replace('"line":[', '"line":[' + "7" * 5000 + ",",
                                                   1)), ("JSON", "digits")),
    "1e400 float": (_text_case(lambda t: re.sub(r'"line":\[\d+', '"line":[1e400', t, count=1)),
                    ("tables.calls.line[0]", "integer", "float")),
    "10**400 in meta": (_doc_case(_set("meta.big", 10**400)), ("meta.big", "range")),
    "int64 overflow": (_doc_case(_set("tables.allocs.size.0", 1 << 63)),
                       ("tables.allocs.size[0]", "range")),
    # NaN and infinities
    "NaN in a column": (_doc_case(_set("tables.calls.end_ns.0", float("nan"))),
                        ("tables.calls.end_ns[0]", "float")),
    "Infinity in a column": (_doc_case(_set("tables.tasks.end_ns.0", float("inf"))),
                             ("tables.tasks.end_ns[0]", "float")),
    "-Infinity id": (_doc_case(_set("tables.tasks.call.0", float("-inf"))),
                     ("tables.tasks.call[0]", "float")),
    # ids pointing nowhere
    "task of no call": (_doc_case(_set("tables.tasks.call.0", 10**6)),
                        ("tables.tasks.call[0]", "calls")),
    "access of no alloc": (_doc_case(_set("tables.accesses.alloc.0", 10**6)),
                           ("tables.accesses.alloc[0]", "allocs")),
    "edge from id -5": (_doc_case(_set("tables.edges.record.0", -5)),
                        ("tables.edges.record[0]", "tasks")),
    "callback of no thread": (_doc_case(_set("tables.callbacks.thread.0", 99)),
                              ("tables.callbacks.thread[0]", "threads")),
    "object label past strings": (_doc_case(_set("tables.objects.label.0", 10**5)),
                                  ("tables.objects.label[0]", "strings")),
    "free of no alloc": (_doc_case(_set("tables.frees.alloc.0", 10**6)),
                         ("tables.frees.alloc[0]", "allocs")),
    "uninit of no task": (_doc_case(_set("tables.uninit.task.0", 10**6)),
                          ("tables.uninit.task[0]", "tasks")),
    "diag of no call": (_doc_case(_set("tables.diags.call.0", 10**6)),
                        ("tables.diags.call[0]", "calls")),
    "arg kind 99": (_doc_case(_set("tables.args.kind.0", 99)), ("tables.args.kind[0]",)),
    # wrong types
    "meta a list": (_doc_case(_set("meta", [1])), ("'meta'",)),
    "tables a list": (_doc_case(_set("tables", [])), ("'tables'",)),
    "table a list": (_doc_case(_set("tables.calls", [])), ("tables.calls",)),
    "column an object": (_doc_case(_set("tables.calls.line", {"0": 1})),
                         ("tables.calls.line",)),
    "column a string": (_doc_case(_set("tables.calls.line", "12")), ("tables.calls.line",)),
    "string in a column": (_doc_case(_set("tables.args.value.0", "0x10")),
                           ("tables.args.value[0]", "str")),
    "null in a column": (_doc_case(_set("tables.objects.handle.0", None)),
                         ("tables.objects.handle[0]",)),
    "strings an object": (_doc_case(_set("strings", {"a": 1})), ("'strings'",)),
    "number in strings": (_doc_case(lambda d: d["strings"].append(3)), ("'strings'",)),
    "dropped_calls not counts": (_doc_case(_set("meta.dropped_calls", {"acl.rt.x": "7"})),
                                 ("meta.dropped_calls", "acl.rt.x")),
    "dropped_calls negative": (_doc_case(_set("meta.dropped_calls", {"acl.rt.x": -1})),
                               ("meta.dropped_calls",)),
    # duplicate keys
    "duplicate top-level key": (_text_case(lambda t: _top(t, '"format":"evil"')),
                                ("duplicate key", "format")),
    "duplicate table": (_text_case(lambda t: t.replace('"tables":{', '"tables":{"calls":{},',
                                                       1)), ("duplicate key", "calls")),
    "duplicate column": (_text_case(lambda t: t.replace('"line":[', '"line":[],"line":[', 1)),
                         ("duplicate key", "line")),
    "duplicate meta key": (_text_case(lambda t: t.replace('"meta":{', '"meta":{"soc":"x",',
                                                          1)), ("duplicate key", "soc")),
    # enormous counts
    "a million strings, one bad id": (_doc_case(_huge_strings), ("tables.calls.name[0]",)),
    "a million nulls in a column": (_text_case(lambda t: t.replace(
        '"line":[', '"line":[' + "null," * 1_000_000, 1)), ("tables.calls",)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_adversarial_file_is_refused_clearly(scratch: Path, base_doc: dict[str, Any],
                                             case: str) -> None:
    """Each hostile file raises ValueError("trace file: ...") naming the problem, fast."""
    build, words = CASES[case]
    path = scratch / "adversarial.acltrace"
    path.write_bytes(build(base_doc))
    msg = refused(path)
    for word in words:
        assert word in msg, f"{case}: {word!r} not in {msg[:300]!r}"


def test_the_same_cases_behind_gzip_are_refused(scratch: Path,
                                                base_doc: dict[str, Any]) -> None:
    """Compression changes nothing: every case is refused the same way from a gzip file."""
    for case in ("duplicate column", "1e5 nested lists", "10**400 in a column",
                 "task of no call", "NaN in a column"):
        build, words = CASES[case]
        path = scratch / "adversarial_gz.acltrace"
        path.write_bytes(gzip.compress(build(base_doc), mtime=0))
        msg = refused(path)
        assert all(w in msg for w in words), (case, msg[:300])


def test_decompression_bomb_stops_at_the_size_limit(scratch: Path) -> None:
    """64 MiB of JSON whitespace in a ~64 KiB gzip file is refused at max_bytes, without
    inflating the whole thing into memory."""
    path = scratch / "bomb.acltrace"
    path.write_bytes(gzip.compress(b" " * (64 << 20), compresslevel=9, mtime=0))
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        msg = refused(path, max_bytes=4 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "larger than" in msg
    assert peak < 16 << 20, peak


def test_plain_file_over_the_limit_is_refused(scratch: Path, base_doc: dict[str, Any]) -> None:
    """A plain file longer than max_bytes is refused before any parsing."""
    path = scratch / "big.acltrace"
    path.write_bytes(dumps(base_doc) + b" " * (2 << 20))
    assert "larger than" in refused(path, max_bytes=1 << 20)


def test_valid_document_with_a_million_strings_loads(scratch: Path,
                                                     base_doc: dict[str, Any]) -> None:
    """An enormous but valid string table is not an error: it loads (its speed relative to
    ``json.loads`` is a row of ``benchmarks/bench_trace_load.py``)."""
    doc = copy.deepcopy(base_doc)
    doc["strings"] += [f"s{i}" for i in range(1_000_000)]
    path = scratch / "many_strings.acltrace"
    path.write_bytes(dumps(doc))
    trace = Trace.load(path)
    assert len(trace.strings) == len(doc["strings"])
    assert row_counts(doc) == {n: t.rows for n, t in trace.tables.items()}


# --------------------------------------------------------------------------- fuzz
JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70),
    st.sampled_from([0, -1, -2, 1 << 31, 1 << 63, -(1 << 63) - 1, 10**400, 127, 128]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
JSON_VALUE = st.recursive(JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=8)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value of the document (dict keys and list indexes)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):  # a few elements of each column are enough
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path[:-1]:
        doc = doc[k]
    return doc


@st.composite
def mutated_docs(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """The base document with 1-4 structural mutations."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        paths = list(_paths(doc))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(doc, path)
        key = path[-1]
        action = draw(st.sampled_from(["drop", "replace", "retype", "near", "ragged"]))
        old = parent[key]
        if action == "drop":
            del parent[key]
        elif action == "replace":
            parent[key] = draw(JSON_VALUE)
        elif action == "retype":
            parent[key] = draw(st.sampled_from([str(old), [old], {"v": old}, None,
                                                float(old) if isinstance(old, int) else 1.5,
                                                True]))
        elif action == "near" and type(old) is int:
            parent[key] = old + draw(st.integers(-3, 3)) * draw(st.sampled_from([1, 1000]))
        elif action == "ragged" and isinstance(old, list):
            shorter: bool = draw(st.booleans())
            if old and shorter:
                old.pop()
            else:
                old.append(draw(st.integers(-2, 40)))
        else:
            parent[key] = draw(JSON_VALUE)
    return doc


def _load_or_value_error(data: bytes) -> Trace | None:
    """``Trace.from_json_bytes(data)``: the Trace, or None for a ValueError. Any other
    exception fails the test (Hypothesis shows the input)."""
    try:
        return Trace.from_json_bytes(data)
    except ValueError as e:
        assert str(e).startswith("trace file:"), str(e)[:300]
        return None


def test_fuzz_structural_mutations(base_doc: dict[str, Any]) -> None:
    """Dropped, replaced and retyped fields, near-miss ids and ragged columns: load returns a
    Trace with exactly the document's row counts, or raises ValueError; nothing else."""
    loaded = refused_count = 0

    @FUZZ
    @given(doc=mutated_docs(base_doc))
    def check(doc: dict[str, Any]) -> None:
        nonlocal loaded, refused_count
        trace = _load_or_value_error(json.dumps(doc).encode())
        if trace is None:
            refused_count += 1
            return
        loaded += 1
        assert {n: t.rows for n, t in trace.tables.items()} == row_counts(doc)
        assert list(trace.strings) == doc["strings"]

    check()
    assert refused_count > 0


@st.composite
def byte_mutations(draw: st.DrawFn, raw: bytes) -> bytes:
    """``raw`` with 1-6 byte-level edits: flips, overwrites, deletions, insertions, a cut."""
    data = bytearray(raw)
    for _ in range(draw(st.integers(1, 6))):
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "set", "delete", "insert", "cut"]))
        if action == "flip":
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif action == "set":
            data[i] = draw(st.sampled_from(b'0123456789-.,:[]{}"eE \\nulltrueNaN\xff\x00'))
        elif action == "delete":
            del data[i:i + draw(st.integers(1, 8))]
        elif action == "insert":
            data[i:i] = draw(st.sampled_from([b"[", b"{", b"]", b",1", b'"x":1,', b"NaN",
                                              b"1e999", b"9" * 30, b"-", b'"', b"\\u0000"]))
        else:
            del data[i:]
    return bytes(data)


def _expected_rows(data: bytes) -> dict[str, int] | None:
    """Row counts of ``data`` if plain json can even read it as a trace-shaped document."""
    try:
        doc = json.loads(data)
        return row_counts(doc)
    except Exception:
        return None


def test_fuzz_flipped_bytes_plain_and_gzip(scratch: Path, base_doc: dict[str, Any]) -> None:
    """Byte-level damage to a saved file (plain JSON and gzip): ``Trace.load`` returns a
    Trace whose row counts match the damaged document, or raises ValueError; nothing else."""
    raw = dumps(base_doc)
    packed = gzip.compress(raw, mtime=0)
    path = scratch / "fuzz.acltrace"

    @FUZZ
    @given(plain=byte_mutations(raw), zipped=byte_mutations(packed),
           inner=st.booleans())
    def check(plain: bytes, zipped: bytes, inner: bool) -> None:
        for data in (plain, zipped, gzip.compress(plain, mtime=0) if inner else plain):
            path.write_bytes(data)
            try:
                trace = Trace.load(path)
            except ValueError as e:
                assert str(e).startswith("trace file:"), str(e)[:300]
                continue
            text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
            assert _expected_rows(text) == {n: t.rows for n, t in trace.tables.items()}

    check()
