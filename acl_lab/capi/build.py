"""Build the C API of acl_lab: ``libascendcl.so`` running the emulator inside the C program,
the thin ``libacl_dvpp.so``, ``libacl_cblas.so`` and ``libacl_op_compiler.so`` over it, and the
CANN-shaped toolkit folder the public samples' build files expect.

``libascendcl.so`` is made with cffi's embedding mode (``ffibuilder.embedding_api`` and
``embedding_init_code``). It was chosen because it does exactly this job: the shared library
starts CPython inside the C process on the first call and runs Python functions for C
entry points; cffi is maintained with CPython's releases, and the build needs only gcc and
the Python headers (python3-dev), no extra toolchain.

Every function of the table in :mod:`.api` is defined by a small C function (generated here)
that passes the caller's return address (``__builtin_return_address(0)``) and its arguments
to the embedded Python entry point ``_lab_<name>`` (exported by ``libascendcl.so``), which
:mod:`acl_lab.capi.bridge` binds to the pyACL layer. The definitions of a header go into the
library CANN puts them in (:data:`.api.LIBRARIES`): a program that uses DVPP links
``acl_dvpp`` as on a real toolkit. The C compiler checks every definition against the headers.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from . import api
from .api import INCLUDE_DIR, PACKAGE_DIR, CFunc

HEADERS = api.HEADERS
LIB_NAME = "libascendcl.so"
#: the libraries of the toolkit, the runtime first (the others link it)
LIBRARIES: tuple[str, ...] = tuple(dict.fromkeys(api.LIBRARIES.values()))


def functions() -> list[CFunc]:
    """Every C function of the API, in header order (the table of :mod:`.api`)."""
    return api.functions()


def _entry_params(f: CFunc) -> list[str]:
    return ["void *ra"] + [f"{p.ffi_type} {p.name}" for p in f.params]


def cdef_source(funcs: list[CFunc]) -> str:
    """The cffi declarations of the embedded Python entry points (``_lab_<name>``); a
    variadic function's entry point takes the formatted text in place of its format."""
    lines = [f"{f.ret_ffi} _lab_{f.name}({', '.join(_entry_params(f))});" for f in funcs]
    lines.append("void _lab_at_exit(void);")
    lines.append("void _lab_device_fault(void *addr, void *pc);")
    return "\n".join(lines) + "\n"


#: the structs the bridge reads and writes (their layout is checked by the C compiler when
#: cffi builds the library)
STRUCT_CDEF = """
typedef struct { char name[128]; size_t dimCount; int64_t dims[128]; } aclmdlIODims;
typedef struct { size_t batchCount; uint64_t batch[128]; } aclmdlBatch;
typedef struct { size_t hwCount; uint64_t hw[128][2]; } aclmdlHW;
"""


#: C support code of the library: the exit hook, and the device window guard. The emulated
#: device addresses are reserved inaccessible (PROT_NONE) so that a host dereference of a
#: device pointer faults at once; the fault handler hands the faulting instruction to the
#: bridge (a finding at the C line, the trace written) and ends the program as a SIGSEGV
#: would. Any other fault goes to the handler that was there before.
_SUPPORT = r"""
static void lab_exit_hook(void) { _lab_at_exit(); }
int _lab_install_atexit(void) { return atexit(lab_exit_hook); }

static uintptr_t lab_dev_lo, lab_dev_hi;
static struct sigaction lab_old_segv, lab_old_bus;

static void lab_on_fault(int sig, siginfo_t *si, void *ucv) {
    uintptr_t a = (uintptr_t)si->si_addr;
    if (a >= lab_dev_lo && a < lab_dev_hi) {
        void *pc = 0;
#if defined(__x86_64__)
        pc = (void *)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
        pc = (void *)((ucontext_t *)ucv)->uc_mcontext.pc;
#endif
        _lab_device_fault(si->si_addr, pc);
        _exit(128 + sig);
    }
    sigaction(sig, sig == SIGSEGV ? &lab_old_segv : &lab_old_bus, NULL);
}

int _lab_guard_device(uintptr_t lo, uintptr_t hi) {
    void *p = mmap((void *)lo, hi - lo, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    int reserved = p == (void *)lo;
    if (!reserved && p != MAP_FAILED) munmap(p, hi - lo);
    struct sigaction sa;
    sa.sa_sigaction = lab_on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    lab_dev_lo = lo;
    lab_dev_hi = hi;
    sigaction(SIGSEGV, &sa, &lab_old_segv);
    sigaction(SIGBUS, &sa, &lab_old_bus);
    return reserved;
}
"""


_INCLUDES = ["#define _GNU_SOURCE", "#include <signal.h>", "#include <stdarg.h>",
             "#include <stdio.h>", "#include <stdlib.h>", "#include <sys/mman.h>",
             "#include <ucontext.h>", "#include <unistd.h>", '#include "acl/acl.h"',
             '#include "acl/acl_prof.h"', '#include "acl/acl_op_compiler.h"',
             '#include "acl/ops/acl_dvpp.h"', '#include "acl/ops/acl_cblas.h"', ""]
