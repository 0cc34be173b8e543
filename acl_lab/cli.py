"""The ``acl-lab`` command: ``run`` a pyACL program, ``atc`` to convert ONNX, ``export`` a trace,
``report`` a trace as one offline HTML page.

``acl-lab run [--profile NAME] [--trace FILE] [--summary FILE] PROG.py [ARGS...]`` runs an
unmodified program with ``import acl`` resolved to the emulator, keeps its exit code, writes
the trace and a JSON summary even when the program dies of an exception or a detected
deadlock, and prints a short summary to stderr; ``--report FILE`` adds the HTML report
(``acl-lab report TRACE -o FILE`` makes one from a saved trace). Options go before the
program; everything after it belongs to the program (as with ``python -m cProfile``).

Every output path is checked before the program runs (one line naming it and the problem,
exit 2). The program ends the way the interpreter ends it: its threads are joined, its
``atexit`` handlers run and its module globals are collected (``__del__`` releases), and only
then does the session tear down what is left, which is what gets reported as leaked. A Ctrl-C
ends the program with exit 130; both outputs are still written, and the trace meta says
``interrupted`` with the Python stack (``interrupted_stack``, ``_file``, ``_line``).
"""

from __future__ import annotations

import argparse
import atexit
import builtins
import contextlib
import gc
import json
import os
import signal
import sys
import threading
import traceback
import weakref
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any

from . import __version__
from ._extras import MissingExtra
from .runtime import rawsync
from .runtime.errors import DeadlockError
from .runtime.profiles import PROFILES


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="acl-lab", description="acl_lab: an AscendCL (pyACL) "
                                "emulator with a tracer, for learning CANN without an NPU.")
    p.add_argument("--version", action="version", version=f"acl-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a pyACL program (or a binary from acl-lab cc) on the "
                       "emulator")
    r.add_argument("--profile", default="Ascend310P3", choices=sorted(PROFILES),
                   help="device profile (default Ascend310P3)")
    r.add_argument("--devices", type=int, default=1, help="number of devices (default 1)")
    r.add_argument("--trace", metavar="FILE", help="write the trace (.acltrace) here")
    r.add_argument("--summary", metavar="FILE", help="write the JSON summary here")
    r.add_argument("--chrome", metavar="FILE", help="also write a Perfetto/Chrome JSON trace")
    r.add_argument("--perfetto", metavar="FILE",
                   help="also write a native Perfetto protobuf trace (.pftrace)")
    r.add_argument("--sarif", metavar="FILE",
                   help="also write the findings as SARIF 2.1.0 (for code-review tools)")
    r.add_argument("--fail-on", choices=("error", "warning", "info"),
                   help="exit 3 when the program exited 0 but findings of this severity or "
                   "worse exist (a CI gate on leaks, races, deadlocks)")
    r.add_argument("--pageable-async", choices=("async", "sync"), default="async",
                   help="memcpy_async from pageable memory: CANN 7/8 rule or newest runtime")
    r.add_argument("--run-mode", choices=("host", "device"), default="host",
                   help="acl.rt.get_run_mode: host (ACL_HOST, a card in a server) or device "
                   "(ACL_DEVICE, on-board: acl.util reads device memory directly)")
    r.add_argument("--report", metavar="FILE",
                   help="also write the offline HTML report (findings, timeline, memory map)")
    r.add_argument("--quiet", action="store_true", help="no summary on stderr")
    r.add_argument("--seed", type=int, default=None, metavar="S",
                   help="the host schedule's seed: 0 (the default) is the plain schedule, "
                   "another seed a perturbed one; the same seed replays the same run")
    r.add_argument("--explore", type=int, default=None, metavar="N",
                   help="run the program under N schedules (seeds 0..N-1) and report every "
                   "finding and every differing outcome with the seed that shows it")
    r.add_argument("program", help="the Python program (or compiled binary) to run")
    sub.add_parser("atc", help="convert an ONNX model to an emulated .om (ATC's flags)",
                   add_help=False)
    sub.add_parser("cc", help="compile a C/C++ AscendCL program against libascendcl "
                   "(g++ -g ...)", add_help=False)
    sub.add_parser("config", help="compiler and linker flags (--cflags --libs) or the "
                   "CANN-shaped toolkit folder (--toolkit)",
                   add_help=False)
    e = sub.add_parser("export", help="convert a saved trace for another viewer")
    e.add_argument("trace", help="an .acltrace file")
    e.add_argument("--chrome", metavar="OUT.json",
                   help="write Chrome Trace Event JSON (open it in ui.perfetto.dev)")
    e.add_argument("--perfetto", metavar="OUT.pftrace",
                   help="write a native Perfetto protobuf trace (integer nanoseconds)")
    h = sub.add_parser("report", help="write a self-contained HTML report of a saved trace")
    h.add_argument("trace", help="an .acltrace file")
    h.add_argument("-o", "--output", metavar="FILE",
                   help="the HTML file (default: the trace's name with .html)")
    h.add_argument("--title", help="the page title")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the program")
    from .grading.grade import add_arguments as add_grade_arguments
    add_grade_arguments(sub.add_parser("grade", help="grade submitted exercise notebooks "
                                       "(CSV and HTML feedback per learner)"))
    from .course import add_arguments as add_course_arguments
    add_course_arguments(sub.add_parser("course", help="copy the course notebooks and "
                                        "exercises into a folder (--solutions for instructors)"))
    return p


