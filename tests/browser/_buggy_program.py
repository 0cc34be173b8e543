"""A small pyACL program with one leak and one race, shared by the browser tests.

The report test runs it in-process; the JupyterLab test copies this file next to its
notebook and the kernel imports it from there, so the findings point at this file's lines.
Lines are found by their marker comments (``line_of("race")``), never by number.
(Not named ``test_*``: pytest does not collect it.)
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

N = 4096


def _ok(result: tuple[Any, int]) -> Any:
    """The value of a ``(value, ret)`` pair, raising unless ret is 0 (ACL_SUCCESS)."""
    value, ret = result
    if ret != 0:
        raise RuntimeError(f"ACL call failed with {ret}")
    return value


def _check(ret: int) -> None:
    """Raise unless ``ret`` is 0 (ACL_SUCCESS)."""
    if ret != 0:
        raise RuntimeError(f"ACL call failed with {ret}")


def program(acl: ModuleType) -> None:
    """A leaked device buffer and a read-after-write race between two streams."""
    from acl_lab.constants import (
        ACL_MEM_MALLOC_NORMAL_ONLY,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        ACL_MEMCPY_HOST_TO_DEVICE,
    )

    _check(acl.init())
    _check(acl.rt.set_device(0))
    host = _ok(acl.rt.malloc_host(N))
    a, b, c = (_ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3))
    _ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))  # <leak>
    _check(acl.rt.memcpy(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE))
    s1, s2 = _ok(acl.rt.create_stream()), _ok(acl.rt.create_stream())
    _check(acl.rt.memcpy_async(b, N, a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s1))
    _check(acl.rt.memcpy_async(c, N, b, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s2))  # <race>
    _check(acl.rt.synchronize_stream(s1))
    _check(acl.rt.synchronize_stream(s2))
    for p in (a, b, c):
        _check(acl.rt.free(p))
    _check(acl.rt.free_host(host))
    for s in (s1, s2):
        _check(acl.rt.destroy_stream(s))
    _check(acl.rt.reset_device(0))


def line_of(kind: str) -> int:
    """The 1-based line of this file marked ``# <kind>`` (``"leak"`` or ``"race"``)."""
    marker = f"# <{kind}>"
    for n, line in enumerate(Path(__file__).read_text().splitlines(), 1):
        if line.rstrip().endswith(marker):
            return n
    raise ValueError(f"no line marked {marker!r}")


def run_traced() -> Any:
    """Run ``program`` in a fresh Session and return its finished Trace."""
    import acl_lab
    from acl_lab.runtime.session import Session

    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            program(acl)
            return s.finish()
        finally:
            acl_lab.uninstall()
