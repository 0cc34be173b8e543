"""Meta-test: the Session is the environment; no other module reaches into its private names.

The subsystem modules (``runtime/devices.py``, ``streams.py``, ``events.py``, ``waits.py``,
``threads.py``, ``alloc.py``, ``buffers.py``, ``copies.py``, ``scheduler.py``, the media and model
modules, the pyACL layer, aclnn, the transport) take the session as their first argument and
use only its public state and methods (``register`` / ``lookup`` / ``retire``, ``api_enter``,
``diag``, ``hooks`` ...). A session is named ``s`` or ``session`` by convention (also
``self.session`` in classes that keep one), which is what this test looks for.
"""

from __future__ import annotations

import ast
import pathlib

import acl_lab

ROOT = pathlib.Path(acl_lab.__file__).parent

#: Names a session goes by outside session.py.
RECEIVERS = {"s", "session", "sess"}


def _receiver(node: ast.expr) -> str:
    """``s`` for ``s``, ``self.session`` for ``self.session``, else ""."""
    if isinstance(node, ast.Name):
        return node.id if node.id in RECEIVERS else ""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self" and node.attr in RECEIVERS:
        return f"self.{node.attr}"
    return ""


def private_uses(source: str) -> list[tuple[int, str]]:
    """``(line, "s._name")`` for every private attribute of a session used in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            who = _receiver(node.value)
            if who:
                found.append((node.lineno, f"{who}.{node.attr}"))
    return sorted(found)


def test_private_uses_finds_what_it_should() -> None:
    src = ("def f(s, x):\n    s._block(1)\n    x._private()\n    self.session._tls\n"
           "    s.public()\n    s.__class__\n")
    assert private_uses(src) == [(2, "s._block"), (4, "self.session._tls")]


def test_no_module_uses_a_private_name_of_the_session() -> None:
    bad = []
    for f in sorted(ROOT.rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        if rel == "runtime/session.py":
            continue
        bad += [f"{rel}:{line}: {use}" for line, use in private_uses(f.read_text("utf-8"))]
    assert not bad, "use the subsystem modules' public functions instead:\n" + "\n".join(bad)
