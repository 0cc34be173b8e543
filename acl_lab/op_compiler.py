"""``acl_lab.op_compiler``: online compilation of single operators (CANN's
``acl_op_compiler.h``, ``libacl_op_compiler``). **Not a pyACL module**: the Python binding has
no compiler entries; C and C++ programs call ``aclopCompile`` and ``aclopCompileAndExecute``,
whose C functions (``acl-lab config --toolkit``) run ``compile_op`` and
``compile_and_execute``.

The emulator's operators need no compilation: ``compile_op`` checks that acl_lab computes the
op for the descs given (its shape inference gives the output descs) and remembers it, so a
later ``acl.op.create_handle`` of the same op and descs finds it, as the real online cache
does; ``compile_and_execute`` does that and queues the op like ``acl.op.execute_v2``.
"""

from __future__ import annotations

from typing import Any

from .acl._boundary import acl_api
from .acl.op import _ints
from .constants import ErrorCode
from .runtime import singleop
from .runtime.errors import AclError
from .runtime.objects import HostThread
from .runtime.session import Session

#: aclopEngineType and aclopCompileType values (CANN acl_op.h, acl_op_compiler.h)
ENGINE_TYPES = (0, 1, 2)
ACL_COMPILE_SYS, ACL_COMPILE_UNREGISTERED = 0, 1


def _check(engine: int, flag: int, path: str | None) -> None:
    if engine not in ENGINE_TYPES or flag not in (ACL_COMPILE_SYS, ACL_COMPILE_UNREGISTERED):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"engineType {engine} or compileFlag {flag} is not a value of "
                       "aclopEngineType / aclopCompileType")
    if flag == ACL_COMPILE_UNREGISTERED:
        raise AclError(ErrorCode.ACL_ERROR_API_NOT_SUPPORT,
                       "ACL_COMPILE_UNREGISTERED compiles a custom operator from "
                       f"opPath {path!r}; acl_lab runs only its own operators")


@acl_api("acl_lab.op_compiler.compile_op", "aclopCompile", "sOOkiiz")
def compile_op(s: Session, th: HostThread, cid: int, op_type: str, in_descs: Any,
            out_descs: Any, attr: int, engine: int, flag: int, path: str | None) -> None:
    """Compile ``op_type`` for these input and output descs (``ret``).

    100024 when acl_lab has no such operator or it does not compute the output descs given.
    Differs from real ACL: nothing is compiled (the emulated operators are numpy kernels);
    ACL_COMPILE_UNREGISTERED (a custom op from ``opPath``) returns 200001.
    """
    ins, outs = _ints("acl_lab.op_compiler.compile_op", (in_descs, out_descs))
    _check(engine, flag, path)
    singleop.compile_op(s, op_type, ins, outs, attr)


@acl_api("acl_lab.op_compiler.compile_and_execute", "aclopCompileAndExecute", "sOOOOkiizk",
         launch=True)
def compile_and_execute(s: Session, th: HostThread, cid: int, op_type: str, in_descs: Any,
                        in_bufs: Any, out_descs: Any, out_bufs: Any, attr: int, engine: int,
                        flag: int, path: str | None, stream: int) -> None:
    """Compile ``op_type`` as :func:`compile_op` does, then queue it on ``stream`` as
    ``acl.op.execute_v2`` does (``ret``).

    Differs from real ACL: as :func:`compile_op`; compiling costs no host time.
    """
    lists = _ints("acl_lab.op_compiler.compile_and_execute",
                  (in_descs, in_bufs, out_descs, out_bufs))
    _check(engine, flag, path)
    compiled = singleop.compile_op(s, op_type, lists[0], lists[2], attr, remember=False)
    singleop.launch_op(s, th, cid, op_type, lists[0], lists[1], lists[2], lists[3], attr,
                       stream)
    singleop.remember_compiled(s, compiled)


__all__ = ["compile_and_execute", "compile_op"]
