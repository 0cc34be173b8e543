"""``acl-lab run`` in CI and code review: ``--fail-on``, the versioned summary with every site
of a finding, ``--sarif`` (SARIF 2.1.0), and the default outputs when no output option is
given. Each runs the real CLI in a subprocess on a program with a leak and a race."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acl_lab.tracer.summary import SUMMARY_SCHEMA_VERSION
from acl_lab.tracer.trace import Trace

pytestmark = pytest.mark.timeout(120)

PROGRAM = textwrap.dedent("""\
    import acl
    N = 4096
    acl.init()
    acl.rt.set_device(0)
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    a, _ = acl.rt.malloc(N, 2)
    b, _ = acl.rt.malloc(N, 2)
    acl.rt.memset(a, N, 0, N)
    acl.rt.memcpy_async(b, N, a, N, 3, s1)  # line 10: write b on s1
    acl.rt.memcpy_async(b, N, a, N, 3, s2)  # line 11: write b on s2, unordered: a race
    acl.rt.synchronize_stream(s1)
    acl.rt.synchronize_stream(s2)
    leaked, _ = acl.rt.malloc(N, 2)  # line 14: never freed
    acl.rt.free(a)
    acl.rt.free(b)
    acl.rt.destroy_stream(s1)
    acl.rt.destroy_stream(s2)
    acl.rt.reset_device(0)
    acl.finalize()
""")
CLEAN = textwrap.dedent("""\
    import acl
    acl.init()
    acl.rt.set_device(0)
    p, _ = acl.rt.malloc(64, 2)
    acl.rt.free(p)
    acl.rt.reset_device(0)
    acl.finalize()
""")

#: The parts of the SARIF 2.1.0 schema (OASIS sarif-schema-2.1.0.json) a review tool needs:
#: required properties of sarifLog, run, tool/toolComponent, result, message, location.
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"]}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"type": "object", "anyOf": [
                            {"required": ["text"]}, {"required": ["id"]}]},
                        "locations": {"type": "array", "items": {"$ref": "#/$defs/location"}},
                        "relatedLocations": {"type": "array",
                                             "items": {"$ref": "#/$defs/location"}},
                    }}},
            }}},
    },
    "$defs": {"location": {"type": "object", "required": ["physicalLocation"], "properties": {
        "physicalLocation": {"type": "object", "required": ["artifactLocation", "region"],
                             "properties": {
                                 "artifactLocation": {"type": "object", "required": ["uri"],
                                                      "properties": {
                                                          "uri": {"type": "string"}}},
                                 "region": {"type": "object", "required": ["startLine"],
                                            "properties": {"startLine": {
                                                "type": "integer", "minimum": 1}}}}}}}},
}


def acl_lab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m acl_lab.cli ARGS`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "acl_lab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=100)


@pytest.fixture
def buggy(tmp_path: Path) -> Path:
    """The leak-and-race program, written to ``tmp_path/buggy.py``."""
    prog = tmp_path / "buggy.py"
    prog.write_text(PROGRAM)
    return prog


def test_fail_on_error_exits_non_zero(buggy: Path, tmp_path: Path) -> None:
    """Error findings and ``--fail-on error``: exit 3 (the program itself exited 0); without
    the option the exit code stays the program's 0."""
    s = tmp_path / "s.json"
    gated = acl_lab(tmp_path, "run", "--summary", str(s), "--fail-on", "error", buggy.name)
    assert gated.returncode == 3, gated.stderr
    assert "--fail-on error" in gated.stderr
    summary = json.loads(s.read_text())
    assert summary["exit_code"] == 0  # the program's own code is recorded as it was
    assert {f["severity"] for f in summary["findings"]} == {"error"}
    plain = acl_lab(tmp_path, "run", "--summary", str(s), buggy.name)
    assert plain.returncode == 0, plain.stderr


def test_fail_on_passes_a_clean_program(tmp_path: Path) -> None:
    """No findings: ``--fail-on warning`` exits 0."""
    prog = tmp_path / "clean.py"
    prog.write_text(CLEAN)
    s = tmp_path / "s.json"
    run = acl_lab(tmp_path, "run", "--summary", str(s), "--fail-on", "warning", prog.name)
    assert run.returncode == 0, run.stderr
    assert json.loads(s.read_text())["findings"] == []


