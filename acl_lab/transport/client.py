"""The learner's side of the pipe transport: ``Pipe``, a ``Transport`` that forwards calls.

``acl_lab.acl._boundary.set_transport(Pipe(fd))`` sends every pyACL call, after the
decorator parsed it, to the emulator process at the other end of ``fd`` (``server``), and
waits for its reply in the calling thread. Nothing is recorded here: the trace lives in the
server, so rewriting anything in this process (the recorder, ``json.dumps``, the Session)
changes only this process.

Host memory crosses with the calls (see ``hostmem``):

- an array or bytes given to ``acl.util.numpy_to_ptr`` / ``bytes_to_ptr`` /
  ``numpy_contiguous_to_ptr`` is *mirrored*: the server keeps a shadow at the same address,
  and before every call the mirrors whose bytes changed are sent;
- a raw host pointer an API reads (``arr.ctypes.data`` as a copy's source, see
  ``READS``) has its bytes attached to that call; one it writes gets a shadow page there;
- the emulator's pinned blocks (``malloc_host``) are mapped here at the same address, and
  written back like mirrors;
- the bytes a copy delivered into host memory come back in the reply of the call during
  which the copy ended in virtual time (for an async copy: the synchronize, query or wait
  that completes it) and are written with ``ctypes.memmove`` only after the range is checked
  writable in this process (``runtime.memory.host_range_problem``, the check the in-process
  emulator makes).

Callables (callbacks, thread functions) stay here: they cross as ``Ref`` ids, and the server
asks this side to run one (``["run", ...]``) in the thread paired with the server's thread,
serving the calls it makes on the way.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import socket
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..acl._boundary import ApiSpec, Transport
from ..constants import ACL_ERROR_RT_MEMORY_ALLOCATION
from ..runtime import memory as _memory
from ..runtime.errors import DeadlockError
from . import codec, hostmem
from .codec import Ref

#: Environment variable naming the inherited socket's file descriptor (grading sets it).
FD_ENV = "ACL_LAB_PIPE_FD"
#: Host ranges each API reads: name -> ((pointer arg, size arg), ...).
READS: dict[str, tuple[tuple[int, int], ...]] = {
    "acl.rt.memcpy": ((2, 3),), "acl.rt.memcpy_async": ((2, 3),),
    "acl.util.ptr_to_bytes": ((0, 1),),
}
#: Host ranges each API writes: name -> ((pointer arg, size arg), ...).
WRITES: dict[str, tuple[tuple[int, int], ...]] = {
    "acl.rt.memcpy": ((0, 3),), "acl.rt.memcpy_async": ((0, 3),),
    "acl.rt.memset": ((0, 3),), "acl.rt.memset_async": ((0, 3),),
}
#: Arguments handed back to the program's own callable (user data): they stay here and cross
#: as a ``Ref``, so the callable gets the very object (real ACL passes the pointer through).
BY_REFERENCE: dict[str, tuple[int, ...]] = {
    "acl.rt.launch_callback": (1,), "acl.util.start_thread": (1,),
}
#: Arguments that are thread ids (``threading.get_ident()`` of a thread of this process): they
#: cross as the thread's key, and the server passes its paired host thread's id on.
THREAD_IDS: dict[str, tuple[int, ...]] = {
    "acl.rt.subscribe_report": (0,), "acl.rt.unsubscribe_report": (0,),
}
#: The host-work pseudo-calls (``acl_lab.hostwork``), carried like API calls.
HOST_WORK, HOST_PREPROCESS = "acl_lab.host_work", "acl_lab.host_preprocess"
#: Mirrors of the program's arrays kept beyond those it still references (as the runtime
#: keeps orphans, ``MemorySystem.ORPHANS_KEPT``).
ORPHANS_KEPT = 64
#: Seconds ``Pipe.close`` waits for the reader thread to see the end of the stream.
CLOSE_GRACE_S = 5.0


class PipeError(RuntimeError):
    """The emulator process is gone or answered something this side cannot read."""


class _Mirror:
    __slots__ = ("addr", "last", "nbytes", "obj", "pinned", "writable")

    def __init__(self, addr: int, nbytes: int, obj: Any, writable: bool, pinned: bool) -> None:
        self.addr, self.nbytes, self.obj = addr, nbytes, obj
        self.writable, self.pinned = writable, pinned
        self.last: bytes | None = None


class Pipe(Transport):
    """Forward every pyACL call to the emulator server on the connected socket ``fd``.

    Args:
        fd: a connected ``AF_UNIX`` stream socket (the other end is served by
            ``server.Server``); ``None`` reads it from ``ACL_LAB_PIPE_FD``.
    """

    def __init__(self, fd: int | None = None) -> None:
        if fd is None:
            fd = int(os.environ[FD_ENV])
        self.sock = socket.socket(fileno=fd)
        self._wlock = threading.Lock()
        self._mlock = threading.RLock()  # mirrors and memory written from replies
        self._tls = threading.local()
        self._keys = itertools.count(1)
        self._boxes: dict[int, _Box] = {}
        self._boxes_lock = threading.Lock()
        self._thread_keys: weakref.WeakKeyDictionary[threading.Thread, int] = \
            weakref.WeakKeyDictionary()
        self._by_ident: dict[int, tuple[int, str]] = {}
        self._refs: dict[int, Any] = {}
        self._ref_ids = itertools.count(1)
        self._mirrors: dict[int, _Mirror] = {}
        self._drops: list[int] = []
        self._unmirrored: set[int] = set()
        self.pages = hostmem.Pages()
        self.closed = False
        self.bad: list[str] = []
        self._reader = threading.Thread(target=self._read, name="acl-lab-pipe", daemon=True)
        self._reader.start()
        #: keys of this process's threads that take part in the host schedule (``host``),
        #: for the exercise under way; and whether several do (from the server's replies)
        self._participants: set[int] = set()
        self._multi = False
        #: an exercise began (grading): only its threads take part; before, every thread
        #: that talks to the server does (it schedules whoever calls)
        self._began = False

    # ------------------------------------------------------------------ transport
    def bind(self, spec: ApiSpec) -> Callable[[tuple[Any, ...], str, int], Any]:
        """The forwarding call of ``spec``."""
        name = spec.name
        reads, writes = READS.get(name, ()), WRITES.get(name, ())
        local = _LOCAL.get(name)
        by_ref = BY_REFERENCE.get(name, ())
        tids = THREAD_IDS.get(name, ())

        def call(args: tuple[Any, ...], file: str, line: int) -> Any:
            if local is not None:
                return local(self, spec, args, file, line)
            if by_ref:
                args = tuple(self._ref(a) if i in by_ref and a is not None else a
                             for i, a in enumerate(args))
            if tids:
                args = tuple(self._thread_arg(a) if i in tids else a
                             for i, a in enumerate(args))
            value = self.request(name, args, file, line, reads, writes)
            if name == "acl.rt.malloc_host" and value[1] == 0 and value[0] in self._unmirrored:
                # the emulator's block lies where this process already has memory, so it
                # cannot be mirrored here: give it back and fail the allocation
                self._unmirrored.discard(value[0])
                self.request("acl.rt.free_host", (value[0],), file, line)
                return 0, ACL_ERROR_RT_MEMORY_ALLOCATION
            return value

        return call

    def request(self, name: str, args: tuple[Any, ...] | list[Any], file: str, line: int,
                reads: tuple[tuple[int, int], ...] = (),
                writes: tuple[tuple[int, int], ...] = ()) -> Any:
        """Send one call and wait for its reply (serving callbacks meanwhile)."""
        key, box = self._me()
        with self._mlock:
            sync = self._dirty()
            sync += self._raw_ranges(args, reads, True)
            sync += self._raw_ranges(args, writes, False)
            drop, self._drops = self._drops, []
        msg = ["call", key, threading.current_thread().name, name, list(args), file, line,
               sync, drop]
        self._send(msg)
        return self._wait(key, box)

    def host_work(self, ns: int, what: str, file: str, line: int) -> None:
        """``acl_lab.hostwork.host_work`` through the pipe (recorded by the server)."""
        self.request(HOST_WORK, [int(ns), str(what)], file, line)

    def preprocess(self, jpeg: bytes, size: int, mean: Any, std: Any, out: Any,
                   file: str, line: int) -> Any:
        """``acl_lab.hostwork.preprocess_image`` through the pipe: the server decodes the
        picture, charges its measured cost and sends the input back, written into ``out``
        (or a new array) here."""
        fresh = out is None
        if not fresh and tuple(np.shape(out)) != (1, 3, int(size), int(size)):
            raise ValueError(f"preprocess_image: out has shape {np.shape(out)}, expected "
                             f"(1, 3, {size}, {size})")
        mean_l = [float(x) for x in np.asarray(mean, dtype=np.float32).ravel()]
        std_l = [float(x) for x in np.asarray(std, dtype=np.float32).ravel()]
        data = self.request(HOST_PREPROCESS, [bytes(jpeg), int(size), mean_l, std_l, fresh],
                            file, line)
        x = np.frombuffer(data, np.float32).reshape(1, 3, int(size), int(size))
        if fresh:
            return x.copy()
        out[...] = x
        return out

    def begin(self, index: int) -> None:
        """Grading: exercise ``index`` starts (the server opens its fresh Session, whose
        host schedule this thread leads)."""
        key, box = self._me()
        self._send(["begin", key, int(index), threading.current_thread().name])
        self._wait(key, box)
        self._participants = {key}
        self._began = True

    def end(self, index: int) -> None:
        """Grading: exercise ``index`` is over (the server finishes and writes its trace)."""
        key, box = self._me()
        self._participants = set()
        self._multi = False
        self._send(["end", key, int(index), threading.current_thread().name])
        self._wait(key, box)

    # ------------------------------------------------------------------ host schedule
    def host_thread(self) -> Any | None:
        """The calling thread's key when it takes part in the server's host schedule: in an
        exercise (grading), the thread that began it, the threads it started through
        ``Thread.start`` and those the emulator started (``acl.util.start_thread``); before
        any, every thread that talks to the server."""
        if self.closed:
            return None
        if not self._began:
            return self._me()[0]
        key = getattr(self._tls, "key", None)
        if key is None:
            with self._boxes_lock:
                key = self._thread_keys.get(threading.current_thread())
        return key if key is not None and (key in self._participants or key < 0) else None

    def host_multi(self) -> bool:
        """Whether several threads take part (as the server's latest reply said)."""
        return self._multi

    def host(self, op: str, args: tuple[Any, ...], file: str, line: int) -> Any:
        """Carry out host operation ``op`` in the server (``runtime.pysync.handle``); a
        thread argument (``start``, ``join``) crosses as its key."""
        wire = list(args)
        if op in ("start", "join") and wire and isinstance(wire[0], threading.Thread):
            wire[0] = self.key_of(wire[0])
        if self.closed:
            from ..runtime.pysync import late
            return late(op)
        key, box = self._me()
        self._send(["host", key, op, wire, file, line, threading.current_thread().name])
        value = self._wait(key, box)
        if op == "start" and type(value) is int:
            self._participants.add(value)
        return tuple(value) if op in ("begin", "wait") and type(value) is list else value


    def close(self) -> None:
        """Hang up: the server finishes its session and exits; the reader thread reads the
        end of the stream and closes the socket (waited for here, up to ``CLOSE_GRACE_S``)."""
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        if threading.current_thread() is not self._reader:
            self._reader.join(CLOSE_GRACE_S)

    # ------------------------------------------------------------------ threads
    def _me(self) -> tuple[int, _Box]:
        key = getattr(self._tls, "key", None)
        if key is None:
            key = self.key_of(threading.current_thread())
            self._tls.key = key
            self._tls.box = self._box(key)
        return key, self._tls.box

    def key_of(self, t: threading.Thread) -> int:
        """The key naming thread ``t`` to the server (given on first use)."""
        with self._boxes_lock:
            key = self._thread_keys.get(t)
            if key is None:
                key = self._thread_keys[t] = next(self._keys)
            if t.ident is not None:
                self._by_ident[t.ident] = (key, t.name)
            return key

    def _thread_arg(self, tid: Any) -> Any:
        """A thread id argument: the key of the live thread of this process with that id
        (with its name), or the id itself (a thread the emulator started has the server's)."""
        if type(tid) is not int:
            return tid
        for t in threading.enumerate():
            if t.ident == tid:
                return {"thread": self.key_of(t), "name": t.name}
        known = self._by_ident.get(tid)  # a thread that has exited (unsubscribe after join)
        if known is not None:
            return {"thread": known[0], "name": known[1]}
        return tid

    def _box(self, key: int) -> _Box:
        with self._boxes_lock:
            box = self._boxes.get(key)
            if box is None:
                box = self._boxes[key] = _Box()
            return box

    def _send(self, msg: Any) -> None:
        data = codec.frame(msg, self._ref)
        if self.closed:
            raise PipeError("the emulator connection is closed")
        with self._wlock:
            try:
                self.sock.sendall(data)
            except OSError as e:
                self.closed = True
                raise PipeError(f"the emulator process is gone ({e})") from None

    def _ref(self, obj: Any) -> Ref:
        """A reference to an object that stays here (a callable, user data)."""
        rid = next(self._ref_ids)
        self._refs[rid] = obj
        return Ref(rid)

    def _resolve(self, v: Any) -> Any:
        if isinstance(v, Ref):
            return self._refs.get(v.id)
        if type(v) is list:
            return [self._resolve(x) for x in v]
        if type(v) is tuple:
            return tuple(self._resolve(x) for x in v)
        return v

    def _wait(self, key: int, box: _Box) -> Any:
        while True:
            msg = box.get()
            if msg is None:
                raise PipeError("the emulator process is gone")
            if msg[0] == "run":
                self._run(key, msg)
                continue
            return self._returned(msg)

    def _run(self, key: int, msg: list[Any]) -> None:
        fn = self._refs.get(msg[2]) if len(msg) == 4 and type(msg[2]) is int else None
        args = self._resolve(msg[3]) if len(msg) == 4 and type(msg[3]) is list else []
        try:
            if fn is None:
                raise RuntimeError("the emulator named a callable this side does not have")
            value = fn(*args)
            reply = ["done", key, True, value if _plain(value) else None]
        except Exception as e:
            reply = ["done", key, False, f"{type(e).__name__}: {e}"]
        self._send(reply)

    def _returned(self, msg: list[Any]) -> Any:
        if len(msg) != 7:
            raise PipeError("malformed reply from the emulator")
        _, _, value, landed, pins, error, multi = msg
        self._multi = multi is True
        self._apply(landed, pins)
        if error is not None:
            from .server import EXCEPTIONS

            if error[0] == "DeadlockError":  # whole: its wait-for edges, stacks and site
                raise DeadlockError.from_wire(error[1] if len(error) > 1 else None)
            etype = EXCEPTIONS.get(str(error[0]), RuntimeError)
            raise etype(str(error[1]))
        return self._resolve(value)

    def _read(self) -> None:
        reader = codec.FrameReader(self.sock.fileno())
        try:
            while True:
                body = reader.read()
                if body is None:
                    break
                msg = codec.decode(body)
                if not isinstance(msg, list) or len(msg) < 2:
                    continue
                if msg[0] == "bad":
                    self.bad.append(str(msg[1]))
                    continue
                key = msg[1]
                if type(key) is not int:
                    continue
                if msg[0] == "run" and key < 0 and key not in self._boxes:
                    threading.Thread(target=self._remote_thread, args=(key, msg),
                                     daemon=True, name=f"acl-thread-{-key}").start()
                    continue
                self._box(key).put(msg)
                # let the thread just answered run before the next frame wakes another
                # (the server sends replies in the order its calls finished; in one process
                # the caller runs on while a thread its call woke still waits for the GIL)
                time.sleep(0)
        except (OSError, codec.CodecError) as e:
            self.bad.append(str(e))
        finally:
            self.closed = True
            # only this thread reads the descriptor, so it closes it; senders hold _wlock
            with self._wlock:
                self.sock.close()
            with self._boxes_lock:
                boxes = list(self._boxes.values())
            for box in boxes:
                box.put(None)

    def _remote_thread(self, key: int, msg: list[Any]) -> None:
        """A thread the emulator started (``acl.util.start_thread``): run its function."""
        self._tls.key = key
        self._tls.box = self._box(key)
        self._run(key, msg)

    # ------------------------------------------------------------------ memory
    def _dirty(self) -> list[list[Any]]:
        out: list[list[Any]] = []
        for m in list(self._mirrors.values()):
            now = hostmem.read(m.addr, m.nbytes)
            if now != m.last:
                out.append([m.addr, m.nbytes, now, m.writable])
                m.last = now
        self._reclaim()
        return out

    def _reclaim(self) -> None:
        arrays = [m for m in self._mirrors.values() if not m.pinned]
        if len(arrays) <= ORPHANS_KEPT:
            return
        orphans = [m for m in arrays if sys.getrefcount(m.obj) <= 3]
        for m in orphans[:max(0, len(orphans) - ORPHANS_KEPT)]:
            del self._mirrors[m.addr]
            self._drops.append(m.addr)

    def _inside_mirror(self, addr: int, n: int) -> bool:
        m = self._mirrors.get(addr)
        if m is not None and n <= m.nbytes:
            return True
        return any(x.addr <= addr and addr + n <= x.addr + x.nbytes
                   for x in self._mirrors.values())

    def _raw_ranges(self, args: tuple[Any, ...] | list[Any], which: tuple[tuple[int, int], ...],
                    attach: bool) -> list[list[Any]]:
        out: list[list[Any]] = []
        maps: list[bytes] | None = None
        for pi, si in which:
            if pi >= len(args) or si >= len(args):
                continue
            addr, n = args[pi], args[si]
            if type(addr) is not int or type(n) is not int or addr <= 0 or n < 0 \
                    or n > codec.MAX_FRAME or _memory.MemorySystem.is_device_addr(addr):
                continue
            if self._inside_mirror(addr, n):
                continue
            if maps is None:
                maps = _memory.host_mappings()  # read once per call (it is a file read)
            if _memory.host_range_problem(addr, n, False, maps):
                continue  # unreadable here: the emulator finds it unmapped too (107000)
            writable = not _memory.host_range_problem(addr, n, True, maps)
            out.append([addr, n, hostmem.read(addr, n) if attach else None, writable])
        return out

    def _apply(self, landed: Any, pins: Any) -> None:
        if not landed and not pins:
            return
        with self._mlock:
            for entry in pins if type(pins) is list else ():
                if type(entry) is list and len(entry) == 2 and all(type(x) is int
                                                                    for x in entry):
                    addr, n = entry
                    if self.pages.ensure(addr, n, True):
                        # a new block reads as zero in the emulator: so does its mirror (the
                        # pages may hold an earlier block's bytes), and nothing is dirty yet
                        m = _Mirror(addr, n, None, True, True)
                        hostmem.write(addr, bytes(n))
                        m.last = bytes(n)
                        self._mirrors[addr] = m
                    else:  # this process has memory there: the block cannot be handed out
                        self._unmirrored.add(addr)
            for entry in landed if type(landed) is list else ():
                if not (type(entry) is list and len(entry) == 2 and type(entry[0]) is int
                        and type(entry[1]) is bytes):
                    continue
                addr, data = entry
                if not self._may_write(addr, len(data)):
                    continue
                hostmem.write(addr, data)
                self._refresh(addr, len(data))

    def _may_write(self, addr: int, n: int) -> bool:
        for m in self._mirrors.values():
            if m.addr <= addr and addr + n <= m.addr + m.nbytes:
                if m.pinned:
                    return self.pages.covers(addr, n)
                if isinstance(m.obj, np.ndarray) and _memory.array_read_only(m.obj, addr, n):
                    return False
                if isinstance(m.obj, bytes):
                    return m.writable and not _memory.bytes_shared(m.obj, m.addr)
        return not _memory.host_range_problem(addr, n, True)

    def _refresh(self, addr: int, n: int) -> None:
        """Bytes written from a reply are the server's too: not dirty."""
        for m in self._mirrors.values():
            if m.addr < addr + n and addr < m.addr + m.nbytes:
                m.last = hostmem.read(m.addr, m.nbytes)

    def mirror(self, obj: Any, addr: int, nbytes: int, writable: bool) -> None:
        """Keep ``obj``'s bytes ``[addr, addr+nbytes)`` shadowed in the server."""
        with self._mlock:
            self._mirrors[addr] = _Mirror(addr, nbytes, obj, writable, False)


def install(pipe: Pipe) -> None:
    """Route every pyACL call and ``acl_lab.hostwork``'s host work through ``pipe``."""
    from .. import hostwork
    from ..acl._boundary import set_transport
    from ..runtime.costs import non_negative

    set_transport(pipe)

    def host_work(ns: int, what: str = "host work") -> None:
        """``acl_lab.hostwork.host_work``, recorded by the emulator server."""
        f = sys._getframe(1)
        cost = round(non_negative(ns, "ns"))
        pipe.host_work(cost, str(what), f.f_code.co_filename, f.f_lineno)

    def preprocess_image(jpeg: bytes, size: int, mean: Any, std: Any, out: Any = None,
                         host: Any = None) -> Any:
        """``acl_lab.hostwork.preprocess_image``, decoded and measured by the server."""
        f = sys._getframe(1)
        return pipe.preprocess(jpeg, size, mean, std, out, f.f_code.co_filename, f.f_lineno)

    host_work.__doc__ = hostwork.host_work.__doc__
    preprocess_image.__doc__ = hostwork.preprocess_image.__doc__
    originals = {id(hostwork.host_work): host_work,
                 id(hostwork.preprocess_image): preprocess_image}
    # every loaded acl_lab module that imported them by name (acl_lab.host_work, the ladder)
    for mod_name, module in list(sys.modules.items()):
        if mod_name != "acl_lab" and not mod_name.startswith("acl_lab."):
            continue
        for attr, value in list(vars(module).items()):
            replacement = originals.get(id(value))
            if replacement is not None:
                setattr(module, attr, replacement)


class _Box:
    """A thread's mailbox (one waiter, many senders)."""

    def __init__(self) -> None:
        import queue

        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def put(self, msg: Any) -> None:
        self._q.put(msg)

    def get(self) -> Any:
        return self._q.get()


def _plain(value: Any) -> bool:
    try:
        codec.encode(value)
    except codec.CodecError:
        return False
    return True


# ---------------------------------------------------------------------- local halves
def _array_call(pipe: Pipe, spec: ApiSpec, args: tuple[Any, ...], file: str, line: int) -> Any:
    """numpy_to_ptr / numpy_contiguous_to_ptr: the address is this process's; the array
    is shadowed in the server, which registers and records it."""
    arr = args[0] if args else None
    if not isinstance(arr, np.ndarray) or arr.dtype.hasobject:
        return pipe.request(spec.name, [None], file, line)
    keep = np.ascontiguousarray(arr) if spec.name.endswith("contiguous_to_ptr") else arr
    addr = int(keep.ctypes.data)
    fn = getattr(np, "byte_bounds", None) or np.lib.array_utils.byte_bounds
    lo, hi = (int(x) for x in fn(keep))
    n = hi - lo
    writable = not _memory.array_read_only(keep, lo, n) if n else bool(keep.flags.writeable)
    with pipe._mlock:
        pipe.mirror(keep, lo, n, writable)
    desc = {"addr": addr, "lo": lo, "nbytes": n, "dtype": keep.dtype.str,
            "shape": list(keep.shape), "strides": list(keep.strides), "writable": writable}
    ptr = pipe.request(spec.name, [desc], file, line)
    if spec.name.endswith("contiguous_to_ptr"):
        return (ptr, keep) if ptr is not None else None
    return ptr


def _bytes_to_ptr(pipe: Pipe, spec: ApiSpec, args: tuple[Any, ...], file: str,
                  line: int) -> Any:
    """bytes_to_ptr: the buffer's address here, shadowed as a read-only array there."""
    data = args[0] if args else None
    if not isinstance(data, bytes):
        return pipe.request(spec.name, [None], file, line)
    addr = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    # the in-process rule (runtime.memory.MemorySystem.may_write), judged here where the
    # object lives: the server only sees its shadow
    writable = not _memory.bytes_shared(data, addr)
    with pipe._mlock:
        pipe.mirror(data, addr, len(data), writable)
    desc = {"addr": addr, "lo": addr, "nbytes": len(data), "dtype": "|u1",
            "shape": [len(data)], "strides": [1], "writable": writable}
    return pipe.request(spec.name, [desc], file, line)


def _ptr_to_numpy(pipe: Pipe, spec: ApiSpec, args: tuple[Any, ...], file: str,
                  line: int) -> Any:
    """ptr_to_numpy: the server checks and records it; the view is of this process's memory
    (a pinned block's mirror, the program's own array), or a read-only copy of memory that
    lives only in the emulator (device memory in the device run mode)."""
    out = pipe.request(spec.name, list(args), file, line)
    if type(out) is not dict:
        return out
    ptr, shape, num = args
    from ..acl.util import _dtype_from_num

    dtype = _dtype_from_num(num)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    data = out.get("data", b"")
    if pipe._inside_mirror(ptr, n) or not _memory.host_range_problem(ptr, n, False):
        arr = np.frombuffer(hostmem.view(ptr, n), np.uint8).view(dtype).reshape(shape)
        if not out.get("view") or _memory.host_range_problem(ptr, n, True):
            arr.flags.writeable = False
        return arr
    arr = np.frombuffer(data, dtype).reshape(shape)
    return arr


_LOCAL: dict[str, Callable[[Pipe, ApiSpec, tuple[Any, ...], str, int], Any]] = {
    "acl.util.numpy_to_ptr": _array_call, "acl.util.numpy_contiguous_to_ptr": _array_call,
    "acl.util.bytes_to_ptr": _bytes_to_ptr, "acl.util.ptr_to_numpy": _ptr_to_numpy,
}
