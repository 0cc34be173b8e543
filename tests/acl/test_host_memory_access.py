"""Host memory the program may and may not write, and raw host addresses (issues 11 and 12).

A copy or memset into memory the program may not write (a shared ``bytes`` object, a read-only
numpy array, read-only pages) is refused with 107000 and a ``read_only_destination`` finding at
the copy's line, and nothing is written. Host memory the emulator did not hand out
(``arr.ctypes.data``, an mmap, a ctypes buffer) is accepted when ``/proc/self/maps`` shows the
range mapped with the permission the access needs; an unmapped range is refused with 107000,
never a crash. The cases that used to kill the interpreter also run in a subprocess.
"""

from __future__ import annotations

import ctypes
import mmap
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import acl_lab
from acl_lab import zoo
from acl_lab.constants import (
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_SUCCESS,
)
from acl_lab.runtime.memory import MemorySystem, host_range_problem
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import run_checks
from tests.helpers import ok

NPY_UINT8 = np.dtype(np.uint8).num
PAGE = mmap.PAGESIZE


def device_with(acl: ModuleType, data: bytes) -> int:
    """A device buffer holding ``data``."""
    dev = ok(acl.rt.malloc(len(data), ACL_MEM_MALLOC_NORMAL_ONLY))
    src = np.frombuffer(data, np.uint8).copy()
    assert acl.rt.memcpy(dev, len(data), src.ctypes.data, len(data),
                         ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    return int(dev)


def np_ptr(acl: ModuleType, arr: np.ndarray) -> int:
    """acl.util.numpy_to_ptr without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return int(acl.util.numpy_to_ptr(arr))


def findings_of(session: Session, kind: str) -> list:
    """The findings of ``kind`` in the session's trace so far."""
    return [f for f in run_checks(session.trace()) if f.kind == kind]


def run_isolated(body: str) -> subprocess.CompletedProcess[str]:
    """Run ``body`` (with ``acl`` ready and ``dev`` = 64 device bytes of 0x5A) in a fresh
    interpreter, so a crash shows as a return code instead of killing the test run."""
    prelude = textwrap.dedent("""
        import mmap, warnings
        import numpy as np
        import acl_lab
        from acl_lab.runtime.session import Session
        warnings.simplefilter("ignore")
        s = Session(watchdog=2.0)
        s.__enter__()
        acl = acl_lab.install()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        dev, _ = acl.rt.malloc(64, 2)
        assert acl.rt.memset(dev, 64, 0x5A, 64) == 0
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=120, check=False)


# ----------------------------------------------------------------------------- bytes objects


def test_copy_into_an_interned_bytes_is_refused_and_leaves_it_unchanged(
        ready: ModuleType, session: Session) -> None:
    """A D2H copy into bytes_to_ptr(b"A") returns 107000; b"A" stays b"A" for the process,
    and the finding at the copy's line names the object and the fix."""
    dev = device_with(ready, b"Z" * 64)
    line = sys._getframe().f_lineno + 1
    ret = ready.rt.memcpy(ready.util.bytes_to_ptr(b"A"), 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == ACL_ERROR_RT_PARAM_INVALID
    assert bytes([65]) == b"A" and b"A" != b"Z"
    (f,) = findings_of(session, "read_only_destination")
    assert f.severity == "error" and f.line == line and f.file.endswith(__file__.split("/")[-1])
    assert "bytes object" in f.message and "b\"A\"" in f.message
    assert "np.empty" in f.message and "malloc_host" in f.message


def test_copy_into_an_interned_bytes_in_a_subprocess() -> None:
    """The same copy in a fresh interpreter: exit code 0, ret 107000, b"A" unchanged."""
    done = run_isolated("""
        ret = acl.rt.memcpy(acl.util.bytes_to_ptr(b"A"), 1, dev, 1, 2)
        print(ret, b"A" == bytes([65]), b"A" == b"Z")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["107000", "True", "False"]


def run_source(acl: ModuleType, source: str) -> dict:
    """Compile and run ``source`` as a program would be (``acl`` in its namespace)."""
    ns: dict = {"acl": acl, "np": np}
    exec(compile(textwrap.dedent(source), "<program>", "exec"), ns)
    return ns


def test_memset_into_a_bytes_constant_is_refused(ready: ModuleType) -> None:
    """memset into a bytes constant of a program's code returns 107000 and writes nothing
    (the compiler hashed the constant, so it is known to be shared)."""
    ns = run_source(ready, """
        def f():
            return b"QQQQ"
        ret = acl.rt.memset(acl.util.bytes_to_ptr(f()), 4, 0, 4)
    """)
    assert ns["ret"] == ACL_ERROR_RT_PARAM_INVALID
    assert ns["f"]() == bytes([81]) * 4


def test_bytes_used_as_a_dict_key_is_refused(ready: ModuleType) -> None:
    """A bytes object that was hashed (a dict key) is shared: a write would break the dict."""
    dev = device_with(ready, b"\x07" * 16)
    key = np.zeros(16, np.uint8).tobytes()
    table = {key: "zeros"}
    assert ready.rt.memcpy(ready.util.bytes_to_ptr(key), 16, dev, 16,
                           ACL_MEMCPY_DEVICE_TO_HOST) == ACL_ERROR_RT_PARAM_INVALID
    assert table[bytes(16)] == "zeros"


def test_bytes_the_program_keeps_under_two_names_is_its_own(ready: ModuleType) -> None:
    """A bytes object the program made and keeps in a list as well is still its own: the
    copy lands and both names see it (aliasing is the program's business)."""
    dev = device_with(ready, b"\x07" * 16)
    out = bytes(16)
    kept = [out]
    assert ready.rt.memcpy(ready.util.bytes_to_ptr(out), 16, dev, 16,
                           ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    assert kept[0] == b"\x07" * 16


def test_copy_into_a_bytes_the_program_holds_alone_works(ready: ModuleType,
                                                         session: Session) -> None:
    """The samples' pattern: ``out = bytes(n)``, D2H into bytes_to_ptr(out), frombuffer."""
    dev = device_with(ready, b"\x07" * 16)
    out = bytes(16)
    assert ready.rt.memcpy(ready.util.bytes_to_ptr(out), 16, dev, 16,
                           ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    assert np.frombuffer(out, np.uint8).tolist() == [7] * 16
    assert findings_of(session, "read_only_destination") == []


def test_ptr_to_numpy_of_shared_bytes_is_a_read_only_view(ready: ModuleType) -> None:
    """ptr_to_numpy over a shared bytes object gives a view that cannot be written."""
    data = bytes([82]) * 4
    table = {data: 1}
    view = ready.util.ptr_to_numpy(ready.util.bytes_to_ptr(data), (4,), NPY_UINT8)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 1
    assert table[b"RRRR"] == 1


# ----------------------------------------------------------------------------- read-only arrays


@pytest.fixture
def read_only_file(tmp_path: Path) -> Path:
    """A 4 KiB file of 0x11 bytes."""
    p = tmp_path / "ro.bin"
    p.write_bytes(b"\x11" * 4096)
    return p


def test_copy_into_a_read_only_memmap_is_refused(ready: ModuleType, session: Session,
                                                  read_only_file: Path) -> None:
    """numpy_to_ptr(np.memmap(mode="r")) as a D2H destination: 107000, file unchanged,
    a finding that says the array is read-only."""
    dev = device_with(ready, b"\x99" * 64)
    mm = np.memmap(read_only_file, mode="r", dtype=np.uint8)
    assert ready.rt.memcpy(np_ptr(ready, mm), 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST) == \
        ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.memset(np_ptr(ready, mm), 64, 0, 64) == ACL_ERROR_RT_PARAM_INVALID
    assert mm[:64].tolist() == [0x11] * 64
    fs = findings_of(session, "read_only_destination")
    assert len(fs) == 2 and all("read-only numpy array" in f.message for f in fs)


@pytest.mark.parametrize("registered", [True, False], ids=["numpy_to_ptr", "ctypes.data"])
def test_copy_into_a_read_only_memmap_in_a_subprocess(read_only_file: Path,
                                                      registered: bool) -> None:
    """The copy that used to end in SIGSEGV: exit code 0 and ret 107000 in a fresh
    interpreter, whether the pointer came from numpy_to_ptr or the raw ctypes.data."""
    ptr = "acl.util.numpy_to_ptr(mm)" if registered else "mm.ctypes.data"
    done = run_isolated(f"""
        mm = np.memmap({str(read_only_file)!r}, mode="r", dtype=np.uint8)
        ret = acl.rt.memcpy({ptr}, 64, dev, 64, 2)
        print(ret, int(mm[0]))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["107000", str(0x11)]


def test_copy_into_read_only_pages_of_a_raw_address_is_refused() -> None:
    """A PROT_READ anonymous mapping seen only through its address: refused, no crash."""
    done = run_isolated("""
        m = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ)
        addr = np.frombuffer(m, np.uint8).ctypes.data
        ret = acl.rt.memcpy(addr, 64, dev, 64, 2)
        ok_read = acl.rt.memcpy(dev, 64, addr, 64, 1)
        print(ret, ok_read)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["107000", "0"]


# ----------------------------------------------------------------------------- raw host addresses


def test_copies_through_raw_numpy_addresses(ready: ModuleType, session: Session) -> None:
    """memcpy from and to ``arr.ctypes.data`` (never registered) moves the bytes."""
    data = np.arange(256, dtype=np.uint8)
    dev = ok(ready.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert session.memory.find(data.ctypes.data) is None
    assert ready.rt.memcpy(dev, 256, data.ctypes.data, 256, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    out = np.zeros(256, np.uint8)
    assert ready.rt.memcpy(out.ctypes.data, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(out, data)
    host = ok(ready.rt.malloc_host(256))
    again = np.zeros(256, np.uint8)
    assert ready.rt.memcpy(host, 256, data.ctypes.data, 256, ACL_MEMCPY_HOST_TO_HOST) == 0
    assert ready.rt.memcpy(again.ctypes.data, 256, host, 256, ACL_MEMCPY_HOST_TO_HOST) == 0
    np.testing.assert_array_equal(again, data)


def test_ctypes_buffers_and_memset(ready: ModuleType) -> None:
    """A ctypes buffer is ordinary host memory: copies and memset reach it."""
    dev = device_with(ready, bytes(range(32)))
    buf = (ctypes.c_char * 32)()
    assert ready.rt.memcpy(ctypes.addressof(buf), 32, dev, 32, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert bytes(buf) == bytes(range(32))
    assert ready.rt.memset(ctypes.addressof(buf), 32, 0xAB, 16) == ACL_SUCCESS
    assert bytes(buf) == b"\xab" * 16 + bytes(range(16, 32))
    assert ready.util.ptr_to_bytes(ctypes.addressof(buf) + 16, 4) == bytes(range(16, 20))


def test_load_from_mem_on_an_mmap_address(ready: ModuleType, tmp_path: Path) -> None:
    """acl.mdl.load_from_mem takes the address of an mmap of the model file."""
    data = Path(zoo.path("lenet5")).read_bytes()
    with open(zoo.path("lenet5"), "rb") as fh:
        m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    addr = np.frombuffer(m, np.uint8).ctypes.data
    mid = ok(ready.mdl.load_from_mem(addr, len(data)))
    assert ready.mdl.unload(mid) == ACL_SUCCESS


def test_unmapped_raw_address_is_refused(ready: ModuleType) -> None:
    """An address that was unmapped (a closed mmap) is refused with 107000: source,
    destination, memset, ptr_to_bytes and ptr_to_numpy."""
    m = mmap.mmap(-1, PAGE)
    addr = np.frombuffer(m, np.uint8).ctypes.data
    assert host_range_problem(addr, PAGE, True) == ""
    m.close()  # unmaps the page (no buffer of it is left)
    if host_range_problem(addr, 1, False) == "":
        pytest.skip("the page was mapped again by the time of the check")
    dev = ok(ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy(dev, 64, addr, 64, ACL_MEMCPY_HOST_TO_DEVICE) == \
        ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.memcpy(addr, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST) == \
        ACL_ERROR_RT_PARAM_INVALID
    assert ready.rt.memset(addr, 64, 0, 64) == ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(ValueError, match="not mapped"):
        ready.util.ptr_to_bytes(addr, 8)
    with pytest.raises(ValueError, match="not mapped"):
        ready.util.ptr_to_numpy(addr, (8,), NPY_UINT8)


def test_range_running_into_an_inaccessible_page_is_refused() -> None:
    """A range that starts in a readable page and runs into a PROT_NONE one: refused, no
    crash (the whole range must be covered by readable mappings)."""
    done = run_isolated("""
        import ctypes
        m = mmap.mmap(-1, 2 * mmap.PAGESIZE)
        addr = np.frombuffer(m, np.uint8).ctypes.data
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        assert libc.mprotect(addr + mmap.PAGESIZE, mmap.PAGESIZE, 0) == 0
        big, _ = acl.rt.malloc(2 * mmap.PAGESIZE, 2)
        print(acl.rt.memcpy(big, 2 * mmap.PAGESIZE, addr, 2 * mmap.PAGESIZE, 1),
              acl.rt.memcpy(big, mmap.PAGESIZE, addr, mmap.PAGESIZE, 1))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["107000", "0"]


def test_freed_pinned_memory_stays_a_use_after_free(ready: ModuleType) -> None:
    """A pointer into a freed malloc_host block is refused while the block's bytes are
    quarantined, even though those bytes are still mapped."""
    host = ok(ready.rt.malloc_host(256))
    assert ready.rt.free_host(host) == ACL_SUCCESS
    dev = ok(ready.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE) == \
        ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(ValueError, match="freed"):
        ready.util.ptr_to_bytes(host, 8)


def test_evicted_pinned_blocks_are_no_longer_called_freed(ready: ModuleType,
                                                          session: Session) -> None:
    """Once a freed block's bytes are released from the quarantine the address may belong to
    a new buffer, so it is no longer reported as freed (no false use after free)."""
    first = ok(ready.rt.malloc_host(4096))
    region = session.memory.find(first)
    assert region is not None
    assert ready.rt.free_host(first) == ACL_SUCCESS
    assert session.memory.find_freed(first) is region
    for _ in range(MemorySystem.QUARANTINE_BLOCKS + 1):
        assert ready.rt.free_host(ok(ready.rt.malloc_host(4096))) == ACL_SUCCESS
    assert region.backing() is None  # its bytes went back to Python
    # A later block may have been given the same address (and be freed and quarantined
    # itself); the first block is no longer the answer.
    assert session.memory.find_freed(first) is not region


# ----------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(("size", "code"), [
    (1 << 50, 207001),               # too big for the device: the driver says out of memory
    ((1 << 63) - 1, 207001),
    ((1 << 64) - 65, 207001),        # + 64 is still a size_t
    ((1 << 64) - 64, 100000),        # + 64 wraps: the rounding overflows
    ((1 << 64) - 1, 100000),
    (0, 100000),
])
def test_malloc_size_codes_follow_size_t(ready: ModuleType, size: int, code: int) -> None:
    """Only 0 and a size whose rounding overflows size_t are parameter errors."""
    assert ready.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY) == (0, code)


def test_malloc_align32_overflows_only_past_its_smaller_padding(ready: ModuleType) -> None:
    """malloc_align32 adds 32, not 64, before rounding."""
    assert ready.rt.malloc_align32((1 << 64) - 33, ACL_MEM_MALLOC_NORMAL_ONLY) == (0, 207001)
    assert ready.rt.malloc_align32((1 << 64) - 32, ACL_MEM_MALLOC_NORMAL_ONLY) == (0, 100000)


def test_malloc_host_too_big_is_out_of_memory(ready: ModuleType) -> None:
    """aclrtMallocHost checks only size > 0; a huge size is out of memory."""
    assert ready.rt.malloc_host(1 << 50) == (0, 207001)


def test_raw_destination_unmapped_before_an_async_copy_runs_fails_the_task() -> None:
    """memcpy_async into an mmap that the program closes before the copy runs: the copy
    checks the pages again when it runs, so the task fails (the stream reports an error)
    instead of writing into unmapped memory."""
    done = run_isolated("""
        stream, _ = acl.rt.create_stream()
        m = mmap.mmap(-1, mmap.PAGESIZE)
        queued = acl.rt.memcpy_async(np.frombuffer(m, np.uint8).ctypes.data, 64, dev, 64, 2,
                                     stream)
        m.close()
        print(queued, acl.rt.synchronize_stream(stream))
        print(any("no longer" in d or "not mapped" in d
                  for d in [s.trace().string(int(k)) for k in s.trace().diags["message"]]))
    """)
    assert done.returncode == 0, done.stderr
    queued, synced, explained = done.stdout.split()
    assert queued == "0" and synced != "0" and explained == "True"


def test_writable_looking_array_over_read_only_pages_is_refused() -> None:
    """numpy_to_ptr of an array whose writeable flag is set but whose pages are read-only
    (a ctypes view of a PROT_READ mapping): the pages decide, the copy is refused."""
    done = run_isolated("""
        import ctypes
        m = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ)
        addr = np.frombuffer(m, np.uint8).ctypes.data
        arr = np.ctypeslib.as_array((ctypes.c_uint8 * 64).from_address(addr))
        print(arr.flags.writeable, acl.rt.memcpy(acl.util.numpy_to_ptr(arr), 64, dev, 64, 2),
              acl.rt.memset(acl.util.numpy_to_ptr(arr), 64, 1, 64))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "107000", "107000"]


def test_pinned_memory_of_a_finished_session_is_refused_as_freed() -> None:
    """A malloc_host pointer from a session that ended (its bytes still owned by a view the
    program kept, so the pages are mapped) is a use after free in the next session, not raw
    memory that happens to be readable."""
    first = Session(watchdog=2.0)
    with first:
        acl = acl_lab.install()
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            host = ok(acl.rt.malloc_host(256))
            region = first.memory.find(host)
            assert region is not None
            kept = region.buf  # keeps the bytes (and so the address) owned
            first.finish()
        finally:
            acl_lab.uninstall()
    second = Session(watchdog=2.0)
    with second:
        acl = acl_lab.install()
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            dev = ok(acl.rt.malloc(256, ACL_MEM_MALLOC_NORMAL_ONLY))
            assert host_range_problem(host, 256, False) == ""  # mapped and readable
            assert acl.rt.memcpy(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE) == \
                ACL_ERROR_RT_PARAM_INVALID
            with pytest.raises(ValueError, match="freed"):
                acl.util.ptr_to_bytes(host, 16)
        finally:
            acl_lab.uninstall()
    assert kept.size == 256
