"""The C API commands: ``acl-lab config``, ``acl-lab cc`` and ``acl-lab run`` for a binary.

``acl-lab config --cflags --libs`` prints compiler and linker flags (like ``pkg-config``),
building the libraries first when ``--libs`` is asked for; ``acl-lab config --toolkit``
prints the CANN-shaped toolkit folder (made once) that the public samples' build files use
through ``DDK_PATH``/``NPU_HOST_LIB`` or ``INSTALL_DIR``. ``acl-lab cc prog.cpp -o prog
[g++ flags]`` compiles with ``-g`` (the trace's file:line comes from the debug information)
and links the library (g++ for C++ sources, gcc for ``.c``). ``acl-lab run ./prog args``
runs a binary with the embedded runtime told where to write its trace
(``ACL_LAB_CAPI_TRACE``) and with the session options in the environment, then writes the
summary, the findings and the other outputs exactly as for a Python program.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import build, runenv


def is_binary(path: str) -> bool:
    """Whether ``path`` is an ELF file (a compiled program, not a Python script)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def config_main(argv: list[str]) -> int:
    """``acl-lab config [--cflags] [--libs] [--libdir] [--toolkit]``: the flags and folders
    asked for, on one line."""
    p = argparse.ArgumentParser(prog="acl-lab config",
                                description="compiler and linker flags for AscendCL C/C++ "
                                "programs run under acl_lab (pkg-config style)")
    p.add_argument("--cflags", action="store_true", help="the include flags")
    p.add_argument("--libs", action="store_true", help="the -lascendcl linker flags")
    p.add_argument("--libdir", action="store_true", help="the folder of libascendcl.so")
    p.add_argument("--toolkit", action="store_true",
                   help="the CANN-shaped toolkit folder (runtime/include, runtime/lib64/stub): "
                   "export DDK_PATH=$(acl-lab config --toolkit) "
                   "NPU_HOST_LIB=$DDK_PATH/runtime/lib64/stub")
    opts = p.parse_args(argv)
    parts = []
    if opts.cflags:
        parts.append(build.cflags())
    if opts.libs or opts.libdir or opts.toolkit:
        try:
            lib = build.build()
            kit = build.toolkit() if opts.toolkit else None
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 2
        if kit is not None:
            parts.append(str(kit))
        if opts.libs:
            parts.append(build.libs(lib))
        if opts.libdir:
            parts.append(str(lib.parent))
    if not parts:
        p.print_usage(sys.stderr)
        return 2
    print(" ".join(parts))
    return 0


def compile_command(argv: list[str], lib: Path) -> list[str]:
    """The compiler command line of ``acl-lab cc ARGS``: ``-g``, the include folder, the
    given arguments, then the library (after the sources, as the linker wants it)."""
    is_c = bool(argv) and all(not a.endswith((".cc", ".cpp", ".cxx", ".C"))
                              for a in argv if not a.startswith("-")) and \
        any(a.endswith(".c") for a in argv)
    cc = os.environ.get("CC", "gcc") if is_c else os.environ.get("CXX", "g++")
    return [cc, "-g", build.cflags(), *argv, *build.libs(lib).split(), "-pthread"]


def cc_main(argv: list[str]) -> int:
    """``acl-lab cc SOURCES -o PROG [flags]``: compile and link against libascendcl."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: acl-lab cc SOURCE... -o PROGRAM [compiler flags]\n"
              "Compiles with -g and links libascendcl (the emulator); run the program with "
              "acl-lab run ./PROGRAM", file=sys.stderr)
        return 0 if argv else 2
    try:
        lib = build.build()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    cmd = compile_command(argv, lib)
    if shutil.which(cmd[0]) is None:
        print(f"acl-lab cc: {cmd[0]} not found (make test installs g++ from Debian's "
              "packages)", file=sys.stderr)
        return 2
    return subprocess.call(cmd)


def _exit_code(rc: int) -> int:
    """A child's status as a shell reports it (128 + signal for a killed program)."""
    return 128 - rc if rc < 0 else rc


def run_binary(opts: argparse.Namespace, write_outputs: Any, run_end: Any) -> int:
    """Run a compiled program under the emulator; write the outputs through ``write_outputs``
    (the ``acl-lab run`` writer, given the loaded trace and a ``run_end`` that holds the
    program's exit code). The output paths were checked by the caller."""
    from ..tracer.trace import Trace
    try:
        lib = build.build()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    fd, tmp = tempfile.mkstemp(prefix="acl_lab_capi_", suffix=".acltrace")
    os.close(fd)
    os.unlink(tmp)
    env = dict(os.environ)
    env.update({"ACL_LAB_CAPI_TRACE": tmp, "ACL_LAB_PROFILE": opts.profile,
                "ACL_LAB_DEVICES": str(opts.devices),
                "ACL_LAB_PAGEABLE_ASYNC": opts.pageable_async,
                "ACL_LAB_RUN_MODE": opts.run_mode})
    # a program linked elsewhere (plain -lascendcl) still finds this build of the library
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        x for x in (str(lib.parent), env.get("LD_LIBRARY_PATH", "")) if x)
    prog = opts.program if os.sep in opts.program else os.path.join(".", opts.program)
    end = run_end()
    try:
        proc = subprocess.Popen([prog, *opts.args], env=env)
        try:
            rc = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            rc = proc.wait()
            end.interrupt(None)
        if end.interrupted is None:
            end.exit_code = _exit_code(rc)
            if rc < 0:
                end.error = f"killed by signal {-rc} ({signal.Signals(-rc).name})"
        if os.path.exists(tmp):
            trace = Trace.load(tmp)
        elif os.path.exists(runenv.started_marker(tmp)):
            print(f"acl-lab: {opts.program} exited ({end.exit_code}) without writing its "
                  "trace (it ended without running its exit handlers, e.g. through _exit "
                  "or a crash)", file=sys.stderr)
            return end.exit_code or 1
        else:
            # the library never started: the program made no ACL call, which is a run
            # with an empty trace, as for a Python program (its own exit status stands)
            trace = _empty_trace(env)
    finally:
        for leftover in (tmp, runenv.started_marker(tmp)):
            if os.path.exists(leftover):
                os.unlink(leftover)
    rc = int(write_outputs(trace, opts, end))
    if without_lines(trace):
        print(f"acl-lab: {opts.program} has no debug information: its calls are shown as "
              "function+offset; build it with -g (cmake -DCMAKE_BUILD_TYPE=Debug) for "
              "file:line", file=sys.stderr)
    return rc


def without_lines(trace: Any) -> bool:
    """Whether some call of ``trace`` was made from C code without debug information (its
    site is ``object(function+offset)`` with line 0, see :mod:`.sites`)."""
    import numpy as np

    calls = trace.calls
    if not calls.rows:
        return False
    files = np.unique(np.asarray(calls["file"])[np.asarray(calls["line"]) == 0])
    return any("+0x" in trace.strings[int(f)] and trace.strings[int(f)].endswith(")")
               for f in files)


def _empty_trace(env: dict[str, str]) -> Any:
    """The trace of a run that made no ACL call, from a session with the run's options."""
    s = runenv.session_from_env(env)
    s.close()
    return s.finish()
