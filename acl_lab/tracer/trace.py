"""The immutable Trace: frozen tables, file I/O and the Chrome/Perfetto export.

A ``Trace`` is what ``Session.trace()`` and ``Trace.load`` return. Its tables are read-only
numpy columns (``trace.calls["start_ns"]``); views and checks read them and never write.
``.acltrace`` files are versioned JSON up to ``GZIP_ABOVE`` (1 MiB) and, above it, the
binary column form (``BINARY_VERSION``: the same document with every column stored as its
zlib-compressed deltas; gzip-compressed JSON, what large traces were before, still loads),
validated strictly on load: every table, column, type and id reference is checked, every
value against the domain ``schema`` declares for its column (enum members, ranges, required
references, row spans computed without int64 overflow, device numbers below the trace's device
count) and the typed meta entries against ``schema.META``, so whatever loads, every check,
view and export can use; a bad file raises ``ValueError`` naming table, column, row and
problem. Files are read (and gzip or zlib inflated) in chunks under a size cap.
Nothing is ever unpickled.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from array import array
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

import numpy as np

from ..runtime.kinds import AllocKind
from ..runtime.memory import MAX_DEVICES
from ..runtime.pysync import NAMES as HOST_OP_NAMES
from . import schema
from .schema import FORMAT, OPTIONAL_TABLES, STR, TABLES, VERSION

_RANGES = {"b": (-(1 << 7), 1 << 7), "i": (-(1 << 31), 1 << 31), "q": (-(1 << 63), 1 << 63)}
_DTYPES = {"b": np.int8, "i": np.int32, "q": np.int64}
#: A trace whose JSON is above this size is written in the binary column form (the name is
#: from when such files were gzip-compressed JSON, which still loads).
GZIP_ABOVE = 1 << 20
#: A binary trace file starts with these bytes (``Trace.save`` above ``GZIP_ABOVE``).
BINARY_MAGIC = b"ACLTRACE\x00\x02"
#: The document version of the binary form (its header; the JSON form is ``VERSION``).
BINARY_VERSION = 2
#: The deflate level of each binary column: a million-call trace (193 MB of columns) packs
#: into under 1 MB in well under a second, its JSON took seconds (``bench_million_calls``).
COLUMN_LEVEL = 1
#: Storage types a binary column may declare (its deltas, narrowed to the smallest that fits).
_DELTA_DTYPES = {"<i1": np.int8, "<i2": np.int16, "<i4": np.int32, "<i8": np.int64}
#: A column slice that repeats a pattern of at most this many values is written as that
#: pattern's text repeated (kinds, flags, a loop's constant arguments: most columns of a loop).
_MAX_PERIOD = 8
#: Load refuses files (after decompression) larger than this.
MAX_LOAD_BYTES = 1 << 30
#: Save writes each column (and the string table) in slices of this many values.
SAVE_SLICE = 1 << 14
#: Load reads and inflates files in pieces of this size.
READ_CHUNK = 1 << 20
#: A gzip file's data is kept while inflating it up to this size; beyond it, load only counts
#: (and inflates a second time if the file is allowed), so a refused file costs at most this.
HOLD_BYTES = 32 << 20
#: The meta entries that are objects: API name -> calls (tasks) left out by the trace limit.
DROPPED_CALLS = "dropped_calls"
DROPPED_TASKS = "dropped_tasks"
_COUNT_META = (DROPPED_CALLS, DROPPED_TASKS)


def _check_dropped(key: str, counts: dict[str, Any]) -> None:
    for name, n in counts.items():
        if type(n) is not int or not 0 < n < (1 << 63):
            raise ValueError(f"trace file: meta.{key}[{name!r}] must be a positive "
                             "integer")


def _too_large(max_bytes: int) -> ValueError:
    return ValueError(f"trace file: larger than {max_bytes} bytes")


def _read_plain(fh: BinaryIO, max_bytes: int) -> bytearray:
    """The whole of a plain file, refused by its size before reading when it is too large."""
    try:
        size = os.fstat(fh.fileno()).st_size
    except (OSError, io.UnsupportedOperation):  # not a regular file: the read below decides
        size = 0
    if size > max_bytes:
        raise _too_large(max_bytes)
    raw = bytearray()
    while len(raw) <= max_bytes:  # a file that grows (or a pipe) is still read in bounds
        chunk = fh.read(min(READ_CHUNK, max_bytes + 1 - len(raw)))
        if not chunk:
            break
        raw += chunk
    if len(raw) > max_bytes:
        raise _too_large(max_bytes)
    return raw


def _gunzip(fh: BinaryIO, max_bytes: int, keep: int) -> bytearray | None:
    """Inflate ``fh`` in ``READ_CHUNK`` pieces, counting; the data while it is at most
    ``keep`` bytes, else None (only its size was checked). Above ``max_bytes``: ValueError."""
    fh.seek(0)
    out: bytearray | None = bytearray()
    total = 0
    try:
        with gzip.GzipFile(fileobj=fh) as gz:
            while True:
                chunk = gz.read(READ_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    raise _too_large(max_bytes)
                if out is not None:
                    if total > keep:
                        out = None  # drop what was kept: go on counting only
                    else:
                        out += chunk
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"trace file: corrupt gzip data ({e})") from None
    return out


def _inflate(fh: BinaryIO, max_bytes: int) -> bytearray:
    """A gzip file's data, in bounded memory until its size is known to be allowed."""
    raw = _gunzip(fh, max_bytes, HOLD_BYTES)
    if raw is None:  # larger than HOLD_BYTES but allowed: inflate again, keeping it all
        raw = _gunzip(fh, max_bytes, max_bytes)
    assert raw is not None
    return raw


