"""Emulated memory: device address spaces, pinned and pageable host memory, byte storage.

Every byte a program can reach through the emulator lives in a ``Region``: a device
allocation, a DVPP allocation, a ``malloc_host`` block or a pageable host buffer that
``acl.util`` handed out. Every access resolves an address range to exactly one live region
(bisect over sorted start addresses), so out-of-bounds access, use after free and foreign
pointers are caught, and nothing outside a region is ever read or written.

Device addresses are virtual (realistic-looking, deterministic); host addresses are the real
addresses of numpy/bytes buffers, so their alignment is real. This module knows nothing of
streams, time or the trace.

Host memory the emulator did not hand out (``arr.ctypes.data``, an ``mmap``'s address, a
ctypes buffer) is *raw* host memory: real ACL accepts any valid host address, so the emulator
does too, but only after the kernel shows the whole range mapped with the permission the
access needs (``r`` to read, ``w`` to write): a page-by-page probe first, ``/proc/self/maps``
to explain a refusal. Every region knows whether the program may
write it: a ``bytes`` object never (it is immutable and may be shared, e.g. an interned
``b"A"``), a numpy array only while its ``writeable`` flag is set and its pages are writable,
raw memory only where its pages are. A write into anything else is refused before a byte moves.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import sys
import weakref
from bisect import bisect_left, bisect_right
from collections import OrderedDict, deque
from typing import Any

import numpy as np

from ..constants import ErrorCode
from .errors import AccessError, AclError
from .kinds import AllocKind, Pool
from .profiles import DeviceProfile, GiB, MiB

# Short names for the region kinds and pools (``kinds.AllocKind``, ``kinds.Pool``): every
# region, resolution and copy check compares against them, and a module constant costs a
# tenth of an enum member's read.
# Typed ``int``: a region's kind and pool are the trace's plain ints.
DEVICE: int = AllocKind.DEVICE
HOST_PINNED: int = AllocKind.HOST_PINNED
DVPP: int = AllocKind.DVPP
HOST_PAGEABLE: int = AllocKind.HOST_PAGEABLE
KIND_NAMES = AllocKind.labels()
POOL_NORMAL: int = Pool.NORMAL
POOL_HUGE: int = Pool.HUGE
POOL_HUGE1G: int = Pool.HUGE1G
POOL_DVPP: int = Pool.DVPP
POOL_HOST: int = Pool.HOST

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

#: size_t on the 64-bit targets: sizes reach the C API modulo 2**64.
SIZE_MAX = (1 << 64) - 1
#: aclrtMalloc / MallocCached add 32 (alignment) + 32 (padding) before rounding down to 32;
#: MallocAlign32 and 1 GiB pages add only the 32 (RT-impl ``memory.cpp``
#: ``GetAlignedAndPaddingSize``: ``size + appendSize < size`` is the overflow check).
APPEND_PADDED = 64
APPEND_ALIGN32 = 32


def size_t(value: int) -> int:
    """``value`` as the C code sees a ``size_t``: modulo 2**64 (-1 is 2**64-1)."""
    return value & SIZE_MAX


def rounding_overflows(size: int, append: int) -> bool:
    """True when ``size + append`` wraps a size_t: the only size aclrtMalloc calls a
    parameter error besides 0 (RT-impl ``memory.cpp`` ``GetAlignedAndPaddingSize``)."""
    return size + append > SIZE_MAX


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

    __slots__ = ("accounted", "addr", "alloc_call", "backing", "buf", "ctx", "device",
                 "display_addr", "id", "kind", "live", "mv", "obj", "policy", "pool", "raw",
                 "read_only", "requested", "size", "written")

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
        #: a flat memoryview of ``buf`` (``MemorySystem.view`` makes it on first use)
        self.mv: memoryview | None = None
        self.alloc_call = alloc_call
        self.ctx = ctx
        self.live = True
        self.obj: Any = None
        self.display_addr = addr
        #: Why the program may not write this region ("" = it may): see ``MemorySystem``.
        self.read_only = ""
        #: Raw host memory found through /proc/self/maps (no index entry, id -1).
        self.raw = False
        #: Pinned blocks: a weak reference to the array that owns the bytes. While it is
        #: alive nobody else can have the address, so a use of it is exactly a use after free.
        self.backing: Any = None
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
        elif w[-1][0] <= start and end <= w[-1][1]:
            return  # already written (a buffer written again): nothing changes
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


def first_unwritten(written: list[list[int]], start: int) -> int:
    """The first offset at or after ``start`` outside the sorted, merged ``written``
    ranges (a region's shadow): where a read of never-written bytes begins."""
    for lo, hi in written:
        if lo > start:
            break
        if hi > start:
            start = hi
    return start


#: Freed regions the graveyard keeps per start address: ``find_freed`` looks at this many
#: regions before an address, so older ones of the same start could never be found (a
#: malloc/free loop reuses one address: without the cap the graveyard grew with every pair).
FREED_PER_START = 32


class _Index:
    """Sorted start addresses -> regions, for O(log n) address resolution.

    ``at`` maps a start address to the region ``find`` gives for it (the newest region that
    starts there), so the usual pointer, the start of an allocation, resolves with one dict
    lookup instead of a bisect. Indexes of disjoint address ranges may share one ``at``
    (``MemorySystem.starts_at``: device and host addresses never meet).
    """

    __slots__ = ("at", "regions", "starts")

    def __init__(self, at: dict[int, Region] | None = None) -> None:
        self.starts: list[int] = []
        self.regions: list[Region] = []
        self.at: dict[int, Region] = {} if at is None else at

    def add(self, r: Region, per_start: int = 0) -> None:
        """Index ``r`` (after the regions that start where it starts). With ``per_start``
        (the graveyard, which ``find_freed`` only bisects) the oldest regions of that start
        beyond ``per_start`` leave the index, and ``at`` is not kept."""
        i = bisect_right(self.starts, r.addr)
        self.starts.insert(i, r.addr)
        self.regions.insert(i, r)
        if not per_start:
            self.at[r.addr] = r
            return
        first = bisect_left(self.starts, r.addr)
        if i + 1 - first > per_start:
            del self.starts[first]
            del self.regions[first]

    def remove(self, r: Region) -> None:
        i = bisect_right(self.starts, r.addr) - 1
        while i >= 0 and self.starts[i] == r.addr:
            if self.regions[i] is r:
                del self.starts[i]
                del self.regions[i]
                if self.at.get(r.addr) is r:
                    # the newest other region that starts here, if any, is found now
                    if i and self.starts[i - 1] == r.addr:
                        self.at[r.addr] = self.regions[i - 1]
                    else:
                        del self.at[r.addr]
                return
            i -= 1
        raise KeyError(r.addr)

    def find(self, addr: int) -> Region | None:
        """The region holding ``addr``: the start of one from ``at``, else ``below``."""
        r = self.at.get(addr)
        if r is not None:
            return r if r.size else None
        return self.below(addr)

    def below(self, addr: int) -> Region | None:
        """The region holding ``addr`` found by bisecting the sorted starts (the newest of
        those that start last at or before it)."""
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


#: The bytes of a freed region: none (one shared, read-only empty array).
_NO_BYTES = np.zeros(0, np.uint8)
_NO_BYTES.flags.writeable = False


def _writable_view(addr: int, nbytes: int) -> np.ndarray:
    """A writable uint8 view of real memory ``[addr, addr+nbytes)`` that the caller owns."""
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    raw = (ctypes.c_char * nbytes).from_address(addr)
    return np.frombuffer(memoryview(raw).cast("B"), dtype=np.uint8)


def _raw_host(addr: int, nbytes: int, read_only: str) -> Region:
    """An unindexed region over raw host memory ``[addr, addr+nbytes)`` the caller checked
    readable; ``read_only`` says why the program may not write it ("" when it may)."""
    r = Region(-1, HOST_PAGEABLE, -1, addr, nbytes, nbytes, 0, POOL_HOST, 0,
               _writable_view(addr, nbytes), -1)
    r.raw = True
    r.read_only = read_only
    return r


# --------------------------------------------------------------------- host pages

#: Where Linux lists the process's mappings: ``start-end perms offset dev inode path``.
_MAPS = "/proc/self/maps"
_MAPS_LINE = re.compile(rb"([0-9a-f]+)-([0-9a-f]+) ([-rwxps]{4})")


def host_mappings() -> list[bytes]:
    """The lines of this process's memory map (``start-end perms ...``), read afresh.

    Mappings change whenever Python or a library maps or unmaps memory, so the map is read
    for each check of raw host memory (never cached: a stale "mapped" would let a copy fault).
    Linux lists the mappings sorted by address; only the lines a check needs are parsed. An
    unreadable map (not Linux) gives no lines: raw memory is then refused.
    """
    try:
        with open(_MAPS, "rb") as f:
            return f.read().splitlines()
    except OSError:
        return []


def _map_start(line: bytes) -> int:
    return int(line[:line.index(b"-")], 16)


class _IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_PAGE = 4096
#: iovecs per process_vm_readv call (Linux's UIO_MAXIOV)
_IOV_MAX = 1024


def _load_vm_calls() -> tuple[Any, Any] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        calls = libc.process_vm_readv, libc.process_vm_writev
    except (OSError, AttributeError):
        return None
    for fn in calls:
        fn.restype = ctypes.c_ssize_t
        fn.argtypes = (ctypes.c_int, ctypes.POINTER(_IOVec), ctypes.c_ulong,
                       ctypes.POINTER(_IOVec), ctypes.c_ulong, ctypes.c_ulong)
    return calls


_VM_CALLS = _load_vm_calls() if sys.platform.startswith("linux") else None
#: Whether ``host_range_problem`` may ask the kernel page by page (``process_vm_readv`` /
#: ``process_vm_writev`` on this process, which honour the pages' protections and fail with
#: EFAULT on an unmapped or forbidden page) before it reads the whole memory map. Off where
#: ``host_mappings`` is replaced (the transport's server sees only its shadow pages).
page_probe = _VM_CALLS is not None


def _probe_pages(addr: int, nbytes: int, write: bool) -> bool | None:
    """True when every page of ``[addr, addr+nbytes)`` allows the access, False when one does
    not, None when the kernel cannot tell (no such syscall, or a seccomp filter refuses it).

    One byte per page is read; for ``write`` it is written back unchanged with
    ``process_vm_writev``, which fails on a read-only page instead of forcing it (unlike
    ``/proc/self/mem``). A probe is a few microseconds; reading the map is hundreds.
    """
    assert _VM_CALLS is not None
    calls = _VM_CALLS if write else _VM_CALLS[:1]  # the write goes back after the read
    end = addr + max(nbytes, 1)
    starts = [addr, *range((addr // _PAGE + 1) * _PAGE, end, _PAGE)]
    pid = os.getpid()  # each call: a forked child must probe itself, not its parent
    for i in range(0, len(starts), _IOV_MAX):
        chunk = starts[i:i + _IOV_MAX]
        n = len(chunk)
        scratch = ctypes.create_string_buffer(n)
        local = (_IOVec * 1)(_IOVec(ctypes.addressof(scratch), n))
        remote = (_IOVec * n)(*(_IOVec(a, 1) for a in chunk))
        for call in calls:
            got = call(pid, local, 1, remote, n, 0)
            if got != n:
                if got < 0 and ctypes.get_errno() not in _REFUSED:
                    return None  # the syscall itself is unavailable here
                return False
    return True


#: the errnos of a page the access may not touch (any other: the probe cannot tell)
_REFUSED = (errno.EFAULT, errno.ENOMEM)
#: ranges up to this size are probed (16384 pages); a larger one reads the map once instead
_PROBE_MAX_BYTES = 64 * MiB


def host_range_problem(addr: int, nbytes: int, write: bool,
                       maps: list[bytes] | None = None) -> str:
    """Why ``[addr, addr+nbytes)`` cannot be read (or written), or "" when it can.

    The range must be covered, without a gap, by mappings that allow the access (``r`` to
    read, ``w`` as well to write). ``nbytes`` 0 checks the byte at ``addr``. Without a
    ``maps`` snapshot the kernel is asked page by page first (``_probe_pages``); the memory
    map is read only to explain a refusal, or where the probe is unavailable.
    """
    if maps is None and page_probe and addr > 0 and nbytes <= _PROBE_MAX_BYTES and \
            addr + max(nbytes, 1) <= 1 << 64:
        ok = _probe_pages(addr, nbytes, write)
        if ok:
            return ""
    table = host_mappings() if maps is None else maps
    end = addr + max(nbytes, 1)
    i = bisect_right(table, addr, key=_map_start) - 1
    at = addr
    while at < end:
        m = _MAPS_LINE.match(table[i]) if 0 <= i < len(table) else None
        lo, hi = (int(m.group(1), 16), int(m.group(2), 16)) if m else (0, 0)
        if not lo <= at < hi:
            if at == addr:
                return f"{addr:#x} is not mapped in this process"
            return (f"the range [{addr:#x}, +{nbytes}) runs past mapped memory at {at:#x} "
                    f"({at - addr} bytes in)")
        assert m is not None
        perms = m.group(3).decode("ascii")
        if perms[:1] != "r":
            return f"the pages at {at:#x} cannot be read (mapped {perms})"
        if write and perms[1:2] != "w":
            return (f"the pages at {at:#x} are read-only (mapped {perms}): a copy there "
                    "would crash the program")
        at = hi
        i += 1
    return ""


def _buffer_root(arr: np.ndarray) -> Any:
    """The object at the end of an array's ``base`` chain (the array itself if it owns)."""
    b: Any = arr
    while isinstance(b, np.ndarray) and b.base is not None:
        b = b.base
    return b


def array_read_only(arr: np.ndarray, addr: int, nbytes: int) -> str:
    """Why the program may not write ``arr``'s bytes, or "" when it may.

    numpy's ``writeable`` flag is cleared for read-only buffers (``np.memmap(mode="r")``,
    ``np.frombuffer(bytes)``); an array over foreign memory keeps the flag, so its pages are
    checked as well (a ctypes view of a read-only mapping, for instance).
    """
    if not arr.flags.writeable:
        return ("a read-only numpy array (writeable=False, as for np.memmap(mode='r') or "
                "np.frombuffer of bytes)")
    root = _buffer_root(arr)
    if (isinstance(root, np.ndarray) and root.flags.owndata) or isinstance(root, bytearray):
        return ""  # numpy's or Python's own heap memory
    if nbytes:
        why = host_range_problem(addr, nbytes, True)
        if why:
            return "an array over read-only memory: " + why
    return ""


class _Released:
    """Pinned blocks any session released, while the array owning their bytes lives.

    Host addresses belong to the process, not to one session: a pointer from a finished
    session's malloc_host still points into freed pinned memory for the next one. An entry
    lasts only as long as its owning array (then the address may be reused and is ordinary
    memory again), so it can never call a live buffer freed.
    """

    __slots__ = ("blocks",)

    def __init__(self) -> None:
        self.blocks: dict[int, tuple[int, Any]] = {}

    def add(self, addr: int, size: int, backing: Any) -> None:
        """Remember a released block whose bytes ``backing`` (a weak reference) owns."""
        self.blocks[addr] = (size, backing)

    def find(self, addr: int) -> int | None:
        """The start of a released block holding ``addr`` whose bytes are still owned."""
        dead = []
        hit = None
        for start, (size, ref) in self.blocks.items():
            if ref() is None:
                dead.append(start)
            elif start <= addr < start + size:
                hit = start
        for start in dead:
            del self.blocks[start]
        return hit


#: Process-wide, because host addresses are (see ``_Released``).
RELEASED_PINNED = _Released()

#: A reference count this high marks an immortal or statically allocated object (CPython
#: gives those a count near 2**30 or more), which the whole process shares.
_IMMORTAL_REFS = 1 << 29
#: Offset of a bytes object's data from its start (CPython: the header, then ``ob_sval``).
_BYTES_DATA_OFFSET = sys.getsizeof(b"") - 1


def _bytes_hashed(obj: bytes, addr: int) -> bool:
    """True if CPython has cached the hash of ``obj`` (it was a dict key, a set member or a
    constant the compiler deduplicated): then something else may rely on its value.

    CPython's ``PyBytesObject`` keeps the cached hash (-1 = none yet) in ``ob_shash``, the
    field just before the data. Read only where that layout is known to hold.
    """
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 14) \
            or addr != id(obj) + _BYTES_DATA_OFFSET or _BYTES_DATA_OFFSET < 8:
        return False
    return ctypes.c_ssize_t.from_address(addr - 8).value != -1


def bytes_shared(obj: bytes, addr: int) -> bool:
    """Whether Python shares the bytes object ``obj`` (data at ``addr``) beyond the program:
    a cached one-byte or empty object, an immortal one, or one that has been hashed (see
    ``MemorySystem.may_write``); writing into it would change every use of it."""
    return len(obj) <= 1 or sys.getrefcount(obj) >= _IMMORTAL_REFS or _bytes_hashed(obj, addr)


class MemorySystem:
    """All regions of one session: device pools, pinned host blocks and pageable buffers."""

    #: Orphaned pageable buffers (only the registry still refers to them) kept alive, oldest
    #: dropped first. Real pyACL keeps nothing alive; samples rely on a temporary ``bytes``
    #: surviving one call (``bytes_to_ptr(arr.tobytes())``), so a few are kept.
    ORPHANS_KEPT = 64
    #: Freed pinned blocks whose bytes stay owned for a while (newest first out last), so
    #: nothing else can be given their address and a stale pointer is a certain use after
    #: free; at most this many blocks and ``QUARANTINE_BYTES`` (the newest is always kept).
    QUARANTINE_BLOCKS = 16
    QUARANTINE_BYTES = 64 * MiB

    def __init__(self, profile: DeviceProfile, device_count: int) -> None:
        self.profile = profile
        self.devices = [DeviceMemory(d, profile) for d in range(device_count)]
        #: start address -> the live region ``find`` gives for it, device and host alike (the
        #: two address ranges are disjoint: ``_check_host_addr``): one lookup for the usual
        #: pointer, before choosing an index
        self.starts_at: dict[int, Region] = {}
        self.device_index = _Index(self.starts_at)
        self.host_index = _Index(self.starts_at)
        #: regions made so far (the next region's id)
        self.region_count = 0
        #: live regions by id (in id order); a freed or dropped one leaves, so a long
        #: malloc/free loop holds only what is live (and what the graveyard keeps)
        self.live: dict[int, Region] = {}
        #: freed regions, at most ``FREED_PER_START`` per start address, bisected by
        #: ``find_freed`` (so it keeps no start map: ``_Index.add``)
        self.graveyard = _Index()
        self.pinned_used = 0
        self._pageable: OrderedDict[int, Region] = OrderedDict()
        self._host_display_next = HOST_DISPLAY_BASE
        self._quarantine: deque[np.ndarray] = deque()
        self._quarantine_bytes = 0

    # ----------------------------------------------------------------- allocation
    def _new_region(self, kind: int, device: int, addr: int, size: int, requested: int,
                    policy: int, pool: int, accounted: int, buf: np.ndarray,
                    call: int, ctx: int) -> Region:
        r = Region(self.region_count, kind, device, addr, size, requested, policy, pool,
                   accounted, buf, call, ctx)
        self.region_count += 1
        self.live[r.id] = r
        if kind in (HOST_PINNED, HOST_PAGEABLE):
            r.display_addr = self._host_display_next
            self._host_display_next += align_up(max(size, 1), 4096)
        return r

    def alloc_device(self, device: int, size: int, policy: int, call: int, ctx: int,
                     align32_only: bool = False, dvpp: bool = False) -> Region:
        """Allocate device (or DVPP) memory with aclrtMalloc's rounding and page policies.

        ``size`` is a size_t (taken modulo 2**64, as the C API receives it). Only 0 and a size
        whose rounding overflows size_t are parameter errors; any other size is tried and
        fails with out of memory when the device cannot hold it (RT-impl ``memory.cpp``
        ``aclMallocMemInner``: ``ACL_REQUIRES_POSITIVE``, ``GetAlignedAndPaddingSize``, then
        ``rtMalloc``, whose driver out-of-memory maps to 207001 in ``errcode_manage.cc``).

        Raises:
            AclError: 100000 for size 0 or an overflowing size, 207001 when the device is
                full (or huge pages run out under HUGE_ONLY), 207000 for 1 GiB pages on a
                SoC without them.
        """
        size = size_t(size)
        page_policy = policy & 0xFF
        padded = not (align32_only or page_policy in (6, 7))
        if size == 0:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "size 0 is invalid: it must be > 0")
        if rounding_overflows(size, APPEND_PADDED if padded else APPEND_ALIGN32):
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"size {size} is invalid: rounding it up to a multiple "
                           "of 32 (plus padding) overflows size_t")
        mem = self.devices[device]
        if page_policy in (6, 7):
            if not self.profile.supports_huge1g:
                raise AclError(ErrorCode.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                               f"1 GiB huge pages (policy {policy}) are not supported "
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
                raise AclError(ErrorCode.ACL_ERROR_RT_MEMORY_ALLOCATION,
                               f"the host running the emulator cannot back {actual} "
                               "bytes of emulated device memory") from None
            kind = DVPP if dvpp else DEVICE
            r = self._new_region(kind, device, addr, actual, size, policy, pool, accounted,
                                 buf, call, ctx)
            self.device_index.add(r)
            return r
        raise AclError(ErrorCode.ACL_ERROR_RT_MEMORY_ALLOCATION,
                       f"out of device memory: {size} bytes requested "
                       f"({candidates[0][1]} with rounding), {mem.free_bytes} bytes "
                       f"free of {mem.capacity} on device {device}")

    def alloc_pinned(self, size: int, call: int) -> Region:
        """Page-locked host memory from aclrtMallocHost: a real, 64-byte-aligned buffer.

        ``size`` is a size_t: only 0 is a parameter error; anything larger than the pinned
        limit is out of memory (RT-impl ``memory.cpp`` ``aclrtMallocHostImpl`` checks
        ``ACL_REQUIRES_POSITIVE`` and passes the rest to ``rtMallocHost``).
        """
        size = size_t(size)
        if size == 0:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "size 0 is invalid: it must be > 0")
        if self.pinned_used + size > self.profile.host_pinned_limit:
            raise AclError(ErrorCode.ACL_ERROR_RT_MEMORY_ALLOCATION,
                           f"out of page-locked host memory: {size} bytes requested, "
                           f"{self.profile.host_pinned_limit - self.pinned_used} left")
        try:
            raw = np.zeros(size + 64, dtype=np.uint8)
        except MemoryError:
            raise AclError(ErrorCode.ACL_ERROR_RT_MEMORY_ALLOCATION,
                           f"the host cannot back {size} bytes of pinned memory") from None
        off = (-raw.ctypes.data) % 64
        buf = raw[off:off + size]
        addr = buf.ctypes.data
        self._check_host_addr(addr, size)
        r = self._new_region(HOST_PINNED, -1, addr, size, size, 0, POOL_HOST, size, buf,
                             call, -1)
        r.backing = weakref.ref(raw)
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
        read_only = array_read_only(obj, addr, nbytes) if isinstance(obj, np.ndarray) else ""
        buf = _writable_view(addr, nbytes)
        r = self._new_region(HOST_PAGEABLE, -1, addr, nbytes, nbytes, 0, POOL_HOST, 0, buf,
                             call, -1)
        r.obj = obj
        r.read_only = read_only
        if nbytes:
            self.host_index.add(r)
        self._pageable[r.id] = r
        self._reclaim_orphans()
        return r

    def _check_host_addr(self, addr: int, nbytes: int) -> None:
        if addr < DEVICE_END and addr + nbytes > DEVICE_BASE:
            raise AclError(ErrorCode.ACL_ERROR_INTERNAL_ERROR,
                           f"host buffer at {addr:#x} lies in the emulated device "
                           "address window; the emulator cannot tell them apart")

    def _drop_pageable(self, r: Region) -> None:
        # Python frees the buffer and may reuse the address at once, so it does not go to the
        # graveyard: a later use of the address is raw host memory, as it is on hardware.
        r.live = False
        r.obj = None
        if r.size:
            self.host_index.remove(r)
        self._pageable.pop(r.id, None)
        self.live.pop(r.id, None)

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
                self._release_pinned(r)
        self.live.pop(r.id, None)
        self.graveyard.add(r, FREED_PER_START)
        r.buf = _NO_BYTES
        r.mv = None

    def _release_pinned(self, r: Region) -> None:
        """Keep a freed pinned block's bytes owned for a while (see QUARANTINE_BLOCKS)."""
        raw = r.backing() if r.backing is not None else None
        if raw is None:
            return
        RELEASED_PINNED.add(r.addr, r.size, r.backing)
        q = self._quarantine
        q.append(raw)
        self._quarantine_bytes += raw.nbytes
        while len(q) > 1 and (len(q) > self.QUARANTINE_BLOCKS
                              or self._quarantine_bytes > self.QUARANTINE_BYTES):
            self._quarantine_bytes -= q.popleft().nbytes

    # ----------------------------------------------------------------- resolution
    @staticmethod
    def is_device_addr(addr: int) -> bool:
        """True if ``addr`` lies in the emulated device address window."""
        return DEVICE_BASE <= addr < DEVICE_END

    def find(self, addr: int) -> Region | None:
        """The live region containing ``addr``, or None."""
        r = self.starts_at.get(addr)  # the start of an allocation: no bisect (see ``_Index``)
        if r is not None:
            return r if r.size else None
        idx = self.device_index if DEVICE_BASE <= addr < DEVICE_END else self.host_index
        return idx.find(addr)

    def find_freed(self, addr: int) -> Region | None:
        """The most recently freed region that contained ``addr``, or None.

        A freed host block counts only while its bytes are still owned (quarantined, or
        held by someone): after that Python may have given the address to a new buffer.
        """
        idx = self.graveyard
        i = bisect_right(idx.starts, addr) - 1
        best: Region | None = None
        for j in range(i, max(-1, i - FREED_PER_START), -1):
            r = idx.regions[j]
            if r.addr <= addr < r.addr + r.size and (best is None or r.id > best.id):
                if r.kind in (HOST_PINNED, HOST_PAGEABLE) and (
                        r.backing is None or r.backing() is None):
                    continue
                best = r
        return best

    def resolve(self, addr: int, nbytes: int, what: str,
                code: int = ErrorCode.ACL_ERROR_RT_PARAM_INVALID) -> Region:
        """The live region holding all of ``[addr, addr+nbytes)``.

        Raises:
            AccessError: a null pointer, an address no allocation holds, one that was
                freed, or a range that runs past its allocation's end.
        """
        if addr == 0:
            raise AccessError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                              f"{what} is a null pointer")
        r = self.find(addr)
        if r is None:
            dead = self.find_freed(addr)
            if dead is not None:
                raise AccessError(code, f"{what} {addr:#x} points into "
                                        f"{KIND_NAMES[dead.kind]} allocation #{dead.id}, "
                                        "which was already freed")
            if self.is_device_addr(addr):
                raise AccessError(code, f"{what} {addr:#x} is not memory the emulator knows: "
                                        "use acl.rt.malloc / malloc_host or "
                                        "acl.util.bytes_to_ptr / numpy_to_ptr to get "
                                        "pointers")
            return self.raw_region(addr, nbytes, what, code)
        end = addr + nbytes
        if end > r.addr + r.size:
            over = end - (r.addr + r.size)
            raise AccessError(code, f"{what} range [{addr:#x}, +{nbytes}) runs {over} bytes "
                                    f"past the end of {KIND_NAMES[r.kind]} allocation #{r.id} "
                                    f"({r.size} bytes)")
        return r

    def raw_region(self, addr: int, nbytes: int, what: str,
                   code: int = ErrorCode.ACL_ERROR_RT_PARAM_INVALID) -> Region:
        """A region for raw host memory ``[addr, addr+nbytes)`` that is mapped readable.

        Real ACL accepts any valid host address; an invalid one fails inside the driver
        (``drvMemcpy``, closed source), whose invalid-value error the runtime maps to 107000
        (``errcode_manage.cc``: DRV_ERROR_INVALID_VALUE -> RT_ERROR_DRV_INPUT ->
        ACL_ERROR_RT_PARAM_INVALID). The region is not indexed: mappings change, so every
        use resolves (and checks) the range again. ``read_only`` says whether it is writable.

        Raises:
            AccessError: ``code`` for a released pinned block whose bytes are still
                owned, or a range that is not mapped.
        """
        start = RELEASED_PINNED.find(addr)
        if start is not None:
            raise AccessError(code, f"{what} {addr:#x} points into pinned host memory that "
                                    "was freed (acl.rt.free_host, or the end of the session "
                                    "that allocated it)")
        if nbytes == 0:  # the byte at addr must be readable; nothing is written
            no_write, why = "", host_range_problem(addr, 0, False)
        else:
            # the write check first: a range that may be written may be read (writing
            # needs ``r`` and ``w``), so a writable buffer costs one check, not two
            no_write = host_range_problem(addr, nbytes, True)
            why = host_range_problem(addr, nbytes, False) if no_write else ""
        if why:
            raise AccessError(code, f"{what}: {why}; real ACL accepts any valid host "
                                    "address, but this one is not")
        return _raw_host(addr, nbytes, f"raw host memory whose "
                                       f"{no_write.partition('the ')[2]}" if no_write else "")

    def host_overread(self, r: Region, addr: int, nbytes: int, what: str) -> Region:
        """A read of ``[addr, addr+nbytes)`` that starts in the host buffer ``r`` (one
        ``acl.util`` handed out) and runs past its end: the region to copy from.

        Real ACL does not know how large a host buffer is: the copy is the driver's
        (``drvMemcpy``, closed source) and reads whatever bytes follow the buffer, or the
        process dies if they are not mapped. The emulator copies the same bytes when
        the kernel shows the whole range mapped readable (``host_range_problem``; a raw
        region over it, never writable),
        and otherwise refuses with the raw-address rule's code (``raw_region``: 107000).
        Only reads: a write past a host buffer is never done (see ``copies.copy_checks``).

        Raises:
            AccessError: ``107000`` when part of the range is not mapped readable.
        """
        over = addr + nbytes - r.end
        why = host_range_problem(addr, nbytes, False)
        if why:
            raise AccessError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                              f"{what} range [{addr:#x}, +{nbytes}) runs {over} bytes "
                              f"past the end of {KIND_NAMES[r.kind]} allocation "
                              f"#{r.id} ({r.size} bytes), and the bytes that follow "
                              f"are not readable ({why}): on a card the copy fails "
                              "in the driver or the process crashes")
        return _raw_host(addr, nbytes,
                         "raw host memory past the end of a host buffer (read only here)")

    @staticmethod
    def may_write(r: Region) -> str:
        """Why the program may not write ``r`` now, or "" when it may.

        A ``bytes`` object the program made for itself is writable (``out = bytes(n)``, the
        pattern of the public samples, which copy device data into it and read it with
        ``np.frombuffer``; names the program gives it are its own business, as for an
        array). A bytes Python shares beyond the program is not: CPython's cached one-byte
        and empty objects (``b"A"``, ``bytes(1)``, ``b""``), immortal objects, and hashed ones
        (a dict key, or a constant the compiler deduplicated, such as ``b"\\0" * 64``
        written in a program's source); writing into it would change every use of it in the
        process. (A constant of a module loaded from a ``.pyc`` that nothing hashed looks
        like the program's own: that case is not caught.)
        """
        if r.read_only:
            return r.read_only
        obj = r.obj
        if isinstance(obj, np.ndarray):
            if not obj.flags.writeable:
                return ("a read-only numpy array (writeable=False, as for np.memmap(mode='r') "
                        "or np.frombuffer of bytes)")
        elif isinstance(obj, bytes) and bytes_shared(obj, r.addr):
            return ("a bytes object Python shares beyond the program (a cached one-byte "
                    "or empty object such as b\"A\", or one that has been hashed: a "
                    "constant of the code or a dict key): bytes are immutable, so a write "
                    "would change every use of it in the process")
        return ""

    @staticmethod
    def still_mapped(r: Region, write: bool) -> str:
        """For raw memory: why its range can no longer be accessed, or "" (check again
        right before a task touches it: the program may have unmapped it since)."""
        if not r.raw or not r.size:
            return ""
        return host_range_problem(r.addr, r.size, write)

    # ----------------------------------------------------------------- bytes
    @staticmethod
    def read(r: Region, offset: int, nbytes: int) -> np.ndarray:
        """Copy ``nbytes`` bytes out of a region."""
        return r.buf[offset:offset + nbytes].copy()

    @staticmethod
    def view(r: Region) -> memoryview:
        """``r``'s bytes as a flat memoryview, made on first use and kept (``Region.mv``):
        a slice of it reads or writes at a third of the cost of one of the array."""
        mv = r.mv
        if mv is None:
            mv = r.mv = r.buf.data.cast("B")
        return mv

    @classmethod
    def write(cls, r: Region, offset: int, data: bytes) -> None:
        """Write bytes into a region and mark them initialised.

        Raises:
            AccessError: 107000 "read_only" if the program may not write the region (the
                last guard: callers refuse such writes before queueing them).
        """
        if r.read_only or r.obj is not None:  # only these can be refused (``may_write``)
            cls._guard_write(r)
        n = len(data)
        cls.view(r)[offset:offset + n] = data
        if r.written is not None:
            r.mark_written(offset, offset + n)

    @classmethod
    def fill(cls, r: Region, offset: int, value: int, nbytes: int) -> None:
        """memset: write the low 8 bits of ``value`` into every byte (RT2 drvMemsetD8).

        Raises:
            AccessError: 107000 "read_only", as ``write``.
        """
        cls._guard_write(r)
        r.buf[offset:offset + nbytes] = value & 0xFF
        r.mark_written(offset, offset + nbytes)

    @classmethod
    def _guard_write(cls, r: Region) -> None:
        # Raw pages were checked when the call resolved them, and again when a queued task
        # started (scheduler.effect_start): no third read of the memory map here.
        why = cls.may_write(r)
        if why:
            raise AccessError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                              f"refused to write into {why}")

    def live_regions(self) -> list[Region]:
        """Every live device, DVPP and pinned region (not pageable buffers)."""
        return [r for r in self.live.values() if r.kind != HOST_PAGEABLE]
