"""``python -m benchmarks``: run every ``bench_*.py`` module and print one table.

Options:
  --quick        small sizes (2,000 calls per repeat instead of 20,000); used by the smoke test
  --json FILE    also write the rows (and run metadata) as JSON to FILE
  --strict       exit 1 when a target is missed (by default MISS is only reported)
  --only NAME    run only the modules whose name contains NAME (repeatable)
  --profile      after the table, cProfile one traced memcpy_async loop (top 10 by tottime)

Each module provides ``run(quick: bool) -> list[Row]``. Progress goes to stderr, the table to
stdout.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import platform
import sys
import time
from collections.abc import Sequence
from typing import Any

from . import common
from .common import MISS, REPEATS, Row, format_table, n_calls, write_json


def bench_modules() -> list[str]:
    """Names of the ``bench_*`` modules of this package, sorted."""
    import benchmarks
    return sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                  if m.name.startswith("bench_"))


def run_all(quick: bool, only: Sequence[str] = ()) -> list[Row]:
    """Run the selected benchmark modules and return their rows in module order."""
    rows: list[Row] = []
    for name in bench_modules():
        if only and not any(o in name for o in only):
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        mod = importlib.import_module(f"benchmarks.{name}")
        rows.extend(mod.run(quick))
        print(f"  {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr,
              flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="run only modules whose name contains NAME")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile one traced memcpy_async loop after the table")
    args = ap.parse_args(argv)

    rows = run_all(args.quick, args.only)
    meta: dict[str, Any] = {
        "quick": args.quick,
        "calls_per_repeat": n_calls(args.quick),
        "repeats": REPEATS,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
    }
    print(f"acl_lab benchmarks: {'quick' if args.quick else 'full'} run, "
          f"{meta['calls_per_repeat']:,} calls x {REPEATS} repeats (medians), "
          f"Python {meta['python']} on {meta['machine']}")
    print(format_table(rows))
    missed = [r for r in rows if r.status == MISS]
    if missed:
        print(f"{len(missed)} target(s) missed: " + ", ".join(r.metric for r in missed))
    if args.json:
        write_json(args.json, rows, meta)
    if args.profile:
        from .bench_api_overhead import profile_memcpy_async
        print()
        print(f"cProfile of {n_calls(args.quick):,} traced memcpy_async calls "
              "(top 10 by tottime):")
        print(profile_memcpy_async(args.quick))
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["bench_modules", "common", "main", "run_all"]
