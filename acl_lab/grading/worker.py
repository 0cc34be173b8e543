"""The grading child process: run one submitted notebook's code, write what happened, grade nothing.

``acl-lab grade`` (``acl_lab.grading.grade``) starts ``python -m acl_lab.grading.worker`` once
per submitted notebook, in a fresh temporary directory, and writes the job to its stdin as
JSON::

    {"notebook": "/abs/learner/04_pitfalls.ipynb", "out": "/abs/out",
     "exercises": [["04.1", 1234567], ["04.2", 89]], "memory_mb": 2048}

The seeds are drawn by the parent. With ``ACL_LAB_PIPE_FD`` set (``acl-lab grade`` always
sets it) every pyACL call goes through the pipe transport to the emulator server the grader
started outside the sandbox: the server owns the Session, and it (not this process) writes
each exercise's trace and landed bytes. This module is the untrusted side of the trust boundary:
it executes the learner's code and only *records*. For each exercise ``i`` it writes into
``out/ex<i>/`` the trace (``trace.acltrace``), the returned arrays (``a<k>.npy``, saved with
``allow_pickle=False``) and, last and atomically, ``result.json`` (the rest of the result as
JSON, the error, ``timed_out`` and the integrity violations seen so far), with the bytes every
device-to-host copy delivered (``landed.npy``, ``landed_index.npy``). The parent loads the
trace strictly, recomputes the findings, rebuilds the ``Run`` with its own seed and grades it;
nothing the child claims about points, findings or seeds is read.

Integrity checks made here, before and around the learner's code:

- an audit hook (``sys.addaudithook``, which nothing can remove) records every ``open``,
  ``os.listdir``, ``os.scandir`` (and link, rename, glob) of a path under a solutions folder,
  and any process started with a solutions folder in its arguments, as a violation. The
  folders are the repository's ``solutions/`` next to the ``acl_lab`` package and those listed
  in ``ACL_LAB_SOLUTIONS_DIR`` (``os.pathsep``-separated; the parent passes its own);
- a snapshot of the identity of every function, class, method and submodule of the loaded
  ``acl_lab.*`` modules (code objects, defaults and closures included), of the exercise
  registry and of the ``sys.modules["acl*"]`` entries, taken before the notebook runs and
  compared after every exercise: any difference is the violation
  ``"submission modified acl_lab: <name>"``.

Instructor and testing hook: ``ACL_LAB_GRADING_EXTRA`` lists extra rubric modules
(``os.pathsep``-separated module names or ``.py`` paths) that are imported, in the parent and in
this child, before the exercises are looked up (``load_extra_rubrics``). They register
exercises the same way the modules of ``acl_lab.grading.exercises`` do.

A ``MemoryError`` anywhere (a cell or the grader) ends the child with ``EXIT_MEMORY`` so the
parent can say that the memory limit was exceeded; the limit itself is ``RLIMIT_AS``, set
first thing in ``main``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import json
import os
import pkgutil
import re
import resource
import socket  # noqa: F401 - the pipe transport's C module, mapped before RLIMIT_AS
import sys
import threading
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from .. import pythreads

#: Environment variable: extra rubric modules (names or ``.py`` paths, ``os.pathsep``-separated).
EXTRA_ENV = "ACL_LAB_GRADING_EXTRA"
#: Environment variable: more solutions folders the audit hook protects.
SOLUTIONS_ENV = "ACL_LAB_SOLUTIONS_DIR"
#: Exit code of a child that ran out of memory (a ``MemoryError`` reached the worker).
EXIT_MEMORY = 86
#: Exit code of a child whose job description was unusable (a grader bug, not the learner's).
EXIT_BAD_JOB = 87
#: File names inside one exercise's output folder.
RESULT_FILE = "result.json"
TRACE_FILE = "trace.acltrace"
NOTEBOOK_FILE = "notebook.json"
LANDED_FILE = "landed.npy"
LANDED_INDEX_FILE = "landed_index.npy"
#: The emulator server's folder beside the worker's ``out`` folder (``<workdir>/recorded``):
#: it writes ``ex<i>/trace.acltrace`` and the landed bytes there, out of the sandbox's reach.
RECORDED_DIR = "recorded"
#: Written just before the learner's code runs: a child that dies without it failed in the
#: grader's own start-up (the instructor's problem, not the learner's).
READY_FILE = "ready.json"
#: Limits of a result that crosses the process boundary.
MAX_DEPTH = 32
MAX_NODES = 100_000
#: The most bytes the arrays of one result may hold in total: written by the worker, and
#: read by the parent (a result naming one large or sparse file many times is read once and
#: counted once).
MAX_ARRAY_BYTES = 512 << 20
#: At most this many distinct violations are kept (a loop reading files gives one each).
MAX_VIOLATIONS = 20
#: Largest file the child may write (the trace of a long run fits easily).
FILE_LIMIT_BYTES = 2 << 30

_ARRAY_NAME = re.compile(r"a[0-9]{1,6}\.npy")

#: Audit events that take a path (position of the path argument).
_PATH_EVENTS = {"open": 0, "os.listdir": 0, "os.scandir": 0, "os.link": 0, "os.rename": 0,
                "shutil.copyfile": 0, "shutil.copytree": 0, "glob.glob": 0}
#: Audit events that start a process (their arguments are searched for a solutions folder).
_SPAWN_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"}
#: Audit events that change files (besides ``open`` for writing).
_WRITE_EVENTS = {"os.remove", "os.rmdir", "os.rename", "os.truncate", "os.chmod",
                 "shutil.rmtree", "shutil.move", "os.mkdir", "os.symlink", "os.utime"}
#: Audit events that reach into other objects' memory, which grading code never does.
_INSPECT_EVENTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents"}


# ------------------------------------------------------------------------------ rubric hook
def load_extra_rubrics(spec: str | None = None) -> list[str]:
    """Import the extra rubric modules named by ``ACL_LAB_GRADING_EXTRA`` (or ``spec``).

    Each entry is a module name (``mypkg.rubrics``) or the path of a ``.py`` file. Both the
    grading parent and the worker call this, so an exercise registered there is known on both
    sides of the process boundary.

    Returns:
        The names of the modules imported.

    Raises:
        ImportError: an entry cannot be imported (the message names it).
    """
    spec = os.environ.get(EXTRA_ENV, "") if spec is None else spec
    names: list[str] = []
    for entry in (e.strip() for e in spec.split(os.pathsep)):
        if not entry:
            continue
        if entry.endswith(".py") or os.sep in entry:
            path = Path(entry).resolve()
            name = "acl_lab_grading_extra_" + re.sub(r"\W", "_", path.stem)
            if name not in sys.modules:
                module_spec = importlib.util.spec_from_file_location(name, path)
                if module_spec is None or module_spec.loader is None:
                    raise ImportError(f"{EXTRA_ENV}: cannot import {entry}")
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[name] = module
                try:
                    module_spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[name]
                    raise
        else:
            name = entry
            importlib.import_module(name)
        names.append(name)
    return names


def solution_dirs(extra: Iterable[str] = ()) -> list[str]:
    """The solutions folders to protect: the repository's ``solutions/`` next to the package,
    the ones in ``ACL_LAB_SOLUTIONS_DIR`` and ``extra``; resolved, existing or not."""
    import acl_lab
    from acl_lab.course import SHIPPED

    found = [str(Path(acl_lab.__file__).resolve().parent.parent / "solutions"),
             str(SHIPPED / "solutions")]  # the copy a wheel ships as package data
    found += [p for p in os.environ.get(SOLUTIONS_ENV, "").split(os.pathsep) if p]
    found += list(extra)
    out: list[str] = []
    for p in found:
        real = os.path.realpath(p)
        if real not in out:
            out.append(real)
    return out


# ------------------------------------------------------------------------------ audit hook
class _Violations:
    """A bounded, ordered, thread-safe set of violation messages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, None] = {}

    def add(self, message: str) -> None:
        with self._lock:
            if len(self._items) < MAX_VIOLATIONS:
                self._items.setdefault(message, None)

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self._items)


