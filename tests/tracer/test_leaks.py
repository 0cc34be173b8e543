"""Leak findings (``acl_lab.tracer.checks``): one finding per leaking line, none when clean."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from acl_lab.tracer.checks import Finding

from .programs import FOOTER, HEADER, Run, run_source

PRELUDE = """\
import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
"""


def run_program(tmp_path: Path, body: str) -> Run:
    """PRELUDE + ``body`` run in a fresh Session and checked (``programs.run_source``)."""
    return run_source(tmp_path, PRELUDE + textwrap.dedent(body))


def leaks_at(run: Run, mark: str) -> list[Finding]:
    """The leak findings reported at the marked line of the program."""
    return run.at(mark, "leak")


def describe(findings: list[Finding]) -> str:
    """One line per finding, for assertion messages."""
    return "\n".join(str(f) for f in findings)


# --------------------------------------------------------------------------- memory
def test_loop_leak_is_one_finding_with_count_and_size(tmp_path: Path) -> None:
    """Three device allocations leaked from one line in a loop give one finding there."""
    run = run_program(tmp_path, HEADER + """
MIB = 1 << 20
kept = []
for i in range(3):
    ptr, ret = acl.rt.malloc(MIB, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- leak
    assert ret == 0
    kept.append(ptr)
""" + FOOTER)
    found = leaks_at(run, "leak")
    assert len(found) == 1, describe(run.findings)
    f = found[0]
    assert re.search(r"\b3\b", f.message), f.message
    assert "3.0 MiB" in f.message or str(3 << 20) in f.message, f.message
    assert len(f.ids.get("allocs", ())) == 3
    assert len(f.calls) == 3
    assert f.severity in ("error", "warning")
    # Nothing else leaked.
    assert [x for x in run.findings if x is not f] == [], describe(run.findings)


def test_freed_memory_is_not_a_leak(tmp_path: Path) -> None:
    """Memory that is freed (and synchronised first) produces no finding."""
    run = run_program(tmp_path, HEADER + """
host, ret = acl.rt.malloc_host(4096)
assert ret == 0
for i in range(3):
    ptr, ret = acl.rt.malloc(4096, ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert acl.rt.memcpy_async(ptr, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.free(ptr) == 0
assert acl.rt.free_host(host) == 0
""" + FOOTER)
    assert run.findings == [], describe(run.findings)


def test_leaks_from_two_lines_are_two_findings(tmp_path: Path) -> None:
    """Leaks from different lines are reported separately, each at its own line."""
    run = run_program(tmp_path, HEADER + """
a, ret = acl.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- first
b, ret = acl.rt.malloc(200, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- second
""" + FOOTER)
    assert len(leaks_at(run, "first")) == 1
    assert len(leaks_at(run, "second")) == 1
    assert len(run.findings) == 2, describe(run.findings)


def test_pinned_host_memory_never_freed(tmp_path: Path) -> None:
    """malloc_host without free_host is a leak at the malloc_host line naming free_host."""
    run = run_program(tmp_path, HEADER + """
host, ret = acl.rt.malloc_host(8192)  # <- pinned
assert ret == 0
""" + FOOTER)
    found = leaks_at(run, "pinned")
    assert len(found) == 1, describe(run.findings)
    assert "free_host" in found[0].message
    assert len(run.findings) == 1, describe(run.findings)


def test_pinned_memory_leak_found_without_finalize(tmp_path: Path) -> None:
    """A program that ends without any teardown still gets its leaks reported at exit."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0  # <- device
host, ret = acl.rt.malloc_host(100)  # <- pinned
dev, ret = acl.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- dev
""")
    for mark in ("device", "pinned", "dev"):
        assert len(leaks_at(run, mark)) == 1, (mark, describe(run.findings))
    assert len(run.findings) == 3, describe(run.findings)


# --------------------------------------------------------------------------- objects
def test_stream_not_destroyed_before_destroy_context(tmp_path: Path) -> None:
    """A stream left alive when its context is destroyed is a leak at create_stream."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
assert ret == 0
stream, ret = acl.rt.create_stream()  # <- stream
assert ret == 0
assert acl.rt.destroy_context(ctx) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
""")
    found = leaks_at(run, "stream")
    assert len(found) == 1, describe(run.findings)
    assert "stream" in found[0].message
    assert "destroy_stream" in found[0].message
    assert len(run.findings) == 1, describe(run.findings)


def test_event_never_destroyed(tmp_path: Path) -> None:
    """An event never destroyed is a leak at its create_event line."""
    run = run_program(tmp_path, HEADER + """
event, ret = acl.rt.create_event()  # <- event
assert ret == 0
assert acl.rt.record_event(event, stream) == 0
assert acl.rt.synchronize_stream(stream) == 0
""" + FOOTER)
    found = leaks_at(run, "event")
    assert len(found) == 1, describe(run.findings)
    assert "event" in found[0].message and "destroy_event" in found[0].message
    assert len(run.findings) == 1, describe(run.findings)


def test_set_device_without_reset_device(tmp_path: Path) -> None:
    """set_device with no reset_device is a finding at the set_device line."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0  # <- set
stream, ret = acl.rt.create_stream()
assert ret == 0
assert acl.rt.destroy_stream(stream) == 0
assert acl.finalize() == 0
""")
    found = leaks_at(run, "set")
    assert len(found) == 1, describe(run.findings)
    assert "reset_device" in found[0].message
    assert len(run.findings) == 1, describe(run.findings)


def test_context_never_destroyed(tmp_path: Path) -> None:
    """An explicit context never destroyed is a leak at create_context."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)  # <- ctx
assert ret == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
""")
    found = leaks_at(run, "ctx")
    assert len(found) == 1, describe(run.findings)
    assert "destroy_context" in found[0].message
    assert len(run.findings) == 1, describe(run.findings)


# --------------------------------------------------------------------------- clean programs
def test_fully_clean_program_has_no_findings(tmp_path: Path) -> None:
    """init .. finalize with every resource released in order gives no findings at all."""
    run = run_program(tmp_path, """
import numpy as np

assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
assert ret == 0
stream, ret = acl.rt.create_stream()
assert ret == 0
data = np.arange(1024, dtype=np.float32)
nbytes = data.nbytes
dev, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
assert ret == 0
assert acl.rt.memcpy(dev, nbytes, acl.util.bytes_to_ptr(data.tobytes()), nbytes,
                     ACL_MEMCPY_HOST_TO_DEVICE) == 0
out = bytes(nbytes)
assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), nbytes, dev, nbytes,
                     ACL_MEMCPY_DEVICE_TO_HOST) == 0
assert np.array_equal(np.frombuffer(out, dtype=np.float32), data)
assert acl.rt.free(dev) == 0
assert acl.rt.destroy_stream(stream) == 0
assert acl.rt.destroy_context(ctx) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
""")
    assert run.findings == [], describe(run.findings)
    assert run.trace.findings() == []


def test_clean_program_with_default_context_has_no_findings(tmp_path: Path) -> None:
    """set_device's default context and stream need no destroy: no findings."""
    run = run_program(tmp_path, """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
host, ret = acl.rt.malloc_host(64)
assert ret == 0
dev, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
assert ret == 0
assert acl.rt.memcpy_async(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, 0) == 0
assert acl.rt.synchronize_stream(0) == 0
assert acl.rt.free(dev) == 0
assert acl.rt.free_host(host) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
""")
    assert run.findings == [], describe(run.findings)


# --------------------------------------------------------------------------- Finding API
def test_finding_html_names_kind_and_site(tmp_path: Path) -> None:
    """``Finding._repr_html_`` returns HTML with the kind and file:line."""
    run = run_program(tmp_path, HEADER + """
ptr, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- leak
""" + FOOTER)
    (f,) = leaks_at(run, "leak")
    page = f._repr_html_()
    assert isinstance(page, str)
    assert page.lstrip().startswith("<")
    assert "leak" in page
    assert f"{run.path}:{run.marks['leak']}" in page
    assert "<script" not in page.lower()


def test_finding_summary_has_exactly_the_schema(tmp_path: Path) -> None:
    """``to_summary()`` has exactly kind, severity, message, file, line with the right types."""
    run = run_program(tmp_path, HEADER + """
ptr, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- leak
""" + FOOTER)
    (f,) = leaks_at(run, "leak")
    summary = f.to_summary()
    assert set(summary) == {"kind", "severity", "message", "file", "line"}
    assert summary["kind"] == "leak"
    assert summary["severity"] in ("error", "warning", "info")
    assert isinstance(summary["message"], str) and summary["message"]
    assert Path(summary["file"]) == run.path
    assert summary["line"] == run.marks["leak"] and type(summary["line"]) is int


def test_finding_html_escapes_the_message() -> None:
    """Text from the program is escaped in the HTML, never injected."""
    f = Finding("leak", "warning", "a <b>bold</b> & <script>x</script> claim", "p<1>.py", 3)
    page = f._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "p&lt;1&gt;.py:3" in page
