"""Emulated memory: device address spaces, pinned and pageable host memory, byte storage.

Every byte a program can reach through the emulator lives in a ``Region``: a device
allocation, a DVPP allocation, a ``malloc_host`` block or a pageable host buffer that
``acl.util`` handed out. Every access resolves an address range to exactly one live region
(bisect over sorted start addresses), so out-of-bounds access, use after free and foreign
pointers are caught, and nothing outside a region is ever read or written.

Device addresses are virtual (realistic-looking, deterministic); host addresses are the real
addresses of numpy/bytes buffers, so their alignment is real. This module knows nothing of
streams, time or the trace.
"""

from __future__ import annotations

import ctypes
import sys
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from typing import Any

import numpy as np

from .errors import AccessError, AclError
from .profiles import DeviceProfile, GiB, MiB

# Region kinds (also the trace's ``allocs.kind`` column).
DEVICE = 0
HOST_PINNED = 1
DVPP = 2
HOST_PAGEABLE = 3
KIND_NAMES = ("device", "host_pinned", "dvpp", "host_pageable")

# Pools (the trace's ``allocs.pool`` column).
POOL_NORMAL = 0
POOL_HUGE = 1
POOL_HUGE1G = 2
POOL_DVPP = 3
POOL_HOST = 4
POOL_NAMES = ("normal", "huge", "huge1g", "dvpp", "host")

HUGE_PAGE = 2 * MiB
HUGE1G_PAGE = 1 * GiB
#: HUGE_FIRST requests at or below this size use normal pages (RT2 npu_driver_base.hpp).
HUGE_FIRST_THRESHOLD = 1 * MiB

#: Device virtual addresses: device d owns [DEVICE_BASE + d*DEVICE_SPAN, +DEVICE_SPAN).
DEVICE_BASE = 0x1240_0000_0000
DEVICE_SPAN = 0x0040_0000_0000
_POOL_OFFSET = {POOL_HUGE: 0, POOL_HUGE1G: 0x0010_0000_0000, POOL_NORMAL: 0x0020_0000_0000,
                POOL_DVPP: 0x0030_0000_0000}
_POOL_SPAN = 0x0010_0000_0000
MAX_DEVICES = 16
DEVICE_END = DEVICE_BASE + MAX_DEVICES * DEVICE_SPAN
#: Synthetic, deterministic display addresses for host regions in the trace.
HOST_DISPLAY_BASE = 0x7F00_0000_0000

#: Largest size any single allocation may request; above it the rounding would overflow.
MAX_ALLOC = 1 << 48


