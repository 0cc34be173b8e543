"""``acl-lab run`` of a binary keeps the program's exit status and writes every output;
``acl-lab cc`` passes a compile error through."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import acl_lab


def _compile(tmp_path: Path, name: str, body: str) -> Path:
    src = tmp_path / f"{name}.cpp"
    src.write_text('#include "acl/acl.h"\n#include <cstdlib>\n' + body)
    proc = acl_lab("cc", str(src), "-o", str(tmp_path / name), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / name


def test_run_keeps_exit_status_and_writes_outputs(libascendcl: Path, tmp_path: Path) -> None:
    prog = _compile(tmp_path, "fails", "int main(int argc, char **argv) {\n"
                    "    aclInit(nullptr);\n    aclrtSetDevice(0);\n"
                    "    return std::atoi(argv[1]);\n}\n")
    out = tmp_path / "out"
    out.mkdir()
    proc = acl_lab("run", "--trace", str(out / "t.acltrace"), "--summary", str(out / "s.json"),
                   "--sarif", str(out / "f.sarif"), str(prog), "3", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    summary = json.loads((out / "s.json").read_text())
    assert summary["exit_code"] == 3
    assert summary["stats"]["api_calls"] >= 2
    assert (out / "f.sarif").stat().st_size > 0
    assert "exit 3" in proc.stderr


def test_run_gate_and_default_outputs(libascendcl: Path, tmp_path: Path) -> None:
    prog = _compile(tmp_path, "leaky", "int main() {\n    aclInit(nullptr);\n"
                    "    aclrtSetDevice(0);\n    void *p = nullptr;\n"
                    "    aclrtMalloc(&p, 128, ACL_MEM_MALLOC_HUGE_FIRST);\n    return 0;\n}\n")
    proc = acl_lab("run", "--fail-on", "error", "--trace", str(tmp_path / "t.acltrace"),
                   str(prog), cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr  # exit 0 but an error finding: the gate
    assert "leak" in proc.stderr and "leaky.cpp:5" in proc.stderr


def test_program_without_acl_calls_says_so(libascendcl: Path, tmp_path: Path) -> None:
    prog = _compile(tmp_path, "plain", "int main() { return 0; }\n")
    proc = acl_lab("run", "--trace", str(tmp_path / "t.acltrace"), str(prog), cwd=tmp_path)
    assert proc.returncode == 1
    assert "without writing its trace" in proc.stderr


def test_cc_passes_the_compiler_error_through(libascendcl: Path, tmp_path: Path) -> None:
    src = tmp_path / "bad.cpp"
    src.write_text('#include "acl/acl.h"\nint main() { aclrtMalloc(1); }\n')
    proc = acl_lab("cc", str(src), "-o", str(tmp_path / "bad"), cwd=tmp_path)
    assert proc.returncode != 0
    assert "aclrtMalloc" in proc.stderr
    assert not (tmp_path / "bad").exists()
