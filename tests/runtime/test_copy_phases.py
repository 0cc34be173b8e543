"""A copy's phases in a few lines (``scheduler.copy_start_plain`` / ``copy_end_plain``) do
what the general ``effect_start`` / ``effect_end`` do: random programs of async copies over
two streams (with events, never-written sources, a buffer freed under a queued copy and a
pageable destination) give the same trace, the same bytes and the same return codes with
the plain phases turned off."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab.constants import ACL_EVENT_SYNC
from acl_lab.runtime import scheduler
from acl_lab.runtime.session import Session
from tests.helpers import snapshot

N = 256
H2D, D2H, D2D = 1, 2, 3


def _program(seed: int) -> tuple[dict[str, dict[str, bytes]], list[Any]]:
    """The trace's columns and what the program saw (return codes, bytes read back)."""
    rng = random.Random(seed)
    seen: list[Any] = []
    with Session() as s:
        acl = acl_lab.install(s)
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            streams = [acl.rt.create_stream()[0] for _ in range(2)]
            event, _ = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
            hosts = [acl.rt.malloc_host(N)[0] for _ in range(2)]
            devs = [acl.rt.malloc(N, 2)[0] for _ in range(3)]
            assert acl.rt.memset(hosts[0], N, 7, N) == 0  # hosts[1] starts never written
            pageable = np.zeros(N, np.uint8)
            page_ptr = acl.util.numpy_to_ptr(pageable)  # pyACL warns it is deprecated
            for _ in range(60):
                st = rng.choice(streams)
                op = rng.random()
                off = rng.choice((0, 64, 128))
                n = rng.choice((64, 128))
                if op < 0.3:
                    ret = acl.rt.memcpy_async(rng.choice(devs) + off, N - off,
                                              rng.choice(hosts) + off, n, H2D, st)
                elif op < 0.5:
                    ret = acl.rt.memcpy_async(rng.choice(hosts) + off, N - off,
                                              rng.choice(devs) + off, n, D2H, st)
                elif op < 0.7:
                    a, b = rng.sample(devs, 2)
                    ret = acl.rt.memcpy_async(a + off, N - off, b, n, D2D, st)
                elif op < 0.8:
                    ret = acl.rt.memcpy_async(page_ptr, N, rng.choice(devs), n, D2H, st)
                elif op < 0.9:
                    ret = acl.rt.record_event(event, st)
                    ret = ret or acl.rt.stream_wait_event(rng.choice(streams), event)
                else:
                    ret = acl.rt.synchronize_stream(st)
                seen.append(ret)
            # a buffer freed while a copy into it is still queued
            acl.rt.memcpy_async(devs[2], N, hosts[0], N, H2D, streams[0])
            seen.append(acl.rt.free(devs[2]))
            for st in streams:
                seen.append(acl.rt.synchronize_stream(st))
            for h in hosts:
                seen.append(acl.util.ptr_to_bytes(h, N))
            seen.append(pageable.tobytes())
            for d in devs[:2]:
                seen.append(acl.rt.memcpy(hosts[1], N, d, N, D2H))
                seen.append(acl.util.ptr_to_bytes(hosts[1], N))
            trace = s.trace()
        finally:
            acl_lab.uninstall()
    return snapshot(trace), seen


@pytest.mark.filterwarnings("ignore:numpy_to_ptr will be deprecated")
@pytest.mark.parametrize("seed", range(6))
def test_plain_phases_match_the_general_ones(seed: int, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    plain = {"start": 0, "end": 0}
    start, end = scheduler.copy_start_plain, scheduler.copy_end_plain

    def counted_start(s: Session, t: Any) -> bool:
        done = start(s, t)
        plain["start"] += done
        return done

    def counted_end(s: Session, t: Any) -> bool:
        done = end(s, t)
        plain["end"] += done
        return done

    monkeypatch.setattr(scheduler, "copy_start_plain", counted_start)
    monkeypatch.setattr(scheduler, "copy_end_plain", counted_end)
    with_plain = _program(seed)
    assert plain["start"] and plain["end"]  # the plain phases did the usual copies
    monkeypatch.setattr(scheduler, "copy_start_plain", lambda s, t: False)
    monkeypatch.setattr(scheduler, "copy_end_plain", lambda s, t: False)
    general = _program(seed)
    assert with_plain[1] == general[1]
    assert with_plain[0] == general[0]
