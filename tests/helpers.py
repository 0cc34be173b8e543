"""Small helpers shared by the test modules (fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acl_lab.constants import ACL_SUCCESS
from acl_lab.tracer.trace import Trace


def ok(result: tuple[Any, int]) -> Any:
    """The value of a ``(value, ret)`` pair, asserting ret is ACL_SUCCESS."""
    value, ret = result
    assert ret == ACL_SUCCESS
    return value


def snapshot(trace: Trace) -> dict[str, dict[str, bytes]]:
    """Every column's bytes, to check that nothing wrote to the trace."""
    return {n: {c: t[c].tobytes() for c in t} for n, t in trace.tables.items()}


def compile_singleop(folder: Path, op: str, inputs: list[tuple[list[int], str]],
                     outputs: list[tuple[list[int], str]], fmt: str = "ND") -> Path:
    """Compile one single-op model with ``acl-lab atc --singleop`` into ``folder`` (what an
    op handle needs, as ``atc --singleop`` does for real ACL); the folder."""
    import json

    from acl_lab import atc

    folder.mkdir(parents=True, exist_ok=True)
    spec = [{"op": op,
             "input_desc": [{"format": fmt, "shape": s, "type": t} for s, t in inputs],
             "output_desc": [{"format": fmt, "shape": s, "type": t} for s, t in outputs]}]
    src = folder / f"{op}_{len(list(folder.iterdir()))}.json"
    src.write_text(json.dumps(spec))
    assert atc.main([f"--singleop={src}", f"--output={folder}",
                     "--soc_version=Ascend310P3"]) == 0
    return folder
