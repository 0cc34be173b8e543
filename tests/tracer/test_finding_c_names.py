"""Every finding names the C API function beside the pyACL one (``acl.rt.malloc (aclrtMalloc)``).

One minimal program per finding kind; each must produce its kind, whose message carries the
C name of the call it is about, and every pyACL function any finding mentions appears with
its C name (from the binding table, ``acl_lab.acl._binding``) at least once. The formatting
itself (``checks.base.with_c_names``) is tested on text: first mention only, calls written
out, names in parentheses, idempotent.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from acl_lab.acl._binding import BY_NAME
from acl_lab.tracer.checks import Finding
from acl_lab.tracer.checks.base import Finding as BaseFinding
from acl_lab.tracer.checks.base import api_name, c_name_of, with_c_names

from .programs import run_source

PRELUDE = """\
import threading

import acl
import numpy as np

NORMAL = 2
H2H, H2D, D2H = 0, 1, 2
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
s1, ret = acl.rt.create_stream()
s2, ret = acl.rt.create_stream()
dev, ret = acl.rt.malloc(4096, NORMAL)
host, ret = acl.rt.malloc_host(4096)
"""
END = """
try:
    acl.rt.synchronize_device()
except Exception:   # the deadlock program's device never drains
    pass
"""

#: kind -> (program body, the C name its message must carry)
PROGRAMS = {
    "leak": ("leaked, ret = acl.rt.malloc(256, NORMAL)\n", "aclrtMalloc"),
    "double_free": ("p, ret = acl.rt.malloc(64, NORMAL)\nacl.rt.free(p)\nacl.rt.free(p)\n",
                    "aclrtFree"),
    "invalid_free": ("acl.rt.free(dev + 64)\n", "aclrtFree"),
    "use_after_free": ("p, ret = acl.rt.malloc(64, NORMAL)\nacl.rt.free(p)\n"
                       "acl.rt.memset(p, 64, 0, 64)\n", "aclrtMemset"),
    "free_in_flight": ("p, ret = acl.rt.malloc(4096, NORMAL)\n"
                       "acl.rt.memcpy_async(p, 4096, host, 4096, H2D, s1)\nacl.rt.free(p)\n",
                       "aclrtFree"),
    "out_of_bounds": ("p, ret = acl.rt.malloc(64, NORMAL)\n"
                      "acl.rt.memcpy(p, 128, host, 128, H2D)\nacl.rt.free(p)\n", "aclrtMemcpy"),
    "uninitialized_read": ("acl.rt.memcpy(host, 4096, dev, 4096, D2H)\n", "aclrtMemcpy"),
    "memcpy_kind_mismatch": ("acl.rt.memcpy(dev, 4096, host, 4096, D2H)\n", "aclrtMemcpy"),
    "context_not_set": ("def work():\n    acl.rt.malloc(64, NORMAL)\n"
                        "t = threading.Thread(target=work)\nt.start()\nt.join()\n",
                        "aclrtMalloc"),
    "pageable_async_copy": ("data = np.zeros(4096, np.uint8)\n"
                            "acl.rt.memcpy_async(dev, 4096, acl.util.bytes_to_ptr("
                            "data.tobytes()), 4096, H2D, s1)\n", "aclrtMemcpyAsync"),
    "misaligned_host_buffer": ("acl.rt.memcpy_async(dev, 1024, host + 8, 1024, H2D, s1)\n",
                               "aclrtMemcpyAsync"),
    "destroy_order": ("c2, ret = acl.rt.create_context(0)\ns3, ret = acl.rt.create_stream()\n"
                      "acl.rt.destroy_context(c2)\nacl.rt.destroy_stream(s3)\n"
                      "acl.rt.set_context(ctx)\n", "aclrtDestroyStream"),
    "race": ("acl.rt.memcpy_async(dev, 4096, host, 4096, H2D, s1)\n"
             "acl.rt.memcpy_async(host, 4096, dev, 4096, D2H, s2)\n", "aclrtMemcpyAsync"),
    "wait_before_record": ("ev, ret = acl.rt.create_event()\n"
                           "acl.rt.stream_wait_event(s2, ev)\nacl.rt.record_event(ev, s1)\n",
                           "aclrtStreamWaitEvent"),
    "wrong_context": ("c2, ret = acl.rt.create_context(0)\n"
                      "acl.rt.memcpy_async(dev, 4096, host, 4096, H2D, s1)\n"
                      "acl.rt.set_context(ctx)\nacl.rt.destroy_context(c2)\n",
                      "aclrtMemcpyAsync"),
    "read_only_destination": ("acl.rt.memset(dev, 4096, 1, 4096)\n"
                              "acl.rt.memcpy(acl.util.bytes_to_ptr(b'A'), 1, dev, 1, D2H)\n",
                              "aclrtMemcpy"),
    "size_mismatch": ("desc = acl.create_tensor_desc(0, [8, 8], 2)\n"
                      "small, ret = acl.rt.malloc(64, NORMAL)\n"
                      "attr = acl.op.create_attr()\n"
                      "bufs = [acl.create_data_buffer(p, n) for p, n in ((small, 64), "
                      "(dev, 256), (dev, 256))]\n"
                      "acl.op.execute_v2('Add', [desc, desc], bufs[:2], [desc], bufs[2:], attr, "
                      "s1)\n", "aclopExecuteV2"),
    "deadlock": ("ev, ret = acl.rt.create_event_with_flag(1)\n"
                 "acl.rt.record_event(ev, s1)\nacl.rt.stream_wait_event(s2, ev)\n"
                 "acl.rt.reset_event(ev, s2)\nacl.rt.synchronize_stream(s2)\n"
                 "acl.rt.stream_wait_event(s1, ev)\n"
                 "try:\n    acl.rt.synchronize_stream(s1)\nexcept Exception:\n    pass\n",
                 "aclrtSynchronizeStream"),
}


def run_program(tmp_path: Path, body: str) -> list[Finding]:
    """PRELUDE + ``body`` run in a fresh Session; the findings of its trace."""
    return run_source(tmp_path, PRELUDE + textwrap.dedent(body) + END).findings


NAME = re.compile(r"(?<![\w.])acl(?:\.[A-Za-z_]\w*)+")


def missing_c_names(message: str) -> list[str]:
    """pyACL functions the message mentions whose C name it never gives."""
    return sorted({n for n in NAME.findall(message)
                   if (c := c_name_of(n)) and f"({c})" not in message
                   and f"{n} / {c}" not in message})


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", sorted(PROGRAMS))
def test_every_finding_kind_names_the_c_function(tmp_path: Path, kind: str) -> None:
    body, cname = PROGRAMS[kind]
    findings = run_program(tmp_path, body)
    mine = [f for f in findings if f.kind == kind]
    assert mine, "\n".join(str(f) for f in findings) or "(no findings)"
    assert any(cname in f.message for f in mine), mine[0].message
    for f in findings:
        assert not missing_c_names(f.message), (f.kind, missing_c_names(f.message), f.message)


def test_the_c_name_comes_from_the_binding_table() -> None:
    for name in ("acl.rt.malloc", "acl.rt.memcpy_async", "acl.mdl.execute", "acl.op.execute_v2"):
        assert c_name_of(name) == BY_NAME[name].cname
        assert api_name(name) == f"{name} ({BY_NAME[name].cname})"
    # Python-side helpers call no C function of their own: no C name
    assert c_name_of("acl.util.ptr_to_numpy") is None
    assert api_name("acl.util.ptr_to_numpy") == "acl.util.ptr_to_numpy"
    assert c_name_of("acl.rt.no_such_function") is None


def test_with_c_names_marks_the_first_mention_of_each_function() -> None:
    text = ("acl.rt.malloc at a.py:3 leaked. Fix: call acl.rt.free(ptr) after acl.rt.malloc; "
            "see (acl.rt.memcpy) and acl.util.ptr_to_numpy (acl.rt.memset, 8 bytes).")
    out = with_c_names(text)
    assert out == ("acl.rt.malloc (aclrtMalloc) at a.py:3 leaked. Fix: call acl.rt.free(ptr) "
                   "(aclrtFree) after acl.rt.malloc; see (acl.rt.memcpy / aclrtMemcpy) and "
                   "acl.util.ptr_to_numpy (acl.rt.memset / aclrtMemset, 8 bytes).")
    assert with_c_names(out) == out
    # a Finding applies it once, whatever path builds it
    f = BaseFinding("leak", "error", text)
    assert f.message == out
    assert BaseFinding("leak", "error", f.message).message == out
