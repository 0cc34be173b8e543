"""A Hypothesis state machine over memory, copies, streams and events, against a dict model.

Set ``HYPOTHESIS_PROFILE=long`` for 500 examples instead of 30.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import pairwise
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import acl_lab
from acl_lab.runtime.session import Session

ACL_SUCCESS = 0
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_DDR_MEM = 0  # the default profile (Ascend310P3) has DDR memory
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
KIB, MIB = 1 << 10, 1 << 20
HUGE_PAGE = 2 * MIB

_COMMON = {"stateful_step_count": 30, "deadline": None,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("default", max_examples=30, **_COMMON)
settings.register_profile("long", max_examples=500, **_COMMON)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
settings.load_profile(PROFILE)

SIZES = st.one_of(
    st.sampled_from([1, 32, 33, MIB - 32, MIB, MIB + 1, HUGE_PAGE - 64, HUGE_PAGE - 32,
                     HUGE_PAGE - 31, HUGE_PAGE]),  # the rounding edges
    st.integers(1, 4 * KIB),
    st.integers(MIB - 64, MIB + 64),            # around the HUGE_FIRST threshold
    st.integers(HUGE_PAGE - 96, HUGE_PAGE + 96),  # around one huge page
    st.integers(1, 3 * MIB),
)
POLICIES = st.sampled_from([0, 1, 2])  # HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY


def accounted(size: int, policy: int) -> int:
    """Bytes ``get_mem_info`` free should drop by (reference §5a and §5g)."""
    rounded = ((size + 63) // 32) * 32
    huge = policy == 1 or (policy == 0 and size > MIB)
    return (rounded + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE if huge else rounded


@dataclass
class Alloc:
    """The model of one live allocation."""

    ptr: int
    size: int
    policy: int
    accounted: int
    streams: set[int]  # streams with unsynchronised tasks touching it


class MemoryMachine(RuleBasedStateMachine):
    """Drives malloc/free/copies/events/syncs and checks the runtime against a model."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session(watchdog=2.0)
        self.session.__enter__()
        self.acl: ModuleType = acl_lab.install()
        self.calls = 0
        self.live: dict[int, Alloc] = {}
        self.freed: list[int] = []
        self.streams: list[int] = []
        self.events: dict[int, bool] = {}  # event -> recorded
        self.free0 = 0
        self.torn_down = False

    # ------------------------------------------------------------------ helpers
    def call(self, fn: Any, *args: Any) -> Any:
        """Call an emulated API function, counting it."""
        self.calls += 1
        return fn(*args)

    def mem_free(self) -> int:
        free, _total, ret = self.call(self.acl.rt.get_mem_info, ACL_DDR_MEM)
        assert ret == ACL_SUCCESS
        return int(free)

    def stale(self) -> list[int]:
        """Freed pointers that no live allocation covers now (address not reused)."""
        out = []
        for p in self.freed:
            if not any(a.ptr <= p < a.ptr + a.accounted for a in self.live.values()):
                out.append(p)
        return out

    def idle(self) -> list[Alloc]:
        return [a for a in self.live.values() if not a.streams]

    # ------------------------------------------------------------------ setup
    @initialize(n_streams=st.integers(1, 3))
    def setup(self, n_streams: int) -> None:
        acl = self.acl
        assert self.call(acl.init) == ACL_SUCCESS
        assert self.call(acl.rt.set_device, 0) == ACL_SUCCESS
        for _ in range(n_streams):
            s, ret = self.call(acl.rt.create_stream)
            assert ret == ACL_SUCCESS
            self.streams.append(s)
        for _ in range(2):
            e, ret = self.call(acl.rt.create_event)
            assert ret == ACL_SUCCESS
            self.events[e] = False
        self.free0 = self.mem_free()

    # ------------------------------------------------------------------ rules
    @rule(size=SIZES, policy=POLICIES)
    def malloc(self, size: int, policy: int) -> None:
        ptr, ret = self.call(self.acl.rt.malloc, size, policy)
        assert ret == ACL_SUCCESS
        assert ptr not in self.live
        self.live[ptr] = Alloc(ptr, size, policy, accounted(size, policy), set())

    @precondition(lambda self: bool(self.idle()))
    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from(self.idle()))
        assert self.call(self.acl.rt.free, a.ptr) == ACL_SUCCESS
        del self.live[a.ptr]
        self.freed.append(a.ptr)

    @precondition(lambda self: bool(self.stale()))
    @rule(data=st.data())
    def double_free(self, data: st.DataObject) -> None:
        p = data.draw(st.sampled_from(self.stale()))
        assert self.call(self.acl.rt.free, p) == ACL_ERROR_RT_PARAM_INVALID

    @precondition(lambda self: bool(self.stale()) and bool(self.live))
    @rule(data=st.data(), stale_is_dst=st.booleans())
    def copy_with_stale_pointer(self, data: st.DataObject, stale_is_dst: bool) -> None:
        p = data.draw(st.sampled_from(self.stale()))
        a = data.draw(st.sampled_from(sorted(self.live.values(), key=lambda x: x.ptr)))
        s = data.draw(st.sampled_from(self.streams))
        dst, src = (p, a.ptr) if stale_is_dst else (a.ptr, p)
        ret = self.call(self.acl.rt.memcpy_async, dst, 64, src, 64,
                        ACL_MEMCPY_DEVICE_TO_DEVICE, s)
        assert ret == ACL_ERROR_RT_PARAM_INVALID

    @precondition(lambda self: len(self.live) >= 2)
    @rule(data=st.data())
    def copy(self, data: st.DataObject) -> None:
        allocs = sorted(self.live.values(), key=lambda x: x.ptr)
        dst = data.draw(st.sampled_from(allocs))
        src = data.draw(st.sampled_from([a for a in allocs if a is not dst]))
        count = data.draw(st.integers(1, min(dst.size, src.size)))
        s = data.draw(st.sampled_from(self.streams))
        ret = self.call(self.acl.rt.memcpy_async, dst.ptr, dst.size, src.ptr, count,
                        ACL_MEMCPY_DEVICE_TO_DEVICE, s)
        assert ret == ACL_SUCCESS
        dst.streams.add(s)
        src.streams.add(s)

    @rule(data=st.data())
    def record(self, data: st.DataObject) -> None:
        e = data.draw(st.sampled_from(sorted(self.events)))
        s = data.draw(st.sampled_from(self.streams))
        assert self.call(self.acl.rt.record_event, e, s) == ACL_SUCCESS
        self.events[e] = True

    @rule(data=st.data())
    def wait(self, data: st.DataObject) -> None:
        e = data.draw(st.sampled_from(sorted(self.events)))
        s = data.draw(st.sampled_from(self.streams))
        ret = self.call(self.acl.rt.stream_wait_event, s, e)
        # Legacy events: waiting before any record is 107000 (reference §5d).
        assert ret == (ACL_SUCCESS if self.events[e] else ACL_ERROR_RT_PARAM_INVALID)

    @rule(data=st.data())
    def synchronize_stream(self, data: st.DataObject) -> None:
        s = data.draw(st.sampled_from(self.streams))
        assert self.call(self.acl.rt.synchronize_stream, s) == ACL_SUCCESS
        for a in self.live.values():
            a.streams.discard(s)

    @rule()
    def synchronize_device(self) -> None:
        assert self.call(self.acl.rt.synchronize_device) == ACL_SUCCESS
        for a in self.live.values():
            a.streams.clear()

    # ------------------------------------------------------------------ invariants
    @invariant()
    def no_overlap_and_aligned(self) -> None:
        spans = sorted((a.ptr, a.ptr + a.accounted) for a in self.live.values())
        for (s0, e0), (s1, _e1) in pairwise(spans):
            assert e0 <= s1, f"[{s0:#x}, {e0:#x}) overlaps an allocation at {s1:#x}"
        for a in self.live.values():
            assert a.ptr % 64 == 0, hex(a.ptr)

    @invariant()
    def free_memory_matches_model(self) -> None:
        if not self.free0 or self.torn_down:
            return
        used = sum(a.accounted for a in self.live.values())
        assert self.free0 - self.mem_free() == used

    @invariant()
    def trace_agrees(self) -> None:
        if not self.free0 or self.torn_down:
            return
        trace = self.session.trace()
        assert trace.calls.rows == self.calls
        t = trace.tasks
        placed = np.nonzero(t["end_ns"] >= 0)[0]
        assert np.all(t["start_ns"][placed] >= t["submit_ns"][placed])
        last_end: dict[int, int] = {}
        for i in placed.tolist():
            s = int(t["stream"][i])
            if s < 0:
                continue
            start, end = int(t["start_ns"][i]), int(t["end_ns"][i])
            assert end >= start
            assert start >= last_end.get(s, 0), f"task {i} starts before stream {s} is free"
            last_end[s] = end
        assert trace.failures.rows == 0, "a copy between live allocations failed"

    def teardown(self) -> None:
        try:
            if self.free0:
                self.torn_down = True
                # reset_device waits for the streams itself (reference §5e).
                assert self.call(self.acl.rt.reset_device, 0) == ACL_SUCCESS
                assert self.call(self.acl.finalize) == ACL_SUCCESS
                trace = self.session.trace()
                assert trace.calls.rows == self.calls
        finally:
            acl_lab.uninstall()
            self.session.__exit__(None, None, None)


TestMemoryMachine = MemoryMachine.TestCase
TestMemoryMachine.settings = settings.get_profile(PROFILE)


def test_accounting_formula_examples() -> None:
    """The model's rounding matches the reference's worked values (1 -> 64, 100 -> 160)."""
    assert [accounted(n, 2) for n in (1, 31, 32, 33, 100)] == [64, 64, 64, 96, 160]
    assert accounted(MIB, 0) == MIB + 32
    assert accounted(MIB + 1, 0) == HUGE_PAGE
    assert accounted(1, 1) == HUGE_PAGE
    assert accounted(HUGE_PAGE, 1) == 2 * HUGE_PAGE  # the +32 padding spills into a 2nd page
