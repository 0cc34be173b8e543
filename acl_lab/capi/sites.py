"""C return addresses to ``file:line``, from the program's ``-g`` debug information.

The library passes each API call's return address. The mapping of ``/proc/self/maps`` that
holds it gives the object file and its load base (a PIE executable or a shared object is
relocated; a fixed-address executable is not); one long-running ``addr2line`` (binutils)
per object file turns file addresses into ``function``/``file:line`` pairs, and every
answer is cached, so each call site is resolved once. ``addr2line`` reads addresses on its
standard input, one per line, and answers two lines each (with ``-f``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from bisect import bisect_right

#: ELF e_type of a fixed-address executable (its addresses are not relocated)
_ET_EXEC = 2


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
            return path, 0
        try:
            proc.stdin.write(f"{addr:#x}\n")
            proc.stdin.flush()
            proc.stdout.readline()  # the function name
            where = proc.stdout.readline().strip()
        except OSError:
            return path, 0
        file, _, rest = where.rpartition(":")
        line_text = rest.split(" ", 1)[0]
        if not file or file == "??" or not line_text.isdigit():
            return path, 0
        return os.path.normpath(file), int(line_text)

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
