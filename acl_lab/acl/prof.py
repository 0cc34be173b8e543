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

from ..constants import ErrorCode
from ..runtime import buffers
from ..runtime import profiling as P
from ..runtime.errors import AclError
from ..runtime.objects import HostThread
from ..runtime.session import Session
from ._boundary import acl_api

S = Session


@acl_api("acl.prof.init", "aclprofInit", "s")
def init(s: S, th: HostThread, cid: int, path: str) -> None:
    """Start a profiling session whose results go under the folder ``path`` (created).

    Returns ret: 0; 100001 before acl.init; 100002 when already initialised; 100000 for an
    empty path or one over 4096 bytes; 500005 when the folder cannot be created or written.
    Differs from real ACL: nothing is collected from a device (the trace has it all); a
    repeat init is refused (the msprof manager's ProfInitPrecheck) rather than changing the
    path.
    """
    P.init(s, path)


@acl_api("acl.prof.set_config", "aclprofSetConfig", "is")
def set_config(s: S, th: HostThread, cid: int, config_type: int, value: str) -> None:
    """Set one more collection option (an aclprofConfigType and its string value) before
    acl.prof.start. Returns ret: 0; 100043 before acl.prof.init; 100000 for an empty value
    or one over 256 bytes.

    Differs from real ACL: the option is kept in the profile's ``otherData`` and changes
    nothing else (the export always has everything the trace has).
    """
    P.set_config(s, config_type, value)


