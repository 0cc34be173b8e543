"""The emulator side of the pipe transport: one process owning the Session and the recorder.

``Server(fd)`` serves one client (``acl_lab.transport.client.Pipe``) over a connected socket.
A reader thread decodes frames (``codec``: plain data only, never pickle) and hands each
message to the *host thread* paired with the client thread that sent it: contexts are bound
to threads, so every learner thread gets its own thread here, named like it, and the trace
shows the learner's threads. A host thread runs the call through the in-process transport's
bound call (the same code ``import acl`` runs in a notebook) and replies.

Messages (lists; ``key`` names a client thread, positive when the client made it up,
negative when this side started the thread, e.g. ``acl.util.start_thread``):

- client -> server ``["call", key, thread_name, api_name, args, file, line, sync, drop]``:
  ``sync`` lists ``[addr, nbytes, data or None, writable]`` host ranges of the client to
  shadow (and fill) at the same address before the call; ``drop`` the addresses of array
  shadows the client no longer holds.
- client -> server ``["done", key, ok, value]``: a callback this side asked for returned
  (``ok``) or raised (``value`` is then its text).
- client -> server ``["begin", key, index, thread_name]`` / ``["end", key, index,
  thread_name]``: grading's exercise boundaries (a fresh Session per exercise; at the end
  its trace is written here).
- client -> server ``["host", key, op, args, file, line, thread_name]``: a host operation of
  the program's Python primitives (``runtime.pysync.handle``: the host schedule's turns,
  waits, rows and edges); thread arguments and tokens are keys.
- server -> client ``["ret", key, value, landed, pins, error, multi]``: the call's shaped
  result, the host bytes that landed since the last reply (``[addr, data]``: copies whose
  destination is the client's memory land at the virtual time the copy ends, so the reply to
  the synchronize that completes an async copy carries its bytes), new pinned blocks to
  mirror (``[addr, nbytes]``), ``[exception type, message]`` (``["DeadlockError", fields]``
  for a deadlock: every field of the error, ``DeadlockError.to_wire``) or None, and whether
  several threads take part in the host schedule now (the client skips reporting what a
  lone thread's primitives do).
- server -> client ``["run", key, ref, args]``: run the client's callable ``ref``.
- server -> client ``["bad", message]``: a frame that could not be understood.

The learner's process cannot reach this one: a frame is only data, the only memory a call
may touch outside the emulator's own allocations is the shadow pages (the runtime's view of
"mapped host memory" is replaced by them, so a made-up address is unmapped here, never the
server's own heap), and the trace is written by this process into a folder the sandbox
cannot see.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import sys
import threading
import traceback
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

import numpy as np

from ..acl import _boundary
from ..runtime import hostsched, pysync
from ..runtime import memory as _memory
from ..runtime.errors import AclError, DeadlockError
from ..runtime.objects import HostThread
from ..runtime.session import Session, set_current_session
from . import codec, hostmem
from .client import FD_ENV, HOST_PREPROCESS, HOST_WORK, THREAD_IDS
from .codec import CodecError, Ref

#: Exception types a reply may name (the client raises the same type).
EXCEPTIONS = {"TypeError": TypeError, "ValueError": ValueError, "RuntimeError": RuntimeError,
              "NotImplementedError": NotImplementedError, "DeadlockError": DeadlockError,
              "KeyboardInterrupt": KeyboardInterrupt, "MemoryError": MemoryError,
              "IndexError": IndexError, "KeyError": KeyError, "OverflowError": OverflowError}
#: Where each kind of client message carries the name of the thread that sent it.
_NAME_FIELD = {"call": 2, "host": 6, "begin": 3, "end": 3}
#: Calls whose ``O`` argument is a host array the client describes (``host_array``).
ARRAY_CALLS = ("acl.util.numpy_to_ptr", "acl.util.numpy_contiguous_to_ptr",
               "acl.util.bytes_to_ptr")


class _Exit(BaseException):
    """The connection is gone: a host thread waiting for the client stops."""


class _KeyNames(pysync.Resolver):
    """Threads named by the client's keys: each key's host thread here."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def python(self, ref: Any) -> threading.Thread | None:
        """The host thread of key ``ref``."""
        return self.server._threads.get(ref) if type(ref) is int else None

    def thread(self, ref: Any) -> HostThread | None:
        """The HostThread of key ``ref`` in the current session."""
        s = self.server.session
        t = self.python(ref)
        return s.threads.get(t) if s is not None and t is not None else None

    def token(self, th: HostThread) -> Any:
        """The key of ``th``'s host thread."""
        for key, t in list(self.server._threads.items()):
            if t is th.pythread:
                return key
        return None