def _is_under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def install_audit_guard(roots: list[str], allowed: Iterable[str] = (),
                        protected: Iterable[str] = ()) -> Callable[[], list[str]]:
    """Install the audit hook that watches for reads of the solutions folders.

    Args:
        roots: resolved solutions folders.
        allowed: resolved paths that may be opened although under a root (the notebook being
            graded, when an instructor grades a notebook that lives there).
        protected: folders the submission must not write, rename or delete in (the
            repository, the Python installation, the model cache): an attempt is the
            violation ``"submission tried to change the grader's files: ..."``, whether or
            not the sandbox's read-only mount stopped it.

    Returns:
        A function giving the violations recorded so far.
    """
    found = _Violations()
    allow = {os.path.realpath(p) for p in allowed}
    local = threading.local()
    markers = [os.path.basename(r.rstrip(os.sep)) or r for r in roots]
    guarded = [os.path.realpath(p) for p in protected]

    def resolve(arg: Any) -> str | None:
        if isinstance(arg, int) or arg is None:
            return os.path.realpath(".") if arg is None else None
        if isinstance(arg, (str, bytes)):
            text = os.fsdecode(arg)
        elif isinstance(arg, os.PathLike):
            text = os.fsdecode(os.fspath(arg))
        else:
            return None
        return os.path.realpath(text.split("*", 1)[0] or ".")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in _PATH_EVENTS and event not in _SPAWN_EVENTS \
                and event not in _INSPECT_EVENTS and event not in _WRITE_EVENTS:
            return
        if getattr(local, "busy", False):
            return
        local.busy = True
        try:
            if event in _WRITE_EVENTS or (event == "open" and _writes(args)):
                for arg in args[:2] if event in ("os.rename", "shutil.move") else args[:1]:
                    path = resolve(arg)
                    if path is not None and _is_under(path, guarded):
                        found.add(f"submission tried to change the grader's files: {event} "
                                  f"{path}")
                if event != "open":
                    return
            if event in _INSPECT_EVENTS:
                found.add(f"submission inspected the grader's objects ({event})")
            elif event in _SPAWN_EVENTS:
                text = " ".join(_strings(args))
                if any(r in text for r in roots) or any(m in text for m in markers):
                    found.add(f"submission started a process on the solutions folder "
                              f"({event}: {text[:200]})")
            else:
                pos = _PATH_EVENTS[event]
                path = resolve(args[pos]) if len(args) > pos else None
                if path is not None and path not in allow and _is_under(path, roots):
                    found.add(f"submission accessed the solutions folder: {event} {path}")
        except Exception:  # an audit hook must never break the audited operation
            pass
        finally:
            local.busy = False

    sys.addaudithook(hook)
    return found.snapshot


