"""Copies and memsets: aclrtMemcpy(Async), aclrtMemset(Async).

Functions of the session, like every subsystem module of the runtime. A copy resolves each
pointer once (``MemorySystem.find``: one dict lookup for the start of an allocation), checks
what real ACL checks, and becomes one ``CopyTask`` (a read and a write): on a stream
(``scheduler.submit``) or run at once (``scheduler.run_sync``). Its bytes move in
virtual-time order (``scheduler.effect_start`` / ``effect_end``).

``memcpy_async`` is the hot path of most programs: the rare cases (pageable or misaligned
memory, a kind that disagrees with the pointers, an over-read, a read-only destination) are
behind one cheap test each, so the common copy pays for none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..constants import ErrorCode, MemcpyKind
from . import devices, streams, waits
from .costs import MEMSET_ENGINE, copy_cost, memset_cost
from .errors import AccessError, AclError
from .memory import DEVICE, DVPP, HOST_PAGEABLE, HOST_PINNED, KIND_NAMES, Region
from .objects import CopyTask, Stream, Task
from .scheduler import TaskKind, run_sync, submit

if TYPE_CHECKING:
    from .objects import HostThread
    from .session import Session

#: memcpy kinds (``constants.MemcpyKind``, aclrtMemcpyKind), short for the copy path
H2H, H2D, D2H, D2D = (MemcpyKind.HOST_TO_HOST, MemcpyKind.HOST_TO_DEVICE,
                      MemcpyKind.DEVICE_TO_HOST, MemcpyKind.DEVICE_TO_DEVICE)
#: aclrtMemcpyKind -> the task kind of the copy
COPY_TASK: dict[int, TaskKind] = {H2H: TaskKind.H2H, H2D: TaskKind.H2D, D2H: TaskKind.D2H,
                                  D2D: TaskKind.D2D}
#: The alignment the docs require of memcpy_async's source and destination addresses (bytes);
#: malloc and malloc_host blocks start on it, so pieces of a shared block keep it only at
#: offsets that are multiples of it.
ASYNC_COPY_ALIGN = 64
#: The largest byte count a task holds (the trace records sizes as int64).
MAX_TASK_BYTES = 2**63 - 1
_MEMSET = TaskKind.MEMSET  # read once (an enum member through its class costs ~100 ns)

#: Kinds ``MemcpyKindReviseMap`` (hicann/runtime api_error.cc) allows for a pair with an
#: unregistered (pageable) side, keyed by (src pageable, dst pageable, src device, dst device).
_ALLOWED_KINDS: dict[tuple[bool, bool, bool, bool], tuple[int, ...]] = {
    (True, False, False, True): (H2D, D2D),          # unregistered -> device
    (False, True, True, False): (D2H, D2D),          # device -> unregistered
    (False, True, False, False): (H2H, H2D),         # host -> unregistered
    (True, False, False, False): (H2H, D2H),         # unregistered -> host
    (True, True, False, False): (H2H, H2D, D2H, D2D),  # unregistered -> unregistered
}


def resolve(s: Session, ptr: int, nbytes: int, what: str) -> Region:
    """The live region holding ``[ptr, ptr+nbytes)`` (raw host memory included).

    Raises:
        AccessError: as ``MemorySystem.resolve`` (107000 unknown, freed or out of bounds).
    """
    r = s.memory.find(ptr)
    if r is not None and ptr + nbytes <= r.addr + r.size:
        return r
    return s.memory.resolve(ptr, nbytes, what)


def copy_checks(s: Session, cid: int, dst: int, dest_max: int, src: int, count: int,
                kind: int, asynchronous: bool = False) -> tuple[Region, Region, int] | None:
    """The argument checks of a copy, in real ACL's order; ``(dst region, src region,
    direction)`` or None for a copy that moves nothing (count 0, ``dst == src``).

    Raw host memory (no region holds it) is resolved for the whole ``count``: its pages
    must be mapped (see ``MemorySystem.raw_region``).

    Raises:
        AclError: 100000 null pointer, negative size or a kind outside 0-7; 107000
            ``count > dest_max``, unknown or freed pointers, a read-only destination or a
            kind the runtime refuses (``check_kind``).
    """
    if count == 0:
        return None
    if dst == 0 or src == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "memcpy got a null " + ("destination" if dst == 0
                                                 else "source") + " pointer")
    if count > dest_max:
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"count ({count}) is larger than dest_max ({dest_max}): "
                       "the copy would overflow the destination")
    if count < 0 or dest_max < 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "sizes must not be negative")
    if not 0 <= kind <= 7:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"memcpy kind {kind} is not an aclrtMemcpyKind value (0-7)")
    if dst == src:
        return None
    mem = s.memory
    starts = mem.starts_at  # the start of an allocation, the usual pointer: one lookup
    rd = starts.get(dst)
    if rd is None or not rd.size:
        rd = mem.find(dst) or mem.resolve(dst, count, "destination")
    rs = starts.get(src)
    if rs is None or not rs.size:
        rs = mem.find(src) or mem.resolve(src, count, "source")
    d_dev = rd.kind == DEVICE or rd.kind == DVPP
    if rs.kind == DEVICE or rs.kind == DVPP:
        inferred = D2D if d_dev else D2H
    else:
        inferred = H2D if d_dev else H2H
        if rs.kind == HOST_PAGEABLE and not rs.raw and src + count > rs.addr + rs.size:
            rs = host_overread(s, cid, rs, src, count)
    if rd.read_only or rd.obj is not None:  # only these can be refused (``may_write``)
        refuse_read_only(s, cid, rd, dst, "memcpy destination")
    # MemcpyAsyncCheckLocation checks kinds only in RT_RUN_MODE_ONLINE (EP); on the
    # board (RC) host and device memory are one and any kind moves the bytes.
    if kind != inferred and kind <= D2D and s.run_mode == "host":
        check_kind(s, cid, kind, inferred, rs, rd, asynchronous)
    return rd, rs, inferred


def host_overread(s: Session, cid: int, rs: Region, src: int, count: int) -> Region:
    """A copy source that starts in a host buffer (``acl.util.bytes_to_ptr`` /
    ``numpy_to_ptr``) and runs past its end: copied like real ACL, with a finding.

    Real ACL does not know a host pointer's size (the copy is the driver's, ``drvMemcpy``,
    closed source): it copies the bytes that follow the buffer, whatever lies there, or
    crashes if they are unmapped. The emulator copies the same bytes when they are mapped
    readable and refuses an unmapped range with the raw-address code (107000,
    ``MemorySystem.raw_region``). Only sources: a host destination that runs past its
    buffer stays refused (507053), since the emulator never writes memory the program may
    not write. The ``host_overread`` diagnostic (error level) carries the overrun for the
    ``out_of_bounds`` finding.
    """
    over = src + count - rs.end
    where = f" (+{src - rs.addr})" if src != rs.addr else ""
    head = (f"memcpy source{where}: range of {count} bytes runs {over} bytes past the end "
            f"of {KIND_NAMES[rs.kind]} allocation #{rs.id} ({rs.size} bytes)")
    try:
        raw = s.memory.host_overread(rs, src, count, "memcpy source")
    except AccessError:
        s.diag(cid, "host_overread", f"{head}; the bytes that follow are not mapped: "
                                     "refused with 107000", level=2)
        raise
    s.diag(cid, "host_overread", f"{head}; the {over} bytes that follow it were "
                                 "copied, as real ACL copies them", level=2)
    return raw


def check_kind(s: Session, cid: int, kind: int, inferred: int, rs: Region, rd: Region,
               asynchronous: bool) -> None:
    """A copy kind that does not match its pointers: corrected, accepted or refused.

    Real runtime (hicann/runtime ``src/runtime/api/impl/api_error.cc``): an asynchronous
    copy goes through ``MemcpyAsyncCheckLocation`` -> ``MemcpyKindAutoCorrect``, whose
    ``MemcpyKindReviseMap`` forces the kind of every registered combination (device or
    page-locked host on both sides) with only an INFO log, and for a side that is
    unregistered (pageable) host memory accepts only the kinds listed for that pair
    (``allowedKinds``), returning ``RT_ERROR_INVALID_VALUE`` otherwise, which
    ``errcode_manage.cc`` maps to 107000 (ACL_ERROR_RT_PARAM_INVALID). A synchronous
    ``rtMemcpy`` (``MemCopySync``) does not call it: the driver's copy goes by the
    addresses, so a wrong kind is silently corrected there. Either way nothing tells
    the program, so the emulator leaves a ``memcpy_kind_mismatch`` diagnostic.
    """
    pair = f"{KIND_NAMES[rs.kind]} -> {KIND_NAMES[rd.kind]}"
    allowed = _ALLOWED_KINDS.get((rs.kind == HOST_PAGEABLE, rd.kind == HOST_PAGEABLE,
                                  rs.kind in (DEVICE, DVPP), rd.kind in (DEVICE, DVPP)))
    if asynchronous and allowed is not None and kind not in allowed:
        text = (f"kind ACL_MEMCPY_{MemcpyKind(kind).name} does not match the pointers ({pair}) "
                "and the runtime refuses it for unregistered (pageable) host memory: it "
                "accepts only " + " or ".join(f"ACL_MEMCPY_{MemcpyKind(k).name}" for k in allowed))
        s.diag(cid, "memcpy_kind_mismatch", text, level=2)
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID, text)
    how = ("accepts it and copies by the addresses" if allowed is not None
           else f"corrects it to ACL_MEMCPY_{MemcpyKind(inferred).name} without a word")
    s.diag(cid, "memcpy_kind_mismatch",
           f"kind ACL_MEMCPY_{MemcpyKind(kind).name} does not match the pointers ({pair}): the "
           f"runtime {how}, so the copy is ACL_MEMCPY_{MemcpyKind(inferred).name}")


def refuse_read_only(s: Session, cid: int, r: Region, ptr: int, what: str) -> None:
    """Refuse a write into memory the program may not write, before a byte moves.

    Real ACL has no check of its own: the driver's copy into a read-only page fails
    (``drvMemcpy``, closed source; its invalid-value error maps to 107000 in
    ``errcode_manage.cc``) or the process dies with SIGSEGV; a write into a ``bytes``
    object silently changes an immutable (maybe interned) object. The emulator refuses
    with 107000 and a ``read_only_destination`` diagnostic for the finding.
    """
    why = s.memory.may_write(r)
    if why:
        # No address in the text: host addresses differ from run to run, the trace not.
        at = f" (+{ptr - r.addr})" if ptr != r.addr else ""
        s.diag(cid, "read_only_destination", f"the {what}{at} is {why}", level=2)
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"the {what}{at} is {why}: the program may not write it, "
                       "so nothing was written")


def memcpy(s: Session, th: HostThread, cid: int, dst: int, dest_max: int, src: int,
           count: int, kind: int) -> None:
    """aclrtMemcpy: synchronous; the host blocks until the copy is done."""
    devices.require_ctx(s, th)
    checked = copy_checks(s, cid, dst, dest_max, src, count, kind)
    if checked is None:
        return
    rd, rs, k = checked
    pinned = not (rd.kind == HOST_PAGEABLE or rs.kind == HOST_PAGEABLE)
    eng, dur = copy_cost(s.profile, k, count, pinned)
    task = CopyTask(COPY_TASK[k], None, cid, th.clock, eng, dur, rs, src - rs.addr, rd,
                    dst - rd.addr, count)
    task.pinned = pinned
    run_sync(s, th, task)


def memcpy_async(s: Session, th: HostThread, cid: int, dst: int, dest_max: int, src: int,
                 count: int, kind: int, stream: int) -> None:
    """aclrtMemcpyAsync: a copy task on the stream.

    Pageable host memory is accepted (CANN 7/8: staged, slower, flagged);
    ``Session(pageable_async="sync")`` copies it synchronously like the newest runtime.
    """
    st = streams.lookup(s, th, stream)
    checked = copy_checks(s, cid, dst, dest_max, src, count, kind, asynchronous=True)
    if checked is None:
        return
    rd, rs, k = checked
    pinned = True
    if k != D2D:
        if k == H2H and s.run_mode == "host":
            # api_error.cc MemcpyAsync: "H2H is not supported" only when runMode is ONLINE.
            raise AclError(ErrorCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                           "memcpy_async between two host buffers is not supported "
                           "in EP mode; use acl.rt.memcpy (synchronous)")
        host = rs if k == H2D else rd if k == D2H else None
        if host is not None and host.kind == HOST_PAGEABLE:
            pinned = False
            s.diag(cid, "pageable_async_copy",
                   "memcpy_async with pageable host memory ("
                   + ("raw host memory" if host.raw else f"host buffer #{host.id}") + "): "
                   "the copy is staged and slower, and CANN 7/8 documents unpredictable "
                   "errors; use acl.rt.malloc_host for buffers of async copies")
    if (dst | src) % ASYNC_COPY_ALIGN:
        _note_misaligned(s, cid, dst, rd, src, rs)
    if not pinned and s.pageable_async == "sync":
        waits.wait_streams(s, th, cid, [st], f"{st.label()} before a pageable copy",
                        timeout_ns=-1)
        memcpy(s, th, cid, dst, dest_max, src, count, k)  # kind already checked
        return
    # On the board (device run mode) a stream's host-to-host copy is the device's DMA.
    eng, dur = copy_cost(s.profile, D2D if k == H2H else k, count, pinned)
    t = CopyTask(COPY_TASK[k], st, cid, th.clock, eng, dur, rs, src - rs.addr, rd,
                 dst - rd.addr, count)
    if not pinned:
        t.pinned = False
    submit(s, t)


def _note_misaligned(s: Session, cid: int, dst: int, rd: Region, src: int,
                     rs: Region) -> None:
    """The ``misaligned_async_copy`` notes of a copy whose pointers are not
    ``ASYNC_COPY_ALIGN``-byte aligned
    (the documented requirement; the real runtime does not check it)."""
    for side, ptr, reg in (("destination", dst, rd), ("source", src, rs)):
        # Pageable buffers sit wherever Python put them (already flagged as pageable);
        # noting their alignment would make traces differ from run to run.
        if ptr % ASYNC_COPY_ALIGN and reg.kind != HOST_PAGEABLE:
            s.diag(cid, "misaligned_async_copy",
                   f"memcpy_async {side} ({KIND_NAMES[reg.kind]} #{reg.id} + "
                   f"{ptr - reg.addr}) is {ptr % ASYNC_COPY_ALIGN} bytes past a "
                   f"{ASYNC_COPY_ALIGN}-byte boundary; the docs require "
                   f"{ASYNC_COPY_ALIGN}-byte aligned source and destination")


def memset_checks(s: Session, ptr: int, max_count: int, count: int) -> Region | None:
    """The argument checks of a memset; the region or None for a count of 0.

    Raises:
        AclError: 100000 null pointer or negative count, 107000 ``count > max_count`` or an
            unknown pointer.
    """
    if count == 0:
        return None
    if ptr == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "memset got a null pointer")
    if count > max_count:
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"count ({count}) is larger than max_count ({max_count})")
    if count < 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "count must not be negative")
    r = s.memory.find(ptr)
    if r is None:
        r = s.memory.resolve(ptr, count, "memset pointer")
    return r


def _memset_task(s: Session, th: HostThread, cid: int, st: Stream | None, ptr: int,
                 max_count: int, value: int, count: int) -> Task | None:
    """The memset task of device memory (on stream ``st``, or None for a synchronous one);
    host memory is set at once (RT2's ``drvMemsetD8`` on host pages) and gives no task, as
    does a count of 0."""
    r = memset_checks(s, ptr, max_count, count)
    if r is None:
        return None
    refuse_read_only(s, cid, r, ptr, "memset pointer")
    if r.kind in (HOST_PINNED, HOST_PAGEABLE):
        if ptr + count > r.end:
            s.memory.resolve(ptr, count, "memset range",
                             code=ErrorCode.ACL_ERROR_RT_DEVICE_MEM_ERROR)
        s.memory.fill(r, ptr - r.addr, value, count)
        return None
    # the binding reads counts as size_t (-5 arrives as 2**64 - 5): a count past what a
    # task records (int64) is past every allocation anyway, and fails the same way
    count = min(count, MAX_TASK_BYTES)
    t = Task(_MEMSET, st, cid, th.clock, MEMSET_ENGINE, memset_cost(s.profile, count))
    t.fill = value
    t.nbytes = count
    t.add_access(r, ptr - r.addr, count, True)
    return t


def memset(s: Session, th: HostThread, cid: int, ptr: int, max_count: int, value: int,
           count: int) -> None:
    """aclrtMemset: synchronous; only the low 8 bits of ``value`` are used."""
    devices.require_ctx(s, th)
    t = _memset_task(s, th, cid, None, ptr, max_count, value, count)
    if t is not None:
        run_sync(s, th, t)


def memset_async(s: Session, th: HostThread, cid: int, ptr: int, max_count: int, value: int,
                 count: int, stream: int) -> None:
    """aclrtMemsetAsync: a task for device memory; host memory is set at once (RT2)."""
    st = streams.lookup(s, th, stream)
    t = _memset_task(s, th, cid, st, ptr, max_count, value, count)
    if t is not None:
        submit(s, t)