class Proxy:
    """A callable of the client: calling it runs it there, in the paired thread."""

    def __init__(self, server: Server, ref: int) -> None:
        self._server = server
        self.ref = ref

    def __call__(self, *args: Any) -> Any:
        """Run the client's callable with ``args`` and return what it returned."""
        return self._server.run_remote(self.ref, args)


class Server:
    """Serves one pipe client; see the module docstring.

    Args:
        fd: the connected socket's file descriptor (owned from now on).
        make_session: builds the Session for exercise ``index`` (grading) or for the whole
            connection (``index`` -1, the default when no ``begin`` comes).
        on_end: called with ``(index, session)`` once that session is finished (the trace is
            ``session.recorder``'s); grading writes its files there.
    """

    def __init__(self, fd: int, make_session: Callable[[int], Session] | None = None,
                 on_end: Callable[[int, Session], None] | None = None) -> None:
        self.sock = socket.socket(fileno=fd)
        self._wlock = threading.Lock()
        self._make = make_session or (lambda index: Session())
        self._on_end = on_end
        self._mail: dict[int, queue.SimpleQueue[Any]] = {}
        self._mail_lock = threading.Lock()
        self._tls = threading.local()
        self._next_key = -1
        self._threads: dict[int, threading.Thread] = {}
        self.pages = hostmem.Pages()
        self._arrays: dict[int, Any] = {}  # shadow arrays the client still holds
        self._landed: list[list[Any]] = []
        self._pins: list[list[int]] = []
        self.session: Session | None = None
        self.index = -2  # no session yet
        #: the highest exercise index begun: a part's session, once ended, never reopens (a
        #: later part's code could otherwise begin it again and rewrite its trace)
        self._begun = -1
        self._names = _KeyNames(self)
        hostsched.set_control(True)  # the program's threads take turns here
        self._session_lock = threading.Lock()
        self.errors: list[str] = []
        here = _boundary.InProcess()
        self.bound = {name: here.bind(entry["spec"])
                      for name, entry in _boundary.registry().items()}
        spec = _boundary.registry()["acl.util.bytes_to_ptr"]["spec"]
        self.bound[spec.name] = here.bind(spec.with_impl(_shadow_bytes_to_ptr))

    # ------------------------------------------------------------------ sessions
    def _open(self, index: int) -> Session:
        with self._session_lock:
            if self.session is not None and self.index == index:
                return self.session
            self._close_current()
            s = self._make(index)
            s.own_fds = False  # the program's fds are its process's, not this one's
            s.hooks.subscribe(self)
            self.session, self.index = s, index
            set_current_session(s)
            return s

    def _close_current(self) -> None:
        s, index = self.session, self.index
        if s is None:
            return
        self.session = None
        try:
            if s.lock.acquire(timeout=10.0):
                try:
                    s.finish()
                except Exception:
                    pass
                finally:
                    s.lock.release()
            s.close()
        finally:
            if self._on_end is not None:
                self._on_end(index, s)

    def current(self) -> Session:
        """The session calls go to (the connection's own one when no ``begin`` came)."""
        s = self.session
        return s if s is not None else self._open(-1)

    # ------------------------------------------------------------------ hooks
    def on_landed(self, t: Any, region: Any, offset: int, data: bytes) -> None:
        """A copy's bytes landed: those in host memory go back with the next reply."""
        if region.kind in (_memory.HOST_PINNED, _memory.HOST_PAGEABLE):
            self._landed.append([int(region.addr) + int(offset), bytes(data)])

    def on_alloc(self, region: Any, call_id: int) -> None:
        """A pinned block was allocated: the client mirrors it at the same address."""
        # every block, also at an address handed out before: the mirror must take the new
        # block's size (a bigger one would leave the tail unsynced; a smaller one would make
        # the client sync the old extent, which the server refuses as a whole)
        if region.kind == _memory.HOST_PINNED:
            self._pins.append([int(region.addr), int(region.size)])

    # ------------------------------------------------------------------ wire
    def send(self, msg: Any) -> None:
        """Write one frame (values this side cannot encode become their repr)."""
        data = codec.frame(msg, self._wire_other)
        with self._wlock:
            self.sock.sendall(data)

    @staticmethod
    def _wire_other(v: Any) -> Any:
        if isinstance(v, Proxy):
            return Ref(v.ref)
        if isinstance(v, np.ndarray) and not v.dtype.hasobject:
            return v.tobytes()
        raise CodecError(f"a value of type {type(v).__name__} cannot cross the pipe")

    def serve(self) -> None:
        """Read frames until the client hangs up, then finish the open session."""
        reader = codec.FrameReader(self.sock.fileno())
        try:
            while True:
                try:
                    body = reader.read()
                except (CodecError, OSError) as e:
                    self._bad(f"unreadable stream: {e}")
                    break
                if body is None:
                    break
                try:
                    msg = codec.decode(body)
                    self._dispatch(msg)
                except CodecError as e:
                    self._bad(f"malformed frame: {e}")
                except (ValueError, TypeError, IndexError) as e:
                    self._bad(f"malformed message: {e}")
        finally:
            with self._mail_lock:
                boxes = list(self._mail.values())
            for box in boxes:
                box.put(None)
            with self._session_lock:
                self._close_current()
            self.close()

    def close(self) -> None:
        """Close the socket (the connection's end this side owns)."""
        with self._wlock:  # a host thread may be sending a last reply
            self.sock.close()

    def _bad(self, message: str) -> None:
        self.errors.append(message)
        with contextlib.suppress(OSError, CodecError):
            self.send(["bad", message[:2000]])

    def _dispatch(self, msg: Any) -> None:
        if not isinstance(msg, list) or len(msg) < 2 or type(msg[0]) is not str \
                or type(msg[1]) is not int:
            raise ValueError("a message is a list [kind, thread key, ...]")
        kind, key = msg[0], msg[1]
        if kind not in ("call", "done", "begin", "end", "host"):
            raise ValueError(f"unknown message kind {kind!r}")
        if kind == "done" and key not in self._mail:
            raise ValueError(f"no thread {key} is waiting for a callback")
        # the partner thread takes the name of the client's thread (every kind of message
        # that can come first carries it), so the trace names the program's own threads
        at = _NAME_FIELD.get(kind)
        name = msg[at] if at is not None and len(msg) > at else ""
        self._box(key, name).put(msg)

    def _box(self, key: int, name: Any) -> queue.SimpleQueue[Any]:
        with self._mail_lock:
            box = self._mail.get(key)
            if box is None:
                if key < 0:
                    raise ValueError(f"thread key {key} was not started here")
                box = queue.SimpleQueue()
                self._mail[key] = box
                tname = name if type(name) is str and name else f"client-{key}"
                t = threading.Thread(target=self._host, args=(key, box), daemon=True,
                                     name=tname[:100])
                self._threads[key] = t
                t.start()
            return box

    # ------------------------------------------------------------------ host threads
    def _host(self, key: int, box: queue.SimpleQueue[Any]) -> None:
        self._tls.key = key
        self._tls.box = box
        while True:
            msg = box.get()
            if msg is None:
                return
            try:
                self._handle(key, msg)
            except _Exit:
                return
            except BaseException:  # a bug here must not end the server
                self.errors.append(traceback.format_exc())

    def _handle(self, key: int, msg: list[Any]) -> None:
        kind = msg[0]
        if kind in ("begin", "end"):
            index = msg[2] if len(msg) > 2 else None
            if type(index) is not int or index < 0:
                self._reply(key, None, ("ValueError", "exercise index must be an int >= 0"))
                return
            if kind == "begin":
                if index <= self._begun:
                    self._reply(key, None, ("ValueError", "exercises begin in order, each "
                                            "once"))
                    return
                self._begun = index
                try:
                    self._open(index)
                except ValueError as e:  # an index the job does not have
                    self._reply(key, None, ("ValueError", str(e)))
                    return
            elif index == self.index:
                with self._session_lock:
                    self._close_current()
            self._reply(key, None, None)
            return
        if kind == "done":
            self._reply(key, None, ("RuntimeError", "no callback is running in this thread"))
            return
        if kind == "host":
            self._host_op(key, msg)
            return
        self._call(key, msg)

    def _host_op(self, key: int, msg: list[Any]) -> None:
        """A host operation of the client's Python primitives (``pysync.handle``)."""
        if len(msg) != 7 or type(msg[2]) is not str or type(msg[3]) is not list \
                or type(msg[4]) is not str or type(msg[5]) is not int:
            self._reply(key, None, ("RuntimeError", "malformed host operation"))
            return
        _, _, op, args, file, line, _ = msg
        if op == "start" and len(args) == 2 and type(args[0]) is int and args[0] > 0 \
                and type(args[1]) is str:
            self._box(args[0], args[1])  # the started thread's partner here, named like it
        s = self.current()
        try:
            with s.lock:
                th = s.thread()
                value = pysync.handle(s, th, op, args, file, line, self._names)
                self._reply(key, list(value) if type(value) is tuple else value, None)
        except DeadlockError as e:
            self._reply(key, None, ("DeadlockError", e.to_wire()))
        except (pysync.SyncError, ValueError, TypeError) as e:
            self._reply(key, None, ("RuntimeError", f"host operation {op}: {e}"))

    def _reply(self, key: int, value: Any, error: tuple[Any, ...] | None) -> None:
        landed, self._landed = self._landed, []
        pins, self._pins = self._pins, []
        s = self.session
        multi = s is not None and s.sched.multi
        try:
            self.send(["ret", key, value, landed, pins, list(error) if error else None, multi])
        except CodecError as e:
            self.send(["ret", key, None, landed, pins, ["RuntimeError", str(e)], multi])

    def _call(self, key: int, msg: list[Any]) -> None:
        if len(msg) != 9:
            self._reply(key, None, ("RuntimeError", "a call message has 9 fields"))
            return
        _, _, _, name, args, file, line, sync, drop = msg
        host = name in (HOST_WORK, HOST_PREPROCESS)
        bound = self.bound.get(name) if type(name) is str else None
        if (bound is None and not host) or type(args) is not list or type(file) is not str \
                or type(line) is not int or type(sync) is not list or type(drop) is not list:
            self._reply(key, None, ("RuntimeError", f"malformed call of {str(name)[:80]!r}"))
            return
        s = self.current()
        try:
            with s.lock:
                self._sync(sync, drop)
        except ValueError as e:
            self._reply(key, None, ("RuntimeError", f"{name}: {e}"))
            return
        if host or bound is None:
            self._host_call(key, name, args, file, line)
            return
        try:
            call_args = tuple(self._arg(name, i, a) for i, a in enumerate(args))
        except ValueError as e:
            self._reply(key, None, ("RuntimeError", f"{name}: {e}"))
            return
        # The reply leaves while this thread still holds the session lock (waits inside the
        # call release it): a thread the call woke replies after it, so the caller hears
        # first, as in one process, where it runs on while the woken thread waits for it.
        with s.lock:
            try:
                value = bound(call_args, file, line)
            except _Exit:
                raise
            except DeadlockError as e:
                self._reply(key, None, ("DeadlockError", e.to_wire()))
                return
            except BaseException as e:
                etype = type(e).__name__ if type(e).__name__ in EXCEPTIONS else "RuntimeError"
                self._reply(key, None, (etype, str(e)))
                return
            if name == "acl.rt.memset" and value == 0:
                self._memset_landed(call_args)
            self._reply(key, self._result(name, value), None)

    def _host_call(self, key: int, name: str, args: list[Any], file: str, line: int) -> None:
        """The host-work pseudo-calls: declared work (``host_work``) as the in-process
        ``hostwork.host_work`` records it, and ``host_preprocess`` computed here from the
        picture itself (its cost from its own pixels, as ``hostwork.preprocess_image``)."""
        s = self.current()
        try:
            if name == HOST_WORK:
                if len(args) != 2 or type(args[0]) is not int or args[0] < 0 \
                        or type(args[1]) is not str:
                    raise ValueError("host_work takes (ns >= 0, what)")
                ns, record, value = args[0], (args[0], args[1]), None
            else:
                ns, record, value = _preprocess(args)
        except ValueError as e:
            self._reply(key, None, ("ValueError", str(e)))
            return
        with s.lock:
            th, cid, _ = s.api_enter(name, ns, record, "", file, line)
            s.api_exit(th, cid, 0)
        self._reply(key, value, None)

    def _memset_landed(self, args: tuple[Any, ...]) -> None:
        """A synchronous memset of host memory sends its bytes back like a landed copy (the
        runtime publishes ``on_landed`` for copies only)."""
        addr, count = args[0], args[3]
        if _memory.MemorySystem.is_device_addr(addr) or count <= 0:
            return
        if self._owned(addr, count) or self.pages.covers(addr, count):
            self._landed.append([addr, hostmem.read(addr, count)])

    def _sync(self, sync: list[Any], drop: list[Any]) -> None:
        for a in drop:
            if type(a) is int:
                self._arrays.pop(a, None)
        for entry in sync:
            if not (type(entry) is list and len(entry) == 4 and type(entry[0]) is int
                    and type(entry[1]) is int and type(entry[3]) is bool):
                raise ValueError("a sync entry is [addr, nbytes, data or None, writable]")
            addr, n, data, writable = entry
            if addr <= 0 or not 0 <= n <= codec.MAX_FRAME:
                raise ValueError("sync range out of bounds")
            if data is not None and (type(data) is not bytes or len(data) != n):
                raise ValueError("sync data does not match its range")
            if _memory.MemorySystem.is_device_addr(addr) \
                    or _memory.MemorySystem.is_device_addr(addr + max(n, 1) - 1):
                raise ValueError("a host range in the device address window")
            if self._owned(addr, n):
                if data is not None:  # an emulator's pinned block: the client's writes
                    hostmem.write(addr, data)
                continue
            if not self.pages.ensure(addr, n, writable):
                continue  # taken here: the emulator will find it unmapped (107000)
            if data is not None:
                hostmem.write(addr, data)

    def _owned(self, addr: int, n: int) -> bool:
        """Whether the range lies in a live pinned block of the emulator."""
        s = self.session
        if s is None:
            return False
        # not just the region the index finds first: a pageable buffer registered inside a
        # pinned block (a view of it) starts later and would hide the block
        idx = s.memory.host_index
        last = bisect_right(idx.starts, addr) - 1
        for i in range(last, max(-1, last - 64), -1):
            r = idx.regions[i]
            if r.kind == _memory.HOST_PINNED and addr + n <= r.addr + r.size:
                return True
            if r.kind == _memory.HOST_PINNED:
                return False  # pinned blocks do not overlap: no other one holds addr
        return False

    def _arg(self, name: str, i: int, a: Any) -> Any:
        if isinstance(a, Ref):
            return Proxy(self, a.id)
        if i in THREAD_IDS.get(name, ()) and type(a) is dict:  # the client sent its key
            key, tname = a.get("thread"), a.get("name")
            if type(key) is not int or key <= 0:
                raise ValueError("bad thread argument")
            self._box(key, tname)  # the paired host thread, started now if need be
            ident = self._threads[key].ident
            return ident if ident is not None else 0
        if name in ARRAY_CALLS and i == 0 and type(a) is dict:
            return self._shadow_array(a)
        return a

    def _shadow_array(self, d: dict[str, Any]) -> np.ndarray:
        """The client's array as an array over its shadow at the same address."""
        addr, n, dtype, shape, strides, writable = (d.get(k) for k in (
            "addr", "nbytes", "dtype", "shape", "strides", "writable"))
        if type(addr) is not int or type(n) is not int or type(dtype) is not str \
                or type(shape) is not list or type(strides) is not list \
                or type(writable) is not bool:
            raise ValueError("bad host array description")
        lo = d.get("lo")
        if type(lo) is not int or (n and not self.pages.covers(lo, n)):
            raise ValueError("the array's memory was not shadowed")
        dt = np.dtype(dtype)
        if dt.hasobject:
            raise ValueError("object arrays cannot cross the pipe")
        base = np.frombuffer(hostmem.view(lo, n), np.uint8)
        arr = np.ndarray(tuple(int(x) for x in shape), dt, buffer=base, offset=addr - lo,
                         strides=tuple(int(x) for x in strides))
        arr.flags.writeable = writable
        self._arrays[addr] = arr
        return arr

    def _result(self, name: str, value: Any) -> Any:
        if name == "acl.util.ptr_to_numpy" and isinstance(value, np.ndarray):
            return {"view": bool(value.flags.writeable), "data": value.tobytes()}
        if name == "acl.util.numpy_contiguous_to_ptr" and isinstance(value, tuple):
            return value[0]
        return value

    # ------------------------------------------------------------------ callbacks
    def run_remote(self, ref: int, args: tuple[Any, ...]) -> Any:
        """Ask the client to run its callable ``ref`` in this thread's partner; serve the
        calls it makes meanwhile; return its result or raise RuntimeError with its error."""
        key = getattr(self._tls, "key", None)
        box = getattr(self._tls, "box", None)
        if key is None or box is None:
            with self._mail_lock:
                key = self._next_key
                self._next_key -= 1
                box = queue.SimpleQueue()
                self._mail[key] = box
                self._threads[key] = threading.current_thread()
            self._tls.key, self._tls.box = key, box
        self.send(["run", key, ref, list(args)])
        while True:
            msg = box.get()
            if msg is None:
                raise _Exit
            if msg[0] == "done":
                if len(msg) == 4 and msg[2] is True:
                    return msg[3]
                raise RuntimeError(f"callback raised {msg[3] if len(msg) > 3 else ''!s}")
            try:
                self._handle(key, msg)
            except _Exit:
                raise
            except BaseException:
                self.errors.append(traceback.format_exc())