def _writes(args: tuple[Any, ...]) -> bool:
    """Whether an ``open`` audit event (path, mode, flags) opens for writing."""
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    return isinstance(flags, int) and bool(flags & write_flags)


def protected_dirs() -> list[str]:
    """Folders a submission must not change: the repository holding ``acl_lab`` (package,
    exercises, solutions), the Python installation and acl_lab's model cache."""
    import acl_lab

    out = [str(Path(acl_lab.__file__).resolve().parent.parent), sys.prefix, sys.base_prefix]
    cache = os.environ.get("ACL_LAB_CACHE")
    if cache:
        out.append(cache)
    return [os.path.realpath(p) for p in out]


def _strings(value: Any, depth: int = 0) -> list[str]:
    """Every string (and bytes) inside nested tuples/lists/dicts, for the spawn check."""
    if depth > 4:
        return []
    if isinstance(value, (str, bytes)):
        return [os.fsdecode(value)]
    if isinstance(value, os.PathLike):
        return [os.fsdecode(os.fspath(value))]
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in _strings(v, depth + 1)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings((k, v), depth + 1)]
    return []


# ------------------------------------------------------------------------------ snapshot
Snapshot = dict[str, dict[str, tuple[int, ...]]]


def _is_watched_module(name: str) -> bool:
    return name == "acl_lab" or name.startswith("acl_lab.")


