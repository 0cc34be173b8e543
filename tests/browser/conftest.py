"""Fixtures of the real-browser tests: Chromium present, the artifacts folder, drivers.

The tests run inside the normal ``make test`` pytest run, which installs Debian's chromium
first (``make chromium``); without it they fail with a message saying so, never skip.
Each test runs a driver script (``tests/browser/_drive_*.py``) in a subprocess of its own
session, killed as a whole group if it outlives its timeout; the driver writes what it saw
to a JSON file and the test asserts on that.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser._browser import CHROMIUM, Driver

REPO = Path(__file__).resolve().parents[2]
#: Screenshots of the browser tests (gitignored).
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="session")
def chromium() -> str:
    """The system Chromium's path; fails (not skips) the test when it is missing."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's chromium. "
                    "Run `make chromium` (`make test` does it), or set ACL_LAB_CHROMIUM.",
                    pytrace=False)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:
        pytest.fail(f"Python Playwright is not installed ({e}): `pip install -e '.[test]'`",
                    pytrace=False)
    return CHROMIUM


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """``test-artifacts/`` at the repository root (created if needed)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process group that ``proc`` leads (it was started in its own session)."""
    with contextlib.suppress(OSError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture
def run_driver(tmp_path: Path, chromium: str) -> Driver:
    """``run_driver(module, *args, timeout=s)`` runs ``python -m tests.browser.<module>
    ARGS --result FILE`` and returns the JSON it wrote; the test fails (with the driver's
    output) if it exits non-zero or outlives ``timeout``."""

    def run(module: str, *args: str, timeout: float) -> dict[str, Any]:
        result = tmp_path / f"{module}-result.json"
        cmd = [sys.executable, "-m", f"tests.browser.{module}", *args, "--result", str(result)]
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, _ = proc.communicate()
            pytest.fail(f"{module} did not finish within {timeout:.0f} s; its output:\n"
                        f"{out[-6000:]}", pytrace=False)
        finally:
            _kill_group(proc)  # Chromium helpers that outlived the driver, if any
        print(out)  # shown by pytest when the test fails
        if proc.returncode != 0 or not result.exists():
            pytest.fail(f"{module} failed (exit {proc.returncode}); its output:\n{out[-6000:]}",
                        pytrace=False)
        data: dict[str, Any] = json.loads(result.read_text())
        return data

    return run

