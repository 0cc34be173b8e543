"""One way to write amounts (``tracer.units``): findings, the report, the views and the CLI
all go through it."""

from __future__ import annotations

import pytest

from acl_lab.tracer.units import human_bytes, human_ns


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 bytes"), (1023, "1023 bytes"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
    ((1 << 20) - 1, "1024.0 KiB"), (1 << 20, "1.0 MiB"), (3 << 30, "3.0 GiB"),
])
def test_bytes(n: int, text: str) -> None:
    assert human_bytes(n) == text


def test_bytes_in_tables_use_the_short_unit() -> None:
    assert human_bytes(64, "B") == "64 B"
    assert human_bytes(2048, "B") == "2.0 KiB"  # the unit only names amounts under 1 KiB


@pytest.mark.parametrize(("ns", "text"), [
    (0, "0 ns"), (999, "999 ns"), (1000, "1.000 µs"), (2_500_000, "2.500 ms"),
    (1_234_000_000, "1.234 s"), (12.6, "13 ns"),
])
def test_durations(ns: float, text: str) -> None:
    assert human_ns(ns) == text


def test_the_views_and_the_checks_have_no_copy_of_their_own() -> None:
    import acl_lab.cli as cli
    from acl_lab.tracer.checks import base
    from acl_lab.tracer.views import call_table, memory_map, report, timeline, widgets

    assert base.human_bytes is human_bytes
    for mod in (cli, memory_map, report, timeline, widgets, call_table):
        assert not hasattr(mod, "_human") and not hasattr(mod, "_human_bytes")
        assert not hasattr(mod, "_fmt_dur") and not hasattr(mod, "_human_time")