def preimport_acl_lab() -> None:
    """Import every ``acl_lab`` submodule now, so the snapshot covers them all (a module
    that fails to import, e.g. one being written, is left out).

    ``acl_lab.tracer.views.figure_widgets`` imports plotly's widget, whose renderer registry
    imports nbformat and jsonschema, and jsonschema's format checkers import
    ``rfc3987_syntax`` when it is installed (Jupyter's ``jsonschema[format-nongpl]``), which
    compiles 38 Earley grammars at import: 2.5 s of every graded notebook. The worker never
    checks an IRI's format, so it leaves that module out (jsonschema then skips that check).
    """
    import acl_lab

    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

    for info in pkgutil.walk_packages(acl_lab.__path__, "acl_lab."):
        if info.name in sys.modules:
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(info.name)


def _fingerprint(value: Any, depth: int = 0) -> tuple[int, ...]:
    """The identity of ``value`` and of what it runs: code, defaults, closure functions."""
    parts = [id(value)]
    if depth > 2:
        return tuple(parts)
    if isinstance(value, (staticmethod, classmethod)):
        parts += _fingerprint(value.__func__, depth + 1)
    elif isinstance(value, property):
        for f in (value.fget, value.fset, value.fdel):
            parts += _fingerprint(f, depth + 1) if f is not None else (0,)
    elif isinstance(value, types.FunctionType):
        parts += [id(value.__code__), id(value.__defaults__), id(value.__kwdefaults__)]
        for cell in value.__closure__ or ():
            try:
                content = cell.cell_contents
            except ValueError:
                parts.append(0)
                continue
            if isinstance(content, (types.FunctionType, type)):
                parts += _fingerprint(content, depth + 1)
    return tuple(parts)


def _is_code(value: Any) -> bool:
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type,
                              types.ModuleType, staticmethod, classmethod, property,
                              types.MethodType))


def _is_method_like(value: Any) -> bool:
    return _is_code(value) or (callable(value) and not isinstance(value, (int, str)))


#: (module, attribute, acl_lab.install's replacement, the original) for the grader's tools
#: that install replaces, fixed when the worker is imported (a tuple, bound below as a
#: default: a submission cannot change what the snapshot compares against unnoticed).
_INSTALL_REPLACES = tuple((owner, attr, new, pythreads.ORIGINALS_AT_IMPORT[(owner, attr)])
                          for (owner, attr), new in pythreads.REPLACEMENTS.items()
                          if isinstance(owner, types.ModuleType))


def snapshot_acl_lab(installs: tuple[tuple[Any, str, Any, Any], ...] = _INSTALL_REPLACES
                     ) -> Snapshot:
    """Identities of everything a submission could patch to change how it is run.

    Owners are module names, class names (``module.Qualname``), ``sys.modules`` (the
    ``acl*`` and ``acl_lab*`` entries) and the exercise registry. ``installs``: what
    ``acl_lab.install`` puts in place of a tool, counted as the tool itself.
    """
    snap: Snapshot = {}
    modules = {k: v for k, v in list(sys.modules.items()) if isinstance(v, types.ModuleType)}
    entries: dict[str, tuple[int, ...]] = {}
    classes: dict[int, type] = {}
    for name, module in modules.items():
        if not _is_watched_module(name):
            continue
        entries[name] = (id(module),)
        attrs: dict[str, tuple[int, ...]] = {}
        for attr, value in list(vars(module).items()):
            if _is_code(value):
                attrs[attr] = _fingerprint(value)
            if isinstance(value, type) and _is_watched_module(getattr(value, "__module__", "")):
                classes[id(value)] = value
        snap[name] = attrs
    for cls in classes.values():
        members: dict[str, tuple[int, ...]] = {}
        for attr, value in list(vars(cls).items()):
            if _is_method_like(value):
                members[attr] = _fingerprint(value)
        snap[f"{cls.__module__}.{cls.__qualname__}"] = members
    for name, module in modules.items():
        if name == "acl" or name.startswith("acl."):
            genuine = modules.get(f"acl_lab.{name}")
            if genuine is None and name.count(".") == 1:
                # a submodule the package builds in place (acl.blas...) rather than imports
                genuine = getattr(modules.get("acl_lab.acl"), name.split(".")[1], None)
            entries[name] = (1,) if module is genuine else (id(module),)
    snap["sys.modules"] = entries
    snap["exercise registry"] = _registry_fingerprint()
    for name in TOOL_MODULES:
        tool = modules.get(name)
        if tool is None:
            continue
        tools: dict[str, tuple[int, ...]] = {}
        for attr, value in list(vars(tool).items()):
            for owner, what, own, original in installs:
                if owner is tool and what == attr and value is own:
                    # acl_lab.install's own (os.read in the host schedule) counts as the
                    # original: installing or uninstalling acl_lab is no modification
                    value = original
            if _is_code(value) and not isinstance(value, types.ModuleType):
                tools[attr] = _fingerprint(value)
                if isinstance(value, type) and getattr(value, "__module__", "") == name:
                    for member, mv in list(vars(value).items()):
                        if _is_method_like(mv):
                            tools[f"{attr}.{member}"] = _fingerprint(mv)
        snap[TOOL_PREFIX + name] = tools
    return snap


