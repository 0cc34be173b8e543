"""The pipe transport (issue 14, piece 5): pyACL calls forwarded to an emulator process.

The server runs as its own process (``ServerProcess``) and writes the trace; the client is
this test process (``Pipe`` installed with ``set_transport`` and restored afterwards) or, for
the attacks, a separate program. Covered: the codec's strictness, malformed frames answered
without a crash, foreign host memory crossing both ways (a sync copy at once, an async copy
at the synchronize that completes it), pinned memory, callbacks run in the client, and a
learner that rewrites the recorder, ``json.dumps`` or the Session in its own process.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import socket
import struct
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import acl_lab
from acl_lab import DeadlockError, Session
from acl_lab.acl._boundary import InProcess, current_transport, set_transport
from acl_lab.constants import (
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.tracer.trace import Trace
from acl_lab.transport import Pipe, codec
from acl_lab.transport.codec import CodecError, Ref
from acl_lab.transport.server import ServerProcess
from tests.helpers import ok

pytestmark = pytest.mark.timeout(180)

H2D, D2H = ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST
REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def piped(out: Path) -> Iterator[ModuleType]:
    """``acl`` with every call forwarded to a fresh server process writing into ``out``;
    the server's trace is ``out/trace.acltrace`` once the block ends."""
    srv = ServerProcess(out)
    pipe = Pipe(srv.client_fd)
    previous = set_transport(pipe)
    try:
        yield acl_lab.install()
    finally:
        set_transport(previous)
        acl_lab.uninstall()
        pipe.close()
        assert srv.wait(60) == 0


def server_trace(out: Path) -> Trace:
    """The trace the server wrote."""
    return Trace.load(out / "trace.acltrace")


def call_names(trace: Trace) -> list[str]:
    """The API name of every recorded call, in order."""
    names = trace.calls["name"].tolist()
    return [trace.strings[i] if isinstance(i, int) else str(i) for i in names]


# ------------------------------------------------------------------------------ codec
@pytest.mark.parametrize("value", [
    None, True, False, 0, -1, (1 << 63) - 1, -(1 << 63), 1 << 64, -(1 << 70), (1 << 64) - 1,
    1.5, float("inf"), "", "héllo\u2603", b"", b"\x00\xff" * 10, [], (), {},
    [1, (2, "x"), {"k": [b"z", None]}, {3: 4.0}], Ref(7), [Ref(-2), (Ref(3),)],
])
def test_codec_round_trips_plain_values(value: object) -> None:
    assert codec.decode(codec.encode(value)) == value
    assert type(codec.decode(codec.encode(value))) is type(value)


def test_codec_numpy_scalars_become_plain_values_and_objects_are_refused() -> None:
    assert codec.decode(codec.encode([np.int64(5), np.float32(0.5), np.bool_(True)])) == \
        [5, 0.5, True]

    class Sneaky(int):
        def __index__(self) -> int:  # learner code must not run while encoding
            raise AssertionError("ran")

    for bad in (Sneaky(3), object(), {1.5: 2}, np.zeros(2), {(1,): 2}):
        with pytest.raises(CodecError):
            codec.encode(bad)
    assert codec.decode(codec.encode([object()], lambda v: Ref(9))) == [Ref(9)]


@pytest.mark.parametrize("data, why", [
    (b"", "truncated"), (b"i\x00\x00", "truncated"), (b"s\x00\x00\x00\x05ab", "truncated"),
    (b"NN", "after the value"), (b"Z", "unknown tag"), (b"s\x00\x00\x00\x01\xff", "UTF-8"),
    (b"d\x00\x00\x00\x01f" + struct.pack(">d", 1.0) + b"N", "dict key"),
    (b"l\xff\xff\xff\xff", "count larger"), (b"I\x00\x00\x00\x00", "empty big integer"),
    (b"l\x00\x00\x00\x01" * 100 + b"N", "too deeply"),
])
def test_codec_rejects_malformed_bytes(data: bytes, why: str) -> None:
    with pytest.raises(CodecError, match=why):
        codec.decode(data)


