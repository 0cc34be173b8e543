"""Host memory at the same address in two processes: the pipe transport's shadows and mirrors.

The emulator works with real host addresses (``arr.ctypes.data``, ``malloc_host`` blocks), so
over the pipe an address must mean the same bytes on both sides. ``Pages`` maps anonymous
pages at a *given* address with ``mmap(MAP_FIXED_NOREPLACE)``, which never replaces an
existing mapping: where the address is taken the map fails and nothing is touched. The
server keeps *shadows* of the learner's host ranges at their addresses; the client keeps
*mirrors* of the emulator's pinned blocks at theirs.

``Pages.maps_lines`` gives the shadow pages in ``/proc/self/maps`` form: the server makes them
the only raw host memory its emulator may touch (``acl_lab.runtime.memory.host_mappings``),
so an address the learner makes up can never reach the server's own memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import threading

PAGE = mmap.PAGESIZE
#: Linux's MAP_FIXED_NOREPLACE (since 4.17; older kernels ignore it and map elsewhere,
#: which ``map_fixed`` detects and undoes).
MAP_FIXED_NOREPLACE = 0x100000
_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FAILED = ctypes.c_void_p(-1).value

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.munmap.restype = ctypes.c_int


def page_span(addr: int, nbytes: int) -> tuple[int, int]:
    """The first page address and the byte length of the pages holding the range."""
    lo = addr - addr % PAGE
    hi = addr + max(nbytes, 1)
    hi += (-hi) % PAGE
    return lo, hi - lo


def map_fixed(addr: int, length: int) -> bool:
    """Map ``length`` bytes of zeroed read-write pages exactly at ``addr`` (page-aligned);
    False when any page there is already mapped (nothing changes then)."""
    if addr <= 0 or length <= 0 or addr % PAGE or length % PAGE or addr + length >= 1 << 47:
        return False
    got = _libc.mmap(ctypes.c_void_p(addr), length, _PROT_RW,
                     mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
    if got is None or got == _MAP_FAILED:
        return False
    if got != addr:  # a kernel without MAP_FIXED_NOREPLACE placed it elsewhere
        _libc.munmap(ctypes.c_void_p(got), length)
        return False
    return True


class Pages:
    """The pages this process mapped at chosen addresses, with the permission each stands for.

    ``ensure(addr, nbytes, writable)`` maps the missing pages of a range; ``covers`` says
    whether a range lies wholly in pages mapped here (only such a range is ever written).
    Pages are never unmapped: a view the program still holds must stay valid.
    """

    def __init__(self, limit_bytes: int = 4 << 30) -> None:
        self._lock = threading.Lock()
        self._pages: dict[int, bool] = {}  # page address -> writable
        self._lines: list[bytes] | None = None
        self.limit = limit_bytes

    def ensure(self, addr: int, nbytes: int, writable: bool) -> bool:
        """Map the pages of ``[addr, addr+nbytes)`` not mapped yet; record ``writable`` for
        all of them. False (and nothing recorded) when a page is taken by other memory."""
        lo, length = page_span(addr, nbytes)
        with self._lock:
            missing = [p for p in range(lo, lo + length, PAGE) if p not in self._pages]
            if (len(self._pages) + len(missing)) * PAGE > self.limit:
                return False
            mapped: list[tuple[int, int]] = []
            for start, size in _runs(missing):
                if not map_fixed(start, size):
                    for a, n in mapped:
                        _libc.munmap(ctypes.c_void_p(a), n)
                    return False
                mapped.append((start, size))
            for p in range(lo, lo + length, PAGE):
                self._pages[p] = writable
            self._lines = None
            return True

    def covers(self, addr: int, nbytes: int) -> bool:
        """Whether every page of the range was mapped here."""
        lo, length = page_span(addr, nbytes)
        with self._lock:
            return all(p in self._pages for p in range(lo, lo + length, PAGE))

    def maps_lines(self) -> list[bytes]:
        """The mapped pages as sorted ``/proc/self/maps`` lines (runs of equal permission)."""
        with self._lock:
            if self._lines is None:
                lines: list[bytes] = []
                start = end = -1
                perm = False
                for p in sorted(self._pages):
                    w = self._pages[p]
                    if p == end and w == perm:
                        end = p + PAGE
                        continue
                    if start >= 0:
                        lines.append(_line(start, end, perm))
                    start, end, perm = p, p + PAGE, w
                if start >= 0:
                    lines.append(_line(start, end, perm))
                self._lines = lines
            return list(self._lines)


def _runs(pages: list[int]) -> list[tuple[int, int]]:
    """Sorted page addresses as ``(start, length)`` runs of consecutive pages."""
    out: list[tuple[int, int]] = []
    for p in pages:
        if out and out[-1][0] + out[-1][1] == p:
            out[-1] = (out[-1][0], out[-1][1] + PAGE)
        else:
            out.append((p, PAGE))
    return out


def view(addr: int, nbytes: int) -> memoryview:
    """A writable byte view of ``[addr, addr+nbytes)`` (the caller owns that memory)."""
    if not nbytes:
        return memoryview(bytearray())
    return memoryview((ctypes.c_char * nbytes).from_address(addr)).cast("B")


def _line(start: int, end: int, writable: bool) -> bytes:
    perms = "rw-p" if writable else "r--p"
    return f"{start:x}-{end:x} {perms} 00000000 00:00 0".encode("ascii")


def write(addr: int, data: bytes) -> None:
    """Copy ``data`` to ``addr`` (the caller checked the range is its own and writable)."""
    if data:
        ctypes.memmove(addr, data, len(data))


def read(addr: int, nbytes: int) -> bytes:
    """``nbytes`` bytes at ``addr`` (the caller checked the range is readable)."""
    return ctypes.string_at(addr, nbytes) if nbytes else b""
