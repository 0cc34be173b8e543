"""Notebook 03 describes the ONNX model it builds by a summary, never by dumping its weights.

The cells that import and build the model run in-process (no kernel: only the printed text
matters here); the whole notebook runs in ``test_notebooks.py``.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import nbformat
import numpy as np

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03_model_inference.ipynb"
#: Marks of the two cells run here: the imports, and the model's construction.
SETUP_MARK, BUILD_MARK = "import onnx", "helper.make_graph("


def _cell(cells: list, mark: str) -> str:
    (src,) = [c.source for c in cells if c.cell_type == "code" and mark in c.source]
    return str(src)


def test_the_model_cell_prints_names_shapes_dtypes_and_sizes_not_values() -> None:
    """One line per node and per weight (name, shape, dtype, bytes); none of the weights'
    values appears in the output."""
    cells = nbformat.read(str(NOTEBOOK), as_version=4).cells
    env: dict[str, object] = {}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(_cell(cells, SETUP_MARK), "setup", "exec"), env)
            exec(compile(_cell(cells, BUILD_MARK), "build", "exec"), env)
    finally:
        if isinstance(env.get("WORK_DIR"), str):
            shutil.rmtree(str(env["WORK_DIR"]), ignore_errors=True)
    text = out.getvalue()
    w, b = np.asarray(env["W"]), np.asarray(env["B"])
    assert text.splitlines() == [
        "node fc: Gemm(x, W, B) -> h",
        "node relu: Relu(h) -> y",
        f"weight W: shape (8, 4), float32, {w.nbytes} bytes",
        f"weight B: shape (4,), float32, {b.nbytes} bytes",
    ], text
    values = [f"{v:.4f}"[:6] for v in np.concatenate([w.ravel(), b.ravel()])]
    assert not [v for v in values if v in text], text
