"""Data buffers (aclDataBuffer) and host views of memory for acl.util.

Functions over a ``Session``. A data buffer is a wrapper of an address and a size with no
validation at all (RT-impl ``data_buffer.cpp``): creating one checks nothing, destroying one
frees nothing. ``host_view`` is how acl.util, DVPP and profiling read and write host memory
the program owns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..constants import ErrorCode
from . import copies
from .errors import AclError
from .kinds import Ending, ObjectKind
from .memory import Region
from .objects import DataBuffer

if TYPE_CHECKING:
    from .session import Session


def create(s: Session, cid: int, addr: int, size: int) -> int:
    """aclCreateDataBuffer: no validation at all (RT-impl data_buffer.cpp)."""
    b = DataBuffer(-1, 0, addr, size)
    return s.register(b, ObjectKind.DATA_BUFFER, cid, lambda: f"data buffer {b.handle:#x}")


def lookup(s: Session, handle: int) -> DataBuffer:
    """Resolve a data-buffer handle (100000 for null, unknown or destroyed)."""
    b: DataBuffer = s.lookup(handle, DataBuffer, "data buffer")
    return b


def destroy(s: Session, cid: int, handle: int) -> None:
    """aclDestroyDataBuffer: deletes the wrapper only; the memory is not freed."""
    s.retire(lookup(s, handle), cid, Ending.EXPLICIT)


def host_view(s: Session, ptr: int, nbytes: int, what: str) -> tuple[Region, np.ndarray]:
    """A view of host memory ``[ptr, ptr+nbytes)`` (pinned or pageable) for acl.util.

    In the device run mode (RC) device memory is host memory too, so a device address
    gives a view of the device buffer."""
    if ptr != 0 and s.run_mode == "host" and s.memory.is_device_addr(ptr):
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"{what}: {ptr:#x} is a device address; copy it to host memory first "
                       "with acl.rt.memcpy")
    if nbytes < 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"{what}: size {nbytes} is negative")
    r = copies.resolve(s, ptr, nbytes, what)
    off = ptr - r.addr
    return r, r.buf[off:off + nbytes]
