"""Trace bytes per recorded call, in memory (``Recorder.nbytes()``) and in a saved file.

Two programs, each in a fresh Session (and a loop checking the bound, ``bounded_loop_peak``):

* ``memcpy_async`` only: 10,000 64-byte pinned H2D ``memcpy_async`` calls on one stream with a
  ``synchronize_stream`` after every 1,000 (2,000 calls with ``--quick``);
* a mixed loop, per iteration: ``malloc``, a synchronous H2D ``memcpy``, ``memcpy_async`` on
  stream 1, ``record_event`` on stream 1, ``stream_wait_event`` on stream 2,
  ``synchronize_stream`` of stream 2, ``free`` (2,000 iterations; 300 with ``--quick``).

The host buffers are filled with ``memset`` first (a copy of never-written bytes would add an
``uninit`` row per call). The in-memory figure is the growth of ``session.recorder.nbytes()``
over the loop divided by the calls the loop made (interned strings are not counted by
``nbytes``). The file figures divide the size of the whole program's ``.acltrace`` (setup and
teardown included) by its call count: ``Trace.save`` writes plain JSON up to 1 MiB and the binary
column form above, so both the JSON size and the gzip size of that JSON (compresslevel 6,
what ``save`` wrote for a large trace before the binary form) are reported.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from types import ModuleType
from typing import Any

from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import BINARY_MAGIC

from .common import Row, acl_session, check, check_clean

NAME = "trace_size"

COPY_BYTES = 64
MIXED_BYTES = 256
SYNC_EVERY = 1_000
H2D = ACL_MEMCPY_HOST_TO_DEVICE
POLICY = ACL_MEM_MALLOC_NORMAL_ONLY

#: memcpy_async calls (normal / quick) and mixed-loop iterations (normal / quick).
COPY_CALLS = (10_000, 2_000)
MIXED_ITERS = (2_000, 300)

#: Target for the mixed loop (bytes per recorded call, in memory).
TARGET_MIXED_BYTES_PER_CALL = 150.0


def _measure(s: Session, body: Any) -> tuple[int, int]:
    """(recorder bytes added, calls made) while ``body()`` runs."""
    b0, c0 = s.recorder.nbytes(), s.call_count
    body()
    return s.recorder.nbytes() - b0, s.call_count - c0


def memcpy_async_bytes_per_call(calls: int) -> float:
    """Recorder bytes per recorded call of a memcpy_async loop (syncs included)."""
    with acl_session(True) as (s, acl):
        stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        host, ret = acl.rt.malloc_host(COPY_BYTES)
        check(ret, "acl.rt.malloc_host")
        check(acl.rt.memset(host, COPY_BYTES, 1, COPY_BYTES), "acl.rt.memset")  # written data
        dev, ret = acl.rt.malloc(COPY_BYTES, POLICY)
        check(ret, "acl.rt.malloc")

        def body() -> None:
            memcpy_async = acl.rt.memcpy_async
            for i in range(calls):
                memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream)
                if i % SYNC_EVERY == SYNC_EVERY - 1:
                    check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
            check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")

        nbytes, ncalls = _measure(s, body)
        check_clean(s)
    return nbytes / ncalls


def _mixed_iteration(acl: ModuleType, host: int, s1: int, s2: int, ev: int) -> None:
    """One iteration of the mixed program (every return code checked)."""
    rt = acl.rt
    dev, ret = rt.malloc(MIXED_BYTES, POLICY)
    check(ret, "acl.rt.malloc")
    check(rt.memcpy(dev, MIXED_BYTES, host, MIXED_BYTES, H2D), "acl.rt.memcpy")
    check(rt.memcpy_async(dev, MIXED_BYTES, host, MIXED_BYTES, H2D, s1), "acl.rt.memcpy_async")
    check(rt.record_event(ev, s1), "acl.rt.record_event")
    check(rt.stream_wait_event(s2, ev), "acl.rt.stream_wait_event")
    check(rt.synchronize_stream(s2), "acl.rt.synchronize_stream")
    check(rt.free(dev), "acl.rt.free")


def mixed_loop(iters: int, save_dir: str) -> tuple[float, int, int, int]:
    """Run the mixed program; return (recorder bytes per loop call, total calls in the trace,
    JSON bytes of the trace, gzip bytes of the trace)."""
    with acl_session(True) as (s, acl):
        rt = acl.rt
        s1, ret = rt.create_stream()
        check(ret, "acl.rt.create_stream")
        s2, ret = rt.create_stream()
        check(ret, "acl.rt.create_stream")
        ev, ret = rt.create_event()
        check(ret, "acl.rt.create_event")
        host, ret = rt.malloc_host(MIXED_BYTES)
        check(ret, "acl.rt.malloc_host")
        check(rt.memset(host, MIXED_BYTES, 1, MIXED_BYTES), "acl.rt.memset")  # written data

        def body() -> None:
            for _ in range(iters):
                _mixed_iteration(acl, host, s1, s2, ev)

        nbytes, ncalls = _measure(s, body)
        check(rt.destroy_event(ev), "acl.rt.destroy_event")
        check(rt.destroy_stream(s2), "acl.rt.destroy_stream")
        check(rt.destroy_stream(s1), "acl.rt.destroy_stream")
        check(rt.free_host(host), "acl.rt.free_host")
        check(rt.reset_device(0), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")
        check_clean(s)
        trace = s.trace()
        total_calls = int(trace.stats()["api_calls"])
        path = os.path.join(save_dir, "mixed.acltrace")
        trace.save(path)
        with open(path, "rb") as fh:
            raw = fh.read()
    if raw.startswith(BINARY_MAGIC):  # save() wrote the binary form (over 1 MiB of JSON)
        text = json.dumps(trace.to_dict(), separators=(",", ":")).encode()
        gz_len, json_len = len(gzip.compress(text, compresslevel=6, mtime=0)), len(text)
    elif raw[:2] == b"\x1f\x8b":  # a gzip-compressed JSON file
        gz_len, json_len = len(raw), len(gzip.decompress(raw))
    else:
        gz_len, json_len = len(gzip.compress(raw, compresslevel=6, mtime=0)), len(raw)
    return nbytes / ncalls, total_calls, json_len, gz_len


def run(quick: bool) -> list[Row]:
    """Measure trace bytes per recorded call for the two programs."""
    copy_calls = COPY_CALLS[1] if quick else COPY_CALLS[0]
    iters = MIXED_ITERS[1] if quick else MIXED_ITERS[0]
    copy_bpc = memcpy_async_bytes_per_call(copy_calls)
    with tempfile.TemporaryDirectory(prefix="acl_lab_bench_") as tmp:
        mixed_bpc, total_calls, json_len, gz_len = mixed_loop(iters, tmp)
    return [
        Row(NAME, "memcpy_async_mem_bytes_per_call", copy_bpc, "B/call"),
        Row(NAME, "mixed_mem_bytes_per_call", mixed_bpc, "B/call", TARGET_MIXED_BYTES_PER_CALL),
        Row(NAME, "mixed_acltrace_gzip_bytes_per_call", gz_len / total_calls, "B/call"),
        Row(NAME, "mixed_acltrace_json_bytes_per_call", json_len / total_calls, "B/call"),
        Row(NAME, "bounded_copy_loop_peak_per_limit",
            bounded_loop_peak(BOUNDED_ITERS[1] if quick else BOUNDED_ITERS[0]), "x limit", 1.0),
    ]


#: The bounded loop: iterations (normal / quick), its trace limit and how often the footprint
#: is sampled.
BOUNDED_ITERS = (20_000, 3_000)
BOUNDED_LIMIT = 256 * 1024
BOUNDED_SAMPLE_EVERY = 20


def bounded_loop_peak(iters: int) -> float:
    """The recorder's peak ``footprint()`` over its limit while a loop runs far past it.

    Two streams take turns on one device buffer (``memcpy_async`` H2D on stream a,
    ``record_event`` on a, ``stream_wait_event`` on b, ``memcpy_async`` D2H on b) under
    ``Session(trace_limit_bytes=256 KiB)``, the footprint sampled every 20 iterations. At most
    1: past three quarters of the limit the recorder leaves repeated calls and tasks out.
    """
    import acl_lab
    from acl_lab.constants import ACL_MEMCPY_DEVICE_TO_HOST as D2H

    with Session(trace_limit_bytes=BOUNDED_LIMIT) as s:
        acl = acl_lab.install()
        try:
            rt = acl.rt
            check(acl.init(), "acl.init")
            check(rt.set_device(0), "acl.rt.set_device(0)")
            streams = []
            for _ in range(2):
                stream, ret = rt.create_stream()
                check(ret, "acl.rt.create_stream")
                streams.append(stream)
            ev, ret = rt.create_event()
            check(ret, "acl.rt.create_event")
            host, ret = rt.malloc_host(COPY_BYTES)
            check(ret, "acl.rt.malloc_host")
            check(rt.memset(host, COPY_BYTES, 1, COPY_BYTES), "acl.rt.memset")
            out, ret = rt.malloc_host(COPY_BYTES)
            check(ret, "acl.rt.malloc_host")
            dev, ret = rt.malloc(COPY_BYTES, POLICY)
            check(ret, "acl.rt.malloc")
            peak = 0
            for i in range(iters):
                a, b = streams[i & 1], streams[1 - (i & 1)]
                check(rt.memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, a),
                      "acl.rt.memcpy_async")
                check(rt.record_event(ev, a), "acl.rt.record_event")
                check(rt.stream_wait_event(b, ev), "acl.rt.stream_wait_event")
                check(rt.memcpy_async(out, COPY_BYTES, dev, COPY_BYTES, D2H, b),
                      "acl.rt.memcpy_async")
                if i % BOUNDED_SAMPLE_EVERY == 0:
                    peak = max(peak, s.recorder.footprint())
            for stream in streams:
                check(rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
            if not s.recorder.shedding:
                raise RuntimeError("the bounded loop never reached its trace limit")
        finally:
            acl_lab.uninstall()
    return peak / BOUNDED_LIMIT
