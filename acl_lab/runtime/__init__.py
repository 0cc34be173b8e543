"""The emulated machine: Session, devices, contexts, streams, events, memory, virtual time.

Pythonic names; raises ``AclError``/``DeadlockError`` inside; imports nothing from the pyACL
layer, plotly or ipywidgets (the trace recorder is attached at wiring time only).
"""

from __future__ import annotations

from .errors import AccessError, AclError, DeadlockError, WaitEdge
from .profiles import PROFILES, DeviceProfile, get_profile
from .session import Session, current_session, set_current_session

__all__ = ["PROFILES", "AccessError", "AclError", "DeadlockError", "DeviceProfile", "Session",
           "WaitEdge", "current_session", "get_profile", "set_current_session"]
