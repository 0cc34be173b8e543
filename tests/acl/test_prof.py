"""acl.prof: a profiling run writes a Perfetto/Chrome JSON of the profiled intervals."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from acl_lab.acl import prof
from acl_lab.constants import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_PROF_ALREADY_RUN,
    ACL_ERROR_PROF_NOT_RUN,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_UNINITIALIZE,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session

MIB = 1 << 20


def _copies(acl: ModuleType, n: int, nbytes: int = MIB) -> None:
    """``n`` synchronous host-to-device copies (tasks on the copy engine)."""
    dev, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS
    host, ret = acl.rt.malloc_host(nbytes)
    assert ret == ACL_SUCCESS
    for _ in range(n):
        assert acl.rt.memcpy(dev, nbytes, host, nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.rt.free(dev) == 0 and acl.rt.free_host(host) == 0


def _profile(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def _copy_slices(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name") == "H2D"]


def test_a_profiling_run_writes_the_profiled_interval(ready: ModuleType, session: Session,
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """init -> create_config -> start -> work -> stop -> finalize writes one JSON under the
    result folder, holding the work inside [start, stop] and not the work outside it."""
    _copies(ready, 2)  # before the profiled interval
    assert ready.prof.init(str(tmp_path)) == ACL_SUCCESS
    cfg = ready.prof.create_config([0], 0, 0, 0)
    assert cfg
    assert ready.prof.start(cfg) == ACL_SUCCESS
    _copies(ready, 3)
    assert ready.prof.stop(cfg) == ACL_SUCCESS
    _copies(ready, 4)  # after it
    assert ready.prof.destroy_config(cfg) == ACL_SUCCESS
    assert ready.prof.finalize() == ACL_SUCCESS

    (out,) = prof.written(session)
    assert Path(out).is_file() and Path(out).is_relative_to(tmp_path)
    assert Path(out).parent.name == "mindstudio_profiler_output"
    assert sorted(p.name for p in tmp_path.iterdir())[0].startswith("PROF_000001_")
    assert out in capsys.readouterr().err
    doc = _profile(out)
    (interval,) = doc["otherData"]["acl_prof"]["intervals_ns"]
    assert doc["otherData"]["acl_prof"]["devices"] == [0]
    copies = _copy_slices(doc)
    assert len(copies) == 3, [c["ts"] for c in copies]
    a, b = interval
    for c in copies:
        start_ns = float(c["ts"]) * 1000
        assert a <= start_ns <= b
    # the whole trace has all nine copies: the file keeps only the profiled three
    from acl_lab.tracer.chrome import to_chrome_trace
    assert len(_copy_slices(to_chrome_trace(session.trace()))) == 9

    t = session.trace()
    notes = [t.string(int(t.diags["message"][j])) for j in range(t.diags.rows)
             if t.string(int(t.diags["kind"][j])) == "profile"]
    assert notes == [f"profile written to {out} (open it in https://ui.perfetto.dev)"]


def test_call_order_codes(ready: ModuleType, tmp_path: Path) -> None:
    """The msprof manager's prechecks: start/finalize before init 100043, a repeat init
    100002, a second start 100042, stop without init 0, stop without start 100043."""
    cfg = ready.prof.create_config([0], 0, 0, 0)
    assert ready.prof.start(cfg) == ACL_ERROR_PROF_NOT_RUN
    assert ready.prof.stop(cfg) == ACL_SUCCESS  # not initialised: nothing to stop
    assert ready.prof.finalize() == ACL_ERROR_PROF_NOT_RUN
    assert ready.prof.init(str(tmp_path)) == ACL_SUCCESS
    assert ready.prof.init(str(tmp_path)) == ACL_ERROR_REPEAT_INITIALIZE
    assert ready.prof.stop(cfg) == ACL_ERROR_PROF_NOT_RUN
    assert ready.prof.start(cfg) == ACL_SUCCESS
    assert ready.prof.start(cfg) == ACL_ERROR_PROF_ALREADY_RUN
    other = ready.prof.create_config([0], 0, 0, 0)
    assert ready.prof.stop(other) == ACL_ERROR_INVALID_PARAM
    assert ready.prof.stop(cfg) == ACL_SUCCESS
    assert ready.prof.finalize() == ACL_SUCCESS
    assert ready.prof.finalize() == ACL_ERROR_PROF_NOT_RUN
    # a second run may follow, into a new PROF_ folder
    assert ready.prof.init(str(tmp_path)) == ACL_SUCCESS
    assert ready.prof.finalize() == ACL_SUCCESS
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("PROF_")]) == 2


def test_init_needs_acl_init(acl: ModuleType, tmp_path: Path) -> None:
    """aclprofInit before aclInit: 100001 (C-doc 19-01: init after aclInit)."""
    assert acl.prof.init(str(tmp_path)) == ACL_ERROR_UNINITIALIZE


def test_finalize_ends_a_running_interval(ready: ModuleType, session: Session,
                                          tmp_path: Path) -> None:
    """finalize with a start never stopped ends the interval there and warns in the trace."""
    assert ready.prof.init(str(tmp_path)) == ACL_SUCCESS
    cfg = ready.prof.create_config([0], 0, 0, 0)
    assert ready.prof.start(cfg) == ACL_SUCCESS
    _copies(ready, 1)
    assert ready.prof.finalize() == ACL_SUCCESS
    (out,) = prof.written(session)
    assert len(_copy_slices(_profile(out))) == 1
    t = session.trace()
    kinds = [(int(t.diags["level"][j]), t.string(int(t.diags["message"][j])))
             for j in range(t.diags.rows) if t.string(int(t.diags["kind"][j])) == "profile"]
    assert kinds[0][0] == 1 and "never ended" in kinds[0][1]


@pytest.mark.parametrize(("devices", "why"), [([], "empty"), ([1], "no device 1"),
                                              ([0, 0], "a device twice")])
def test_create_config_refuses_bad_device_lists(ready: ModuleType, session: Session,
                                                devices: list[int], why: str) -> None:
    """A bad device list gives a null config (0) and 100000 in the trace."""
    assert ready.prof.create_config(devices, 0, 0, 0) == 0, why
    assert int(session.trace().calls["ret"][-1]) == ACL_ERROR_INVALID_PARAM


def test_create_config_wants_a_list(ready: ModuleType) -> None:
    """The binding's own texts: "argument 1 is not list", "... not list of int"."""
    with pytest.raises(TypeError, match=r"^argument 1 is not list$"):
        ready.prof.create_config((0,), 0, 0, 0)
    with pytest.raises(TypeError, match=r"^the first argument is not list of int$"):
        ready.prof.create_config([0.0], 0, 0, 0)
    with pytest.raises(TypeError, match=r"^acl\.prof\.Init args parse failed!$"):
        ready.prof.init(0)


