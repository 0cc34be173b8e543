"""After ``Session.finish`` the frozen trace is the only copy of the rows.

The recorder empties its packed tables once the session has finished (a million traced
calls would otherwise be held twice: packed rows and the trace's columns), and packs them
back from that trace when anything is recorded or asked later, so a later call or a second
``trace()`` sees every row as before.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

import acl_lab
from acl_lab.constants import ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace


def program(acl: ModuleType) -> None:
    """A few calls with tasks, an allocation, a free and a stream."""
    rt = acl.rt
    assert acl.init() == ACL_SUCCESS
    assert rt.set_device(0) == ACL_SUCCESS
    stream, _ = rt.create_stream()
    host, _ = rt.malloc_host(64)
    assert rt.memset(host, 64, 1, 64) == ACL_SUCCESS
    dev, _ = rt.malloc(64, 0)
    for _ in range(20):
        rt.memcpy_async(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    assert rt.synchronize_stream(stream) == ACL_SUCCESS
    assert rt.free(dev) == ACL_SUCCESS


def same_rows(a: Trace, b: Trace, upto: dict[str, int] | None = None) -> None:
    """Every table of ``a`` equals ``b``'s first rows (all of them unless ``upto``)."""
    for name, table in a.tables.items():
        n = table.rows if upto is None else upto[name]
        assert b.tables[name].rows >= n, name
        for col in table:
            assert np.array_equal(table[col][:n], b.tables[name][col][:n]), (name, col)


def test_finish_releases_the_packed_rows_and_a_later_trace_has_them() -> None:
    """finish() leaves the recorder's tables empty; trace() again gives the same rows."""
    with Session() as s:
        acl = acl_lab.install()
        try:
            program(acl)
            before = s.recorder.nbytes()
            trace = s.finish()
            assert before > 0 and s.recorder.nbytes() == 0
            again = s.trace()
        finally:
            acl_lab.uninstall()
    assert trace.tasks.rows >= 20 and trace.calls.rows > 20
    same_rows(trace, again)
    same_rows(again, trace)


def test_a_call_after_finish_is_recorded_after_every_earlier_row() -> None:
    """A call made after finish() (a late destructor, a notebook cell) comes after all the
    rows recorded before, which are unchanged."""
    with Session() as s:
        acl = acl_lab.install()
        try:
            program(acl)
            trace = s.finish()
            acl.rt.get_device()  # any call after the end
            later = s.trace()
        finally:
            acl_lab.uninstall()
    assert later.calls.rows == trace.calls.rows + 1
    assert later.call_name(later.calls.rows - 1) == "acl.rt.get_device"
    same_rows(trace, later, {name: t.rows for name, t in trace.tables.items()})
