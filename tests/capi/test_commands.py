"""``acl-lab run`` of a binary keeps the program's exit status and writes every output;
``acl-lab cc`` passes a compile error through."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import acl_lab, run_traced


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


def test_program_without_acl_calls_is_an_empty_run(libascendcl: Path, tmp_path: Path) -> None:
    """No ACL call: the program's own exit status and an empty trace, as for Python."""
    prog = _compile(tmp_path, "plain", "int main(int argc, char **argv) {\n"
                    "    return std::atoi(argv[1]);\n}\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    for status in (0, 4):
        out = tmp_path / f"s{status}.json"
        proc = acl_lab("run", "--trace", str(tmp_path / "t.acltrace"), "--summary", str(out),
                       str(prog), str(status), cwd=tmp_path, env={"TMPDIR": str(scratch)})
        assert proc.returncode == status, proc.stderr
        summary = json.loads(out.read_text())
        assert summary["exit_code"] == status
        assert summary["stats"]["api_calls"] == 0 and summary["findings"] == []
    assert list(scratch.iterdir()) == []  # no trace or marker left behind


def test_program_ending_without_exit_handlers_says_so(libascendcl: Path,
                                                      tmp_path: Path) -> None:
    """ACL calls, then ``_exit``: no trace, and the message says why (not "no ACL call")."""
    prog = _compile(tmp_path, "quick", "#include <unistd.h>\nint main() {\n"
                    "    aclInit(nullptr);\n    _exit(0);\n}\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = acl_lab("run", "--trace", str(tmp_path / "t.acltrace"), str(prog), cwd=tmp_path,
                   env={"TMPDIR": str(scratch)})
    assert proc.returncode == 1
    assert "without running its exit handlers" in proc.stderr
    assert list(scratch.iterdir()) == []


def test_cc_passes_the_compiler_error_through(libascendcl: Path, tmp_path: Path) -> None:
    src = tmp_path / "bad.cpp"
    src.write_text('#include "acl/acl.h"\nint main() { aclrtMalloc(1); }\n')
    proc = acl_lab("cc", str(src), "-o", str(tmp_path / "bad"), cwd=tmp_path)
    assert proc.returncode != 0
    assert "aclrtMalloc" in proc.stderr
    assert not (tmp_path / "bad").exists()


def test_null_pointer_arguments_get_100000_in_the_trace(libascendcl: Path,
                                                        tmp_path: Path) -> None:
    prog = _compile(tmp_path, "nulls", "#include <cstdio>\nint main() {\n"
                    "    aclInit(nullptr);\n    aclrtSetDevice(0);\n"
                    "    std::printf(\"%d\\n\", aclrtMalloc(nullptr, 64, "
                    "ACL_MEM_MALLOC_HUGE_FIRST));\n"
                    "    std::printf(\"%d\\n\", aclrtCreateStream(nullptr));\n"
                    "    std::printf(\"%d\\n\", aclmdlLoadFromFile(nullptr, nullptr));\n"
                    "    aclrtResetDevice(0);\n    aclFinalize();\n    return 0;\n}\n")
    proc, trace, _ = run_traced(prog, cwd=tmp_path, tag="c")
    assert proc.stdout.split() == ["100000"] * 3
    rows = [(trace.call_name(c), int(trace.calls["ret"][c]), trace.call_site(c)[1])
            for c in range(trace.calls.rows)]
    # lines 1-2 are _compile's includes
    assert rows[2:5] == [("acl.rt.malloc", 100000, 7), ("acl.rt.create_stream", 100000, 8),
                         ("acl.mdl.load_from_file", 100000, 9)]
    texts = [trace.string(int(m)) for m in trace.diags["message"]]
    assert any("aclrtMalloc: the output pointer devPtr is NULL" in t for t in texts)
    assert trace.allocs.rows == 0  # nothing was made that the program cannot see
