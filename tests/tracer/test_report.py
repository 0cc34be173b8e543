"""The offline HTML report (``views.report``) and ``acl-lab report``, asserted on the HTML text.

No browser here: these tests check what the file contains (the plotly.js bundle once, one
``Plotly.newPlot`` per figure, the findings with their file:line, no network scripts).
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from plotly.offline import get_plotlyjs

from acl_lab import DeadlockError
from acl_lab.cli import main
from acl_lab.constants import (
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views import report as report_mod
from acl_lab.tracer.views.report import report_html, write_report
from tests.helpers import ok, snapshot

pytestmark = pytest.mark.timeout(60)

N = 4096
PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
#: The version banner at the top of the bundle: present once per embedded copy.
BANNER = "plotly.js v" + get_plotlyjs()[:500].split("plotly.js v", 1)[1].split()[0]




def views(page: str) -> list[str]:
    """The ``data-view`` name of every figure container, in page order."""
    return re.findall(r'<div class="figure" data-view="(\w+)">', page)


def check_offline(page: str) -> None:
    """One plotly.js bundle, inline; no script, stylesheet or frame loaded from anywhere."""
    assert page.count(BANNER) == 1
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"<(link|iframe|img)[^>]*(href|src)\s*=\s*[\"']?https?://", page,
                         re.I)
    assert not re.search(r"src\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert "@import" not in page


def leak_and_race(acl: ModuleType, session: Session) -> Trace:
    """Copy A->B on stream 1 and B->C on stream 2 without an event (a race); nothing freed."""
    host = ok(acl.rt.malloc_host(N))
    a, b, c = (ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3))
    assert acl.rt.memcpy(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    assert acl.rt.memcpy_async(b, N, a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s1) == ACL_SUCCESS
    assert acl.rt.memcpy_async(c, N, b, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == ACL_SUCCESS
    acl.rt.synchronize_stream(s1)
    acl.rt.synchronize_stream(s2)
    return session.trace()


# ----------------------------------------------------------------------------- leak + race
def test_report_of_a_leak_and_a_race(ready: ModuleType, session: Session) -> None:
    """Finding cards with kind and file:line, grouped by severity; one bundle; a figure per
    view (race view, timeline, memory map, overlap), each with its own Plotly.newPlot."""
    trace = leak_and_race(ready, session)
    found = trace.findings()
    kinds = {f.kind for f in found}
    assert {"leak", "race"} <= kinds
    before = snapshot(trace)
    page = report_html(trace)
    assert snapshot(trace) == before  # the trace is only read
    check_offline(page)
    for f in found:
        assert f"data-kind=\"{f.kind}\"" in page
        assert f"{html.escape(f.file)}:{f.line}" in page
    assert {f.kind for f in found if f.file == __file__} == {"leak", "race"}
    races = [f for f in found if f.kind == "race"]
    assert views(page) == ["race_view"] * len(races) + ["timeline", "memory_map", "overlap"]
    assert page.count("Plotly.newPlot(") == len(views(page)) == 3 + len(races)
    assert page.count('class="plotly-graph-div"') == len(views(page))
    # grouped by severity: every error card before every warning card
    sev = re.findall(r'<div class="finding" data-kind="\w+" data-severity="(\w+)"', page)
    assert len(sev) == len(found)
    assert sev == sorted(sev, key=("error", "warning", "info").index)
    # a race card is followed by its race view, before the next card
    for card in page.split('<div class="finding"')[1:]:
        is_race = card.startswith(' data-kind="race"')
        assert ('data-view="race_view"' in card) == is_race
    # the header: stats of the trace
    st = trace.stats()
    assert f"<th>API calls</th><td>{st['api_calls']:,}</td>" in page
    assert f"<th>tasks</th><td>{st['tasks']:,}</td>" in page
    assert "peak device memory" in page and "virtual time" in page
    assert "Ascend310P3" in page
    # the timeline marks the findings
    assert "finding: error" in page


def test_write_report_and_summary_header(ready: ModuleType, session: Session,
                                         tmp_path: Path) -> None:
    """``write_report`` writes ``report_html`` (deterministic) with the run in the header."""
    trace = leak_and_race(ready, session)
    out = tmp_path / "r.html"
    summary = {"program": "prog <1>.py", "profile": "Ascend910B", "exit_code": 3,
               "error": "SampleFailure: bad & worse"}
    write_report(trace, out, title="My <run>", summary=summary)
    page = out.read_text(encoding="utf-8")
    assert page == report_html(trace, title="My <run>", summary=summary)
    assert "<title>My &lt;run&gt;</title>" in page
    assert "prog &lt;1&gt;.py" in page and "Ascend910B" in page
    assert '<span class="exit-bad">3</span>' in page
    assert "SampleFailure: bad &amp; worse" in page
    check_offline(page)


def test_finding_figures_are_capped(ready: ModuleType, session: Session,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond ``MAX_FINDING_FIGURES`` a race is listed with a note instead of its view."""
    trace = leak_and_race(ready, session)
    monkeypatch.setattr(report_mod, "MAX_FINDING_FIGURES", 0)
    page = report_html(trace)
    assert "race_view" not in views(page)
    assert "race_view not drawn" in page
    assert views(page) == ["timeline", "memory_map", "overlap"]


