"""Memory allocation: aclrtMalloc (and its variants), aclrtMallocHost, free, get_mem_info.

Functions over a ``Session`` (the state: its ``MemorySystem``). Allocation itself (address
ranges, alignment, capacity) is ``memory.MemorySystem``'s; this module is the API's view of
it: which context a device allocation belongs to, which free releases which memory, and what
``get_mem_info`` reports for each ``aclrtMemAttr``. Copies and memsets are not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..constants import ErrorCode
from . import devices
from .errors import AclError
from .memory import DEVICE, DVPP, HOST_PAGEABLE, HOST_PINNED, KIND_NAMES
from .objects import HostThread

if TYPE_CHECKING:
    from .session import Session

_PARAM_INVALID = ErrorCode.ACL_ERROR_RT_PARAM_INVALID  # 107000

#: the API function of each free kind, for messages
_FREE_API = {"device": "acl.rt.free", "host": "acl.rt.free_host", "dvpp": "acl.media.dvpp_free"}
#: the memory kinds each free accepts: aclrtFree and acldvppFree both end in the driver's
#: device free and check no allocator (CANN runtime: aclrtFreeImpl -> rtFree ->
#: ApiImpl::DevFree in src/acl/aclrt_impl/memory.cpp and src/runtime/api/impl/api_impl.cc;
#: DevDvppFree checks only that the pointer is device memory): either frees the other's
#: memory and returns 0, and the trace's invalid_free check warns about the mismatch
_FREE_KINDS = {"device": (DEVICE, DVPP), "host": (HOST_PINNED,), "dvpp": (DVPP, DEVICE)}
#: how each memory kind is released, for the message of a mismatched free
_RELEASED_BY = {DEVICE: "acl.rt.free", HOST_PINNED: "acl.rt.free_host",
                DVPP: "acl.media.dvpp_free",
                HOST_PAGEABLE: "nothing (Python owns that buffer)"}


def malloc(s: Session, th: HostThread, cid: int, size: int, policy: int, kind: str) -> int:
    """aclrtMalloc / MallocAlign32 / MallocCached, and acldvppMalloc (``kind='dvpp'``)."""
    ctx = devices.require_ctx(s, th)
    r = s.memory.alloc_device(ctx.device.index, size, policy, cid, ctx.oid,
                              align32_only=(kind == "align32"), dvpp=(kind == "dvpp"))
    s.hooks.on_alloc(r, cid)
    return r.addr


def malloc_host(s: Session, th: HostThread, cid: int, size: int) -> int:
    """aclrtMallocHost: page-locked host memory, 64-byte aligned, uninitialised."""
    r = s.memory.alloc_pinned(size, cid)
    s.hooks.on_alloc(r, cid)
    return r.addr


def free(s: Session, th: HostThread, cid: int, ptr: int, kind: str) -> None:
    """aclrtFree / aclrtFreeHost / acldvppFree: release at once (no wait for tasks).

    ``kind`` is ``"device"``, ``"host"`` or ``"dvpp"``: which free the program called.
    """
    api = _FREE_API[kind]
    if ptr == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"{api} got a null pointer")
    r = s.memory.find(ptr)
    if r is None or r.addr != ptr:
        dead = s.memory.find_freed(ptr)
        if r is None and dead is not None and dead.addr == ptr:
            raise AclError(_PARAM_INVALID, f"{api}({ptr:#x}): allocation #{dead.id} was "
                                           "already freed (double free)")
        if r is not None:
            raise AclError(_PARAM_INVALID, f"{api}({ptr:#x}) points {ptr - r.addr} bytes "
                                           f"into allocation #{r.id}: free takes the start "
                                           "address")
        raise AclError(_PARAM_INVALID, f"{api}({ptr:#x}): not an address this allocator "
                                       "handed out")
    if r.kind not in _FREE_KINDS[kind]:
        raise AclError(_PARAM_INVALID, f"{api}({ptr:#x}) was given {KIND_NAMES[r.kind]} "
                                       f"memory (allocation #{r.id}); release it with "
                                       f"{_RELEASED_BY[r.kind]}")
    s.memory.free(r)
    s.hooks.on_free(r, cid, devices.HOW_EXPLICIT)


def mem_info(s: Session, th: HostThread, attr: int) -> tuple[int, int]:
    """aclrtGetMemInfo: (free, total) of the current device for an aclrtMemAttr.

    The device's own kind (DDR on 310-class, HBM on 910-class) and its huge/normal
    variants report the shared capacity; HBM asked of a DDR device reports DDR (C-doc
    11-01); anything the device lacks (DDR on an HBM device, P2P and 1 GiB pools where
    unsupported) gives (0, 0).
    """
    ctx = devices.require_ctx(s, th)
    mem = s.memory.devices[ctx.device.index]
    if not 0 <= attr <= 17:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"memory attribute {attr} is not an aclrtMemAttr value (0-17)")
    hbm = s.profile.memory_kind == "hbm"
    ddr_attrs = {0, 2, 3}            # DDR, DDR_HUGE, DDR_NORMAL
    hbm_attrs = {1, 4, 5}            # HBM, HBM_HUGE, HBM_NORMAL
    generic = {12, 13}               # MEM_NORMAL, MEM_HUGE
    huge1g = {10, 14}                # HBM_HUGE1G, MEM_HUGE1G
    supported = generic | hbm_attrs | (set() if hbm else ddr_attrs)
    if s.profile.supports_huge1g:
        supported |= huge1g
    if attr in supported:
        return mem.free_bytes, mem.capacity
    return 0, 0
