"""The first figure in a fresh process: what a learner waits for after starting a kernel.

Each figure is the median over fresh child processes (``python -c``, the venv's interpreter)
of the wall time from the child's start to the end of the step, minus the median of a
baseline child that runs ``pass`` (interpreter start-up), both measured in the same run:

* ``import_acl_lab_s``: ``import acl_lab`` (no plotly: the core must start fast);
* ``first_figure_s``: ``import acl_lab``, a tiny traced program (init, set_device, malloc,
  free, reset, finalize), ``acl_lab.timeline(trace)`` and ``fig.to_plotly_json()``;
* ``first_figure_notebook_s``: the same, then what a kernel's display of the figure does
  (``views.notebook_output``'s display hook): build the ``acl_lab`` mime bundle (plotly JSON
  plus static HTML). This is the issue's "first figure in a fresh kernel" (target 0.5 s);
* ``first_figure_via_plotly_registry_s`` (info): the same bundle through plotly's renderer
  registry (``notebook_output.register()``, what the kernel did before the display hook);
* ``plotly_renderers_import_s`` (info): ``import plotly.io._renderers`` alone: it imports
  nbformat, jsonschema and jsonschema's format checkers (``rfc3987_syntax`` builds a parser
  at import; ``python -X importtime`` shows it), the difference of the two rows above;
* ``first_figure_notebook_cpu_s`` (info): the CPU time (user + system) of the
  ``first_figure_notebook_s`` child minus the baseline child's: on a busy machine the wall
  time waits for a core, the CPU time much less.

Bytecode caches are warm: the children write them to a private folder
(``PYTHONPYCACHEPREFIX``, also when the parent runs with ``PYTHONDONTWRITEBYTECODE``, which
would make every child compile every module) and one unmeasured child per step runs first
(a learner's second kernel start, not the first run after an install).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from .common import Row, median

NAME = "first_figure"
#: The issue's target for the first figure in a fresh kernel (seconds above start-up).
TARGET_S = 0.5
#: Child processes per measurement (normal / quick).
REPEATS = (5, 1)

_CLOCK = "import time; _t0 = time.perf_counter()\n"
#: the child's last line: its own time from the first statement (proves the body ran)
_REPORT = "import json; print(json.dumps({'t': time.perf_counter() - _t0}))\n"
_PROGRAM = """
import acl_lab
from acl_lab import Session
with Session() as s:
    acl = acl_lab.install()
    acl.init(); acl.rt.set_device(0)
    p, _ = acl.rt.malloc(1024, 0)
    acl.rt.free(p)
    acl.rt.reset_device(0); acl.finalize()
    trace = s.finish()
fig = acl_lab.timeline(trace)
fig.to_plotly_json()
"""
_DISPLAY = """
from acl_lab.tracer.views import notebook_output
bundle = notebook_output.mimebundle(fig.to_dict())
assert "text/html" in bundle
"""
_REGISTRY = """
from acl_lab.tracer.views import notebook_output
import plotly.io as pio
assert notebook_output.register()
bundle = pio.renderers[notebook_output.RENDERER].to_mimebundle(fig.to_dict())
assert "text/html" in bundle
"""

#: metric -> child body (between the clock start and the report)
STEPS = {
    "baseline_python_pass_s": "pass\n",
    "import_acl_lab_s": "import acl_lab\n",
    "first_figure_s": _PROGRAM,
    "first_figure_notebook_s": _PROGRAM + _DISPLAY,
    "first_figure_via_plotly_registry_s": _PROGRAM + _REGISTRY,
    "plotly_renderers_import_s": "import plotly.io._renderers\n",
}


def child_times(body: str, pycache: str | None = None) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of a fresh child that runs ``body`` (bytecode cached under
    ``pycache`` when given): wall measured by the parent, cpu the child's user + system
    time (``RUSAGE_CHILDREN``; the children run one at a time), which a busy machine
    inflates much less than the wall time."""
    code = _CLOCK + body + _REPORT
    drop = {"PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE"} if pycache else \
        {"PYTHONPROFILEIMPORTTIME"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    if pycache:
        env["PYTHONPYCACHEPREFIX"] = pycache
    env.setdefault("MPLBACKEND", "Agg")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"first-figure child failed: {proc.stderr[-2000:]}")
    json.loads(proc.stdout.strip().splitlines()[-1])  # the body ran to its end
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def run(quick: bool) -> list[Row]:
    """Median wall time of each step over fresh children, minus the ``pass`` baseline."""
    n = REPEATS[1] if quick else REPEATS[0]
    times: dict[str, list[float]] = {k: [] for k in STEPS}
    cpu: dict[str, list[float]] = {k: [] for k in STEPS}
    with tempfile.TemporaryDirectory(prefix="acl_lab_pycache_") as pycache:
        for body in STEPS.values():  # warm the bytecode cache (not measured)
            child_times(body, pycache)
        for _ in range(n):  # interleaved, so a slow phase of the machine hits every step
            for metric, body in STEPS.items():
                wall, used = child_times(body, pycache)
                times[metric].append(wall)
                cpu[metric].append(used)
    base = median(times["baseline_python_pass_s"])
    rows = [Row(NAME, "baseline_python_pass_s", base, "s")]
    for metric in STEPS:
        if metric == "baseline_python_pass_s":
            continue
        target = TARGET_S if metric in ("first_figure_s", "first_figure_notebook_s") else None
        rows.append(Row(NAME, metric, max(0.0, median(times[metric]) - base), "s", target))
    # info: the same step's CPU time (child user + system, minus the baseline child's)
    cpu_base = median(cpu["baseline_python_pass_s"])
    rows.append(Row(NAME, "first_figure_notebook_cpu_s",
                    max(0.0, median(cpu["first_figure_notebook_s"]) - cpu_base), "s"))
    return rows