def test_summary_has_version_and_every_site(buggy: Path, tmp_path: Path) -> None:
    """The summary says its schema version; a race lists both accesses' lines, a leak its
    allocation; each entry's sites are the finding's own (file, line) pairs."""
    s, t = tmp_path / "s.json", tmp_path / "t.acltrace"
    run = acl_lab(tmp_path, "run", "--summary", str(s), "--trace", str(t), buggy.name)
    assert run.returncode == 0, run.stderr
    summary = json.loads(s.read_text())
    assert summary["schema_version"] == SUMMARY_SCHEMA_VERSION == 2
    by_kind = {f["kind"]: f for f in summary["findings"]}
    race = by_kind["race"]
    lines = [site["line"] for site in race["sites"]]
    assert {10, 11} <= set(lines), race["sites"]
    assert all(site["file"].endswith("buggy.py") for site in race["sites"])
    assert (race["file"], race["line"]) == (race["sites"][0]["file"], race["sites"][0]["line"])
    assert 14 in [site["line"] for site in by_kind["leak"]["sites"]]
    findings = Trace.load(t).findings()
    assert len(findings) == len(summary["findings"])
    for f, entry in zip(findings, summary["findings"], strict=True):
        assert {(x["file"], x["line"]) for x in entry["sites"]} == {
            (file, line) for file, line in ((f.file, f.line), *f.sites) if file}


def test_sarif_2_1_0(buggy: Path, tmp_path: Path) -> None:
    """``--sarif FILE``: a SARIF 2.1.0 log with one rule per kind, one result per finding at
    its level, its main site in ``locations`` and the others in ``relatedLocations``."""
    out, s = tmp_path / "out.sarif", tmp_path / "s.json"
    run = acl_lab(tmp_path, "run", "--sarif", str(out), "--summary", str(s), buggy.name)
    assert run.returncode == 0, run.stderr
    log: dict[str, Any] = json.loads(out.read_text())
    jsonschema.validate(log, SARIF_REQUIRED)
    (sarif_run,) = log["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    summary = json.loads(s.read_text())
    assert sorted(r["id"] for r in rules) == sorted({f["kind"] for f in summary["findings"]})
    results = sarif_run["results"]
    assert len(results) == len(summary["findings"])
    for res, f in zip(results, summary["findings"], strict=True):
        assert res["ruleId"] == f["kind"] == rules[res["ruleIndex"]]["id"]
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[
            f["severity"]]
        assert res["message"]["text"] == f["message"]
        locs = res["locations"] + res["relatedLocations"]
        got = [(loc["physicalLocation"]["artifactLocation"]["uri"],
                loc["physicalLocation"]["region"]["startLine"]) for loc in locs]
        assert got == [("buggy.py", site["line"]) for site in f["sites"]]
        assert all(loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == "SRCROOT"
                   for loc in locs)
    assert sarif_run["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.resolve().as_uri() + "/"
    race = next(r for r in results if r["ruleId"] == "race")
    assert len(race["locations"]) == 1 and len(race["relatedLocations"]) >= 1


def test_default_outputs_in_the_working_directory(buggy: Path, tmp_path: Path) -> None:
    """No output option: ``buggy.acltrace`` and ``buggy.summary.json`` appear in the working
    directory (not beside the program), and stderr says where, even with ``--quiet``."""
    work = tmp_path / "work"
    work.mkdir()
    run = acl_lab(work, "run", "--quiet", str(buggy))
    assert run.returncode == 0, run.stderr
    trace, summary = work / "buggy.acltrace", work / "buggy.summary.json"
    assert trace.is_file() and summary.is_file()
    assert not (tmp_path / "buggy.acltrace").exists()
    assert str(trace) in run.stderr and str(summary) in run.stderr
    assert Trace.load(trace).calls.rows > 10
    assert json.loads(summary.read_text())["schema_version"] == SUMMARY_SCHEMA_VERSION


def test_an_output_option_turns_the_defaults_off(buggy: Path, tmp_path: Path) -> None:
    """With ``--sarif`` only, no default trace or summary is written."""
    run = acl_lab(tmp_path, "run", "--sarif", "x.sarif", buggy.name)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "x.sarif").is_file()
    assert not (tmp_path / "buggy.acltrace").exists()
    assert not (tmp_path / "buggy.summary.json").exists()
