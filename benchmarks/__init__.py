"""Benchmarks for acl_lab: API-call overhead and trace size.

``python -m benchmarks`` (or ``make bench``) runs every ``bench_*.py`` module of this package
and prints one table; see ``benchmarks/__main__.py`` for the options and ``common.py`` for the
row format and the timing rules (medians of repeats, ratios measured in the same run).
"""

from __future__ import annotations
