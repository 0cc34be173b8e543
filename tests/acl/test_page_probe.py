"""Raw host ranges are checked by asking the kernel page by page (process_vm_readv/writev on
this process) before the memory map is read: both ways must give the same answer."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator

import numpy as np
import pytest

from acl_lab.runtime import memory

PAGE = 4096
PROT_NONE, PROT_READ, PROT_RW = 0, 1, 3
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)


@pytest.fixture
def pages() -> Iterator[int]:
    """Four anonymous pages: read-write, read-only, no access, then unmapped."""
    base = _libc.mmap(None, 4 * PAGE, PROT_RW, 0x22, -1, 0)  # MAP_PRIVATE | MAP_ANONYMOUS
    assert base not in (None, ctypes.c_void_p(-1).value)
    ctypes.memmove(base, b"\x5a" * (2 * PAGE), 2 * PAGE)
    assert _libc.mprotect(base + PAGE, PAGE, PROT_READ) == 0
    assert _libc.mprotect(base + 2 * PAGE, PAGE, PROT_NONE) == 0
    assert _libc.munmap(base + 3 * PAGE, PAGE) == 0
    yield base
    _libc.munmap(base, 3 * PAGE)


CASES = [(0, PAGE, True), (0, 2 * PAGE, False), (0, 2 * PAGE, True), (PAGE, 10, False),
         (PAGE, 10, True), (PAGE - 1, 2, False), (2 * PAGE, 1, False), (3 * PAGE, 0, False),
         (10, 3 * PAGE, False), (0, 0, True)]


@pytest.mark.parametrize(("offset", "nbytes", "write"), CASES)
def test_probe_and_memory_map_agree(pages: int, offset: int, nbytes: int, write: bool
                                    ) -> None:
    """Every mix of writable, read-only, inaccessible and unmapped pages: the same verdict
    (and, for a refusal, the same explanation) with the probe as from the map alone."""
    addr = pages + offset
    with_probe = memory.host_range_problem(addr, nbytes, write)
    from_map = memory.host_range_problem(addr, nbytes, write, memory.host_mappings())
    assert with_probe == from_map
    assert (with_probe == "") == (offset + max(nbytes, 1) <= (PAGE if write else 2 * PAGE))


def test_write_probe_leaves_the_bytes_unchanged(pages: int) -> None:
    """The write probe puts back the byte it read: the page's contents are untouched."""
    arr = np.ctypeslib.as_array((ctypes.c_uint8 * PAGE).from_address(pages))
    arr[:] = np.arange(PAGE, dtype=np.uint64).astype(np.uint8)
    before = arr.copy()
    assert memory.host_range_problem(pages, PAGE, True) == ""
    assert np.array_equal(arr, before)


def test_without_the_probe_the_map_decides(pages: int, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """With the probe off (the transport's server replaces the map with its shadow pages)
    the verdict comes from ``host_mappings`` alone: a map that lists nothing refuses all."""
    monkeypatch.setattr(memory, "page_probe", False)
    monkeypatch.setattr(memory, "host_mappings", lambda: [])
    assert memory.host_range_problem(pages, 16, False) != ""


def test_the_map_is_read_only_to_explain_a_refusal(pages: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With the probe on, a range the kernel allows is settled without reading the memory
    map (the probe is microseconds, the map hundreds); a refused one reads it once, for the
    explanation."""
    assert memory.page_probe, "process_vm_readv is available on Linux"
    reads: list[int] = []
    real = memory.host_mappings

    def counted() -> list[bytes]:
        reads.append(1)
        return real()

    monkeypatch.setattr(memory, "host_mappings", counted)
    assert memory.host_range_problem(pages, 2 * PAGE, False) == ""
    assert memory.host_range_problem(pages, PAGE, True) == ""
    assert reads == []
    assert memory.host_range_problem(pages + PAGE, 10, True) != ""
    assert reads == [1]
