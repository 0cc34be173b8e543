"""The C API of acl_lab: AscendCL headers and a ``libascendcl.so`` that runs the emulator.

C and C++ programs include ``acl/acl.h`` from ``acl_lab/include`` and link ``-lascendcl``
(``acl-lab config --cflags --libs``, or ``acl-lab cc prog.cpp -o prog``); ``acl-lab run
./prog`` runs them traced. :mod:`.build` makes the library, :mod:`.bridge` is its Python side,
:mod:`.sites` turns C return addresses into file:line, :mod:`.commands` holds the commands,
:mod:`.runenv` is what the run command and the library agree on (environment, files).
"""

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext acl_lab.capi``: register the ``%%acl_cpp`` cell magic."""
    from .magic import load_ipython_extension as load
    load(ipython)
