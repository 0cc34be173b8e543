"""The runtime's named kinds (``runtime.kinds``): the trace format's numbering, declared once.

The values are the ``acltrace`` format (version 1): a trace saved before must load and mean
the same, so the table below is the format's, written out as the format's documentation; the
tracer's name tables must be the enums' labels; and what a program does is recorded under the
member that names it, through a save and a load.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import acl_lab
from acl_lab.constants import MemcpyKind
from acl_lab.runtime import memory
from acl_lab.runtime.kinds import AllocKind, Ending, Engine, ObjectKind, Pool, SyncKind, TaskKind
from acl_lab.runtime.session import Session
from acl_lab.tracer import schema
from acl_lab.tracer.trace import Trace

#: The acltrace v1 numbering of every kind column (the format, not a computed result).
FORMAT_V1 = {
    TaskKind: {"H2D": 0, "D2H": 1, "D2D": 2, "H2H": 3, "MEMSET": 4, "KERNEL": 5, "MODEL": 6,
               "EVENT_RECORD": 7, "EVENT_WAIT": 8, "EVENT_RESET": 9, "CALLBACK": 10,
               "DVPP": 11},
    Engine: {"NONE": 0, "COPY_H2D": 1, "COPY_D2H": 2, "COPY_D2D": 3, "AICORE": 4, "DVPP": 5,
             "HOST": 6},
    SyncKind: {"STREAM": 0, "DEVICE": 1, "EVENT": 2, "REPORT": 3, "JOIN": 4},
    AllocKind: {"DEVICE": 0, "HOST_PINNED": 1, "DVPP": 2, "HOST_PAGEABLE": 3},
    Pool: {"NORMAL": 0, "HUGE": 1, "HUGE1G": 2, "DVPP": 3, "HOST": 4},
    Ending: {"EXPLICIT": 0, "RECLAIMED": 1},
    ObjectKind: {"CONTEXT": 0, "STREAM": 1, "EVENT": 2, "THREAD": 3, "DATA_BUFFER": 4,
                 "TENSOR_DESC": 5, "OP_ATTR": 6, "OP_HANDLE": 7, "MODEL_DESC": 8,
                 "DATASET": 9, "MDL_AIPP": 11, "DVPP_CHANNEL_DESC": 20, "DVPP_CHANNEL": 21,
                 "DVPP_PIC_DESC": 22, "DVPP_RESIZE_CONFIG": 23, "DVPP_ROI_CONFIG": 24,
                 "DVPP_BATCH_PIC_DESC": 25, "DVPP_JPEGE_CONFIG": 26, "DVPP_STREAM_DESC": 27,
                 "ACLNN_TENSOR": 30, "ACLNN_SCALAR": 31, "ACLNN_EXECUTOR": 32,
                 "VDEC_CHANNEL_DESC": 40, "VDEC_CHANNEL": 41, "VDEC_FRAME_CONFIG": 42,
                 "VENC_CHANNEL_DESC": 43, "VENC_CHANNEL": 44, "VENC_FRAME_CONFIG": 45},
}


@pytest.mark.parametrize("family", list(FORMAT_V1), ids=lambda f: f.__name__)
def test_kind_values_are_the_trace_format(family: type) -> None:
    """Every member keeps its v1 value, and no member was added without a value of its own."""
    assert {m.name: int(m) for m in family} == FORMAT_V1[family]


def test_name_tables_are_the_enums_labels() -> None:
    """Each schema name table is indexed by the stored value and holds the member's label."""
    for table, family in ((schema.TASK_KINDS, TaskKind), (schema.ENGINES, Engine),
                          (schema.SYNC_KINDS, SyncKind), (schema.ALLOC_KINDS, AllocKind),
                          (schema.POOLS, Pool), (schema.HOW, Ending)):
        assert len(table) == len(family)
        for m in family:
            assert table[m] == m.label
    assert {int(m): m.label for m in ObjectKind} == schema.OBJECT_KINDS
    # the labels the views and messages print: copies keep their direction's capitals
    assert [TaskKind.H2D.label, TaskKind.EVENT_WAIT.label] == ["H2D", "event_wait"]
    assert AllocKind.HOST_PINNED.label == "host_pinned"
    assert memory.KIND_NAMES == schema.ALLOC_KINDS


