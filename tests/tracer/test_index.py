"""``TraceIndex``: the derived views the checks share, computed once per trace, beside it.

Each view is checked against the trace's own columns (``Trace.call_args``, ``call_site``,
the frees and diags tables), and the index against the rules of a cache beside an immutable
trace: one index per trace, nothing written into the trace, and no trace kept alive by it.
"""

from __future__ import annotations

import gc
import weakref
from types import ModuleType

import numpy as np
import pytest

from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS
from acl_lab.runtime.session import Session
from acl_lab.tracer import index as index_mod
from acl_lab.tracer.index import TraceIndex
from acl_lab.tracer.trace import Trace
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)

N = 128


def program(acl: ModuleType) -> None:
    """Copies with pointers into and past the start of buffers, a double free, a failed
    free of an unknown address (an error diagnostic) and a second thread's name."""
    host = ok(acl.rt.malloc_host(N))
    devs = [ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3)]
    streams = [ok(acl.rt.create_stream()) for _ in range(2)]
    for i, d in enumerate(devs):  # streams 0, 1, 0: each stream's queue is not a range
        s = streams[i % 2]
        assert acl.rt.memcpy_async(d + 64, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) == 0
    assert acl.rt.synchronize_device() == ACL_SUCCESS
    assert acl.rt.free(devs[0]) == ACL_SUCCESS
    assert acl.rt.free(devs[0]) != ACL_SUCCESS
    assert acl.rt.free(12345) != ACL_SUCCESS


@pytest.fixture
def trace(ready: ModuleType, session: Session) -> Trace:
    program(ready)
    return session.trace()


def test_pointer_arguments_are_those_call_args_decodes(trace: Trace) -> None:
    t = trace
    ix = TraceIndex.of(t)
    want = [(c, arg[1], arg[2]) for c in range(t.calls.rows)
            for arg in t.call_args(c) if isinstance(arg, tuple)]
    assert list(ix.ptr_args) == want
    assert any(off == 64 for _, _, off in want)
    assert [(c, a, o) for c, a, o in zip(ix.ptr_args.calls.tolist(), ix.ptr_args.allocs.tolist(),
                                          ix.ptr_args.offsets.tolist(), strict=True)] == want
    for c in range(t.calls.rows):
        assert ix.call_ptrs(c) == [(a, o) for cc, a, o in want if cc == c]
        assert ix.call_ints(c) == [x for x in t.call_args(c)
                                   if type(x) is int]


def test_sites_names_and_diags_match_the_tables(trace: Trace) -> None:
    t = trace
    ix = TraceIndex.of(t)
    for c in range(t.calls.rows):
        assert ix.site(c) == t.call_site(c)
        assert ix.where(c) == "{}:{}".format(*t.call_site(c))
        assert ix.call_name(c) == t.call_name(c)
    assert ix.site(-1) == ("", 0)
    frees = ix.calls_named("acl.rt.free")
    assert frees.tolist() == t.calls_named("acl.rt.free").tolist()
    assert len(frees) == 3 and len(ix.ok_calls("acl.rt.free")) == 1
    assert ix.string_id("no such string") is None and ix.ids_of(["no such string"]) == {}
    dg = t.diags
    errors = [(int(dg["call"][j]), int(dg["level"][j]), t.string(int(dg["message"][j])))
              for j in range(dg.rows)
              if t.string(int(dg["kind"][j])) == "error"]
    assert len(errors) >= 2 and ix.diags_of("error") == errors
    assert ix.thread_name(0).startswith("thread 0 (") and ix.thread_name(99) == "thread 99"


def test_freed_by_is_the_first_explicit_free(trace: Trace) -> None:
    t = trace
    ix = TraceIndex.of(t)
    first_free = int(ix.ok_calls("acl.rt.free")[0])
    (row,) = [a for a, c in ix.freed_by.items() if c == first_free]
    f = t.frees
    assert int(f["call"][np.nonzero(f["alloc"] == row)[0][0]]) == first_free
    assert ix.alloc_kind(row) == 0 and ix.alloc_call(row) < first_free


def test_one_index_per_trace_beside_it(ready: ModuleType, session: Session) -> None:
    program(ready)
    a, b = session.trace(), session.trace()
    assert TraceIndex.of(a) is TraceIndex.of(a) and TraceIndex.of(a) is not TraceIndex.of(b)
    before = {n: {c: t[c].copy() for c in t} for n, t in a.tables.items()}
    attrs = set(vars(a))
    ix = TraceIndex.of(a)
    _ = (ix.ptr_args, ix.freed_by, ix.handle_rows, ix.files, ix.diags_of("error"))
    assert set(vars(a)) == attrs
    for n, t in a.tables.items():
        for c in t:
            assert np.array_equal(t[c], before[n][c]) and not t[c].flags.writeable
    gone = weakref.ref(a)
    del a, ix
    gc.collect()
    assert gone() is None and len(index_mod._INDEXES) >= 1  # b's index is still there


def test_stream_tasks_are_each_streams_queue(trace: Trace) -> None:
    ix = TraceIndex.of(trace)
    stream = trace.tasks["stream"]
    assert set(ix.stream_tasks) == {int(s) for s in stream.tolist() if s >= 0}
    assert len(ix.stream_tasks) == 2
    for s, tasks in ix.stream_tasks.items():
        assert tasks.tolist() == np.nonzero(stream == s)[0].tolist()
