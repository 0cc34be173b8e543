"""The binary ``.acltrace`` form (what ``Trace.save`` writes above 1 MiB of JSON) is read as
strictly as the JSON form: a damaged or crafted file raises ``ValueError`` naming the
problem, every value passes the same domain checks, and extreme int64 values survive the
delta encoding.

Files are written with ``Trace._save_binary`` (any size) and then cut, flipped or rebuilt
with a changed header.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import BINARY_MAGIC, Table, Trace
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def trace(ready: ModuleType, session: Session) -> Trace:
    host = ok(ready.rt.malloc_host(256))
    dev = ok(ready.rt.malloc(256, 0))
    s = ok(ready.rt.create_stream())
    for _ in range(30):
        assert ready.rt.memcpy_async(dev, 256, host, 256, 1, s) == 0
    assert ready.rt.synchronize_stream(s) == 0
    return session.trace()


def saved(trace: Trace, path: Path) -> bytes:
    trace._save_binary(path)
    return path.read_bytes()


def split(raw: bytes) -> tuple[bytes, dict[str, Any]]:
    """(the column bytes with the magic, the decoded header) of a binary file."""
    n = int.from_bytes(raw[-8:], "little")
    return raw[:len(raw) - 8 - n], json.loads(raw[len(raw) - 8 - n:-8])


def join(body: bytes, header: dict[str, Any]) -> bytes:
    head = json.dumps(header).encode()
    return body + head + len(head).to_bytes(8, "little")


def refused(path: Path, raw: bytes, max_bytes: int | None = None) -> str:
    path.write_bytes(raw)
    with pytest.raises(ValueError) as e:
        Trace.load(path) if max_bytes is None else Trace.load(path, max_bytes)
    return str(e.value)


def test_round_trip_is_the_same_document(trace: Trace, tmp_path: Path) -> None:
    path = tmp_path / "t.acltrace"
    raw = saved(trace, path)
    assert raw.startswith(BINARY_MAGIC)
    again = Trace.load(path)
    assert again.to_dict() == trace.to_dict()
    for name, t in trace.tables.items():
        for c in t:
            assert again.tables[name][c].dtype == t[c].dtype


def test_extreme_values_survive_the_deltas(trace: Trace, tmp_path: Path) -> None:
    """args.value holds any int64: a column swinging between the extremes round-trips."""
    args = dict(trace.args)
    n = len(args["value"])
    swing = np.where(np.arange(n) % 2 == 0, np.iinfo(np.int64).min, np.iinfo(np.int64).max)
    kinds = args["kind"].copy()
    kinds[:] = 0  # plain ints: any value is allowed
    tables = dict(trace.tables)
    tables["args"] = Table("args", {"kind": kinds, "value": swing.astype(np.int64)})
    crafted = Trace(list(trace.strings), tables, trace.meta)
    path = tmp_path / "x.acltrace"
    crafted._save_binary(path)
    assert Trace.load(path).args["value"].tolist() == swing.tolist()


def test_damaged_files_are_refused(trace: Trace, tmp_path: Path) -> None:
    path = tmp_path / "t.acltrace"
    raw = saved(trace, path)
    body, header = split(raw)
    assert "too short" in refused(path, BINARY_MAGIC + b"\0\0")
    assert "header length" in refused(path, raw[:-8] + (len(raw)).to_bytes(8, "little"))
    assert "not valid JSON" in refused(path, raw[:-9] + raw[-8:])
    cut = len(BINARY_MAGIC) + 4
    assert "runs past the column data" in refused(path, join(body[:cut], header))
    flipped = bytearray(body)
    flipped[len(BINARY_MAGIC) + 2] ^= 0xFF
    got = refused(path, join(bytes(flipped), header))
    assert "corrupt column data" in got or "does not hold" in got
    assert "bytes between the columns" in refused(path, join(body + b"\0", header))


def test_crafted_headers_are_refused(trace: Trace, tmp_path: Path) -> None:
    path = tmp_path / "t.acltrace"
    body, header = split(saved(trace, path))

    def with_change(change: Any) -> str:
        h = json.loads(json.dumps(header))
        change(h)
        return refused(path, join(body, h))

    assert "version 1 is not supported" in with_change(lambda h: h.update(version=1))
    assert "does not hold" in with_change(
        lambda h: h["tables"]["calls"].update(rows=h["tables"]["calls"]["rows"] + 1))
    assert "unknown storage type" in with_change(
        lambda h: h["tables"]["calls"]["columns"]["line"].__setitem__(0, "<f8"))
    assert "unknown column" in with_change(
        lambda h: h["tables"]["calls"]["columns"].update(extra=["<i1", 0]))
    assert "unknown table" in with_change(lambda h: h["tables"].update(extra={}))
    assert "must be an object with" in with_change(lambda h: h["tables"].pop("tasks"))


def test_values_are_checked_against_their_columns(trace: Trace, tmp_path: Path) -> None:
    """A value past its storage type, or a reference to no row, is refused by name."""
    path = tmp_path / "t.acltrace"
    for table, col, value, words in (("tasks", "kind", 300, "tables.tasks.kind[0] = 300 is "
                                      "out of range"),
                                     ("tasks", "call", 10**6, "refers to no row of calls")):
        tables = dict(trace.tables)
        cols = dict(trace.tables[table])
        bad = cols[col].astype(np.int64)
        bad[0] = value
        cols[col] = bad
        tables[table] = Table(table, cols)
        Trace(list(trace.strings), tables, trace.meta)._save_binary(path)
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            Trace.load(path)


def test_columns_inflating_past_the_limit_are_refused(trace: Trace, tmp_path: Path) -> None:
    """Two million zero arguments pack into a few KiB and inflate to 2 MiB (one byte each):
    a limit between the two refuses the file before that column is inflated."""
    tables = dict(trace.tables)
    zeros = np.zeros(2 << 20, dtype=np.int64)
    tables["args"] = Table("args", {"kind": zeros.astype(np.int8), "value": zeros})
    path = tmp_path / "t.acltrace"
    Trace(list(trace.strings), tables, trace.meta)._save_binary(path)
    size = path.stat().st_size
    assert size < 256 << 10
    assert Trace.load(path).args.rows == 2 << 20
    assert "inflate past the size limit" in refused(path, path.read_bytes(),
                                                    max_bytes=size + (1 << 20))
