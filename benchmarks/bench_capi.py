"""Cost of the C API: a C++ program linked with acl_lab's libascendcl, timed inside itself.

Measured (median of ``REPEATS`` runs, 3 with ``--quick``, of one compiled program, each a
fresh process):

* ``first_call``: the program's first ACL call (``aclInit``), which starts the embedded
  Python interpreter and imports acl_lab;
* ``memcpy_async``: one traced 64-byte H2D ``aclrtMemcpyAsync`` from C (``N`` calls, the
  stream synchronised every 1,000 calls outside the timed blocks), to set beside the Python
  figure of ``bench_api_overhead`` (the C call adds the cffi entry, the out-pointer and
  return-address handling, and the cached file:line lookup);
* ``build``: building libascendcl.so from scratch (cffi, gcc), once.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from .common import REPEATS, Row, median, n_calls

NAME = "capi"

#: Target for one traced aclrtMemcpyAsync from C (µs): the Python call's target plus the
#: bridge's share.
TARGET_MEMCPY_ASYNC_US = 6.0
#: Target for the first call (interpreter start and imports), ms.
TARGET_FIRST_CALL_MS = 1500.0

PROGRAM = r"""
#include "acl/acl.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>

static double now_ns() {
    return std::chrono::duration<double, std::nano>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv) {
    long n = std::atol(argv[1]);
    double t0 = now_ns();
    aclInit(nullptr);
    double first = now_ns() - t0;
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    void *host = nullptr;
    void *dev = nullptr;
    aclrtMallocHost(&host, 64);
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_NORMAL_ONLY);
    double spent = 0;
    for (long done = 0; done < n; done += 1000) {
        double t = now_ns();
        for (long i = 0; i < 1000 && done + i < n; ++i)
            aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream);
        spent += now_ns() - t;
        aclrtSynchronizeStream(stream);
    }
    std::printf("%.0f %.1f\n", first, spent / n);
    aclrtFree(dev);
    aclrtFreeHost(host);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def run(quick: bool) -> list[Row]:
    """The rows of this module (see the module docstring)."""
    from acl_lab.capi import build
    from acl_lab.capi.commands import compile_command

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        env_cache = os.environ.get("ACL_LAB_CACHE")
        os.environ["ACL_LAB_CACHE"] = str(Path(tmp) / "cache")
        try:
            fresh = build.build()
            build_s = time.perf_counter() - t
        finally:
            if env_cache is None:
                del os.environ["ACL_LAB_CACHE"]
            else:
                os.environ["ACL_LAB_CACHE"] = env_cache
        src = Path(tmp) / "bench.cpp"
        src.write_text(PROGRAM)
        binary = Path(tmp) / "bench"
        subprocess.run(compile_command([str(src), "-O2", "-o", str(binary)], fresh),
                       check=True, capture_output=True)
        firsts, per_call = [], []
        for _ in range(3 if quick else REPEATS):
            out = subprocess.run([str(binary), str(n_calls(quick))], check=True,
                                 capture_output=True, text=True).stdout.split()
            firsts.append(float(out[0]) / 1e6)
            per_call.append(float(out[1]) / 1e3)
    return [Row(NAME, "first_call", median(firsts), "ms", TARGET_FIRST_CALL_MS),
            Row(NAME, "memcpy_async_from_c_traced", median(per_call), "µs/call",
                TARGET_MEMCPY_ASYNC_US),
            Row(NAME, "build_library_s", build_s, "s")]
