"""The copy floor of ``benchmarks/bench_copy_floor.py`` measures the real call's work: for the
case it covers it leaves the trace rows, the bytes and the clock the real
``acl.rt.memcpy_async`` leaves, and it refuses every other case instead of measuring less."""

from __future__ import annotations

import pytest

from benchmarks import bench_copy_floor as floor
from benchmarks.bench_api_overhead import COPY_BYTES, H2D, _copy_setup
from benchmarks.common import acl_session


def test_the_floor_leaves_the_real_calls_trace_bytes_and_clock() -> None:
    traced, data, clock = floor._program(True, calls=250)
    real = floor._program(False, calls=250)
    assert traced == real[0]
    assert (data, clock) == real[1:]
    assert data == bytes([1]) * COPY_BYTES  # the memset source landed
    assert len(traced["tasks"]) > 0
    floor.check_same_trace()


@pytest.mark.parametrize("change", ["kind", "count", "unaligned", "null"])
def test_the_floor_refuses_what_it_does_not_cover(change: str) -> None:
    with acl_session(True) as (s, acl):
        dev, host, stream = _copy_setup(acl)
        assert acl.rt.memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream) == 0
        copy, _ = floor.floor_copy(s)
        args = {"kind": (dev, COPY_BYTES, host, COPY_BYTES, 3, stream),
                "count": (dev, COPY_BYTES, host, COPY_BYTES + 1, H2D, stream),
                "unaligned": (dev + 1, COPY_BYTES, host, 8, H2D, stream),
                "null": (0, COPY_BYTES, host, COPY_BYTES, H2D, stream)}[change]
        calls = s.call_count
        with pytest.raises(floor.OutsideFloor):
            copy(*args)
        assert s.call_count == calls  # refused before it counted a call
        assert acl.rt.synchronize_stream(stream) == 0