def _preprocess(args: list[Any]) -> tuple[int, tuple[Any, ...], bytes]:
    """``(ns, recorded args, input bytes)`` of ``preprocess_image(jpeg, size, mean, std)``
    with ``fresh`` as given: the decoding and cost of ``acl_lab.hostwork`` (Pillow, bilinear
    resize, per-channel normalisation, CHW), computed in this process."""
    import io
    import zlib

    from PIL import Image

    from ..hostwork import preprocess_ns_of

    if len(args) != 5 or type(args[0]) is not bytes or type(args[1]) is not int \
            or not 0 < args[1] <= 4096 or type(args[2]) is not list \
            or type(args[3]) is not list or type(args[4]) is not bool:
        raise ValueError("preprocess_image takes (jpeg bytes, size, mean, std, fresh)")
    jpeg, size, mean, std, fresh = args
    if not all(type(x) is float for x in mean + std) or len(mean) not in (1, 3) \
            or len(std) not in (1, 3):
        raise ValueError("preprocess_image: mean and std are 1 or 3 numbers")
    try:
        with Image.open(io.BytesIO(jpeg)) as im:
            width, height = im.size
            small = np.asarray(im.convert("RGB").resize(
                (size, size), Image.Resampling.BILINEAR), dtype=np.uint8)
    except (OSError, Image.DecompressionBombError) as e:
        raise ValueError(f"preprocess_image: not a decodable picture: {e}") from None
    x = (small.astype(np.float32) - np.asarray(mean, dtype=np.float32)) \
        / np.asarray(std, dtype=np.float32)
    data = np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32).tobytes()
    ns = preprocess_ns_of(width, height, size, fresh)
    return ns, (width, height, size, zlib.crc32(jpeg), ns, int(fresh)), data


