"""What the pipe transport costs per call: in-process vs forwarded to an emulator process.

Measured, each the median of ``REPEATS`` repeats of ``N`` calls (quick: fewer), one side after
the other in the same run (so the ratios compare like with like on a busy machine):

* ``acl.rt.get_run_mode``: a call with no arguments and a tuple result (the round trip);
* a 64-byte synchronous ``acl.rt.memcpy`` host (a numpy array's address) to device: the
  bytes are attached to the call;
* a 1 MiB synchronous ``acl.rt.memcpy`` device to host into a numpy array: the bytes come back
  in the reply and are written here.

In-process runs on a fresh bound Session (``benchmarks.common.acl_session``); the pipe side
starts a server process (``acl_lab.transport.server.ServerProcess``), installs ``Pipe`` with
``set_transport`` and restores the in-process transport at the end. Ratios are pipe over
in-process, per repeat, medians reported.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from types import ModuleType

import numpy as np

import acl_lab
from acl_lab.acl._boundary import set_transport
from acl_lab.constants import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE

from .common import REPEATS, Row, acl_session, check, median, n_calls, quiet_gc

NAME = "transport"
SMALL, LARGE = 64, 1 << 20


def _cases(acl: ModuleType, quick: bool) -> dict[str, tuple[int, Callable[[], object]]]:
    """The timed calls on ``acl`` (already initialised): name -> (calls, one call)."""
    dev = acl.rt.malloc(LARGE, 0)[0]
    small = np.arange(SMALL, dtype=np.uint8)
    big = np.zeros(LARGE, dtype=np.uint8)
    check(acl.rt.memcpy(dev, LARGE, big.ctypes.data, LARGE, ACL_MEMCPY_HOST_TO_DEVICE),
          "memcpy")
    n = n_calls(quick)
    sp, bp = small.ctypes.data, big.ctypes.data

    def run_mode() -> object:
        return acl.rt.get_run_mode()

    def copy_small() -> object:
        return acl.rt.memcpy(dev, SMALL, sp, SMALL, ACL_MEMCPY_HOST_TO_DEVICE)

    def copy_large() -> object:
        return acl.rt.memcpy(bp, LARGE, dev, LARGE, ACL_MEMCPY_DEVICE_TO_HOST)

    run_mode.keep = copy_small.keep = copy_large.keep = (small, big)  # type: ignore[attr-defined]
    return {"get_run_mode": (n // 4, run_mode), "memcpy_64B_h2d": (n // 4, copy_small),
            "memcpy_1MiB_d2h": (max(20, n // 200), copy_large)}


def _time(calls: int, fn: Callable[[], object]) -> float:
    """µs per call of ``calls`` calls of ``fn``."""
    with quiet_gc():
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t) / calls * 1e6


def _measure(acl: ModuleType, quick: bool) -> dict[str, list[float]]:
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    cases = _cases(acl, quick)
    out: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(3 if quick else REPEATS):
        for k, (calls, fn) in cases.items():
            out[k].append(_time(calls, fn))
    return out


def run(quick: bool) -> list[Row]:
    """The rows of this module (see the module docstring)."""
    from acl_lab.transport import Pipe
    from acl_lab.transport.server import ServerProcess

    with acl_session() as (_s, acl):
        acl.finalize()  # _measure initialises it again
        here = _measure(acl, quick)
    with tempfile.TemporaryDirectory() as tmp:
        srv = ServerProcess(tmp)
        pipe = Pipe(srv.client_fd)
        previous = set_transport(pipe)
        try:
            there = _measure(acl_lab.install(), quick)
        finally:
            set_transport(previous)
            acl_lab.uninstall()
            pipe.close()
            srv.wait(60)
    rows: list[Row] = []
    for k in here:
        rows.append(Row(NAME, f"{k}_in_process", median(here[k]), "µs/call"))
        rows.append(Row(NAME, f"{k}_pipe", median(there[k]), "µs/call"))
        rows.append(Row(NAME, f"{k}_pipe_vs_in_process",
                        median([b / a for a, b in zip(here[k], there[k], strict=True)]), "x"))
    return rows
