"""analysis.py: engine busy time, copy/compute overlap, utilisation, memory over time."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_FORMAT_ND,
    ACL_INT32,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.analysis import (
    memory_timeline,
    overlap_summary,
    union_intervals,
    union_length,
)
from tests.helpers import ok, snapshot

pytestmark = pytest.mark.timeout(60)

MiB = 1 << 20




def queue_kernel(acl: ModuleType, stream: int, n: int = 1 << 20) -> None:
    """Queue an ``Add`` over two int32[n] device tensors (set from the host) on ``stream``."""
    data = np.arange(n, dtype=np.int32).tobytes()
    descs, bufs = [], []
    for _ in range(3):
        ptr = ok(acl.rt.malloc(len(data), ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data),
                             ACL_MEMCPY_HOST_TO_DEVICE) == 0
        descs.append(acl.create_tensor_desc(ACL_INT32, [n], ACL_FORMAT_ND))
        bufs.append(acl.create_data_buffer(ptr, len(data)))
    attr = acl.op.create_attr()
    assert acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:], attr,
                             stream) == 0


def test_union_of_intervals() -> None:
    s, e = union_intervals(np.array([0, 5, 2, 20]), np.array([3, 9, 4, 20]))
    assert s.tolist() == [0, 5] and e.tolist() == [4, 9]
    assert union_length(np.array([0, 1, 10]), np.array([5, 3, 12])) == 7
    assert union_length(np.zeros(0), np.zeros(0)) == 0


def test_copy_compute_overlap_on_a_pipeline(ready: ModuleType, session: Session) -> None:
    """A big H2D copy on one stream while a kernel runs on another: overlap > 0."""
    n = 8 * MiB
    host = ok(ready.rt.malloc_host(n))
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_HUGE_ONLY))
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    queue_kernel(ready, s2)
    assert ready.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0
    assert ready.rt.synchronize_device() == 0
    trace = session.trace()
    before = snapshot(trace)
    s = overlap_summary(trace)
    assert snapshot(trace) == before
    assert s.engine_busy_ns["copy_h2d"] > 0 and s.engine_busy_ns["aicore"] > 0
    assert s.overlap_ns > 0
    assert s.overlap_ns <= min(s.copy_busy_ns, s.compute_busy_ns)
    assert 0 < s.utilisation <= 1
    assert s.busy_ns <= s.span_ns
    assert len(s.stream_busy_ns) == 2 and all(v > 0 for v in s.stream_busy_ns.values())
    assert all(label.startswith("stream 0x") for label in s.stream_labels.values())
    assert 0 < s.copy_hidden <= 1


def test_serial_program_has_no_overlap(ready: ModuleType, session: Session) -> None:
    """Copy, synchronize, kernel, synchronize: nothing overlaps, utilisation <= 1."""
    n = MiB
    host = ok(ready.rt.malloc_host(n))
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_HUGE_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.synchronize_stream(stream) == 0
    queue_kernel(ready, stream)
    assert ready.rt.synchronize_stream(stream) == 0
    s = overlap_summary(session.trace())
    assert s.copy_busy_ns > 0 and s.compute_busy_ns > 0
    assert s.overlap_ns == 0
    assert 0 < s.utilisation <= 1
    assert s.busy_ns == s.copy_busy_ns + s.compute_busy_ns


def test_empty_trace_summary(ready: ModuleType, session: Session) -> None:
    s = overlap_summary(session.trace())
    assert (s.span_ns, s.busy_ns, s.overlap_ns, s.utilisation) == (0, 0, 0, 0.0)


def test_memory_timeline_peak_is_the_trace_peak(ready: ModuleType, session: Session) -> None:
    """Per-pool curves and the device total; the total's max is peak_device_bytes()."""
    a = ok(ready.rt.malloc(3 * MiB, ACL_MEM_MALLOC_HUGE_ONLY))
    b = ok(ready.rt.malloc(1000, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.free(a) == 0
    ok(ready.rt.malloc(5000, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.free(b) == 0
    trace = session.trace()
    before = snapshot(trace)
    tl = memory_timeline(trace)
    assert snapshot(trace) == before
    assert set(tl.pool_bytes) == {"huge", "normal"}
    assert int(tl.device_bytes.max()) == trace.peak_device_bytes() == tl.peak_bytes["device"]
    assert np.all(np.diff(tl.times_ns) >= 0)
    assert tl.pool_bytes["huge"][-1] == 0
    assert tl.device_bytes[-1] == int(trace.allocs["reserved"][2])
    assert len(tl.times_ns) == len(tl.device_bytes) == 5
