"""``Session.finish`` freezes the trace without holding the recorder's packed rows and the
Trace's columns whole at once: each table's packed rows are freed once its columns are out.

Measured with tracemalloc, on from before the first call so that the packed rows are traced
too (bytearrays and numpy buffers both are): the peak while ``finish`` runs stays well under
the size it starts at plus the trace's columns, which is what it reached when every table was
copied before any was freed.
"""

from __future__ import annotations

import tracemalloc

import pytest

import acl_lab
from acl_lab import Session

pytestmark = pytest.mark.timeout(300)


def test_finish_frees_the_packed_rows_table_by_table() -> None:
    tracemalloc.start()
    with Session() as s:
        acl = acl_lab.install()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream()
        host, ret2 = acl.rt.malloc_host(64)
        dev, ret3 = acl.rt.malloc(64, 0)
        assert (ret, ret2, ret3) == (0, 0, 0)
        for _ in range(20_000):
            assert acl.rt.memcpy_async(dev, 64, host, 64, 1, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        try:
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            trace = s.finish()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    acl_lab.uninstall()
    columns = sum(t[c].nbytes for t in trace.tables.values() for c in t)
    biggest = max(sum(t[c].nbytes for c in t) for t in trace.tables.values())
    assert biggest < columns // 2, "the program must spread its rows over several tables"
    assert peak - before < (columns + biggest) // 2, (peak - before, columns, biggest)
