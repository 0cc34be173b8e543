"""``import acl_lab`` loads the runtime only: no plotly, no tracer, no ``acl`` wrappers (their
generation is most of an import's cost); ``acl_lab.Trace``, ``acl_lab.Finding`` and
``from acl_lab import Trace`` load them on first use. Checked in a fresh interpreter, whose
``sys.modules`` starts empty of acl_lab."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)

PROBE = """
import json, sys
import acl_lab
loaded = lambda prefix: sorted(m for m in sys.modules if m == prefix or m.startswith(prefix + "."))
before = {"tracer": loaded("acl_lab.tracer"), "acl": loaded("acl_lab.acl"),
          "plotly": loaded("plotly")}
from acl_lab import Trace
after = {"trace": Trace.__module__, "finding": acl_lab.Finding.__module__,
         "tracer": bool(loaded("acl_lab.tracer")), "plotly": loaded("plotly")}
with acl_lab.Session() as s:
    acl = acl_lab.install()
    ok = acl.init() == 0 and acl.finalize() == 0
    trace = s.finish()
print(json.dumps({"before": before, "after": after, "ran": ok,
                  "is_trace": isinstance(trace, Trace)}))
"""


def test_import_acl_lab_loads_no_tracer_and_no_wrappers() -> None:
    """Nothing of the tracer, ``acl_lab.acl`` or plotly after ``import acl_lab``; the lazy
    names resolve to the real classes and a program still runs and returns a Trace."""
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=100)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["before"] == {"tracer": [], "acl": [], "plotly": []}, seen["before"]
    assert seen["after"]["trace"] == "acl_lab.tracer.trace"
    assert seen["after"]["finding"] == "acl_lab.tracer.checks.base"
    assert seen["after"]["plotly"] == []
    assert seen["ran"] and seen["is_trace"]
