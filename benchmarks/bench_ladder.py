"""The optimisation ladder: emulated ResNet-50 end-to-end latency beside the published figures.

Runs ``acl_lab.ladder.run_ladder`` on the Ascend310P3 profile (6 pictures, 4 with
``--quick``): the four pyACL variants (A sync + pageable, B + pinned memory, C + async
streams, D + DVPP decode) and the inference loop on one and two streams. Rows give each
variant's virtual time per image and the published one, each speed-up over A with the
published one and the relative error (target: within 15% of the article, ``RATIO_TOLERANCE``),
AI-core utilisation with one and two streams, the pinned-memory copy bandwidth gain, and the
real time the whole run took (target < 30 s, so ``make bench`` stays quick). The side-by-side
table goes to stderr with the progress; ``python -m benchmarks.bench_ladder`` prints it alone.

The latencies are virtual (deterministic): they do not depend on the machine; only ``run_s``
does. A MISS on a ratio is a finding about the cost model, reported, not hidden.
"""

from __future__ import annotations

import sys
import time

from acl_lab.ladder import PUBLISHED, RATIO_TOLERANCE, LadderResult, run_ladder

from .common import Row

NAME = "ladder"
#: real-time budget of one ladder run (``make bench`` must stay quick)
RUN_TARGET_S = 30.0


def rows(result: LadderResult, run_s: float) -> list[Row]:
    """The benchmark rows of a ladder result (``run_s``: the real time it took)."""
    out: list[Row] = []
    for key in ("A", "B", "C", "D"):
        out.append(Row(NAME, f"{key}_latency_ms", result.latency_ms(key), "ms"))
        out.append(Row(NAME, f"{key}_latency_published_ms", PUBLISHED.latency_ms[key], "ms"))
        if key == "A":
            continue
        out.append(Row(NAME, f"{key}_ratio", result.ratio(key), "x"))
        out.append(Row(NAME, f"{key}_ratio_published", PUBLISHED.ratio[key], "x"))
        out.append(Row(NAME, f"{key}_ratio_error", abs(result.ratio_error(key)), "frac",
                       RATIO_TOLERANCE))
    for n, pub in ((1, PUBLISHED.util_one_stream), (2, PUBLISHED.util_two_streams)):
        label = "1_stream" if n == 1 else "2_streams"
        out.append(Row(NAME, f"util_{label}", 100 * result.streams[n].utilisation, "%"))
        out.append(Row(NAME, f"util_{label}_published", 100 * pub, "%"))
    out.append(Row(NAME, "pinned_bw_gain", 100 * result.pinned_bw_gain, "%"))
    out.append(Row(NAME, "pinned_bw_gain_published", 100 * PUBLISHED.pinned_bw_gain, "%"))
    out.append(Row(NAME, "run_s", run_s, "s", RUN_TARGET_S))
    return out


def run(quick: bool) -> list[Row]:
    """Run the ladder (4 pictures with ``quick``, else 6) and print its table to stderr."""
    t0 = time.perf_counter()
    result = run_ladder("Ascend310P3", images=4 if quick else 6)
    run_s = time.perf_counter() - t0
    print(result.table(), file=sys.stderr, flush=True)
    return rows(result, run_s)


def main() -> int:
    """``python -m benchmarks.bench_ladder``: print the side-by-side table."""
    print(run_ladder("Ascend310P3").table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
