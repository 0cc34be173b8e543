"""The ``%%acl_cpp`` cell magic compiles a C++ cell, runs it traced and shows its findings."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

CELL = """#include "acl/acl.h"
#include <cstdio>
int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    void *p = nullptr;
    aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST);
    std::printf("allocated\\n");
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> InteractiveShell:
    monkeypatch.chdir(tmp_path)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "acl_lab.capi")
    return ip


def test_cell_magic_runs_the_cell_and_finds_its_leak(libascendcl: Path,
                                                     shell: InteractiveShell) -> None:
    run = shell.run_cell_magic("acl_cpp", "--name leaky", CELL)
    assert run.compiled and run.exit_code == 0, run.stderr
    assert run.stdout == "allocated\n"
    assert run.source.name == "leaky.cpp"
    assert shell.user_ns["acl_cpp_run"] is run
    names = [run.trace.call_name(c) for c in range(run.trace.calls.rows)]
    assert names[:5] == ["acl.init", "acl.rt.set_device", "acl.rt.malloc",
                         "acl.rt.reset_device", "acl.finalize"]
    leaks = [f for f in run.findings() if f.kind == "leak"]
    assert [(f.file, f.line) for f in leaks] == [(str(run.source), 7)]
    page = run._repr_html_()
    assert "leaky.cpp" in page and "allocated" in page and "leak" in page
    table = run.call_table().data[0]
    cells = dict(zip([str(h) for h in table.header.values], table.cells.values, strict=True))
    assert list(cells["API (C name)"])[:3] == [
        "acl.init (aclInit)", "acl.rt.set_device (aclrtSetDevice)", "acl.rt.malloc (aclrtMalloc)"]
    assert list(cells["file:line"])[:3] == ["leaky.cpp:4", "leaky.cpp:5", "leaky.cpp:7"]


def test_cell_magic_shows_a_compile_error(libascendcl: Path, shell: InteractiveShell) -> None:
    run = shell.run_cell_magic("acl_cpp", "--name broken",
                               '#include "acl/acl.h"\nint main() { aclrtNoSuch(); }\n')
    assert not run.compiled and run.trace is None
    assert "aclrtNoSuch" in run._repr_html_()


def test_a_run_that_leaves_no_trace_says_why(libascendcl: Path, shell: InteractiveShell) -> None:
    """A program that dies after its first ACL call leaves no trace: the page and the call
    table name its exit status and error output instead of failing on a missing trace."""
    run = shell.run_cell_magic("acl_cpp", "--name dies", """#include "acl/acl.h"
#include <cstdlib>
int main() { aclInit(nullptr); std::abort(); }
""")
    assert run.compiled and run.trace is None and run.exit_code != 0
    assert "without writing its trace" in run.stderr
    assert "without writing its trace" in run._repr_html_()
    with pytest.raises(RuntimeError, match=r"dies\.cpp left no trace \(exit status"):
        run.call_table()