#: Modules of the standard library and numpy that the trace recorder and the worker's
#: writing use (``Trace.save`` calls ``json.dumps``...): patching one could rewrite the
#: record on its way to the grader, so they are snapshotted too.
TOOL_MODULES = ("builtins", "json", "json.encoder", "json.decoder", "gzip", "io", "zlib",
                "os", "struct", "array", "numpy", "numpy.lib.format", "heapq", "bisect",
                "operator")
#: Owner-name prefix of those modules in a snapshot.
TOOL_PREFIX = "tool "


def _registry_fingerprint() -> dict[str, tuple[int, ...]]:
    from . import rubric

    out: dict[str, tuple[int, ...]] = {}
    for ex_id, ex in list(rubric._EXERCISES.items()):
        parts = [id(ex), id(ex.items), *_fingerprint(ex.make_args)]
        for item in ex.items:
            parts += [id(item), item.points, *_fingerprint(item.check)]
        out[ex_id] = tuple(parts)
    return out


def diff_snapshots(before: Snapshot, after: Snapshot) -> list[str]:
    """The violations ``"submission modified acl_lab: <name>"`` between two snapshots.

    A changed or removed entry of anything snapshotted before is a modification; so is a
    method added to a class. New modules and new module attributes are not (the emulator
    imports lazily); an ``acl`` entry of ``sys.modules`` that disappeared is not either
    (``acl_lab.uninstall()`` removes it).
    """
    out: list[str] = []
    for owner, attrs in before.items():
        now = after.get(owner)
        if now is None:
            out.append(f"submission modified acl_lab: {owner} removed from sys.modules")
            continue
        is_module = owner in before.get("sys.modules", {})
        if owner.startswith(TOOL_PREFIX):
            module = owner[len(TOOL_PREFIX):]
            out += [f"submission modified the grader's tools: {module}.{attr}"
                    for attr, fp in attrs.items() if now.get(attr) != fp]
            continue
        for attr, fp in attrs.items():
            got = now.get(attr)
            if owner == "sys.modules" and attr.split(".")[0] == "acl" and got in (None, (1,)):
                continue
            if got != fp:
                what = f"sys.modules[{attr!r}]" if owner == "sys.modules" else f"{owner}.{attr}"
                if owner == "exercise registry":
                    what = f"the rubric of exercise {attr}"
                out.append(f"submission modified acl_lab: {what}")
        if owner not in ("sys.modules", "exercise registry") and not is_module:
            out += [f"submission modified acl_lab: {owner}.{attr} (added)"
                    for attr in sorted(set(now) - set(attrs))]
        if owner == "sys.modules":
            out += [f"submission modified acl_lab: sys.modules[{attr!r}]"
                    for attr in sorted(set(now) - set(attrs))
                    if attr.split(".")[0] == "acl" and now[attr] != (1,)]
    return out


# ------------------------------------------------------------------------------ results
class UnserialisableError(ValueError):
    """A learner's return value cannot cross the process boundary."""


