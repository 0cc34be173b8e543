"""The layering rules of docs/architecture.md section 1, checked on the source."""

from __future__ import annotations

import ast
import inspect
import pathlib
import subprocess
import sys

import pytest

import acl_lab
from acl_lab.acl import _boundary

PKG = pathlib.Path(acl_lab.__file__).parent


def _imports(path: pathlib.Path) -> list[str]:
    """Absolute module names imported by a file (relative imports resolved)."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PKG.parent).with_suffix("")
    package = list(rel.parts[:-1])
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append(mod)
    return out


def _files(sub: str) -> list[pathlib.Path]:
    return sorted((PKG / sub).rglob("*.py"))


def test_runtime_imports_nothing_from_upper_layers() -> None:
    """runtime/ never imports acl_lab.acl, the tracer, grading, plotly or ipywidgets: the
    recorder is attached from outside (``acl_lab/__init__`` wires it with
    ``set_recorder_factory``)."""
    for f in _files("runtime"):
        for mod in _imports(f):
            assert not mod.startswith(("acl_lab.acl", "acl_lab.tracer", "acl_lab.grading",
                                       "plotly", "ipywidgets")), f"{f.name} imports {mod}"


def test_a_traced_session_records_with_the_wired_recorder() -> None:
    """``Session(record=True)`` records with whatever ``set_recorder_factory`` wired (the
    tracer's Recorder by default); an unwired runtime refuses to pretend it traces."""
    from acl_lab import Session, _recorder
    from acl_lab.runtime import session as session_mod
    from acl_lab.tracer.recorder import Recorder

    with Session() as s:
        assert isinstance(s.recorder, Recorder)
    seen: list[int] = []

    class Counting:
        def on_call_begin(self, cid: int, *rest: object) -> None:
            seen.append(cid)

    session_mod.set_recorder_factory(lambda s, limit: Counting())
    try:
        with Session() as s:
            import acl_lab
            acl = acl_lab.install(s)
            assert acl.rt.get_run_mode()[1] == 0
            assert isinstance(s.recorder, Counting) and seen == [0]
        session_mod.set_recorder_factory(None)
        with pytest.raises(RuntimeError, match="no trace recorder"):
            Session()
    finally:
        session_mod.set_recorder_factory(_recorder)


def test_only_view_modules_import_plotly() -> None:
    """plotly and ipywidgets are imported only by view/widget modules."""
    for f in sorted(PKG.rglob("*.py")):
        for mod in _imports(f):
            if mod.startswith(("plotly", "ipywidgets")):
                assert "views" in f.parts or "widgets" in f.stem or "views" in f.stem, \
                    f"{f} imports {mod}"


def test_import_does_not_load_plotly() -> None:
    """`import acl_lab` and importing the emulated acl module keep plotly unloaded."""
    code = ("import sys, acl_lab; acl_lab.install(); import acl; "
            "print(any(m.startswith(('plotly', 'ipywidgets')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_every_api_function_documents_its_differences() -> None:
    """Each emulated pyACL function has a docstring ending with its differences."""
    assert len(_boundary.registry()) >= 60
    for name, entry in _boundary.registry().items():
        doc = inspect.getdoc(entry["impl"]) or ""
        assert "Differs from real ACL" in doc, f"{name} does not say how it differs"


def test_public_functions_have_docstrings() -> None:
    """Every public module-level function and class, and every public method of a public
    class, in acl_lab has a docstring (hook handlers ``on_*`` are documented by hooks.py)."""
    missing = []
    kinds = (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)
    for f in sorted(PKG.rglob("*.py")):
        tree = ast.parse(f.read_text())
        nodes = [n for n in tree.body if isinstance(n, kinds)]
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
            if not cls.name.startswith("_"):
                nodes.extend(n for n in cls.body if isinstance(n, kinds))
        for node in nodes:
            if node.name.startswith(("_", "on_")):
                continue
            if ast.get_docstring(node) is None:
                missing.append(f"{f.relative_to(PKG)}:{node.lineno} {node.name}")
    assert not missing, "no docstring: " + ", ".join(missing)
