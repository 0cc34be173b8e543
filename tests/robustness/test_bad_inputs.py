"""Bad-input sweep: every pyACL function, called with the bad arguments of bad_inputs.TABLE.

For each function, each group of its bad calls runs in a fresh session prepared as the cases
need (init + set_device + the streams, events, buffers, models... the arguments refer to).
Each call must give exactly the declared outcome (the TypeError of a badly typed call, the
documented error code, or a nonzero code recorded in the trace), raise nothing else, and leave
the session as it was: live allocations, memory accounting, handles and every object's
fields, models, devices, the current context and the task queues are compared before and
after. Then the function's good call, in its own fresh session, must succeed (so each bad
call failed because of its bad argument), and every session must still finish cleanly.

Run with ``-s`` to see the summary (functions covered, bad inputs tried).
"""

from __future__ import annotations

import io
import os
import threading
import warnings
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from PIL import Image

import acl_lab
import acl_lab.aclnn as aclnn
import acl_lab.op_compiler as op_compiler
from acl_lab import zoo
from acl_lab.acl import _binding
from acl_lab.acl._boundary import registry
from acl_lab.runtime import profiling
from acl_lab.runtime.errors import DeadlockError
from acl_lab.runtime.session import Session
from tests.helpers import compile_singleop

from . import bad_inputs as T
from .bad_inputs import NO_VALUE, Bad, Ref, Row
from .media_world import MediaWorld

MIB = 1 << 20
#: A failed call may cost API time, never more than this much virtual time (1 s).
MAX_FAILED_CALL_NS = 10**9
ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE = 0x1, 0x8
NORMAL_ONLY = 2

#: bad calls tried per function (filled by the sweep, checked by the summary)
TRIED: Counter[str] = Counter()


def ok(result: Any) -> Any:
    """The value of ``(value, ret)`` / ``(v1, v2, ret)``, asserting ret is 0."""
    *value, ret = result
    assert ret == 0, f"ret={ret}"
    return value[0] if len(value) == 1 else tuple(value)


def jpeg(w: int, h: int, **save: Any) -> bytes:
    """A small RGB JPEG (a gradient) made with Pillow."""
    x = np.linspace(0, 255, w, dtype=np.uint8)
    rgb = np.stack([np.tile(x, (h, 1))] * 3, axis=-1)
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, format="JPEG", **save)
    return out.getvalue()


