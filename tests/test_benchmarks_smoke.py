"""Smoke test of ``python -m benchmarks --quick``: it runs, prints the table, writes the JSON.

No timing value is asserted: the machines are shared and noisy, and a missed target is a
report, not a failure.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Every metric the quick run must report, by benchmark; all must be positive.
EXPECTED = {
    "api_overhead": {
        "memcpy_async_traced", "memcpy_async_untraced", "malloc_free_pair_traced",
        "memcpy_async_python_calls", "record_event_traced", "record_event_untraced",
        "malloc_free_pair_untraced", "baseline_plain_dict_lookups",
        "memcpy_async_traced_vs_baseline", "memcpy_async_untraced_vs_baseline",
        "memcpy_async_traced_vs_untraced", "malloc_free_traced_per_call_vs_baseline",
        "malloc_free_traced_vs_untraced", "memcpy_async_bytecodes",
        "malloc_free_pair_bytecodes", "record_event_bytecodes",
    },
    "copy_floor": {"floor_copy_traced", "floor_copy_vs_baseline", "memcpy_async_traced_vs_floor",
                   "floor_copy_bytecodes"},
    "models": {"resnet50_graph_run", "resnet50_acl_mdl_execute",
               "resnet50_virtual_time_Ascend310P3", "resnet50_graph_run_vs_gemm",
               "resnet50_generation_s", "resnet50_generation_vs_weights"},
    "ops": {"conv2d_resnet50_3x3_s", "conv2d_same_flops_gemm_s", "conv2d_resnet50_3x3_vs_gemm"},
    "trace_load": {"many_strings_load_s", "many_strings_load_vs_json_loads",
                   "random_bytes_refusal_s", "random_bytes_refusal_vs_read"},
    "checks": {"all_checks_10000_tasks_s", "races_s", "leaks_s"},
    "provenance": {"copies_2000_s", "copies_8000_s", "four_times_the_copies_vs_time"},
    "trace_size": {
        "memcpy_async_mem_bytes_per_call", "mixed_mem_bytes_per_call",
        "mixed_acltrace_gzip_bytes_per_call", "mixed_acltrace_json_bytes_per_call",
    },
    "ladder": {
        *(f"{k}_latency{p}_ms" for k in "ABCD" for p in ("", "_published")),
        *(f"{k}_ratio{p}" for k in "BCD" for p in ("", "_published", "_error")),
        "util_1_stream", "util_1_stream_published", "util_2_streams",
        "util_2_streams_published", "pinned_bw_gain", "pinned_bw_gain_published", "run_s",
    },
}
#: Differences of two measurements: numeric and finite, but noise may push them to or
#: below 0.
DIFFERENCES = {("api_overhead", "memcpy_async_tracing_adds"),
               ("api_overhead", "malloc_free_loop_growth"),  # RSS may even shrink
               *(("ladder", f"{k}_ratio_error") for k in "BCD")}
#: Counts that are zero when all is well (non-negative integers).
COUNTS = {("checks", "findings_on_clean_pipeline")}
HEADER = ("benchmark", "metric", "value", "unit", "target", "status")


@pytest.mark.e2e
def test_quick_run_prints_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

    header_lines = [ln for ln in proc.stdout.splitlines() if ln.split()[:6] == list(HEADER)]
    assert len(header_lines) == 1, proc.stdout

    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["meta"]["quick"] is True
    rows = {(r["benchmark"], r["metric"]): r for r in doc["rows"]}
    assert len(rows) == len(doc["rows"]), "metric names must be unique per benchmark"

    want = {(b, m) for b, ms in EXPECTED.items() for m in ms} | DIFFERENCES
    missing = want - rows.keys()
    assert not missing, f"metrics missing from the JSON: {sorted(missing)}"

    for key, row in rows.items():
        assert set(row) == {*HEADER}, key
        value = row["value"]
        assert isinstance(value, (int, float)) and not isinstance(value, bool), key
        assert math.isfinite(value), key
        if key in COUNTS:
            assert value >= 0 and value == int(value), (key, value)
        elif key not in DIFFERENCES and not key[1].endswith("_s"):
            assert value > 0, (key, value)
        elif key not in DIFFERENCES:
            assert value >= 0, (key, value)
        assert row["status"] in ("OK", "MISS", "info"), key
        assert (row["target"] is None) == (row["status"] == "info"), key
        # Every metric appears in the printed table too.
        assert any(ln.split()[:2] == list(key) for ln in proc.stdout.splitlines()), key
