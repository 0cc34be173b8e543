"""The offline HTML report in a real browser (headless Debian Chromium, Python Playwright).

A program with a leak and a race runs in a Session; its trace is saved and turned into a
report by ``acl-lab report TRACE -o OUT``; the page is served from 127.0.0.1 and opened in
Chromium (``_drive_report.py``, in a subprocess). Checked: every plot rendered with traces,
one plot per ``data-view`` div, no JavaScript error, no request leaving the machine, and a
screenshot in ``test-artifacts/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acl_lab.cli import main as acl_lab_main
from tests.browser._browser import Driver
from tests.browser._buggy_program import run_traced

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def test_report_renders_offline_in_chromium(tmp_path: Path, run_driver: Driver,
                                            artifacts: Path) -> None:
    """All figures of a leak-and-race report render in Chromium, with no JavaScript error
    and no network request beyond the local server."""
    trace = run_traced()
    assert {f.kind for f in trace.findings()} >= {"leak", "race"}
    saved = tmp_path / "run.acltrace"
    trace.save(saved)
    report = tmp_path / "report.html"
    assert acl_lab_main(["report", str(saved), "-o", str(report)]) == 0
    html = report.read_text(encoding="utf-8")
    assert 'data-view="race_view"' in html and 'data-view="timeline"' in html

    shot = artifacts / "report-browser.png"
    seen = run_driver("_drive_report", str(report), "--screenshot", str(shot), timeout=120)

    assert seen["page_errors"] == [], "JavaScript errors on the report page"
    assert seen["console_errors"] == [], "console errors on the report page"
    assert seen["external_requests"] == [], "the report fetched something from the network"
    assert seen["requests"] and all(u.startswith(seen["url"].rsplit("/", 1)[0])
                                    for u in seen["requests"])
    assert seen["ready"], f"the plots did not all render: {seen.get('wait_error')}"
    views = seen["views"]
    assert seen["plot_count"] == seen["view_count"] == len(views) > 0
    names = [v["view"] for v in views]
    for name in ("race_view", "timeline", "memory_map", "overlap"):
        assert name in names, f"no {name} figure in the page ({names})"
    assert seen["stray_plots"] == [], (
        "plots drawn outside their data-view div (a duplicate element id?)")
    for v in views:
        assert v["id"], f"no .js-plotly-plot inside the {v['view']} div: {v}"
        assert v["traces"] > 0 and v["full_traces"] > 0, f"{v['view']} has no traces: {v}"
        assert v["svg"] > 0 and v["width"] > 100 and v["height"] > 100, f"not drawn: {v}"
    assert Path(seen["screenshot"]).stat().st_size > 10_000
