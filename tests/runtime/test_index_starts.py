"""MemorySystem's address index answers an allocation's start from a dict (``_Index.at``):
with duplicate starts, zero-size regions and removals in any order it must give what the
bisect over sorted starts gives (``_Index.below``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from acl_lab.runtime.memory import DEVICE, Region, _Index


def _region(rid: int, addr: int, size: int) -> Region:
    return Region(rid, DEVICE, 0, addr, size, size, 0, 0, size, np.zeros(0, np.uint8), -1)


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
            assert idx.find(addr) is idx.below(addr), (rid, addr)
            hits += addr in idx.at
    assert hits  # the dict answered some of them
    assert set(idx.at) <= set(idx.starts)
