"""Shared fixtures: a fresh Session bound for each test, and the emulated ``acl`` module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import acl_lab
from acl_lab.runtime.session import Session


@pytest.fixture
def session() -> Iterator[Session]:
    """A fresh Session (Ascend310P3, one device, short watchdog), bound as current."""
    s = Session(watchdog=2.0)
    with s:
        yield s


@pytest.fixture
def acl(session: Session) -> Iterator[ModuleType]:
    """The emulated ``acl`` module talking to ``session``."""
    mod = acl_lab.install()
    yield mod
    acl_lab.uninstall()


@pytest.fixture
def ready(acl: ModuleType) -> Iterator[ModuleType]:
    """``acl`` after init + set_device(0): the usual starting point."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    yield acl


#: Files whose tests take the longest (module fixtures of minutes, whole notebooks, the
#: benchmark run): collected first, so ``make test``'s xdist workers start them at once and
#: the run does not end with one worker finishing them while the other waits.
SLOW_FILES = ("robustness/test_trace_ceiling.py", "test_benchmarks_smoke.py",
              "grading/test_transport.py", "course/test_notebooks.py",
              "robustness/test_trace_render_fuzz.py", "robustness/test_fuzz_api.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of :data:`SLOW_FILES` to the front, keeping every other order."""
    here = Path(__file__).parent

    def rank(item: pytest.Item) -> int:
        try:
            rel = Path(str(item.fspath)).relative_to(here).as_posix()
        except ValueError:
            return len(SLOW_FILES)
        return SLOW_FILES.index(rel) if rel in SLOW_FILES else len(SLOW_FILES)

    items.sort(key=rank)
