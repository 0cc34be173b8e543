"""Optional dependencies: the core needs only numpy; features name the extra they need.

``pip install acl_lab`` runs programs, records and exports traces with numpy alone. The rest
comes in extras (``pyproject.toml``):

* ``views``: plotly (the trace views and the offline HTML report);
* ``atc``: onnx (``acl-lab atc``, ONNX to .om);
* ``media``: Pillow (DVPP JPEG decode/encode, the media ladder);
* ``lab``: the course in JupyterLab (views, atc and media, plus JupyterLab and the widgets).

A feature imports its optional module through :func:`require`, which raises
:class:`MissingExtra` with one line that says what to install; the ``acl-lab`` CLI prints that
line and exits with status 2 instead of a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: The extra that brings each optional top-level module.
EXTRA_OF = {
    "plotly": "views",
    "onnx": "atc",
    "PIL": "media",
    "av": "media",
    "ipywidgets": "lab",
    "anywidget": "lab",
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; ``str()`` is one line naming the extra."""

    def __init__(self, module: str, extra: str, feature: str) -> None:
        self.module = module
        self.extra = extra
        self.feature = feature
        top = module.split(".")[0]
        super().__init__(f"{feature}: {top} is not installed "
                         f"(pip install 'acl_lab[{extra}]')", name=top)


def require(module: str, extra: str | None = None, feature: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` naming the extra that provides it.

    Args:
        module: a dotted module name (``"plotly.graph_objects"``, ``"PIL.Image"``).
        extra: the extra to install (default: from :data:`EXTRA_OF` by top-level name).
        feature: what needs it, for the message ("acl-lab report").

    Returns:
        The imported module.
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing = getattr(e, "name", None) or ""
        if missing and missing.split(".")[0] != top:
            raise  # the module exists but one of *its* imports failed: a real error
        raise MissingExtra(module, extra or EXTRA_OF.get(top, "lab"),
                           feature or f"this feature ({module})") from None
