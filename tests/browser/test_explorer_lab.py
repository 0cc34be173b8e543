"""The explorer widget in a real JupyterLab, driven by headless Chromium (Python Playwright).

JupyterLab runs on 127.0.0.1 with a token and its own runtime, config, data, settings and
workspaces folders, and a ``python3`` kernel spec that starts this interpreter (the venv), so
the kernel imports the acl_lab under test. A notebook in the temporary root runs a program
with a leak and a race and displays ``acl_lab.explore(trace)``; ``_drive_lab.py`` (a
subprocess) runs it through Run > Run All Cells and selects the race in the findings list.
Checked: the explorer renders both FigureWidgets with traces, no cell raised, the page logged
no JavaScript error, and selecting the race zooms the timeline (its x range changes and
narrows) and shows the racing call's file:line and source line in the source pane.
Screenshots go to ``test-artifacts/``. The server is always killed at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import _buggy_program
from tests.browser._browser import Driver

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

#: Seconds to wait for the server to answer /api/status.
SERVER_START_TIMEOUT = 60.0
#: Seconds the whole browser session may take (it usually takes about 15).
DRIVER_TIMEOUT = 150.0
NOTEBOOK = "explorer.ipynb"
PROGRAM = Path(_buggy_program.__file__).name


def _free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _code_cell(n: int, source: str) -> dict[str, object]:
    """Code cell ``n`` (nbformat 4.5), without outputs."""
    return {"cell_type": "code", "id": f"cell-{n}", "execution_count": None, "metadata": {},
            "outputs": [], "source": source}


def write_notebook(root: Path) -> Path:
    """The explorer notebook (and the program it imports) in the server's root folder."""
    shutil.copy(_buggy_program.__file__, root / PROGRAM)
    build = (
        "import sys\n"
        f"assert sys.prefix == {sys.prefix!r}, ('not the venv kernel', sys.executable)\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "import acl_lab\n"
        f"import {Path(PROGRAM).stem} as program\n"
        "trace = program.run_traced()\n"
        "kinds = sorted(f.kind for f in trace.findings())\n"
        "assert {'leak', 'race'} <= set(kinds), kinds\n"
        "print(kinds)"
    )
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"},
                       "language_info": {"name": "python"}},
          "cells": [_code_cell(0, build), _code_cell(1, "acl_lab.explore(trace)")]}
    path = root / NOTEBOOK
    path.write_text(json.dumps(nb, indent=1))
    return path


def _write_settings(tmp: Path) -> Path:
    """Lab settings: no news/update toast, no notebook windowing (all outputs in the DOM)."""
    settings = tmp / "lab-settings"
    for ext, name, value in (
            ("apputils-extension", "notification",
             {"fetchNews": "false", "checkForUpdates": False}),
            ("notebook-extension", "tracker", {"windowingMode": "none"})):
        folder = settings / "@jupyterlab" / ext
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    return settings


def _write_kernel_spec(tmp: Path) -> Path:
    """A ``python3`` kernel spec running this interpreter; returns the JUPYTER_PATH folder."""
    path = tmp / "jupyter-path"
    spec = path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (acl_lab venv)", "language": "python",
        "metadata": {"debugger": False}}))
    return path


def _stop(server: subprocess.Popen[bytes], runtime: Path) -> None:
    """Stop the server's process group (SIGTERM, then SIGKILL), then any kernel it left.

    Kernels run in sessions of their own; a leftover one is recognised by its connection
    file, which lies in this test's runtime folder.
    """
    with contextlib.suppress(OSError):
        os.killpg(server.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.wait(15)  # the server shuts its kernels down on SIGTERM
    with contextlib.suppress(OSError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(5)
    marker = str(runtime).encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGKILL)


@contextlib.contextmanager
def jupyter_lab(tmp: Path, root: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab on 127.0.0.1 with isolated folders; yields (base URL, token).

    Started up to 3 times (a new port each time: ``port_retries=0`` makes a port taken in
    the meantime an error, not a silent move); always stopped on exit.
    """
    runtime = tmp / "runtime"
    env = dict(os.environ,
               JUPYTER_RUNTIME_DIR=str(runtime), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_DATA_DIR=str(tmp / "data"), JUPYTER_PATH=str(_write_kernel_spec(tmp)),
               JUPYTERLAB_SETTINGS_DIR=str(_write_settings(tmp)),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"), IPYTHONDIR=str(tmp / "ipython"))
    token = secrets.token_hex(16)
    log_path = tmp / "jupyter.log"
    for attempt in range(3):
        port = _free_port()
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
               "--ServerApp.port_retries=0",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.expose_app_in_browser=True"]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        with open(log_path, "ab") as log:
            server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        t0 = time.monotonic()
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT
            while server.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"{base}/api/status?token={token}",
                                                timeout=2) as r:
                        r.read()
                    break
                except OSError:
                    time.sleep(0.25)
            else:
                if attempt < 2 and server.poll() is not None:
                    continue  # exited (port taken?): try again on another port
                pytest.fail(f"jupyter lab did not start; its log:\n"
                            f"{log_path.read_text()[-4000:]}", pytrace=False)
            print(f"jupyter lab up on {base} after {time.monotonic() - t0:.1f} s")
            yield base, token
            return
        finally:
            t1 = time.monotonic()
            _stop(server, runtime)
            print(f"jupyter lab stopped in {time.monotonic() - t1:.1f} s")


def test_explorer_follows_the_race_in_jupyterlab(tmp_path: Path, run_driver: Driver,
                                                 artifacts: Path) -> None:
    """Run All renders the explorer (both FigureWidgets with traces); selecting the race in
    its findings list zooms the timeline and shows the racing call's file:line."""
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root)
    line = _buggy_program.line_of("race")
    site = f"{root / PROGRAM}:{line}"
    source_line = (root / PROGRAM).read_text().splitlines()[line - 1].strip()
    for old in artifacts.glob("explorer-lab-*.png"):
        old.unlink()

    with jupyter_lab(tmp_path, root) as (base, token):
        seen = run_driver("_drive_lab", "--base", base, "--token", token,
                          "--notebook", NOTEBOOK, "--site", site,
                          "--screenshots", str(artifacts), timeout=DRIVER_TIMEOUT)

    assert seen["step"] == "done", seen.get("error")
    assert seen["page_errors"] == [], "JavaScript errors in JupyterLab"
    rendered, selected = seen["rendered"], seen["selected"]
    assert rendered["explorer_count"] == 1
    assert len(rendered["plots"]) == 2, rendered["plots"]
    for plot in rendered["plots"]:
        assert plot["traces"] > 0 and plot["full_traces"] > 0, plot
        assert plot["width"] > 100 and plot["height"] > 100, plot
    options = rendered["options"]
    assert len(options) == 2 and any("leak" in o for o in options), options
    assert rendered["selected"] == -1  # nothing selected before the click

    (race,) = [i for i, o in enumerate(options) if re.search(r"\brace\b", o)]
    assert selected["selected"] == race
    assert f"{PROGRAM}:{line}" in options[race]
    (lo0, hi0), (lo, hi) = rendered["x_range"], selected["x_range"]
    assert (lo, hi) != (lo0, hi0)
    assert hi - lo < hi0 - lo0, "selecting the race did not zoom the timeline in"
    assert site in selected["sites"], selected["sites"]
    assert site in selected["source_pane"] and source_line in selected["source_pane"]
    for shot in seen["screenshots"]:
        assert Path(shot).stat().st_size > 5_000
