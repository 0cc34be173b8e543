"""Build hook: ship the course (notebooks/, exercises/, solutions/) inside the package.

The course stays at the repository root, where the notebooks are edited, tested and opened by
``make lab``; ``build_py`` copies each folder's notebooks and READMEs into
``acl_lab/_course/<folder>`` of the build, so a wheel (and an install from the sdist) holds
them as package data. An editable install reads them from the repository instead
(``acl_lab.course.course_root``). Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: Folders of the course, copied as they are.
COURSE = ("notebooks", "exercises", "solutions")
#: Files of a course folder that are shipped.
PATTERNS = ("*.ipynb", "*.md")


def course_files() -> list[Path]:
    """The shipped files, relative to the repository root (hidden folders skipped)."""
    out = []
    for folder in COURSE:
        for pattern in PATTERNS:
            for f in sorted((HERE / folder).rglob(pattern)):
                rel = f.relative_to(HERE)
                if not any(part.startswith(".") for part in rel.parts):
                    out.append(rel)
    return out


class BuildPyWithCourse(build_py):
    """``build_py`` that also copies the course into ``acl_lab/_course``."""

    def run(self) -> None:
        """Build the package, then copy the course next to it."""
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the repository's folders
        for rel in course_files():
            target = Path(self.build_lib) / "acl_lab" / "_course" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HERE / rel, target)


setup(cmdclass={"build_py": BuildPyWithCourse})
