"""What a traced copy costs in pure Python when it is written as one function.

``floor_copy(s)`` is ``acl.rt.memcpy_async``'s common case (the benchmark's loop: a pinned
64-byte H2D copy between the starts of two live allocations, on an idle stream of the current
context) with every layer folded into one function: the binding's argument checks, the call
bracket (session, lock, thread, call id, host clock), the copy's checks, placement on the
engine, the trace rows and the bytes moving in virtual-time order. Nothing is skipped that
the call does for this case; what is gone is the layering: no hooks, no ``Task`` and
``Access`` objects (an effect is a list), one pack per trace table, the call row written
once.

It is a measuring instrument, not a second implementation: it refuses (``OutsideFloor``)
anything but that case, and ``check_same_trace`` runs one program through it and through the
real call and requires the same trace rows (calls, args, tasks, accesses), the same bytes and
the same clocks, so the figure it gives is the real call's work.

Rows: the floor's time per call, its ratio to the plain-Python baseline measured beside it
(``bench_api_overhead.plain_dict_lookups``), the real traced call's ratio to the floor (what
the layers cost) and the floor's bytecodes. The issue's targets for the real call are 5 µs
and 15x the baseline.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

from acl_lab.runtime.kinds import Engine, TaskKind
from acl_lab.runtime.memory import DEVICE, HOST_PINNED
from acl_lab.runtime.objects import Stream
from acl_lab.runtime.session import Session
from acl_lab.tracer import schema

from .bench_api_overhead import (
    COPY_BYTES,
    H2D,
    _bytecodes,
    _copy_setup,
    _time_copies,
    baseline_ns,
    memcpy_async_ns,
)
from .common import REPEATS, Row, acl_session, check, median, n_calls, quiet_gc

NAME = "copy_floor"
_U64 = (1 << 64) - 1
_I64 = (1 << 63) - 1
_ARG_INT, _ARG_PTR = schema.ARG_KINDS.index("int"), schema.ARG_KINDS.index("ptr")


class OutsideFloor(RuntimeError):
    """The call is not the case the floor covers (the real call handles it)."""


def floor_copy(s: Session) -> tuple[Callable[..., int], Callable[[int], None]]:
    """``(copy, drain)`` for the bound, traced session ``s``: ``copy(dst, dest_max, src,
    count, kind, stream)`` as ``acl.rt.memcpy_async`` for the floor's case, and ``drain(t)``,
    which applies its effects due by virtual time ``t`` (call it before a synchronize).

    Call the real ``memcpy_async`` once first, from the same file: its name and file are
    interned then, as any first call interns them.
    """
    rec: Any = s.hooks.on_call_begin.__self__  # the trace recorder
    calls, args, tasks, acc = rec._calls, rec._args, rec._tasks, rec._acc
    name_id = rec._intern["acl.rt.memcpy_async"]
    intern, start_rows, region_rows = rec._intern, rec._start_rows, rec._region_rows
    pack_args = struct.Struct("<" + "bq" * 6).pack
    pack_call, pack_task, pack_two = calls.pack, tasks.pack, rec._two_accesses
    shift = schema.PTR_SHIFT
    prof = s.profile
    call_ns, latency, setup, bw = (prof.launch_call_ns, prof.launch_latency_ns,
                                   prof.copy_setup_ns, prof.h2d_pinned_bw)
    kind_h2d, eng_h2d = int(TaskKind.H2D), int(Engine.COPY_H2D)
    starts, handles, lock, tls = s.memory.starts_at, s.handles, s.lock, s.tls
    fx: list[tuple[int, int, int, list[Any]]] = []  # (time, phase, seq, effect)
    seq_of = [0]

    def drain(t: int) -> None:
        while fx and fx[0][0] <= t:
            _, phase, seq, e = heappop(fx)
            if phase:  # the start: read the source
                rs, so, n = e[0], e[1], e[4]
                if rs.written is not None and rs.unwritten(so, so + n):
                    raise OutsideFloor("a read of never-written bytes")
                mv = rs.mv
                if mv is None:
                    mv = rs.mv = rs.buf.data.cast("B")
                e[6] = mv[so:so + n].tobytes()
                end = e[5]
                if end > t or (fx and fx[0] < (end, 0, seq)):
                    heappush(fx, (end, 0, seq, e))
                    continue
            rd, do, n = e[2], e[3], e[4]  # the end: write the destination
            mv = rd.mv
            if mv is None:
                mv = rd.mv = rd.buf.data.cast("B")
            mv[do:do + n] = e[6]
            if rd.written is not None:
                rd.mark_written(do, do + n)
        if t > s.applied_ns:
            s.applied_ns = t

    def copy(dst: int, dest_max: int, src: int, count: int, kind: int, stream: int) -> int:
        if not (type(dst) is int and type(dest_max) is int and type(src) is int
                and type(count) is int and type(kind) is int and type(stream) is int
                and 0 < dst <= _U64 and 0 < count <= dest_max <= _I64 and 0 < src <= _U64
                and 0 < stream <= _U64 and dst != src and kind == H2D):
            raise OutsideFloor("arguments")
        f = sys._getframe(1)
        fid = intern.get(f.f_code.co_filename)
        st = handles.get(stream)
        rd, rs = starts.get(dst), starts.get(src)
        hd, hs = start_rows.get(dst), start_rows.get(src)
        if (fid is None or type(st) is not Stream or not st.alive or rd is None or rs is None
                or hd is None or hs is None or not hd[1].live or not hs[1].live
                or (dst | src) % 64 or rd.kind != DEVICE or rs.kind != HOST_PINNED
                or rd.read_only or rd.obj is not None or count > rs.size or count > rd.size
                or st.pending or st.blocked_by is not None):
            raise OutsideFloor("pointers or stream")
        with lock:
            th = tls.th
            ctx = th.ctx
            cid = s.call_count
            if (ctx is None or st.ctx is not ctx or cid >= rec._next_check
                    or cid >= rec._shed_cid or s.interrupt_pending):
                raise OutsideFloor("context or trace state")
            s.call_count = cid + 1
            start = th.clock
            clock = th.clock = start + call_ns
            first_arg = args.n
            args.buf += pack_args(_ARG_PTR, hd[0] << shift, _ARG_INT, dest_max,
                                  _ARG_PTR, hs[0] << shift, _ARG_INT, count,
                                  _ARG_INT, kind, _ARG_INT, stream)
            args.n = first_arg + 6
            duration = setup + int(count / bw)
            ready = clock + latency
            if st.tail_end > ready:
                ready = st.tail_end
            begin = st.engines[eng_h2d].fit(ready, duration)
            end = st.tail_end = begin + duration
            tid = s.task_count
            s.task_count = tid + 1
            seq = seq_of[0]
            seq_of[0] = seq + 1
            heappush(fx, (begin, 1, seq, [rs, 0, rd, 0, count, end, None]))
            tasks.buf += pack_task(cid, st.oid, kind_h2d, eng_h2d, st.device, clock, begin,
                                   end, -1, True)
            tasks.n += 1
            acc.buf += pack_two(tid, region_rows[rs.id], 0, count, False,
                                tid, region_rows[rd.id], 0, count, True)
            acc.n += 2
            s.progress += 1
            if fx[0][0] <= clock:
                drain(clock)
            calls.buf += pack_call(name_id, th.idx, ctx.oid, fid, f.f_lineno, start, clock, 0,
                                   first_arg, 6)
            calls.n += 1
        return 0

    return copy, drain


def _tables(s: Session) -> dict[str, bytes]:
    rec: Any = s.hooks.on_call_begin.__self__
    return {k: bytes(rec.tables[k].buf) for k in ("calls", "args", "tasks", "accesses")}


def _program(use_floor: bool, calls: int = 300) -> tuple[dict[str, bytes], bytes, int]:
    """The trace tables, the device bytes and the host clock of ``calls`` copies (each
    block of 100 followed by a synchronize), through the floor or the real call."""
    with acl_session(True) as (s, acl):
        dev, host, stream = _copy_setup(acl)
        real = acl.rt.memcpy_async
        check(real(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream), "acl.rt.memcpy_async")
        fn, drain = floor_copy(s) if use_floor else (real, lambda t: None)
        for i in range(calls):
            if i and i % 100 == 0:
                drain(1 << 62)
                check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
            check(fn(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream), "copy")
        drain(1 << 62)
        check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
        out, ret = acl.rt.malloc_host(COPY_BYTES)
        check(ret, "acl.rt.malloc_host")
        check(acl.rt.memcpy(out, COPY_BYTES, dev, COPY_BYTES, 2), "acl.rt.memcpy")
        data = acl.util.ptr_to_bytes(out, COPY_BYTES)
        return _tables(s), data, s.tls.th.clock


def check_same_trace() -> None:
    """Raise unless the floor and the real call give the same trace rows, bytes and clock."""
    floor, real = _program(True), _program(False)
    for key in floor[0]:
        if floor[0][key] != real[0][key]:
            raise RuntimeError(f"copy floor: its {key} rows differ from the real call's")
    if floor[1:] != real[1:]:
        raise RuntimeError("copy floor: the bytes or the clock differ from the real call's")


def floor_ns(n: int) -> float:
    """ns per floor copy over ``n`` calls in a fresh traced Session (the loop of
    ``bench_api_overhead.memcpy_async_ns``: a synchronize, untimed, every 1,000 calls)."""
    with acl_session(True) as (s, acl):
        dev, host, stream = _copy_setup(acl)
        check(acl.rt.memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream),
              "acl.rt.memcpy_async")
        copy, drain = floor_copy(s)

        def sync() -> None:
            drain(1 << 62)
            check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")

        with quiet_gc():
            ns = _time_copies(copy, dev, host, stream, n, sync)
    return ns / n


def floor_bytecodes(n: int = 300) -> float:
    """Bytecodes one floor copy executes (its drain included)."""
    with acl_session(True) as (s, acl):
        dev, host, stream = _copy_setup(acl)
        check(acl.rt.memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream),
              "acl.rt.memcpy_async")
        copy, drain = floor_copy(s)
        for _ in range(10):
            copy(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream)
        ops = _bytecodes(lambda: copy(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream), n)
        drain(1 << 62)
    return ops


def run(quick: bool) -> list[Row]:
    """The floor beside the baseline and the real traced call, after checking its trace."""
    check_same_trace()
    n = n_calls(quick)
    floor, vs_base, real_vs_floor = [], [], []
    for _ in range(REPEATS):
        base = baseline_ns(n)
        f = floor_ns(n)
        real = memcpy_async_ns(True, n)
        floor.append(f)
        vs_base.append(f / base)
        real_vs_floor.append(real / f)
    return [
        Row(NAME, "floor_copy_traced", median(floor) * 1e-3, "µs/call"),
        Row(NAME, "floor_copy_vs_baseline", median(vs_base), "x"),
        Row(NAME, "memcpy_async_traced_vs_floor", median(real_vs_floor), "x"),
        Row(NAME, "floor_copy_bytecodes", floor_bytecodes(), "ops"),
    ]
