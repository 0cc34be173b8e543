"""``python -m acl_lab ...``: the ``acl-lab`` command (same subcommands, same exit codes)."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
