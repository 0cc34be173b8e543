"""Engines as resources in virtual time.

A ``Resource`` is a pool of identical units (one DMA engine, the AI cores of a chip) with the
intervals it is busy. ``fit`` finds the earliest start at or after a ready time where a task of
a given duration finds enough free units: a deterministic list scheduler with backfilling, so a
task that becomes ready early can use a gap left before a task that was placed later.
``scheduler`` places tasks on them; every device holds one per engine (``objects.Device``).
"""

from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter


class Resource:
    """A pool of ``capacity`` identical units and the intervals they are busy."""

    __slots__ = ("busy", "capacity", "horizon", "name")

    def __init__(self, name: str, capacity: int) -> None:
        self.name = name
        self.capacity = capacity
        # (start, end, units), unordered; pruned to intervals that can still matter. A single
        # unit keeps disjoint blocks sorted by start, touching bookings merged, so a fit
        # scans the gaps after its ready time instead of every pair of intervals.
        self.busy: list[tuple[int, int, int]] = []
        self.horizon = 0  # max end of all intervals

    def _usage_ok(self, start: int, end: int, units: int) -> bool:
        if units > self.capacity:
            return False
        if self.capacity == 1:
            return all(e <= start or s >= end for s, e, _ in self.busy)
        # Usage is piecewise constant; check it at start and at every interval start inside.
        points = [start] + [s for s, _, _ in self.busy if start < s < end]
        for p in points:
            used = sum(u for s, e, u in self.busy if s <= p < e)
            if used + units > self.capacity:
                return False
        return True

    def fit(self, ready: int, duration: int, units: int = 1) -> int:
        """Earliest start >= ``ready`` with ``units`` free for ``duration`` ns; books it."""
        if self.capacity == 1:
            if ready >= self.horizon and duration > 0:
                # Nothing booked after ready (the usual case: the engine idles or the task
                # follows the last one): start at once, merged with a block ending then.
                busy = self.busy
                end = ready + duration
                if busy and busy[-1][1] == ready:
                    busy[-1] = (busy[-1][0], end, 1)
                else:
                    busy.append((ready, end, 1))
                self.horizon = end
                return ready
            return self._fit_one(ready, duration)
        units = min(units, self.capacity)
        if ready >= self.horizon:
            start = ready
        else:
            candidates = sorted({ready} | {e for _, e, _ in self.busy if e > ready})
            start = self.horizon
            for c in candidates:
                if self._usage_ok(c, c + max(duration, 1), units):
                    start = c
                    break
        end = start + duration
        if duration > 0:
            self.busy.append((start, end, units))
            if end > self.horizon:
                self.horizon = end
        return start

    def _fit_one(self, ready: int, duration: int) -> int:
        """``fit`` for one unit: the first gap of ``max(duration, 1)`` ns from ``ready``."""
        busy = self.busy
        need = max(duration, 1)
        start = ready
        j = bisect_right(busy, ready, key=_END_OF)  # the first block that ends after ready
        while j < len(busy):
            s, e, _ = busy[j]
            if s >= start + need:
                break
            start = max(start, e)
            j += 1
        if duration > 0:
            # Every block before j ends by ``start``; block j starts at or after the end.
            end = start + duration
            if j and busy[j - 1][1] == start:
                j -= 1
                start_merged = busy.pop(j)[0]
            else:
                start_merged = start
            if j < len(busy) and busy[j][0] == end:
                end = busy.pop(j)[1]
            busy.insert(j, (start_merged, end, 1))
            if end > self.horizon:
                self.horizon = end
        return start

    def prune(self, before: int) -> None:
        """Forget intervals that end at or before ``before`` (no task can start earlier)."""
        if len(self.busy) > 32:
            self.busy = [b for b in self.busy if b[1] > before]


#: An interval's end (a C-level key for bisect).
_END_OF = itemgetter(1)
