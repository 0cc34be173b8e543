"""The views are reachable as functions from the package and from ``acl_lab``."""

from __future__ import annotations

import subprocess
import sys


def test_view_names_are_functions_even_after_submodule_imports() -> None:
    """``timeline`` and ``memory_map`` share names with their modules: the package must still
    give the functions, whichever is imported first (a fresh interpreter)."""
    code = ("import acl_lab.tracer.views.timeline, acl_lab.tracer.views.memory_map\n"
            "from acl_lab.tracer.views import timeline, memory_map, wait_graph, race_view\n"
            "import acl_lab\n"
            "print(all(callable(f) and type(f).__name__ == 'function' for f in "
            "(timeline, memory_map, wait_graph, race_view, acl_lab.timeline, "
            "acl_lab.memory_map, acl_lab.overlap_summary)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "True"


def test_submodules_load_on_first_attribute_use() -> None:
    """``acl_lab.zoo`` and ``acl_lab.grading`` work after a plain ``import acl_lab`` (the
    README's spelling), without importing plotly up front."""
    code = ("import sys, acl_lab\n"
            "print('plotly' in sys.modules, callable(acl_lab.zoo.path),"
            " callable(acl_lab.grading.check), 'plotly' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "True", "True", "False"]