#: the longest message a variadic log call passes on (longer ones are cut, as a fixed log
#: buffer cuts them)
LOG_TEXT_MAX = 1024


def _definition(f: CFunc) -> str:
    args = ["__builtin_return_address(0)"]
    for p in f.params:
        if f.variadic and p is f.params[-1]:
            args.append("lab_text")
        elif p.ffi_type == "void *":
            args.append(f"(void *){p.name}")
        elif p.ffi_type == "char *":
            args.append(f"(char *){p.name}")
        else:
            args.append(p.name)
    call = f"_lab_{f.name}({', '.join(args)})"
    if f.ret == "void":
        body = f"{call};"
    elif f.ret_ffi == "void *":
        body = f"return ({f.ret}){call};"
    else:
        body = f"return {call};"
    if f.variadic:
        fmt = f.params[-1].name
        body = (f"char lab_text[{LOG_TEXT_MAX}]; va_list ap; va_start(ap, {fmt}); "
                f"vsnprintf(lab_text, sizeof lab_text, {fmt} ? {fmt} : \"\", ap); va_end(ap); "
                + body)
    return f"{f.declaration()} {{ {body} }}"


def shim_source(funcs: list[CFunc], support: bool = True,
                entries: list[CFunc] | None = None) -> str:
    """C definitions of ``funcs``: each forwards to its embedded Python entry point with
    the caller's return address first (resolved to the caller's file:line in the trace).
    ``support``: the runtime library's own code (exit hook, device guard) goes in too;
    ``entries``: the entry points to declare (default: those of ``funcs``)."""
    out = list(_INCLUDES)
    out.append(cdef_source(funcs if entries is None else entries))
    if support:
        out.append(_SUPPORT)
    out += [_definition(f) for f in funcs]
    return "\n".join(out) + "\n"


def _init_code(paths: list[str]) -> str:
    # the embedded interpreter does not know the building one's venv: its paths are given
    # here, site-packages through addsitedir so their .pth files are read too
    return ("import site, sys\n"
            f"for _p in {paths!r}:\n"
            "    if _p.endswith('-packages'):\n"
            "        site.addsitedir(_p)\n"
            "    elif _p not in sys.path:\n"
            "        sys.path.append(_p)\n"
            "from _acl_lab_capi import ffi, lib\n"
            "from acl_lab.capi import bridge\n"
            "bridge.bind(ffi, lib)\n")