# ------------------------------------------------------------------------------ subscription


def _load_lenet(acl: ModuleType) -> tuple[int, int, int, int]:
    """A loaded lenet5 with its desc and input/output datasets: (mid, desc, in_ds, out_ds)."""
    from acl_lab import zoo

    mid, ret = acl.mdl.load_from_file(zoo.path("lenet5"))
    assert ret == ACL_SUCCESS
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == ACL_SUCCESS
    sets = []
    for n, size in ((acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index),
                    (acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)):
        ds = acl.mdl.create_dataset()
        for i in range(n):
            nbytes = size(desc, i)
            ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_NORMAL_ONLY)
            assert ret == ACL_SUCCESS
            _, ret = acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, nbytes))
            assert ret == ACL_SUCCESS
        sets.append(ds)
    return mid, desc, sets[0], sets[1]


def test_model_subscription_reports_each_layer(ready: ModuleType, session: Session) -> None:
    """Two executions of a subscribed model give one record per layer each on the pipe; the
    get_op_* functions decode them; the layers tile each execution's model task exactly."""
    import os

    from acl_lab.runtime.om import OmModel
    mid, _, in_ds, out_ds = _load_lenet(ready)
    assert ready.mdl.execute(mid, in_ds, out_ds) == ACL_SUCCESS  # before: not reported
    r, w = os.pipe()
    try:
        cfg = ready.prof.create_subscribe_config(1, 0, w)
        assert cfg
        assert ready.prof.model_subscribe(mid, cfg) == ACL_SUCCESS
        assert ready.prof.model_subscribe(mid, cfg) == 148046  # ACL_ERROR_PROF_REPEAT_SUBSCRIBE
        for _ in range(2):
            assert ready.mdl.execute(mid, in_ds, out_ds) == ACL_SUCCESS
        assert ready.prof.model_unsubscribe(mid) == ACL_SUCCESS
        assert ready.prof.model_un_subscribe(mid) == 100011  # no longer subscribed
        size, ret = ready.prof.get_op_desc_size()
        assert ret == ACL_SUCCESS
        with pytest.raises(OSError):
            os.fstat(w)  # unsubscribe closed the write end once the records were written
        data = b""
        while chunk := os.read(r, 1 << 20):  # to end of file
            data += chunk
    finally:
        os.close(r)
    om: OmModel = session.models[mid].om
    layers = [(n.name, n.op) for n in om.nodes]
    assert len(data) == 2 * len(layers) * size
    ptr = ready.util.bytes_to_ptr(data)
    n, ret = ready.prof.get_op_num(ptr, len(data))
    assert (n, ret) == (2 * len(layers), ACL_SUCCESS)
    got = []
    for i in range(n):
        op_type, ret = ready.prof.get_op_type(ptr, len(data), i, 65)
        assert ret == ACL_SUCCESS
        name, ret = ready.prof.get_op_name_v2(ptr, len(data), i)
        assert ret == ACL_SUCCESS
        assert ready.prof.get_op_type_len(ptr, len(data), i) == (len(op_type) + 1, 0)
        assert ready.prof.get_model_id(ptr, len(data), i) == mid
        start = ready.prof.get_op_start(ptr, len(data), i)
        end = ready.prof.get_op_end(ptr, len(data), i)
        assert ready.prof.get_op_duration(ptr, len(data), i) == end - start >= 0
        got.append((name, op_type, start, end))
    assert [(a, b) for a, b, _, _ in got] == layers * 2
    t = session.trace()
    model_kind = 6  # tasks.kind "model"
    runs = [(int(t.tasks["start_ns"][i]), int(t.tasks["end_ns"][i]))
            for i in range(t.tasks.rows) if int(t.tasks["kind"][i]) == model_kind]
    assert len(runs) == 3
    for k, (a, b) in enumerate(runs[1:]):
        mine = got[k * len(layers):(k + 1) * len(layers)]
        assert mine[0][2] == a and mine[-1][3] == b
        assert all(x[3] == y[2] for x, y in pairwise(mine))
    assert ready.prof.get_op_num(ptr, len(data) - 1)[1] == ACL_ERROR_INVALID_PARAM
    assert ready.prof.get_op_type(ptr, len(data), n, 65)[1] == ACL_ERROR_INVALID_PARAM
    assert ready.prof.get_op_type(ptr, len(data), 0, 4097) == ("", ACL_ERROR_INVALID_PARAM)
    assert ready.prof.get_op_type(ptr, len(data), 0, 1) == ("", ACL_ERROR_INVALID_PARAM)
    assert ready.prof.destroy_subscribe_config(cfg) == ACL_SUCCESS


