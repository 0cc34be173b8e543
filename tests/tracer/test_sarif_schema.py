"""The SARIF export validates against the real SARIF 2.1.0 schema (OASIS SARIF TC's
``sarif-schema-2.1.0.json``, vendored in ``tests/data``: see ``tests/data/README.md`` for
where it came from), with jsonschema's Draft 7 validator (the schema's own ``$schema``) and
its format checker (``artifactLocation.uri`` is a ``uri-reference``, ``originalUriBaseIds``'
``uri`` a ``uri``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest

from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_DEVICE_TO_DEVICE
from acl_lab.tracer.checks.base import Finding
from acl_lab.tracer.sarif import to_sarif
from tests.helpers import ok
from tests.tracer import export_scenarios

SCHEMA_FILE = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"
#: sha256 of the vendored file, as extracted (tests/data/README.md): a local edit fails here.
SCHEMA_SHA256 = "7402cdfd5bfbff98071b3358e573041b86adb7e1c6ec8743303f93715937c371"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    """A Draft 7 validator of the real schema that also checks formats."""
    schema = json.loads(SCHEMA_FILE.read_bytes())
    jsonschema.Draft7Validator.check_schema(schema)
    checker = jsonschema.Draft7Validator.FORMAT_CHECKER
    # the format checks need rfc3986-validator (jsonschema's format-nongpl extra)
    assert {"uri", "uri-reference"} <= set(checker.checkers)
    return jsonschema.Draft7Validator(schema, format_checker=checker)


def errors(validator: jsonschema.Draft7Validator, log: dict[str, Any]) -> list[str]:
    """Every schema violation of ``log``, as ``path: message`` lines."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))]


def leak_and_race(acl: ModuleType) -> None:
    """Two unordered writes of one buffer on two streams (a race) and a block never freed."""
    n = 4096
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    a = ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    b = ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memset(a, n, 0, n) == 0
    assert acl.rt.memcpy_async(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE, s1) == 0
    assert acl.rt.memcpy_async(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == 0
    for s in (s1, s2):
        assert acl.rt.synchronize_stream(s) == 0
    ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))  # never freed
    for p in (a, b):
        assert acl.rt.free(p) == 0


def test_vendored_file_is_the_real_schema() -> None:
    """The file is the final SARIF 2.1.0 schema (draft 7), unchanged since it was vendored."""
    raw = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256
    schema = json.loads(raw)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["$id"].endswith("/Schemata/sarif-schema-2.1.0.json")
    assert {"run", "result", "location", "artifactLocation", "toolComponent",
            "reportingDescriptor"} <= set(schema["definitions"])


@pytest.mark.parametrize("program", [leak_and_race, export_scenarios.deadlock],
                         ids=["leak-and-race", "deadlock"])
def test_real_findings_validate(validator: jsonschema.Draft7Validator, program: Any) -> None:
    """The findings of a traced program (leak, race; deadlock) make a valid SARIF log whose
    locations are the test sources, relative to SRCROOT (the repository here)."""
    findings = export_scenarios.traced(program).findings()
    kinds = {f.kind for f in findings}
    assert kinds >= ({"leak", "race"} if program is leak_and_race else {"deadlock"})
    base = Path(__file__).parents[2].resolve()
    log = to_sarif(findings, base=base, version="1.2.3")
    assert errors(validator, log) == []
    results = log["runs"][0]["results"]
    assert len(results) == len(findings)
    arts = [loc["physicalLocation"]["artifactLocation"]
            for r in results for loc in r.get("locations", []) + r.get("relatedLocations", [])]
    assert arts and all(a["uriBaseId"] == "SRCROOT" for a in arts)
    assert all((base / unquote(a["uri"])).is_file() for a in arts)
    if program is leak_and_race:
        assert Path(__file__).resolve().relative_to(base).as_posix() in {a["uri"] for a in arts}


def odd_findings(base: Path, outside: Path) -> list[Finding]:
    """Findings whose sites have spaces, ``#``, ``%`` and non-ASCII letters in their paths, one
    outside the base folder, one relative, one a ``<stdin>`` pseudo-file, one with no site."""
    inside = base / "dir with space" / "prog #1 100% ü.py"
    return [
        Finding("leak", "error", "a leak", str(inside), 3,
                sites=((str(outside / "other file.py"), 9), ("<stdin>", 2))),
        Finding("race", "warning", "a race", str(outside / "ä b.py"), 0,
                sites=((str(inside), 7),)),
        Finding("uninit", "info", "a note", "<stdin>", 1),
        Finding("deadlock", "error", "no site at all"),
    ]


