"""``python -m benchmarks.install_sizes``: what ``pip install acl_lab[EXTRA]`` brings.

Builds the wheel (``pip wheel --no-deps --no-build-isolation``), creates one fresh venv per
variant (core, ``views``, ``lab`` by default; ``--extras`` to choose), installs the wheel
with that extra from the package index, and prints what the install added to the venv's
site-packages (bytes and distributions; venv's own pip is not counted). Not a ``bench_*``
module: it needs the index and takes minutes, so ``make bench`` does not run it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import venv
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tree_bytes(top: Path) -> int:
    """Bytes of the regular files under ``top`` (symlinks not followed)."""
    total = 0
    for dirpath, _, files in os.walk(top):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def build_wheel(out: Path) -> Path:
    """Build this project's wheel into ``out``; returns its path."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", str(ROOT), "-w", str(out)], check=True)
    (wheel,) = out.glob("acl_lab-*.whl")
    return wheel


def measure(wheel: Path, extra: str, where: Path) -> tuple[int, int]:
    """(bytes, distributions) ``wheel[extra]`` adds to a fresh venv's site-packages."""
    env_dir = where / (extra or "core")
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    seed = set(site.iterdir())  # what venv itself put there (pip, maybe setuptools)
    spec = f"acl_lab[{extra}] @ {wheel.as_uri()}" if extra else str(wheel)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    spec], check=True)
    added = [p for p in site.iterdir() if p not in seed]
    size = sum(tree_bytes(p) if p.is_dir() else p.stat().st_size for p in added)
    return size, sum(1 for p in added if p.name.endswith(".dist-info"))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; prints one line per variant."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.install_sizes",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extras", default=",views,lab",
                    help="comma-separated extras; empty for the core (default ',views,lab')")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="acl_lab_sizes_") as tmp:
        wheel = build_wheel(Path(tmp) / "wheel")
        print(f"wheel {wheel.name}: {wheel.stat().st_size / 1e6:.2f} MB")
        for extra in args.extras.split(","):
            size, dists = measure(wheel, extra.strip(), Path(tmp))
            label = f"acl_lab[{extra}]" if extra else "acl_lab (core)"
            print(f"{label:<22} adds {size / 1e6:8.1f} MB to site-packages "
                  f"({dists} distributions)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
