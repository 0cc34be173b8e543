"""Locations a learner can follow: a notebook cell is named ``cell In[n]``, never its temp file."""

from __future__ import annotations

import linecache
from collections.abc import Iterator
from typing import Any

import pytest

from acl_lab.tracer import sites
from acl_lab.tracer.sources import stored_sources
from acl_lab.tracer.views import call_table

IPython = pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

PROGRAM = """\
with Session() as s:
    acl.init()
    acl.rt.set_device(0)
    p, ret = acl.rt.malloc(64, 0)
    t = s.trace()
"""


@pytest.fixture
def shell() -> Iterator[Any]:
    ip = InteractiveShell.instance()
    try:
        yield ip
    finally:
        InteractiveShell.clear_instance()


def _run(ip: Any, code: str) -> int:
    res = ip.run_cell(code, store_history=True)
    assert res.error_in_exec is None, res.error_in_exec
    return int(res.execution_count)


def test_a_cell_is_recorded_as_its_execution_count(shell: Any) -> None:
    _run(shell, "import acl_lab\nacl_lab.install()\nimport acl\nfrom acl_lab import Session")
    n = _run(shell, PROGRAM)
    trace = shell.user_ns["t"]
    cell = f"cell In[{n}]"
    malloc = int(trace.calls_named("acl.rt.malloc")[0])
    assert trace.call_site(malloc) == (cell, 4)
    assert not any("ipython-input" in s or "ipykernel_" in s for s in trace.strings)
    # the finding and its message name the cell and the line
    leak = next(f for f in trace.findings() if f.kind == "leak" and f.severity == "error")
    assert leak.file == cell and leak.line == 4
    assert f"{cell}:4 (acl.rt.malloc / aclrtMalloc)" in leak.message
    # the cell's lines are found under the new name (the explorer's source pane, stored lines)
    assert linecache.getline(cell, 4).strip() == "p, ret = acl.rt.malloc(64, 0)"
    assert stored_sources(trace)[cell][4].strip() == "p, ret = acl.rt.malloc(64, 0)"
    # the call table's site column keeps the whole name and the line
    cols = dict(zip(call_table(trace).data[0].header.values,
                    call_table(trace).data[0].cells.values, strict=True))
    assert cols["file:line"][malloc] == f"{cell}:4"


def test_an_ipykernel_cell_file_is_named_by_the_shell(shell: Any) -> None:
    # ipykernel compiles a cell under <tmp>/ipykernel_<pid>/<hash>.py and keeps the
    # execution count in the compiler's map, as IPython's own compiler does
    name = "/tmp/ipykernel_4242/59787737.py"
    shell.compile._filename_map[name] = 7
    linecache.cache[name] = (10, None, ["x = 1\n", "y = 2\n"], name)
    try:
        assert sites.cell_name(name) == "cell In[7]"
        assert sites.format_site(name, 2) == "cell In[7]:2"
        assert linecache.getline("cell In[7]", 2) == "y = 2\n"
    finally:
        del shell.compile._filename_map[name], linecache.cache[name]
        linecache.cache.pop("cell In[7]", None)


def test_outside_a_notebook_files_are_kept() -> None:
    assert InteractiveShell.initialized() is False
    assert sites.cell_name("/some/dir/prog.py") == "/some/dir/prog.py"
    assert sites.format_site("/some/dir/prog.py", 12) == "/some/dir/prog.py:12"
    assert sites.format_site("/some/dir/prog.py", 12, short=True) == "prog.py:12"
    assert sites.format_site("ex.ipynb[cell 3]", 5, short=True) == "ex.ipynb[cell 3]:5"
    assert sites.format_site("prog.py", 0) == "prog.py"
    assert sites.format_site("", 0) == "?"


def test_a_warning_from_a_cell_names_the_cell(shell: Any) -> None:
    """pyACL's deprecation warning for numpy_to_ptr blames the cell's line, as ``cell In[n]``."""
    import warnings

    _run(shell, "import acl_lab\nacl_lab.install()\nimport acl\nfrom acl_lab import Session\n"
                "import numpy as np")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        n = _run(shell, "with Session() as s:\n    acl.init()\n"
                        "    p = acl.util.numpy_to_ptr(np.zeros(4))\n")
    (w,) = [w for w in got if "numpy_to_ptr will be deprecated" in str(w.message)]
    assert (w.filename, w.lineno) == (f"cell In[{n}]", 3)


def test_a_deadlock_raised_in_a_cell_names_the_cell(shell: Any) -> None:
    """DeadlockError's explanation (and its stacks) name the cell, not its compiled file."""
    _run(shell, "import acl_lab\nacl_lab.install()\nimport acl\nfrom acl_lab import Session")
    code = ("s = Session(watchdog=2.0)\ns.__enter__()\nacl.init()\nacl.rt.set_device(0)\n"
            "s1, _ = acl.rt.create_stream()\ns2, _ = acl.rt.create_stream()\n"
            "ev, _ = acl.rt.create_event()\nacl.rt.record_event(ev, s1)\n"
            "acl.rt.synchronize_stream(s1)\nacl.rt.reset_event(ev, s1)\n"
            "acl.rt.synchronize_stream(s1)\nacl.rt.stream_wait_event(s2, ev)\n"
            "try:\n    acl.rt.synchronize_stream(s2)\nexcept acl_lab.DeadlockError as e:\n"
            "    err = e\n")
    n = _run(shell, code)
    err = shell.user_ns["err"]
    try:
        text = str(err)
        assert f"cell In[{n}]:14" in text
        assert "ipython-input" not in text and "ipykernel_" not in text
    finally:
        shell.user_ns["s"].__exit__(None, None, None)