def test_labels_refuses_a_family_with_gaps() -> None:
    """``labels()`` is for 0..n-1 families; ObjectKind (values with gaps) has ``label_map``."""
    with pytest.raises(TypeError, match="ObjectKind"):
        ObjectKind.labels()


def test_column_domains_are_the_enums_values() -> None:
    """The loader accepts exactly the members' values in each kind column."""
    cols = {(t, c.name): c for t, cs in schema.TABLES.items() for c in cs}
    for (table, col), family in {("tasks", "kind"): TaskKind, ("tasks", "engine"): Engine,
                                 ("syncs", "kind"): SyncKind, ("allocs", "kind"): AllocKind,
                                 ("allocs", "pool"): Pool, ("objects", "kind"): ObjectKind,
                                 ("frees", "how"): Ending, ("destroys", "how"): Ending}.items():
        assert cols[table, col].members == frozenset(int(m) for m in family), (table, col)


def _program(acl: ModuleType) -> None:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    event, ret = acl.rt.create_event()
    assert ret == 0
    host, ret = acl.rt.malloc_host(64)
    assert ret == 0
    dev, ret = acl.rt.malloc(64, 2)  # ACL_MEM_MALLOC_NORMAL_ONLY
    assert ret == 0
    assert acl.rt.memset(dev, 64, 0, 64) == 0
    assert acl.rt.memcpy_async(dev, 64, host, 64, MemcpyKind.HOST_TO_DEVICE, stream) == 0
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.stream_wait_event(stream, event) == 0
    assert acl.rt.reset_event(event, stream) == 0
    assert acl.rt.memcpy_async(host, 64, dev, 64, MemcpyKind.DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_context(ctx) == 0
    # host (pinned) memory left for the reset: the session reclaims it
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0


def _decoded(trace: Trace) -> dict[str, object]:
    t, o, a = trace.tasks, trace.objects, trace.allocs
    return {
        "tasks": [(trace.call_name(int(t["call"][i])), TaskKind(int(t["kind"][i])),
                   Engine(int(t["engine"][i]))) for i in range(t.rows)],
        "objects": sorted({ObjectKind(int(k)) for k in o["kind"]}),
        "allocs": [(AllocKind(int(a["kind"][i])), Pool(int(a["pool"][i]))) for i in range(a.rows)],
        "frees": [Ending(int(h)) for h in trace.frees["how"]],
    }


def test_recorded_kinds_name_what_the_program_did(tmp_path: Path) -> None:
    """Each task, object and allocation is recorded under the member that names it, and a
    saved trace loads to the same members."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            _program(acl)
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    got = _decoded(trace)
    assert got["tasks"] == [
        ("acl.rt.memset", TaskKind.MEMSET, Engine.COPY_D2D),  # a device memset: the DMA
        ("acl.rt.memcpy_async", TaskKind.H2D, Engine.COPY_H2D),
        ("acl.rt.record_event", TaskKind.EVENT_RECORD, Engine.NONE),
        ("acl.rt.stream_wait_event", TaskKind.EVENT_WAIT, Engine.NONE),
        ("acl.rt.reset_event", TaskKind.EVENT_RESET, Engine.NONE),
        ("acl.rt.memcpy_async", TaskKind.D2H, Engine.COPY_D2H),
    ]
    assert {ObjectKind.CONTEXT, ObjectKind.STREAM, ObjectKind.EVENT} <= set(got["objects"])
    assert got["allocs"] == [(AllocKind.HOST_PINNED, Pool.HOST), (AllocKind.DEVICE, Pool.NORMAL)]
    assert got["frees"] == [Ending.EXPLICIT, Ending.RECLAIMED]
    path = tmp_path / "kinds.acltrace"
    trace.save(path)
    assert _decoded(Trace.load(path)) == got
    assert np.array_equal(Trace.load(path).tasks["kind"], trace.tasks["kind"])
