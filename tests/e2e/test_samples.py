"""Reference section 7 program flows (7.1, 7.2, 7.4) run unmodified through ``acl-lab run``.

Each program follows the public sample it is named after, including the sample's own
resource mistakes; the tests check the numeric results and that the findings, of every kind,
name exactly those mistakes at their lines and nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
TIMEOUT = 300


def run(tmp_path: Path, program: str, *args: str) -> tuple[subprocess.CompletedProcess[str],
                                                           dict[str, Any]]:
    """``acl-lab run --summary S PROGRAM ARGS`` in a subprocess; returns (process, summary)."""
    summary = tmp_path / f"{program}.json"
    cmd = [sys.executable, "-m", "acl_lab.cli", "run", "--summary", str(summary),
           str(PROGRAMS / program), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    return proc, json.loads(summary.read_text())


def line_of(program: str, text: str) -> int:
    """The 1-based line of the program's first line containing ``text``."""
    for n, line in enumerate((PROGRAMS / program).read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(f"{text!r} not in {program}")


def finding_sites(summary: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(kind, program file name, line) of every finding of every kind, sorted."""
    return sorted((f["kind"], Path(f["file"]).name, f["line"]) for f in summary["findings"])


def finding_at(summary: dict[str, Any], line: int) -> dict[str, Any]:
    """The one finding reported at ``line``."""
    (found,) = [f for f in summary["findings"] if f["line"] == line]
    return found


def test_sample_74_single_op_add(tmp_path: Path) -> None:
    """7.4: Add over two int32 (8, 16) tensors is exact; the only finding is the never-freed
    malloc_host output buffer, at its line."""
    proc, summary = run(tmp_path, "sample_74_add.py", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "add ok" in proc.stdout
    program = "sample_74_add.py"
    host = line_of(program, "acl.rt.malloc_host(")
    assert finding_sites(summary) == [("leak", program, host)]
    assert "acl.rt.free_host" in finding_at(summary, host)["message"]
    assert summary["stats"]["tasks"] >= 4


@pytest.fixture(scope="module")
def zoo_paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The zoo models the samples run on (generated once, in the test cache)."""
    from acl_lab import zoo
    return {name: zoo.path(name) for name in ("resnet50", "lenet5")}


def test_sample_71_sync_resnet50(tmp_path: Path, zoo_paths: dict[str, str]) -> None:
    """7.1: the emulated ResNet-50 output equals a direct forward pass of the same model; the
    findings are exactly the sample's mistakes: device I/O buffers never freed (one line)
    and the stream never destroyed."""
    from acl_lab.runtime.om import load_om
    rng = np.random.default_rng(7)
    image = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.save(tmp_path / "in.npy", image)
    proc, summary = run(tmp_path, "sample_71_resnet.py", zoo_paths["resnet50"],
                        str(tmp_path / "in.npy"), str(tmp_path / "out.npy"))
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "out.npy")
    want = load_om(zoo_paths["resnet50"]).run([image])[0]
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-5)
    program = "sample_71_resnet.py"
    stream = line_of(program, "acl.rt.create_stream()")
    malloc = line_of(program, "acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)")
    assert finding_sites(summary) == sorted([("leak", program, stream),
                                             ("leak", program, malloc)])
    # One finding per mistake: the stream's leak also names the destroy_context that
    # released it (no separate destroy_order); the I/O buffers are the input and the output.
    released = f"acl.rt.destroy_context (aclrtDestroyContext) at {PROGRAMS / program}:" \
               f"{line_of(program, 'acl.rt.destroy_context(context)')}"
    assert released in finding_at(summary, stream)["message"]
    assert "acl.rt.destroy_stream" in finding_at(summary, stream)["message"]
    buffers = finding_at(summary, malloc)["message"]
    assert buffers.startswith("2 device allocations") and "acl.rt.free" in buffers


def test_sample_72_async_callbacks(tmp_path: Path, zoo_paths: dict[str, str]) -> None:
    """7.2: every callback copies back the model's output (equal to a direct forward pass);
    the only finding is the callback's never-freed malloc_host buffer."""
    from acl_lab.runtime.om import load_om
    om = load_om(zoo_paths["lenet5"])
    shape = tuple(om.input_specs()[0].shape)
    image = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    np.save(tmp_path / "in.npy", image)
    proc, summary = run(tmp_path, "sample_72_async.py", zoo_paths["lenet5"],
                        str(tmp_path / "in.npy"), str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    results = np.load(tmp_path / "out.npy")
    assert len(results) == 4
    want = om.run([image])[0]
    for r in results:
        np.testing.assert_allclose(r.reshape(want.shape), want, rtol=1e-5, atol=1e-5)
    program = "sample_72_async.py"
    host = line_of(program, "acl.rt.malloc_host(size)")
    assert finding_sites(summary) == [("leak", program, host)]
    assert finding_at(summary, host)["message"].startswith("4 host pinned allocations")
    assert "acl.rt.free_host" in finding_at(summary, host)["message"]
