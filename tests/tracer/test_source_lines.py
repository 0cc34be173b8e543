"""A trace keeps the text of the source lines it cites, so one opened from another folder (or
after the program was deleted) still shows them in the explorer's source pane."""

from __future__ import annotations

import json
import linecache
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from acl_lab.tracer.sources import SOURCE_CONTEXT, SOURCE_LINES, stored_sources
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.widgets import finding_html, source_lines

pytestmark = pytest.mark.timeout(120)

PROGRAM = textwrap.dedent("""\
    import acl
    acl.init()
    acl.rt.set_device(0)
    # a comment line above the leak
    leaked, ret = acl.rt.malloc(4096, 2)  # THE LEAKING LINE
    acl.rt.reset_device(0)
    acl.finalize()
""")


@pytest.fixture
def moved_trace(tmp_path: Path) -> Path:
    """A trace of PROGRAM, run in one folder; the program is then deleted."""
    work = tmp_path / "work"
    work.mkdir()
    prog = work / "leaky.py"
    prog.write_text(PROGRAM)
    out = tmp_path / "elsewhere" / "leaky.acltrace"
    out.parent.mkdir()
    run = subprocess.run([sys.executable, "-m", "acl_lab.cli", "run", "--quiet", "--trace",
                          str(out), str(prog)], cwd=work, capture_output=True, text=True,
                         timeout=100)
    assert run.returncode == 0, run.stderr
    prog.unlink()
    linecache.checkcache()
    return out


def test_trace_stores_cited_lines(moved_trace: Path) -> None:
    """Each call site's line and SOURCE_CONTEXT lines around it are in the saved trace."""
    trace = Trace.load(moved_trace)
    assert isinstance(trace.meta[SOURCE_LINES], str)
    stored = stored_sources(trace)
    (file,) = [f for f in stored if f.endswith("leaky.py")]
    lines = PROGRAM.splitlines()
    for n, text in stored[file].items():
        assert text == lines[n - 1]
    sites = {int(trace.calls["line"][c]) for c in range(trace.calls.rows)
             if trace.call_site(c)[0] == file}
    for line in sites:
        for n in range(max(line - SOURCE_CONTEXT, 1), min(line + SOURCE_CONTEXT,
                                                          len(lines)) + 1):
            assert n in stored[file], (line, n)
    assert json.loads(trace.meta[SOURCE_LINES])  # one JSON document


def test_explorer_shows_lines_of_a_deleted_program(moved_trace: Path) -> None:
    """The program file is gone; the leak finding's source pane still shows its line."""
    trace = Trace.load(moved_trace)
    (leak,) = [f for f in trace.findings() if f.kind == "leak"]
    assert not Path(leak.file).exists()
    assert source_lines(leak.file, leak.line) == []  # nothing on disk
    html = finding_html(trace, leak)
    assert "THE LEAKING LINE" in html
    assert "a comment line above the leak" in html
    assert "source not available" not in html.split("THE LEAKING LINE")[0]