def encode_result(value: Any, folder: Path) -> Any:
    """The JSON description of ``value``; numpy arrays are saved next to it as ``a<k>.npy``.

    Carried: ``None``, bools, ints, floats, complex numbers, strings, bytes, numpy scalars (as
    plain values), numpy arrays (not of object dtype), and tuples, lists and dicts (with
    string or int keys) of those. Only exact types are accepted, so no learner-defined method
    runs while encoding.

    Raises:
        UnserialisableError: ``"unserialisable result of type X"``.
    """
    counter = [0, 0]  # nodes, array bytes

    def enc(v: Any, depth: int) -> Any:
        counter[0] += 1
        if counter[0] > MAX_NODES or depth > MAX_DEPTH:
            raise UnserialisableError("unserialisable result: nested too deeply or too large")
        t = type(v)
        if v is None or t in (bool, int, float, str):
            return {"t": "v", "v": v}
        if t is complex:
            return {"t": "complex", "re": v.real, "im": v.imag}
        if t is bytes:
            return {"t": "bytes", "hex": v.hex()}
        if isinstance(v, np.generic) and t.__module__ == "numpy":
            plain = v.item()
            if type(plain) in (bool, int, float, str, complex, bytes):
                return enc(plain, depth + 1)
            raise UnserialisableError(f"unserialisable result of type numpy.{t.__name__}")
        if isinstance(v, np.ndarray):
            arr = np.asarray(v)
            if arr.dtype.hasobject:
                raise UnserialisableError("unserialisable result of type numpy array of "
                                          "dtype object")
            counter[1] += arr.nbytes
            if counter[1] > MAX_ARRAY_BYTES:
                raise UnserialisableError("unserialisable result: arrays larger than "
                                          f"{MAX_ARRAY_BYTES >> 20} MiB")
            name = f"a{counter[0]}.npy"
            np.save(folder / name, arr, allow_pickle=False)
            return {"t": "ndarray", "file": name}
        if t in (tuple, list):
            return {"t": t.__name__, "items": [enc(x, depth + 1) for x in v]}
        if t is dict:
            items = []
            for k, x in v.items():
                if type(k) not in (str, int):
                    raise UnserialisableError("unserialisable result: dict key of type "
                                              f"{type(k).__qualname__}")
                items.append([k, enc(x, depth + 1)])
            return {"t": "dict", "items": items}
        raise UnserialisableError(f"unserialisable result of type {_type_name(v)}")

    return enc(value, 0)


def _type_name(value: Any) -> str:
    t = type(value)
    module = getattr(t, "__module__", "") or ""
    name = getattr(t, "__qualname__", "?")
    return name if module in ("builtins", "__main__", "") else f"{module}.{name}"


def decode_result(node: Any, folder: Path) -> Any:
    """Rebuild a value written by ``encode_result``, validating every node strictly.

    Raises:
        ValueError: the description is malformed or names a file it may not.
    """
    count = [0]
    arrays: dict[str, np.ndarray] = {}  # each file read once, however often it is named
    budget = [MAX_ARRAY_BYTES]

    def array(name: str) -> np.ndarray:
        if name not in arrays:
            path = folder / name
            size = path.stat().st_size  # the logical size: a sparse file counts whole
            if size > budget[0]:
                raise ValueError(f"result: its arrays hold more than "
                                 f"{MAX_ARRAY_BYTES >> 20} MiB")
            budget[0] -= size
            arrays[name] = np.load(path, allow_pickle=False)
        return arrays[name]

    def dec(n: Any, depth: int) -> Any:
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise ValueError("result: nested too deeply or too large")
        if not isinstance(n, dict) or not isinstance(n.get("t"), str):
            raise ValueError("result: malformed node")
        kind = n["t"]
        if kind == "v":
            v = n.get("v")
            if v is not None and type(v) not in (bool, int, float, str):
                raise ValueError("result: bad plain value")
            return v
        if kind == "complex":
            re_, im = n.get("re"), n.get("im")
            if not (isinstance(re_, (int, float)) and isinstance(im, (int, float))) \
                    or isinstance(re_, bool) or isinstance(im, bool):
                raise ValueError("result: bad complex value")
            return complex(re_, im)
        if kind == "bytes":
            h = n.get("hex")
            if not isinstance(h, str):
                raise ValueError("result: bad bytes value")
            return bytes.fromhex(h)
        if kind == "ndarray":
            name = n.get("file")
            if not isinstance(name, str) or not _ARRAY_NAME.fullmatch(name):
                raise ValueError("result: bad array file name")
            return array(name)
        if kind in ("tuple", "list"):
            items = n.get("items")
            if not isinstance(items, list):
                raise ValueError("result: bad sequence")
            seq = [dec(x, depth + 1) for x in items]
            return tuple(seq) if kind == "tuple" else seq
        if kind == "dict":
            items = n.get("items")
            if not isinstance(items, list):
                raise ValueError("result: bad dict")
            out: dict[Any, Any] = {}
            for pair in items:
                if not (isinstance(pair, list) and len(pair) == 2
                        and type(pair[0]) in (str, int)):
                    raise ValueError("result: bad dict item")
                out[pair[0]] = dec(pair[1], depth + 1)
            return out
        raise ValueError(f"result: unknown node kind {kind!r}")

    return dec(node, 0)