def test_frame_length_is_bounded() -> None:
    a, b = socket.socketpair()
    with a, b:
        a.sendall(struct.pack(">I", codec.MAX_FRAME + 1))
        with pytest.raises(CodecError, match="larger than"):
            codec.FrameReader(b.fileno()).read()


def test_each_end_closes_its_socket_when_the_connection_ends(tmp_path: Path) -> None:
    """``Pipe.close`` leaves the client's socket closed (its reader thread closes it at the
    end of the stream), and a ``Server`` closes its own once the client hung up."""
    srv = ServerProcess(tmp_path)
    pipe = Pipe(srv.client_fd)
    pipe.close()
    assert pipe.sock.fileno() == -1
    assert srv.wait(60) == 0

    from acl_lab.transport.server import Server
    a, b = socket.socketpair()
    server = Server(a.detach())
    serving = threading.Thread(target=server.serve)
    serving.start()
    b.close()
    serving.join(60)
    assert not serving.is_alive() and server.sock.fileno() == -1


def test_a_server_process_that_cannot_start_leaves_no_socket_open(tmp_path: Path) -> None:
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError) as failed:
        ServerProcess(tmp_path, cwd=str(tmp_path / "missing"))
    # closed by ServerProcess itself, not by the garbage collector (the traceback in
    # ``failed`` still holds the constructor's frame)
    assert set(os.listdir("/proc/self/fd")) <= before, failed


# ------------------------------------------------------------------------------ seam
def test_default_transport_is_in_process_and_switching_rebinds_every_function(
        tmp_path: Path) -> None:
    assert isinstance(current_transport(), InProcess)
    with piped(tmp_path) as acl:
        assert isinstance(current_transport(), Pipe)
        assert acl.rt.get_run_mode() == (1, 0)
        assert acl.init() == 0
    assert isinstance(current_transport(), InProcess)
    names = call_names(server_trace(tmp_path))
    assert names[:2] == ["acl.rt.get_run_mode", "acl.init"]


def test_a_function_held_before_the_switch_follows_it(tmp_path: Path) -> None:
    """``set_transport`` changes the code of the wrappers a program already holds
    (``from acl.rt import get_run_mode`` before the switch), not only the module's names:
    the held function's call reaches the server, and after the switch back it runs here."""
    from acl_lab.acl.rt import get_run_mode
    with Session() as here:
        acl_lab.install(here)
        with piped(tmp_path):
            assert get_run_mode() == (1, 0)
        assert get_run_mode() == (1, 0)
        assert "acl.rt.get_run_mode" in call_names(here.trace())
        acl_lab.uninstall()
    assert call_names(server_trace(tmp_path)) == ["acl.rt.get_run_mode"]


def test_calls_are_recorded_at_the_learners_line(tmp_path: Path) -> None:
    with piped(tmp_path) as acl:
        line = sys._getframe().f_lineno + 1
        assert acl.init() == 0
    trace = server_trace(tmp_path)
    file, at = trace.strings[int(trace.calls["file"][0])], int(trace.calls["line"][0])
    assert (Path(file).name, at) == (Path(__file__).name, line)


# ------------------------------------------------------------------------------ memory
def _ready(acl: ModuleType) -> int:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    return int(ok(acl.rt.create_context(0)))


