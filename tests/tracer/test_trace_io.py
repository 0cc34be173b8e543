"""Trace files: ``Trace.save`` / ``Trace.load`` round trips, strict validation, immutability."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer import schema
from acl_lab.tracer.trace import BINARY_MAGIC, GZIP_ABOVE, Trace

ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


# --------------------------------------------------------------------------- helpers
def record(program: Callable[[ModuleType], None], finish: bool = True) -> Trace:
    """Run ``program(acl)`` in a fresh Session; return ``finish()`` (or ``trace()``)."""
    with Session(watchdog=2.0) as s:
        acl = acl_lab.install()
        try:
            program(acl)
            return s.finish() if finish else s.trace()
        finally:
            acl_lab.uninstall()


def copy_flow(acl: ModuleType, finalize: bool = True) -> None:
    """A small complete program: stream, pinned and device memory, copies both ways."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    host, ret = acl.rt.malloc_host(256)
    assert ret == 0
    dev, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    assert acl.rt.memset(host, 256, 5, 256) == 0
    assert acl.rt.memcpy_async(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.memcpy_async(host, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_stream(stream) == 0
    if finalize:
        assert acl.rt.reset_device(0) == 0
        assert acl.finalize() == 0


def assert_same_trace(a: Trace, b: Trace) -> None:
    """Two traces hold the same strings, meta, tables, columns, dtypes and values."""
    assert a.strings == b.strings
    assert a.meta == b.meta
    assert list(a.tables) == list(b.tables)
    for name, table in a.tables.items():
        other = b.tables[name]
        assert list(table) == list(other), name
        assert table.rows == other.rows, name
        for col in table:
            assert table[col].dtype == other[col].dtype, f"{name}.{col}"
            assert np.array_equal(table[col], other[col]), f"{name}.{col}"


@pytest.fixture(scope="module")
def base_doc() -> dict[str, Any]:
    """A valid trace document (every table the checks touch has rows; last call has args)."""

    def program(acl: ModuleType) -> None:
        copy_flow(acl, finalize=False)
        ptr, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0
        assert acl.rt.free(ptr) == 0  # a pointer argument as the last call

    # trace(), not finish(): finish() would append the argument-less ``acl_lab.exit``.
    doc = record(program, finish=False).to_dict()
    Trace.from_dict(copy.deepcopy(doc))  # the unmodified document must be valid
    return doc


def write_doc(path: Path, doc: Any) -> Path:
    """Write a document as plain JSON."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def load_error(path: Path) -> str:
    """Load ``path``, expecting a ValueError; return its message."""
    with pytest.raises(ValueError) as info:
        Trace.load(path)
    return str(info.value)


def ptr_arg_index(doc: dict[str, Any]) -> int:
    """The args row of the first pointer argument in a document."""
    kinds = doc["tables"]["args"]["kind"]
    return kinds.index(schema.ARG_PTR)


# --------------------------------------------------------------------------- round trips
def test_round_trip_small_trace_is_plain_json(tmp_path: Path) -> None:
    """A small trace of a complete program saves as plain JSON and loads back equal."""
    trace = record(copy_flow)
    path = tmp_path / "small.acltrace"
    trace.save(path)
    raw = path.read_bytes()
    assert raw[:2] != b"\x1f\x8b"
    assert json.loads(raw)["format"] == "acltrace"
    assert_same_trace(trace, Trace.load(path))


def test_round_trip_large_trace_is_binary(tmp_path: Path) -> None:
    """A trace whose JSON is above 1 MiB is written in the binary column form, much smaller
    than its JSON, and loads back equal."""

    def program(acl: ModuleType) -> None:
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        ptr, ret = acl.rt.malloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0
        for i in range(25_000):
            acl.rt.memset(ptr, 4096, i & 0xFF, 64)
        assert acl.rt.free(ptr) == 0

    trace = record(program, finish=False)
    assert len(json.dumps(trace.to_dict(), separators=(",", ":"))) > GZIP_ABOVE
    path = tmp_path / "large.acltrace"
    trace.save(path)
    raw = path.read_bytes()
    assert raw.startswith(BINARY_MAGIC) and len(raw) < GZIP_ABOVE // 8
    assert_same_trace(trace, Trace.load(path))


def test_round_trip_file_written_after_finalize(tmp_path: Path) -> None:
    """The trace of a program that ends with ``acl.finalize()`` (no arguments) loads back."""

    def program(acl: ModuleType) -> None:
        assert acl.init() == 0
        assert acl.finalize() == 0

    trace = record(program)
    assert trace.calls.rows == 2
    path = tmp_path / "init_finalize.acltrace"
    trace.save(path)
    assert_same_trace(trace, Trace.load(path))


def test_save_is_deterministic(tmp_path: Path) -> None:
    """Saving the same trace twice writes the same bytes."""
    trace = record(copy_flow)
    trace.save(tmp_path / "a.acltrace")
    trace.save(tmp_path / "b.acltrace")
    assert (tmp_path / "a.acltrace").read_bytes() == (tmp_path / "b.acltrace").read_bytes()


# --------------------------------------------------------------------------- bad files
def test_not_json(tmp_path: Path) -> None:
    """A file that is not JSON at all is refused as such."""
    path = tmp_path / "x.acltrace"
    path.write_bytes(b"this is not a trace\n")
    assert "JSON" in load_error(path)


def test_truncated_gzip(tmp_path: Path, base_doc: dict[str, Any]) -> None:
    """A gzip file cut in half is refused as corrupt gzip data."""
    data = gzip.compress(json.dumps(base_doc).encode())
    path = tmp_path / "x.acltrace"
    path.write_bytes(data[: len(data) // 2])
    assert "gzip" in load_error(path)


def test_truncated_json(tmp_path: Path, base_doc: dict[str, Any]) -> None:
    """A JSON document cut in half is refused as invalid JSON."""
    text = json.dumps(base_doc)
    path = tmp_path / "x.acltrace"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    assert "JSON" in load_error(path)


def test_deep_nesting(tmp_path: Path) -> None:
    """100000 nested brackets give a ValueError, not a RecursionError or a crash."""
    path = tmp_path / "x.acltrace"
    path.write_text("[" * 100_000, encoding="utf-8")
    msg = load_error(path)
    assert "JSON" in msg


def test_top_level_not_an_object(tmp_path: Path) -> None:
    """A JSON list at the top level is refused."""
    assert "object" in load_error(write_doc(tmp_path / "x.acltrace", [1, 2, 3]))


def test_random_bytes_file_is_refused_in_bounded_time(tmp_path: Path) -> None:
    """50 MB of random bytes raise ValueError (no hang, no MemoryError).

    The time is bounded by pytest-timeout (a hang guard); how fast the refusal is belongs to
    ``benchmarks/bench_trace_load.py``.
    """
    rng = np.random.default_rng(12345)
    data = rng.integers(0, 256, size=50 * 1024 * 1024, dtype=np.uint8).tobytes()
    assert data[:2] != b"\x1f\x8b"
    path = tmp_path / "garbage.acltrace"
    path.write_bytes(data)
    load_error(path)


def test_random_bytes_behind_gzip_magic_are_refused(tmp_path: Path) -> None:
    """Random bytes that start with the gzip magic are refused as corrupt gzip."""
    rng = np.random.default_rng(7)
    path = tmp_path / "garbage.acltrace"
    path.write_bytes(b"\x1f\x8b" + rng.integers(0, 256, size=1 << 20, dtype=np.uint8).tobytes())
    assert "gzip" in load_error(path)


# --------------------------------------------------------------------------- bad documents
Mutation = Callable[[dict[str, Any]], None]


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(path: tuple[Any, ...]) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


def _append(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for key in path:
            target = target[key]
        target.append(value)
    return mutate


def _bad_string_id(doc: dict[str, Any]) -> None:
    doc["tables"]["calls"]["name"][0] = len(doc["strings"]) + 5


def _ptr_past_allocs(doc: dict[str, Any]) -> None:
    i = ptr_arg_index(doc)
    n_allocs = len(doc["tables"]["allocs"]["kind"])
    doc["tables"]["args"]["value"][i] = (n_allocs + 10) << schema.PTR_SHIFT


def _args_past_end(doc: dict[str, Any]) -> None:
    # A call with several arguments whose start stays a valid row but whose end does not.
    calls = doc["tables"]["calls"]
    n_args = len(doc["tables"]["args"]["kind"])
    i = max(range(len(calls["arg_count"])), key=lambda c: calls["arg_count"][c])
    assert calls["arg_count"][i] >= 2
    calls["arg_start"][i] = n_args - 1


def _negative_arg_start(doc: dict[str, Any]) -> None:
    # -1 means "none" for id columns, but a call with arguments must start at a real row.
    calls = doc["tables"]["calls"]
    i = max(range(len(calls["arg_count"])), key=lambda c: calls["arg_count"][c])
    assert calls["arg_count"][i] >= 2
    calls["arg_start"][i] = -1


def _arg_span_overflows(doc: dict[str, Any]) -> None:
    # start + count wraps int64 to a negative end: the span check must not add them.
    calls = doc["tables"]["calls"]
    i = max(range(len(calls["arg_count"])), key=lambda c: calls["arg_count"][c])
    calls["arg_start"][i] = (1 << 63) - 1


def _str_arg_past_strings(doc: dict[str, Any]) -> None:
    args = doc["tables"]["args"]
    args["kind"][0] = schema.ARG_STR
    args["value"][0] = len(doc["strings"]) + 3


BAD_DOCS: dict[str, tuple[Mutation, tuple[str, ...]]] = {
    "wrong format": (_set(("format",), "chrome-trace"), ("'format'",)),
    "version 2": (_set(("version",), 2), ("version 2",)),
    "version as string": (_set(("version",), "1"), ("'version'", "integer")),
    "missing table": (_delete(("tables", "tasks")), ("tables.tasks",)),
    "unknown table": (_set(("tables", "gpu_kernels"), {}), ("unknown table", "gpu_kernels")),
    "unknown column": (_set(("tables", "calls", "colour"), []), ("unknown column", "colour")),
    "column not a list": (_set(("tables", "calls", "line"), 12), ("tables.calls.line",)),
    "float value": (_set(("tables", "calls", "line", 0), 1.5), ("tables.calls.line[0]",)),
    "string value": (_set(("tables", "calls", "line", 0), "12"), ("tables.calls.line[0]",)),
    "bool value": (_set(("tables", "calls", "line", 0), True), ("tables.calls.line[0]",)),
    "null value": (_set(("tables", "calls", "line", 0), None), ("tables.calls.line[0]",)),
    "int32 overflow": (_set(("tables", "calls", "line", 0), 1 << 31),
                       ("tables.calls.line[0]", "range")),
    "int32 underflow": (_set(("tables", "calls", "line", 0), -(1 << 31) - 1),
                        ("tables.calls.line[0]", "range")),
    "int8 overflow": (_set(("tables", "tasks", "kind", 0), 128),
                      ("tables.tasks.kind[0]", "range")),
    "ragged table": (_append(("tables", "calls", "line"), 1), ("tables.calls",)),
    "task call past calls": (_set(("tables", "tasks", "call", 0), 10**6),
                             ("tables.tasks.call[0]",)),
    "negative id below -1": (_set(("tables", "tasks", "call", 0), -2),
                             ("tables.tasks.call[0]",)),
    "string id out of range": (_bad_string_id, ("tables.calls.name[0]",)),
    "pointer into no allocation": (_ptr_past_allocs, ("tables.args.value", "allocation")),
    "args past the args table": (_args_past_end, ("tables.calls", "args", "past")),
    "negative arg_start": (_negative_arg_start, ("tables.calls",)),
    "string arg past strings": (_str_arg_past_strings, ("tables.args.value[0]", "string")),
    "arg span overflowing int64": (_arg_span_overflows, ("tables.calls", "arg_start", "past")),
    "task kind past the kinds": (_set(("tables", "tasks", "kind", 0), len(schema.TASK_KINDS)),
                                 ("tables.tasks.kind[0]", "range")),
    "object kind not a kind": (_set(("tables", "objects", "kind", 0), 10),
                               ("tables.objects.kind[0]", "not a known")),
    "device past device_count": (_set(("tables", "allocs", "device", 0), 1),
                                 ("tables.allocs.device[0]", "device")),
    "required reference -1": (_set(("tables", "tasks", "call", 0), -1),
                              ("tables.tasks.call[0]", "calls")),
    "meta device_count a string": (_set(("meta", "device_count"), "1"),
                                   ("meta.device_count", "integer")),
    "meta virtual time negative": (_set(("meta", "virtual_time_ns"), -1),
                                   ("meta.virtual_time_ns", "range")),
    "meta nested object": (_set(("meta", "extra"), {"a": 1}), ("meta.extra",)),
    "meta nested list": (_set(("meta", "extra"), [1, 2]), ("meta.extra",)),
    "strings not strings": (_append(("strings",), 5), ("'strings'",)),
}


@pytest.mark.parametrize("case", sorted(BAD_DOCS))
def test_invalid_document_names_the_problem(tmp_path: Path, base_doc: dict[str, Any],
                                            case: str) -> None:
    """Each kind of bad document raises ValueError whose message names the field."""
    mutate, words = BAD_DOCS[case]
    doc = copy.deepcopy(base_doc)
    mutate(doc)
    msg = load_error(write_doc(tmp_path / "bad.acltrace", doc))
    for word in words:
        assert word in msg, f"{case}: {word!r} not in {msg!r}"


@pytest.mark.parametrize("case", ["float value", "task call past calls", "meta nested object"])
def test_invalid_document_in_gzip_is_refused(tmp_path: Path, base_doc: dict[str, Any],
                                             case: str) -> None:
    """Validation applies to gzip-compressed files too."""
    mutate, words = BAD_DOCS[case]
    doc = copy.deepcopy(base_doc)
    mutate(doc)
    path = tmp_path / "bad.acltrace"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    msg = load_error(path)
    assert all(w in msg for w in words), msg


# --------------------------------------------------------------------------- immutability
def _all_columns(trace: Trace) -> Iterator[tuple[str, str, np.ndarray]]:
    for name, table in trace.tables.items():
        for col in table:
            yield name, col, table[col]


def test_recorded_trace_columns_are_read_only() -> None:
    """Every column of ``Session.trace()`` is a read-only array; assigning raises ValueError."""
    trace = record(copy_flow)
    for name, col, arr in _all_columns(trace):
        assert not arr.flags.writeable, f"{name}.{col}"
    assert trace.calls.rows > 0
    with pytest.raises(ValueError):
        trace.calls["start_ns"][0] = 123
    with pytest.raises(ValueError):
        trace.tables["allocs"]["size"][:] = 0


def test_loaded_trace_columns_are_read_only(tmp_path: Path, base_doc: dict[str, Any]) -> None:
    """Every column of a loaded trace is read-only too."""
    trace = Trace.load(write_doc(tmp_path / "ok.acltrace", base_doc))
    for name, col, arr in _all_columns(trace):
        assert not arr.flags.writeable, f"{name}.{col}"
    with pytest.raises(ValueError):
        trace.tasks["end_ns"][0] = -5


def test_trace_does_not_change_when_the_session_goes_on() -> None:
    """A trace taken mid-run keeps its rows when the program makes more calls."""
    with Session(watchdog=2.0) as s:
        acl = acl_lab.install()
        try:
            assert acl.init() == 0
            assert acl.rt.set_device(0) == 0
            early = s.trace()
            n = early.calls.rows
            snapshot = early.calls["name"].copy()
            acl.rt.get_device()
            acl.rt.get_device()
            later = s.trace()
        finally:
            acl_lab.uninstall()
    assert early.calls.rows == n
    assert np.array_equal(early.calls["name"], snapshot)
    assert later.calls.rows == n + 2
