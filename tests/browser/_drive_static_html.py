"""Driver: open a static HTML page (nbconvert's export of an executed notebook) from a local
server in headless Chromium with every request off this machine blocked, and count the
Plotly figures that drew.

``python -m tests.browser._drive_static_html PAGE.html --result OUT.json [--screenshot PNG]``
"""

from __future__ import annotations

import argparse
import functools
import http.server
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.browser._browser import Log, is_local, launch, watched_page, write_result


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def main() -> None:
    """Serve the page's folder, open the page offline, count drawn figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("page", type=Path)
    ap.add_argument("--result", required=True)
    ap.add_argument("--screenshot")
    ap.add_argument("--expect", type=int, required=True, help="figures the page should draw")
    opts = ap.parse_args()
    log = Log()
    handler = functools.partial(_Quiet, directory=str(opts.page.resolve().parent))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    result: dict[str, Any] = {"page_errors": [], "console_errors": [], "external_requests": []}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            try:
                page = watched_page(browser, base, result, height=1200, timeout_s=120)
                page.route("**/*", lambda route: route.continue_()
                           if is_local(route.request.url, base) else route.abort())
                page.goto(base + opts.page.name)
                try:
                    page.wait_for_function(
                        "(n) => document.querySelectorAll('.js-plotly-plot .main-svg').length"
                        " >= n", arg=opts.expect, timeout=90_000, polling=250)
                except Exception as e:  # reported, asserted by the test
                    result["wait_error"] = str(e)[:500]
                result["figures"] = page.evaluate("""() => [...document.querySelectorAll(
                    '.js-plotly-plot')].map(d => ({id: d.id,
                    traces: (d.data || []).length,
                    svg: d.querySelectorAll('.main-svg').length,
                    width: d.getBoundingClientRect().width}))""")
                result["plotly_defined"] = page.evaluate("() => typeof window.Plotly")
                log(f"{len(result['figures'])} figures drawn")
                if opts.screenshot:
                    page.screenshot(path=opts.screenshot, full_page=False)
            finally:
                browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    write_result(opts.result, result)


if __name__ == "__main__":
    main()