def malloc_size(size: int) -> int:
    """aclrtMalloc's rounding: up to a multiple of 32, plus 32 bytes of padding.

    ``((size + 63) // 32) * 32``: 1 -> 64, 32 -> 64, 33 -> 96, 100 -> 160
    (RT-impl ``memory.cpp`` ``GetAlignedAndPaddingSize``, reference section 5a).
    """
    return ((size + 63) // 32) * 32


def align_up(value: int, granule: int) -> int:
    """Round ``value`` up to a multiple of ``granule``."""
    return (value + granule - 1) // granule * granule


class Region:
    """One allocation or registered buffer, with its bytes and its written-bytes shadow."""

    __slots__ = ("accounted", "addr", "alloc_call", "buf", "ctx", "device", "display_addr",
                 "id", "kind", "live", "obj", "policy", "pool", "requested", "size",
                 "written")

    def __init__(self, rid: int, kind: int, device: int, addr: int, size: int,
                 requested: int, policy: int, pool: int, accounted: int,
                 buf: np.ndarray, alloc_call: int, ctx: int = -1) -> None:
        self.id = rid
        self.kind = kind
        self.device = device
        self.addr = addr
        self.size = size
        self.requested = requested
        self.policy = policy
        self.pool = pool
        self.accounted = accounted
        self.buf = buf
        self.alloc_call = alloc_call
        self.ctx = ctx
        self.live = True
        self.obj: Any = None
        self.display_addr = addr
        # Sorted, merged [start, end) ranges that were ever written (None = all of it).
        self.written: list[list[int]] | None = [] if kind in (DEVICE, DVPP, HOST_PINNED) else None

    @property
    def end(self) -> int:
        """One past the last usable address."""
        return self.addr + self.size

    def mark_written(self, start: int, end: int) -> None:
        """Record that bytes ``[start, end)`` (offsets) now hold data."""
        w = self.written
        if w is None:
            return
        if not w or start > w[-1][1]:
            w.append([start, end])
        else:
            merged = [start, end]
            keep: list[list[int]] = []
            for s, e in w:
                if e < merged[0] or s > merged[1]:
                    keep.append([s, e])
                else:
                    merged = [min(s, merged[0]), max(e, merged[1])]
            keep.append(merged)
            keep.sort()
            w[:] = keep
        if len(w) == 1 and w[0][0] <= 0 and w[0][1] >= self.size:
            self.written = None

    def unwritten(self, start: int, end: int) -> int:
        """How many bytes of ``[start, end)`` (offsets) were never written."""
        w = self.written
        if w is None:
            return 0
        covered = 0
        for s, e in w:
            lo, hi = max(s, start), min(e, end)
            if hi > lo:
                covered += hi - lo
        return (end - start) - covered


class _Index:
    """Sorted start addresses -> regions, for O(log n) address resolution."""

    __slots__ = ("regions", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.regions: list[Region] = []

    def add(self, r: Region) -> None:
        i = bisect_right(self.starts, r.addr)
        self.starts.insert(i, r.addr)
        self.regions.insert(i, r)

    def remove(self, r: Region) -> None:
        i = bisect_right(self.starts, r.addr) - 1
        while i >= 0 and self.starts[i] == r.addr:
            if self.regions[i] is r:
                del self.starts[i]
                del self.regions[i]
                return
            i -= 1
        raise KeyError(r.addr)

    def find(self, addr: int) -> Region | None:
        i = bisect_right(self.starts, addr) - 1
        if i >= 0:
            r = self.regions[i]
            if addr < r.addr + r.size:
                return r
        return None



class _Extents:
    """First-fit placement of aligned blocks in one pool's address window."""

    __slots__ = ("free",)

    def __init__(self, base: int, span: int) -> None:
        self.free: list[list[int]] = [[base, span]]

    def take(self, size: int, align: int) -> int:
        for i, (start, length) in enumerate(self.free):
            if length < size:
                continue  # too small whatever the alignment (most holes, once fragmented)
            a = align_up(start, align)
            if a + size <= start + length:
                tail = start + length - (a + size)
                pieces = []
                if a > start:
                    pieces.append([start, a - start])
                if tail:
                    pieces.append([a + size, tail])
                self.free[i:i + 1] = pieces
                return a
        raise MemoryError

    def give(self, addr: int, size: int) -> None:
        # The free list is sorted and never has two touching extents, so only the new
        # block's neighbours can merge with it (no pass over the whole list).
        free = self.free
        i = bisect_left(free, [addr, size])
        if i and free[i - 1][0] + free[i - 1][1] == addr:
            i -= 1
            free[i][1] += size
        else:
            free.insert(i, [addr, size])
        if i + 1 < len(free) and free[i][0] + free[i][1] == free[i + 1][0]:
            free[i][1] += free.pop(i + 1)[1]


class DeviceMemory:
    """One device's memory: pools in their own address windows and a shared capacity."""

    def __init__(self, device: int, profile: DeviceProfile) -> None:
        self.device = device
        self.capacity = profile.memory_bytes - profile.reserved_bytes
        self.used = 0
        self.used_by_pool = [0, 0, 0, 0, 0]
        self.peak = 0
        base = DEVICE_BASE + device * DEVICE_SPAN
        self.extents = {pool: _Extents(base + off, _POOL_SPAN)
                        for pool, off in _POOL_OFFSET.items()}

    @property
    def free_bytes(self) -> int:
        """Capacity not taken by live allocations."""
        return self.capacity - self.used

    def place(self, pool: int, accounted: int, align: int) -> int:
        """Reserve ``accounted`` bytes in ``pool``; raise MemoryError when full."""
        if accounted > self.capacity - self.used:
            raise MemoryError
        addr = self.extents[pool].take(accounted, align)
        self.used += accounted
        self.used_by_pool[pool] += accounted
        self.peak = max(self.peak, self.used)
        return addr

    def release(self, pool: int, addr: int, accounted: int) -> None:
        """Return a block to its pool."""
        self.extents[pool].give(addr, accounted)
        self.used -= accounted
        self.used_by_pool[pool] -= accounted


def _writable_view(addr: int, nbytes: int) -> np.ndarray:
    """A writable uint8 view of real memory ``[addr, addr+nbytes)`` that the caller owns."""
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    raw = (ctypes.c_char * nbytes).from_address(addr)
    return np.frombuffer(memoryview(raw).cast("B"), dtype=np.uint8)


class MemorySystem:
    """All regions of one session: device pools, pinned host blocks and pageable buffers."""

    #: Orphaned pageable buffers (only the registry still refers to them) kept alive, oldest
    #: dropped first. Real pyACL keeps nothing alive; samples rely on a temporary ``bytes``
    #: surviving one call (``bytes_to_ptr(arr.tobytes())``), so a few are kept.
    ORPHANS_KEPT = 64

    def __init__(self, profile: DeviceProfile, device_count: int) -> None:
        self.profile = profile
        self.devices = [DeviceMemory(d, profile) for d in range(device_count)]
        self.device_index = _Index()
        self.host_index = _Index()
        self.regions: list[Region] = []
        self.graveyard = _Index()
        self.pinned_used = 0
        self._pageable: OrderedDict[int, Region] = OrderedDict()
        self._host_display_next = HOST_DISPLAY_BASE

    # ----------------------------------------------------------------- allocation
    def _new_region(self, kind: int, device: int, addr: int, size: int, requested: int,
                    policy: int, pool: int, accounted: int, buf: np.ndarray,
                    call: int, ctx: int) -> Region:
        r = Region(len(self.regions), kind, device, addr, size, requested, policy, pool,
                   accounted, buf, call, ctx)
        self.regions.append(r)
        if kind in (HOST_PINNED, HOST_PAGEABLE):
            r.display_addr = self._host_display_next
            self._host_display_next += align_up(max(size, 1), 4096)
        return r

    def alloc_device(self, device: int, size: int, policy: int, call: int, ctx: int,
                     align32_only: bool = False, dvpp: bool = False) -> Region:
        """Allocate device (or DVPP) memory with aclrtMalloc's rounding and page policies.

        Raises:
            AclError: 100000 for size 0 or an overflowing size, 207001 when the device is
                full (or huge pages run out under HUGE_ONLY), 207000 for 1 GiB pages on a
                SoC without them.
        """
        if size <= 0 or size > MAX_ALLOC:
            raise AclError(100000, f"size {size} is invalid: it must be > 0"
                           + (" and not overflow the rounding" if size > 0 else ""))
        mem = self.devices[device]
        page_policy = policy & 0xFF
        if page_policy in (6, 7):
            if not self.profile.supports_huge1g:
                raise AclError(207000, f"1 GiB huge pages (policy {policy}) are not supported "
                                       f"on {self.profile.soc_name}")
            actual = align_up(size, 32)
        elif align32_only:
            actual = align_up(size, 32)
        else:
            actual = malloc_size(size)
        if dvpp:
            candidates = [(POOL_DVPP, actual, 64)]
        elif page_policy in (6, 7):
            candidates = [(POOL_HUGE1G, align_up(actual, HUGE1G_PAGE), HUGE1G_PAGE)]
        elif page_policy in (0, 3):
            huge = (POOL_HUGE, align_up(actual, HUGE_PAGE), HUGE_PAGE)
            normal = (POOL_NORMAL, actual, 64)
            candidates = [huge, normal] if size > HUGE_FIRST_THRESHOLD else [normal]
        elif page_policy in (1, 4):
            candidates = [(POOL_HUGE, align_up(actual, HUGE_PAGE), HUGE_PAGE)]
        elif page_policy in (2, 5):
            candidates = [(POOL_NORMAL, actual, 64)]
        else:  # out-of-range policy: huge pages from 2 MiB up (C-doc 11-01)
            candidates = ([(POOL_HUGE, align_up(actual, HUGE_PAGE), HUGE_PAGE)]
                          if size >= HUGE_PAGE else [(POOL_NORMAL, actual, 64)])
        for pool, accounted, align in candidates:
            try:
                addr = mem.place(pool, accounted, align)
            except MemoryError:
                continue
            try:
                buf = np.zeros(actual, dtype=np.uint8)  # calloc: pages appear when touched
            except MemoryError:
                mem.release(pool, addr, accounted)
                raise AclError(207001, f"the host running the emulator cannot back {actual} "
                                       "bytes of emulated device memory") from None
            kind = DVPP if dvpp else DEVICE
            r = self._new_region(kind, device, addr, actual, size, policy, pool, accounted,
                                 buf, call, ctx)
            self.device_index.add(r)
            return r
        raise AclError(207001, f"out of device memory: {size} bytes requested "
                               f"({candidates[0][1]} with rounding), {mem.free_bytes} bytes "
                               f"free of {mem.capacity} on device {device}")

    def alloc_pinned(self, size: int, call: int) -> Region:
        """Page-locked host memory from aclrtMallocHost: a real, 64-byte-aligned buffer."""
        if size <= 0 or size > MAX_ALLOC:
            raise AclError(100000, f"size {size} is invalid: it must be > 0")
        if self.pinned_used + size > self.profile.host_pinned_limit:
            raise AclError(207001, f"out of page-locked host memory: {size} bytes requested, "
                                   f"{self.profile.host_pinned_limit - self.pinned_used} left")
        try:
            raw = np.zeros(size + 64, dtype=np.uint8)
        except MemoryError:
            raise AclError(207001, f"the host cannot back {size} bytes of pinned memory") from None
        off = (-raw.ctypes.data) % 64
        buf = raw[off:off + size]
        addr = buf.ctypes.data
        self._check_host_addr(addr, size)
        r = self._new_region(HOST_PINNED, -1, addr, size, size, 0, POOL_HOST, size, buf,
                             call, -1)
        self.pinned_used += size
        self.host_index.add(r)
        return r

    def register_pageable(self, obj: Any, addr: int, nbytes: int, call: int) -> Region:
        """Make a numpy or bytes buffer reachable through its real address.

        The registry holds a reference so the memory stays valid; once only the registry
        refers to a buffer it is an orphan, and the oldest orphans beyond ``ORPHANS_KEPT``
        are dropped (a later use of their address is then a use after free).
        """
        old = self.host_index.find(addr) if nbytes else None
        if old is not None and old.kind == HOST_PAGEABLE and old.addr == addr \
                and old.size == nbytes and old.obj is obj:
            self._pageable.move_to_end(old.id)
            return old
        if old is not None and old.kind == HOST_PAGEABLE:
            self._drop_pageable(old)
        self._check_host_addr(addr, nbytes)
        buf = _writable_view(addr, nbytes)
        r = self._new_region(HOST_PAGEABLE, -1, addr, nbytes, nbytes, 0, POOL_HOST, 0, buf,
                             call, -1)
        r.obj = obj
        if nbytes:
            self.host_index.add(r)
        self._pageable[r.id] = r
        self._reclaim_orphans()
        return r

    def _check_host_addr(self, addr: int, nbytes: int) -> None:
        if addr < DEVICE_END and addr + nbytes > DEVICE_BASE:
            raise AclError(500000, f"host buffer at {addr:#x} lies in the emulated device "
                                   "address window; the emulator cannot tell them apart")

    def _drop_pageable(self, r: Region) -> None:
        r.live = False
        r.obj = None
        if r.size:
            self.host_index.remove(r)
            self.graveyard.add(r)
        self._pageable.pop(r.id, None)

    def _reclaim_orphans(self) -> None:
        if len(self._pageable) <= self.ORPHANS_KEPT:
            return
        # Two references: the registry's and getrefcount's own argument.
        orphans = [r for r in self._pageable.values() if sys.getrefcount(r.obj) <= 2]
        for r in orphans[: max(0, len(orphans) - self.ORPHANS_KEPT)]:
            self._drop_pageable(r)

    def free(self, r: Region) -> None:
        """Release a device, DVPP or pinned region (the caller checked the kind)."""
        r.live = False
        if r.kind in (DEVICE, DVPP):
            self.device_index.remove(r)
            self.devices[r.device].release(r.pool, r.addr, r.accounted)
        else:
            self.host_index.remove(r)
            if r.kind == HOST_PINNED:
                self.pinned_used -= r.size
        self.graveyard.add(r)
        r.buf = np.zeros(0, np.uint8)

    # ----------------------------------------------------------------- resolution
    @staticmethod
    def is_device_addr(addr: int) -> bool:
        """True if ``addr`` lies in the emulated device address window."""
        return DEVICE_BASE <= addr < DEVICE_END

    def find(self, addr: int) -> Region | None:
        """The live region containing ``addr``, or None."""
        if DEVICE_BASE <= addr < DEVICE_END:
            return self.device_index.find(addr)
        return self.host_index.find(addr)

    def find_freed(self, addr: int) -> Region | None:
        """The most recently freed region that contained ``addr``, or None."""
        idx = self.graveyard
        i = bisect_right(idx.starts, addr) - 1
        best: Region | None = None
        for j in range(i, max(-1, i - 32), -1):
            r = idx.regions[j]
            if r.addr <= addr < r.addr + r.size and (best is None or r.id > best.id):
                best = r
        return best

    def resolve(self, addr: int, nbytes: int, what: str, code: int = 107000) -> Region:
        """The live region holding all of ``[addr, addr+nbytes)``.

        Raises:
            AccessError: with ``reason`` "null", "unknown", "freed" or "out_of_bounds"
                (``overrun`` tells by how many bytes the range passes the region's end).
        """
        if addr == 0:
            raise AccessError(100000, f"{what} is a null pointer", "null")
        r = self.find(addr)
        if r is None:
            dead = self.find_freed(addr)
            if dead is not None:
                raise AccessError(code, f"{what} {addr:#x} points into "
                                        f"{KIND_NAMES[dead.kind]} allocation #{dead.id}, "
                                        "which was already freed", "freed", dead.id)
            raise AccessError(code, f"{what} {addr:#x} is not memory the emulator knows: "
                                    "use acl.rt.malloc / malloc_host or acl.util.bytes_to_ptr "
                                    "/ numpy_to_ptr to get pointers", "unknown")
        end = addr + nbytes
        if end > r.addr + r.size:
            over = end - (r.addr + r.size)
            raise AccessError(code, f"{what} range [{addr:#x}, +{nbytes}) runs {over} bytes "
                                    f"past the end of {KIND_NAMES[r.kind]} allocation #{r.id} "
                                    f"({r.size} bytes)", "out_of_bounds", r.id, over)
        return r

    # ----------------------------------------------------------------- bytes
    @staticmethod
    def read(r: Region, offset: int, nbytes: int) -> np.ndarray:
        """Copy ``nbytes`` bytes out of a region."""
        return r.buf[offset:offset + nbytes].copy()

    @staticmethod
    def write(r: Region, offset: int, data: bytes) -> None:
        """Write bytes into a region and mark them initialised."""
        n = len(data)
        r.buf.data[offset:offset + n] = data
        if r.written is not None:
            r.mark_written(offset, offset + n)

    @staticmethod
    def fill(r: Region, offset: int, value: int, nbytes: int) -> None:
        """memset: write the low 8 bits of ``value`` into every byte (RT2 drvMemsetD8)."""
        r.buf[offset:offset + nbytes] = value & 0xFF
        r.mark_written(offset, offset + nbytes)

    def live_regions(self) -> list[Region]:
        """Every live device, DVPP and pinned region (not pageable buffers)."""
        return [r for r in self.regions if r.live and r.kind != HOST_PAGEABLE]
