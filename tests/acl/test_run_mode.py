"""The device (RC, on-board) run mode (issue 12 §3): ``Session(run_mode="device")`` and
``acl-lab run --run-mode device``.

In that mode ``acl.rt.get_run_mode`` returns ``ACL_DEVICE`` and acl.util reads and writes
device memory directly (host and device memory are one); the runtime checks copy kinds
against the pointers only in the host (EP) mode (``MemcpyAsyncCheckLocation`` tests
``RT_RUN_MODE_ONLINE``), so an RC program's DEVICE_TO_DEVICE copy from a numpy array is fine.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import acl_lab
from acl_lab.constants import (
    ACL_DEVICE,
    ACL_HOST,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import run_checks
from tests.helpers import ok

PROGRAM = Path(__file__).resolve().parents[1] / "programs" / "samplestyle" / "run_mode_reader.py"


@pytest.fixture
def board() -> Iterator[tuple[ModuleType, Session]]:
    """``acl`` ready (init, device 0) in a device-run-mode session."""
    s = Session(watchdog=2.0, run_mode="device")
    with s:
        mod = acl_lab.install()
        assert mod.init() == 0 and mod.rt.set_device(0) == 0
        yield mod, s
        acl_lab.uninstall()


def test_run_mode_is_host_by_default(ready: ModuleType) -> None:
    """The default session is an EP card: ACL_HOST, and ptr_to_bytes of a device address is
    refused with ValueError."""
    assert ready.rt.get_run_mode() == (ACL_HOST, ACL_SUCCESS)
    dev = ok(ready.rt.malloc(16, ACL_MEM_MALLOC_NORMAL_ONLY))
    with pytest.raises(ValueError, match="device address"):
        ready.util.ptr_to_bytes(dev, 16)


def test_device_mode_reads_and_writes_device_memory_directly(
        board: tuple[ModuleType, Session]) -> None:
    """ACL_DEVICE; ptr_to_bytes returns the device buffer's bytes; a write through a
    ptr_to_numpy view reaches the device buffer and counts as written (no uninit finding
    for the copy that reads it)."""
    acl, s = board
    assert acl.rt.get_run_mode() == (ACL_DEVICE, ACL_SUCCESS)
    dev = ok(acl.rt.malloc(16, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memset(dev, 16, 0x42, 16) == 0
    assert acl.util.ptr_to_bytes(dev, 16) == b"\x42" * 16
    other = ok(acl.rt.malloc(16, ACL_MEM_MALLOC_NORMAL_ONLY))
    view = acl.util.ptr_to_numpy(other, (16,), np.dtype(np.uint8).num)
    view[:] = 7
    assert acl.rt.memcpy(dev, 16, other, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    assert acl.util.ptr_to_bytes(dev, 16) == b"\x07" * 16
    assert [f.kind for f in run_checks(s.trace())
            if f.kind in ("uninitialized_read", "memcpy_kind_mismatch")] == []


def test_device_mode_does_not_check_kinds_and_allows_async_host_copies(
        board: tuple[ModuleType, Session]) -> None:
    """A DEVICE_TO_DEVICE copy from a numpy array (how RC samples copy in) gives no
    memcpy_kind_mismatch, and memcpy_async HOST_TO_HOST runs (refused with 207000 only in
    the host mode)."""
    acl, s = board
    dev = ok(acl.rt.malloc(8, ACL_MEM_MALLOC_NORMAL_ONLY))
    arr = np.full(8, 3, np.uint8)
    assert acl.rt.memcpy(dev, 8, arr.ctypes.data, 8, ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    a, b = ok(acl.rt.malloc_host(8)), ok(acl.rt.malloc_host(8))
    stream = ok(acl.rt.create_stream())
    assert acl.rt.memcpy_async(b, 8, a, 8, ACL_MEMCPY_HOST_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert [f for f in run_checks(s.trace()) if f.kind == "memcpy_kind_mismatch"] == []


def test_host_mode_refuses_async_host_to_host(ready: ModuleType) -> None:
    """The contrast: in the host mode memcpy_async HOST_TO_HOST returns 207000."""
    a, b = ok(ready.rt.malloc_host(8)), ok(ready.rt.malloc_host(8))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(b, 8, a, 8, ACL_MEMCPY_HOST_TO_HOST, stream) == 207000


def test_bad_run_mode_is_refused() -> None:
    """Only 'host' and 'device' are run modes."""
    with pytest.raises(ValueError, match="run_mode"):
        Session(run_mode="rc")


@pytest.mark.parametrize(("flag", "mode"), [((), "ACL_HOST"),
                                            (("--run-mode", "device"), "ACL_DEVICE")])
def test_acl_lab_run_mode_flag(tmp_path: Path, flag: tuple[str, ...], mode: str) -> None:
    """``acl-lab run [--run-mode device]`` runs the RC-style program to exit 0 in both modes
    (it reads device memory directly only in ACL_DEVICE) with no error findings."""
    import json
    summary = tmp_path / "s.json"
    proc = subprocess.run(
        [sys.executable, "-m", "acl_lab.cli", "run", "--trace", str(tmp_path / "t.acltrace"),
         "--summary", str(summary), "--quiet", *flag, str(PROGRAM)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["mode", mode]
    assert proc.stdout.split()[2] == "00010203"
    errors = [f for f in json.loads(summary.read_text())["findings"]
              if f["severity"] == "error"]
    assert errors == []
