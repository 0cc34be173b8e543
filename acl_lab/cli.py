"""The ``acl-lab`` command: ``run`` a pyACL program, ``atc`` to convert ONNX, ``export`` a trace,
``report`` a trace as one offline HTML page.

``acl-lab run [--profile NAME] [--trace FILE] [--summary FILE] PROG.py [ARGS...]`` runs an
unmodified program with ``import acl`` resolved to the emulator, keeps its exit code, writes
the trace and a JSON summary even when the program dies of an exception or a detected
deadlock, and prints a short summary to stderr; ``--report FILE`` adds the HTML report
(``acl-lab report TRACE -o FILE`` makes one from a saved trace). Options go before the
program; everything after it belongs to the program (as with ``python -m cProfile``).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import threading
import time
import traceback
from typing import Any

from .runtime.errors import DeadlockError
from .runtime.profiles import PROFILES


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="acl-lab", description="acl_lab: an AscendCL (pyACL) "
                                "emulator with a tracer, for learning CANN without an NPU.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a pyACL program on the emulator")
    r.add_argument("--profile", default="Ascend310P3", choices=sorted(PROFILES),
                   help="device profile (default Ascend310P3)")
    r.add_argument("--devices", type=int, default=1, help="number of devices (default 1)")
    r.add_argument("--trace", metavar="FILE", help="write the trace (.acltrace) here")
    r.add_argument("--summary", metavar="FILE", help="write the JSON summary here")
    r.add_argument("--chrome", metavar="FILE", help="also write a Perfetto/Chrome JSON trace")
    r.add_argument("--pageable-async", choices=("async", "sync"), default="async",
                   help="memcpy_async from pageable memory: CANN 7/8 rule or newest runtime")
    r.add_argument("--report", metavar="FILE",
                   help="also write the offline HTML report (findings, timeline, memory map)")
    r.add_argument("--quiet", action="store_true", help="no summary on stderr")
    r.add_argument("program", help="the Python program to run")
    sub.add_parser("atc", help="convert an ONNX model to an emulated .om (ATC's flags)",
                   add_help=False)
    e = sub.add_parser("export", help="convert a saved trace for another viewer")
    e.add_argument("trace", help="an .acltrace file")
    e.add_argument("--chrome", metavar="OUT.json", required=True,
                   help="write Chrome Trace Event JSON (open it in ui.perfetto.dev)")
    h = sub.add_parser("report", help="write a self-contained HTML report of a saved trace")
    h.add_argument("trace", help="an .acltrace file")
    h.add_argument("-o", "--output", metavar="FILE",
                   help="the HTML file (default: the trace's name with .html)")
    h.add_argument("--title", help="the page title")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the program")
    from .grading.grade import add_arguments as add_grade_arguments
    add_grade_arguments(sub.add_parser("grade", help="grade submitted exercise notebooks "
                                       "(CSV and HTML feedback per learner)"))
    return p


def _human(n: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def run(opts: argparse.Namespace) -> int:
    """Run one program under a fresh Session; always write the outputs it was asked for."""
    from . import install, uninstall
    from .runtime.session import Session, set_current_session

    prog = opts.program
    if not os.path.isfile(prog):
        print(f"acl-lab: {prog}: no such file", file=sys.stderr)
        return 2
    session = Session(profile=opts.profile, device_count=opts.devices,
                      pageable_async=opts.pageable_async)
    prev = set_current_session(session)
    install()
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else ""
    sys.argv = [prog, *opts.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(prog)))
    exit_code = 0
    error: str | None = None
    try:
        runpy.run_path(prog, run_name="__main__")
    except SystemExit as e:
        code = e.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
    except DeadlockError as e:
        exit_code = 1
        error = f"DeadlockError: {e.summary}"
        print(e.report, file=sys.stderr)
    except BaseException as e:  # the program's own failure: report it, keep going
        exit_code = 1
        error = f"{type(e).__name__}: {e}"
        traceback.print_exc()
    finally:
        sys.argv = saved_argv
        if sys.path and sys.path[0] != saved_path0:
            sys.path.pop(0)
    stragglers = _wait_for_threads(session)
    trace = session.finish()
    uninstall()
    set_current_session(prev)
    findings = trace.findings()
    summary: dict[str, Any] = {
        "exit_code": exit_code,
        "error": error,
        "findings": [f.to_summary() for f in findings],
        "stats": trace.stats(),
    }
    if opts.trace:
        trace.save(opts.trace)
    if opts.chrome:
        trace.save_chrome_trace(opts.chrome)
    if opts.summary:
        with open(opts.summary, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2)
    if opts.report:
        _write_run_report(trace, opts, summary, findings)
    if not opts.quiet:
        st = summary["stats"]
        print(f"acl-lab: exit {exit_code}; {st['api_calls']} API calls, {st['tasks']} tasks, "
              f"{st['allocations']} allocations, peak device memory "
              f"{_human(st['peak_device_bytes'])}, virtual time "
              f"{st['virtual_time_ns'] / 1e6:.3f} ms; {len(findings)} finding(s)",
              file=sys.stderr)
        for f in findings:
            first = f.message.split(". Rule:")[0].splitlines()[0]
            print(f"  {f.severity} {f.kind} {f.file}:{f.line}: {first}", file=sys.stderr)
    if stragglers:
        print(f"acl-lab: {stragglers} thread(s) still running after the program ended; "
              "stopped", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_code)
    return exit_code


def _write_run_report(trace: Any, opts: argparse.Namespace, summary: dict[str, Any],
                      findings: list[Any]) -> None:
    """``run --report FILE``: the HTML report of the finished run; a failure is only reported
    (the program's exit code stands). plotly is imported here, only when asked for."""
    from .tracer.views.report import write_report
    run_info = {**summary, "program": opts.program, "profile": opts.profile}
    try:
        write_report(trace, opts.report, summary=run_info, findings=findings)
    except (OSError, ValueError) as e:
        print(f"acl-lab: could not write the report {opts.report}: {e}", file=sys.stderr)
        return
    if not opts.quiet:
        size = os.path.getsize(opts.report)
        print(f"acl-lab: wrote report {opts.report} ({_human(size)})", file=sys.stderr)


def _wait_for_threads(session: Any, grace: float = 2.0) -> int:
    """Let the program's other threads finish; release emulator waits after ``grace`` s."""
    deadline = time.monotonic() + grace
    me = threading.current_thread()
    others = [t for t in threading.enumerate() if t is not me and t.is_alive()
              and t not in session.background_threads]
    for t in others:
        t.join(max(0.0, deadline - time.monotonic()))
    session.close()
    for t in others:
        t.join(0.2)
    return sum(1 for t in others if t.is_alive() and not t.daemon)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``acl-lab`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["atc"]:
        from .atc import main as atc_main
        return atc_main(args[1:])
    opts = _parser().parse_args(args)
    if opts.command == "run":
        return run(opts)
    if opts.command == "export":
        return export(opts)
    if opts.command == "report":
        return report(opts)
    if opts.command == "grade":
        from .grading.grade import main as grade_main
        return grade_main(opts)
    return 2


def export(opts: argparse.Namespace) -> int:
    """``acl-lab export TRACE --chrome OUT.json``: a trace for Perfetto / chrome://tracing."""
    from .tracer.trace import Trace
    try:
        trace = Trace.load(opts.trace)
    except (OSError, ValueError) as e:
        print(f"acl-lab export: {e}", file=sys.stderr)
        return 2
    trace.save_chrome_trace(opts.chrome)
    print(f"acl-lab export: wrote {opts.chrome} ({trace.calls.rows} calls, "
          f"{trace.tasks.rows} tasks)", file=sys.stderr)
    return 0


def report(opts: argparse.Namespace) -> int:
    """``acl-lab report TRACE [-o FILE]``: one self-contained HTML page that opens offline."""
    from .tracer.trace import Trace
    try:
        trace = Trace.load(opts.trace)
    except (OSError, ValueError) as e:
        print(f"acl-lab report: {e}", file=sys.stderr)
        return 2
    out = opts.output or os.path.splitext(opts.trace)[0] + ".html"
    from .tracer.views.report import write_report
    try:
        write_report(trace, out, title=opts.title)
    except OSError as e:
        print(f"acl-lab report: cannot write {out}: {e}", file=sys.stderr)
        return 2
    print(f"acl-lab report: wrote {out} ({_human(os.path.getsize(out))}; "
          f"{trace.calls.rows} calls, {trace.tasks.rows} tasks)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