# ----------------------------------------------------------------------------- deadlock
def test_report_of_a_deadlock_has_the_wait_graph(ready: ModuleType, session: Session) -> None:
    """A wait queued after a reset: the deadlock card, then its wait-for graph."""
    event = ok(ready.rt.create_event_with_flag(ACL_EVENT_SYNC))
    s1, s2, s3 = (ok(ready.rt.create_stream()) for _ in range(3))
    ready.rt.record_event(event, s1)
    ready.rt.synchronize_stream(s1)
    ready.rt.reset_event(event, s3)
    ready.rt.synchronize_stream(s3)
    ready.rt.stream_wait_event(s2, event)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(s2)
    trace = session.trace()
    before = snapshot(trace)
    page = report_html(trace, summary={"exit_code": 1, "error": "DeadlockError: stuck"})
    assert snapshot(trace) == before
    check_offline(page)
    (dead,) = [f for f in trace.findings() if f.kind == "deadlock"]
    assert f"{html.escape(dead.file)}:{dead.line}" in page
    assert views(page)[0] == "wait_graph" and views(page).count("wait_graph") == 1
    assert {"timeline", "memory_map", "overlap"} <= set(views(page))
    assert page.count("Plotly.newPlot(") == len(views(page))
    assert "Deadlock at" in page  # the wait graph's title
    assert "DeadlockError: stuck" in page


# ----------------------------------------------------------------------------- clean
def test_report_of_a_clean_program_says_no_findings(ready: ModuleType,
                                                    session: Session) -> None:
    """Everything released in order: "No findings", and still the three trace views."""
    stream = ok(ready.rt.create_stream())
    dev = ok(ready.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
    host = ok(ready.rt.malloc_host(N))
    assert ready.rt.memcpy_async(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.rt.free(dev) == ACL_SUCCESS
    assert ready.rt.free_host(host) == ACL_SUCCESS
    assert ready.rt.destroy_stream(stream) == ACL_SUCCESS
    assert ready.rt.reset_device(0) == ACL_SUCCESS
    assert ready.finalize() == ACL_SUCCESS
    trace = session.trace()
    assert trace.findings() == []
    before = snapshot(trace)
    page = report_html(trace, summary={"exit_code": 0})
    assert snapshot(trace) == before
    check_offline(page)
    assert "Findings (0)" in page and 'class="no-findings"' in page and "No findings" in page
    assert '<div class="finding"' not in page
    assert views(page) == ["timeline", "memory_map", "overlap"]
    assert page.count("Plotly.newPlot(") == 3
    assert '<span class="exit-ok">0</span>' in page


def test_report_of_an_empty_trace(session: Session) -> None:
    """A program that made no call still gets a page (views that cannot draw become notes)."""
    page = report_html(session.trace())
    check_offline(page)
    assert "No findings" in page
    assert page.count("Plotly.newPlot(") == len(views(page))


# ----------------------------------------------------------------------------- CLI
def test_cli_report_writes_the_page(tmp_path: Path, ready: ModuleType, session: Session,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``acl-lab report TRACE -o FILE``: exit 0 and the page; ``-o`` defaults to TRACE.html."""
    trace = leak_and_race(ready, session)
    path = tmp_path / "run.acltrace"
    trace.save(path)
    out = tmp_path / "page.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    check_offline(page)
    assert 'data-kind="race"' in page and "race_view" in views(page)
    assert f"wrote {out}" in capsys.readouterr().err
    assert main(["report", str(path), "--title", "T"]) == 0
    assert "<title>T</title>" in (tmp_path / "run.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("content", [None, "not json", '{"format": "other"}'],
                         ids=["missing", "not-json", "wrong-format"])
def test_cli_report_of_a_bad_trace_exits_2(tmp_path: Path, content: str | None,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A missing or invalid trace file: exit 2, one readable line, no page, no traceback."""
    bad = tmp_path / "bad.acltrace"
    if content is not None:
        bad.write_text(content)
    out = tmp_path / "page.html"
    assert main(["report", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acl-lab report: ") and "Traceback" not in err
    assert not out.exists()


def test_run_without_report_does_not_import_plotly(tmp_path: Path) -> None:
    """``acl-lab run`` without ``--report`` keeps plotly unloaded; with it, loads it."""
    code = ("import sys; from acl_lab.cli import main; "
            "rc = main(sys.argv[1:]); "
            "print(rc, any(m.startswith('plotly') for m in sys.modules))")
    prog = str(PROGRAMS / "two_stream_event_75.py")
    plain = subprocess.run([sys.executable, "-c", code, "run", "--quiet", prog],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert plain.stdout.strip().splitlines()[-1] == "0 False", plain.stderr
    report = tmp_path / "r.html"
    with_report = subprocess.run(
        [sys.executable, "-c", code, "run", "--quiet", "--report", str(report), prog],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert with_report.stdout.strip().splitlines()[-1] == "0 True", with_report.stderr
    assert report.exists()
