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

Op subscription (``aclprofModelSubscribe``) writes records to the program's pipe as each
execution of a subscribed model is scheduled; ``aclprofModelUnSubscribe`` writes what is
still pending and then closes the pipe's write end (CANN's documentation of
``aclprofCreateSubscribeConfig`` and ``aclprofModelUnSubscribe``: "the system closes the
pipe's write fd once the data is sent"), so a reader that reads until end of file ends. A
program's thread reading that pipe waits in the host schedule (``pysync.read``): it wakes at
the virtual time the records it reads were written.
"""

from __future__ import annotations

import os
import select
import stat
import struct
from dataclasses import dataclass, field
from typing import Any

from ..constants import (
    ACL_ERROR_INVALID_MODEL_ID,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_PROF_ALREADY_RUN,
    ACL_ERROR_PROF_API_CONFLICT,
    ACL_ERROR_PROF_NOT_RUN,
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE,
    ACL_ERROR_PROFILING_FAILURE,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_UNINITIALIZE,
)
from . import waits
from .costs import layer_costs
from .errors import AclError
from .kinds import TaskKind
from .objects import HostThread
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
class SubscribeConfig:
    """An aclprofSubscribeConfig: where a subscribed model's op records go (a pipe's fd)."""

    time_info: int
    aicore_metrics: int
    fd: int
    #: (device, inode) of the pipe ``fd`` was a write end of when the config was made (None:
    #: not a pipe, or not this process's); records go to ``fd`` only while it still is one
    pipe: tuple[int, int] | None = None
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
    #: aclprofSetConfig options: config type -> value
    options: dict[int, str] = field(default_factory=dict)
    #: every profile written so far (paths)
    written: list[str] = field(default_factory=list)
    #: model id -> (subscribe config, virtual time of the subscription)
    subscriptions: dict[int, tuple[SubscribeConfig, int]] = field(default_factory=dict)
    #: the hook subscriber that turns placed model tasks into op records (while subscribed)
    reporter: OpReporter | None = None
    #: pipe (device, inode) -> the virtual time the emulator last wrote to it or closed it
    fed: dict[tuple[int, int], int] = field(default_factory=dict)


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
    if st.subscriptions:
        raise AclError(ACL_ERROR_PROF_API_CONFLICT,
                       "acl.prof.init while a model is subscribed (acl.prof.model_subscribe): "
                       "the two profiling modes cannot be mixed")
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


def set_config(s: Session, config_type: int, value: str) -> None:
    """aclprofSetConfig: an extra collection option, kept (ProfSetConfigPrecheck: 100043
    before aclprofInit; C-doc 19-01: the value is at most 256 bytes)."""
    st = state(s)
    if st.path is None:
        raise AclError(ACL_ERROR_PROF_NOT_RUN,
                       "Please call the APIs in the following order: call aclprofInit first, "
                       "then aclprofSetConfig.")
    if not value or len(value.encode()) > 256:
        raise AclError(ACL_ERROR_INVALID_PARAM, "the config value must be 1 to 256 bytes long")
    st.options[config_type] = value


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
    return s.register(cfg)  # a handle only: configs are not objects of the trace


def config(s: Session, handle: int) -> ProfConfig:
    """A live profiling config by handle (100000 for null, unknown or destroyed)."""
    cfg: ProfConfig = s.lookup(handle, ProfConfig, "profiling config")
    return cfg


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
    st.options = {}
    return out


# ------------------------------------------------------------------------------ subscription


def create_subscribe_config(s: Session, time_info: int, metrics: int, fd: int) -> int:
    """aclprofCreateSubscribeConfig: a handle for model_subscribe (``fd``: a pipe's write
    end, checked when the records are written)."""
    if time_info not in (0, 1):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"time_info_switch must be 0 or 1, not {time_info}")
    cfg = SubscribeConfig(time_info, metrics, fd, pipe_of(fd) if s.own_fds else None)
    return s.register(cfg)  # a handle only: configs are not objects of the trace


def subscribe_config(s: Session, handle: int) -> SubscribeConfig:
    """A live subscribe config by handle (100000 for null, unknown or destroyed)."""
    cfg: SubscribeConfig = s.lookup(handle, SubscribeConfig, "subscribe config")
    return cfg


def destroy_subscribe_config(s: Session, handle: int) -> None:
    """aclprofDestroySubscribeConfig."""
    subscribe_config(s, handle).alive = False


def subscribe(s: Session, mid: int, handle: int, now: int) -> None:
    """aclprofModelSubscribe: model ``mid``'s executions from ``now`` on are reported.

    Codes: msprofiler_acl_api.cpp ProfCheckModelLoaded (100011 for a model that is not
    loaded), ProfSubscribe (100000 for a null config), the manager's subscribe precheck
    (148047 while aclprofInit's mode runs) and ProfAclMgr (148046 for a repeat)."""
    st = state(s)
    lm = s.models.get(mid)
    if lm is None or not getattr(lm, "alive", False):
        raise AclError(ACL_ERROR_INVALID_MODEL_ID, f"model {mid} is not loaded")
    cfg = subscribe_config(s, handle)
    if st.path is not None:
        raise AclError(ACL_ERROR_PROF_API_CONFLICT,
                       "acl.prof.model_subscribe between acl.prof.init and acl.prof.finalize: "
                       "the two profiling modes cannot be mixed")
    if mid in st.subscriptions:
        raise AclError(ACL_ERROR_PROF_REPEAT_SUBSCRIBE, f"model {mid} is already subscribed")
    st.subscriptions[mid] = (cfg, now)
    if st.reporter is None:
        st.reporter = OpReporter(s, st)
        s.hooks.subscribe(st.reporter)


def unsubscribe(s: Session, th: HostThread, cid: int, mid: int) -> tuple[SubscribeConfig, int]:
    """aclprofModelUnSubscribe: write the records still pending (waiting in the host
    schedule while the pipe is full), then close the pipe's write end unless another
    subscription still writes to it; ``(config, subscription time)`` of the ended one.

    Differs from real ACL: when nobody reads a full pipe, the rest of the records are
    dropped after ``s.watchdog`` seconds of virtual time (500005)."""
    st = state(s)
    if mid not in st.subscriptions:
        raise AclError(ACL_ERROR_INVALID_MODEL_ID, f"model {mid} is not subscribed")
    cfg, since = st.subscriptions[mid]
    rep = st.reporter
    if rep is not None:
        rep.drain(th, cid, cfg)
    del st.subscriptions[mid]
    if not any(c.fd == cfg.fd for c, _ in st.subscriptions.values()):
        close_pipe(s, cfg, th.clock)
    if rep is not None and not st.subscriptions:
        s.hooks.unsubscribe(rep)
        st.reporter = None
    lost = rep.lost.pop(cfg.fd, 0) if rep is not None else 0
    if lost:
        where = "its pipe is in acl-lab grade's sandbox, out of the emulator's reach" \
            if not s.own_fds else "closed, or nobody read the pipe"
        raise AclError(ACL_ERROR_PROFILING_FAILURE,
                       f"{lost} bytes of op records of model {mid} could not be written to fd "
                       f"{cfg.fd} ({where})")
    return cfg, since


def pipe_of(fd: int) -> tuple[int, int] | None:
    """``(device, inode)`` of the pipe ``fd`` is an end of; None when it is not a pipe or not
    open (both ends of one pipe give the same pair)."""
    try:
        st = os.fstat(fd)
    except (OSError, OverflowError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISFIFO(st.st_mode) else None


def close_pipe(s: Session, cfg: SubscribeConfig, clock: int) -> None:
    """Close the config's write end once its data is sent (CANN: "the system closes the
    pipe's write fd"), only while ``cfg.fd`` still is that pipe (an fd the program closed and
    reused for something else is left alone)."""
    if cfg.pipe is None or pipe_of(cfg.fd) != cfg.pipe:
        return
    try:
        os.close(cfg.fd)
    except OSError:
        return
    st = state(s)
    st.fed[cfg.pipe] = max(st.fed.get(cfg.pipe, 0), clock)


def feeds(s: Session, pipe: tuple[int, int] | None) -> bool:
    """Whether the emulator writes to ``pipe`` (a live subscription's pipe): a reader
    waiting on it needs nobody outside the program."""
    if pipe is None:
        return False
    return any(c.pipe == pipe for c, _ in state(s).subscriptions.values())


def fed_at(s: Session, pipe: tuple[int, int] | None) -> int:
    """The virtual time the emulator last wrote to (or closed) ``pipe``, 0 if never."""
    return state(s).fed.get(pipe, 0) if pipe is not None else 0


def layer_weights(s: Session, mid: int) -> list[tuple[str, str, int]]:
    """``(node name, op type, ns)`` per layer of model ``mid`` at its current gear: how
    ``costs.execution_cost`` splits one execution's time over its layers."""
    lm = s.models.get(mid)
    if lm is None:
        return []
    return [(c.name, c.op, c.ns) for c in layer_costs(s.profile, lm.om, lm.cur_gear)]


# ------------------------------------------------------------------------------ op records
#: one op record (acl_lab's layout; real msprof's aclprofOpDesc is opaque, its size is what
#: aclprofGetOpDescSize says): model id, reserved, start, end, duration (ns), op type, op name
OP_RECORD = struct.Struct("<IIQQQ64s160s")
OP_DESC_SIZE = OP_RECORD.size
EXECUTE_CALLS = ("acl.mdl.execute", "acl.mdl.execute_async")


def op_records(s: Session, mid: int, start: int, end: int) -> bytes:
    """The records of one execution of ``mid`` over ``[start, end]``: one per layer, the time
    split in proportion to each layer's cost."""
    layers = layer_weights(s, mid)
    total = sum(ns for _, _, ns in layers) or 1
    out = []
    acc = 0
    t0 = start
    for name, op, ns in layers:
        acc += ns
        t1 = start + (end - start) * acc // total
        out.append(OP_RECORD.pack(mid, 0, t0, t1, t1 - t0, op.encode()[:63],
                                  name.encode()[:159]))
        t0 = t1
    return b"".join(out)


class OpReporter:
    """A hook subscriber: each placed, successful execution of a subscribed model becomes op
    records written (without blocking) to the subscription's fd; what the pipe cannot take
    yet waits and is written at the next execution or at unsubscribe."""

    def __init__(self, s: Session, st: ProfState) -> None:
        self.s = s
        self.st = st
        self.call_model: dict[int, int] = {}
        self.pending: dict[int, bytearray] = {}
        #: bytes dropped per fd (the fd was closed or broken)
        self.lost: dict[int, int] = {}

    def on_call_begin(self, cid: int, name: str, thread_idx: int, ctx_oid: int, file: str,
                      line: int, start_ns: int, args: tuple[Any, ...], fmt: str) -> None:
        """Remember which model an execute call runs."""
        if name in EXECUTE_CALLS and args and isinstance(args[0], int) \
                and args[0] in self.st.subscriptions:
            self.call_model[cid] = args[0]

    def on_task(self, t: Any) -> None:
        """A task placed at its submission comes with its start and end: as if placed."""
        if t.end >= 0:
            self.on_task_placed(t)

    def on_task_placed(self, t: Any) -> None:
        """A model task's start and end are known: report its layers (written at its end
        in virtual time: a reader waiting for them continues from there)."""
        if t.kind != TaskKind.MODEL:
            return
        mid = self.call_model.pop(t.call, None)
        sub = self.st.subscriptions.get(mid) if mid is not None else None
        if mid is None or sub is None or t.status != 0:
            return
        cfg = sub[0]
        self.pending.setdefault(cfg.fd, bytearray()).extend(
            op_records(self.s, mid, t.start, t.end))
        if cfg.pipe is not None:
            self.st.fed[cfg.pipe] = max(self.st.fed.get(cfg.pipe, 0), t.end)
        self.flush(cfg)

    def flush(self, cfg: SubscribeConfig) -> bool:
        """Write what the pipe takes now; True when nothing is pending for ``cfg.fd``."""
        fd = cfg.fd
        buf = self.pending.get(fd)
        if not buf:
            return True
        if not self.s.own_fds or (cfg.pipe is not None and pipe_of(fd) != cfg.pipe):
            self.lost[fd] = self.lost.get(fd, 0) + len(buf)  # not the program's pipe (now)
            buf.clear()
            return True
        try:
            blocking = os.get_blocking(fd)
            os.set_blocking(fd, False)
            try:
                while buf:
                    n = os.write(fd, buf[:65536])
                    del buf[:n]
            finally:
                os.set_blocking(fd, blocking)
        except BlockingIOError:
            return False
        except OSError:
            self.lost[fd] = self.lost.get(fd, 0) + len(buf)
            buf.clear()
        return not buf

    def drain(self, th: HostThread, cid: int, cfg: SubscribeConfig) -> None:
        """Write everything pending for ``cfg``: while the pipe is full the caller waits
        (in the host schedule: its reader runs); when nobody can read it, the rest is
        dropped after ``s.watchdog`` seconds of virtual time."""
        fd = cfg.fd
        s = self.s

        def needs() -> waits.Needs:
            return [("any", f"the pipe of fd {fd} is full and must be read (a thread "
                            "reading it until end of file)")]

        try:
            while not self.flush(cfg):
                waits.block(s, th, cid, lambda: _writable(fd), needs,
                            f"acl.prof.model_unsubscribe writing op records to fd {fd}",
                            int(max(s.watchdog, 0.1) * 1e9), ACL_ERROR_PROFILING_FAILURE)
        except AclError:
            buf = self.pending.get(fd, b"")
            self.lost[fd] = self.lost.get(fd, 0) + len(buf)
        self.pending.pop(fd, None)


def _writable(fd: int) -> bool:
    """Whether a write to ``fd`` would not block now (or would fail at once)."""
    try:
        p = select.poll()
        p.register(fd, select.POLLOUT)
        return bool(p.poll(0))
    except (OSError, ValueError, OverflowError):
        return True


def op_record(s: Session, data: bytes, index: int) -> tuple[int, int, int, int, str, str]:
    """Record ``index`` of a buffer of op records: (model id, start, end, duration, type,
    name); 100000 for a buffer that is not whole records or an index past them."""
    if len(data) % OP_DESC_SIZE or not data:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{len(data)} bytes are not a whole number of {OP_DESC_SIZE}-byte op "
                       "records (acl.prof.get_op_desc_size)")
    if not 0 <= index < len(data) // OP_DESC_SIZE:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"op index {index} is past the {len(data) // OP_DESC_SIZE} records")
    mid, _, start, end, dur, op, name = OP_RECORD.unpack_from(data, index * OP_DESC_SIZE)
    return (mid, start, end, dur, op.rstrip(b"\0").decode(errors="replace"),
            name.rstrip(b"\0").decode(errors="replace"))
