"""acl_lab code names its return codes: ``ErrorCode`` members, not literal numbers (issue 15).

An AST walk over every module of acl_lab (except constants.py, where the numbers are defined)
finds a literal int where a code goes:

* the first argument of ``AclError(...)`` / ``AccessError(...)`` (any int: a number that is no
  member is a typo this also catches), or an argument of another ``...Error(...)`` call whose
  value is a code;
* a keyword argument ``code=`` or a parameter default of a parameter named ``code``.

Docstrings, comments and messages keep their numbers (they are strings, not int literals).
Every module is checked: none is exempt.

The second half checks what the change must not alter: codes stay plain ``int`` on the wire,
in the return values a program gets and in the trace.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import ModuleType

import acl_lab
from acl_lab.constants import ErrorCode
from acl_lab.runtime import dvpp
from acl_lab.runtime.session import Session

PACKAGE = Path(acl_lab.__file__).parent
CODES = {int(m) for m in ErrorCode if int(m) != 0}


#: Calls whose first argument is the code.
FIRST_IS_CODE = {"AclError", "AccessError", "ModelFileError", "ModelRunError"}


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def literal_codes(source: str) -> list[tuple[int, int, str]]:
    """``(line, value, where)`` of every literal int in ``source`` standing where a code goes."""
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            for i, arg in enumerate(node.args):
                v = _int(arg)
                if v is None:
                    continue
                if (i == 0 and name in FIRST_IS_CODE) or \
                        (name.endswith("Error") and v in CODES):
                    found.append((arg.lineno, v, f"{name}() argument {i}"))
            for kw in node.keywords:
                v = _int(kw.value)
                if kw.arg == "code" and v is not None:
                    found.append((kw.value.lineno, v, f"{name}(code=...)"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs: list[tuple[ast.arg, ast.expr]] = list(
                zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]
            for param, default in pairs:
                v = _int(default)
                if param.arg == "code" and v is not None:
                    found.append((default.lineno, v, f"default of parameter {param.arg}"))
    return found


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "constants.py")


def test_the_walk_finds_each_form_of_a_literal_code() -> None:
    src = '''
def f(x, code=107000):
    raise AclError(107002, "no context")
def g():
    raise AccessError(12345, "a number that is no code", "null")
def h():
    raise OpError("bad attr", 100000)
def k():
    return lookup(1, code=507053)
def ok(code=ErrorCode.ACL_ERROR_RT_PARAM_INVALID):
    """Fails with 107000 (a docstring keeps its number)."""
    raise AclError(ErrorCode.ACL_ERROR_RT_CONTEXT_NULL, "107002 in a message")  # 107002
'''
    found = literal_codes(src)
    assert sorted((line, v) for line, v, _ in found) == [
        (2, 107000), (3, 107002), (5, 12345), (7, 100000), (9, 507053)]


def test_no_module_raises_with_a_literal_code() -> None:
    offences = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        for line, value, where in literal_codes(path.read_text(encoding="utf-8")):
            name = ErrorCode(value).name if value in CODES else "no ErrorCode member"
            offences.append(f"acl_lab/{rel}:{line}: {value} ({name}) as {where}")
    assert not offences, ("write ErrorCode.<name> (from acl_lab.constants) instead of the "
                          "number:\n" + "\n".join(offences))


# --- codes stay plain ints -------------------------------------------------------------------

def test_an_error_code_member_formats_as_its_number() -> None:
    """Messages format codes with f-strings and the trace's JSON with json.dumps; a member
    gives its value (Python 3.11 IntEnum: str() and format() are int's)."""
    m = ErrorCode.ACL_ERROR_RT_CONTEXT_NULL
    assert (f"{m}", str(m), f"{m:>7}") == ("107002", "107002", " 107002")
    assert json.dumps({"ret": m}) == '{"ret": 107002}'


def test_aclerror_keeps_a_plain_int_code() -> None:
    from acl_lab.runtime.errors import AccessError, AclError
    from acl_lab.runtime.opdefs import OpError

    for err in (AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID, "m"),
                AccessError(ErrorCode.ACL_ERROR_INVALID_PARAM, "m"),
                OpError("m", ErrorCode.ACL_ERROR_OP_NOT_FOUND), OpError("m")):
        assert type(err.code) is int
    assert str(AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID, "bad")) == "107000: bad"


def test_a_failing_call_returns_and_records_a_plain_int(ready: ModuleType,
                                                        session: Session) -> None:
    """``ret`` of a call failing in a rewritten module is an ``int`` (real pyACL builds it with
    Py_BuildValue), a code read back from a desc too, and the trace holds the same number."""
    acl = ready
    _, ret = acl.rt.malloc(0, 0)  # size 0: ACL_ERROR_INVALID_PARAM from runtime/memory.py
    assert (ret, type(ret)) == (100000, int)
    desc = acl.media.dvpp_create_stream_desc()
    # the runtime stores a member where a task fails (video.py FRAME_FAILED, a task status)
    dvpp.stream_desc(session, desc).ret_code = ErrorCode.ACL_ERROR_UNSUPPORTED_JPEG
    got = acl.media.dvpp_get_stream_desc_ret_code(desc)
    assert (got, type(got)) == (148052, int)
    trace = session.trace()
    rets = [int(trace.calls["ret"][i]) for i in range(trace.calls.rows)
            if trace.call_name(i) == "acl.rt.malloc"]
    assert rets == [100000]
