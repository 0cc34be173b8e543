"""Profiling state of a session (``aclprof*``): init, configs, start/stop intervals.

The emulator records everything in its trace all the time, so profiling adds no data of its
own: it remembers where the program asked for results (``aclprofInit``), which intervals it
profiled (``aclprofStart`` .. ``aclprofStop``, in virtual time) and for which devices. The
writer of the result (a Perfetto/Chrome JSON of those intervals) is outside the runtime, in
``acl_lab.acl.prof``, because the runtime does not import the tracer.

Codes follow the msprof ACL manager's prechecks (``hicann/runtime``
``src/dfx/msprof/collector/dvvp/msprof/engine/src/prof_acl_mgr.cpp``: ``ProfInitPrecheck``,
``ProfStartPrecheck``, ``ProfFinalizePrecheck``) and the adapter
``profimpl/adapter/src/msprofiler_acl_api.cpp`` (``ProfStop`` returns 0 when profiling is not
initialised).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..constants import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_PROF_ALREADY_RUN,
    ACL_ERROR_PROF_NOT_RUN,
    ACL_ERROR_PROFILING_FAILURE,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_UNINITIALIZE,
)
from .errors import AclError
from .session import Session

#: aclprofInit's path limit (C-doc 19-01: "最大长度不超过4096字节")
MAX_PATH = 4096
#: the attribute of Session that holds its ProfState (made on first use)
STATE_ATTR = "profiling"


@dataclass
class ProfConfig:
    """An aclprofConfig: the devices and switches to profile."""

    devices: tuple[int, ...]
    aicore_metrics: int
    aicore_events: int
    data_types: int
    handle: int = 0
    alive: bool = True


@dataclass
class ProfState:
    """What aclprof* calls set up in one session."""

    path: str | None = None
    #: the running interval: (config handle, start ns)
    running: tuple[int, int] | None = None
    #: finished intervals since init: (start ns, stop ns, devices)
    intervals: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)
    #: every profile written so far (paths)
    written: list[str] = field(default_factory=list)


def state(s: Session) -> ProfState:
    """The session's profiling state (created on first use)."""
    st = getattr(s, STATE_ATTR, None)
    if st is None:
        st = ProfState()
        setattr(s, STATE_ATTR, st)
    return st


def init(s: Session, path: str) -> None:
    """aclprofInit: remember (and create) the result folder."""
    st = state(s)
    if s.init_count <= 0:
        raise AclError(ACL_ERROR_UNINITIALIZE, "acl.prof.init needs acl.init first")
    if st.path is not None:
        raise AclError(ACL_ERROR_REPEAT_INITIALIZE,
                       "acl.prof.init was already called (pair it with acl.prof.finalize)")
    if not path or len(path.encode()) > MAX_PATH:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"the profiling result path must be 1 to {MAX_PATH} bytes long")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise AclError(ACL_ERROR_PROFILING_FAILURE,
                       f"cannot create the profiling result folder {path!r}: {e}") from None
    if not os.access(path, os.W_OK):
        raise AclError(ACL_ERROR_PROFILING_FAILURE,
                       f"the profiling result folder {path!r} is not writable")
    st.path = os.path.abspath(path)
    st.intervals = []


def create_config(s: Session, devices: list[int], metrics: int, events: int,
                  data_types: int) -> int:
    """aclprofCreateConfig: a config handle (raises for an empty list or unknown device)."""
    if not devices:
        raise AclError(ACL_ERROR_INVALID_PARAM, "the device list is empty")
    for d in devices:
        if not 0 <= d < len(s.devices):
            raise AclError(ACL_ERROR_INVALID_PARAM,
                           f"device {d} does not exist (the machine has {len(s.devices)})")
    if len(set(devices)) != len(devices):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"the device list {devices} repeats a device")
    cfg = ProfConfig(tuple(devices), metrics, events, data_types)
    cfg.handle = s._handle(cfg)
    return cfg.handle


def config(s: Session, handle: int) -> ProfConfig:
    """A live profiling config by handle (100000 for null, unknown or destroyed)."""
    obj = s.handles.get(handle) if handle else None
    if not isinstance(obj, ProfConfig) or not obj.alive:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{handle:#x} is not a live profiling config")
    return obj


def destroy_config(s: Session, handle: int) -> None:
    """aclprofDestroyConfig."""
    config(s, handle).alive = False


def start(s: Session, handle: int, now: int) -> None:
    """aclprofStart: begin an interval at ``now`` (virtual ns)."""
    st = state(s)
    cfg = config(s, handle)
    if st.path is None:
        raise AclError(ACL_ERROR_PROF_NOT_RUN,
                       "Please call the APIs in the following order: call aclprofInit first, "
                       "then aclprofStart.")
    if st.running is not None:
        raise AclError(ACL_ERROR_PROF_ALREADY_RUN,
                       "acl.prof.start while profiling already runs (call acl.prof.stop first)")
    st.running = (cfg.handle, now)


def stop(s: Session, handle: int, now: int) -> None:
    """aclprofStop: end the running interval at ``now``."""
    st = state(s)
    if st.path is None:
        return  # msprofiler_acl_api.cpp ProfStop: not initialised -> success, nothing done
    cfg = config(s, handle)
    if st.running is None:
        raise AclError(ACL_ERROR_PROF_NOT_RUN, "acl.prof.stop without acl.prof.start")
    if st.running[0] != cfg.handle:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       "acl.prof.stop needs the config that acl.prof.start was given")
    st.intervals.append((st.running[1], now, cfg.devices))
    st.running = None


def finalize(s: Session, now: int) -> tuple[str, list[tuple[int, int, tuple[int, ...]]], bool]:
    """aclprofFinalize: ``(result folder, intervals, stopped_by_finalize)``; the state is
    reset so a new init can follow."""
    st = state(s)
    if st.path is None:
        raise AclError(ACL_ERROR_PROF_NOT_RUN,
                       "Please call the APIs in the following order: call aclprofInit first, "
                       "then aclprofFinalize.")
    implicit = st.running is not None
    if st.running is not None:
        cfg: Any = s.handles.get(st.running[0])
        st.intervals.append((st.running[1], now, tuple(getattr(cfg, "devices", ()))))
        st.running = None
    out = (st.path, list(st.intervals), implicit)
    st.path = None
    st.intervals = []
    return out