class World(MediaWorld):
    """The objects a row's arguments refer to, made on first use in one session."""

    def __init__(self, acl: ModuleType, session: Session, tmp: Path,
                 stale: dict[str, int]) -> None:
        self.acl = acl
        self.s = session
        self.tmp = tmp
        self.stale = stale
        self.cache: dict[str, Any] = {}
        self.keep: list[Any] = []
        self.release = threading.Event()

    def get(self, ref: Ref) -> Any:
        name = ref.name
        if name not in self.cache:
            if name.startswith("stale_"):
                self.cache[name] = self.stale[name[len("stale_"):]]
            else:
                self.cache[name] = getattr(self, "_" + name)()
        return self.cache[name]

    def resolve(self, v: Any) -> Any:
        if isinstance(v, Ref):
            return self.get(v)
        if isinstance(v, list):
            return [self.resolve(x) for x in v]
        if isinstance(v, tuple):
            return tuple(self.resolve(x) for x in v)
        return v

    def close(self) -> None:
        """Let the helper thread end and join it; close the pipe made for subscriptions."""
        if "pipe" in self.cache:
            r, w = self.cache["pipe"]
            if profiling.pipe_of(w) == profiling.pipe_of(r):  # unsubscribe may have closed w
                os.close(w)
            os.close(r)
        self.release.set()
        for t in threading.enumerate():
            if t.name.startswith("acl-thread-"):
                t.join(60)

    # ------------------------------------------------------------------ builders
    def _malloc(self, n: int = 256) -> int:
        return int(ok(self.acl.rt.malloc(n, NORMAL_ONLY)))

    def _stream(self) -> int:
        return int(ok(self.acl.rt.create_stream()))

    def _default_ctx(self) -> int:
        return int(ok(self.acl.rt.get_context()))

    def _other_ctx(self) -> int:
        acl = self.acl
        home = self.get(T.DEFAULT_CTX)
        ctx = ok(acl.rt.create_context(0))
        self.cache["other_stream"] = ok(acl.rt.create_stream())
        assert acl.rt.set_context(home) == 0
        return int(ctx)

    def _other_stream(self) -> int:
        self.get(T.OTHER_CTX)
        return int(self.cache["other_stream"])

    def _dead_stream(self) -> int:
        st = self._stream()
        assert self.acl.rt.destroy_stream(st) == 0
        return st

    def _sub_stream(self) -> int:
        st = self._stream()
        assert self.acl.rt.subscribe_report(threading.get_ident(), st) == 0
        return st

    def _dead_ctx(self) -> int:
        acl = self.acl
        home = self.get(T.DEFAULT_CTX)
        ctx = ok(acl.rt.create_context(0))
        assert acl.rt.destroy_context(ctx) == 0
        assert acl.rt.set_context(home) == 0
        return int(ctx)

    def _event(self) -> int:
        return int(ok(self.acl.rt.create_event()))

    def _recorded(self, event: int) -> int:
        st = self.get(T.STREAM)
        assert self.acl.rt.record_event(event, st) == 0
        assert self.acl.rt.synchronize_stream(st) == 0
        return event

    def _done_event(self) -> int:
        return self._recorded(self._event())

    def _done_event2(self) -> int:
        self.get(T.DONE_EVENT)
        return self._recorded(self._event())

    def _sync_event(self) -> int:
        return self._recorded(int(ok(self.acl.rt.create_event_with_flag(ACL_EVENT_SYNC))))

    def _nosync_event(self) -> int:
        return self._recorded(int(ok(self.acl.rt.create_event_with_flag(ACL_EVENT_TIME_LINE))))

    def _dead_event(self) -> int:
        e = self._event()
        assert self.acl.rt.destroy_event(e) == 0
        return e

    def _pending_event(self) -> int:
        acl = self.acl
        big = self._malloc(16 * MIB)
        st = self.get(T.STREAM)
        assert acl.rt.memset_async(big, 16 * MIB, 0, 16 * MIB, st) == 0
        e = self._event()
        assert acl.rt.record_event(e, st) == 0
        assert ok(acl.rt.query_event_status(e)) == 0  # not complete yet
        return e

    def _dev(self) -> int:
        return self._malloc()

    _dev2 = _dev3 = _dev

    def _dev_mid(self) -> int:
        return int(self.get(T.DEV)) + 32

    def _dead_dev(self) -> int:
        p = self._malloc()
        assert self.acl.rt.free(p) == 0
        return p

    def _host(self) -> int:
        return int(ok(self.acl.rt.malloc_host(256)))

    def _dead_host(self) -> int:
        p = self._host()
        assert self.acl.rt.free_host(p) == 0
        return p

    def _host_bytes(self, data: bytes) -> int:
        self.keep.append(data)
        return int(self.acl.util.bytes_to_ptr(data))

    def _pageable(self) -> int:
        return self._host_bytes(bytes(256))

    def _ndarray(self) -> np.ndarray:
        arr = np.zeros(4, np.float32)
        self.keep.append(arr)
        return arr

    def _bytes(self) -> bytes:
        data = bytes(range(16))
        self.keep.append(data)
        return data

    def _dvpp_mem(self) -> int:
        return int(ok(self.acl.media.dvpp_malloc(4096)))

    def _dead_dvpp(self) -> int:
        p = self._dvpp_mem()
        assert self.acl.media.dvpp_free(p) == 0
        return p

    def _tdesc(self, dtype: int, dims: list[int]) -> int:
        return int(self.acl.create_tensor_desc(dtype, dims, T.ACL_FORMAT_ND))

    def _desc(self) -> int:
        return self._tdesc(T.ACL_FLOAT, [2, 2])

    _desc_out = _desc

    def _desc_i32(self) -> int:
        return self._tdesc(T.ACL_INT32, [2, 2])

    def _desc_33(self) -> int:
        return self._tdesc(T.ACL_FLOAT, [3, 3])

    def _dead_desc(self) -> int:
        d = self._desc()
        self.acl.destroy_tensor_desc(d)
        return d

    def _buffer(self, ref: Ref, size: int = 16) -> int:
        return int(self.acl.create_data_buffer(self.get(ref), size))

    def _buf(self) -> int:
        return self._buffer(T.DEV)

    def _buf2(self) -> int:
        return self._buffer(T.DEV2)

    def _out_buf(self) -> int:
        return self._buffer(T.DEV3)

    def _small_buf(self) -> int:
        return self._buffer(T.DEV, 4)

    def _dead_buf(self) -> int:
        b = self._buffer(T.DEV)
        assert self.acl.destroy_data_buffer(b) == 0
        return b

    def _attr(self) -> int:
        return int(self.acl.op.create_attr())

    def _dead_attr(self) -> int:
        a = self._attr()
        self.acl.op.destroy_attr(a)
        return a

    def _op_models(self) -> bool:
        f22 = ([2, 2], "float32")
        ops = compile_singleop(self.tmp / "op_models", "Add", [f22, f22], [f22])
        assert self.acl.op.set_model_dir(str(ops)) == 0
        return True

    def _op_handle(self) -> int:
        self.get(T.OP_MODELS)
        d, o = self.get(T.DESC), self.get(T.DESC_OUT)
        return int(ok(self.acl.op.create_handle("Add", [d, d], [o], self.get(T.ATTR))))

    def _dead_op_handle(self) -> int:
        h = self._op_handle()
        self.acl.op.destroy_handle(h)
        return h

    def _model_path(self) -> str:
        return zoo.path("lenet5")

    def _missing_path(self) -> str:
        return str(self.tmp / "missing.om")

    def _not_om_path(self) -> str:
        p = self.tmp / "not_a_model.om"
        p.write_bytes(b"this is not an OM file" * 4)
        return str(p)

    def _prof_dir(self) -> str:
        return str(self.tmp / "prof")

    def _prof_cfg(self) -> int:
        return int(self.acl.prof.create_config([0], 0, 0, 0))

    def _other_prof_cfg(self) -> int:
        return int(self.acl.prof.create_config([0], 0, 0, 0))

    def _dead_prof_cfg(self) -> int:
        cfg = int(self.acl.prof.create_config([0], 0, 0, 0))
        assert self.acl.prof.destroy_config(cfg) == 0
        return cfg

    def _pipe(self) -> tuple[int, int]:
        return os.pipe()

    def _pipe_w(self) -> int:
        return self.get(Ref("pipe"))[1]

    def _sub_cfg(self) -> int:
        return int(self.acl.prof.create_subscribe_config(1, 0, self.get(T.PIPE_W)))

    def _dead_sub_cfg(self) -> int:
        cfg = int(self.acl.prof.create_subscribe_config(1, 0, self.get(T.PIPE_W)))
        assert self.acl.prof.destroy_subscribe_config(cfg) == 0
        return cfg

    def _subscribed(self) -> bool:
        assert self.acl.prof.model_subscribe(self.get(T.MODEL), self.get(T.SUB_CFG)) == 0
        return True

    def _op_bytes(self) -> bytes:
        data = b"".join(profiling.OP_RECORD.pack(1, 0, 10 + i, 20 + i, 10, b"Conv2D", b"conv1")
                        for i in range(2))
        self.keep.append(data)
        return data

    def _op_buf(self) -> int:
        return int(self.acl.util.bytes_to_ptr(self.get(Ref("op_bytes"))))

    def _op_len(self) -> int:
        return len(self.get(Ref("op_bytes")))

    def _prof_inited(self) -> bool:
        assert self.acl.prof.init(self.get(T.PROF_DIR)) == 0
        return True

    def _prof_running(self) -> bool:
        self.get(T.PROF_INITED)
        assert self.acl.prof.start(self.get(T.PROF_CFG)) == 0
        return True

    def _op_dir(self) -> str:
        return str(self.tmp)

    def _op_dir_set(self) -> bool:
        assert self.acl.op.set_model_dir(self.get(T.OP_DIR)) == 0
        return True

    def _model(self) -> int:
        return int(ok(self.acl.mdl.load_from_file(self.get(T.MODEL_PATH))))

    def _dyn_model(self) -> int:
        return int(ok(self.acl.mdl.load_from_file(zoo.path("mlp_dynamic"))))

    def _dyn_in_ds(self) -> int:
        """The dynamic model's input dataset: one buffer per input, as samples build it."""
        acl = self.acl
        desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(desc, self.get(T.DYN_MODEL)) == 0
        n = acl.mdl.get_num_inputs(desc)
        assert acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data") == (
            T.DYN_SHAPE_INDEX, 0)
        ds = acl.mdl.create_dataset()
        for i in range(n):
            size = acl.mdl.get_input_size_by_index(desc, i)
            ok(acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(self._malloc(size), size)))
        assert acl.mdl.destroy_desc(desc) == 0
        return int(ds)

    def _aipp(self) -> int:
        return int(self.acl.mdl.create_aipp(1))

    def _dead_aipp(self) -> int:
        p = self._aipp()
        assert self.acl.mdl.destroy_aipp(p) == 0
        return p

    def _unloaded_model(self) -> int:
        mid = int(ok(self.acl.mdl.load_from_file(self.get(T.MODEL_PATH))))
        assert self.acl.mdl.unload(mid) == 0
        return mid

    def _empty_mdesc(self) -> int:
        return int(self.acl.mdl.create_desc())

    def _mdesc(self) -> int:
        d = self._empty_mdesc()
        assert self.acl.mdl.get_desc(d, self.get(T.MODEL)) == 0
        return d

    def _dead_mdesc(self) -> int:
        d = self._empty_mdesc()
        assert self.acl.mdl.destroy_desc(d) == 0
        return d

    def _dataset(self, size: int, buf_size: int | None = None) -> int:
        acl = self.acl
        ds = acl.mdl.create_dataset()
        buf = acl.create_data_buffer(self._malloc(size), size if buf_size is None else buf_size)
        ok(acl.mdl.add_dataset_buffer(ds, buf))
        return int(ds)

    def _in_ds(self) -> int:
        return self._dataset(self.acl.mdl.get_input_size_by_index(self.get(T.MDESC), 0))

    def _out_ds(self) -> int:
        return self._dataset(self.acl.mdl.get_output_size_by_index(self.get(T.MDESC), 0))

    def _small_in_ds(self) -> int:
        need = self.acl.mdl.get_input_size_by_index(self.get(T.MDESC), 0)
        return self._dataset(need, need - 65)

    def _empty_ds(self) -> int:
        return int(self.acl.mdl.create_dataset())

    def _dead_ds(self) -> int:
        ds = self._empty_ds()
        assert self.acl.mdl.destroy_dataset(ds) == 0
        return ds

    def _om_bytes(self) -> bytes:
        return Path(zoo.path("lenet5")).read_bytes()

    def _om_ptr(self) -> int:
        data = self._om_bytes()
        self.cache["om_size"] = len(data)
        return self._host_bytes(data)

    def _om_size(self) -> int:
        self.get(T.OM_PTR)
        return int(self.cache["om_size"])

    def _work_size(self) -> int:
        work, weight = ok(self.acl.mdl.query_size(self.get(T.MODEL_PATH)))
        self.cache["weight_size"] = int(weight)
        return int(work)

    def _weight_size(self) -> int:
        self.get(T.WORK_SIZE)
        return int(self.cache["weight_size"])

    def _work(self) -> int:
        return self._malloc(max(1, self.get(T.WORK_SIZE)))

    def _weight(self) -> int:
        return self._malloc(max(1, self.get(T.WEIGHT_SIZE)))

    def _chan_desc(self) -> int:
        return int(self.acl.media.dvpp_create_channel_desc())

    def _chan(self) -> int:
        d = self._chan_desc()
        assert self.acl.media.dvpp_create_channel(d) == 0
        return d

    def _dead_chan_desc(self) -> int:
        d = self._chan_desc()
        assert self.acl.media.dvpp_destroy_channel_desc(d) == 0
        return d

    def _pic(self) -> int:
        return int(self.acl.media.dvpp_create_pic_desc())

    def _dead_pic(self) -> int:
        d = self._pic()
        assert self.acl.media.dvpp_destroy_pic_desc(d) == 0
        return d

    def _cfg(self) -> int:
        return int(self.acl.media.dvpp_create_resize_config())

    def _dead_cfg(self) -> int:
        c = self._cfg()
        assert self.acl.media.dvpp_destroy_resize_config(c) == 0
        return c

    def _jpeg_host(self) -> int:
        data = jpeg(64, 64)
        self.cache["jpeg_size"] = len(data)
        self.cache["jpeg_bytes"] = data
        return self._host_bytes(data)

    def _jpeg_size(self) -> int:
        self.get(T.JPEG_HOST)
        return int(self.cache["jpeg_size"])

    def _to_dvpp(self, data: bytes) -> int:
        acl = self.acl
        dev = int(ok(acl.media.dvpp_malloc(len(data))))
        src = self._host_bytes(data)
        assert acl.rt.memcpy(dev, len(data), src, len(data), T.H2D) == 0
        return dev

    def _jpeg_dev(self) -> int:
        self.get(T.JPEG_HOST)
        return self._to_dvpp(self.cache["jpeg_bytes"])

    def _png_host(self) -> int:
        x = np.linspace(0, 255, 64, dtype=np.uint8)
        out = io.BytesIO()
        Image.fromarray(np.stack([np.tile(x, (64, 1))] * 3, axis=-1)).save(out, format="PNG")
        data = out.getvalue()
        self.cache["png_size"] = len(data)
        self.cache["png_bytes"] = data
        return self._host_bytes(data)

    def _png_size(self) -> int:
        self.get(T.PNG_HOST)
        return int(self.cache["png_size"])

    def _png_dev(self) -> int:
        self.get(T.PNG_HOST)
        return self._to_dvpp(self.cache["png_bytes"])

    def _png_pic(self) -> int:
        m = self.acl.media
        ws, hs = 128 * 3, 64  # PNGD RGB888: align(w, 128) * 3 bytes x align(h, 16)
        d = self._pic()
        buf = int(ok(m.dvpp_malloc(ws * hs)))
        for setter, v in ((m.dvpp_set_pic_desc_data, buf), (m.dvpp_set_pic_desc_size, ws * hs),
                          (m.dvpp_set_pic_desc_format, 12), (m.dvpp_set_pic_desc_width, 64),
                          (m.dvpp_set_pic_desc_height, 64),
                          (m.dvpp_set_pic_desc_width_stride, ws),
                          (m.dvpp_set_pic_desc_height_stride, hs)):
            assert setter(d, v) == 0
        return d

    def _prog_dev(self) -> int:
        data = jpeg(64, 64, progressive=True)
        self.cache["prog_size"] = len(data)
        return self._to_dvpp(data)

    def _prog_size(self) -> int:
        self.get(T.PROG_DEV)
        return int(self.cache["prog_size"])

    def _yuv_pic(self, w: int, h: int, ws: int, hs: int) -> int:
        m = self.acl.media
        size = ws * hs * 3 // 2
        d = self._pic()
        buf = int(ok(m.dvpp_malloc(size)))
        for setter, v in ((m.dvpp_set_pic_desc_data, buf), (m.dvpp_set_pic_desc_size, size),
                          (m.dvpp_set_pic_desc_format, 1), (m.dvpp_set_pic_desc_width, w),
                          (m.dvpp_set_pic_desc_height, h),
                          (m.dvpp_set_pic_desc_width_stride, ws),
                          (m.dvpp_set_pic_desc_height_stride, hs)):
            assert setter(d, v) == 0
        return d

    def _dec_pic(self) -> int:
        return self._yuv_pic(64, 64, 64, 64)  # JPEGD on 310P: align(w, 64) x align(h, 16)

    def _vpc_in(self) -> int:
        return self._yuv_pic(64, 64, 64, 64)

    def _vpc_out(self) -> int:
        return self._yuv_pic(32, 32, 32, 32)

    def _tid(self) -> int:
        return int(ok(self.acl.util.start_thread(lambda: self.release.wait(30), None)))

    def _done_tid(self) -> int:
        tid = int(ok(self.acl.util.start_thread(T.noop, None)))
        for t in threading.enumerate():
            if t.ident == tid:
                t.join(60)
        return tid

    def _main_tid(self) -> int:
        return threading.get_ident()

    def _report_ready(self) -> bool:
        assert self.acl.rt.launch_callback(T.noop, None, 0, self.get(T.SUB_STREAM)) == 0
        return True

    def _tensor(self, ref: Ref) -> int:
        return int(aclnn.create_tensor([2, 2], T.ACL_FLOAT, self.get(ref)))

    def _nt_a(self) -> int:
        return self._tensor(T.DEV)

    def _nt_b(self) -> int:
        return self._tensor(T.DEV2)

    def _nt_out(self) -> int:
        return self._tensor(T.DEV3)

    def _dead_nt(self) -> int:
        t = self._tensor(T.DEV)
        assert aclnn.destroy_tensor(t) == 0
        return t

    def _nt_scalar(self) -> int:
        return int(aclnn.create_scalar(1.0, T.ACL_FLOAT))

    def _dead_scalar(self) -> int:
        sc = self._nt_scalar()
        assert aclnn.destroy_scalar(sc) == 0
        return sc

    def _add_exec(self) -> int:
        g = self.get
        return int(ok(aclnn.add_get_workspace_size(g(T.NT_A), g(T.NT_B), g(T.NT_SCALAR),
                                                   g(T.NT_OUT)))[1])

    _nt_exec = _add_exec

    def _used_exec(self) -> int:
        ex = self._add_exec()
        assert aclnn.add(0, 0, ex, self.get(T.STREAM)) == 0
        return ex

    def _nt_mm_exec(self) -> int:
        g = self.get
        return int(ok(aclnn.matmul_get_workspace_size(g(T.NT_A), g(T.NT_B), g(T.NT_OUT)))[1])

    def _nt_relu_exec(self) -> int:
        return int(ok(aclnn.relu_get_workspace_size(self.get(T.NT_A), self.get(T.NT_OUT)))[1])

    def _nt_sm_exec(self) -> int:
        g = self.get
        return int(ok(aclnn.softmax_get_workspace_size(g(T.NT_A), -1, g(T.NT_OUT)))[1])

    def _ws(self) -> int:
        return self._malloc(256)

    def _ws_size(self) -> int:
        return 256


