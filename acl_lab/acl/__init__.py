"""The emulated pyACL module: ``import acl`` resolves here under ``acl-lab run``.

Same layout and names as the real binding: top-level ``init``/``finalize``/version and
data-buffer functions; submodules ``acl.rt``, ``acl.util`` and ``acl.media``. Outputs come
first and ``ret`` last; handles and pointers are ints; wrong argument types raise
``TypeError("<name> args parse failed")``; error codes are the ACL header values. Like the
real module, it defines no constants (use ``acl_lab.constants`` or your own).
"""

from __future__ import annotations

from typing import Any

from ..constants import DATA_TYPE_SIZE, DATA_TYPE_SIZE_DEFAULT_CASE
from ..runtime.session import Session
from . import media, rt, util
from ._boundary import acl_api

S = Session


@acl_api("acl.init", "aclInit", "|s")
def init(s: S, th: Any, cid: int, config_path: str | None = None) -> None:
    """Initialise ACL (optionally with a JSON config path). A repeat returns 100002.

    Differs from real ACL: the config's dump/profiling settings are ignored; a missing
    config file returns 100003.
    """
    s.init(th, cid, config_path)


@acl_api("acl.finalize", "aclFinalize", "")
def finalize(s: S, th: Any, cid: int) -> None:
    """De-initialise: releases every device, stream, event and leaked allocation.

    A second call returns 100037. Differs from real ACL: what was still open is recorded
    as leaked in the trace (the findings name the allocating lines).
    """
    s.finalize(th, cid)


@acl_api("acl.finalize_reference", "aclFinalizeReference", "", out=1)
def finalize_reference(s: S, th: Any, cid: int) -> int:
    """``(ref_count, ret)``: decrement the init count; de-initialise at zero (100037 below 1).

    Differs from real ACL: no difference known.
    """
    return s.finalize(th, cid, reference=True)


@acl_api("acl.get_version", "aclrtGetVersion", "", out=3, default=(0, 0, 0))
def get_version(s: S, th: Any, cid: int) -> tuple[int, int, int]:
    """``(major, minor, patch, ret)``: the header version 1.17.0 (C-hdr acl_rt.h).

    Differs from real ACL: fixed at the version the reference documents.
    """
    return 1, 17, 0


@acl_api("acl.get_soc_name", "aclrtGetSocName", "", out="value", default=None)
def get_soc_name(s: S, th: Any, cid: int) -> str:
    """The SoC name of the emulated profile, e.g. ``"Ascend310P3"``.

    Differs from real ACL: it comes from the session's device profile.
    """
    return s.profile.soc_name


@acl_api("acl.get_recent_err_msg", "aclGetRecentErrMsg", "", out="value", default="")
def get_recent_err_msg(s: S, th: Any, cid: int) -> str:
    """The message of this thread's most recent failed call ("" when none).

    Differs from real ACL: messages are acl_lab's explanations, not CANN log lines.
    """
    msg, th.err_msg = th.err_msg, ""
    return str(msg)


@acl_api("acl.create_data_buffer", "aclCreateDataBuffer", "pL", out="value")
def create_data_buffer(s: S, th: Any, cid: int, data: int, size: int) -> int:
    """A data-buffer handle for ``(data, size)``; nothing is validated (0, 0 is allowed).

    Differs from real ACL: no difference known.
    """
    return s.create_data_buffer(cid, data, size)


@acl_api("acl.destroy_data_buffer", "aclDestroyDataBuffer", "k")
def destroy_data_buffer(s: S, th: Any, cid: int, buf: int) -> None:
    """Destroy the wrapper only: the memory is **not** freed. 100000 for null.

    Differs from real ACL: destroying twice returns 100000 instead of undefined behaviour.
    """
    s.destroy_data_buffer(cid, buf)


@acl_api("acl.get_data_buffer_addr", "aclGetDataBufferAddr", "k", out="value")
def get_data_buffer_addr(s: S, th: Any, cid: int, buf: int) -> int:
    """The buffer's pointer (0 for a null buffer).

    Differs from real ACL: an unknown handle also gives 0 instead of a crash.
    """
    return s.data_buffer(buf).addr


@acl_api("acl.get_data_buffer_size", "aclGetDataBufferSize", "k", out="value")
def get_data_buffer_size(s: S, th: Any, cid: int, buf: int) -> int:
    """The size truncated to uint32 (deprecated: use get_data_buffer_size_v2).

    Differs from real ACL: an unknown handle gives 0.
    """
    return s.data_buffer(buf).size & 0xFFFFFFFF


@acl_api("acl.get_data_buffer_size_v2", "aclGetDataBufferSizeV2", "k", out="value")
def get_data_buffer_size_v2(s: S, th: Any, cid: int, buf: int) -> int:
    """The buffer's size in bytes (size_t).

    Differs from real ACL: an unknown handle gives 0.
    """
    return s.data_buffer(buf).size


@acl_api("acl.update_data_buffer", "aclUpdateDataBuffer", "kpL")
def update_data_buffer(s: S, th: Any, cid: int, buf: int, data: int, size: int) -> None:
    """Point an existing data buffer at new memory. 100000 for a null buffer.

    Differs from real ACL: no difference known.
    """
    b = s.data_buffer(buf)
    b.addr, b.size = data, size


@acl_api("acl.data_type_size", "aclDataTypeSize", "i", out="value")
def data_type_size(s: S, th: Any, cid: int, dtype: int) -> int:
    """Bytes per element of an aclDataType (RT-impl aclDataTypeSizeImpl's table); values
    without a case of their own fall into its default case (8).

    Differs from real ACL: no difference known.
    """
    return DATA_TYPE_SIZE.get(dtype, DATA_TYPE_SIZE_DEFAULT_CASE)


__all__ = [
    "create_data_buffer", "data_type_size", "destroy_data_buffer", "finalize",
    "finalize_reference", "get_data_buffer_addr", "get_data_buffer_size",
    "get_data_buffer_size_v2", "get_recent_err_msg", "get_soc_name", "get_version", "init",
    "media", "rt", "update_data_buffer", "util",
]
