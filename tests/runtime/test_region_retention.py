"""A long malloc/free loop holds only what is live: the memory system keeps no list of every
region ever made, and its graveyard keeps a bounded number of freed regions per address
(``memory.FREED_PER_START``: as many as ``find_freed`` can ever look at), while a use after
free of the newest freed regions is still told apart from an unknown pointer.
"""

from __future__ import annotations

import gc
from types import ModuleType

from acl_lab.constants import ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.runtime.memory import FREED_PER_START, Region
from acl_lab.runtime.session import Session


def test_a_malloc_free_loop_keeps_a_bounded_graveyard(ready: ModuleType,
                                                       session: Session) -> None:
    def regions() -> int:
        gc.collect()
        return sum(isinstance(o, Region) for o in gc.get_objects())

    before = regions()
    for _ in range(500):
        p, ret = ready.rt.malloc(1024, 2)
        assert ret == 0
        assert ready.rt.free(p) == 0
    # the newest freed ones stay, for find_freed; the others are gone
    assert regions() - before <= FREED_PER_START
    assert len(session.memory.graveyard.regions) <= FREED_PER_START
    assert not session.memory.graveyard.at  # find_freed bisects: no start map is kept
    assert not any(r.kind == 0 for r in session.memory.live.values())  # no device region
    assert session.memory.region_count >= 500  # ids still count every region


def test_use_after_free_is_still_reported_after_many_frees(ready: ModuleType,
                                                           session: Session) -> None:
    stream, _ = ready.rt.create_stream()
    host, _ = ready.rt.malloc_host(64)
    assert ready.rt.memset(host, 64, 1, 64) == 0
    for _ in range(3 * FREED_PER_START):
        p, _ = ready.rt.malloc(64, 2)
        assert ready.rt.free(p) == 0
    dead, _ = ready.rt.malloc(64, 2)
    assert ready.rt.free(dead) == 0
    # the address is a freed allocation, not one the allocator never gave out
    assert ready.rt.free(dead) == 107000
    assert "double free" in ready.get_recent_err_msg()
    ret = ready.rt.memcpy_async(dead, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    assert ret == 107000
    trace = session.trace()
    assert "use_after_free" in {f.kind for f in trace.findings()}


def test_live_regions_are_the_live_ones(ready: ModuleType, session: Session) -> None:
    a, _ = ready.rt.malloc(64, 2)
    b, _ = ready.rt.malloc(64, 2)
    h, _ = ready.rt.malloc_host(64)
    assert ready.rt.free(a) == 0
    live = {r.addr for r in session.memory.live_regions()}
    assert a not in live
    assert {b, h} <= live
