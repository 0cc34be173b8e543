"""The headers and the bridge: every constant has the value acl_lab.constants (the CANN
headers' values) gives it, every declared function calls the pyACL function of the same C
name, and the C API commands print usable flags."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
from pathlib import Path

from acl_lab import acl, constants
from acl_lab.acl._boundary import registry
from acl_lab.capi import bridge, build

from .conftest import acl_lab

_NAME = r"(?:ACL|PIXEL|H26[45]|DVPP)_[A-Z0-9_]+"


def _header_names() -> list[str]:
    names: list[str] = []
    for h in build.HEADERS:
        text = re.sub(r"/\*.*?\*/", "", (build.INCLUDE_DIR / h).read_text(), flags=re.S)
        names += re.findall(rf"\b({_NAME})\s*(?:=|\s\d)", text)
        names += re.findall(rf"^\s+({_NAME}),?\s*$", text, flags=re.M)
    return sorted(set(names) - {"ACL_FUNC_VISIBILITY"})


def test_every_header_constant_has_the_cann_value(libascendcl: Path, tmp_path: Path) -> None:
    names = _header_names()
    # every enumerator, code and define of the headers, DVPP's pixel and stream formats too
    assert len(names) >= 390
    assert {"ACL_ERROR_NONE", "H264_MAIN_LEVEL", "ACL_TRANS_N", "PIXEL_FORMAT_YUV_400",
            "ACL_ERROR_OP_TYPE_NOT_MATCH"} <= set(names)
    src = tmp_path / "consts.cpp"
    body = "\n".join(f'    std::printf("{n} %lld\\n", (long long)({n}));' for n in names)
    includes = "".join(f'#include "{h}"\n' for h in build.HEADERS)
    src.write_text(f"{includes}#include <cstdio>\n"
                   f"int main() {{\n{body}\n    return 0;\n}}\n")
    proc = acl_lab("cc", str(src), "-o", str(tmp_path / "consts"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(tmp_path / "consts")], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    want = {n: int(getattr(constants, n)) for n in names}
    assert got == want


def _pyacl_calls(fn: object) -> list[str]:
    """The pyACL functions ``fn`` names (``A.rt.malloc`` called or passed on)."""
    tree = ast.parse(inspect.getsource(fn))  # type: ignore[arg-type]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = []
            f: ast.expr = node
            while isinstance(f, ast.Attribute):
                parts.append(f.attr)
                f = f.value
            if isinstance(f, ast.Name) and f.id == "A":
                obj: object = acl
                for part in reversed(parts):
                    obj = getattr(obj, part)
                if hasattr(obj, "__acl_cname__"):
                    out.append(".".join(reversed(parts)))
    return out


def test_each_custom_c_function_calls_the_pyacl_function_of_its_name() -> None:
    custom = [f for f in build.functions() if f.hint.custom]
    assert len(custom) >= 15
    for f in custom:
        handler = getattr(bridge, f.name)
        targets = sorted(set(_pyacl_calls(handler)))
        assert targets, f.name
        for target in targets:
            obj: object = acl
            for part in target.split("."):
                obj = getattr(obj, part)
            assert getattr(obj, "__acl_cname__", None) == f.name, (f.name, target)


def test_every_generic_c_function_runs_the_pyacl_function_of_its_c_name() -> None:
    generic = [f for f in build.functions() if not f.hint.custom]
    assert len(generic) >= 280
    for f in generic:
        handler = bridge.generic(f)
        assert handler.__name__ == f.name
        name = f.hint.py or bridge._PYACL_NAME[f.name]
        assert registry()[name]["cname"] == f.name


def test_cdef_and_shim_forward_every_parameter() -> None:
    funcs = {f.name: f for f in build.functions()}
    copy = funcs["aclrtMemcpyAsync"]
    assert [p.name for p in copy.params] == ["dst", "destMax", "src", "count", "kind", "stream"]
    assert [p.ffi_type for p in copy.params] == ["void *", "size_t", "void *", "size_t", "int",
                                                 "void *"]
    shim = build.shim_source(list(funcs.values()))
    assert ("aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t "
            "count, aclrtMemcpyKind kind, aclrtStream stream) { return _lab_aclrtMemcpyAsync("
            "__builtin_return_address(0), (void *)dst, destMax, (void *)src, count, kind, "
            "(void *)stream); }") in shim
    # a variadic function passes its formatted text in place of the format
    log = funcs["aclAppLog"]
    assert log.variadic and [p.name for p in log.params][-1] == "fmt"
    assert "vsnprintf(lab_text, sizeof lab_text, fmt ? fmt : \"\", ap)" in shim
    op = funcs["aclopExecuteV2"]
    assert [p.ctype for p in op.params][2:4] == ["aclTensorDesc **", "aclDataBuffer **"]


def test_config_prints_include_and_link_flags(libascendcl: Path, tmp_path: Path) -> None:
    proc = acl_lab("config", "--cflags", "--libs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    flags = proc.stdout.split()
    assert flags[0] == f"-I{build.INCLUDE_DIR}"
    assert (build.INCLUDE_DIR / "acl" / "acl.h").is_file()
    assert f"-L{libascendcl.parent}" in flags
    assert {"-lascendcl", "-lacl_dvpp", "-lacl_cblas", "-lacl_op_compiler"} <= set(flags)
    assert acl_lab("config", cwd=tmp_path).returncode == 2


def test_every_header_ships_as_package_data() -> None:
    import fnmatch

    text = (build.PACKAGE_DIR.parent / "pyproject.toml").read_text()
    data = text.split("[tool.setuptools.package-data]", 1)[1]
    m = re.search(r"^acl_lab = \[(.*?)\]", data, flags=re.M | re.S)
    assert m is not None
    patterns = re.findall(r'"([^"]+)"', m.group(1))
    headers = sorted(p.relative_to(build.PACKAGE_DIR).as_posix()
                     for p in build.INCLUDE_DIR.rglob("*.h"))
    assert set(headers) >= {f"include/{h}" for h in build.HEADERS} | {"include/acl/acl.h"}
    missing = [h for h in headers if not any(fnmatch.fnmatch(h, p) for p in patterns)]
    assert not missing
