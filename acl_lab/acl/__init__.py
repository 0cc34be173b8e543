"""The emulated pyACL module: ``import acl`` resolves here under ``acl-lab run``.

Same layout and names as the real binding: top-level ``init``/``finalize``/version and
data-buffer functions; submodules ``acl.rt``, ``acl.mdl``, ``acl.op``, ``acl.util``,
``acl.media``, ``acl.prof``, ``acl.blas``, ``acl.fv`` and ``acl.himpi``. Outputs come first and
``ret`` last; handles and pointers are ints; wrong argument types raise the binding's
``TypeError`` (``"<name> args parse failed"`` and its variants); error codes are the ACL header
values. Every entry of the binding's method table exists (``_binding.TABLE``): the ones acl_lab
does not emulate raise ``NotImplementedError`` saying why. Like the real module, it defines no
constants (use ``acl_lab.constants`` or your own).
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np

from ..constants import DATA_TYPE_SIZE, DATA_TYPE_SIZE_DEFAULT_CASE, ErrorCode
from ..runtime import buffers, devices, singleop
from ..runtime.errors import AclError
from ..runtime.objects import HostThread
from ..runtime.session import Session
from . import _binding, blas, mdl, media, op, prof, rt, util
from ._boundary import acl_api

S = Session


@acl_api("acl.init", "aclInit", "|s")
def init(s: S, th: HostThread, cid: int, config_path: str | None = None) -> None:
    """Initialise ACL (optionally with a JSON config path). A repeat returns 100002.

    Differs from real ACL: the config's dump/profiling settings are ignored; a missing
    config file returns 100003.
    """
    devices.init(s, th, cid, config_path)


@acl_api("acl.finalize", "aclFinalize", "")
def finalize(s: S, th: HostThread, cid: int) -> None:
    """De-initialise: releases every device, stream, event and leaked allocation.

    A second call returns 100037. Differs from real ACL: what was still open is recorded
    as leaked in the trace (the findings name the allocating lines).
    """
    devices.finalize(s, th, cid)


@acl_api("acl.finalize_reference", "aclFinalizeReference", "", out=1)
def finalize_reference(s: S, th: HostThread, cid: int) -> int:
    """``(ref_count, ret)``: decrement the init count; de-initialise at zero (100037 below 1).

    Differs from real ACL: no difference known.
    """
    return devices.finalize(s, th, cid, reference=True)


@acl_api("acl.get_version", "aclrtGetVersion", "", out=3, default=(0, 0, 0))
def get_version(s: S, th: HostThread, cid: int) -> tuple[int, int, int]:
    """``(major, minor, patch, ret)``: the header version 1.17.0 (C-hdr acl_rt.h).

    Differs from real ACL: fixed at the version the reference documents.
    """
    return 1, 17, 0


@acl_api("acl.get_soc_name", "aclrtGetSocName", "", out="value", default=None)
def get_soc_name(s: S, th: HostThread, cid: int) -> str:
    """The SoC name of the emulated profile, e.g. ``"Ascend310P3"``.

    Differs from real ACL: it comes from the session's device profile.
    """
    return s.profile.soc_name


@acl_api("acl.get_recent_err_msg", "aclGetRecentErrMsg", "", out="value", default="")
def get_recent_err_msg(s: S, th: HostThread, cid: int) -> str:
    """The message of this thread's most recent failed call ("" when none).

    Differs from real ACL: messages are acl_lab's explanations, not CANN log lines.
    """
    msg, th.err_msg = th.err_msg, ""
    return str(msg)


@acl_api("acl.create_data_buffer", "aclCreateDataBuffer", "pk", out="value")
def create_data_buffer(s: S, th: HostThread, cid: int, data: int, size: int) -> int:
    """A data-buffer handle for ``(data, size)``; nothing is validated (0, 0 is allowed).

    Differs from real ACL: no difference known.
    """
    return buffers.create(s, cid, data, size)


@acl_api("acl.destroy_data_buffer", "aclDestroyDataBuffer", "k")
def destroy_data_buffer(s: S, th: HostThread, cid: int, buf: int) -> None:
    """Destroy the wrapper only: the memory is **not** freed. 100000 for null.

    Differs from real ACL: destroying twice returns 100000 instead of undefined behaviour.
    """
    buffers.destroy(s, cid, buf)


@acl_api("acl.get_data_buffer_addr", "aclGetDataBufferAddr", "k", out="value")
def get_data_buffer_addr(s: S, th: HostThread, cid: int, buf: int) -> int:
    """The buffer's pointer (0 for a null buffer).

    Differs from real ACL: an unknown handle also gives 0 instead of a crash.
    """
    return buffers.lookup(s, buf).addr


@acl_api("acl.get_data_buffer_size", "aclGetDataBufferSize", "k", out="value")
def get_data_buffer_size(s: S, th: HostThread, cid: int, buf: int) -> int:
    """The size truncated to uint32 (deprecated: use get_data_buffer_size_v2).

    Differs from real ACL: an unknown handle gives 0.
    """
    return buffers.lookup(s, buf).size & 0xFFFFFFFF


@acl_api("acl.get_data_buffer_size_v2", "aclGetDataBufferSizeV2", "k", out="value")
def get_data_buffer_size_v2(s: S, th: HostThread, cid: int, buf: int) -> int:
    """The buffer's size in bytes (size_t).

    Differs from real ACL: an unknown handle gives 0.
    """
    return buffers.lookup(s, buf).size


@acl_api("acl.update_data_buffer", "aclUpdateDataBuffer", "kpk")
def update_data_buffer(s: S, th: HostThread, cid: int, buf: int, data: int, size: int) -> None:
    """Point an existing data buffer at new memory. 100000 for a null buffer.

    Differs from real ACL: no difference known.
    """
    b = buffers.lookup(s, buf)
    b.addr, b.size = data, size


@acl_api("acl.data_type_size", "aclDataTypeSize", "i", out="value")
def data_type_size(s: S, th: HostThread, cid: int, dtype: int) -> int:
    """Bytes per element of an aclDataType (RT-impl aclDataTypeSizeImpl's table); values
    without a case of their own fall into its default case (8).

    Differs from real ACL: no difference known.
    """
    return DATA_TYPE_SIZE.get(dtype, DATA_TYPE_SIZE_DEFAULT_CASE)


#: aclLogLevel names (C-hdr acl_base.h: ACL_DEBUG 0, ACL_INFO 1, ACL_WARNING 2, ACL_ERROR 3)
_LOG_LEVELS = {0: "DEBUG", 1: "INFO", 2: "WARNING", 3: "ERROR"}


@acl_api("acl.app_log", "aclAppLog", "is", out="none")
def app_log(s: S, th: HostThread, cid: int, level: int, message: str) -> None:
    """Log ``message`` at ``level`` (0 debug, 1 info, 2 warning, 3 error); returns None.

    Real ACL writes the line to the CANN log (plog, ``~/ascend/log``), never to stdout or
    stderr (RT-impl ``log.cpp`` ``aclAppLogImpl``: "<tid> <func>:<file>:<line>: \"<msg>\"",
    kept when the level passes the log level). The binding passes ``message`` as a "%s"
    argument, so a ``%`` in it is printed as is.
    Differs from real ACL: the line goes into the trace as a note at the call (kind
    ``app_log``, with the caller's file:line), whatever the log level setting.
    """
    name = _LOG_LEVELS.get(level, f"LEVEL{level}")
    s.diag(cid, "app_log", f"[{name}] {message}", level=0)


@acl_api("acl.float16_to_float", "aclFloat16ToFloat", "H", out="value", default=0.0)
def float16_to_float(s: S, th: HostThread, cid: int, bits: int) -> float:
    """The float value of IEEE half-precision ``bits`` (uint16).

    Differs from real ACL: no difference known (RT-impl ``types/fp16_impl.cpp``; numpy's
    conversion is exact).
    """
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


@acl_api("acl.float_to_float16", "aclFloatToFloat16", "f", out="value")
def float_to_float16(s: S, th: HostThread, cid: int, value: float) -> int:
    """The IEEE half-precision bits (uint16) of ``value``, rounded to nearest even.

    Differs from real ACL: no difference known (RT-impl ``types/fp16_impl.cpp`` rounds to
    nearest even like numpy; overflow gives infinity).
    """
    with np.errstate(over="ignore"):
        half = np.array([value], dtype=np.float32).astype(np.float16)
    return int(half.view(np.uint16)[0])


# ----------------------------------------------------------------------------- tensor descs


@acl_api("acl.create_tensor_desc", "aclCreateTensorDesc", "iOi", out="value")
def create_tensor_desc(s: S, th: HostThread, cid: int, dtype: int, dims: Any, fmt: int) -> int:
    """A tensor descriptor: note the argument order (dtype, dims list, format).

    ``dims`` must be a Python list (TypeError otherwise, as pyACL). Differs from real ACL:
    a dim outside int64 (which the binding cannot pass as ``int64_t``) gives 0 with 100000
    in the trace instead of an undocumented binding error.
    """
    _dims_list(dims)
    return singleop.create_tensor_desc(s, cid, dtype, dims, fmt)


def _dims_list(dims: Any) -> None:
    """The binding's list check for dims (py_init_acl.cpp's list converter): not a list ->
    TypeError "argument 2 is not list", an item that is not an int -> "invalid data type"."""
    if not isinstance(dims, list):
        raise TypeError("argument 2 is not list")
    if not all(isinstance(d, int) for d in dims):
        raise TypeError("invalid data type")


@acl_api("acl.destroy_tensor_desc", "aclDestroyTensorDesc", "k", out="none")
def destroy_tensor_desc(s: S, th: HostThread, cid: int, desc: int) -> None:
    """Destroy a tensor descriptor (returns None).

    Differs from real ACL: destroying twice is ignored instead of undefined.
    """
    singleop.destroy_tensor_desc(s, cid, desc)


@acl_api("acl.get_tensor_desc_type", "aclGetTensorDescType", "k", out="value", default=-1)
def get_tensor_desc_type(s: S, th: HostThread, cid: int, desc: int) -> int:
    """The aclDataType (-1 for a null desc).

    Differs from real ACL: no difference known.
    """
    return singleop.tensor_desc(s, desc).dtype


@acl_api("acl.get_tensor_desc_format", "aclGetTensorDescFormat", "k", out="value",
         default=-1)
def get_tensor_desc_format(s: S, th: HostThread, cid: int, desc: int) -> int:
    """The aclFormat (-1 for a null desc).

    Differs from real ACL: no difference known.
    """
    return singleop.tensor_desc(s, desc).format


@acl_api("acl.get_tensor_desc_size", "aclGetTensorDescSize", "k", out="value")
def get_tensor_desc_size(s: S, th: HostThread, cid: int, desc: int) -> int:
    """Bytes of the described tensor: element count x data type size (samples malloc it).

    Differs from real ACL: the formula is the reference's assumption (unverified).
    """
    return singleop.tensor_desc_size(s, desc)


@acl_api("acl.get_tensor_desc_element_count", "aclGetTensorDescElementCount", "k",
         out="value")
def get_tensor_desc_element_count(s: S, th: HostThread, cid: int, desc: int) -> int:
    """Product of the dims.

    Differs from real ACL: no difference known.
    """
    return singleop.tensor_desc(s, desc).element_count()


@acl_api("acl.get_tensor_desc_num_dims", "aclGetTensorDescNumDims", "k", out="value")
def get_tensor_desc_num_dims(s: S, th: HostThread, cid: int, desc: int) -> int:
    """Number of dims.

    Differs from real ACL: no difference known.
    """
    return len(singleop.tensor_desc(s, desc).dims)


@acl_api("acl.get_tensor_desc_dim", "aclGetTensorDescDim", "kk", out="value", default=-1)
def get_tensor_desc_dim(s: S, th: HostThread, cid: int, desc: int, index: int) -> int:
    """Dim ``index`` (deprecated: use get_tensor_desc_dim_v2); -1 when out of range.

    Differs from real ACL: no difference known.
    """
    return _dim(s, desc, index)


@acl_api("acl.get_tensor_desc_dim_v2", "aclGetTensorDescDimV2", "kk", out=1)
def get_tensor_desc_dim_v2(s: S, th: HostThread, cid: int, desc: int, index: int) -> int:
    """``(dim, ret)``; ret 100000 when ``index`` is out of range.

    Differs from real ACL: no difference known.
    """
    return _dim(s, desc, index)


def _dim(s: S, desc: int, index: int) -> int:
    dims = singleop.tensor_desc(s, desc).dims
    if not 0 <= index < len(dims):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"dim index {index} is out of range (the desc has {len(dims)})")
    return dims[index]


@acl_api("acl.set_tensor_shape", "aclSetTensorShape", "kO")
def set_tensor_shape(s: S, th: HostThread, cid: int, desc: int, dims: Any) -> None:
    """Replace the dims of a desc.

    Differs from real ACL: a dim outside int64 returns 100000 (the binding cannot pass it as
    ``int64_t``; what it does instead is not documented).
    """
    _dims_list(dims)
    d = singleop.tensor_desc(s, desc)
    d.dims = singleop.int64_dims(dims, "acl.set_tensor_shape")


@acl_api("acl.set_tensor_format", "aclSetTensorFormat", "ki")
def set_tensor_format(s: S, th: HostThread, cid: int, desc: int, fmt: int) -> None:
    """Set the desc's format.

    Differs from real ACL: no difference known.
    """
    singleop.tensor_desc(s, desc).format = fmt


@acl_api("acl.set_tensor_const", "aclSetTensorConst", "kpk")
def set_tensor_const(s: S, th: HostThread, cid: int, desc: int, ptr: int, size: int) -> None:
    """Mark an input constant with ``size`` bytes of host data at ``ptr`` (copied now).

    Differs from real ACL: no difference known.
    """
    d = singleop.tensor_desc(s, desc)
    _, view = buffers.host_view(s, ptr, size, "acl.set_tensor_const")
    d.const = view.tobytes()


@acl_api("acl.set_tensor_place_ment", "aclSetTensorPlaceMent", "ki")
def set_tensor_place_ment(s: S, th: HostThread, cid: int, desc: int, memtype: int) -> None:
    """Where the input's data lives: ACL_MEMTYPE_DEVICE (0) or ACL_MEMTYPE_HOST (1).

    Differs from real ACL: no difference known.
    """
    singleop.tensor_desc(s, desc).placement = memtype


@acl_api("acl.set_tensor_desc_name", "aclSetTensorDescName", "ks", out="none")
def set_tensor_desc_name(s: S, th: HostThread, cid: int, desc: int, name: str) -> None:
    """Name a desc (returns None).

    Differs from real ACL: no difference known.
    """
    singleop.tensor_desc(s, desc).name = name


@acl_api("acl.get_tensor_desc_name", "aclGetTensorDescName", "k", out="value", default="")
def get_tensor_desc_name(s: S, th: HostThread, cid: int, desc: int) -> str:
    """The desc's name ("" when unnamed).

    Differs from real ACL: no difference known.
    """
    return singleop.tensor_desc(s, desc).name


# ----------------------------------------------------------------------------- the rest
# Submodules the binding has and acl_lab does not emulate at all, then a stub for every entry
# of the method table a module does not define (each raises NotImplementedError naming it).
fv = types.ModuleType("acl_lab.acl.fv", "acl.fv: not emulated (see _binding).")
himpi = types.ModuleType("acl_lab.acl.himpi", "acl.himpi: not emulated (see _binding).")
SUBMODULES = ("rt", "mdl", "op", "util", "media", "prof", "blas", "fv", "himpi")
_binding.install_stubs(sys.modules[__name__], "acl")
for _sub in SUBMODULES:
    _binding.install_stubs(globals()[_sub], f"acl.{_sub}")

__all__ = [
    "app_log",
    "blas",
    "create_data_buffer",
    "create_tensor_desc",
    "data_type_size",
    "destroy_data_buffer",
    "destroy_tensor_desc",
    "finalize",
    "finalize_reference",
    "float16_to_float",
    "float_to_float16",
    "fv",
    "get_data_buffer_addr",
    "get_data_buffer_size",
    "get_data_buffer_size_v2",
    "get_recent_err_msg",
    "get_soc_name",
    "get_tensor_desc_dim",
    "get_tensor_desc_dim_v2",
    "get_tensor_desc_element_count",
    "get_tensor_desc_format",
    "get_tensor_desc_name",
    "get_tensor_desc_num_dims",
    "get_tensor_desc_size",
    "get_tensor_desc_type",
    "get_version",
    "himpi",
    "init",
    "mdl",
    "media",
    "op",
    "prof",
    "rt",
    "set_tensor_const",
    "set_tensor_desc_name",
    "set_tensor_format",
    "set_tensor_place_ment",
    "set_tensor_shape",
    "update_data_buffer",
    "util",
]
