"""Programs in the style of the public samples, on an acllite-like helper layer of the
project's own (tests/programs/samplestyle/litekit.py: a resource class, a model class with
dynamic batch that copies the whole max-batch output back, a callback thread, profiling),
run unmodified under ``acl-lab run`` (issue 12 §5). Each test asserts the program finishes
with the right results and exactly which findings it gets, at which severity and line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from acl_lab import zoo
from tests.e2e.test_cli_run import PROGRAMS, acl_lab_run, check_summary_schema, describe

LITEKIT = PROGRAMS / "samplestyle" / "litekit.py"


def line_of(path: Path, text: str) -> int:
    """The 1-based line of ``path`` holding ``text`` (exactly one)."""
    (n,) = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if text in line]
    return n


def kinds(summary: dict) -> list[tuple[str, str, str, int]]:
    """(kind, severity, file name, line) of every finding, sorted."""
    return sorted((f["kind"], f["severity"], Path(f["file"]).name, f["line"])
                  for f in summary["findings"])


def test_dynamic_batch_classification_with_callbacks_and_profiling(tmp_path: Path) -> None:
    """11 items in batches of 4 at gears 4, 4, 4 (the last partial): the classes match a
    numpy forward pass at those gears, the callback thread saw every batch, the profile is
    written, and the only findings are the two harmless patterns: the whole max-batch output
    copy (info) and the partial last batch (a warning), both in the helper layer; no leak,
    no error."""
    prof = tmp_path / "prof"
    prof.mkdir()
    run = acl_lab_run(tmp_path, "samplestyle/classify_batches.py", zoo.path("mlp_dynamic"),
                      str(prof))
    assert run.proc.returncode == 0, describe(run)
    check_summary_schema(run.summary)
    out = dict(line.split(" ", 1) for line in run.proc.stdout.splitlines() if " " in line)
    items = np.load(prof / "items.npy")
    om = zoo.build("mlp_dynamic")
    want = []
    for start in range(0, len(items), 4):
        batch = items[start:start + 4]
        padded = np.zeros((4, items.shape[1]), np.float32)
        padded[:len(batch)] = batch
        want.extend(int(c) for c in om.run([padded], batch=4)[0][:len(batch)].argmax(axis=1))
    assert out["classes"].split() == [str(c) for c in want]
    assert out["callbacks"].split() == ["0", "4", "8"]
    assert list(prof.glob("PROF_*/mindstudio_profiler_output/msprof_*.json"))
    copy_out = line_of(LITEKIT, 'check("memcpy out"')
    execute = line_of(LITEKIT, 'check("execute_async"')
    assert kinds(run.summary) == [("size_mismatch", "warning", "litekit.py", execute),
                                  ("uninitialized_read", "info", "litekit.py", copy_out)]
    text = {f["kind"]: f["message"] for f in run.summary["findings"]}
    assert "partial last batch" in text["size_mismatch"]
    assert "the first 3" in text["size_mismatch"]
    assert "rows beyond the current batch" in text["uninitialized_read"]


def test_device_to_host_from_a_host_buffer_is_reported_at_the_copy(tmp_path: Path) -> None:
    """The sample mistake of copying "back" from a host buffer: the program prints its own
    input (00010203, not the device's ff bytes), and memcpy_kind_mismatch (a warning) at the
    copy's line is the only finding."""
    run = acl_lab_run(tmp_path, "samplestyle/wrong_kind.py")
    assert run.proc.returncode == 0, describe(run)
    assert run.proc.stdout.split() == ["got", "00010203"]
    program = PROGRAMS / "samplestyle" / "wrong_kind.py"
    assert kinds(run.summary) == [("memcpy_kind_mismatch", "warning", "wrong_kind.py",
                                   line_of(program, 'check("back"'))]
    (f,) = run.summary["findings"]
    assert "ACL_MEMCPY_HOST_TO_HOST" in f["message"]
