"""Open an ``acl-lab report`` HTML page in headless Chromium and record what rendered.

Usage: ``python -m tests.browser._drive_report REPORT.html --screenshot PNG --result JSON``

Serves the report's folder from a local ``http.server`` on 127.0.0.1, opens the page, waits
until every ``.js-plotly-plot`` has its traces (as many plots as ``data-view`` divs), then
writes to the result file: each view's name and trace count, the JavaScript errors
(``pageerror`` and console errors), every request URL and those that left 127.0.0.1 (they
are aborted, so an offline page cannot pass by luck), and the screenshot's path. The
assertions are the test's (``test_report_browser.py``); exit status 1 means the driver
itself could not finish.
"""

from __future__ import annotations

import argparse
import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from tests.browser._browser import Log, is_local, launch, write_result

#: Every plot has traces, and there are as many plots as data-view divs.
PLOTS_READY_JS = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const views = document.querySelectorAll('[data-view]').length;
  return views > 0 && plots.length === views
         && plots.every(p => Array.isArray(p.data) && p.data.length > 0 && !!p._fullLayout);
}"""

#: One record per data-view div: the view's name and what Plotly drew inside it.
VIEWS_JS = """() => [...document.querySelectorAll('[data-view]')].map(v => {
  const p = v.querySelector('.js-plotly-plot');
  return {view: v.dataset.view, id: p ? p.id : null,
          traces: p && Array.isArray(p.data) ? p.data.length : 0,
          full_traces: p && p._fullData ? p._fullData.length : 0,
          svg: p ? p.querySelectorAll('svg.main-svg').length : 0,
          width: p ? p.getBoundingClientRect().width : 0,
          height: p ? p.getBoundingClientRect().height : 0};
})"""

#: Plots that are not inside a data-view div (e.g. drawn into another element of that id).
STRAY_PLOTS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(p => !p.closest('[data-view]'))
  .map(p => `<${p.tagName.toLowerCase()} id=${p.id}>`)"""


class _QuietHandler(SimpleHTTPRequestHandler):
    """A static file handler that does not log every request to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        """Drop the access log."""


def main() -> None:
    """Serve the report, render it in Chromium, write what was seen to ``--result``."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("report", type=Path)
    ap.add_argument("--screenshot", type=Path, required=True)
    ap.add_argument("--result", type=Path, required=True)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per wait")
    a = ap.parse_args()
    log = Log()

    handler = functools.partial(_QuietHandler, directory=str(a.report.parent))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    url = base + a.report.name
    result: dict[str, Any] = {"url": url, "page_errors": [], "console_errors": [],
                              "requests": [], "external_requests": []}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(a.timeout * 1000)
                page.on("pageerror", lambda e: result["page_errors"].append(str(e)))
                page.on("console", lambda m: m.type == "error"
                        and result["console_errors"].append(m.text))
                page.on("request", lambda r: result["requests"].append(r.url))

                def guard(route: Any) -> None:
                    """Let local requests through; record and abort anything else."""
                    if is_local(route.request.url, base):
                        route.continue_()
                    else:
                        result["external_requests"].append(route.request.url)
                        route.abort()

                page.route("**/*", guard)
                page.goto(url, wait_until="load")
                log(f"report loaded from {url} (Chromium {browser.version})")
                try:
                    page.wait_for_function(PLOTS_READY_JS)
                    result["ready"] = True
                except PlaywrightError as e:
                    result["ready"] = False
                    result["wait_error"] = str(e).splitlines()[0]
                result["views"] = page.evaluate(VIEWS_JS)
                result["stray_plots"] = page.evaluate(STRAY_PLOTS_JS)
                result["plot_count"] = page.locator(".js-plotly-plot").count()
                result["view_count"] = page.locator("[data-view]").count()
                result["title"] = page.title()
                log(f"{result['plot_count']} plots, {result['view_count']} views")
                page.screenshot(path=str(a.screenshot), full_page=True)
                result["screenshot"] = str(a.screenshot)
                log(f"screenshot -> {a.screenshot}")
            finally:
                browser.close()
    finally:
        server.shutdown()
        write_result(a.result, result)


if __name__ == "__main__":
    main()