def _shadow_bytes_to_ptr(s: Session, th: HostThread, cid: int, data: Any) -> int:
    """bytes_to_ptr of the client's bytes, given here as the array over their shadow:
    registered like ``acl.util.bytes_to_ptr`` registers a bytes object (acl/util.py)."""
    if not isinstance(data, np.ndarray):
        raise ValueError("bytes_to_ptr needs an byte as argument")
    addr = int(data.ctypes.data)
    r = s.memory.register_pageable(data, addr, int(data.nbytes), cid)
    if r.size and r.alloc_call == cid:
        s.hooks.on_alloc(r, cid)
    return addr


def install_shadow_maps(pages: hostmem.Pages) -> None:
    """Make the shadow pages the only raw host memory the emulator in this process sees.

    ``acl_lab.runtime.memory`` reads ``/proc/self/maps`` through ``host_mappings`` before it
    touches memory it did not hand out; in the server that would be the server's own heap.
    """
    _memory.host_mappings = pages.maps_lines
    _memory.page_probe = False  # the kernel would see the server's own heap as mapped


def serve_fd(fd: int, make_session: Callable[[int], Session] | None = None,
             on_end: Callable[[int, Session], None] | None = None) -> Server:
    """Serve the client on ``fd`` until it hangs up (in this thread); returns the server."""
    server = Server(fd, make_session, on_end)
    install_shadow_maps(server.pages)
    server.serve()
    return server