def test_subscription_and_profiling_do_not_mix(ready: ModuleType, tmp_path: Path) -> None:
    """model_subscribe inside init..finalize, or init while subscribed: 148047."""
    import os

    mid, *_ = _load_lenet(ready)
    r, w = os.pipe()
    try:
        cfg = ready.prof.create_subscribe_config(1, 0, w)
        assert ready.prof.model_subscribe(mid + 50, cfg) == 100011  # not loaded
        assert ready.prof.init(str(tmp_path)) == ACL_SUCCESS
        assert ready.prof.model_subscribe(mid, cfg) == 148047
        assert ready.prof.finalize() == ACL_SUCCESS
        assert ready.prof.model_subscribe(mid, cfg) == ACL_SUCCESS
        assert ready.prof.init(str(tmp_path)) == 148047
        assert ready.prof.model_unsubscribe(mid) == ACL_SUCCESS
    finally:
        os.close(r)


def test_a_full_pipe_never_hangs(ready: ModuleType, session: Session) -> None:
    """Nobody reads the pipe: unsubscribe gives up after the watchdog time with 500005."""
    import os

    mid, _, in_ds, out_ds = _load_lenet(ready)
    r, w = os.pipe()
    try:
        cfg = ready.prof.create_subscribe_config(1, 0, w)
        assert ready.prof.model_subscribe(mid, cfg) == ACL_SUCCESS
        size, _ = ready.prof.get_op_desc_size()
        layers = len(session.models[mid].om.nodes)
        runs = (1 << 16) // (size * layers) + 2  # more than a 64 KiB pipe holds
        for _ in range(runs):
            assert ready.mdl.execute(mid, in_ds, out_ds) == ACL_SUCCESS
        session.watchdog = 0.2
        assert ready.prof.model_unsubscribe(mid) == 500005  # ACL_ERROR_PROFILING_FAILURE
        with pytest.raises(OSError):
            os.fstat(w)  # closed all the same: the reader sees end of file
    finally:
        os.close(r)


