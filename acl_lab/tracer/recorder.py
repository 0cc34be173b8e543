"""The recorder: the runtime hooks' subscriber that appends to columnar tables.

Append-only packed rows (one ``struct.pack`` per row into a bytearray per table), names
interned as integer ids, nothing formatted until a view asks. Rows for calls and tasks are
appended when they start and completed in place when their end becomes known; ``freeze()``
copies everything into an immutable ``Trace``. The recorder never changes runtime state.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from . import schema
from .schema import ARG_BOOL, ARG_FLOAT, ARG_INT, ARG_NONE, ARG_OTHER, ARG_PTR, ARG_STR, TABLES


class PackedTable:
    """An append-only table stored as packed little-endian rows in one bytearray.

    Appending a row is one ``struct.pack``; a row's later fields (an end time, a return
    code) can be completed in place with ``set``. ``columns()`` unpacks into numpy arrays.
    """

    __slots__ = ("buf", "dtype", "n", "name", "offsets", "pack", "size")

    def __init__(self, name: str) -> None:
        cols = TABLES[name]
        st = struct.Struct("<" + "".join(c.code for c in cols))
        self.name = name
        self.pack = st.pack
        self.size = st.size
        self.buf = bytearray()
        self.n = 0
        self.dtype = np.dtype([(c.name, "<" + _NP[c.code]) for c in cols])
        self.offsets = {c.name: self.dtype.fields[c.name][1] for c in cols}  # type: ignore[index]

    def append(self, *values: int) -> int:
        """Append one row; returns its row number."""
        self.buf += self.pack(*values)
        self.n += 1
        return self.n - 1

    def setter(self, *names: str) -> Any:
        """A function ``f(row, *values)`` writing adjacent columns ``names`` of one row."""
        codes = "".join(next(c.code for c in TABLES[self.name] if c.name == n) for n in names)
        st = struct.Struct("<" + codes)
        base = self.offsets[names[0]]
        size = self.size
        buf = self.buf
        pack_into = st.pack_into

        def set_fields(row: int, *values: int) -> None:
            pack_into(buf, row * size + base, *values)
        return set_fields

    def get(self, row: int, name: str) -> int:
        """One value (for the recorder's own lookups while recording)."""
        code = next(c.code for c in TABLES[self.name] if c.name == name)
        return int(struct.unpack_from("<" + code, self.buf, row * self.size
                                      + self.offsets[name])[0])

    def columns(self) -> dict[str, np.ndarray]:
        """Copy the rows out as one numpy array per column."""
        rows = np.frombuffer(bytes(self.buf), dtype=self.dtype)
        return {name: rows[name].astype(_NP_OUT[self.dtype.fields[name][0].char])  # type: ignore[index]
                for name in self.dtype.names or ()}


_NP = {"b": "i1", "i": "i4", "q": "i8"}
_NP_OUT = {"b": np.int8, "i": np.int32, "l": np.int64, "q": np.int64}


class Recorder:
    """Subscribes to a Session's hooks and records every event into packed tables."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.strings: list[str] = []
        self._intern: dict[str, int] = {}
        self.tables: dict[str, PackedTable] = {t: PackedTable(t) for t in TABLES}
        t = self.tables
        self._calls = t["calls"]
        self._args = t["args"]
        self._tasks = t["tasks"]
        self._acc = t["accesses"]
        self._set_call_end = t["calls"].setter("end_ns", "ret")
        self._set_task_times = t["tasks"].setter("start_ns", "end_ns")
        self._arg_structs: dict[int, Any] = {}
        self._region_rows: dict[int, int] = {}
        self.meta: dict[str, Any] = {
            "profile": session.profile.name, "soc": session.profile.soc_name,
            "device_count": len(session.devices),
        }

    # --------------------------------------------------------------- helpers
    def s(self, text: str) -> int:
        """Intern a string; return its id."""
        i = self._intern.get(text)
        if i is None:
            i = len(self.strings)
            self._intern[text] = i
            self.strings.append(text)
        return i

    def call_site(self, cid: int) -> tuple[str, int]:
        """(file, line) of a recorded call."""
        calls = self._calls
        if 0 <= cid < calls.n:
            return self.strings[calls.get(cid, "file")], calls.get(cid, "line")
        return "", 0

    # --------------------------------------------------------------- hooks
    def on_thread(self, th: Any) -> None:
        self.tables["threads"].append(self.s(th.name), 1 if th.started_by_acl else 0)

    def on_call_begin(self, cid: int, name: str, thread: int, ctx: int, file: str, line: int,
                      start: int, args: tuple[Any, ...], ptrs: int) -> None:
        intern = self._intern
        n = intern.get(name)
        if n is None:
            n = self.s(name)
        f = intern.get(file)
        if f is None:
            f = self.s(file)
        args_tab = self._args
        arg_start = args_tab.n
        nargs = len(args)
        if nargs:
            flat: list[int] = []
            for i, a in enumerate(args):
                if type(a) is int:
                    if ptrs >> i & 1 and a:
                        mem = self.session.memory
                        # A pointer into a freed allocation is recorded relative to it too:
                        # comparing the call with the free says "use after free".
                        r = mem.find(a) or mem.find_freed(a)
                        row = self._region_rows.get(r.id) if r is not None else None
                        if row is not None:
                            flat += (ARG_PTR, (row << schema.PTR_SHIFT) | (a - r.addr))
                            continue
                    if -(1 << 63) <= a < (1 << 63):
                        flat += (ARG_INT, a)
                    else:
                        flat += (ARG_OTHER, self.s(str(a)))
                else:
                    flat += self._encode(a)
            st = self._arg_structs.get(nargs)
            if st is None:
                st = self._arg_structs[nargs] = struct.Struct("<" + "bq" * nargs).pack
            args_tab.buf += st(*flat)
            args_tab.n += nargs
        self._calls.buf += self._calls.pack(n, thread, ctx, f, line, start, -1, 0, arg_start,
                                            min(nargs, 127))
        self._calls.n += 1

    def _encode(self, a: Any) -> tuple[int, int]:
        if a is None:
            return ARG_NONE, 0
        if type(a) is bool:
            return ARG_BOOL, int(a)
        if type(a) is str:
            return ARG_STR, self.s(a if len(a) <= 200 else a[:197] + "...")
        if type(a) is float:
            return ARG_FLOAT, self.s(repr(a))
        return ARG_OTHER, self.s(_short_repr(a))

    def on_call_end(self, cid: int, end: int, ret: int) -> None:
        self._set_call_end(cid, end, ret if -(1 << 31) <= ret < (1 << 31) else -1)

    def on_object(self, oid: int, kind: int, handle: int, device: int, ctx: int, flags: int,
                  call: int, label: str) -> None:
        self.tables["objects"].append(kind, handle, device, ctx, flags, call, self.s(label))

    def on_destroy(self, oid: int, call: int, how: int) -> None:
        self.tables["destroys"].append(oid, call, how)

    def on_alloc(self, r: Any, call: int) -> None:
        # Every region is announced once; its allocs row is remembered for later references.
        self._region_rows[r.id] = self.tables["allocs"].append(
            r.kind, r.device, r.policy, r.pool, r.display_addr, r.requested, r.size,
            r.accounted, call, r.ctx)

    def alloc_row(self, region_id: int) -> int:
        """The allocs row of a runtime region id (-1 if it was never announced)."""
        return self._region_rows.get(region_id, -1)

    def on_free(self, r: Any, call: int, how: int) -> None:
        self.tables["frees"].append(self.alloc_row(r.id), call, how)

    def on_task(self, t: Any) -> None:
        stream = t.stream
        event = t.event
        tasks = self._tasks
        tasks.buf += tasks.pack(t.call, stream.oid if stream is not None else -1, t.kind,
                                t.engine, t.device, t.submit, -1, -1,
                                event.oid if event is not None else -1, 1 if t.pinned else 0)
        tasks.n += 1
        acc = self._acc
        rows = self._region_rows
        for a in t.accesses:
            acc.buf += acc.pack(t.id, rows.get(a.region.id, -1), a.offset, a.length,
                                1 if a.write else 0)
            acc.n += 1

    def on_task_placed(self, t: Any) -> None:
        self._set_task_times(t.id, t.start, t.end)

    def on_task_status(self, t: Any) -> None:
        self.tables["failures"].append(t.id, t.status, self.s(t.reason))

    def on_uninit(self, t: Any, region: Any, nbytes: int) -> None:
        self.tables["uninit"].append(t.id, self.alloc_row(region.id), nbytes)

    def on_edge(self, record: int, wait: int) -> None:
        self.tables["edges"].append(record, wait)

    def on_sync(self, call: int, kind: int, target: int, start: int, end: int) -> None:
        self.tables["syncs"].append(call, kind, target, start, end)

    def on_callback(self, task: int, thread: int, start: int, end: int) -> None:
        self.tables["callbacks"].append(task, thread, start, end)

    def on_diag(self, call: int, level: int, kind: str, message: str) -> None:
        self.tables["diags"].append(call, level, self.s(kind), self.s(message))

    # --------------------------------------------------------------- output
    def nbytes(self) -> int:
        """Bytes held by the tables (the trace's in-memory size, strings excluded)."""
        return sum(len(t.buf) for t in self.tables.values())

    def freeze(self) -> Any:
        """An immutable Trace of everything recorded so far."""
        from .trace import Trace
        meta = dict(self.meta)
        meta["virtual_time_ns"] = max((t.clock for t in self.session.thread_list), default=0)
        cols = {name: t.columns() for name, t in self.tables.items()}
        return Trace.from_columns(self.strings, cols, meta)


def _short_repr(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if callable(obj) and name:
        return f"<function {name}>"
    text = f"<{type(obj).__name__}>"
    if isinstance(obj, (list, tuple, dict)) and len(obj) <= 8:
        try:
            r = repr(obj)
        except Exception:
            return text
        return r if len(r) <= 120 else r[:117] + "..."
    return text