@acl_api("acl.prof.create_config", "aclprofCreateConfig", "OikK", out="value")
def create_config(s: S, th: HostThread, cid: int, devices: Any, aicore_metrics: int,
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
def destroy_config(s: S, th: HostThread, cid: int, config: int) -> None:
    """Destroy a profiling config. Returns ret: 0, or 100000 for a null, unknown or
    destroyed one.

    Differs from real ACL: destroying a config that is still started is allowed.
    """
    P.destroy_config(s, config)


@acl_api("acl.prof.start", "aclprofStart", "k")
def start(s: S, th: HostThread, cid: int, config: int) -> None:
    """Begin a profiled interval at the caller's virtual time.

    Returns ret: 0; 100043 before acl.prof.init; 100042 when an interval is already
    running; 100000 for a bad config.
    Differs from real ACL: the newest msprof initialises itself on a start without init;
    the emulator follows the documented rule (an error). The "already running" code is
    approximate (real msprof compares the two configs).
    """
    P.start(s, config, th.clock)


@acl_api("acl.prof.stop", "aclprofStop", "k")
def stop(s: S, th: HostThread, cid: int, config: int) -> None:
    """End the running interval (give the config that start was given).

    Returns ret: 0 (also when profiling is not initialised, like msprof); 100043 without a
    start; 100000 for a bad config or another config than start's.
    Differs from real ACL: no data is flushed; the interval is kept for finalize.
    """
    P.stop(s, config, th.clock)


@acl_api("acl.prof.finalize", "aclprofFinalize", "")
def finalize(s: S, th: HostThread, cid: int) -> None:
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
    options = dict(P.state(s).options)
    path, intervals, implicit = P.finalize(s, th.clock)
    if implicit:
        s.diag(cid, "profile", "acl.prof.finalize ended a profiled interval that "
                               "acl.prof.stop never ended")
    out = _write(s, path, intervals, options)
    P.state(s).written.append(out)
    s.diag(cid, "profile", f"profile written to {out} (open it in https://ui.perfetto.dev)",
           level=0)
    print(f"acl_lab: profile written to {out}", file=sys.stderr)


def _write(s: S, folder: str, intervals: list[tuple[int, int, tuple[int, ...]]],
           options: dict[int, str]) -> str:
    from ..tracer.chrome import to_chrome_trace  # the tracer is imported only to write

    doc = to_chrome_trace(s.trace())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if _in_intervals(e, intervals)]
    other = doc.setdefault("otherData", {})
    other["acl_prof"] = {"intervals_ns": [[a, b] for a, b, _ in intervals],
                         "devices": sorted({d for _, _, ds in intervals for d in ds}),
                         "options": {str(k): v for k, v in sorted(options.items())},
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


# ----------------------------------------------------------------------------- subscription
# Op subscription: ``cfg = create_subscribe_config(1, metrics, w)`` with ``r, w = os.pipe()``,
# ``model_subscribe(model_id, cfg)``; the program reads records from ``r`` (a thread, usually)
# and decodes them with the get_op_* functions; ``model_unsubscribe(model_id)`` ends it.


@acl_api("acl.prof.create_subscribe_config", "aclprofCreateSubscribeConfig", "bii",
         out="value")
def create_subscribe_config(s: S, th: HostThread, cid: int, time_info: int, aicore_metrics: int,
                            fd: int) -> int:
    """A subscribe-config handle: op records of subscribed models go to the pipe ``fd``
    (0 with 100000 in the trace for a time-info switch other than 0 or 1).

    Differs from real ACL: the AI-core metrics are kept and not reported.
    """
    return P.create_subscribe_config(s, time_info, aicore_metrics, fd)


@acl_api("acl.prof.destroy_subscribe_config", "aclprofDestroySubscribeConfig", "k")
def destroy_subscribe_config(s: S, th: HostThread, cid: int, config: int) -> None:
    """Destroy a subscribe config. Returns ret: 0, or 100000 for a null or unknown one.

    Differs from real ACL: no difference known.
    """
    P.destroy_subscribe_config(s, config)


@acl_api("acl.prof.model_subscribe", "aclprofModelSubscribe", "Ik")
def model_subscribe(s: S, th: HostThread, cid: int, model_id: int, config: int) -> None:
    """Report each later execution of ``model_id`` as op records on the config's pipe.

    Returns ret: 0; 100011 for a model that is not loaded; 100000 for a bad config; 148046
    for a model already subscribed; 148047 between acl.prof.init and acl.prof.finalize.
    Differs from real ACL: the records are written when an execution is scheduled (its
    virtual start and end are known then), one per layer with the execution's time split by
    the layers' costs; the record layout is acl_lab's own (read it with the get_op_*
    functions, as real programs must).
    """
    P.subscribe(s, model_id, config, th.clock)


def _unsubscribe(s: S, th: HostThread, cid: int, model_id: int) -> None:
    """End the subscription of ``model_id`` after writing every record still pending (the
    pipe must be read meanwhile), then close the pipe's write end (CANN's documentation of
    aclprofModelUnSubscribe: the system closes the write fd once the data is sent; a reader
    that reads until end of file then ends). Do not close that fd yourself afterwards.

    Returns ret: 0; 100011 for a model that is not subscribed; 500005 when records could not
    be written (the pipe was closed or never read).
    Differs from real ACL: when nobody reads a full pipe, the rest is dropped after the
    session's watchdog time (virtual); the write end is left open when another subscription
    still writes to the same fd.
    """
    P.unsubscribe(s, th, cid, model_id)


model_unsubscribe = acl_api("acl.prof.model_unsubscribe", "aclprofModelUnSubscribe",
                            "I")(_unsubscribe)
#: the binding keeps the old misspelt name as an alias of the same wrapper
model_un_subscribe = acl_api("acl.prof.model_un_subscribe", "aclprofModelUnSubscribe",
                             "I")(_unsubscribe)


@acl_api("acl.prof.get_op_desc_size", "aclprofGetOpDescSize", "", out=1)
def get_op_desc_size(s: S, th: HostThread, cid: int) -> int:
    """``(size, ret)``: bytes of one op record (read whole multiples of it from the pipe).

    Differs from real ACL: acl_lab's records are 256 bytes; real msprof's size differs.
    """
    return P.OP_DESC_SIZE


def _buf(s: S, ptr: int, length: int) -> bytes:
    _, view = buffers.host_view(s, ptr, length, "an op-record buffer")
    return bytes(view.tobytes())


@acl_api("acl.prof.get_op_num", "aclprofGetOpNum", "pk", out=1)
def get_op_num(s: S, th: HostThread, cid: int, op_info: int, length: int) -> int:
    """``(count, ret)``: op records in the ``length`` bytes at ``op_info``; 100000 when
    ``length`` is not a whole number of records.

    Differs from real ACL: no difference known.
    """
    data = _buf(s, op_info, length)
    P.op_record(s, data, 0)
    return len(data) // P.OP_DESC_SIZE


def _text_api(name: str, cname: str, field: int) -> Any:
    @acl_api(name, cname, "pkIk", out=1, default="")
    def text(s: S, th: HostThread, cid: int, op_info: int, length: int, index: int,
             max_len: int) -> str:
        """``(text, ret)`` of record ``index``; ``("", 100000)`` for a ``max_len`` over 4096
        (the binding's own check) or too short for the text and its NUL.

        Differs from real ACL: no difference known.
        """
        if max_len > 4096:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"length {max_len} is over the binding's limit 4096")
        value = str(P.op_record(s, _buf(s, op_info, length), index)[field])
        if max_len < len(value.encode()) + 1:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"length {max_len} cannot hold {value!r} and its NUL")
        return value
    text.__name__ = name.rpartition(".")[2]
    return text