STALE_OBJECTS = {"stream": T.STREAM, "event": T.EVENT, "ctx": T.OTHER_CTX, "dev": T.DEV,
                 "host": T.HOST, "dvpp": T.DVPP_MEM, "desc": T.DESC, "buf": T.BUF,
                 "attr": T.ATTR, "op_handle": T.OP_HANDLE, "mdesc": T.MDESC, "ds": T.IN_DS,
                 "chan_desc": T.CHAN_DESC, "pic": T.PIC, "cfg": T.CFG, "nt": T.NT_A,
                 "scalar": T.NT_SCALAR, "exec": T.NT_EXEC}


@pytest.fixture(scope="module")
def stale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    """Handles and pointers of a session that was finalized (and finished) before.

    Handles and device addresses are deterministic per session, so the stale ones are made
    after padding (400 handles, 256 MiB of device and 64 MiB of DVPP memory): they cannot
    coincide with what a row's fresh session hands out. The stale malloc_host block's bytes
    are kept alive so the host allocator cannot give its address to a new session either.
    """
    tmp = tmp_path_factory.mktemp("stale")
    s = Session(watchdog=2.0)
    kept: list[Any] = []
    with s:
        acl = acl_lab.install()
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            for _ in range(400):
                acl.create_tensor_desc(0, [1], 2)
            ok(acl.rt.malloc(256 * MIB, NORMAL_ONLY))
            ok(acl.media.dvpp_malloc(64 * MIB))
            w = World(acl, s, tmp, {})
            out = {k: int(w.get(ref)) for k, ref in STALE_OBJECTS.items()}
            region = s.memory.find(out["host"])
            assert region is not None
            kept.append(region.buf)
            assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
            s.finish()
        finally:
            acl_lab.uninstall()
    yield out
    kept.clear()


