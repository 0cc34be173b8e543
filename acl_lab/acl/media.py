"""``acl.media``: the DVPP memory calls (the decode/resize subset comes with models)."""

from __future__ import annotations

from typing import Any

from ..runtime.session import Session
from ._boundary import acl_api


@acl_api("acl.media.dvpp_malloc", "acldvppMalloc", "L", out=1)
def dvpp_malloc(s: Session, th: Any, cid: int, size: int) -> int:
    """``(ptr, ret)``: device memory for DVPP, rounded like aclrtMalloc.

    Differs from real ACL: DVPP memory comes from the same capacity as other device memory.
    """
    return s.malloc(th, cid, size, 2, "dvpp")


@acl_api("acl.media.dvpp_free", "acldvppFree", "p")
def dvpp_free(s: Session, th: Any, cid: int, ptr: int) -> None:
    """Free DVPP memory; 107000 for host or unknown pointers (RT2 DevDvppFree).

    Differs from real ACL: no difference known.
    """
    s.free(th, cid, ptr, "dvpp")