def _text_v2_api(name: str, cname: str, field: int) -> Any:
    @acl_api(name, cname, "pkI", out=1, default=None)
    def text(s: S, th: HostThread, cid: int, op_info: int, length: int, index: int) -> str:
        """``(text, ret)`` of record ``index`` (the binding asks the length first);
        ``(None, 100000)`` for a bad buffer or index.

        Differs from real ACL: no difference known.
        """
        return str(P.op_record(s, _buf(s, op_info, length), index)[field])
    text.__name__ = name.rpartition(".")[2]
    return text


def _len_api(name: str, cname: str, field: int) -> Any:
    @acl_api(name, cname, "pkI", out=1)
    def size(s: S, th: HostThread, cid: int, op_info: int, length: int, index: int) -> int:
        """``(length, ret)``: bytes to allocate for the text of record ``index`` (with its
        NUL).

        Differs from real ACL: no difference known.
        """
        return len(str(P.op_record(s, _buf(s, op_info, length), index)[field]).encode()) + 1
    size.__name__ = name.rpartition(".")[2]
    return size


def _int_api(name: str, cname: str, field: int) -> Any:
    @acl_api(name, cname, "pkI", out="value")
    def value(s: S, th: HostThread, cid: int, op_info: int, length: int, index: int) -> int:
        """The value of record ``index`` (0, with 100000 in the trace, for a bad buffer or
        index: the C function returns 0).

        Differs from real ACL: times are virtual nanoseconds since the session started.
        """
        return int(P.op_record(s, _buf(s, op_info, length), index)[field])
    value.__name__ = name.rpartition(".")[2]
    return value


get_op_type = _text_api("acl.prof.get_op_type", "aclprofGetOpType", 4)
get_op_name = _text_api("acl.prof.get_op_name", "aclprofGetOpName", 5)
get_op_type_v2 = _text_v2_api("acl.prof.get_op_type_v2", "aclprofGetOpType", 4)
get_op_name_v2 = _text_v2_api("acl.prof.get_op_name_v2", "aclprofGetOpName", 5)
get_op_type_len = _len_api("acl.prof.get_op_type_len", "aclprofGetOpTypeLen", 4)
get_op_name_len = _len_api("acl.prof.get_op_name_len", "aclprofGetOpNameLen", 5)
get_model_id = _int_api("acl.prof.get_model_id", "aclprofGetModelId", 0)
get_op_start = _int_api("acl.prof.get_op_start", "aclprofGetOpStart", 1)
get_op_end = _int_api("acl.prof.get_op_end", "aclprofGetOpEnd", 2)
get_op_duration = _int_api("acl.prof.get_op_duration", "aclprofGetOpDuration", 3)


def written(session: S) -> list[str]:
    """The profile files acl.prof.finalize wrote in ``session``, oldest first."""
    return list(P.state(session).written)


__all__ = [
    "create_config",
    "create_subscribe_config",
    "destroy_config",
    "destroy_subscribe_config",
    "finalize",
    "get_model_id",
    "get_op_desc_size",
    "get_op_duration",
    "get_op_end",
    "get_op_name",
    "get_op_name_len",
    "get_op_name_v2",
    "get_op_num",
    "get_op_start",
    "get_op_type",
    "get_op_type_len",
    "get_op_type_v2",
    "init",
    "model_subscribe",
    "model_un_subscribe",
    "model_unsubscribe",
    "set_config",
    "start",
    "stop",
    "written",
]