def test_sync_copies_cross_both_ways_through_a_numpy_array(tmp_path: Path) -> None:
    src = np.arange(256, dtype=np.float32) * 3
    back = np.zeros(256, dtype=np.float32)
    with piped(tmp_path) as acl:
        _ready(acl)
        dev = ok(acl.rt.malloc(src.nbytes, ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memcpy(dev, src.nbytes, src.ctypes.data, src.nbytes, H2D) == 0
        assert acl.rt.memcpy(back.ctypes.data, back.nbytes, dev, src.nbytes, D2H) == 0
        np.testing.assert_array_equal(back, src)
        # the learner changes its array between calls: the next copy sends the new bytes
        src[:] = -1
        assert acl.rt.memcpy(dev, src.nbytes, src.ctypes.data, src.nbytes, H2D) == 0
        assert acl.rt.memcpy(back.ctypes.data, back.nbytes, dev, src.nbytes, D2H) == 0
        assert (back == -1).all()
        assert acl.rt.free(dev) == 0
    kinds = [f.kind for f in server_trace(tmp_path).findings()]
    assert "use_after_free" not in kinds and "uninitialised_read" not in kinds


def test_async_copy_into_an_array_lands_at_the_synchronize(tmp_path: Path) -> None:
    data = np.arange(1024, dtype=np.int32)
    dst = np.zeros(1024, dtype=np.int32)
    with piped(tmp_path) as acl:
        _ready(acl)
        stream = ok(acl.rt.create_stream())
        dev = ok(acl.rt.malloc(data.nbytes, ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memcpy(dev, data.nbytes, data.ctypes.data, data.nbytes, H2D) == 0
        host = ok(acl.rt.malloc_host(data.nbytes))
        assert acl.rt.memcpy_async(host, data.nbytes, dev, data.nbytes, D2H, stream) == 0
        pinned = acl.util.ptr_to_numpy(host, (1024,), np.dtype(np.int32).num)
        assert not pinned.any()  # queued, not landed: the device is behind the host
        ptr = acl.util.numpy_to_ptr(dst)
        assert acl.rt.memcpy_async(ptr, dst.nbytes, dev, data.nbytes, D2H, stream) == 0
        assert not dst.any()
        assert acl.rt.synchronize_stream(stream) == 0
        np.testing.assert_array_equal(pinned, data)
        np.testing.assert_array_equal(dst, data)
        assert acl.rt.free_host(host) == 0
        assert acl.rt.free(dev) == 0
        assert acl.rt.destroy_stream(stream) == 0


def test_pinned_memory_written_by_the_learner_reaches_the_device(tmp_path: Path) -> None:
    with piped(tmp_path) as acl:
        _ready(acl)
        host = ok(acl.rt.malloc_host(4096))
        view = acl.util.ptr_to_numpy(host, (1024,), np.dtype(np.float32).num)
        view[:] = np.linspace(0, 1, 1024, dtype=np.float32)
        dev = ok(acl.rt.malloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memcpy(dev, 4096, host, 4096, H2D) == 0
        out = np.zeros(1024, np.float32)
        assert acl.rt.memcpy(out.ctypes.data, 4096, dev, 4096, D2H) == 0
        np.testing.assert_array_equal(out, np.linspace(0, 1, 1024, dtype=np.float32))
        assert acl.util.ptr_to_bytes(host, 8) == view[:2].tobytes()


def test_bytes_given_to_bytes_to_ptr_reach_the_device(tmp_path: Path) -> None:
    data = bytes(range(256)) * 4
    back = np.zeros(len(data), dtype=np.uint8)
    with piped(tmp_path) as acl:
        _ready(acl)
        ptr = acl.util.bytes_to_ptr(data)
        dev = ok(acl.rt.malloc(len(data), ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memcpy(dev, len(data), ptr, len(data), H2D) == 0
        assert acl.rt.memcpy(back.ctypes.data, back.nbytes, dev, len(data), D2H) == 0
        assert back.tobytes() == data
        # a bytes object the program made for itself may be copied into (the samples'
        # out = bytes(n)), as in one process ...
        out = bytes(len(data))
        out_ptr = acl.util.bytes_to_ptr(out)
        assert acl.rt.memcpy(out_ptr, len(out), dev, len(data), D2H) == 0
        assert out == data
        # ... one Python shares (hashed: a dict key) is refused, and stays as it was
        shared = bytes(len(data))
        keys = {shared: "a dict key"}
        shared_ptr = acl.util.bytes_to_ptr(shared)
        assert acl.rt.memcpy(shared_ptr, len(shared), dev, len(data), D2H) \
            == ACL_ERROR_RT_PARAM_INVALID
        assert shared == bytes(len(data)) and keys[bytes(len(data))] == "a dict key"
    kinds = [f.kind for f in server_trace(tmp_path).findings()]
    assert "uninitialised_read" not in kinds and "read_only_destination" in kinds


def test_a_memset_of_host_memory_reaches_the_learners_array(tmp_path: Path) -> None:
    arr = np.zeros(256, dtype=np.uint8)
    with piped(tmp_path) as acl:
        _ready(acl)
        host = ok(acl.rt.malloc_host(256))
        assert acl.rt.memset(arr.ctypes.data, 256, 0x5A, 100) == 0
        assert acl.rt.memset(host, 256, 7, 256) == 0
        pinned = acl.util.ptr_to_numpy(host, (256,), np.dtype(np.uint8).num)
        assert (pinned == 7).all()
    assert (arr[:100] == 0x5A).all() and not arr[100:].any()


def test_read_only_and_unmapped_destinations_are_refused_with_107000(tmp_path: Path) -> None:
    frozen = np.full(64, 5, dtype=np.uint8)
    frozen.flags.writeable = False
    with piped(tmp_path) as acl:
        _ready(acl)
        dev = ok(acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memset(dev, 64, 0, 64) == 0
        ptr = acl.util.numpy_to_ptr(frozen)
        assert acl.rt.memcpy(ptr, 64, dev, 64, D2H) == ACL_ERROR_RT_PARAM_INVALID
        # an address nothing is mapped at in the learner's process: not the server's heap
        assert acl.rt.memcpy(0x10000, 64, dev, 64, D2H) == ACL_ERROR_RT_PARAM_INVALID
        assert acl.rt.memcpy(dev, 64, 0x10000, 64, H2D) == ACL_ERROR_RT_PARAM_INVALID
        assert acl.rt.get_run_mode() == (1, 0)  # the server still answers
    assert (frozen == 5).all()


# ------------------------------------------------------------------------------ callbacks
def test_callbacks_and_threads_run_in_the_client(tmp_path: Path) -> None:
    seen: list[tuple[object, str]] = []
    go = threading.Event()
    with piped(tmp_path) as acl:
        ctx = _ready(acl)
        stream = ok(acl.rt.create_stream())

        def report(args: list[int]) -> None:
            assert acl.rt.set_context(args[0]) == 0
            go.wait(30)
            for _ in range(50):
                if seen:
                    return
                acl.rt.process_report(100)

        tid = ok(acl.util.start_thread(report, [ctx]))
        assert acl.rt.subscribe_report(tid, stream) == 0
        go.set()
        payload = {"n": 3}
        assert acl.rt.launch_callback(
            lambda data: seen.append((data, threading.current_thread().name)),
            payload, 1, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert acl.util.stop_thread(tid) == 0
        assert acl.rt.unsubscribe_report(tid, stream) == 0
    assert len(seen) == 1 and seen[0][0] is payload  # the object itself, never copied
    names = call_names(server_trace(tmp_path))
    assert "acl.rt.process_report" in names and "acl.rt.launch_callback" in names


def test_a_learner_thread_id_names_its_thread_and_a_join_orders_the_clocks(
        tmp_path: Path) -> None:
    """subscribe_report(threading ident) reaches the paired host thread; unsubscribing after
    the thread was joined still finds it (the 10.3 pattern); the join is recorded."""
    got: list[object] = []
    with piped(tmp_path) as acl:
        _ready(acl)
        stream = ok(acl.rt.create_stream())
        subscribed = threading.Event()

        def report() -> None:
            subscribed.wait(30)
            assert acl.rt.process_report(-1) == 0

        reporter = threading.Thread(target=report, name="reporter")
        reporter.start()
        assert acl.rt.subscribe_report(reporter.ident, stream) == 0
        subscribed.set()
        assert acl.rt.launch_callback(got.append, "data", 1, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        reporter.join(60)
        assert not reporter.is_alive()
        assert acl.rt.unsubscribe_report(reporter.ident, stream) == 0
        assert acl.rt.destroy_stream(stream) == 0
    assert got == ["data"]
    trace = server_trace(tmp_path)
    names = call_names(trace)
    pr = names.index("acl.rt.process_report")
    last = len(names) - 1 - names[::-1].index("acl.rt.destroy_stream")
    threads = trace.calls["thread"]
    assert trace.strings[int(trace.threads["name"][int(threads[pr])])] == "reporter"
    # after the join, the main thread's calls come after the reporter's in virtual time
    assert int(trace.calls["start_ns"][last]) >= int(trace.calls["end_ns"][pr])


def test_a_deadlock_crosses_the_pipe_whole_and_names_the_programs_thread(
        tmp_path: Path) -> None:
    """A thread the program named, whose first message is a host operation (a lock), waits
    on a stream cycle; the main thread joins it. The DeadlockError the client raises carries
    the wait-for edges, the threads' own names and the call site, and survives pickling;
    the trace names the thread as the program did."""
    with piped(tmp_path) as acl:
        ctx = _ready(acl)
        gate = threading.Lock()

        def worker() -> None:
            with gate:  # the thread's first message to the server: a host operation
                pass
            assert acl.rt.set_context(ctx) == 0
            # two streams, each waiting for a record queued behind the other's wait
            a, b = (ok(acl.rt.create_event_with_flag(1)) for _ in range(2))
            t1, t2, resetter = (ok(acl.rt.create_stream()) for _ in range(3))
            for event, stream in ((a, t1), (b, t2)):
                assert acl.rt.record_event(event, stream) == 0
                assert acl.rt.reset_event(event, resetter) == 0
            for waiter, event, other in ((t1, b, a), (t2, a, b)):
                assert acl.rt.stream_wait_event(waiter, event) == 0
                assert acl.rt.record_event(other, waiter) == 0
            with contextlib.suppress(Exception):
                acl.rt.synchronize_stream(t1)

        t = threading.Thread(target=worker, name="learner-worker")
        t.start()
        with pytest.raises(DeadlockError) as info:
            line = sys._getframe().f_lineno + 1
            t.join()
    err = info.value
    assert [(e.waiter, e.target) for e in err.edges][:2] == [
        ("thread 0 (MainThread)", "Thread.join of thread 1 (learner-worker)"),
        ("Thread.join of thread 1 (learner-worker)", "thread 1 (learner-worker)")]
    assert "stream" in err.edges[-1].target and "waits (through events) on itself" in err.report
    assert (err.file, err.line) == (__file__, line) and "MainThread" in err.thread
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is DeadlockError and again.report == err.report
    assert again.edges == err.edges
    trace = server_trace(tmp_path)
    names = {trace.strings[int(n)] for n in trace.threads["name"]}
    assert "learner-worker" in names and not any(n.startswith("client-") for n in names)


# ------------------------------------------------------------------------------ malformed
def _raw_server(tmp_path: Path) -> tuple[ServerProcess, socket.socket]:
    srv = ServerProcess(tmp_path)
    return srv, socket.socket(fileno=srv.client_fd)


def _reply(sock: socket.socket) -> object:
    return codec.decode(codec.FrameReader(sock.fileno()).read() or b"N")


@pytest.mark.parametrize("frame", [
    struct.pack(">I", 3) + b"Zzz",                        # not the codec
    codec.frame({"call": 1}),                             # not a message
    codec.frame(["call", 1, "t", "acl.nope", [], "f", 1, [], []]),  # no such API
    codec.frame(["call", 1, "t", "acl.init", "x", "f", 1, [], []]),  # args not a list
    codec.frame(["call", 1, "t", "acl.rt.memcpy", [1, 2], "f", 1, [[1, -5, None, True]], []]),
    codec.frame(["done", 99, True, None]),                # nobody waits for a callback
    codec.frame(["call", -4, "t", "acl.init", [], "f", 1, [], []]),  # a key never started
])
def test_a_malformed_frame_gets_an_error_and_the_server_keeps_serving(
        tmp_path: Path, frame: bytes) -> None:
    srv, sock = _raw_server(tmp_path)
    with sock:
        sock.sendall(frame)
        reply = _reply(sock)
        assert isinstance(reply, list)
        assert reply[0] == "bad" or (reply[0] == "ret" and reply[5][0] == "RuntimeError")
        sock.sendall(codec.frame(["call", 7, "t", "acl.rt.get_run_mode", [], "f", 1, [], []]))
        assert _reply(sock) == ["ret", 7, (1, 0), [], [], None, False]
    assert srv.wait(60) == 0


def test_an_ended_part_never_reopens(tmp_path: Path) -> None:
    """After part 0 ended and a stray call reached the connection's own session, beginning
    part 0 again is refused (a later part could otherwise rewrite the trace part 0 is graded
    on); the next part begins."""
    srv = ServerProcess(tmp_path, [["04.1", 0], ["04.2", 0]])
    sock = socket.socket(fileno=srv.client_fd)

    def error(msg: list[object]) -> object:
        """The error field of the reply to ``msg``."""
        sock.sendall(codec.frame(msg))
        reply = _reply(sock)
        assert isinstance(reply, list) and reply[0] == "ret"
        return reply[5]

    with sock:
        assert error(["begin", 1, 0, "t"]) is None
        assert error(["end", 1, 0, "t"]) is None
        assert error(["call", 1, "t", "acl.rt.get_run_mode", [], "f", 1, [], []]) is None
        assert error(["begin", 1, 0, "t"]) == ["ValueError", "exercises begin in order, each "
                                                             "once"]
        assert error(["begin", 1, 1, "t"]) is None
        assert error(["end", 1, 1, "t"]) is None
        assert error(["begin", 1, 7, "t"]) == ["ValueError", "no exercise 7 in this job"]
    assert srv.wait(60) == 0


def test_an_impossible_frame_length_ends_the_connection_not_the_server(tmp_path: Path) -> None:
    srv, sock = _raw_server(tmp_path)
    with sock:
        sock.sendall(codec.frame(["call", 1, "t", "acl.init", [], "f", 1, [], []]))
        assert _reply(sock) == ["ret", 1, 0, [], [], None, False]
        sock.sendall(struct.pack(">I", 0xFFFFFFFF))
        reply = _reply(sock)
        assert isinstance(reply, list) and reply[0] == "bad"
    assert srv.wait(60) == 0
    assert call_names(server_trace(tmp_path)) == ["acl.init"]  # written anyway


def test_a_sync_range_over_the_servers_own_memory_is_never_written(tmp_path: Path) -> None:
    # the learner names an address where the server has its own heap: NOREPLACE refuses to
    # map there, the range stays unmapped for the emulator, the server stays intact
    srv, sock = _raw_server(tmp_path)
    with sock:
        sock.sendall(codec.frame(["call", 1, "t", "acl.init", [], "f", 1, [], []]))
        assert _reply(sock) == ["ret", 1, 0, [], [], None, False]
        with open(f"/proc/{srv.proc.pid}/maps") as f:  # the server's own writable memory
            own = [int(line.split("-")[0], 16) for line in f
                   if line.split()[1].startswith("rw") and "[stack]" not in line]
        sync = [[addr, 4096, b"\xcc" * 4096, True] for addr in own]
        sock.sendall(codec.frame(["call", 1, "t", "acl.rt.set_device", [0], "f", 1, sync, []]))
        assert _reply(sock) == ["ret", 1, 0, [], [], None, False]
        sock.sendall(codec.frame(["call", 1, "t", "acl.rt.malloc", [64, 0], "f", 1, [], []]))
        reply = _reply(sock)
        assert isinstance(reply, list) and reply[2][1] == 0
        dev = reply[2][0]
        # to the emulator, the server's own memory is not mapped host memory
        sock.sendall(codec.frame(["call", 1, "t", "acl.rt.memcpy", [dev, 64, own[0], 64, H2D],
                                  "f", 1, [], []]))
        assert _reply(sock) == ["ret", 1, ACL_ERROR_RT_PARAM_INVALID, [], [], None, False]
        sock.sendall(codec.frame(["call", 1, "t", "acl.rt.get_run_mode", [], "f", 1, [], []]))
        assert _reply(sock) == ["ret", 1, (1, 0), [], [], None, False]
    assert srv.wait(60) == 0


# ------------------------------------------------------------------------------ attacks
ATTACK = textwrap.dedent("""
    import json, sys
    import numpy as np
    import acl_lab
    from acl_lab.acl._boundary import set_transport
    from acl_lab.transport import Pipe
    set_transport(Pipe())
    acl = acl_lab.install()
    # the learner rewrites everything that records or saves a trace, in its own process
    import acl_lab.tracer.recorder as rec
    import acl_lab.runtime.session as ses
    json.dumps = lambda *a, **k: "{}"
    for name in dir(rec.Recorder):
        if name.startswith("on_"):
            setattr(rec.Recorder, name, lambda *a, **k: None)
    ses.Session.finish = lambda self: None
    ses.Session.api_enter = lambda *a, **k: (_ for _ in ()).throw(SystemExit(3))
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    dev, ret = acl.rt.malloc(1024, 0)
    assert ret == 0
    print("ok")
""")


def test_a_learner_rewriting_the_recorder_in_its_process_cannot_change_the_trace(
        tmp_path: Path) -> None:
    script = tmp_path / "attack.py"
    script.write_text(ATTACK)
    srv = ServerProcess(tmp_path)
    env = dict(os.environ, ACL_LAB_PIPE_FD=str(srv.client_fd), PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(script)], pass_fds=(srv.client_fd,), env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    srv.release_client_fd()
    assert proc.returncode == 0, proc.stderr
    assert srv.wait(60) == 0
    trace = server_trace(tmp_path)
    assert call_names(trace)[:3] == ["acl.init", "acl.rt.set_device", "acl.rt.malloc"]
    assert "leak" in [f.kind for f in trace.findings()]  # the device buffer never freed


# ------------------------------------------------------------------------------ grading
@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@pytest.mark.timeout(900)
def test_solutions_graded_through_the_pipe_score_what_they_score_in_process(
        tmp_path: Path) -> None:
    """``acl-lab grade`` (worker in its sandbox, emulator server beside it) gives every
    exercise of the course's solutions the points the in-process run gives them."""
    from acl_lab.grading import sandbox
    from acl_lab.grading.notebook import learner_namespace
    from acl_lab.grading.report import grade_run
    from acl_lab.grading.rubric import get_exercise
    from acl_lab.grading.runner import run_exercise

    from .submissions.builders import run_grade

    notebooks = sorted((REPO / "solutions").glob("*.ipynb"))
    assert notebooks
    sub = tmp_path / "submissions" / "alice"
    sub.mkdir(parents=True)
    for nb in notebooks:
        (sub / nb.name).write_bytes(nb.read_bytes())
    options = () if sandbox.available()[0] else ("--no-sandbox",)
    graded = run_grade(tmp_path / "submissions", tmp_path / "out", *options, timeout=800,
                       extra_env={"ACL_LAB_GRADING_EXTRA": ""})
    assert graded.proc.returncode == 0, graded.proc.stderr[-3000:]
    exercises = sorted({r["exercise"] for r in graded.rows()})
    assert len(exercises) >= 10
    in_process: dict[tuple[str, str], int] = {}
    for nb in notebooks:
        ids = json.loads(nb.read_text(encoding="utf-8"))["metadata"]["acl_lab"]["exercises"]
        namespace = learner_namespace(str(nb), skip_tags=("check",))
        for ex_id in ids:
            ex = get_exercise(ex_id)
            report = grade_run(ex, run_exercise(ex, namespace[ex.entry]))
            for r in report.results:
                in_process[ex_id, r.item.id] = r.points_awarded
    assert {e for e, _ in in_process} == set(exercises)
    # the graded run's rows of the same items (hidden runs add rows of their own)
    piped = {(r["exercise"], r["item"]): int(r["points"]) for r in graded.rows()
             if (r["exercise"], r["item"]) in in_process}
    assert piped == in_process
    assert sum(piped.values()) > 0


def test_a_pinned_address_handed_out_again_is_told_with_its_new_size(tmp_path: Path) -> None:
    """The allocator may give a freed block's address to another block (a later exercise in
    the same worker): the client must be told each block's size, or its mirror keeps the old
    extent (bigger: the writes past it never reach the emulator; smaller: the whole sync is
    refused), and the model reads stale input."""
    from types import SimpleNamespace

    from acl_lab.runtime.memory import HOST_PINNED
    from acl_lab.transport.server import Server
    a, b = socket.socketpair()
    srv = Server(a.detach())
    try:
        block = 0x7F00_0000_0000
        for size in (4096, 1024, 65536, 65536):
            srv.on_alloc(SimpleNamespace(kind=HOST_PINNED, addr=block, size=size), 0)
        assert srv._pins == [[block, 4096], [block, 1024], [block, 65536], [block, 65536]]
    finally:
        srv.close()  # the server owns its end from Server(); never served, so close it here
        b.close()