def _errors_to_stderr(server: Server) -> None:
    for e in server.errors[:20]:
        print(f"acl-lab transport server: {e}", file=sys.stderr)


__all__ = ["AclError", "Proxy", "Server", "install_shadow_maps", "serve_fd"]


class ServerProcess:
    """A server process for one client, started beside it (``python -m
    acl_lab.transport.server``), with the client's end of the socket ready to hand over.

    Args:
        out: the folder the server writes traces to (grading: outside the sandbox).
        exercises: the job's exercise ids (``begin i`` opens exercise ``i``).
        memory_mb: the address-space limit the server sets on itself.
        env: the environment (default: this process's).
        wrap: turns the server's command line into the one to run (grading: its sandbox).
        cwd: the server's working directory.

    ``client_fd`` is the client's end (inheritable: pass it with ``pass_fds``); call
    ``release_client_fd()`` once the client process has it.
    """

    def __init__(self, out: str | os.PathLike[str], exercises: list[str] | tuple[str, ...] = (),
                 memory_mb: int | None = None, env: dict[str, str] | None = None,
                 wrap: Callable[[list[str]], list[str]] | None = None,
                 cwd: str | None = None) -> None:
        import subprocess

        mine, theirs = socket.socketpair()
        child_env = dict(os.environ if env is None else env)
        child_env[FD_ENV] = str(theirs.fileno())
        argv = [sys.executable, "-m", "acl_lab.transport.server"]
        try:
            self.proc = subprocess.Popen(
                wrap(argv) if wrap is not None else argv, stdin=subprocess.PIPE, cwd=cwd,
                pass_fds=(theirs.fileno(),), env=child_env, start_new_session=True)
        except BaseException:
            mine.close()  # no server: neither end is anyone's
            raise
        finally:
            theirs.close()
        job = {"out": os.fspath(out), "exercises": list(exercises), "memory_mb": memory_mb}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job).encode("utf-8"))
        self.proc.stdin.close()
        self.client_fd = mine.detach()
        os.set_inheritable(self.client_fd, True)

    def release_client_fd(self) -> None:
        """Close this process's copy of the client's end (the client holds its own)."""
        if self.client_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.client_fd)
            self.client_fd = -1

    def wait(self, timeout: float | None = None) -> int | None:
        """The server's exit code once it ended (it ends when the client hangs up); killed
        and None when it is still running after ``timeout`` seconds."""
        import subprocess

        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        """End the server process now."""
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(10)