def cache_dir() -> Path:
    """Where the built libraries go: ``$ACL_LAB_CACHE/capi/<key>`` (else
    ``~/.cache/acl_lab/capi/<key>``); the key hashes the headers (the toolkit's third-party
    compatibility headers too), the table, the build, the bridge and Python."""
    base = os.environ.get("ACL_LAB_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "acl_lab"
    h = hashlib.sha256()
    for name in (*HEADERS, *api.UMBRELLAS):
        h.update((INCLUDE_DIR / name).read_bytes())
    for mod in ("api.py", "build.py", "bridge.py"):
        h.update((Path(__file__).parent / mod).read_bytes())
    for extra in sorted(THIRDPART_DIR.rglob("*.h")):
        h.update(extra.read_bytes())
    h.update(sys.version.encode())
    h.update(sys.executable.encode())
    return root / "capi" / h.hexdigest()[:16]


def library_path(name: str = "ascendcl") -> Path:
    """The path of a built library (it may not exist yet: see :func:`build`)."""
    return cache_dir() / f"lib{name}.so"


def _compiler() -> str:
    return os.environ.get("CC") or shutil.which("gcc") or "cc"


def _build_runtime(target: Path, funcs: list[CFunc], work: Path, verbose: bool) -> None:
    from .._extras import require
    cffi = require("cffi", "capi", "the C API (acl-lab cc)")
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    shim = work / "acl_lab_shim.c"
    own = [f for f in funcs if f.library == LIBRARIES[0]]
    shim.write_text(shim_source(own, entries=funcs), encoding="utf-8")
    ffib = cffi.FFI()
    ffib.embedding_api(cdef_source(funcs))
    support = "int _lab_install_atexit(void);\nint _lab_guard_device(uintptr_t, uintptr_t);\n"
    ffib.cdef(support + STRUCT_CDEF)
    ffib.set_source("_acl_lab_capi", '#include "acl/acl_mdl.h"\n' + support,
                    sources=[str(shim)], include_dirs=[str(INCLUDE_DIR)],
                    extra_compile_args=["-g", "-O1", "-Wall",
                                        "-Werror=implicit-function-declaration"],
                    extra_link_args=[f"-Wl,-rpath,{libdir}"] if libdir else [])
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    paths.insert(0, str(PACKAGE_DIR.parent))
    ffib.embedding_init_code(_init_code(paths))
    try:
        built = ffib.compile(tmpdir=str(work), target=LIB_NAME, verbose=verbose)
    except Exception as e:  # distutils' CompileError / LinkError carry the compiler text
        raise RuntimeError(f"acl-lab: building {LIB_NAME} failed (are gcc and the "
                           f"Python headers, python3-dev, installed?): {e}") from e
    tmp_target = target.with_suffix(".so.tmp")
    shutil.copyfile(built, tmp_target)
    os.replace(tmp_target, target)


def _build_thin(name: str, funcs: list[CFunc], out_dir: Path, work: Path) -> None:
    """``lib<name>.so``: the definitions of ``funcs``, each calling the runtime's entry point
    (linked against ``libascendcl.so`` beside it)."""
    src = work / f"lib{name}.c"
    src.write_text(shim_source(funcs, support=False), encoding="utf-8")
    target = out_dir / f"lib{name}.so"
    tmp = work / target.name
    cmd = [_compiler(), "-shared", "-fPIC", "-g", "-O1", "-Wall",
           "-Werror=implicit-function-declaration", f"-I{INCLUDE_DIR}", str(src),
           f"-L{out_dir}", "-lascendcl", "-Wl,-rpath,$ORIGIN", "-o", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"acl-lab: building {target.name} failed: {proc.stderr}")
    os.replace(tmp, target)


def build(force: bool = False, verbose: bool = False) -> Path:
    """Build ``libascendcl.so`` and the thin libraries over it into the cache (once per
    version of the sources); the path of ``libascendcl.so``.

    Raises RuntimeError with the compiler's message when gcc or the Python headers are
    missing (``make test`` installs them).
    """
    target = library_path()
    everything = [library_path(n) for n in LIBRARIES]
    if all(p.exists() for p in everything) and not force:
        return target
    groups = api.by_library()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        if force or not target.exists():
            _build_runtime(target, functions(), work, verbose)
        for name in LIBRARIES[1:]:
            _build_thin(name, groups[name], target.parent, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


#: folders of the toolkit and what they hold: CANN's layout as the samples' build files read
#: it (``$DDK_PATH/runtime/include``, ``$NPU_HOST_LIB`` = ``runtime/lib64/stub``; some read
#: ``$INSTALL_DIR/include``, ``compiler/lib64/stub`` or ``atc/lib64``)
TOOLKIT_INCLUDES = ("runtime/include", "include")
TOOLKIT_LIBS = ("runtime/lib64/stub", "runtime/lib64", "compiler/lib64/stub", "atc/lib64")
#: folders a build file names that hold nothing here (``driver``: the board's media library,
#: whose absence tells the samples' build files they run on a server)
TOOLKIT_EMPTY = ("driver", "thirdpart/lib")
#: the project's compatibility headers for the third-party libraries the samples' own
#: libraries use, copied to the toolkit's ``thirdpart/include`` (``THIRDPART_PATH/include``):
#: ``libavcodec/avcodec.h`` gives acllite's FFmpeg-4 code the bitstream-filter declarations
#: FFmpeg 5 moved to ``libavcodec/bsf.h``
THIRDPART_DIR = Path(__file__).resolve().parent / "thirdpart"
TOOLKIT_THIRDPART_INCLUDE = "thirdpart/include"


def toolkit(force: bool = False) -> Path:
    """The CANN-shaped toolkit folder (built once per version of the sources): headers in
    ``runtime/include`` and ``include``, every library in ``runtime/lib64/stub`` and the
    other library folders the samples' build files name, the compatibility headers in
    ``thirdpart/include`` (for ``THIRDPART_PATH=<toolkit>/thirdpart``). Its path."""
    build(force=force)
    root = cache_dir() / "toolkit"
    stamp = root / ".complete"
    if stamp.exists() and not force:
        return root
    tmp = Path(tempfile.mkdtemp(prefix="toolkit-", dir=cache_dir()))
    try:
        for inc in TOOLKIT_INCLUDES:
            shutil.copytree(INCLUDE_DIR, tmp / inc)
        for libdir in TOOLKIT_LIBS:
            (tmp / libdir).mkdir(parents=True, exist_ok=True)
            for name in LIBRARIES:
                os.symlink(library_path(name), tmp / libdir / f"lib{name}.so")
        for empty in TOOLKIT_EMPTY:
            (tmp / empty).mkdir(parents=True)
        shutil.copytree(THIRDPART_DIR, tmp / TOOLKIT_THIRDPART_INCLUDE)
        (tmp / ".complete").write_text("acl_lab toolkit\n")
        if root.exists():
            shutil.rmtree(root)
        os.replace(tmp, root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root


def cflags() -> str:
    """The compiler flags for a program that includes ``acl/acl.h``."""
    return f"-I{INCLUDE_DIR}"


def libs(lib: Path | None = None) -> str:
    """The linker flags for every library of the toolkit (with an rpath, so the program runs
    as built)."""
    d = (lib or library_path()).parent
    return f"-L{d} -Wl,-rpath,{d} " + " ".join(f"-l{n}" for n in LIBRARIES)