def run(opts: argparse.Namespace) -> int:
    """Run one program under a fresh Session; always write the outputs it was asked for.

    The end of a run goes the way the interpreter's own exit goes, so the program's clean-up
    finds ACL still there: its other threads are joined, then its ``atexit`` handlers run and
    its module globals are collected (``__del__`` releases), and only then does the session
    tear down what is still open (those are the leaks). A Ctrl-C is held back while an ACL
    call is writing its records, ends the program with exit 130, and the trace says so.
    """
    from . import install, uninstall
    from .runtime.session import Session, set_current_session

    prog = opts.program
    if not os.path.isfile(prog):
        print(f"acl-lab: {prog}: no such file", file=sys.stderr)
        return 2
    if opts.explore is None:
        _default_outputs(opts)
    for flag, path in _outputs(opts):
        problem = _output_problem(path)
        if problem:
            print(f"acl-lab: --{flag} {path}: {problem}", file=sys.stderr)
            return 2
    if opts.explore is not None:  # each schedule in an acl-lab run of its own
        from .schedules import explore_main
        return explore_main(opts)
    if opts.seed is not None:  # the C library's embedded session reads it too
        os.environ["ACL_LAB_SEED"] = str(opts.seed)
    from .capi.commands import is_binary, run_binary
    if is_binary(prog):  # a C/C++ program linked with libascendcl (acl-lab cc)
        return run_binary(opts, _write_outputs, _RunEnd)
    session = Session(profile=opts.profile, device_count=opts.devices,
                      pageable_async=opts.pageable_async, run_mode=opts.run_mode,
                      seed=opts.seed)
    from .tracer.summary import ResultsDigest
    results = ResultsDigest()
    session.hooks.subscribe(results)
    opts.results_digest = results
    prev = set_current_session(session)
    install()
    end = _RunEnd()
    program = _Program(prog, opts.args)
    with _InterruptGuard(session):
        end.catch(program.run)
        others = _program_threads(session)
        # after a deadlock the real process hangs in that wait: the threads it left waiting
        # are not joined again (that would report the same deadlock at exit)
        end.catch(lambda: _join_threads(others, scheduled=not end.deadlocked), cleanup=True)
        end.catch(lambda: program.clean_up(any(t.is_alive() for t in others)), cleanup=True)
        if program.interrupted is not None:
            end.interrupt(program.interrupted)
    with _InterruptGuard(None):  # writing the outputs is not interrupted
        stragglers = _release_threads(session, others)
        program.restore()
        if session.interrupt_pending:  # arrived in the last call: the program was interrupted
            session.interrupt_pending = False
            end.interrupt(None)
        if end.interrupted is not None and session.recorder is not None:
            session.recorder.meta.update(end.interrupted)
        trace = session.finish()
        # A call after this (a late __del__) gets a fresh, uninitialised session, or during
        # interpreter shutdown the boundary's after-exit codes: never a crash.
        uninstall()
        set_current_session(prev)
        exit_code = _write_outputs(trace, opts, end)
    if stragglers:
        print(f"acl-lab: {stragglers} thread(s) still running after the program ended; "
              "stopped", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_code)
    return exit_code


