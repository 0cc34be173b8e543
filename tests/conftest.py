"""Shared fixtures: a fresh Session bound for each test, and the emulated ``acl`` module."""

from __future__ import annotations

from collections.abc import Iterator
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
