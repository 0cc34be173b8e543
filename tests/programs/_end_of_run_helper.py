"""A helper module with a module-level registry of resources, as the samples' helper library
keeps one: everything registered is released by the device object's ``__del__``."""

from __future__ import annotations

from typing import Any


class Registry:
    """Objects with a ``release()`` method, released together (once each)."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, item: Any) -> None:
        """Register ``item`` for ``release_all``."""
        self.items.append(item)

    def release_all(self) -> None:
        """Release every registered item, newest first."""
        while self.items:
            self.items.pop().release()


REGISTRY = Registry()