def _reader_program(ready: ModuleType, session: Session, runs: int,
                    unsubscribe: bool = True) -> tuple[list[bytes], int, Any]:
    """A reader thread (acl.util.start_thread) reads the subscription's pipe to its end while
    the main thread runs the model ``runs`` times, unsubscribes and joins it (stop_thread):
    ``(chunks read, stop_thread's code, the trace)``."""
    import os

    mid, _, in_ds, out_ds = _load_lenet(ready)
    r, w = os.pipe()
    chunks: list[bytes] = []

    def reader(_: Any) -> None:
        while True:
            data = os.read(r, 4096)
            if not data:
                return
            chunks.append(data)

    tid, ret = ready.util.start_thread(reader, [])
    assert ret == ACL_SUCCESS
    cfg = ready.prof.create_subscribe_config(1, 0, w)
    assert ready.prof.model_subscribe(mid, cfg) == ACL_SUCCESS
    for _ in range(runs):
        assert ready.mdl.execute(mid, in_ds, out_ds) == ACL_SUCCESS
    if unsubscribe:
        assert ready.prof.model_unsubscribe(mid) == ACL_SUCCESS
    try:
        code = ready.util.stop_thread(tid)
    finally:
        os.close(r)
    return chunks, code, session.trace()


def test_a_reader_thread_reads_to_end_of_file_and_stop_thread_joins_it(
        ready: ModuleType, session: Session) -> None:
    """The issue's program: the reader waits in the schedule (an os.read row), gets every
    record, sees end of file once unsubscribe closed the write end, and stop_thread joins it
    with no deadlock and no fallback preemption; more records than a pipe holds arrive
    whole (unsubscribe waits for the reader while the pipe is full)."""
    size, _ = ready.prof.get_op_desc_size()
    layers = 0
    for runs in (2, 40):
        chunks, code, t = _reader_program(ready, session, runs)
        assert code == ACL_SUCCESS
        mid = max(session.models)
        layers = len(session.models[mid].om.nodes)
        assert len(b"".join(chunks)) == runs * layers * size
        names = [t.call_name(i) for i in range(t.calls.rows)]
        assert "os.read" in names  # it waited in the schedule
        assert "acl_lab.schedule_left_control" not in names
        assert not [f for f in t.findings() if f.kind in ("deadlock",
                                                         "schedule_left_control")]
    assert 40 * layers * size > 1 << 16  # the second program filled the pipe


def test_a_reader_nobody_ends_is_a_deadlock_at_once(ready: ModuleType,
                                                    session: Session) -> None:
    """Without unsubscribe the pipe stays open: the reader and the stop_thread joining it wait
    for each other, reported at once (the emulator is the pipe's only writer) with both
    waits named."""
    from acl_lab.runtime.errors import DeadlockError

    with pytest.raises(DeadlockError) as info:
        _reader_program(ready, session, 1, unsubscribe=False)
    msg = str(info.value)
    assert "os.read on fd" in msg and "model_unsubscribe closes its write end" in msg


def test_set_config_needs_init_and_lands_in_the_profile(ready: ModuleType, session: Session,
                                                       tmp_path: Path) -> None:
    """aclprofSetConfig: 100043 before init; the option is kept in the written profile."""
    assert ready.prof.set_config(1, "on") == ACL_ERROR_PROF_NOT_RUN
    assert ready.prof.init(str(tmp_path)) == ACL_SUCCESS
    assert ready.prof.set_config(1, "") == ACL_ERROR_INVALID_PARAM
    assert ready.prof.set_config(1, "on") == ACL_SUCCESS
    assert ready.prof.finalize() == ACL_SUCCESS
    (out,) = prof.written(session)
    assert _profile(out)["otherData"]["acl_prof"]["options"] == {"1": "on"}