#: Exit status of a program ended by SIGINT (128 + 2, as a shell reports it).
EXIT_INTERRUPTED = 130


class _RunEnd:
    """How the program ended: exit code, error text and, when interrupted, where."""

    def __init__(self) -> None:
        self.exit_code = 0
        self.error: str | None = None
        #: the program ended in a DeadlockError (its threads stay in their waits)
        self.deadlocked = False
        #: the trace meta entries of an interrupted run (None when it was not interrupted)
        self.interrupted: dict[str, Any] | None = None

    def catch(self, step: Any, cleanup: bool = False) -> None:
        """Run ``step()``; turn how it ended into the exit code, like the interpreter would."""
        try:
            step()
        except SystemExit as e:
            if cleanup:
                return
            code = e.code
            self.exit_code = code if isinstance(code, int) else (0 if code is None else 1)
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)
        except KeyboardInterrupt as e:
            _print_traceback(e)
            self.interrupt(e)
        except DeadlockError as e:
            self.exit_code = 1
            self.deadlocked = True
            self.error = f"DeadlockError: {e.summary}"
            print(e.report, file=sys.stderr)
        except BaseException as e:  # the program's own failure: report it, keep going
            self.exit_code = 1
            self.error = f"{type(e).__name__}: {e}"
            _print_traceback(e)

    def interrupt(self, e: BaseException | None) -> None:
        """The run was interrupted (``e``: the KeyboardInterrupt, with the program's stack)."""
        self.exit_code = EXIT_INTERRUPTED
        if self.interrupted is not None:
            return  # the first interrupt is the one that ended the program
        stack = "".join(_format_traceback(e)) if e is not None else \
            "KeyboardInterrupt (while the program's last ACL call ended)\n"
        frames = traceback.extract_tb(e.__traceback__) if e is not None else []
        where = next((f for f in reversed(frames) if not f.filename.startswith(_PACKAGE_DIR)
                      and not f.filename.startswith("<")), None)
        self.error = "KeyboardInterrupt" + (f" at {where.filename}:{where.lineno}"
                                            if where is not None else "")
        self.interrupted = {"interrupted": True, "interrupted_stack": stack,
                            "interrupted_file": where.filename if where else "",
                            "interrupted_line": (where.lineno or 0) if where else 0}


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _format_traceback(e: BaseException) -> list[str]:
    """The traceback as ``python PROG`` shows it: without the frames of this module that
    ran the program (the chained exceptions keep theirs)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return traceback.format_exception(type(e), e.with_traceback(tb), tb)


def _print_traceback(e: BaseException) -> None:
    sys.stderr.write("".join(_format_traceback(e)))


def _write_outputs(trace: Any, opts: argparse.Namespace, end: _RunEnd) -> int:
    """Write the trace, Chrome trace, summary and report asked for; print the summary line.
    Returns the exit code (the program's, or 2 when an output could not be written)."""
    findings = trace.findings()
    from .tracer.summary import build_summary
    from .tracer.units import human_bytes
    digest = getattr(opts, "results_digest", None)
    summary = build_summary(trace, findings, exit_code=end.exit_code, error=end.error,
                            interrupted=end.interrupted is not None,
                            results=digest.hexdigest() if digest is not None else None)
    exit_code = end.exit_code
    writers: list[tuple[str, str | None, Any]] = [
        ("trace", opts.trace, lambda path: trace.save(path)),
        ("chrome", opts.chrome, lambda path: trace.save_chrome_trace(path, findings)),
        ("perfetto", opts.perfetto, lambda path: _save_perfetto(trace, path, findings)),
        ("summary", opts.summary, lambda path: _write_json(path, summary)),
        ("sarif", opts.sarif, lambda path: _write_sarif(path, findings)),
    ]
    for flag, path, write in writers:
        if path:
            try:
                write(path)
            except OSError as e:  # checked before the run; the disk can still fill up
                print(f"acl-lab: --{flag} {path}: {e.strerror or e}", file=sys.stderr)
                exit_code = exit_code or 2
    if opts.report:
        _write_run_report(trace, opts, summary, findings)
    if not opts.quiet:
        st = summary["stats"]
        how = " (interrupted)" if end.interrupted is not None else ""
        print(f"acl-lab: exit {end.exit_code}{how}; {st['api_calls']} API calls, "
              f"{st['tasks']} tasks, {st['allocations']} allocations, peak device memory "
              f"{human_bytes(st['peak_device_bytes'], 'B')}, virtual time "
              f"{st['virtual_time_ns'] / 1e6:.3f} ms; {len(findings)} finding(s)",
              file=sys.stderr)
        for f in findings:
            first = f.message.split(". Rule:")[0].splitlines()[0]
            where = f"{f.file}:{f.line}" if f.line else f.file  # C without -g: no line
            print(f"  {f.severity} {f.kind} {where}: {first}", file=sys.stderr)
    if getattr(opts, "defaulted_outputs", False):
        print(f"acl-lab: wrote {opts.trace} and {opts.summary} (no output option given)",
              file=sys.stderr)
    return _gate(opts, findings, exit_code)


def _write_json(path: str, doc: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)


def _outputs(opts: argparse.Namespace) -> list[tuple[str, str]]:
    """The output files of ``run`` that were asked for: (option name, path)."""
    return [(flag, getattr(opts, flag)) for flag in ("trace", "summary", "report", "chrome",
                                                     "perfetto", "sarif") if getattr(opts, flag)]


def _default_outputs(opts: argparse.Namespace) -> bool:
    """No output option given: write ``<program>.acltrace`` and ``<program>.summary.json`` in
    the working directory (like ``nsys profile``). Returns whether the defaults were used."""
    if _outputs(opts):
        return False
    from .tracer.summary import default_output_paths
    opts.trace, opts.summary = default_output_paths(opts.program)
    opts.defaulted_outputs = True
    return True


def _save_perfetto(trace: Any, path: str, findings: list[Any]) -> None:
    from .tracer.perfetto import save_perfetto_trace
    save_perfetto_trace(trace, path, findings)


def _write_sarif(path: str, findings: list[Any]) -> None:
    from . import __version__
    from .tracer.sarif import to_sarif
    _write_json(path, to_sarif(findings, version=__version__))


def _gate(opts: argparse.Namespace, findings: list[Any], exit_code: int) -> int:
    """``--fail-on LEVEL``: the exit code once findings at that level are counted."""
    if not opts.fail_on:
        return exit_code
    from .tracer.summary import EXIT_FINDINGS, failing_findings
    failing = failing_findings(findings, opts.fail_on)
    if failing and exit_code == 0:
        print(f"acl-lab: --fail-on {opts.fail_on}: {len(failing)} finding(s) at "
              f"{opts.fail_on} or worse; exit {EXIT_FINDINGS}", file=sys.stderr)
        return EXIT_FINDINGS
    return exit_code


def _output_problem(path: str) -> str:
    """Why ``path`` cannot be written (checked before the program runs), or ""."""
    if os.path.isdir(path):
        return "is a directory"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"the directory {parent} does not exist" if not os.path.exists(parent) \
            else f"{parent} is not a directory"
    if os.path.exists(path):
        if not os.path.isfile(path):
            return "is not a regular file"
        if not os.access(path, os.W_OK):
            return "is not writable"
    elif not os.access(parent, os.W_OK | os.X_OK):
        return f"the directory {parent} is not writable"
    return ""


class _InterruptGuard:
    """SIGINT handling for the duration of a ``with`` block (main thread only).

    With a session: a SIGINT that lands while this thread holds the session lock (inside an
    ACL call, half-way through its records) sets ``session.interrupt_pending``, and the
    session raises the KeyboardInterrupt when the call's records are complete (or in the next
    turn of a blocking wait); elsewhere it is raised at once, as usual. The interpreter's own
    handler could raise between a call's id and its trace row, which left the trace
    inconsistent (``struct.error`` when the next row was completed). Without a session:
    SIGINT is ignored (the outputs are being written).
    """

    def __init__(self, session: Any) -> None:
        self.session = session
        self.prev: Any = None
        self.active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> _InterruptGuard:
        if self.active:
            handler = self._on_sigint if self.session is not None else signal.SIG_IGN
            self.prev = signal.signal(signal.SIGINT, handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:  # (None: the handler was not set from Python)
            signal.signal(signal.SIGINT, signal.SIG_DFL if self.prev is None else self.prev)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        session = self.session
        if session.lock._is_owned():
            session.interrupt_pending = True
            return
        raise KeyboardInterrupt


class _Program:
    """The program as the interpreter would run it: ``__main__``, ``sys.argv``, its exit.

    ``run`` executes the file in a fresh ``__main__`` module (like ``python PROG``) while
    ``atexit.register`` collects the handlers it registers; ``clean_up`` does what the
    interpreter's exit does with them: the handlers, last registered first, then the
    program's module globals (``__main__`` and the modules the run imported that are the
    program's or its wrapper libraries', ``_program_modules``) are dropped and collected,
    so ``__del__`` methods run while ACL still works.
    Like ``Py_Finalize``, unreachable globals are collected first (every ``__del__`` sees its
    globals intact) and the namespaces still alive after that are cleared, names starting
    with ``_`` first, each value set to None.
    """

    MARK = "__acl_lab_exit__"

    def __init__(self, path: str, args: list[str]) -> None:
        self.path = path
        self.args = args
        self.dir = os.path.dirname(os.path.abspath(path))
        self.module = ModuleType("__main__")
        self.exit_handlers: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
        self.collecting = False
        #: a KeyboardInterrupt that ended one of the atexit handlers
        self.interrupted: KeyboardInterrupt | None = None
        self.saved: dict[str, Any] = {}
        self.before: set[str] = set()

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        """Execute the program's file as ``__main__``."""
        with open(self.path, "rb") as fh:
            code = compile(fh.read(), self.path, "exec", dont_inherit=True)
        g = self.module.__dict__
        g.update(__file__=self.path, __cached__=None, __loader__=None, __package__=None,
                 __spec__=None, __builtins__=builtins)
        self.saved = {"argv": sys.argv[:], "path": sys.path[:],
                      "main": sys.modules.get("__main__"),
                      "register": atexit.register, "unregister": atexit.unregister}
        self.before = set(sys.modules)
        sys.argv = [self.path, *self.args]
        sys.path.insert(0, self.dir)
        sys.modules["__main__"] = self.module
        self.collecting = True
        atexit.register = self._register  # type: ignore[assignment]
        atexit.unregister = self._unregister
        exec(code, g)

    def _register(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.collecting:  # kept by a module after the run: the real registry
            return self.saved["register"](fn, *args, **kwargs)
        self.exit_handlers.append((fn, args, kwargs))
        return fn

    def _unregister(self, fn: Any) -> None:
        self.exit_handlers = [h for h in self.exit_handlers if h[0] != fn]
        self.saved["unregister"](fn)

    # ------------------------------------------------------------------ exit
    def clean_up(self, threads_running: bool) -> None:
        """The program's exit: its atexit handlers, then its module globals collected.

        Like the interpreter, a failing handler (a KeyboardInterrupt too, kept in
        ``interrupted``) is reported and the next one still runs. While some of the program's
        threads still run, the namespaces still alive lose only their objects: modules,
        functions, classes and plain values stay bound for those threads (the interpreter
        would freeze them; here they keep running).
        """
        if not self.saved:
            return  # the file could not even be read
        self.collecting = False
        while self.exit_handlers:
            fn, args, kwargs = self.exit_handlers.pop()
            try:
                fn(*args, **kwargs)
            except SystemExit:
                pass
            except BaseException as e:  # what the interpreter prints for a failing handler
                print(f"Exception ignored in atexit callback: {fn!r}", file=sys.stderr)
                traceback.print_exc()
                if isinstance(e, KeyboardInterrupt) and self.interrupted is None:
                    self.interrupted = e
        self._collect_globals(threads_running)

    def _program_modules(self) -> list[str]:
        """Modules the run imported that are the program's: those from its own directory,
        from any other folder that is not the interpreter's (a wrapper library the program
        put on ``sys.path``), and installed ones that hold the ``acl`` module (an ACL wrapper
        whose module-level objects release ACL in ``__del__``). Never acl_lab's own, even
        when the program sits above the package: they outlive the run."""
        names = []
        acl_module = sys.modules.get("acl")
        system = _system_dirs()
        for name in set(sys.modules) - self.before:
            mod = sys.modules.get(name)
            file = getattr(mod, "__file__", None) or ""
            top = name.split(".")[0]
            if not file or top in ("acl_lab", "acl") or top in sys.stdlib_module_names:
                continue
            path = os.path.abspath(file)
            if path.startswith(_PACKAGE_DIR):
                continue
            if path.startswith(self.dir + os.sep) or not path.startswith(system) or (
                    acl_module is not None and _holds(mod, acl_module)):
                names.append(name)
        return names

    def _collect_globals(self, threads_running: bool) -> None:
        namespaces = [self.module.__dict__]
        for name in self._program_modules():
            namespaces.append(vars(sys.modules.pop(name)))
        sys.modules["__main__"] = self.saved["main"]
        marks = []
        for ns in namespaces:
            mark = _Mark(ns)
            ns[self.MARK] = mark
            marks.append(weakref.ref(mark))
        del namespaces, ns, mark
        self.module = ModuleType("__main__")
        gc.collect()  # unreachable namespaces: every __del__ sees its globals intact
        alive = [m() for m in marks]  # (never empty: __main__ has a mark)
        for found in alive:
            if found is not None:  # still reachable: cleared as the interpreter would
                _clear_namespace(found.ns, threads_running)
        del alive, found
        gc.collect()

    def restore(self) -> None:
        """Give back ``sys.argv``, ``sys.path``, ``__main__`` and ``atexit``."""
        if not self.saved:
            return
        self.collecting = False
        sys.argv = self.saved["argv"]
        sys.path[:] = self.saved["path"]
        sys.modules["__main__"] = self.saved["main"]
        atexit.register = self.saved["register"]
        atexit.unregister = self.saved["unregister"]


def _system_dirs() -> tuple[str, ...]:
    """The interpreter's own folders: its standard library and every site-packages."""
    import site
    import sysconfig

    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib",
                                                    "platlib")}
    with contextlib.suppress(AttributeError):
        paths.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        paths.add(site.getusersitepackages())
    return tuple(os.path.abspath(p) + os.sep for p in paths if p)


def _holds(mod: Any, value: Any) -> bool:
    """Whether module ``mod``'s namespace binds ``value`` (by identity)."""
    try:
        return any(v is value for v in list(vars(mod).values()))
    except TypeError:
        return False


class _Mark:
    """Put in a namespace being dropped: alive after the collection means the namespace is."""

    __slots__ = ("__weakref__", "ns")

    def __init__(self, ns: dict[str, Any]) -> None:
        self.ns = ns


#: What a namespace keeps while the program's threads still run (they may be using it).
_KEPT_FOR_THREADS = (ModuleType, type, FunctionType, BuiltinFunctionType, bool, int, float,
                     complex, str, bytes, type(None))


def _clear_namespace(ns: dict[str, Any], threads_running: bool = False) -> None:
    """What the interpreter does to a module still alive at exit: every name set to None,
    those starting with one underscore first, ``__builtins__`` kept (``threads_running``:
    only the objects, see ``_KEPT_FOR_THREADS``)."""
    names = [n for n in ns if n not in ("__builtins__", _Program.MARK)
             and not (threads_running and isinstance(ns[n], _KEPT_FOR_THREADS))]
    private = [n for n in names if n.startswith("_") and not n.startswith("__")]
    for name in private + names:
        ns[name] = None
    ns.pop(_Program.MARK, None)


def _write_run_report(trace: Any, opts: argparse.Namespace, summary: dict[str, Any],
                      findings: list[Any]) -> None:
    """``run --report FILE``: the HTML report of the finished run; a failure is only reported
    (the program's exit code stands). plotly is imported here, only when asked for."""
    from .tracer.units import human_bytes
    run_info = {**summary, "program": opts.program, "profile": opts.profile}
    try:
        from .tracer.views.report import write_report
        write_report(trace, opts.report, summary=run_info, findings=findings)
    except (OSError, ValueError, MissingExtra) as e:
        print(f"acl-lab: could not write the report {opts.report}: {e}", file=sys.stderr)
        return
    if not opts.quiet:
        size = os.path.getsize(opts.report)
        print(f"acl-lab: wrote report {opts.report} ({human_bytes(size, 'B')})", file=sys.stderr)


def _program_threads(session: Any) -> list[threading.Thread]:
    """The program's threads still alive (not this one, nor those older than the session)."""
    me = threading.current_thread()
    return [t for t in threading.enumerate() if t is not me and t.is_alive()
            and t.ident not in session.background_threads]


def _join_threads(others: list[threading.Thread], grace: float = 2.0,
                  scheduled: bool = True) -> None:
    """Join the program's non-daemon threads, as the interpreter does before its atexit
    handlers: a thread in the host schedule is joined there (one that can never end is a
    deadlock at exit: the real process would hang), unless ``scheduled`` is False (the
    program already ended in a deadlock), any other for up to ``grace`` s."""
    deadline = rawsync.monotonic() + grace
    for t in others:
        if t.daemon:
            continue  # the interpreter does not wait for daemon threads
        if getattr(t, "_acl_lab_token", None) is not None:
            if scheduled:
                t.join()
        else:
            t.join(max(0.0, deadline - rawsync.monotonic()))


def _release_threads(session: Any, others: list[threading.Thread]) -> int:
    """Release emulator waits (closing the session); the number of threads still running."""
    session.close()
    for t in others:
        t.join(0.2)
    return sum(1 for t in others if t.is_alive() and not t.daemon)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``acl-lab`` console script; a missing optional dependency is one
    line naming the extra to install (exit status 2), not a traceback."""
    try:
        return _dispatch(argv)
    except MissingExtra as e:
        print(f"acl-lab: {e}", file=sys.stderr)
        return 2


def _dispatch(argv: list[str] | None) -> int:
    """Parse the command line and run the subcommand."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["atc"]:
        from .atc import main as atc_main
        return atc_main(args[1:])
    if args[:1] in (["cc"], ["config"]):
        from .capi.commands import cc_main, config_main
        return (cc_main if args[0] == "cc" else config_main)(args[1:])
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
    if opts.command == "course":
        from .course import main as course_main
        return course_main(opts)
    return 2


def export(opts: argparse.Namespace) -> int:
    """``acl-lab export TRACE --chrome OUT.json``: a trace for Perfetto / chrome://tracing."""
    from .tracer.trace import Trace
    try:
        trace = Trace.load(opts.trace)
    except (OSError, ValueError) as e:
        print(f"acl-lab export: {e}", file=sys.stderr)
        return 2
    if not (opts.chrome or opts.perfetto):
        print("acl-lab export: say what to write: --chrome OUT.json and/or "
              "--perfetto OUT.pftrace", file=sys.stderr)
        return 2
    findings = trace.findings()
    for path, write in ((opts.chrome, trace.save_chrome_trace),
                        (opts.perfetto, lambda p, f: _save_perfetto(trace, p, f))):
        if not path:
            continue
        try:
            write(path, findings)
        except OSError as e:
            print(f"acl-lab export: cannot write {path}: {e.strerror or e}", file=sys.stderr)
            return 2
        print(f"acl-lab export: wrote {path} ({trace.calls.rows} calls, "
              f"{trace.tasks.rows} tasks, {len(findings)} finding(s))", file=sys.stderr)
    return 0


def report(opts: argparse.Namespace) -> int:
    """``acl-lab report TRACE [-o FILE]``: one self-contained HTML page that opens offline."""
    from .tracer.trace import Trace
    from .tracer.units import human_bytes
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
    print(f"acl-lab report: wrote {out} ({human_bytes(os.path.getsize(out), 'B')}; "
          f"{trace.calls.rows} calls, {trace.tasks.rows} tasks)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