def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when the process that started it ends."""
    with contextlib.suppress(Exception):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def main() -> int:
    """``python -m acl_lab.transport.server``: serve the socket ``ACL_LAB_PIPE_FD``.

    With a JSON job on stdin (grading: ``{"out": folder, "exercises": [[id, schedule], ...],
    "memory_mb": n}``) each ``begin i`` opens run ``i``'s Session (its exercise's profile and
    device count, its host schedule's seed, the grader's watchdog, a ``LandedLog``) and its
    end writes ``out/ex<i>/trace.acltrace`` and the landed bytes there. Without a job (empty
    stdin) one plain Session serves the whole connection. Calls made before the first
    ``begin`` go to a plain session whose trace is ``out/trace.acltrace``.
    """
    _die_with_parent()
    text = sys.stdin.read() if not sys.stdin.isatty() else ""
    fd = int(os.environ[FD_ENV])
    if not text.strip():
        _errors_to_stderr(serve_fd(fd))
        return 0
    from pathlib import Path

    from ..grading import worker as _worker
    from ..grading.provenance import LandedLog
    from ..grading.rubric import get_exercise
    from ..grading.runner import WATCHDOG_S

    job = json.loads(text)
    out = Path(job["out"])
    _worker._limit_resources(job.get("memory_mb"))
    _worker.load_extra_rubrics()
    # each run: an exercise id, or [id, host schedule seed] (the grader's, never the client's)
    runs = [(e, 0) if isinstance(e, str) else (str(e[0]), int(e[1])) for e in job["exercises"]]
    exercises = [get_exercise(e) for e, _ in runs]
    schedules = [k for _, k in runs]
    logs: dict[int, LandedLog] = {}

    def make(index: int) -> Session:
        if index == -1:  # calls before any begin: one plain session
            s = Session(watchdog=WATCHDOG_S)
        elif 0 <= index < len(exercises):
            ex = exercises[index]
            s = Session(profile=ex.profile, device_count=ex.device_count, watchdog=WATCHDOG_S,
                        seed=schedules[index])
        else:
            raise ValueError(f"no exercise {index} in this job")
        logs[index] = LandedLog()
        s.hooks.subscribe(logs[index])
        return s

    def end(index: int, s: Session) -> None:
        folder = out / f"ex{index}" if index >= 0 else out
        folder.mkdir(parents=True, exist_ok=True)
        s.trace().save(folder / _worker.TRACE_FILE)
        _worker.save_landed(logs[index].landed, folder)

    _errors_to_stderr(serve_fd(fd, make, end))
    return 0


if __name__ == "__main__":
    sys.exit(main())
