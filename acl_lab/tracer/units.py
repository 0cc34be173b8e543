"""How findings, reports, views and the CLI write amounts: bytes and virtual time.

One implementation of each, so a finding, the report's summary and a hover text name the
same amount the same way.
"""

from __future__ import annotations

#: Byte units from the largest, with their sizes.
_BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def human_bytes(n: int, unit: str = "bytes") -> str:
    """``n`` bytes as a short text: ``1.5 MiB``, ``2.0 KiB``, ``64 bytes`` (``unit`` names
    amounts under 1 KiB: ``"B"`` in tables and hover texts)."""
    for name, size in _BYTE_UNITS:
        if n >= size:
            return f"{n / size:.1f} {name}"
    return f"{n} {unit}"


def human_ns(ns: float) -> str:
    """A virtual duration or time as a short text: ``1.234 s``, ``2.500 ms``, ``3.000 µs``,
    ``40 ns``."""
    if ns >= 1_000_000_000:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1_000_000:
        return f"{ns / 1e6:.3f} ms"
    if ns >= 1_000:
        return f"{ns / 1e3:.3f} µs"
    return f"{ns:.0f} ns"
