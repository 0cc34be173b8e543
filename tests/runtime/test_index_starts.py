"""MemorySystem's address index answers an allocation's start from a dict (``_Index.at``):
with duplicate starts, zero-size regions and removals in any order it must give what the
bisect over sorted starts gives."""

from __future__ import annotations

import random
from bisect import bisect_right

import numpy as np
import pytest

from acl_lab.runtime.memory import DEVICE, Region, _Index


def _region(rid: int, addr: int, size: int) -> Region:
    return Region(rid, DEVICE, 0, addr, size, size, 0, 0, size, np.zeros(0, np.uint8), -1)


def _bisect_find(idx: _Index, addr: int) -> Region | None:
    i = bisect_right(idx.starts, addr) - 1
    if i >= 0:
        r = idx.regions[i]
        if addr < r.addr + r.size:
            return r
    return None


@pytest.mark.parametrize("seed", range(15))
def test_dict_answer_matches_the_bisect(seed: int) -> None:
    rng = random.Random(seed)
    idx = _Index()
    live: list[Region] = []
    hits = 0
    for rid in range(400):
        if live and rng.random() < 0.4:
            idx.remove(live.pop(rng.randrange(len(live))))
        else:
            # few distinct starts, so many regions share one; some have no bytes
            r = _region(rid, 64 * rng.randrange(12), rng.choice((0, 16, 64, 256)))
            idx.add(r)
            live.append(r)
        for addr in range(0, 64 * 12 + 64, 16):
            assert idx.find(addr) is _bisect_find(idx, addr), (rid, addr)
            hits += addr in idx.at
    assert hits  # the dict answered some of them
    assert set(idx.at) <= set(idx.starts)
