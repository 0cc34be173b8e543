"""Resource.fit on one unit: the fast path (nothing booked after the ready time) books and
returns exactly what the general gap search does."""

from __future__ import annotations

import random

import pytest

from acl_lab.runtime.resources import Resource


@pytest.mark.parametrize("seed", range(20))
def test_one_unit_fit_matches_the_gap_search(seed: int) -> None:
    rng = random.Random(seed)
    fast, slow = Resource("copy", 1), Resource("copy", 1)
    clock = 0
    searched = 0
    for _ in range(300):
        # mostly ready at or after the horizon (the fast path), sometimes earlier (a gap
        # search, with backfilling), sometimes zero-length
        clock += rng.choice((0, 1, 5, 50))
        ready = clock if rng.random() < 0.8 else max(0, clock - rng.randrange(200))
        duration = rng.choice((0, 1, 7, 40, 300))
        searched += ready < fast.horizon
        assert fast.fit(ready, duration) == slow._fit_one(ready, duration)
        assert fast.busy == slow.busy
        assert fast.horizon == slow.horizon
    assert 0 < searched < 300  # both paths ran


def test_fast_path_merges_a_block_that_ends_at_ready() -> None:
    r = Resource("copy", 1)
    assert r.fit(0, 10) == 0
    assert r.fit(10, 5) == 10
    assert r.busy == [(0, 15, 1)]
    assert r.fit(20, 5) == 20
    assert r.busy == [(0, 15, 1), (20, 25, 1)]
    assert r.fit(16, 2) == 16  # a gap before the last block: the search backfills it
    assert r.busy == [(0, 15, 1), (16, 18, 1), (20, 25, 1)]
