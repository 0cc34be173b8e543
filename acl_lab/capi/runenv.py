"""What ``acl-lab run`` and the C program's library agree on: the environment and the files.

``acl-lab run`` (:mod:`.commands`) sets the environment and reads the files; the library's
Python side (:mod:`.bridge`, in the program's process) reads the environment and writes the
files. Both import this module, which imports only the runtime, so the command that starts a
compiled program does not load the pyACL wrappers the bridge needs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..runtime.session import Session


def started_marker(trace_path: str) -> str:
    """The file the library creates beside ``trace_path`` when its first ACL call starts
    the embedded interpreter."""
    return trace_path + ".started"


def session_from_env(env: Mapping[str, str] = os.environ) -> Session:
    """A session configured as ``acl-lab run`` asked through the environment ``env``."""
    return Session(profile=env.get("ACL_LAB_PROFILE") or None,
                   device_count=int(env.get("ACL_LAB_DEVICES") or 1),
                   pageable_async=env.get("ACL_LAB_PAGEABLE_ASYNC") or "async",
                   run_mode=env.get("ACL_LAB_RUN_MODE") or "host")