def _check_meta(meta: dict[str, Any]) -> None:
    """Every meta entry is a JSON scalar in int64; those in ``schema.META`` have its type and
    bounds (so ``int(meta["virtual_time_ns"])`` and the like never fail)."""
    for k, v in meta.items():
        if k in _COUNT_META and isinstance(v, dict):
            _check_dropped(k, v)
            continue
        if not isinstance(v, (str, int, float, bool)) and v is not None:
            raise ValueError(f"trace file: meta.{k} must be a scalar")
        if type(v) is int and not -(1 << 63) <= v < (1 << 63):
            raise ValueError(f"trace file: meta.{k} is out of range")
        want = schema.META.get(k)
        if want is None:
            continue
        if type(v) is not want.kind:  # bool is not an int here
            raise ValueError(f"trace file: meta.{k} must be {_KIND_NAMES[want.kind]}, got "
                             f"{type(v).__name__} {str(v)[:40]!r}")
        if type(v) is int and ((want.lo is not None and v < want.lo)
                               or (want.hi is not None and v > want.hi)):
            raise ValueError(f"trace file: meta.{k} = {v} is out of range "
                             f"{_bounds(want.lo, want.hi)}")


_KIND_NAMES = {int: "an integer", str: "a string", float: "a number"}


def _bounds(lo: int | None, hi: int | None) -> str:
    return f"{'' if lo is None else lo}..{'' if hi is None else hi}"


def _check_domain(tname: str, c: schema.Column, arr: np.ndarray, lengths: dict[str, int],
                  devices: int) -> None:
    """The values of one column lie in its declared domain (see ``schema.Column``)."""
    if not len(arr):
        return
    where = f"tables.{tname}.{c.name}"
    if c.ref is not None:
        limit = lengths[c.ref]
        bad = np.nonzero((arr < (-1 if c.null else 0)) | (arr >= limit))[0]
        if len(bad):
            i = int(bad[0])
            raise ValueError(f"trace file: {where}[{i}] = {int(arr[i])} refers to no row of "
                             f"{c.ref} (it has {limit})")
        return
    hi = devices - 1 if c.hi == schema.DEVICES else c.hi
    assert not isinstance(hi, str)
    out = np.zeros(len(arr), dtype=bool)
    if c.lo is not None:
        out |= arr < c.lo
    if hi is not None:
        out |= arr > hi
    bad = np.nonzero(out)[0]
    if len(bad):
        i = int(bad[0])
        what = " (a device number; the trace has " \
               f"{devices} device(s))" if c.hi == schema.DEVICES else ""
        raise ValueError(f"trace file: {where}[{i}] = {int(arr[i])} is out of range "
                         f"{_bounds(c.lo, hi)}{what}")
    if c.members is not None:
        bad = np.nonzero(~np.isin(arr, sorted(c.members)))[0]
        if len(bad):
            i = int(bad[0])
            raise ValueError(f"trace file: {where}[{i}] = {int(arr[i])} is not a known "
                             f"{tname}.{c.name} value (one of {sorted(c.members)})")