def save_landed(landed: Iterable[tuple[int, bytes]], folder: Path) -> None:
    """Write the bytes the copies back delivered: ``landed.npy`` (all of them, uint8) and
    ``landed_index.npy`` (``(task row, length)`` per copy, int64)."""
    items = list(landed)
    data = np.frombuffer(b"".join(d for _, d in items), dtype=np.uint8)
    index = np.asarray([[t, len(d)] for t, d in items], dtype=np.int64).reshape(-1, 2)
    np.save(folder / LANDED_FILE, data, allow_pickle=False)
    np.save(folder / LANDED_INDEX_FILE, index, allow_pickle=False)


def load_landed(folder: Path) -> tuple[tuple[int, bytes], ...]:
    """Read what ``save_landed`` wrote, strictly.

    Raises:
        ValueError: the files are missing, malformed or inconsistent.
    """
    try:
        data = np.load(folder / LANDED_FILE, allow_pickle=False)
        index = np.load(folder / LANDED_INDEX_FILE, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"landed copies: {e}") from None
    if data.dtype != np.uint8 or data.ndim != 1 or index.dtype != np.int64 \
            or index.ndim != 2 or index.shape[1] != 2:
        raise ValueError("landed copies: bad array types")
    lengths = index[:, 1]
    if (lengths < 0).any() or int(lengths.sum()) != data.size:
        raise ValueError("landed copies: lengths do not add up")
    raw = data.tobytes()
    out: list[tuple[int, bytes]] = []
    pos = 0
    for task, n in index.tolist():
        out.append((int(task), raw[pos:pos + n]))
        pos += n
    return tuple(out)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``path`` atomically (a complete file or none)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
        fh.flush()
    os.replace(tmp, path)


# ------------------------------------------------------------------------------ main
def _limit_resources(memory_mb: int | None) -> None:
    """Address-space, file-size and core-dump limits for this process."""
    def lower(kind: int, value: int) -> None:
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (value, hard))

    if memory_mb:
        lower(resource.RLIMIT_AS, int(memory_mb) << 20)
    lower(resource.RLIMIT_FSIZE, FILE_LIMIT_BYTES)
    lower(resource.RLIMIT_CORE, 0)


