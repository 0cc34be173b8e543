"""C return addresses to ``file:line``, from the program's ``-g`` debug information, or to
``object(function+offset)`` without it.

The library passes each API call's return address. The mapping of ``/proc/self/maps`` that
holds it gives the object file and its load base (a PIE executable or a shared object is
relocated; a fixed-address executable is not); one long-running ``addr2line`` (binutils)
per object file turns file addresses into ``function``/``file:line`` pairs, and every
answer is cached, so each call site is resolved once. ``addr2line`` reads addresses on its
standard input, one per line, and answers two lines each (with ``-f``).

A program built without ``-g`` (the samples' READMEs build in Release mode) has no line
table; its sites are then ``path(function+0xoffset)`` with line 0, the form glibc's
``backtrace_symbols`` prints, from the object's symbol table (``nm``), so that a finding
still names the function.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from bisect import bisect_right

#: ELF e_type of a fixed-address executable (its addresses are not relocated)
_ET_EXEC = 2


def _short(name: str) -> str:
    """A demangled function name without its parameter list (``Model::Execute(int)`` ->
    ``Model::Execute``), as a site names it."""
    cut = name.find("(", 9 if name.startswith("operator") else 0)
    return name[:cut] if cut > 0 else name


class SiteResolver:
    """Resolve return addresses of this process to (file, line); thread-safe and cached."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[int, tuple[str, int]] = {}
        self._maps: list[tuple[int, int, int, str]] = []
        self._starts: list[int] = []
        self._tools: dict[str, subprocess.Popen[str] | None] = {}
        self._fixed: dict[str, bool] = {}
        self._addr2line = shutil.which("addr2line")
        self._nm = shutil.which("nm")
        self._symbols: dict[str, tuple[list[int], list[str]]] = {}

    def resolve(self, ra: int) -> tuple[str, int]:
        """(file, line) of the call that returns to ``ra`` (``(object, 0)`` without debug
        information, ``("<unknown>", 0)`` for an address in no mapped file)."""
        got = self._cache.get(ra)
        if got is not None:
            return got
        with self._lock:
            got = self._cache.get(ra)
            if got is None:
                got = self._lookup(ra)
                self._cache[ra] = got
        return got

    def _mapping(self, ra: int) -> tuple[int, int, int, str] | None:
        for attempt in range(2):
            i = bisect_right(self._starts, ra) - 1
            if i >= 0:
                start, end = self._maps[i][:2]
                if start <= ra < end:
                    return self._maps[i]
            if attempt == 0:
                self._read_maps()  # a library loaded since the last read
        return None

    def _read_maps(self) -> None:
        rows: list[tuple[int, int, int, str]] = []
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) < 6 or "x" not in parts[1]:
                    continue
                path = parts[5].strip()
                if not path.startswith("/"):
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                rows.append((lo, hi, int(parts[2], 16), path))
        rows.sort()
        self._maps = rows
        self._starts = [r[0] for r in rows]

    def _is_fixed(self, path: str) -> bool:
        fixed = self._fixed.get(path)
        if fixed is None:
            try:
                with open(path, "rb") as fh:
                    head = fh.read(18)
                fixed = len(head) == 18 and head[:4] == b"\x7fELF" and \
                    int.from_bytes(head[16:18], "little") == _ET_EXEC
            except OSError:
                fixed = False
            self._fixed[path] = fixed
        return fixed

    def _tool(self, path: str) -> subprocess.Popen[str] | None:
        if path not in self._tools:
            proc = None
            if self._addr2line is not None:
                try:
                    proc = subprocess.Popen([self._addr2line, "-e", path, "-f", "-C"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
                except OSError:
                    proc = None
            self._tools[path] = proc
        return self._tools[path]

    def _lookup(self, ra: int) -> tuple[str, int]:
        m = self._mapping(ra)
        if m is None:
            return "<unknown>", 0
        start, _end, offset, path = m
        # the call instruction ends at ra: look up the byte before it
        addr = ra - 1 if self._is_fixed(path) else ra - 1 - start + offset
        proc = self._tool(path)
        if proc is None or proc.stdin is None or proc.stdout is None:
            return self._symbolic(path, addr), 0
        try:
            proc.stdin.write(f"{addr:#x}\n")
            proc.stdin.flush()
            proc.stdout.readline()  # the function name
            where = proc.stdout.readline().strip()
        except OSError:
            return self._symbolic(path, addr), 0
        file, _, rest = where.rpartition(":")
        line_text = rest.split(" ", 1)[0]
        if not file or file == "??" or not line_text.isdigit() or line_text == "0":
            return self._symbolic(path, addr), 0
        return os.path.normpath(file), int(line_text)

    def _symbolic(self, path: str, addr: int) -> str:
        """``path(function+0xoffset)`` for an address of an object without line information
        (``path`` alone when its symbol table does not cover the address)."""
        table = self._symbols.get(path)
        if table is None:
            table = self._symbols[path] = self._read_symbols(path)
        starts, names = table
        i = bisect_right(starts, addr) - 1
        if i < 0:
            return path
        return f"{path}({names[i]}+{addr - starts[i]:#x})"

    def _read_symbols(self, path: str) -> tuple[list[int], list[str]]:
        if self._nm is None:
            return [], []
        try:
            out = subprocess.run([self._nm, "--defined-only", "-C", path], capture_output=True,
                                 text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            return [], []
        rows = []
        for line in out.splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] in ("T", "t", "W", "w") and parts[0]:
                try:
                    rows.append((int(parts[0], 16), _short(parts[2])))
                except ValueError:
                    continue
        rows.sort()
        return [a for a, _ in rows], [n for _, n in rows]

    def close(self) -> None:
        """Stop the addr2line processes."""
        with self._lock:
            for proc in self._tools.values():
                if proc is not None:
                    try:
                        if proc.stdin is not None:
                            proc.stdin.close()
                        proc.wait(timeout=2)
                    except (OSError, subprocess.TimeoutExpired):
                        proc.kill()
            self._tools.clear()
