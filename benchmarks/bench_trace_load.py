"""Trace loading speed: ``Trace.load`` against the JSON parsing it cannot avoid.

Two files, built from a small traced program (streams, events, a callback, copies, frees,
an invalid and a double free, leaks: rows in every table a check reads):

* a valid document with 1,000,000 extra strings in its string table (200,000 with
  ``--quick``), loaded in full; the baseline is ``json.loads`` of the same bytes, so the
  ratio is what validation and building the tables add to parsing;
* 50 MB of random bytes (10 MB with ``--quick``), which ``Trace.load`` must refuse with a
  ValueError; the baseline is reading the file's bytes, so the ratio shows the refusal
  does not parse or inflate what is clearly not a trace.

Both sides of a ratio run back to back within one repeat.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

import numpy as np

from acl_lab.constants import ACL_EVENT_SYNC, ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.tracer.trace import Trace

from .common import Row, acl_session, check, median

NAME = "trace_load"
#: Upper bound of Trace.load / json.loads for the many-strings document.
STRINGS_VS_JSON_TARGET = 5.0
#: Upper bound of refusal time / file read time for random bytes.
GARBAGE_VS_READ_TARGET = 10.0


def base_doc() -> dict[str, Any]:
    """The document of a small program with rows in the main tables."""
    with acl_session() as (s, acl):
        stream, ret = acl.rt.create_stream()
        check(ret, "create_stream")
        other, ret = acl.rt.create_stream()
        check(ret, "create_stream")
        ev, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
        check(ret, "create_event_with_flag")
        host, ret = acl.rt.malloc_host(256)
        check(ret, "malloc_host")
        dev, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY)
        check(ret, "malloc")
        check(acl.rt.memset(host, 256, 3, 256), "memset")
        check(acl.rt.memcpy_async(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, stream),
              "memcpy_async")
        check(acl.rt.record_event(ev, stream), "record_event")
        check(acl.rt.stream_wait_event(other, ev), "stream_wait_event")
        check(acl.rt.synchronize_stream(other), "synchronize_stream")
        acl.rt.free(12345)  # an invalid free: a failing call with a diagnostic
        check(acl.rt.free(dev), "free")
        return s.trace().to_dict()


def run(quick: bool) -> list[Row]:
    """Time both loads (3 repeats each)."""
    doc = base_doc()
    doc["strings"] = list(doc["strings"]) + [f"s{i}" for i in range(
        200_000 if quick else 1_000_000)]
    data = json.dumps(doc, separators=(",", ":")).encode()
    garbage = np.random.default_rng(12345).integers(
        0, 256, size=(10 if quick else 50) << 20, dtype=np.uint8).tobytes()
    if garbage[:2] == b"\x1f\x8b":
        garbage = b"\x00" + garbage[1:]
    load_s, ratios, refuse_s, refuse_ratios = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="acl_lab_bench_") as tmp:
        good = os.path.join(tmp, "many_strings.acltrace")
        bad = os.path.join(tmp, "garbage.acltrace")
        with open(good, "wb") as fh:
            fh.write(data)
        with open(bad, "wb") as fh:
            fh.write(garbage)
        for _ in range(3):
            t0 = time.perf_counter()
            trace = Trace.load(good)
            t1 = time.perf_counter()
            json.loads(data)
            t2 = time.perf_counter()
            if len(trace.strings) != len(doc["strings"]):
                raise RuntimeError("benchmark: the many-strings trace lost strings")
            load_s.append(t1 - t0)
            ratios.append((t1 - t0) / max(t2 - t1, 1e-9))
            t0 = time.perf_counter()
            try:
                Trace.load(bad)
            except ValueError:
                pass
            else:
                raise RuntimeError("benchmark: random bytes loaded as a trace")
            t1 = time.perf_counter()
            with open(bad, "rb") as fh:
                fh.read()
            t2 = time.perf_counter()
            refuse_s.append(t1 - t0)
            refuse_ratios.append((t1 - t0) / max(t2 - t1, 1e-9))
    return [
        Row(NAME, "many_strings_load_s", median(load_s), "s"),
        Row(NAME, "many_strings_load_vs_json_loads", median(ratios), "x",
            STRINGS_VS_JSON_TARGET),
        Row(NAME, "random_bytes_refusal_s", median(refuse_s), "s"),
        Row(NAME, "random_bytes_refusal_vs_read", median(refuse_ratios), "x",
            GARBAGE_VS_READ_TARGET),
    ]
