"""The registry of pageable host buffers stays bounded without dropping buffers in use."""

from __future__ import annotations

from types import ModuleType

import numpy as np

from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.runtime.memory import MemorySystem
from acl_lab.runtime.session import Session
from tests.helpers import ok


def test_orphaned_temporaries_are_dropped_but_held_buffers_stay(ready: ModuleType,
                                                                session: Session) -> None:
    """``bytes_to_ptr(arr.tobytes())`` in a loop keeps at most ORPHANS_KEPT orphans alive,
    while a buffer the program still holds keeps working after many registrations."""
    kept = np.arange(64, dtype=np.uint8).tobytes()
    kept_ptr = ready.util.bytes_to_ptr(kept)
    dev = ok(ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
    for i in range(MemorySystem.ORPHANS_KEPT * 3):
        ptr = ready.util.bytes_to_ptr(np.full(64, i % 251, np.uint8).tobytes())
        assert ready.rt.memcpy(dev, 64, ptr, 64, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    pageable = session.memory._pageable
    assert len(pageable) <= MemorySystem.ORPHANS_KEPT + 2
    assert ready.rt.memcpy(dev, 64, kept_ptr, 64, ACL_MEMCPY_HOST_TO_DEVICE) == 0
