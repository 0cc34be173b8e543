"""Imported first by the views package: without plotly, importing the views (or running
``acl-lab report``) raises MissingExtra, whose one line says to install the ``views`` extra."""

from __future__ import annotations

from ..._extras import require

require("plotly", "views", "the trace views and the HTML report")
