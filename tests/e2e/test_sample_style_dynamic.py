"""A program in the style of the samples' dynamic-resolution classification
(tests/programs/samplestyle/classify_sizes.py, the project's own code), run unmodified under
``acl-lab run`` on an image-size model made by ``acl-lab atc --dynamic_image_size``: it
finishes, its outputs are the graph's at each picture's gear, the size without a gear is
skipped, and it gets no finding (buffers sized for the largest gear are normal at any gear)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from acl_lab.runtime.om import load_om
from tests.dynamic_models import hw_classifier
from tests.e2e.test_cli_run import acl_lab_run, check_summary_schema, describe


def test_dynamic_image_size_classification(tmp_path: Path) -> None:
    model = hw_classifier(tmp_path, "8,8;12,16")
    out = tmp_path / "out"
    out.mkdir()
    run = acl_lab_run(tmp_path, "samplestyle/classify_sizes.py", str(model), str(out))
    assert run.proc.returncode == 0, describe(run)
    check_summary_schema(run.summary)
    lines = run.proc.stdout.splitlines()
    assert [line.split(" class ")[0] for line in lines] == [
        "picture 0 12x16", "picture 1 8x8", "picture 2 10x10 skipped", "picture 3 12x16"]
    saved = np.load(out / "pictures.npz")
    om = load_om(model)
    for n in (0, 1, 3):
        picture = saved[f"picture{n}"]
        want = om.run([picture], batch=picture.shape[2:])[0]
        np.testing.assert_allclose(saved[f"logits{n}"], want, rtol=1e-5, atol=1e-6)
        assert lines[n].endswith(f"class {int(want.argmax())}")
    assert run.summary["findings"] == [], run.summary["findings"]
