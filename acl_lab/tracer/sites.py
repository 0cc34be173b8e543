"""Source locations a learner can follow (``cell In[5]:3``), for the tracer and the views.

The implementation lives in ``acl_lab.runtime.sites`` (the runtime's own messages, such as a
``DeadlockError``'s, use it too, and the runtime imports nothing from the tracer); this module
is the tracer's name for it.
"""

from __future__ import annotations

from ..runtime.sites import CELL_PREFIX, cell_name, format_site, warn_at_caller

__all__ = ["CELL_PREFIX", "cell_name", "format_site", "warn_at_caller"]
