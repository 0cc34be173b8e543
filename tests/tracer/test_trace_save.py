"""``Trace.save`` writes the compact JSON of ``to_dict()`` piece by piece (the same bytes as one
``json.dumps``) up to 1 MiB and the binary column form above, without holding the document in
memory."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import acl_lab
from acl_lab import Session
from acl_lab.tracer import trace as trace_mod
from acl_lab.tracer.trace import BINARY_MAGIC, GZIP_ABOVE, Trace

pytestmark = pytest.mark.timeout(300)


def copy_loop(calls: int) -> Trace:
    """A traced program of ``calls`` 64-byte H2D memcpy_async calls."""
    with Session() as s:
        acl = acl_lab.install()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream()
        host, ret2 = acl.rt.malloc_host(64)
        dev, ret3 = acl.rt.malloc(64, 0)
        assert (ret, ret2, ret3) == (0, 0, 0) and acl.rt.memset(host, 64, 1, 64) == 0
        for _ in range(calls):
            assert acl.rt.memcpy_async(dev, 64, host, 64, 1, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        trace = s.finish()
    acl_lab.uninstall()
    return trace


def compact(trace: Trace) -> bytes:
    return json.dumps(trace.to_dict(), separators=(",", ":")).encode()


@pytest.fixture(scope="module")
def large() -> Trace:
    """A trace whose JSON is several MiB (gzip on save)."""
    return copy_loop(60_000)


def test_small_trace_is_the_plain_compact_json(tmp_path: Path) -> None:
    trace = copy_loop(20)
    path = tmp_path / "small.acltrace"
    trace.save(path)
    raw = path.read_bytes()
    assert len(raw) <= GZIP_ABOVE and raw[:1] == b"{"
    assert raw == compact(trace)


def test_slices_join_into_the_same_document(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns and strings longer than a slice are split and joined without a seam."""
    trace = copy_loop(40)
    monkeypatch.setattr(trace_mod, "SAVE_SLICE", 7)
    path = tmp_path / "sliced.acltrace"
    trace.save(path)
    assert path.read_bytes() == compact(trace)
    again = Trace.load(path)
    for name, table in trace.tables.items():
        for col in table:
            assert again.tables[name][col].tolist() == table[col].tolist(), (name, col)


def test_large_trace_is_the_binary_form_of_the_same_document(large: Trace,
                                                              tmp_path: Path) -> None:
    """Above 1 MiB of JSON the file is the binary column form; it loads back as the same
    document, and the gzip-compressed JSON that large traces used to be still loads too."""
    path = tmp_path / "large.acltrace"
    large.save(path)
    raw = path.read_bytes()
    assert raw.startswith(BINARY_MAGIC)
    again = Trace.load(path)
    assert again.to_dict() == large.to_dict()
    old = tmp_path / "old.acltrace"
    old.write_bytes(gzip.compress(compact(large), mtime=0))
    assert Trace.load(old).to_dict() == large.to_dict()


def test_save_does_not_hold_the_document(large: Trace, tmp_path: Path) -> None:
    """Python allocations while saving stay below half the JSON's size (one json.dumps of
    the whole dict holds the text, its bytes and every column as a list of ints)."""
    size = len(compact(large))
    assert size > 8 * GZIP_ABOVE, "the trace must be large enough to tell the two apart"
    tracemalloc.start()
    try:
        large.save(tmp_path / "measured.acltrace")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size // 2, (peak, size)


@pytest.mark.parametrize("values", [
    [], [7], [7, 7], [1, 2], [1, 2, 3] * 7 + [1], [-1] * 100, list(range(9)) * 3,
    [-(1 << 63), (1 << 63) - 1] * 9, list(range(8)) * 3 + [0, 1], [5, 5, 5, 6],
])
def test_column_slices_are_the_json_of_their_values(values: list[int]) -> None:
    """A slice that repeats a short pattern (written as the pattern's text repeated) and one
    that does not give the bytes json.dumps gives."""
    arr = np.asarray(values, dtype=np.int64)
    want = json.dumps(values, separators=(",", ":"))[1:-1].encode()
    assert trace_mod._json_ints(arr) == want
