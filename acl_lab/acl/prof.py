"""``acl.prof``: the profiling API (``aclprof*``), backed by the trace.

A profiling run is ``acl.prof.init(path)``, ``cfg = acl.prof.create_config([0], metrics, 0,
data_types)``, ``acl.prof.start(cfg)`` ... ``acl.prof.stop(cfg)``,
``acl.prof.destroy_config(cfg)``, ``acl.prof.finalize()``. The emulator's trace already holds
every call and task, so profiling records nothing extra: ``finalize`` writes the profiled
intervals of the trace as a Perfetto/Chrome JSON (``acl_lab.tracer.chrome``) where msprof puts
its timeline, ``<path>/PROF_<n>_<date>/mindstudio_profiler_output/msprof_<date>.json``; open
it in https://ui.perfetto.dev or chrome://tracing. Where it wrote is put in the trace (a note
at the finalize call) and said on stderr, and ``written(session)`` lists the files.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from ..runtime import profiling as P
from ..runtime.errors import AclError
from ..runtime.session import Session
from ._boundary import acl_api

S = Session


@acl_api("acl.prof.init", "aclprofInit", "s")
def init(s: S, th: Any, cid: int, path: str) -> None:
    """Start a profiling session whose results go under the folder ``path`` (created).

    Returns ret: 0; 100001 before acl.init; 100002 when already initialised; 100000 for an
    empty path or one over 4096 bytes; 500005 when the folder cannot be created or written.
    Differs from real ACL: nothing is collected from a device (the trace has it all); a
    repeat init is refused (the msprof manager's ProfInitPrecheck) rather than changing the
    path.
    """
    P.init(s, path)


@acl_api("acl.prof.create_config", "aclprofCreateConfig", "OikK", out="value")
def create_config(s: S, th: Any, cid: int, devices: Any, aicore_metrics: int,
                  aicore_events: int, data_types: int) -> int:
    """A profiling config handle for the device ids in the list ``devices`` (0 on failure,
    with the code in the trace: 100000 for an empty list, an unknown or repeated device).

    Differs from real ACL: the AI-core metrics, events pointer and data-type switches are
    kept but change nothing: the export always has every call, task, copy and counter.
    """
    if not isinstance(devices, list):
        raise TypeError("argument 1 is not list")
    if not all(type(d) is int for d in devices):
        raise TypeError("the first argument is not list of int")
    return P.create_config(s, devices, aicore_metrics, aicore_events, data_types)


@acl_api("acl.prof.destroy_config", "aclprofDestroyConfig", "k")
def destroy_config(s: S, th: Any, cid: int, config: int) -> None:
    """Destroy a profiling config. Returns ret: 0, or 100000 for a null, unknown or
    destroyed one.

    Differs from real ACL: destroying a config that is still started is allowed.
    """
    P.destroy_config(s, config)


@acl_api("acl.prof.start", "aclprofStart", "k")
def start(s: S, th: Any, cid: int, config: int) -> None:
    """Begin a profiled interval at the caller's virtual time.

    Returns ret: 0; 100043 before acl.prof.init; 100042 when an interval is already
    running; 100000 for a bad config.
    Differs from real ACL: the newest msprof initialises itself on a start without init;
    the emulator follows the documented rule (an error). The "already running" code is
    approximate (real msprof compares the two configs).
    """
    P.start(s, config, th.clock)


@acl_api("acl.prof.stop", "aclprofStop", "k")
def stop(s: S, th: Any, cid: int, config: int) -> None:
    """End the running interval (give the config that start was given).

    Returns ret: 0 (also when profiling is not initialised, like msprof); 100043 without a
    start; 100000 for a bad config or another config than start's.
    Differs from real ACL: no data is flushed; the interval is kept for finalize.
    """
    P.stop(s, config, th.clock)


@acl_api("acl.prof.finalize", "aclprofFinalize", "")
def finalize(s: S, th: Any, cid: int) -> None:
    """End the profiling session and write the profile of its intervals.

    The file is a Perfetto/Chrome trace-event JSON of the trace restricted to the profiled
    intervals (events that overlap one), with the intervals in ``otherData.acl_prof``.
    Returns ret: 0; 100043 without acl.prof.init; 500005 when the session records no trace
    or the file cannot be written. An interval still running is ended here (a warning).
    Differs from real ACL: msprof writes raw device data and its own summaries (op
    statistics, CSV tables) that need ``msprof --export``; the emulator writes one JSON that
    any trace viewer opens, with host calls, stream tasks and memory counters in virtual
    time.
    """
    if s.recorder is None:
        raise AclError(P.ACL_ERROR_PROFILING_FAILURE,
                       "this session records no trace, so there is nothing to profile")
    path, intervals, implicit = P.finalize(s, th.clock)
    if implicit:
        s.diag(cid, "profile", "acl.prof.finalize ended a profiled interval that "
                               "acl.prof.stop never ended")
    out = _write(s, path, intervals)
    P.state(s).written.append(out)
    s.diag(cid, "profile", f"profile written to {out} (open it in https://ui.perfetto.dev)",
           level=0)
    print(f"acl_lab: profile written to {out}", file=sys.stderr)


def _write(s: S, folder: str, intervals: list[tuple[int, int, tuple[int, ...]]]) -> str:
    from ..tracer.chrome import to_chrome_trace  # the tracer is imported only to write

    doc = to_chrome_trace(s.trace())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if _in_intervals(e, intervals)]
    other = doc.setdefault("otherData", {})
    other["acl_prof"] = {"intervals_ns": [[a, b] for a, b, _ in intervals],
                         "devices": sorted({d for _, _, ds in intervals for d in ds}),
                         "note": "written by acl_lab from its trace (virtual time), "
                                 "not by msprof"}
    stamp = time.strftime("%Y%m%d%H%M%S")
    n = len(P.state(s).written) + 1
    out_dir = os.path.join(folder, f"PROF_{n:06d}_{stamp}", "mindstudio_profiler_output")
    out = os.path.join(out_dir, f"msprof_{stamp}.json")
    try:
        os.makedirs(out_dir, exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(doc, f)
    except OSError as e:
        raise AclError(P.ACL_ERROR_PROFILING_FAILURE,
                       f"cannot write the profile {out!r}: {e}") from None
    return out


def _in_intervals(e: dict[str, Any], intervals: list[tuple[int, int, tuple[int, ...]]]) -> bool:
    """Metadata always; a timed event when it overlaps a profiled interval (µs vs ns)."""
    if "ts" not in e or e.get("ph") == "M":
        return True
    start_ns = float(e["ts"]) * 1000.0
    end_ns = start_ns + float(e.get("dur", 0)) * 1000.0
    return any(start_ns <= b and end_ns >= a for a, b, _ in intervals)


def written(session: S) -> list[str]:
    """The profile files acl.prof.finalize wrote in ``session``, oldest first."""
    return list(P.state(session).written)


__all__ = ["create_config", "destroy_config", "finalize", "init", "start", "stop", "written"]