def test_odd_paths_validate_and_round_trip(validator: jsonschema.Draft7Validator,
                                           tmp_path: Path) -> None:
    """Paths that are not URI characters as they stand are percent-encoded (a valid
    ``uri-reference``) and decode back to the file: relative to SRCROOT under the base,
    ``file://`` URIs elsewhere; a finding without a real site has no location; ``info`` is a
    ``note``; line 0 is written as line 1 (``startLine`` has minimum 1)."""
    base, outside = tmp_path / "base folder", tmp_path / "elsewhere"
    log = to_sarif(odd_findings(base, outside), base=base)
    assert errors(validator, log) == []
    (run,) = log["runs"]
    root = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    decoded = []
    for res in run["results"]:
        for loc in res.get("locations", []) + res.get("relatedLocations", []):
            art = loc["physicalLocation"]["artifactLocation"]
            uri = art["uri"]
            assert " " not in uri and "#" not in uri.split("://", 1)[-1]
            if art.get("uriBaseId") == "SRCROOT":
                path = Path(unquote(urlsplit(root).path)) / unquote(uri)
            else:
                assert uri.startswith("file://")
                path = Path(unquote(urlsplit(uri).path))
            decoded.append((res["ruleId"], path, loc["physicalLocation"]["region"]["startLine"]))
    inside = base.resolve() / "dir with space" / "prog #1 100% ü.py"
    assert decoded == [("leak", inside, 3), ("leak", outside.resolve() / "other file.py", 9),
                       ("race", outside.resolve() / "ä b.py", 1), ("race", inside, 7)]
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels == {"leak": "error", "race": "warning", "uninit": "note", "deadlock": "error"}
    assert [("locations" in r) for r in run["results"]] == [True, True, False, False]


def test_relative_site_outside_base_is_absolute(validator: jsonschema.Draft7Validator,
                                               tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative site path (as a program run from another folder records it) that is not
    under the base becomes an absolute ``file://`` URI, never a bare relative reference that
    a viewer would resolve against the wrong folder."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    log = to_sarif([Finding("leak", "error", "m", "prog.py", 4)], base=tmp_path / "base")
    assert errors(validator, log) == []
    art = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in art
    assert art["uri"] == (work / "prog.py").resolve().as_uri()


def test_no_findings_is_a_valid_log(validator: jsonschema.Draft7Validator) -> None:
    """An empty run: no rules, no results, still valid."""
    log = to_sarif([])
    assert errors(validator, log) == []
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_the_schema_catches_broken_logs(validator: jsonschema.Draft7Validator,
                                        tmp_path: Path) -> None:
    """The validator is not vacuous: the mistakes a hand-written exporter makes are caught."""
    good = to_sarif(odd_findings(tmp_path, tmp_path / "x"), base=tmp_path)
    assert errors(validator, good) == []

    def broken(edit: Any) -> list[str]:
        log = json.loads(json.dumps(good))
        edit(log)
        return errors(validator, log)

    run = "runs/0"
    res = f"{run}/results/0"
    loc = f"{res}/locations/0/physicalLocation"
    cases = {
        "info level": (lambda g: g["runs"][0]["results"][0].update(level="info"),
                       f"{res}/level"),
        "line 0": (lambda g: g["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
                   ["region"].update(startLine=0), f"{loc}/region/startLine"),
        "no driver name": (lambda g: g["runs"][0]["tool"]["driver"].pop("name"),
                           f"{run}/tool/driver"),
        "wrong version": (lambda g: g.update(version="2.1"), "version"),
        "space in a uri": (lambda g: g["runs"][0]["results"][0]["locations"][0]
                           ["physicalLocation"]["artifactLocation"].update(uri="a b.py"),
                           f"{loc}/artifactLocation/uri"),
        "unknown property": (lambda g: g["runs"][0]["results"][0].update(severity="error"),
                             res),
    }
    for name, (edit, where) in cases.items():
        found = broken(edit)
        assert any(e.startswith(where + ":") for e in found), (name, found)