def _check_span(span: schema.Span, cols: dict[str, np.ndarray], limit: int) -> None:
    """``start .. start + count`` lies in ``0 .. limit`` for every row, computed as
    ``count <= limit - start`` (``start`` is checked first), which cannot overflow."""
    start = cols[span.start].astype(np.int64)
    count = cols[span.length].astype(np.int64)
    bad = (start < 0) | (count < 0) | (start > limit)
    bad |= count > limit - np.minimum(start, limit)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"trace file: tables.{span.table}[{i}] rows of {span.into} "
                         f"({span.start} {int(start[i])}, {span.length} {int(count[i])}) start "
                         f"before or run past the {span.into} table (it has {limit})")


def _check_arg_values(args: dict[str, np.ndarray], strings: list[str], n_allocs: int) -> None:
    """An argument's value suits its kind: a string id, or a pointer into an allocation."""
    kinds, vals = args["kind"], args["value"]
    n_strings = len(strings)
    for j in np.nonzero((kinds == schema.ARG_STR) | (kinds == schema.ARG_FLOAT)
                        | (kinds == schema.ARG_OTHER))[0].tolist():
        if not 0 <= int(vals[j]) < n_strings:
            raise ValueError(f"trace file: tables.args.value[{j}] refers to no string")
    for j in np.nonzero(kinds == schema.ARG_FLOAT)[0].tolist():
        text = strings[int(vals[j])]
        try:
            float(text)
        except ValueError:
            raise ValueError(f"trace file: tables.args.value[{j}] is a float argument, but "
                             f"string {int(vals[j])} ({text[:40]!r}) is no number") from None
    for j in np.nonzero(kinds == schema.ARG_PTR)[0].tolist():
        if not 0 <= int(vals[j]) >> schema.PTR_SHIFT < n_allocs:
            raise ValueError(f"trace file: tables.args.value[{j}] points into no allocation")


