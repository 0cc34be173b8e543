"""The layering rules of docs/architecture.md section 1, checked on the source."""

from __future__ import annotations

import ast
import inspect
import pathlib
import subprocess
import sys

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
    """runtime/ never imports acl_lab.acl, grading, plotly or ipywidgets (the recorder is
    wired in Session.__init__ by a local import, the one allowed link to the tracer)."""
    for f in _files("runtime"):
        for mod in _imports(f):
            assert not mod.startswith(("acl_lab.acl", "acl_lab.grading", "plotly",
                                       "ipywidgets")), f"{f.name} imports {mod}"
            if mod.startswith("acl_lab.tracer"):
                assert f.name == "session.py" and mod == "acl_lab.tracer.recorder", \
                    f"{f.name} imports {mod}"


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
