"""The recorder: the runtime hooks' subscriber that appends to columnar tables.

Append-only ``array.array`` columns, names interned as integer ids, nothing formatted until a
view asks. Rows for calls and tasks are appended when they start and completed in place when
their end becomes known; ``freeze()`` copies everything into an immutable ``Trace``. The
recorder never changes runtime state.
"""

from __future__ import annotations

from array import array
from typing import Any

from . import schema
from .schema import ARG_BOOL, ARG_FLOAT, ARG_INT, ARG_NONE, ARG_OTHER, ARG_PTR, ARG_STR, TABLES


class Recorder:
    """Subscribes to a Session's hooks and records every event into columns."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.strings: list[str] = []
        self._intern: dict[str, int] = {}
        self.cols: dict[str, dict[str, array[Any]]] = {
            t: {c.name: array(c.code) for c in cols} for t, cols in TABLES.items()}
        c = self.cols
        # Bound appends of the hot columns, looked up once.
        self._call_app = [c["calls"][n.name].append for n in TABLES["calls"]]
        self._arg_kind = c["args"]["kind"].append
        self._arg_val = c["args"]["value"].append
        self._call_end = c["calls"]["end_ns"]
        self._call_ret = c["calls"]["ret"]
        self._task_app = [c["tasks"][n.name].append for n in TABLES["tasks"]]
        self._acc_app = [c["accesses"][n.name].append for n in TABLES["accesses"]]
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
        calls = self.cols["calls"]
        if 0 <= cid < len(calls["file"]):
            return self.strings[calls["file"][cid]], calls["line"][cid]
        return "", 0

    # --------------------------------------------------------------- hooks
    def on_thread(self, th: Any) -> None:
        t = self.cols["threads"]
        t["name"].append(self.s(th.name))
        t["acl"].append(1 if th.started_by_acl else 0)

    def on_call_begin(self, cid: int, name: str, thread: int, ctx: int, file: str, line: int,
                      start: int, args: tuple[Any, ...], ptrs: int) -> None:
        app = self._call_app
        intern = self._intern
        n = intern.get(name)
        if n is None:
            n = self.s(name)
        f = intern.get(file)
        if f is None:
            f = self.s(file)
        kinds = self._arg_kind
        vals = self._arg_val
        arg_start = len(self.cols["args"]["kind"])
        for i, a in enumerate(args):
            ta = type(a)
            if ta is int:
                if ptrs >> i & 1 and a:
                    r = self.session.memory.find(a)
                    row = self._region_rows.get(r.id) if r is not None else None
                    if r is not None and row is not None:
                        kinds(ARG_PTR)
                        vals((row << schema.PTR_SHIFT) | (a - r.addr))
                        continue
                if -(1 << 63) <= a < (1 << 63):
                    kinds(ARG_INT)
                    vals(a)
                else:
                    kinds(ARG_OTHER)
                    vals(self.s(str(a)))
            elif a is None:
                kinds(ARG_NONE)
                vals(0)
            elif ta is bool:
                kinds(ARG_BOOL)
                vals(int(a))
            elif ta is str:
                kinds(ARG_STR)
                vals(self.s(a if len(a) <= 200 else a[:197] + "..."))
            elif ta is float:
                kinds(ARG_FLOAT)
                vals(self.s(repr(a)))
            else:
                kinds(ARG_OTHER)
                vals(self.s(_short_repr(a)))
        app[0](n)
        app[1](thread)
        app[2](ctx)
        app[3](f)
        app[4](line)
        app[5](start)
        app[6](-1)
        app[7](0)
        app[8](arg_start)
        app[9](min(len(args), 127))

    def on_call_end(self, cid: int, end: int, ret: int) -> None:
        self._call_end[cid] = end
        self._call_ret[cid] = ret if -(1 << 31) <= ret < (1 << 31) else -1

    def on_object(self, oid: int, kind: int, handle: int, device: int, ctx: int, flags: int,
                  call: int, label: str) -> None:
        o = self.cols["objects"]
        o["kind"].append(kind)
        o["handle"].append(handle)
        o["device"].append(device)
        o["ctx"].append(ctx)
        o["flags"].append(flags)
        o["call"].append(call)
        o["label"].append(self.s(label))

    def on_destroy(self, oid: int, call: int, how: int) -> None:
        d = self.cols["destroys"]
        d["obj"].append(oid)
        d["call"].append(call)
        d["how"].append(how)

    def on_alloc(self, r: Any, call: int) -> None:
        a = self.cols["allocs"]
        # Region ids are the allocs row numbers: the memory system numbers regions densely
        # and every region is announced exactly once, in order.
        self._region_rows[r.id] = len(a["kind"])
        a["kind"].append(r.kind)
        a["device"].append(r.device)
        a["policy"].append(r.policy)
        a["pool"].append(r.pool)
        a["addr"].append(r.display_addr)
        a["requested"].append(r.requested)
        a["size"].append(r.size)
        a["reserved"].append(r.accounted)
        a["call"].append(call)
        a["ctx"].append(r.ctx)

    def alloc_row(self, region_id: int) -> int:
        """The allocs row of a runtime region id (-1 if it was never announced)."""
        return self._region_rows.get(region_id, -1)

    def on_free(self, r: Any, call: int, how: int) -> None:
        f = self.cols["frees"]
        f["alloc"].append(self.alloc_row(r.id))
        f["call"].append(call)
        f["how"].append(how)

    def on_task(self, t: Any) -> None:
        app = self._task_app
        app[0](t.call)
        app[1](t.stream.oid if t.stream is not None else -1)
        app[2](int(t.kind))
        app[3](int(t.engine))
        app[4](t.device)
        app[5](t.submit)
        app[6](-1)
        app[7](-1)
        app[8](t.event.oid if t.event is not None else -1)
        app[9](1 if t.pinned else 0)
        acc = self._acc_app
        for a in t.accesses:
            acc[0](t.id)
            acc[1](self.alloc_row(a.region.id))
            acc[2](a.offset)
            acc[3](a.length)
            acc[4](1 if a.write else 0)

    def on_task_placed(self, t: Any) -> None:
        tasks = self.cols["tasks"]
        tasks["start_ns"][t.id] = t.start
        tasks["end_ns"][t.id] = t.end

    def on_task_status(self, t: Any) -> None:
        f = self.cols["failures"]
        f["task"].append(t.id)
        f["code"].append(t.status)
        f["reason"].append(self.s(t.reason))

    def on_uninit(self, t: Any, region: Any, nbytes: int) -> None:
        u = self.cols["uninit"]
        u["task"].append(t.id)
        u["alloc"].append(self.alloc_row(region.id))
        u["bytes"].append(nbytes)

    def on_edge(self, record: int, wait: int) -> None:
        e = self.cols["edges"]
        e["record"].append(record)
        e["wait"].append(wait)

    def on_sync(self, call: int, kind: int, target: int, start: int, end: int) -> None:
        s = self.cols["syncs"]
        s["call"].append(call)
        s["kind"].append(kind)
        s["target"].append(target)
        s["start_ns"].append(start)
        s["end_ns"].append(end)

    def on_callback(self, task: int, thread: int, start: int, end: int) -> None:
        c = self.cols["callbacks"]
        c["task"].append(task)
        c["thread"].append(thread)
        c["start_ns"].append(start)
        c["end_ns"].append(end)

    def on_diag(self, call: int, level: int, kind: str, message: str) -> None:
        d = self.cols["diags"]
        d["call"].append(call)
        d["level"].append(level)
        d["kind"].append(self.s(kind))
        d["message"].append(self.s(message))

    # --------------------------------------------------------------- output
    def nbytes(self) -> int:
        """Bytes held by the columns (the trace's in-memory size, strings excluded)."""
        return sum(col.itemsize * len(col) for t in self.cols.values() for col in t.values())

    def freeze(self) -> Any:
        """An immutable Trace of everything recorded so far."""
        from .trace import Trace
        meta = dict(self.meta)
        meta["virtual_time_ns"] = max((t.clock for t in self.session.thread_list), default=0)
        return Trace.from_columns(self.strings, self.cols, meta)


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
