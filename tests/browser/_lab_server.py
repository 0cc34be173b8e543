"""A JupyterLab server for browser tests: isolated folders, a token, always stopped.

``jupyter_lab(tmp, root)`` starts JupyterLab on 127.0.0.1 with its own runtime, config, data,
settings and workspaces folders and a ``python3`` kernel spec that runs this interpreter (the
venv), so kernels import the acl_lab under test; it yields ``(base URL, token)`` and kills the
server and any kernel it left when the block ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Seconds to wait for the server to answer /api/status.
SERVER_START_TIMEOUT = 60.0


def _free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


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
