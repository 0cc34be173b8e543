"""Transports under ``@acl_api``: where a parsed pyACL call is carried out.

``acl_lab.acl._boundary`` defines the seam (``Transport``, ``InProcess``, ``set_transport``).
This package holds the pipe transport, which runs the emulator in another process:

- ``codec``: the frames (restricted plain-data codec, never pickle);
- ``hostmem``: host memory at the same address in both processes (shadows, mirrors);
- ``client``: ``Pipe``, the learner's side;
- ``server``: ``Server``, the emulator's side, owning the Session and the recorder.

It is a package of its own, not part of ``acl_lab.grading``: the transport is a property of
the API layer (any program can run against an emulator in another process); grading is its
first user (``acl-lab grade`` records each submission's trace outside its sandbox).
"""

from __future__ import annotations

from .client import Pipe, PipeError, install

__all__ = ["Pipe", "PipeError", "install"]