# ------------------------------------------------------------------------------ state


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (int, float, str, bytes, bool))


def _digest(v: Any) -> Any:
    if _scalar(v):
        return v
    if isinstance(v, (list, tuple, deque)):
        return tuple(x if _scalar(x) else type(x).__name__ for x in v)
    if isinstance(v, dict):
        return tuple(sorted((str(k), _digest(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        return ("ndarray", v.shape)
    return type(v).__name__


def _fields(obj: Any) -> tuple[Any, ...]:
    names = list(getattr(obj, "__dict__", {})) or list(getattr(type(obj), "__slots__", ()))
    return (type(obj).__name__, *((n, _digest(getattr(obj, n, None))) for n in sorted(names)))


def snapshot(s: Session, thread: Any) -> dict[str, Any]:
    """What a failed call must not change."""
    mem = s.memory
    return {
        "regions": [(r.id, r.kind, r.addr, r.size, r.accounted, r.live)
                    for r in mem.live.values()],
        "region_count": mem.region_count,
        "freed": [r.id for r in mem.graveyard.regions],
        "device_used": [(d.used, tuple(d.used_by_pool)) for d in mem.devices],
        "pinned_used": mem.pinned_used,
        "handles": len(s.handles),
        "objects": [_fields(o) for o in s.objects],
        "models": [(mid, lm.alive, len(lm.regions), lm.ctx.oid) for mid, lm in s.models.items()],
        "next_model_id": s.next_model_id,
        "devices": [(d.refcount, d.default_ctx.oid if d.default_ctx else -1, len(d.contexts))
                    for d in s.devices],
        "init": (s.init_count, s.finalized),
        "tasks": s.task_count,
        "op_model_dir": s.op_model_dir,
        "ctx": thread.ctx.oid if thread is not None and thread.ctx is not None else -1,
        "threads": [(t.idx, t.ctx.oid if t.ctx else -1, len(t.subscriptions), len(t.reports))
                    for t in s.thread_list],
    }


def changed(before: dict[str, Any], after: dict[str, Any], allowed: tuple[str, ...]) -> list[str]:
    """Snapshot keys that differ (a thread that called for the first time may be added)."""
    out = []
    for k, v in before.items():
        w = after[k]
        if k == "threads":
            w = w[:len(v)]
        if v != w and k not in allowed:
            out.append(k)
    return out


# ------------------------------------------------------------------------------ calling


def function(acl: ModuleType, name: str) -> Any:
    """The emulated function called ``name`` (``acl.rt.malloc``, ``acl_lab.aclnn.add``)."""
    if name.startswith("acl_lab.aclnn."):
        return getattr(aclnn, name.rsplit(".", 1)[1])
    if name.startswith("acl_lab.op_compiler."):
        return getattr(op_compiler, name.rsplit(".", 1)[1])
    obj: Any = acl
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def invoke(fn: Any, args: tuple[Any, ...], in_thread: bool) -> tuple[Any, BaseException | None]:
    """Call ``fn(*args)`` here or in a new thread; returns (result, exception)."""
    box: dict[str, Any] = {"result": None, "error": None}

    def run() -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                box["result"] = fn(*args)
        except BaseException as e:  # reported by the caller
            box["error"] = e

    if in_thread:
        t = threading.Thread(target=run)
        t.start()
        t.join(60)
        assert not t.is_alive(), "the call did not return"
    else:
        run()
    return box["result"], box["error"]


def split(name: str, result: Any) -> tuple[Any, int | None]:
    """(value, ret) of a result by the function's return shape (ret None: only in the trace)."""
    out = registry()[name]["out"]
    if out == 0:
        return NO_VALUE, result
    if out in ("value", "none"):
        return result, None
    assert isinstance(result, tuple) and len(result) == out + 1, result
    value = result[0] if out == 1 else tuple(result[:-1])
    return value, result[-1]


class Sandbox:
    """One fresh session for a group of cases: setup, world, call and teardown."""

    def __init__(self, setup: str, tmp: Path, stale: dict[str, int]) -> None:
        self.s = Session(watchdog=2.0)
        self.s.__enter__()
        self.acl = acl_lab.install()
        acl = self.acl
        if setup != T.BARE:
            assert acl.init() == 0
        if setup in (T.READY, T.THREAD):
            assert acl.rt.set_device(0) == 0
        if setup == T.FINALIZED:
            assert acl.finalize() == 0
        self.main = self.s.thread()
        self.world = World(acl, self.s, tmp, stale)

    def close(self) -> None:
        try:
            self.world.close()
            self.s.finish()
        finally:
            acl_lab.uninstall()
            self.s.__exit__(None, None, None)


def check_bad(name: str, bad: Bad, sess: Sandbox) -> str | None:
    """Run one bad call; returns what went wrong, or None."""
    s, world = sess.s, sess.world
    for ref in bad.needs:
        world.get(ref)
    args = world.resolve(bad.args)
    for a, raw in zip(args, bad.args, strict=False):
        if isinstance(raw, Ref) and raw.name.startswith("stale_"):
            assert a not in s.handles and s.memory.find(a) is None, \
                f"stale {raw!r} coincides with a live object of this session"
    fn = function(sess.acl, name)
    rows = len(s.trace().api_calls())  # (a new thread's own rows are host operations)
    before = snapshot(s, sess.main)
    clocks = [t.clock for t in s.thread_list]
    result, err = invoke(fn, args, bad.setup == T.THREAD)
    spent = max((t.clock - (clocks[i] if i < len(clocks) else 0)
                 for i, t in enumerate(s.thread_list)), default=0)
    trace = s.trace()
    calls = trace.calls
    api = trace.api_calls()
    new = len(api) - rows
    last = int(api[-1]) if new else -1
    last_ret = int(calls["ret"][last]) if new else None
    last_name = trace.call_name(last) if new else None
    e = bad.expect
    where = f"{name}{bad.args!r} [{bad.why}]"
    if e.kind == "ignored":  # succeeds like the good call; its effects are the good call's
        if err is not None:
            return f"{where}: raised {err!r}"
        if new != 1 or last_name != name or last_ret != 0:
            return f"{where}: {new} trace rows, ret {last_ret}: the call did not succeed"
        return None
    if e.kind in ("type_error", "value_error"):
        want = TypeError if e.kind == "type_error" else ValueError
        if not isinstance(err, want):
            return f"{where}: expected {want.__name__}, got {err!r} / result {result!r}"
        if want is TypeError and not binding_type_error(name, str(err)):
            return f"{where}: TypeError message {str(err)!r}"
        if new not in (0, 1) or (new and (last_name != name or last_ret != -1)):
            return f"{where}: {new} trace rows for a call that raised"
    else:
        if err is not None:
            kind = "DeadlockError" if isinstance(err, DeadlockError) else type(err).__name__
            return f"{where}: raised {kind}: {err}"
        if new != 1 or last_name != name:
            return f"{where}: not in the trace ({new} new rows)"
        value, ret = split(name, result)
        if ret is not None and ret != last_ret:
            return f"{where}: returned {ret}, the trace says {last_ret}"
        got = last_ret if ret is None else ret
        if e.kind == "code" and got != e.code:
            return f"{where}: ret {got}, expected {e.code}"
        if e.kind == "nonzero" and not got:
            return f"{where}: ret 0 (succeeded), expected a failure"
        if e.value is not NO_VALUE and value != e.value:
            return f"{where}: value {value!r}, expected {e.value!r}"
    diff = changed(before, snapshot(s, sess.main), bad.may_change)
    if diff:
        return f"{where}: the failed call changed {', '.join(diff)}"
    if spent > MAX_FAILED_CALL_NS:
        return f"{where}: the failed call took {spent / 1e9:g} s of virtual time"
    return None


def binding_type_error(name: str, text: str) -> bool:
    """Whether ``text`` is a TypeError the real binding gives for ``name``: its parse-failure
    text (a detail may follow it), a post-parse check's text, or, where the binding lets
    CPython's own message through, any text."""
    entry = _binding.BY_NAME.get(name)
    want = entry.message() if entry is not None else f"{name} args parse failed"
    if want is None or text in _binding.POST_PARSE.get(name, ()):
        return True
    return text == want or text.startswith(want.rstrip("!") + ":")


def check_good(row: Row, sess: Sandbox) -> str | None:
    """The row's good call, in its own session: it must succeed."""
    world = sess.world
    for ref in row.needs:
        world.get(ref)
    args = world.resolve(row.good)
    result, err = invoke(function(sess.acl, row.name), args, False)
    if err is not None:
        return f"good call {row.name}{row.good!r} raised {err!r}"
    _, ret = split(row.name, result)
    trace = sess.s.trace()
    got = int(trace.calls["ret"][-1]) if ret is None else ret
    if got != row.good_ret:
        return f"good call {row.name}{row.good!r} returned {got}"
    return None


# ------------------------------------------------------------------------------ tests


def test_every_function_has_a_row() -> None:
    """A function added to the pyACL surface without a row here fails this test."""
    names = set(registry())
    missing = sorted(names - set(T.TABLE))
    assert not missing, f"functions without a row in bad_inputs.TABLE: {missing}"
    assert not sorted(set(T.TABLE) - names), "rows for functions that do not exist"
    assert all(row.bad for row in T.TABLE.values())


@pytest.mark.parametrize("name", sorted(T.TABLE))
def test_bad_inputs(name: str, stale: dict[str, int], tmp_path: Path) -> None:
    """Every bad call of ``name`` gives its outcome and changes nothing; the good call works."""
    row = T.TABLE[name]
    groups: dict[tuple[str, tuple[Ref, ...]], list[Bad]] = {}
    for bad in row.bad:
        groups.setdefault((bad.setup, bad.needs), []).append(bad)
    problems: list[str] = []
    for (setup, _needs), cases in groups.items():
        sess = Sandbox(setup, tmp_path, stale)
        try:
            for bad in cases:
                msg = check_bad(name, bad, sess)
                TRIED[name] += 1
                if msg:
                    problems.append(msg)
        finally:
            sess.close()
    sess = Sandbox(row.setup, tmp_path, stale)
    try:
        msg = check_good(row, sess)
        if msg:
            problems.append(msg)
    finally:
        sess.close()
    assert not problems, "\n".join(problems)


def test_summary(request: pytest.FixtureRequest) -> None:
    """Print what the sweep covered; every row that ran tried all the calls it declares."""
    functions, declared = T.declared_counts()
    items: list[Any] = list(request.session.items)
    swept = {item.callspec.params["name"] for item in items
             if getattr(item, "originalname", "") == "test_bad_inputs"}
    assert set(TRIED) == swept, f"rows that did not run: {sorted(swept - set(TRIED))}"
    for n, c in TRIED.items():
        assert c == len(T.TABLE[n].bad), f"{n}: tried {c} of {len(T.TABLE[n].bad)}"
    if swept == set(T.TABLE):
        assert sum(TRIED.values()) == declared
    kinds = Counter(b.expect.kind for n in swept for b in T.TABLE[n].bad)
    print(f"\nbad-input sweep: {len(TRIED)} of {functions} functions, "
          f"{sum(TRIED.values())} of {declared} bad calls tried "
          f"({kinds['type_error']} TypeError, {kinds['value_error']} ValueError, "
          f"{kinds['code']} documented codes, {kinds['nonzero']} nonzero codes)")
