"""The course that ships with the package, and ``acl-lab course DIR`` that copies it out.

The course is three folders: ``notebooks/`` (the lessons), ``exercises/`` (the graded starter
notebooks, what ``acl-lab grade --release`` reads) and ``solutions/`` (for instructors). In a
wheel they are package data under ``acl_lab/_course/``; in a checkout of the repository (an
editable install) they are the repository's own folders next to the package.

``acl-lab course DIR`` copies ``notebooks/`` and ``exercises/`` into ``DIR``;
``--solutions`` adds ``solutions/``. Existing files are never overwritten unless ``--force``
is given.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

#: The folders of the course, in the order they are copied.
PARTS = ("notebooks", "exercises", "solutions")
#: What learners get; ``solutions`` only on request.
LEARNER_PARTS = ("notebooks", "exercises")
#: Where a wheel keeps the course, inside the package.
SHIPPED = Path(__file__).resolve().parent / "_course"
#: Where a checkout keeps it: the repository root, the package's parent folder.
CHECKOUT = Path(__file__).resolve().parent.parent


def course_root() -> Path | None:
    """The folder that holds ``notebooks/``, ``exercises/`` and ``solutions/``, or None.

    The shipped copy (``acl_lab/_course``) when there is one, else the repository checkout the
    package was imported from.
    """
    for root in (SHIPPED, CHECKOUT):
        if all((root / part).is_dir() for part in LEARNER_PARTS):
            return root
    return None


def course_dir(part: str) -> Path:
    """The folder of one part of the course (``"exercises"``, ...); it may not exist."""
    if part not in PARTS:
        raise ValueError(f"unknown course part {part!r} (one of {', '.join(PARTS)})")
    root = course_root()
    return (root if root is not None else SHIPPED) / part


def course_files(part: str) -> list[Path]:
    """The files of one part, relative to its folder (hidden files and folders skipped)."""
    top = course_dir(part)
    if not top.is_dir():
        return []
    return sorted(f.relative_to(top) for f in top.rglob("*")
                  if f.is_file() and not any(p.startswith(".") or p == "__pycache__"
                                             for p in f.relative_to(top).parts))


def copy_course(dest: str | Path, *, solutions: bool = False,
                force: bool = False) -> list[Path]:
    """Copy the course into ``dest`` (created if needed); returns the files written.

    Raises:
        FileNotFoundError: this installation has no course (neither shipped nor checked out).
        FileExistsError: a file to write exists already and ``force`` is False (nothing is
            written then).
    """
    if course_root() is None:
        raise FileNotFoundError("this installation of acl_lab has no course files "
                                "(reinstall it from a wheel or the sdist)")
    dest = Path(dest)
    parts = PARTS if solutions else LEARNER_PARTS
    plan = [(course_dir(part) / rel, dest / part / rel)
            for part in parts for rel in course_files(part)]
    clash = [target for _, target in plan if target.exists()]
    if clash and not force:
        more = f" and {len(clash) - 1} more" if len(clash) > 1 else ""
        raise FileExistsError(f"{clash[0]} exists{more}; use --force to overwrite")
    for src, target in plan:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return [target for _, target in plan]


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``acl-lab course`` options on ``p``."""
    p.add_argument("dir", metavar="DIR", help="where to put notebooks/ and exercises/")
    p.add_argument("--solutions", action="store_true",
                   help="also copy solutions/ (for instructors)")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    return p


def main(opts: argparse.Namespace) -> int:
    """``acl-lab course DIR [--solutions] [--force]``; returns the exit code."""
    try:
        written = copy_course(opts.dir, solutions=opts.solutions, force=opts.force)
    except (FileNotFoundError, FileExistsError, OSError) as e:
        print(f"acl-lab course: {e}", file=sys.stderr)
        return 1
    parts = PARTS if opts.solutions else LEARNER_PARTS
    counts = ", ".join(
        f"{part}/ ({sum(1 for w in written if w.is_relative_to(Path(opts.dir) / part))} files)"
        for part in parts)
    print(f"acl-lab course: wrote {counts} into {opts.dir}", file=sys.stderr)
    return 0