def _cell_errors(raw: Any) -> list[tuple[int, str]]:
    """The ``__cell_errors__`` of ``learner_namespace``: ``(cell index, "Type: message")``."""
    out: list[tuple[int, str]] = []
    for entry in raw if isinstance(raw, (list, tuple)) else ():
        if isinstance(entry, tuple) and len(entry) == 2:
            out.append((int(entry[0]), str(entry[1])[:4000]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run one job read from stdin (see the module docstring) and end the process."""
    del argv
    try:
        job = json.loads(sys.stdin.read())
        notebook = str(job["notebook"])
        out = Path(job["out"])
        jobs = [(str(e[0]), int(e[1])) for e in job["exercises"]]
        memory_mb = job.get("memory_mb")
    except (ValueError, KeyError, TypeError) as e:
        print(f"acl-lab grade worker: bad job description: {e}", file=sys.stderr)
        return EXIT_BAD_JOB
    _limit_resources(memory_mb)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # a learner's input() gets EOF instead of waiting forever
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process

    # Everything the grading below needs is bound to locals before the learner's code runs:
    # patching a module attribute afterwards cannot change what this function calls.
    try:
        from .notebook import learner_namespace
        from .rubric import get_exercise
        from .runner import describe_exception, run_exercise, run_exercise_remote

        load_extra_rubrics()
        preimport_acl_lab()
        pipe = _connect_pipe()
    except ImportError as e:
        if "failed to map segment" in str(e):  # the loader ran out of address space
            raise MemoryError(f"loading a C module: {e}") from None
        raise
    exercises = [(get_exercise(ex_id), seed) for ex_id, seed in jobs]
    violations = install_audit_guard(solution_dirs(job.get("solutions", [])),
                                     allowed=[notebook], protected=protected_dirs())
    snap, diff, write, encode = snapshot_acl_lab, diff_snapshots, _write_json, encode_result
    land = save_landed
    before = snap()
    write(out / READY_FILE, {"pid": os.getpid()})
    namespace: dict[str, Any] | None = None
    try:
        try:
            namespace = learner_namespace(notebook, skip_tags=("check",))
        except MemoryError:
            raise
        except BaseException as exc:  # the notebook file itself could not be run
            write(out / NOTEBOOK_FILE, {"failed": describe_exception(exc)[:4000],
                                        "cell_errors": [], "violations": violations()})
            return _end(0)
        errors = _cell_errors(namespace.pop("__cell_errors__", None))
        memory = any(text.startswith("MemoryError") for _, text in errors)
        write(out / NOTEBOOK_FILE, {"failed": None, "memory": memory,
                                    "cell_errors": [f"cell {i}: {t}" for i, t in errors],
                                    "violations": violations() + diff(before, snap())})
        if memory:
            namespace = None
            gc.collect()
            return _end(EXIT_MEMORY)
        for index, (ex, seed) in enumerate(exercises):
            folder = out / f"ex{index}"
            folder.mkdir(parents=True, exist_ok=True)
            doc: dict[str, Any] = {"exercise": ex.id, "status": "ran", "error": None,
                                   "timed_out": False, "result": None, "unserialisable": None}
            fn = namespace.get(ex.entry)
            if fn is None or not callable(fn):
                doc["status"] = "missing_entry" if fn is None else "not_callable"
                doc["violations"] = violations() + diff(before, snap())
                write(folder / RESULT_FILE, doc)
                continue
            try:
                run: Any = (run_exercise(ex, fn, seed=seed) if pipe is None
                            else run_exercise_remote(ex, fn, pipe, index, seed=seed))
            except MemoryError:
                raise
            except Exception as exc:  # make_args or the Session failed: the grader's fault
                doc["status"] = "run_failed"
                doc["error"] = describe_exception(exc)[:4000]
                doc["violations"] = violations() + diff(before, snap())
                write(folder / RESULT_FILE, doc)
                continue
            if pipe is None:  # through the pipe, the emulator server writes these
                run.trace.save(folder / TRACE_FILE)
                land(run.landed, folder)
            doc["error"] = None if run.error is None else str(run.error)[:20000]
            doc["timed_out"] = bool(run.timed_out)
            try:
                doc["result"] = encode(run.result, folder)
            except UnserialisableError as exc:
                doc["unserialisable"] = str(exc)
            doc["violations"] = violations() + diff(before, snap())
            write(folder / RESULT_FILE, doc)
            del run, fn
    except MemoryError:
        namespace = None
        gc.collect()
        return _end(EXIT_MEMORY)
    return _end(0)


def _connect_pipe() -> Any:
    """The pipe transport to the emulator server, installed under every pyACL function,
    when the grader passed the socket (``ACL_LAB_PIPE_FD``); None otherwise (the emulator
    then runs in this process, as before the transport)."""
    from ..transport.client import FD_ENV, Pipe, install

    fd = os.environ.get(FD_ENV)
    if not fd:
        return None
    pipe = Pipe(int(fd))
    install(pipe)
    return pipe


def _end(code: int) -> NoReturn:
    """Flush and leave at once: threads the learner left running must not keep us alive."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    # Run the module under its own name so the snapshot covers the grader's own functions.
    from acl_lab.grading import worker as _worker

    sys.exit(_worker.main())
