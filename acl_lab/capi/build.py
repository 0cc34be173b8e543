"""Build ``libascendcl.so``: the C API of acl_lab, running the emulator inside the C program.

The library is made with cffi's embedding mode (``ffibuilder.embedding_api`` and
``embedding_init_code``). It was chosen because it does exactly this job: the shared library
starts CPython inside the C process on the first call and runs Python functions for C
entry points; cffi is maintained with CPython's releases, and the build needs only gcc and
the Python headers (python3-dev), no extra toolchain.

Every function the headers in ``acl_lab/include/acl`` declare is defined by a small C
function (generated here) that passes the caller's return address
(``__builtin_return_address(0)``) and its arguments to an embedded Python function of the
same name in :mod:`acl_lab.capi.bridge`, which calls the pyACL layer (``acl_lab.acl``). The
headers are the single list of functions: parsing them gives both the C definitions and the
cffi declarations, and the C compiler checks the definitions against the headers.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
INCLUDE_DIR = PACKAGE_DIR / "include"
HEADERS = ("acl/acl_base.h", "acl/acl_rt.h", "acl/acl_mdl.h", "acl/acl_op.h",
           "acl/ops/acl_dvpp.h")
LIB_NAME = "libascendcl.so"

#: header types passed to the embedded Python as plain C types (enums are ints in C)
_SCALARS = {
    "aclError": "int", "int": "int", "int32_t": "int32_t", "uint32_t": "uint32_t",
    "int64_t": "int64_t", "uint64_t": "uint64_t", "size_t": "size_t", "uint8_t": "uint8_t",
    "uint16_t": "uint16_t", "aclFloat16": "uint16_t", "float": "float", "void": "void",
    "aclDataType": "int", "aclFormat": "int", "aclrtMemcpyKind": "int",
    "aclrtMemMallocPolicy": "int", "aclrtCallbackBlockType": "int", "aclrtRunMode": "int",
}
#: typedefs that are pointers already
_HANDLES = {"aclrtStream", "aclrtEvent", "aclrtContext", "aclrtCallback"}


@dataclass(frozen=True)
class Param:
    """One parameter: its type as the header spells it, its name and the cffi type."""

    ctype: str
    name: str
    ffi_type: str


@dataclass(frozen=True)
class Function:
    """One C API function declared by the headers."""

    name: str
    ret: str
    ret_ffi: str
    params: tuple[Param, ...]


def _ffi_type(ctype: str) -> str:
    t = ctype.replace("const ", "").strip()
    if t == "char *":
        return "char *"
    if "*" in t or "[]" in t or t in _HANDLES:
        return "void *"
    if t not in _SCALARS:
        raise ValueError(f"acl_lab capi: no C type mapping for {ctype!r}")
    return _SCALARS[t]


_DECL = re.compile(r"ACL_FUNC_VISIBILITY\s+(?P<ret>[\w\s\*]+?)\s*(?P<name>\b\w+)\s*"
                   r"\((?P<params>[^)]*)\)\s*;", re.S)


def _param(text: str) -> Param:
    text = " ".join(text.split())
    array = text.endswith("[]")
    if array:
        text = text[:-2].rstrip()
    m = re.match(r"(?P<type>.*?[\s\*])(?P<name>\w+)$", text)
    if m is None:
        raise ValueError(f"acl_lab capi: cannot parse parameter {text!r}")
    ctype = " ".join(m.group("type").replace("*", " * ").split()).replace("* *", "**")
    if array:
        ctype = (ctype + " *").replace("* *", "**")
    return Param(ctype, m.group("name"), _ffi_type(ctype))


def functions(include_dir: Path = INCLUDE_DIR) -> list[Function]:
    """Every function the acl_lab headers declare, in header order."""
    out: list[Function] = []
    for h in HEADERS:
        text = (include_dir / h).read_text(encoding="utf-8")
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for m in _DECL.finditer(text):
            ret = " ".join(m.group("ret").replace("*", " * ").split())
            raw = m.group("params").strip()
            parts = [] if raw in ("", "void") else raw.split(",")
            params = tuple(_param(p) for p in parts)
            out.append(Function(m.group("name"), ret, _ffi_type(ret), params))
    return out


def cdef_source(funcs: list[Function]) -> str:
    """The cffi declarations of the embedded Python entry points (``_lab_<name>``)."""
    lines = []
    for f in funcs:
        args = ", ".join(["void *ra"] + [f"{p.ffi_type} {p.name}" for p in f.params])
        lines.append(f"{f.ret_ffi} _lab_{f.name}({args});")
    lines.append("void _lab_at_exit(void);")
    lines.append("void _lab_device_fault(void *addr, void *pc);")
    return "\n".join(lines) + "\n"


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


def shim_source(funcs: list[Function]) -> str:
    """C definitions of the public API: each forwards to its embedded Python function with
    the caller's return address first (resolved to the caller's file:line in the trace)."""
    out = ["#define _GNU_SOURCE", "#include <signal.h>", "#include <stdlib.h>",
           "#include <sys/mman.h>", "#include <ucontext.h>", "#include <unistd.h>",
           '#include "acl/acl.h"', '#include "acl/ops/acl_dvpp.h"', ""]
    out.append(cdef_source(funcs))
    out.append(_SUPPORT)
    for f in funcs:
        params = ", ".join(f"{p.ctype} {p.name}".replace("* ", "*") for p in f.params) \
            or "void"
        args = ", ".join(["__builtin_return_address(0)"]
                         + [f"(void *){p.name}" if p.ffi_type == "void *" else
                            f"(char *){p.name}" if p.ffi_type == "char *" else p.name
                            for p in f.params])
        call = f"_lab_{f.name}({args})"
        if f.ret == "void":
            body = f"{call};"
        elif f.ret_ffi == "void *":
            body = f"return ({f.ret}){call};"
        else:
            body = f"return {call};"
        out.append(f"{f.ret} {f.name}({params}) {{ {body} }}")
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
    """Where the built library goes: ``$ACL_LAB_CACHE/capi/<key>`` (else
    ``~/.cache/acl_lab/capi/<key>``); the key hashes the headers, the bridge and Python."""
    base = os.environ.get("ACL_LAB_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "acl_lab"
    h = hashlib.sha256()
    for name in (*HEADERS, ):
        h.update((INCLUDE_DIR / name).read_bytes())
    for mod in ("build.py", "bridge.py"):
        h.update((Path(__file__).parent / mod).read_bytes())
    h.update(sys.version.encode())
    h.update(sys.executable.encode())
    return root / "capi" / h.hexdigest()[:16]


def library_path() -> Path:
    """The path of the built library (it may not exist yet: see :func:`build`)."""
    return cache_dir() / LIB_NAME


def build(force: bool = False, verbose: bool = False) -> Path:
    """Build ``libascendcl.so`` into the cache (once per version of the sources); its path.

    Raises RuntimeError with the compiler's message when gcc or the Python headers are
    missing (``make test`` installs them).
    """
    target = library_path()
    if target.exists() and not force:
        return target
    from .._extras import require
    cffi = require("cffi", "capi", "the C API (acl-lab cc)")
    funcs = functions()
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        shim = work / "acl_lab_shim.c"
        shim.write_text(shim_source(funcs), encoding="utf-8")
        ffib = cffi.FFI()
        ffib.embedding_api(cdef_source(funcs))
        support = "int _lab_install_atexit(void);\nint _lab_guard_device(uintptr_t, uintptr_t);\n"
        ffib.cdef(support)
        ffib.set_source("_acl_lab_capi", support,
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
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def cflags() -> str:
    """The compiler flags for a program that includes ``acl/acl.h``."""
    return f"-I{INCLUDE_DIR}"


def libs(lib: Path | None = None) -> str:
    """The linker flags for ``-lascendcl`` (with an rpath, so the program runs as built)."""
    d = (lib or library_path()).parent
    return f"-L{d} -Wl,-rpath,{d} -lascendcl"
