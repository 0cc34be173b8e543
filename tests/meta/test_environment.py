"""Binder/JupyterHub readiness: environment.yml asks for what the Makefile installs.

``make lab`` installs ``pip install -e '.[lab]'`` (the core dependencies of pyproject.toml and
the ``lab`` extra, which names the ``views``, ``atc`` and ``media`` extras) and ``make test``
installs the ``test`` extra (which names ``lab``); conda and Binder build from environment.yml
instead. The two must resolve to the same package set: the same Python line, the same
requirements with the same specifiers, this package installed editable with the lab extra,
and every requirement satisfied by the environment the tests run in.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import yaml
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pip's vendored TOML reader
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _environment() -> tuple[list[str], list[str]]:
    """(conda dependencies as strings, pip requirements) of environment.yml."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pips = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pips) == 1, "environment.yml needs exactly one pip section"
    return conda, list(pips[0])


def _norm(req: str) -> tuple[str, str]:
    r = Requirement(req)
    return r.name.lower().replace("_", "-"), str(r.specifier)


def lab_requirements() -> list[str]:
    """The core dependencies plus the ``lab`` extra, the extras it names expanded."""
    project = _pyproject()["project"]
    extras = project["optional-dependencies"]
    out = list(project["dependencies"])
    todo, seen = ["lab"], set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in extras[extra]:
            r = Requirement(req)
            if r.name.lower().replace("_", "-") == "acl-lab":
                todo.extend(sorted(r.extras))
            else:
                out.append(req)
    return out


def test_pip_section_equals_the_lab_requirements() -> None:
    _, pip = _environment()
    assert "-e .[lab]" in pip, \
        "environment.yml must install this package with the lab extra (editable, like make)"
    env_reqs = sorted(_norm(r) for r in pip if not r.startswith("-e "))
    assert env_reqs == sorted(_norm(r) for r in lab_requirements())


def test_python_line_matches() -> None:
    conda, _ = _environment()
    pythons = [d for d in conda if re.match(r"python\s*[=<>]", d)]
    assert pythons == ["python=3.11"]
    requires = _pyproject()["project"]["requires-python"]
    assert Requirement(f"python{requires}").specifier.contains("3.11")
    assert "pip" in conda


def test_makefile_installs_the_same_package_set() -> None:
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"\$\(PIP\) install \$\(PIP_FLAGS\) -e '\.\[lab\]'\s*$", make, re.M), \
        "make lab must install the package with the lab extra"
    assert "-e '.[test]'" in make, "make test must install the package with the test extra"


def test_the_running_environment_satisfies_environment_yml() -> None:
    """Every requirement of environment.yml is met by the packages the tests run with."""
    _, pip = _environment()
    missing = []
    for req in (Requirement(r) for r in pip if not r.startswith("-e ")):
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(f"{req} (not installed)")
            continue
        if not req.specifier.contains(version, prereleases=True):
            missing.append(f"{req} (installed {version})")
    assert not missing, missing
    assert metadata.version("acl_lab") == _pyproject()["project"]["version"]