class _DuplicateKey(ValueError):
    """A JSON object of the file has the same key twice (json would keep the last)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"trace file: duplicate key {key[:100]!r} in a JSON object")
            seen.add(key)
    return out


def _parse_json(raw: bytes | bytearray) -> Any:
    """The decoded JSON of a file (or of a binary file's header); ValueError if it is not."""
    try:
        return json.loads(raw, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ValueError("trace file: JSON nested too deeply") from None
    except _DuplicateKey:
        raise
    except ValueError as e:  # JSONDecodeError, bad UTF-8, numbers with too many digits
        raise ValueError(f"trace file: not valid JSON ({e})") from None


def _check_columns(tname: str, columns: dict[str, Any]) -> None:
    """Refuse a table naming a column the schema does not give it (both file forms)."""
    extra = set(columns) - {c.name for c in TABLES[tname]}
    if extra:
        raise ValueError(f"trace file: tables.{tname} has unknown column(s) {sorted(extra)}")


def _empty_columns(spec: tuple[Any, ...]) -> dict[str, np.ndarray]:
    """The columns of a table a file does not hold (``schema.OPTIONAL_TABLES``)."""
    return {c.name: np.zeros(0, dtype=_DTYPES[c.code]) for c in spec}


def _check_tables(doc: dict[str, Any]) -> dict[str, Any]:
    """The document's ``tables`` object, refused when it is not one or names a table the
    schema does not have (both file forms)."""
    tables = doc.get("tables")
    if not isinstance(tables, dict):
        raise ValueError("trace file: 'tables' must be an object")
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise ValueError(f"trace file: unknown table(s) {sorted(unknown)}")
    return tables


def _check_head(doc: Any, version_wanted: int) -> tuple[dict[str, Any], list[str]]:
    """A document's format, version, meta and strings, checked: ``(meta, strings)``."""
    if not isinstance(doc, dict):
        raise ValueError("trace file: the top level must be a JSON object")
    if doc.get("format") != FORMAT:
        raise ValueError(f"trace file: 'format' must be {FORMAT!r}, "
                         f"got {doc.get('format')!r}")
    version = doc.get("version")
    if type(version) is not int:
        raise ValueError("trace file: 'version' must be an integer")
    if version != version_wanted:
        raise ValueError(f"trace file: version {version} is not supported "
                         f"(this acl_lab reads version {version_wanted})")
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        raise ValueError("trace file: 'meta' must be an object")
    _check_meta(meta)
    strings = doc.get("strings")
    if not isinstance(strings, list) or not all(isinstance(x, str) for x in strings):
        raise ValueError("trace file: 'strings' must be a list of strings")
    return meta, strings


def _json_ints(values: np.ndarray) -> bytes:
    """The compact JSON of ``values.tolist()`` without its brackets (``1,2,3``).

    A slice that repeats a short pattern (``values[i] == values[i + p]`` for a period ``p`` up
    to ``_MAX_PERIOD``) is the text of one period repeated, which costs no per-value Python
    ints; any other slice goes through ``json.dumps``. The bytes are the same either way.
    """
    n = len(values)
    for p in range(1, min(_MAX_PERIOD, n - 1) + 1):
        if np.array_equal(values[p:], values[:-p]):
            whole = n - n % p
            parts = [_json_list(values[:p])] * (whole // p)
            if whole < n:
                parts.append(_json_list(values[whole:]))
            return b",".join(parts)
    return _json_list(values)


def _json_list(values: np.ndarray) -> bytes:
    return json.dumps(values.tolist(), separators=(",", ":"))[1:-1].encode()


def _pack_column(values: np.ndarray, out: BinaryIO) -> tuple[str, int]:
    """Write a column as its deltas (the first value, then each value minus the one before,
    in int64 arithmetic that wraps: ``np.cumsum`` undoes it exactly), narrowed to the smallest
    integer type that holds them and zlib-compressed: ``(dtype, bytes written)``. Two passes
    over slices of ``SAVE_SLICE`` values (the narrowest type, then the data), so a column is
    never copied whole."""

    def deltas() -> Iterator[np.ndarray]:
        prev = np.int64(0)
        for i in range(0, len(values), SAVE_SLICE):
            part = values[i:i + SAVE_SLICE].astype(np.int64)
            yield np.diff(part, prepend=prev)
            prev = part[-1]

    lo = hi = 0
    for d in deltas():
        lo, hi = min(lo, int(d.min())), max(hi, int(d.max()))
    code, dt = next((k, t) for k, t in _DELTA_DTYPES.items()
                    if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
    deflate = zlib.compressobj(COLUMN_LEVEL)
    size = 0
    for d in deltas():
        piece = deflate.compress(d.astype(dt).tobytes())
        out.write(piece)
        size += len(piece)
    piece = deflate.flush()
    out.write(piece)
    return code, size + len(piece)


def _unpack_column(where: str, code: Any, blob: bytes, rows: int, budget: list[int]) -> np.ndarray:
    """The int64 values of a packed column, checked: its type, its inflated size (``rows``
    values of it, taken from ``budget[0]`` so the whole file stays in its bound) and zlib."""
    if not isinstance(code, str) or code not in _DELTA_DTYPES:
        raise ValueError(f"trace file: {where} has an unknown storage type {str(code)[:20]!r}")
    dt = np.dtype(_DELTA_DTYPES[code])
    want = rows * dt.itemsize
    budget[0] -= want
    if budget[0] < 0:
        raise ValueError("trace file: its columns inflate past the size limit")
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(blob, want + 1)
    except zlib.error as e:
        raise ValueError(f"trace file: {where}: corrupt column data ({e})") from None
    if len(raw) != want or not inflate.eof or inflate.unused_data or inflate.unconsumed_tail:
        raise ValueError(f"trace file: {where} does not hold {rows} values")
    return np.cumsum(np.frombuffer(raw, dtype=dt).astype(np.int64))


class Table(Mapping[str, np.ndarray]):
    """One frozen table: column name -> read-only numpy array, all of one length."""

    def __init__(self, name: str, columns: dict[str, np.ndarray]) -> None:
        self.name = name
        self._cols = columns
        self._len = len(next(iter(columns.values()))) if columns else 0

    def __getitem__(self, key: str) -> np.ndarray:
        return self._cols[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __len__(self) -> int:
        """Number of columns (Mapping protocol); use ``rows`` for the row count."""
        return len(self._cols)

    @property
    def rows(self) -> int:
        """Number of rows."""
        return self._len

    def row(self, i: int) -> dict[str, int]:
        """One row as a dict of plain ints."""
        return {k: int(v[i]) for k, v in self._cols.items()}

    def __repr__(self) -> str:
        return f"<Table {self.name}: {self._len} rows, columns {list(self._cols)}>"


class Trace:
    """An immutable record of one emulated run. Build with ``Session.trace()`` or ``load``.

    Each table of ``schema.TABLES`` is an attribute (``trace.calls``, ``trace.tasks``, ...),
    declared below so that a misspelt table is a type error; a test keeps the declarations
    equal to the schema's tables. Columns are ``schema.TABLES[name]``'s, read as
    ``trace.tasks["kind"]``.
    """

    threads: Table
    calls: Table
    args: Table
    objects: Table
    destroys: Table
    allocs: Table
    frees: Table
    tasks: Table
    accesses: Table
    failures: Table
    uninit: Table
    edges: Table
    host_edges: Table
    syncs: Table
    callbacks: Table
    diags: Table

    def __init__(self, strings: list[str], tables: dict[str, Table],
                 meta: dict[str, Any]) -> None:
        self.strings = tuple(strings)
        self.tables = tables
        self.meta = dict(meta)
        missing = set(TABLES) - set(tables)
        if missing:
            raise ValueError(f"a trace needs every table of the schema; missing {sorted(missing)}")
        for name in TABLES:
            setattr(self, name, tables[name])

    # ------------------------------------------------------------------ building
    @classmethod
    def from_columns(cls, strings: list[str], cols: Mapping[str, Mapping[str, Any]],
                     meta: dict[str, Any]) -> Trace:
        """Copy recorder columns (arrays or lists) into a frozen Trace."""
        tables: dict[str, Table] = {}
        for tname, spec in TABLES.items():
            got = cols.get(tname, {})
            columns: dict[str, np.ndarray] = {}
            for c in spec:
                data = got.get(c.name, [])
                if isinstance(data, array):
                    arr = np.frombuffer(data.tobytes(), dtype=_DTYPES[c.code]).copy()
                else:
                    arr = np.asarray(data, dtype=_DTYPES[c.code])
                arr.setflags(write=False)
                columns[c.name] = arr
            tables[tname] = Table(tname, columns)
        return cls(list(strings), tables, meta)

    def __repr__(self) -> str:
        counts = ", ".join(f"{t.rows} {n}" for n, t in self.tables.items() if t.rows)
        return f"<Trace {self.meta.get('profile', '?')}: {counts}>"

    def string(self, i: int) -> str:
        """The interned string with id ``i``."""
        return self.strings[i]

    # ------------------------------------------------------------------ queries
    def call_name(self, cid: int) -> str:
        """The pyACL name of call ``cid``."""
        return self.strings[int(self.calls["name"][cid])]

    def call_site(self, cid: int) -> tuple[str, int]:
        """(file, line) of call ``cid``."""
        return self.strings[int(self.calls["file"][cid])], int(self.calls["line"][cid])

    def call_args(self, cid: int) -> list[Any]:
        """Decoded arguments of a call: ints, strs, None, floats or ``("ptr", alloc, off)``."""
        start = int(self.calls["arg_start"][cid])
        n = int(self.calls["arg_count"][cid])
        kinds, vals = self.args["kind"], self.args["value"]
        out: list[Any] = []
        for i in range(start, start + n):
            k, v = int(kinds[i]), int(vals[i])
            if k == schema.ARG_INT:
                out.append(v)
            elif k == schema.ARG_PTR:
                out.append(("ptr", v >> schema.PTR_SHIFT, v & schema.PTR_OFFSET_MASK))
            elif k == schema.ARG_NONE:
                out.append(None)
            elif k == schema.ARG_BOOL:
                out.append(bool(v))
            elif k == schema.ARG_FLOAT:
                out.append(float(self.strings[v]))
            else:
                out.append(self.strings[v])
        return out

    def calls_named(self, name: str) -> np.ndarray:
        """Ids of every call to ``name`` (e.g. ``"acl.rt.malloc"``)."""
        try:
            sid = self.strings.index(name)
        except ValueError:
            return np.zeros(0, dtype=np.int64)
        return np.nonzero(self.calls["name"] == sid)[0]

    def host_op_mask(self) -> np.ndarray:
        """Which calls are the program's host operations (``threading.*``, ``queue.*``,
        ``time.sleep``: ``runtime.pysync.NAMES``) rather than ACL calls."""
        mask = self.__dict__.get("_host_ops")
        if mask is None:
            ids = [i for i, s in enumerate(self.strings) if s in HOST_OP_NAMES]
            mask = np.isin(self.calls["name"], np.array(ids, dtype=np.int64)) if ids else \
                np.zeros(self.calls.rows, dtype=bool)
            mask.flags.writeable = False
            self.__dict__["_host_ops"] = mask
        return mask

    def api_calls(self) -> np.ndarray:
        """Ids of the calls that are ACL calls (and acl_lab's pseudo-calls), not the
        program's host operations (``host_op_mask``)."""
        return np.nonzero(~self.host_op_mask())[0]

    def peak_device_bytes(self, size: str = "reserved") -> int:
        """Largest device memory (device + DVPP) live at once, in call order: page-rounded
        (``size="reserved"``), or as the program asked for it (``"requested"``)."""
        a, f = self.allocs, self.frees
        dev = (a["kind"] == AllocKind.DEVICE) | (a["kind"] == AllocKind.DVPP)
        events: list[tuple[int, int]] = [(int(a["call"][i]), int(a[size][i]))
                                         for i in np.nonzero(dev)[0]]
        for j in range(f.rows):
            i = int(f["alloc"][j])
            if i >= 0 and dev[i]:
                events.append((int(f["call"][j]), -int(a[size][i])))
        events.sort()
        peak = cur = 0
        for _, delta in events:
            cur += delta
            peak = max(peak, cur)
        return peak

    def stats(self) -> dict[str, int]:
        """The summary's ``stats`` block."""
        dropped = self.meta.get(DROPPED_CALLS)
        return {
            "api_calls": len(self.api_calls()) + (sum(dropped.values())
                                                  if isinstance(dropped, dict) else 0),
            "host_ops": int(np.count_nonzero(self.host_op_mask())),
            "tasks": self.tasks.rows,
            "allocations": int(np.count_nonzero(self.allocs["kind"] != AllocKind.HOST_PAGEABLE)),
            "peak_device_bytes": self.peak_device_bytes(),
            "virtual_time_ns": int(self.meta.get("virtual_time_ns", 0)),
        }

    def findings(self) -> list[Any]:
        """Every finding the checks report for this trace (see ``acl_lab.tracer.checks``)."""
        from .checks import run_checks
        return run_checks(self)

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form written by ``save``."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "meta": self.meta,
            "strings": list(self.strings),
            "tables": {n: {c: t[c].tolist() for c in t} for n, t in self.tables.items()},
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write an ``.acltrace`` file: compact JSON up to ``GZIP_ABOVE`` (1 MiB), the binary
        column form above it (``_save_binary``).

        The JSON's bytes are those of ``json.dumps(self.to_dict(), separators=(",", ":"))``,
        written piece by piece; only its first MiB is made before the form is chosen, so a
        million-call trace never turns its columns into Python ints or text
        (``benchmarks/bench_million_calls.py``).
        """
        head: list[bytes] = []
        size = 0
        for piece in self._json_pieces():
            head.append(piece)
            size += len(piece)
            if size > GZIP_ABOVE:
                break
        if size > GZIP_ABOVE:
            del head
            self._save_binary(path)
            return
        with open(path, "wb") as fh:
            fh.write(b"".join(head))

    def _save_binary(self, path: str | os.PathLike[str]) -> None:
        """The binary form: ``BINARY_MAGIC``, every column packed (``_pack_column``) in the
        schema's table and column order, then the header (compact JSON: format,
        ``BINARY_VERSION``, meta, strings and per table its row count and per column its
        storage type and packed size) and the header's length in 8 little-endian bytes.
        Columns are packed and written one at a time."""
        tables: dict[str, Any] = {}
        with open(path, "wb") as fh:
            fh.write(BINARY_MAGIC)
            for tname, spec in TABLES.items():
                table = self.tables[tname]
                packed: dict[str, list[Any]] = {}
                for c in spec:
                    packed[c.name] = list(_pack_column(table[c.name], fh))
                tables[tname] = {"rows": table.rows, "columns": packed}
            header = json.dumps({"format": FORMAT, "version": BINARY_VERSION, "meta": self.meta,
                                 "strings": list(self.strings), "tables": tables},
                                separators=(",", ":")).encode()
            fh.write(header)
            fh.write(len(header).to_bytes(8, "little"))

    def _json_pieces(self) -> Iterator[bytes]:
        """The compact JSON of ``to_dict()``, in pieces of bounded size."""
        def dumps(value: Any) -> bytes:
            return json.dumps(value, separators=(",", ":")).encode()

        yield b'{"format":' + dumps(FORMAT) + b',"version":' + dumps(VERSION)
        yield b',"meta":' + dumps(self.meta)
        yield b',"strings":['
        for i in range(0, len(self.strings), SAVE_SLICE):
            yield (b"," if i else b"") + dumps(list(self.strings[i:i + SAVE_SLICE]))[1:-1]
        yield b'],"tables":{'
        for ti, (name, table) in enumerate(self.tables.items()):
            yield (b"," if ti else b"") + dumps(name) + b":{"
            for ci, col in enumerate(table):
                yield (b"," if ci else b"") + dumps(col) + b":["
                values = table[col]
                for i in range(0, len(values), SAVE_SLICE):
                    yield (b"," if i else b"") + _json_ints(values[i:i + SAVE_SLICE])
                yield b"]"
            yield b"}"
        yield b"}}"

    @classmethod
    def load(cls, path: str | os.PathLike[str], max_bytes: int = MAX_LOAD_BYTES) -> Trace:
        """Read and strictly validate an ``.acltrace`` file.

        A file larger than ``max_bytes`` (after decompression) is refused having held at most
        ``HOLD_BYTES`` of it in memory: a plain file by its size, a gzip file by inflating it
        in chunks and counting (a file above ``HOLD_BYTES`` is inflated a second time to keep
        it, once its size is known to be allowed).

        Raises:
            ValueError: the file is not a valid trace; the message names the problem.
        """
        with open(path, "rb") as fh:
            head = fh.read(len(BINARY_MAGIC))
            fh.seek(0)
            if head == BINARY_MAGIC:
                return cls.from_binary(_read_plain(fh, max_bytes), max_bytes)
            gzipped = head[:2] == b"\x1f\x8b"
            raw = _inflate(fh, max_bytes) if gzipped else _read_plain(fh, max_bytes)
        return cls.from_json_bytes(raw)

    @classmethod
    def from_json_bytes(cls, raw: bytes | bytearray) -> Trace:
        """Parse and validate the JSON form (see ``load``)."""
        return cls.from_dict(_parse_json(raw))

    @classmethod
    def from_binary(cls, raw: bytes | bytearray, max_bytes: int = MAX_LOAD_BYTES) -> Trace:
        """Parse and validate the binary form (see ``_save_binary``): its header and its
        inflated columns may take ``max_bytes`` in all (a column's inflated size is known
        before it is inflated). Every value then passes the checks the JSON form's do."""
        view = memoryview(raw)
        lead = len(BINARY_MAGIC)
        if len(raw) < lead + 8 or bytes(view[:lead]) != BINARY_MAGIC:
            raise ValueError("trace file: not a binary trace (bad magic or too short)")
        hlen = int.from_bytes(view[-8:], "little")
        body_end = len(raw) - 8 - hlen
        if hlen <= 0 or body_end < lead:
            raise ValueError("trace file: the header length is out of range")
        doc = _parse_json(bytes(view[body_end:len(raw) - 8]))
        meta, strings = _check_head(doc, BINARY_VERSION)
        tables = _check_tables(doc)
        cols: dict[str, dict[str, np.ndarray]] = {}
        lengths: dict[str, int] = {STR: len(strings)}
        pos, budget = lead, [max_bytes - hlen]  # the header and the inflated columns
        for tname, spec in TABLES.items():
            t = tables.get(tname)
            if t is None and tname in OPTIONAL_TABLES:
                cols[tname], lengths[tname] = _empty_columns(spec), 0
                continue
            if not isinstance(t, dict) or set(t) != {"rows", "columns"}:
                raise ValueError(f"trace file: tables.{tname} must be an object with 'rows' "
                                 "and 'columns'")
            rows, packed = t["rows"], t["columns"]
            if type(rows) is not int or not 0 <= rows < (1 << 62):
                raise ValueError(f"trace file: tables.{tname}.rows must be a row count")
            if not isinstance(packed, dict):
                raise ValueError(f"trace file: tables.{tname}.columns must be an object")
            _check_columns(tname, packed)
            cols[tname] = {}
            for c in spec:
                where = f"tables.{tname}.{c.name}"
                entry = packed.get(c.name)
                if not (isinstance(entry, list) and len(entry) == 2
                        and type(entry[1]) is int and entry[1] >= 0):
                    raise ValueError(f"trace file: {where} is missing or not [type, size]")
                if pos + entry[1] > body_end:
                    raise ValueError(f"trace file: {where} runs past the column data")
                values = _unpack_column(where, entry[0], bytes(view[pos:pos + entry[1]]),
                                        rows, budget)
                pos += entry[1]
                lo, hi = _RANGES[c.code]
                bad = np.nonzero((values < lo) | (values >= hi))[0]
                if len(bad):
                    i = int(bad[0])
                    raise ValueError(f"trace file: {where}[{i}] = {int(values[i])} is out of "
                                     "range")
                cols[tname][c.name] = values.astype(_DTYPES[c.code])
                del values
            lengths[tname] = rows
        if pos != body_end:
            raise ValueError("trace file: bytes between the columns and the header")
        return cls._validated(strings, meta, cols, lengths)

    @classmethod
    def from_dict(cls, doc: Any) -> Trace:
        """Validate a decoded document and build the Trace."""
        meta, strings = _check_head(doc, VERSION)
        tables = _check_tables(doc)
        cols: dict[str, dict[str, np.ndarray]] = {}
        lengths: dict[str, int] = {STR: len(strings)}
        for tname, spec in TABLES.items():
            t = tables.get(tname)
            if t is None and tname in OPTIONAL_TABLES:
                cols[tname], lengths[tname] = _empty_columns(spec), 0
                continue
            if not isinstance(t, dict):
                raise ValueError(f"trace file: tables.{tname} is missing or not an object")
            _check_columns(tname, t)
            n: int | None = None
            cols[tname] = {}
            for c in spec:
                values = t.get(c.name)
                where = f"tables.{tname}.{c.name}"
                if not isinstance(values, list):
                    raise ValueError(f"trace file: {where} is missing or not a list")
                if n is None:
                    n = len(values)
                elif len(values) != n:
                    raise ValueError(f"trace file: {where} has {len(values)} values, the "
                                     f"table's other columns have {n}")
                lo, hi = _RANGES[c.code]
                for i, v in enumerate(values):
                    if type(v) is not int:
                        raise ValueError(f"trace file: {where}[{i}] must be an integer, "
                                         f"got {type(v).__name__}")
                    if not lo <= v < hi:
                        raise ValueError(f"trace file: {where}[{i}] = {v} is out of range")
                cols[tname][c.name] = np.asarray(values, dtype=_DTYPES[c.code])
            lengths[tname] = n or 0
        return cls._validated(strings, meta, cols, lengths)

    @classmethod
    def _validated(cls, strings: list[str], meta: dict[str, Any],
                   cols: dict[str, dict[str, np.ndarray]], lengths: dict[str, int]) -> Trace:
        """The Trace of columns whose storage ranges were checked, once every value lies in
        its column's domain (references, spans, argument values)."""
        devices = meta.get("device_count", MAX_DEVICES)
        for tname, spec in TABLES.items():
            for c in spec:
                _check_domain(tname, c, cols[tname][c.name], lengths, devices)
        for span in schema.SPANS:
            _check_span(span, cols[span.table], lengths[span.into])
        _check_arg_values(cols["args"], strings, lengths["allocs"])
        for cs in cols.values():
            for arr in cs.values():
                arr.setflags(write=False)
        return cls(strings, {n: Table(n, c) for n, c in cols.items()}, meta)

    # ------------------------------------------------------------------ chrome / perfetto
    def to_chrome_trace(self, findings: list[Any] | None = None) -> dict[str, Any]:
        """Chrome Trace Event JSON for Perfetto / chrome://tracing (see ``chrome.py``);
        ``findings`` (default: ``self.findings()``) become instants."""
        from .chrome import to_chrome_trace
        return to_chrome_trace(self, findings)

    def save_chrome_trace(self, path: str | os.PathLike[str],
                          findings: list[Any] | None = None) -> None:
        """Write ``to_chrome_trace(findings)`` as JSON (``json.dumps``: its C encoder is
        several times faster than ``json.dump``'s streaming one)."""
        text = json.dumps(self.to_chrome_trace(findings), separators=(",", ":"))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
