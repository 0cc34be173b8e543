"""Driver: load a Chrome JSON trace in speedscope (npm ``speedscope``, installed by the
Makefile into ``.cache/npm``) through ``#profileURL=`` in headless Chromium.

``python -m tests.browser._drive_speedscope TRACE.json --result OUT.json [--screenshot PNG]``

speedscope turns each ``X`` into a begin and an end at ``ts + dur`` (JavaScript doubles) and
warns on the console when an end does not match the frame on top of its stack ("Tried to
end ...") or a frame stays open ("... was still open at end of profile"): the nesting
problems a float-summed ``ts + dur`` causes. Reported: every console message, the nesting
warnings among them, and whether the profile loaded (the page title names the file).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.browser._browser import Log, fail, launch, watched_page, write_result
from tests.browser._drive_perfetto import free_port

REPO = Path(__file__).resolve().parents[2]
#: Where ``make speedscope`` installs the npm package (``ACL_LAB_SPEEDSCOPE`` overrides).
SPEEDSCOPE = Path(os.environ.get(
    "ACL_LAB_SPEEDSCOPE", REPO / ".cache" / "npm" / "node_modules" / "speedscope"))
NESTING_WARNINGS = ("Tried to end", "was still open at end of profile")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def main() -> None:
    """Serve speedscope and the trace from one temporary folder; load; collect warnings."""
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--result", required=True)
    ap.add_argument("--screenshot")
    opts = ap.parse_args()
    log = Log()
    release = SPEEDSCOPE / "dist" / "release"
    if not (release / "index.html").is_file():
        fail(f"speedscope is not installed at {SPEEDSCOPE} (run `make speedscope`)")
    result: dict[str, Any] = {"page_errors": [], "console_errors": [], "external_requests": [],
                              "console": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "site"
        shutil.copytree(release, root)
        shutil.copy(opts.trace, root / "trace.json")
        port = free_port()
        handler = functools.partial(_Quiet, directory=str(root))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{port}/"
        try:
            with sync_playwright() as p:
                browser = launch(p)
                try:
                    page = watched_page(browser, base, result, height=900, timeout_s=180)
                    page.on("console", lambda m: result["console"].append(
                        [m.type, m.text[:500]]))
                    page.goto(f"{base}index.html#profileURL={base}trace.json")
                    page.wait_for_function("() => document.title.includes('trace.json')",
                                           timeout=180_000, polling=250)
                    page.wait_for_timeout(500)  # let the flame chart draw
                    result["title"] = page.title()
                    log(f"loaded: {result['title']}")
                    if opts.screenshot:
                        page.screenshot(path=opts.screenshot)
                finally:
                    browser.close()
        finally:
            httpd.shutdown()
            httpd.server_close()
    result["nesting_warnings"] = [t for _, t in result["console"]
                                  if any(w in t for w in NESTING_WARNINGS)]
    log(f"{len(result['console'])} console messages, "
        f"{len(result['nesting_warnings'])} nesting warnings")
    write_result(opts.result, result)


if __name__ == "__main__":
    main()
