"""``acl.op``: single-operator execution, attributes and handles.

Operators are the emulator's numpy kernels (acl_lab.runtime.kernels); no compiled single-op
models are needed, so ``set_model_dir`` only checks its folder. Each execution is a kernel
task on the stream, timed by the operator's cost on the profile's AI cores.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..constants import ErrorCode
from ..runtime import singleop
from ..runtime.errors import AclError
from ..runtime.objects import HostThread
from ..runtime.session import Session
from ._binding import POST_PARSE
from ._boundary import acl_api

S = Session


def _ints(name: str, lists: tuple[Any, ...]) -> list[list[int]]:
    """The handle lists of an op call, checked with the binding's texts (its notes in
    ``_binding.POST_PARSE``: "argument 2, 3, 4, or 5 is not list" and the like)."""
    texts = POST_PARSE.get(name, (f"{name} args parse failed", f"{name} args parse failed"))
    if not all(isinstance(lst, list) for lst in lists):
        raise TypeError(texts[0])
    out = []
    for lst in lists:
        if not all(isinstance(x, int) for x in lst):
            raise TypeError(texts[1])
        out.append([x & ((1 << 64) - 1) for x in lst])
    return out


@acl_api("acl.op.set_model_dir", "aclopSetModelDir", "s")
def set_model_dir(s: S, th: HostThread, cid: int, path: str) -> None:
    """Where compiled single-op models live; a repeat call returns 100002.

    Differs from real ACL: nothing is loaded (the emulator's ops need no compiled models);
    the folder must exist (100003 otherwise).
    """
    singleop.set_op_model_dir(s, path)


@acl_api("acl.op.create_attr", "aclopCreateAttr", "", out="value")
def create_attr(s: S, th: HostThread, cid: int) -> int:
    """A new, empty op attribute set.

    Differs from real ACL: no difference known.
    """
    return singleop.create_op_attr(s, cid)


@acl_api("acl.op.destroy_attr", "aclopDestroyAttr", "k", out="none")
def destroy_attr(s: S, th: HostThread, cid: int, attr: int) -> None:
    """Destroy an attribute set (returns None).

    Differs from real ACL: destroying twice is ignored instead of undefined.
    """
    singleop.destroy_op_attr(s, cid, attr)


def _setter(kind: str, fmt: str, convert: Any) -> Any:
    @acl_api(f"acl.op.set_attr_{kind}", f"aclopSetAttr{kind.title().replace('_', '')}", fmt)
    def setter(s: S, th: HostThread, cid: int, attr: int, name: str, value: Any) -> None:
        """Set one attribute value.

        Differs from real ACL: numpy arrays are accepted for lists with the dtype they have
        (real pyACL reinterprets their raw memory, so an int32 array gives garbage).
        """
        try:
            converted = convert(value)
        except (TypeError, ValueError):  # an element pyACL could not parse
            raise TypeError(f"acl.op.set_attr_{kind} args parse failed") from None
        singleop.op_attr(s, attr).values[name] = converted

    setter.__name__ = f"set_attr_{kind}"
    return setter


def _list(conv: Any) -> Any:
    def f(v: Any) -> list[Any]:
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if not isinstance(v, (list, tuple)):
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "a list attribute needs a list")
        return [conv(x) for x in v]
    return f


set_attr_bool = _setter("bool", "ksB", lambda v: bool(v))
set_attr_int = _setter("int", "ksL", int)
set_attr_float = _setter("float", "ksf", float)
set_attr_string = _setter("string", "kss", str)
set_attr_list_int = _setter("list_int", "ksO", _list(int))
set_attr_list_float = _setter("list_float", "ksO", _list(float))
set_attr_list_bool = _setter("list_bool", "ksO", _list(bool))
set_attr_list_string = _setter("list_string", "ksO", _list(str))
set_attr_list_list_int = _setter("list_list_int", "ksO", _list(_list(int)))


@acl_api("acl.op.set_attr_data_type", "aclopSetAttrDataType", "ksi", out=1)
def set_attr_data_type(s: S, th: HostThread, cid: int, attr: int, name: str, dtype: int) -> int:
    """``(attr, ret)``: set a data-type attribute (this setter returns the attr too).

    Differs from real ACL: no difference known.
    """
    singleop.op_attr(s, attr).values[name] = dtype
    return attr


@acl_api("acl.op.execute_v2", "aclopExecuteV2", "sOOOOkk", launch=True)
def execute_v2(s: S, th: HostThread, cid: int, op_type: str, in_descs: Any, in_bufs: Any,
               out_descs: Any, out_bufs: Any, attr: int, stream: int) -> None:
    """Queue operator ``op_type`` on ``stream``; synchronize before reading outputs.

    The four lists must be Python lists of handles. Returns ret: 0; 100024
    (ACL_ERROR_OP_NOT_FOUND) for an unknown op type or when no op matches the given dtypes,
    shapes or attributes (what real aclopExecuteV2 returns when no compiled model matches);
    100000 for null descs/buffers or buffers smaller than their descs; 107002/107003 for
    context problems. Differs from real ACL: ops are numpy kernels, not compiled models.
    """
    ind, inb, outd, outb = _ints("acl.op.execute_v2", (in_descs, in_bufs, out_descs, out_bufs))
    singleop.launch_op(s, th, cid, op_type, ind, inb, outd, outb, attr, stream)


@acl_api("acl.op.execute", "aclopExecute", "sOOOOkk", launch=True)
def execute(s: S, th: HostThread, cid: int, op_type: str, in_descs: Any, in_bufs: Any,
            out_descs: Any, out_bufs: Any, attr: int, stream: int) -> None:
    """Deprecated form of execute_v2 (same arguments and codes).

    Differs from real ACL: as execute_v2.
    """
    ind, inb, outd, outb = _ints("acl.op.execute", (in_descs, in_bufs, out_descs, out_bufs))
    singleop.launch_op(s, th, cid, op_type, ind, inb, outd, outb, attr, stream)


@acl_api("acl.op.create_handle", "aclopCreateHandle", "sOOk", out=1)
def create_handle(s: S, th: HostThread, cid: int, op_type: str, in_descs: Any, out_descs: Any,
                  attr: int) -> int:
    """``(handle, ret)``: bind an op type to descs and attributes.

    Differs from real ACL: no difference known.
    """
    ind, outd = _ints("acl.op.create_handle", (in_descs, out_descs))
    return singleop.create_op_handle(s, cid, op_type, ind, outd, attr)


@acl_api("acl.op.execute_with_handle", "aclopExecWithHandle", "kOOk", launch=True)
def execute_with_handle(s: S, th: HostThread, cid: int, handle: int, in_bufs: Any, out_bufs: Any,
                        stream: int) -> None:
    """Run a handle from create_handle with these buffers.

    Differs from real ACL: as execute_v2.
    """
    inb, outb = _ints("acl.op.execute_with_handle", (in_bufs, out_bufs))
    singleop.execute_op_handle(s, th, cid, handle, inb, outb, stream)


@acl_api("acl.op.destroy_handle", "aclopDestroyHandle", "k", out="none")
def destroy_handle(s: S, th: HostThread, cid: int, handle: int) -> None:
    """Destroy an op handle (returns None).

    Differs from real ACL: no difference known.
    """
    singleop.destroy_op_handle(s, cid, handle)


@acl_api("acl.op.cast", "aclopCast", "kkkkBk", launch=True)
def cast(s: S, th: HostThread, cid: int, src_desc: int, src_buf: int, dst_desc: int, dst_buf: int,
         truncate: int, stream: int) -> None:
    """Queue a Cast to the destination desc's data type.

    Differs from real ACL: ``truncate`` follows numpy's astype (truncation toward zero).
    """
    singleop.cast(s, th, cid, src_desc, src_buf, dst_desc, dst_buf, truncate, stream)


@acl_api("acl.op.infer_shape", "aclopInferShape", "sOOiOk")
def infer_shape(s: S, th: HostThread, cid: int, op_type: str, in_descs: Any, in_bufs: Any,
                num_outputs: int, out_descs: Any, attr: int) -> None:
    """Fill the output descs' dims (and dtypes) for these inputs.

    Differs from real ACL: no difference known.
    """
    ind, inb, outd = _ints("acl.op.infer_shape", (in_descs, in_bufs, out_descs))
    singleop.infer_op_shape(s, op_type, ind, inb, num_outputs, outd, attr)
