"""``help(acl.rt.malloc)`` and Jupyter's Shift-Tab show the pyACL signature
(``malloc(size, policy, /)``), not the implementation's ``(s, th, cid, size, policy)``.

The binding's functions are METH_VARARGS (``docs/sources.md``: the pyACL binding table), so
every parameter is positional only; optional parameters show their default."""

from __future__ import annotations

import importlib
import inspect
import pydoc
from collections.abc import Iterator
from types import ModuleType

import pytest
from IPython.core.interactiveshell import InteractiveShell

import acl_lab
from acl_lab.acl._boundary import registry


@pytest.fixture(scope="module")
def acl() -> Iterator[ModuleType]:
    """The emulated ``acl`` module."""
    module = acl_lab.install()
    try:
        yield module
    finally:
        acl_lab.uninstall()


def wrapper_of(acl: ModuleType, name: str) -> object:
    """The public function ``name`` (``acl.rt.malloc``) of the emulated module, or of the
    acl_lab module that declares it (``acl_lab.aclnn.create_tensor``: the registry holds the
    extensions too once they are imported)."""
    if not name.startswith("acl."):
        module, _, attr = name.rpartition(".")
        return getattr(importlib.import_module(module), attr)
    obj: object = acl
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_help_shows_the_pyacl_signature(acl: ModuleType) -> None:
    """``inspect.signature`` and ``help()`` (pydoc) show the caller's parameters."""
    assert str(inspect.signature(acl.rt.malloc)) == "(size, policy, /)"
    assert str(inspect.signature(acl.init)) == "(config_path=None, /)"
    assert str(inspect.signature(acl.rt.memcpy_async)) == \
        "(dst, dest_max, src, count, kind, stream, /)"
    assert str(inspect.signature(acl.rt.get_device)) == "()"
    text = pydoc.plain(pydoc.render_doc(acl.rt.malloc))
    assert "malloc(size, policy, /)" in text
    assert "cid" not in text.splitlines()[2]


def test_shift_tab_shows_the_pyacl_signature(acl: ModuleType) -> None:
    """What a Jupyter kernel answers to Shift-Tab (IPython's ``object_inspect_mime``)."""
    shell = InteractiveShell.instance()
    shell.user_ns["acl"] = acl
    info = shell.object_inspect("acl.rt.malloc")
    assert info["found"] and info["definition"] == "acl.rt.malloc(size, policy, /)"
    plain = shell.object_inspect_mime("acl.rt.malloc")["text/plain"]
    assert "acl.rt.malloc(size, policy, /)" in plain and "th, cid" not in plain


def test_every_function_has_one_parameter_per_format_letter(acl: ModuleType) -> None:
    """For every declared function: one parameter per format letter, positional only,
    named as the implementation names them, the optional ones (after ``|``) with the
    implementation's defaults; letters an implementation takes as ``*args`` show as that
    ``*args``."""
    checked = 0
    for name, entry in registry().items():
        fmt = entry["fmt"]
        letters = fmt.replace("|", "")
        sig = inspect.signature(wrapper_of(acl, name))  # type: ignore[arg-type]
        params = list(sig.parameters.values())
        impl_params = list(inspect.signature(entry["impl"]).parameters.values())[3:]
        if not fmt:
            assert params == [], name
            continue
        if params and params[-1].kind is inspect.Parameter.VAR_POSITIONAL:
            star = params.pop()
            assert len(params) < len(letters), (name, fmt, sig)
            assert star.name == impl_params[len(params)].name, (name, sig)
            assert impl_params[len(params)].kind is inspect.Parameter.VAR_POSITIONAL
        else:
            assert len(params) == len(letters), (name, fmt, sig)
        assert [p.name for p in params] == [p.name for p in impl_params[:len(params)]], name
        assert all(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in params), name
        nreq = fmt.index("|") if "|" in fmt else len(letters)
        for i, p in enumerate(params):
            if i < nreq:
                assert p.default is inspect.Parameter.empty, (name, p)
            else:
                assert p.default == impl_params[i].default, (name, p)
        checked += 1
    assert checked > 200
