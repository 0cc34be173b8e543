"""Nothing lost at the end of a run: Ctrl-C, bad output paths, the program's own clean-up
(``__del__``, ``atexit``), callbacks that keep user data alive, and calls after the run."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from types import ModuleType

import pytest

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace
from tests.e2e.test_cli_run import (
    PROGRAMS,
    TIMEOUT,
    CliRun,
    acl_lab_run,
    check_summary_schema,
    describe,
    lines_containing,
)

ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_UNINITIALIZE = 100001
EXIT_INTERRUPTED = 130


def rets(run_stdout: str) -> list[tuple[str, int]]:
    """The ``RET name code`` lines a program printed, in order."""
    out = []
    for line in run_stdout.splitlines():
        if line.startswith("RET "):
            _, name, code = line.split()
            out.append((name, int(code)))
    return out


def call_rets(trace: Trace) -> dict[str, list[int]]:
    """Return codes of every recorded call, by API name."""
    out: dict[str, list[int]] = {}
    for name_id, ret in zip(trace.calls["name"], trace.calls["ret"], strict=True):
        out.setdefault(trace.string(int(name_id)), []).append(int(ret))
    return out


def no_traceback(stderr: str) -> None:
    """Nothing went wrong inside a ``__del__`` or in acl_lab itself."""
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr


# --------------------------------------------------------------------------- clean-up order
def test_releases_in_del_of_module_globals_run_before_the_teardown(tmp_path: Path) -> None:
    """The samples' pattern: module-level objects release everything in ``__del__`` (one
    through a helper module's registry). Each release succeeds, the session has nothing left
    to tear down, and nothing is reported as leaked."""
    run = acl_lab_run(tmp_path, "release_in_del.py")
    assert run.proc.returncode == 0, describe(run)
    no_traceback(run.proc.stderr)
    assert rets(run.proc.stdout) == [
        ("acl.rt.free", 0), ("acl.rt.free_host", 0), ("acl.rt.destroy_stream", 0),
        ("acl.rt.destroy_context", 0), ("acl.rt.reset_device", 0), ("acl.finalize", 0)]
    check_summary_schema(run.summary)
    assert run.summary["findings"] == [], json.dumps(run.summary["findings"], indent=1)
    trace = Trace.load(run.trace_path)
    by_name = call_rets(trace)
    assert "acl_lab.exit" not in by_name  # nothing was left open for the session's exit
    assert by_name["acl.rt.free"] == [0] and by_name["acl.finalize"] == [0]
    assert all(r == 0 for codes in by_name.values() for r in codes), by_name


def test_a_wrapper_librarys_singleton_releases_at_exit_with_acl_still_there(
        tmp_path: Path) -> None:
    """A module-level object of a library outside the program's folder (put on sys.path)
    releases ACL in ``__del__``: it runs before the session's teardown, as in the real
    process, so its calls succeed and nothing is reported as leaked (it got 100001 when only
    the program's own folder was collected)."""
    run = acl_lab_run(tmp_path, "release_in_library_del.py")
    assert run.proc.returncode == 0, describe(run)
    no_traceback(run.proc.stderr)
    assert rets(run.proc.stdout) == [
        ("acl.rt.free", 0), ("acl.rt.destroy_context", 0), ("acl.rt.reset_device", 0),
        ("acl.finalize", 0)]
    assert run.summary["findings"] == [], json.dumps(run.summary["findings"], indent=1)
    assert "acl_lab.exit" not in call_rets(Trace.load(run.trace_path))


def test_clean_up_takes_installed_acl_wrappers_but_not_other_libraries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Which modules the exit collects: an installed module that imported ``acl`` is the
    program's wrapper (collected); another installed one, or the standard library's, is
    the interpreter's (left alone)."""
    import sysconfig

    from acl_lab import cli

    acl_module = ModuleType("acl")
    monkeypatch.setitem(sys.modules, "acl", acl_module)
    site = sysconfig.get_paths()["purelib"]
    wrapper = ModuleType("_an_installed_acl_wrapper")
    wrapper.__file__ = os.path.join(site, "_an_installed_acl_wrapper.py")
    wrapper.acl = acl_module  # type: ignore[attr-defined]
    other = ModuleType("_an_installed_library")
    other.__file__ = os.path.join(site, "_an_installed_library.py")
    elsewhere = ModuleType("_a_library_on_the_programs_path")
    elsewhere.__file__ = str(PROGRAMS.parent / "program_libs" / "_lib.py")
    for mod in (wrapper, other, elsewhere):
        monkeypatch.setitem(sys.modules, mod.__name__, mod)
    program = cli._Program(str(PROGRAMS / "prog.py"), [])
    program.before = set(sys.modules) - {wrapper.__name__, other.__name__, elsewhere.__name__,
                                         "json.decoder"}
    assert sorted(program._program_modules()) == sorted([wrapper.__name__,
                                                         elsewhere.__name__])


def test_a_deadlock_in_python_waits_is_reported_once_and_its_threads_end_quietly(
        tmp_path: Path) -> None:
    """The main thread joins a thread that joins its joiner: one deadlock finding, at the
    program's join (the exit does not join those threads again and report it twice), and
    the threads left waiting end without a traceback when the run closes."""
    run = acl_lab_run(tmp_path, "deadlock_python_join.py")
    assert run.proc.returncode == 1, describe(run)
    assert "Exception in thread" not in run.proc.stderr, run.proc.stderr
    found = [f for f in run.summary["findings"] if f["kind"] == "deadlock"]
    assert [(Path(f["file"]).name, f["line"]) for f in found] == \
        [("deadlock_python_join.py", lines_containing("deadlock_python_join.py",
                                                      "MAIN-JOIN")[0])]
    assert run.summary["error"].startswith("DeadlockError")


def test_atexit_handlers_run_last_registered_first_before_the_teardown(tmp_path: Path) -> None:
    """``atexit`` handlers registered by the program run, newest first, with their
    arguments and before the session's exit; an unregistered one does not run."""
    run = acl_lab_run(tmp_path, "release_atexit.py")
    assert run.proc.returncode == 0, describe(run)
    no_traceback(run.proc.stderr)
    assert "UNREGISTERED HANDLER RAN" not in run.proc.stdout
    assert "released objects" in run.proc.stdout
    assert rets(run.proc.stdout) == [
        ("acl.rt.free", 0), ("acl.rt.destroy_stream", 0), ("acl.rt.destroy_context", 0),
        ("acl.rt.reset_device", 0), ("acl.finalize", 0)]
    assert run.summary["findings"] == [], json.dumps(run.summary["findings"], indent=1)
    assert "acl_lab.exit" not in call_rets(Trace.load(run.trace_path))


def test_globals_a_running_daemon_thread_uses_are_not_cleared(tmp_path: Path) -> None:
    """A daemon thread still running at the end keeps reading the program's globals: the
    clean-up collects what it can (the ``__del__`` runs) but clears nothing under it."""
    run = acl_lab_run(tmp_path, "daemon_thread_globals.py")
    assert run.proc.returncode == 0, describe(run)
    no_traceback(run.proc.stderr)
    assert "Exception in thread" not in run.proc.stderr, run.proc.stderr


def test_clean_up_never_takes_acl_labs_own_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program above the acl_lab package (the repository root): acl_lab modules that
    first load during the run are the emulator's, not the program's, and are never dropped;
    a module of the program's directory is."""
    from acl_lab import cli

    helper = ModuleType("_a_program_helper")
    helper.__file__ = str(PROGRAMS / "_a_program_helper.py")
    monkeypatch.setitem(sys.modules, helper.__name__, helper)
    root = Path(cli.__file__).resolve().parent.parent
    for where in (root, PROGRAMS):
        program = cli._Program(str(where / "prog.py"), [])
        program.before = set(sys.modules) - {"acl_lab.cli", "acl_lab.tracer.trace",
                                             helper.__name__}
        assert program._program_modules() == [helper.__name__], where


# --------------------------------------------------------------------------- Ctrl-C
def check_interrupted(run: CliRun, program: str) -> Trace:
    """Exit 130; summary and trace written, both saying the run was interrupted."""
    assert run.proc.returncode == EXIT_INTERRUPTED, describe(run)
    assert "struct.error" not in run.proc.stderr
    assert "KeyboardInterrupt" in run.proc.stderr  # the traceback is shown, as python does
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == EXIT_INTERRUPTED
    assert summary["interrupted"] is True
    assert summary["error"] is not None and summary["error"].startswith("KeyboardInterrupt")
    trace = Trace.load(run.trace_path)
    assert trace.meta["interrupted"] is True
    stack = trace.meta["interrupted_stack"]
    assert "KeyboardInterrupt" in stack and program in stack, stack
    assert trace.calls.rows == summary["stats"]["api_calls"] > 0
    assert trace.tasks.rows == summary["stats"]["tasks"]
    # the objects the program left open were torn down and reported, not lost
    assert "acl_lab.exit" in call_rets(trace)
    assert any(f["kind"] == "leak" for f in summary["findings"])
    return trace


@pytest.mark.parametrize("where", ["main", "callback", "atexit"])
def test_keyboard_interrupt_writes_trace_and_summary_and_exits_130(tmp_path: Path,
                                                                    where: str) -> None:
    """A KeyboardInterrupt in the program's code, in a host callback or in an atexit
    handler: exit 130, the trace records the interruption with the stack and its line."""
    program = "interrupt_self.py"
    run = acl_lab_run(tmp_path, program, where)
    trace = check_interrupted(run, program)
    (line,) = lines_containing(program, "# INTERRUPT")
    assert trace.meta["interrupted_line"] == line
    assert Path(trace.meta["interrupted_file"]).resolve() == (PROGRAMS / program).resolve()
    assert run.summary["error"].endswith(f"{program}:{line}")
    assert "unreachable" not in run.proc.stdout
    assert ("main done" in run.proc.stdout) == (where == "atexit")
    # as in the interpreter, the remaining atexit handlers still run
    assert ("the handler after the interrupted one ran" in run.proc.stdout) == \
        (where == "atexit")


def test_sigint_during_acl_calls_never_loses_the_trace(tmp_path: Path) -> None:
    """SIGINT sent to ``acl-lab run`` while its program makes ACL calls in a loop: every
    try writes a complete trace and summary and exits 130 (the signal lands at a different
    point of the loop each time; a signal between a call's id and its trace row used to
    break the trace with ``struct.error``)."""
    program = "interrupt_loop.py"
    for attempt in range(6):
        out = tmp_path / f"try{attempt}"
        out.mkdir()
        trace, summary = out / "out.acltrace", out / "summary.json"
        cmd = [sys.executable, "-m", "acl_lab.cli", "run", "--trace", str(trace),
               "--summary", str(summary), str(PROGRAMS / program)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=out)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "READY"
            # let the loop run a different number of calls before the signal each time
            threading.Event().wait(0.02 * attempt)
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        done = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
        check_interrupted(CliRun(done, summary, trace, 0.0), program)


class _Interrupter:
    """A hook subscriber ahead of the recorder: sends SIGINT to this process inside the
    next ``acl.rt.malloc``, after its call id was taken and before its trace row exists."""

    def __init__(self) -> None:
        self.armed = False

    def on_call_begin(self, cid: int, name: str, *rest: object) -> None:
        if self.armed and name == "acl.rt.malloc":
            self.armed = False
            signal.raise_signal(signal.SIGINT)


def test_sigint_inside_a_call_waits_for_the_call_records() -> None:
    """``acl-lab run``'s SIGINT handling: a SIGINT that lands inside an ACL call, between its
    call id and its trace row, is raised when the call's records are complete. The call
    completes, the next call works and the trace stays consistent (before, the row went
    missing and completing a later row failed with ``struct.error``)."""
    from acl_lab.cli import _InterruptGuard

    s = Session()
    interrupter = _Interrupter()
    s.hooks.unsubscribe(s.recorder)
    s.hooks.subscribe(interrupter)
    s.hooks.subscribe(s.recorder)
    with s:
        acl = acl_lab.install()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        with _InterruptGuard(s):
            interrupter.armed = True
            with pytest.raises(KeyboardInterrupt):
                acl.rt.malloc(1024, 0)
            assert not interrupter.armed
            ptr, ret = acl.rt.malloc(2048, 0)
            assert ret == 0 and acl.rt.free(ptr) == 0
        trace = s.finish()
    acl_lab.uninstall()
    assert trace.calls.rows == s.call_count
    by_name = call_rets(trace)
    assert by_name["acl.rt.malloc"] == [0, 0]  # the interrupted one completed
    assert by_name["acl.rt.free"] == [0]
    sizes = sorted(int(n) for n in trace.allocs["requested"])
    assert sizes == [1024, 2048]


# --------------------------------------------------------------------------- output paths
def output_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Bad output paths and the problem each should be reported with."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    (tmp_path / "a_dir").mkdir()
    return {
        "missing_dir": (tmp_path / "no" / "such" / "out.x", "does not exist"),
        "is_a_dir": (tmp_path / "a_dir", "is a directory"),
        "parent_is_a_file": (a_file / "out.x", "is not a directory"),
    }


@pytest.mark.parametrize("flag", ["trace", "summary", "report", "chrome"])
@pytest.mark.parametrize("case", ["missing_dir", "is_a_dir", "parent_is_a_file"])
def test_bad_output_path_is_refused_before_the_program_runs(tmp_path: Path, flag: str,
                                                            case: str) -> None:
    """One line naming the option, the path and the problem; exit 2; the program never
    ran and no other output was written."""
    path, problem = output_cases(tmp_path)[case]
    good = {f: tmp_path / f"good.{f}" for f in ("trace", "summary", "report", "chrome")}
    options = []
    for f in ("trace", "summary", "report", "chrome"):
        options += [f"--{f}", str(path if f == flag else good[f])]
    cmd = [sys.executable, "-m", "acl_lab.cli", "run", *options,
           str(PROGRAMS / "release_atexit.py")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""  # the program did not run ("main done" is its first line)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"acl-lab: --{flag} {path}: ") and problem in lines[0]
    assert not any(p.exists() for p in good.values())


# --------------------------------------------------------------------------- callbacks
def test_callback_task_lets_go_of_the_callback_and_its_data(acl: ModuleType) -> None:
    """Once process_report ran a callback, nothing in the emulator keeps the function or
    its user data: an object whose ``__del__`` would release ACL resources is collected
    before the session finishes."""
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.subscribe_report(threading.get_ident(), stream) == 0

    class Data:
        ran = False

    class Callback:
        def __call__(self, data: Data) -> None:
            data.ran = True

    data, fn = Data(), Callback()
    dead_data, dead_fn = weakref.ref(data), weakref.ref(fn)
    assert acl.rt.launch_callback(fn, data, 0, stream) == 0
    del fn
    assert acl.rt.process_report(1000) == 0
    assert data.ran
    del data
    gc.collect()
    assert dead_data() is None, gc.get_referrers(dead_data())
    assert dead_fn() is None
    assert acl.rt.synchronize_stream(stream) == 0


def test_object_owning_a_run_callback_is_released_by_the_program(tmp_path: Path) -> None:
    """A module-level object whose bound method was a launch_callback callback: after the
    callback ran, the object is collected with the program's globals, its ``__del__``
    releases everything (each call returns 0) and nothing is reported as leaked."""
    run = acl_lab_run(tmp_path, "callback_owner_del.py")
    assert run.proc.returncode == 0, describe(run)
    no_traceback(run.proc.stderr)
    assert rets(run.proc.stdout) == [
        ("acl.rt.unsubscribe_report", 0), ("acl.rt.destroy_stream", 0),
        ("acl.rt.destroy_context", 0), ("acl.rt.reset_device", 0), ("acl.finalize", 0)]
    assert run.summary["findings"] == [], json.dumps(run.summary["findings"], indent=1)
    assert "acl_lab.exit" not in call_rets(Trace.load(run.trace_path))


# --------------------------------------------------------------------------- after the run
def test_calls_after_finish_get_finalized_codes_not_exceptions() -> None:
    """After ``Session.finish`` the session answers like ACL after finalize: a finalize is a
    repeat (100037), handles of the run are gone, nothing raises, no new session is made."""
    with Session() as s:
        acl = acl_lab.install()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream()
        assert ret == 0
        s.finish()
        assert acl_lab.current_session() is s
        assert acl.rt.destroy_stream(stream) != 0
        assert acl.rt.reset_device(0) != 0
        assert acl.finalize() == ACL_ERROR_REPEAT_FINALIZE
        assert acl.finalize_reference()[1] == ACL_ERROR_REPEAT_FINALIZE
        assert acl_lab.current_session() is s
    acl_lab.uninstall()


def test_late_call_at_interpreter_shutdown_with_plain_python(tmp_path: Path) -> None:
    """``python prog.py`` after ``acl_lab.install()``: a ``__del__`` at interpreter exit
    makes the process's first ACL call; it gets codes, not ``ImportError``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, str(PROGRAMS / "late_call.py"), "plain"],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc.stderr)
    assert rets(proc.stdout) == [("acl.rt.destroy_stream", ACL_ERROR_UNINITIALIZE),
                                 ("acl.rt.reset_device", ACL_ERROR_UNINITIALIZE),
                                 ("acl.finalize", ACL_ERROR_REPEAT_FINALIZE)]


def test_late_call_at_interpreter_shutdown_under_acl_lab_run(tmp_path: Path) -> None:
    """Under ``acl-lab run``, an object that outlives the run releases at interpreter exit:
    its calls get after-finalize codes (no session is built then), no traceback."""
    run = acl_lab_run(tmp_path, "late_call.py")
    assert run.proc.returncode == 0, describe(run)
    no_traceback(run.proc.stderr)
    got = rets(run.proc.stdout)
    assert [name for name, _ in got] == ["acl.rt.destroy_stream", "acl.rt.reset_device",
                                         "acl.finalize"]
    assert all(code != 0 for _, code in got), got  # everything was released at the exit
    assert got[-1] == ("acl.finalize", ACL_ERROR_REPEAT_FINALIZE)
    assert run.summary["exit_code"] == 0
