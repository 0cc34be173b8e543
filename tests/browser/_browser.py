"""What the browser drivers share: how to launch Debian's Chromium, and small utilities.

Imported by the driver scripts (``python -m tests.browser._drive_report`` ...), which pytest
runs as subprocesses: Playwright's sync API refuses to run inside a running asyncio loop, and
a subprocess can be killed as a whole when it hangs. Never ``playwright install``: the
system Chromium is launched through ``executable_path`` (see ``tests/browser/conftest.py``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Debian's chromium (``make chromium`` installs it); ``ACL_LAB_CHROMIUM`` overrides it.
CHROMIUM = os.environ.get("ACL_LAB_CHROMIUM", "/usr/bin/chromium")

#: Headless, no sandbox (root in CI), and nothing that talks to the network on its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

#: ``run_driver(module, *args, timeout=s)``: the JSON a driver wrote (conftest fixture).
Driver = Callable[..., dict[str, Any]]

#: URL schemes a page may use without touching the network.
LOCAL_SCHEMES = ("data:", "blob:", "about:")


class Log:
    """Timestamped progress lines on stdout (pytest shows them when a test fails)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        """Print ``msg`` with the seconds since this log was made."""
        print(f"[{time.perf_counter() - self.t0:6.2f}s] {msg}", flush=True)


def launch(playwright: Any) -> Any:
    """Launch the system Chromium headless (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def is_local(url: str, base: str) -> bool:
    """Whether a request to ``url`` stays on this machine (``base``, file:, data:, ...)."""
    return url.startswith((base, "file:", *LOCAL_SCHEMES))


def watched_page(browser: Any, base: str, result: dict[str, Any], *, height: int,
                 timeout_s: float) -> Any:
    """A new page whose JavaScript errors, console errors and requests that leave the
    machine are collected into ``result`` (keys ``page_errors``, ``console_errors``,
    ``external_requests``)."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    page.set_default_timeout(timeout_s * 1000)
    page.on("pageerror", lambda e: result["page_errors"].append(str(e)))
    page.on("console", lambda m: m.type == "error" and result["console_errors"].append(m.text))
    page.on("request", lambda r: None if is_local(r.url, base)
            else result["external_requests"].append(r.url))
    return page


def write_result(path: str | os.PathLike[str], result: dict[str, Any]) -> None:
    """Write the driver's findings as JSON for the pytest side to assert on."""
    Path(path).write_text(json.dumps(result, indent=1, default=str))


def fail(msg: str) -> None:
    """Report a driver-side failure on stderr and exit with status 1."""
    print(f"DRIVER FAILURE: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)
