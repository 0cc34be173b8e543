"""``acl.media`` DVPP subset: channels, pic descs, JPEG info/decode, VPC resize, sample order."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from PIL import Image

import acl_lab
from acl_lab.runtime.dvpp import parse_jpeg_header, resize_plane
from acl_lab.runtime.errors import AclError
from acl_lab.runtime.session import Session
from acl_lab.tracer.schema import ENGINES, TASK_KINDS

H2D, D2H = 1, 2
NV12, NV21 = 1, 2


def align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def gradient(w: int, h: int) -> np.ndarray:
    """An RGB gradient picture (smooth, so JPEG keeps it close)."""
    x = np.linspace(0, 255, w)[None, :].repeat(h, 0)
    y = np.linspace(0, 255, h)[:, None].repeat(w, 1)
    return np.stack([x, y, (x + y) / 2], -1).astype(np.uint8)


def make_jpeg(w: int, h: int, mode: str = "RGB", **save: Any) -> bytes:
    rgb = gradient(w, h)
    im = Image.fromarray(rgb)
    if mode != "RGB":
        im = im.convert(mode)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=95, **save)
    return buf.getvalue()


def pillow_ycbcr(jpg: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(jpg)).convert("YCbCr")).astype(int)


def host_ptr(acl: ModuleType, data: bytes) -> tuple[int, np.ndarray]:
    arr = np.frombuffer(data, dtype=np.uint8).copy()
    with pytest.warns(Warning):
        return acl.util.numpy_to_ptr(arr), arr


def to_device(acl: ModuleType, data: bytes, dvpp: bool = True) -> int:
    n = len(data)
    p, ret = acl.media.dvpp_malloc(n) if dvpp else acl.rt.malloc(n, 0)
    assert ret == 0
    assert acl.rt.memcpy(p, n, acl.util.bytes_to_ptr(data), n, H2D) == 0
    return int(p)


def read_back(acl: ModuleType, ptr: int, n: int) -> np.ndarray:
    out = bytes(n)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), n, ptr, n, D2H) == 0
    return np.frombuffer(out, dtype=np.uint8)


def pic(acl: ModuleType, data: int, size: int, fmt: int, w: int, h: int, ws: int,
        hs: int) -> int:
    d = acl.media.dvpp_create_pic_desc()
    assert d != 0
    m = acl.media
    for fn, v in ((m.dvpp_set_pic_desc_data, data), (m.dvpp_set_pic_desc_size, size),
                  (m.dvpp_set_pic_desc_format, fmt), (m.dvpp_set_pic_desc_width, w),
                  (m.dvpp_set_pic_desc_height, h), (m.dvpp_set_pic_desc_width_stride, ws),
                  (m.dvpp_set_pic_desc_height_stride, hs)):
        assert fn(d, v) == 0
    return int(d)


def planes(buf: np.ndarray, w: int, h: int, ws: int, hs: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = buf[:ws * hs].reshape(hs, ws)[:h, :w]
    uv = buf[ws * hs:ws * hs * 3 // 2].reshape(hs // 2, ws)[:(h + 1) // 2, :2 * ((w + 1) // 2)]
    return y, uv[:, 0::2], uv[:, 1::2]


class Dvpp:
    """A channel and a stream ready for decode/resize."""

    def __init__(self, acl: ModuleType) -> None:
        self.acl = acl
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0
        self.chan = acl.media.dvpp_create_channel_desc()
        assert acl.media.dvpp_create_channel(self.chan) == 0

    def decode(self, jpg: bytes, fmt: int = NV12, dvpp: bool = True, wa: int = 64,
               sync: bool = True) -> tuple[int, int, int, int, int]:
        """Decode ``jpg``; returns (out desc, out ptr, size, wStride, hStride)."""
        acl = self.acl
        info = parse_jpeg_header(jpg)
        ws, hs = align(info.width, wa), align(info.height, 16)
        size = ws * hs * 3 // 2
        inp = to_device(acl, jpg, dvpp)
        out, ret = acl.media.dvpp_malloc(size)
        assert ret == 0
        d = pic(acl, out, size, fmt, info.width, info.height, ws, hs)
        assert acl.media.dvpp_jpeg_decode_async(self.chan, inp, len(jpg), d, self.stream) == 0
        if sync:
            assert acl.rt.synchronize_stream(self.stream) == 0
        return d, out, size, ws, hs


@pytest.fixture
def dv(ready: ModuleType) -> Dvpp:
    return Dvpp(ready)


# ------------------------------------------------------------------ channels and descs


def test_channel_lifecycle_and_destroy_order(ready: ModuleType) -> None:
    m = ready.media
    cd = m.dvpp_create_channel_desc()
    assert cd != 0
    assert m.dvpp_set_channel_desc_mode(cd, 2) == 0
    assert m.dvpp_destroy_channel(cd) == 100000          # no channel yet
    assert m.dvpp_create_channel(cd) == 0
    assert m.dvpp_create_channel(cd) == 100000           # one channel per desc
    assert m.dvpp_destroy_channel_desc(cd) == 148051     # channel still exists
    assert "dvpp_destroy_channel" in ready.get_recent_err_msg()
    assert m.dvpp_destroy_channel(cd) == 0
    assert m.dvpp_destroy_channel_desc(cd) == 0
    assert m.dvpp_destroy_channel_desc(cd) == 100000     # already destroyed
    assert m.dvpp_create_channel(0) == 100000


def test_create_channel_needs_a_context(acl: ModuleType) -> None:
    assert acl.init() == 0
    cd = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(cd) == 107002


def test_pic_desc_setters_and_getters(ready: ModuleType) -> None:
    m = ready.media
    d = m.dvpp_create_pic_desc()
    values = {"data": 0x1234_0000, "size": 4608, "format": NV12, "width": 64, "height": 48,
              "width_stride": 64, "height_stride": 48}
    for name in values:
        assert getattr(m, f"dvpp_get_pic_desc_{name}")(d) == 0
    for name, v in values.items():
        assert getattr(m, f"dvpp_set_pic_desc_{name}")(d, v) == 0
    for name, v in values.items():
        assert getattr(m, f"dvpp_get_pic_desc_{name}")(d) == v
    assert m.dvpp_get_pic_desc_ret_code(d) == 0
    with pytest.raises(TypeError, match="args parse failed"):
        m.dvpp_set_pic_desc_width(d, "64")
    assert m.dvpp_set_pic_desc_width(0, 64) == 100000
    assert m.dvpp_get_pic_desc_width(0) == 0
    assert m.dvpp_destroy_pic_desc(d) == 0
    assert m.dvpp_destroy_pic_desc(d) == 100000
    assert m.dvpp_get_pic_desc_width(d) == 0


def test_resize_config_interpolation(ready: ModuleType) -> None:
    m = ready.media
    cfg = m.dvpp_create_resize_config()
    assert m.dvpp_get_resize_config_interpolation(cfg) == 0
    assert m.dvpp_set_resize_config_interpolation(cfg, 2) == 0
    assert m.dvpp_get_resize_config_interpolation(cfg) == 2
    assert m.dvpp_set_resize_config_interpolation(cfg, 6) == 100000
    assert m.dvpp_get_resize_config_interpolation(cfg) == 2
    assert m.dvpp_destroy_resize_config(cfg) == 0
    assert m.dvpp_destroy_resize_config(cfg) == 100000


# ------------------------------------------------------------------ JPEG header queries


@pytest.mark.parametrize(("save", "mode", "comps", "fmt"), [
    ({"subsampling": 2}, "RGB", 3, 2),   # 4:2:0
    ({"subsampling": 1}, "RGB", 3, 1),   # 4:2:2
    ({"subsampling": 0}, "RGB", 3, 0),   # 4:4:4
    ({}, "L", 1, 3),                     # gray
])
def test_get_image_info(ready: ModuleType, save: dict[str, int], mode: str, comps: int,
                        fmt: int) -> None:
    jpg = make_jpeg(64, 48, mode, **save)
    hp, _keep = host_ptr(ready, jpg)
    assert ready.media.dvpp_jpeg_get_image_info(hp, len(jpg)) == (64, 48, comps, 0)
    assert ready.media.dvpp_jpeg_get_image_info_v2(hp, len(jpg)) == (64, 48, comps, fmt, 0)


def test_get_image_info_progressive_is_described(ready: ModuleType) -> None:
    jpg = make_jpeg(64, 48, progressive=True)
    assert parse_jpeg_header(jpg).sof == 2
    hp, _keep = host_ptr(ready, jpg)
    assert ready.media.dvpp_jpeg_get_image_info(hp, len(jpg)) == (64, 48, 3, 0)


def test_get_image_info_errors(ready: ModuleType) -> None:
    m = ready.media
    jpg = make_jpeg(64, 48)
    assert m.dvpp_jpeg_get_image_info(0, 10) == (0, 0, 0, 100000)
    dev = to_device(ready, jpg)
    assert m.dvpp_jpeg_get_image_info(dev, len(jpg)) == (0, 0, 0, 100000)
    assert "host memory" in ready.get_recent_err_msg()
    hp, _keep = host_ptr(ready, b"not a jpeg at all")
    assert m.dvpp_jpeg_get_image_info(hp, 17) == (0, 0, 0, 100000)
    assert "SOI" in ready.get_recent_err_msg()
    hp2, _keep2 = host_ptr(ready, jpg[:20])               # cut before the SOF segment
    assert m.dvpp_jpeg_get_image_info_v2(hp2, 20) == (0, 0, 0, 0, 100000)
    assert m.dvpp_jpeg_predict_dec_size(hp2, 20, NV12) == (0, 100000)


@pytest.mark.parametrize(("profile", "w", "h", "fmt", "want"), [
    ("Ascend310P3", 64, 48, NV12, 64 * 48 * 3 // 2),
    ("Ascend310P3", 60, 40, NV12, 64 * 48 * 3 // 2),
    ("Ascend310", 60, 40, NV12, 128 * 48 * 3 // 2),
    ("Ascend910B1", 60, 40, NV21, 64 * 48 * 3 // 2),
    ("Ascend310P3", 1024, 768, NV12, 1024 * 768 * 3 // 2),
    ("Ascend310P3", 60, 40, 5, 64 * 48 * 3),              # YUV444SP
])
def test_predict_dec_size(profile: str, w: int, h: int, fmt: int, want: int) -> None:
    with Session(profile=profile, watchdog=2.0):
        acl = acl_lab.install()
        try:
            jpg = make_jpeg(w, h)
            hp, _keep = host_ptr(acl, jpg)
            assert acl.media.dvpp_jpeg_predict_dec_size(hp, len(jpg), fmt) == (want, 0)
            assert acl.media.dvpp_jpeg_predict_dec_size(hp, len(jpg), 12) == (0, 100000)
        finally:
            acl_lab.uninstall()


def test_parse_header_rejects_garbage() -> None:
    with pytest.raises(AclError):
        parse_jpeg_header(b"\xff\xd8\xff\xda\x00\x02")
    with pytest.raises(AclError):
        parse_jpeg_header(b"\xff\xd8\x00")


# ------------------------------------------------------------------ decode


def test_decode_64x48_matches_pillow(dv: Dvpp) -> None:
    acl = dv.acl
    jpg = make_jpeg(64, 48)
    d, out, size, ws, hs = dv.decode(jpg)
    assert acl.media.dvpp_get_pic_desc_width(d) == 64
    assert acl.media.dvpp_get_pic_desc_height(d) == 48
    assert acl.media.dvpp_get_pic_desc_ret_code(d) == 0
    y, u, v = planes(read_back(acl, out, size), 64, 48, ws, hs)
    ref = pillow_ycbcr(jpg)
    assert np.abs(y.astype(int) - ref[:, :, 0]).max() <= 2
    cb = ref[:, :, 1].reshape(24, 2, 32, 2).mean(axis=(1, 3))
    cr = ref[:, :, 2].reshape(24, 2, 32, 2).mean(axis=(1, 3))
    assert np.abs(u - cb).max() <= 3
    assert np.abs(v - cr).max() <= 3


def test_decode_1024x768_task_on_dvpp_engine(dv: Dvpp, session: Session) -> None:
    acl = dv.acl
    jpg = make_jpeg(1024, 768)
    _, out, size, ws, hs = dv.decode(jpg)
    assert (ws, hs) == (1024, 768)
    y, _, _ = planes(read_back(acl, out, size), 1024, 768, ws, hs)
    assert np.abs(y.astype(int) - pillow_ycbcr(jpg)[:, :, 0]).max() <= 2
    t = session.trace()
    tasks = t.tasks
    rows = [i for i in range(tasks.rows) if TASK_KINDS[int(tasks["kind"][i])] == "dvpp"]
    assert len(rows) == 1
    i = rows[0]
    assert ENGINES[int(tasks["engine"][i])] == "dvpp"
    p = session.profile
    want = p.dvpp_setup_ns + int(1024 * 768 / p.dvpp_pixels_per_ns)
    assert int(tasks["end_ns"][i]) - int(tasks["start_ns"][i]) == want


def test_decode_nv21_and_gray(dv: Dvpp) -> None:
    acl = dv.acl
    jpg = make_jpeg(64, 48)
    _, out1, size, ws, hs = dv.decode(jpg, NV12)
    _, out2, _, _, _ = dv.decode(jpg, NV21)
    _, u1, v1 = planes(read_back(acl, out1, size), 64, 48, ws, hs)
    _, v2, u2 = planes(read_back(acl, out2, size), 64, 48, ws, hs)
    assert np.array_equal(u1, u2) and np.array_equal(v1, v2)
    gray = make_jpeg(64, 48, "L")
    _, out3, size3, ws3, hs3 = dv.decode(gray)
    y, u, v = planes(read_back(acl, out3, size3), 64, 48, ws3, hs3)
    assert (u == 128).all() and (v == 128).all()
    assert np.abs(y.astype(int) - np.asarray(Image.open(io.BytesIO(gray)), int)).max() <= 1


def test_decode_fills_width_and_height_when_the_task_completes(dv: Dvpp) -> None:
    acl = dv.acl
    jpg = make_jpeg(64, 48)
    inp = to_device(acl, jpg)
    size = 64 * 48 * 3 // 2
    out, _ = acl.media.dvpp_malloc(size)
    d = pic(acl, out, size, NV12, 0, 0, 64, 48)
    assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, len(jpg), d, dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_width(d) == 0      # not yet: the task is queued
    assert acl.rt.synchronize_stream(dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_width(d) == 64
    assert acl.media.dvpp_get_pic_desc_height(d) == 48


def test_decode_unset_strides_are_filled(dv: Dvpp) -> None:
    acl = dv.acl
    jpg = make_jpeg(60, 40)
    inp = to_device(acl, jpg)
    size = 64 * 48 * 3 // 2
    out, _ = acl.media.dvpp_malloc(size)
    d = pic(acl, out, size, NV12, 60, 40, 0, 0)
    assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, len(jpg), d, dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_width_stride(d) == 64
    assert acl.media.dvpp_get_pic_desc_height_stride(d) == 48


def test_decode_accepts_device_memory_with_a_warning(dv: Dvpp, session: Session) -> None:
    dv.decode(make_jpeg(64, 48), dvpp=False)
    t = session.trace()
    kinds = [t.string(int(k)) for k in t.diags["kind"]]
    assert "dvpp_memory" in kinds


def test_decode_after_async_copy_on_the_same_stream(dv: Dvpp) -> None:
    """The JPEG bytes arrive by memcpy_async: decode validates them when the task runs."""
    acl = dv.acl
    jpg = make_jpeg(64, 48)
    n = len(jpg)
    host, ret = acl.rt.malloc_host(n)
    assert ret == 0
    view = acl.util.ptr_to_numpy(host, (n,), 2)  # NPY_UBYTE
    view[:] = np.frombuffer(jpg, np.uint8)
    inp, _ = acl.media.dvpp_malloc(n)
    size = 64 * 48 * 3 // 2
    out, _ = acl.media.dvpp_malloc(size)
    d = pic(acl, out, size, NV12, 64, 48, 64, 48)
    unset = pic(acl, out, size, NV12, 64, 48, 0, 0)
    assert acl.rt.memcpy_async(inp, n, host, n, H2D, dv.stream) == 0
    # the copy is still in flight: strides cannot be derived from the header yet
    assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, n, unset, dv.stream) == 100000
    assert "in flight" in acl.get_recent_err_msg()
    assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, n, d, dv.stream) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_ret_code(d) == 0
    y, _, _ = planes(read_back(acl, out, size), 64, 48, 64, 48)
    assert np.abs(y.astype(int) - pillow_ycbcr(jpg)[:, :, 0]).max() <= 2


def test_deferred_progressive_reports_through_ret_code(dv: Dvpp, session: Session) -> None:
    acl = dv.acl
    jpg = make_jpeg(64, 48, progressive=True)
    n = len(jpg)
    host, _ = acl.rt.malloc_host(n)
    acl.util.ptr_to_numpy(host, (n,), 2)[:] = np.frombuffer(jpg, np.uint8)
    inp, _ = acl.media.dvpp_malloc(n)
    size = 64 * 48 * 3 // 2
    out, _ = acl.media.dvpp_malloc(size)
    d = pic(acl, out, size, NV12, 64, 48, 64, 48)
    assert acl.rt.memcpy_async(inp, n, host, n, H2D, dv.stream) == 0
    assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, n, d, dv.stream) == 0  # not seen yet
    assert acl.rt.synchronize_stream(dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_ret_code(d) == 148052
    t = session.trace()
    assert "dvpp_task_failed" in [t.string(int(k)) for k in t.diags["kind"]]


def test_decode_error_codes(dv: Dvpp) -> None:
    acl = dv.acl
    m = acl.media
    jpg = make_jpeg(64, 48)
    inp = to_device(acl, jpg)
    size = 64 * 48 * 3 // 2
    out, _ = m.dvpp_malloc(size)

    def dec(d: int, chan: int = dv.chan, src: int = inp, n: int = len(jpg)) -> int:
        return int(m.dvpp_jpeg_decode_async(chan, src, n, d, dv.stream))

    good = pic(acl, out, size, NV12, 64, 48, 64, 48)
    # progressive JPEG: 148052
    prog = make_jpeg(64, 48, progressive=True)
    assert dec(good, src=to_device(acl, prog), n=len(prog)) == 148052
    assert "progressive" in acl.get_recent_err_msg()
    # channel desc without a channel; null handles
    bare = m.dvpp_create_channel_desc()
    assert dec(good, chan=bare) == 100000
    assert dec(0) == 100000
    # input in host memory
    hp, _keep = host_ptr(acl, jpg)
    assert dec(good, src=hp) == 100000
    assert "host" in acl.get_recent_err_msg()
    # output desc problems
    assert dec(pic(acl, out, size, 12, 64, 48, 64, 48)) == 100000            # RGB888
    assert dec(pic(acl, out, size - 1, NV12, 64, 48, 64, 48)) == 100000      # too small
    assert dec(pic(acl, out, size, NV12, 64, 48, 80, 48)) == 100000          # 80 % 64
    assert "aligned up to 64" in acl.get_recent_err_msg()
    assert dec(pic(acl, out, size, NV12, 64, 48, 64, 40)) == 100000          # 40 % 16
    assert "aligned up to 16" in acl.get_recent_err_msg()
    assert dec(pic(acl, 0, size, NV12, 64, 48, 64, 48)) == 100000            # null data
    # resolution below 32x32
    tiny = make_jpeg(16, 16)
    assert dec(good, src=to_device(acl, tiny), n=len(tiny)) == 100000
    assert "32x32" in acl.get_recent_err_msg()
    assert dec(good, n=0) == 100000
    assert dec(good) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 0


def test_on_the_board_the_header_is_read_from_dvpp_memory() -> None:
    """In the device run mode (RC) DVPP memory is the host's: a program that reads the file
    straight into acldvppMalloc memory gets its size and decodes it, as on a 310B board;
    the same calls in the host run mode (EP) are 100000 (the header must be in host
    memory there)."""
    jpg = make_jpeg(64, 48)
    for mode, want in (("device", (64, 48, 3, 0)), ("host", (0, 0, 0, 100000))):
        with Session(watchdog=2.0, run_mode=mode):
            acl = acl_lab.install()
            try:
                assert acl.init() == 0 and acl.rt.set_device(0) == 0
                dv = Dvpp(acl)
                inp = to_device(acl, jpg)
                assert acl.media.dvpp_jpeg_get_image_info(inp, len(jpg)) == want
                size, ret = acl.media.dvpp_jpeg_predict_dec_size(inp, len(jpg), NV12)
                assert (size, ret) == ((64 * 48 * 3 // 2, 0) if mode == "device"
                                       else (0, 100000))
                if mode == "device":
                    out, _ = acl.media.dvpp_malloc(size)
                    d = pic(acl, out, size, NV12, 0, 0, 0, 0)
                    assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, len(jpg), d,
                                                            dv.stream) == 0
                    assert acl.rt.synchronize_stream(dv.stream) == 0
                    assert acl.media.dvpp_get_pic_desc_ret_code(d) == 0
                    assert acl.media.dvpp_get_pic_desc_width(d) == 64
            finally:
                acl_lab.uninstall()


def test_jpegd_alignment_is_128_on_ascend310() -> None:
    with Session(profile="Ascend310", watchdog=2.0):
        acl = acl_lab.install()
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            dv = Dvpp(acl)
            jpg = make_jpeg(64, 48)
            inp = to_device(acl, jpg)
            out, _ = acl.media.dvpp_malloc(128 * 48 * 3 // 2)
            d64 = pic(acl, out, 128 * 48 * 3 // 2, NV12, 64, 48, 64, 48)
            assert acl.media.dvpp_jpeg_decode_async(dv.chan, inp, len(jpg), d64,
                                                    dv.stream) == 100000
            assert "aligned up to 128" in acl.get_recent_err_msg()
            dv.decode(jpg, wa=128)
        finally:
            acl_lab.uninstall()


def test_free_before_sync_fails_the_task(dv: Dvpp) -> None:
    acl = dv.acl
    out = dv.decode(make_jpeg(64, 48), sync=False)[1]
    assert acl.media.dvpp_free(out) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 507053


# ------------------------------------------------------------------ resize


def nv12(w: int, h: int, ws: int, hs: int, y: np.ndarray, u: np.ndarray,
         v: np.ndarray) -> bytes:
    buf = np.zeros(ws * hs * 3 // 2, np.uint8)
    buf[:ws * hs].reshape(hs, ws)[:h, :w] = y
    uv = buf[ws * hs:].reshape(hs // 2, ws)
    uv[:h // 2, 0:w:2] = u
    uv[:h // 2, 1:w:2] = v
    return buf.tobytes()


def resize(dv: Dvpp, src: bytes, iw: int, ih: int, iws: int, ihs: int, ow: int, oh: int,
           ows: int, ohs: int, interp: int | None = None, fmt_in: int = NV12,
           fmt_out: int = NV12) -> tuple[int, np.ndarray | None]:
    acl = dv.acl
    m = acl.media
    inp = to_device(acl, src)
    out_size = ows * ohs * 3 // 2
    out, _ = m.dvpp_malloc(max(out_size, 32))
    din = pic(acl, inp, len(src), fmt_in, iw, ih, iws, ihs)
    dout = pic(acl, out, out_size, fmt_out, ow, oh, ows, ohs)
    cfg = m.dvpp_create_resize_config()
    if interp is not None:
        assert m.dvpp_set_resize_config_interpolation(cfg, interp) == 0
    ret = m.dvpp_vpc_resize_async(dv.chan, din, dout, cfg, dv.stream)
    if ret != 0:
        return ret, None
    assert acl.rt.synchronize_stream(dv.stream) == 0
    return 0, read_back(acl, out, out_size)


def test_resize_constant_picture_stays_constant(dv: Dvpp) -> None:
    y = np.full((48, 64), 100, np.uint8)
    u = np.full((24, 32), 90, np.uint8)
    v = np.full((24, 32), 160, np.uint8)
    ret, out = resize(dv, nv12(64, 48, 64, 48, y, u, v), 64, 48, 64, 48, 100, 50, 112, 50)
    assert ret == 0 and out is not None
    y2, u2, v2 = planes(out, 100, 50, 112, 50)
    assert (y2 == 100).all() and (u2 == 90).all() and (v2 == 160).all()
    assert (out[:112 * 50].reshape(50, 112)[:, 100:] == 0).all()   # stride padding


def test_resize_halving_is_a_2x2_box_for_bilinear(dv: Dvpp) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 256, (48, 64), dtype=np.uint8)
    u = rng.integers(0, 256, (24, 32), dtype=np.uint8)
    v = rng.integers(0, 256, (24, 32), dtype=np.uint8)
    src = nv12(64, 48, 64, 48, y, u, v)
    ret, out = resize(dv, src, 64, 48, 64, 48, 32, 24, 32, 24, interp=1)
    assert ret == 0 and out is not None
    y2, u2, _ = planes(out, 32, 24, 32, 24)
    box = y.astype(float).reshape(24, 2, 32, 2).mean(axis=(1, 3))
    assert np.abs(y2 - box).max() <= 1
    assert np.abs(u2 - u.astype(float).reshape(12, 2, 16, 2).mean(axis=(1, 3))).max() <= 1
    ret, near = resize(dv, src, 64, 48, 64, 48, 32, 24, 32, 24, interp=2)
    assert ret == 0 and near is not None
    assert np.array_equal(planes(near, 32, 24, 32, 24)[0], y[::2, ::2])


def test_resize_gradient_keeps_its_shape(dv: Dvpp) -> None:
    ycc = np.asarray(Image.fromarray(gradient(1024, 768)).convert("YCbCr"))
    y = ycc[:, :, 0]
    u = ycc[::2, ::2, 1]
    v = ycc[::2, ::2, 2]
    src = nv12(1024, 768, 1024, 768, y, u, v)
    ret, out = resize(dv, src, 1024, 768, 1024, 768, 224, 224, 224, 224)
    assert ret == 0 and out is not None
    y2, _, _ = planes(out, 224, 224, 224, 224)
    ref = np.asarray(Image.fromarray(y).resize((224, 224), Image.BILINEAR), int)
    assert np.abs(y2.astype(int) - ref).mean() < 2
    assert np.abs(y2.astype(int) - ref).max() <= 8


def test_resize_rounds_odd_sizes_down(dv: Dvpp) -> None:
    y = np.full((48, 64), 200, np.uint8)
    uv = np.full((24, 32), 128, np.uint8)
    src = nv12(64, 48, 64, 48, y, uv, uv)
    ret, out = resize(dv, src, 63, 47, 64, 48, 33, 25, 48, 26)
    assert ret == 0 and out is not None
    yp = out[:48 * 26].reshape(26, 48)
    assert (yp[:24, :32] == 200).all()
    assert (yp[:, 32:] == 0).all() and (yp[24:, :] == 0).all()


def test_resize_nv12_to_nv21(dv: Dvpp) -> None:
    y = np.full((48, 64), 50, np.uint8)
    u = np.full((24, 32), 70, np.uint8)
    v = np.full((24, 32), 180, np.uint8)
    ret, out = resize(dv, nv12(64, 48, 64, 48, y, u, v), 64, 48, 64, 48, 32, 24, 32, 24,
                      fmt_out=NV21)
    assert ret == 0 and out is not None
    _, first, second = planes(out, 32, 24, 32, 24)
    assert (first == 180).all() and (second == 70).all()


@pytest.mark.parametrize(("args", "words"), [
    ((64, 48, 64, 48, 32, 24, 40, 24), "aligned up to 16"),     # out widthStride 40
    ((64, 48, 64, 48, 32, 24, 16, 24), "aligned up to 16"),     # below the 32 minimum
    ((64, 48, 64, 48, 32, 23, 32, 23), "aligned up to 2"),      # odd heightStride
    ((64, 48, 72, 48, 32, 24, 32, 24), "aligned up to 16"),     # in widthStride 72
    ((64, 48, 64, 48, 8, 24, 32, 24), "10x6"),                  # width below 10
    ((64, 48, 64, 48, 48, 24, 32, 24), "aligned up to 16"),     # stride < width
])
def test_resize_stride_rules(dv: Dvpp, args: tuple[int, ...], words: str) -> None:
    iw, ih, iws, ihs, ow, oh, ows, ohs = args
    src = bytes(iws * ihs * 3 // 2)
    ret, _ = resize(dv, src, iw, ih, iws, ihs, ow, oh, ows, ohs)
    assert ret == 100000
    assert words in dv.acl.get_recent_err_msg()


def test_resize_other_errors(dv: Dvpp) -> None:
    acl = dv.acl
    m = acl.media
    src = bytes(64 * 48 * 3 // 2)
    assert resize(dv, src, 64, 48, 64, 48, 32, 24, 32, 24, fmt_in=12)[0] == 100000
    assert resize(dv, src, 64, 48, 64, 48, 32, 24, 32, 24, interp=3)[0] == 100000  # 310P3
    assert "TF-like" in acl.get_recent_err_msg()
    assert resize(dv, src, 64, 48, 64, 48, 32, 24, 32, 24, interp=5)[0] == 100000
    inp = to_device(acl, src)
    out, _ = m.dvpp_malloc(32 * 24 * 3 // 2)
    din = pic(acl, inp, len(src), NV12, 64, 48, 64, 48)
    small = pic(acl, out, 32 * 24 * 3 // 2 - 1, NV12, 32, 24, 32, 24)
    cfg = m.dvpp_create_resize_config()
    assert m.dvpp_vpc_resize_async(dv.chan, din, small, cfg, dv.stream) == 100000
    assert "widthStride*heightStride*3//2" in acl.get_recent_err_msg()
    dout = pic(acl, out, 32 * 24 * 3 // 2, NV12, 32, 24, 32, 24)
    assert m.dvpp_vpc_resize_async(dv.chan, din, dout, 0, dv.stream) == 100000
    bare = m.dvpp_create_channel_desc()
    assert m.dvpp_vpc_resize_async(bare, din, dout, cfg, dv.stream) == 100000
    host, _ = acl.rt.malloc_host(len(src))
    hdesc = pic(acl, host, len(src), NV12, 64, 48, 64, 48)
    assert m.dvpp_vpc_resize_async(dv.chan, hdesc, dout, cfg, dv.stream) == 100000
    assert m.dvpp_vpc_resize_async(dv.chan, din, dout, cfg, dv.stream) == 0


def test_resize_plane_modes() -> None:
    src = np.arange(16, dtype=np.uint8).reshape(4, 4) * 10
    assert resize_plane(src, 4, 4, 1).tolist() == src.tolist()
    assert resize_plane(src, 2, 2, 2).tolist() == [[0, 20], [80, 100]]
    assert resize_plane(src, 2, 2, 4).tolist() == [[0, 20], [80, 100]]
    assert resize_plane(src, 2, 2, 3).tolist() == [[0, 20], [80, 100]]
    assert resize_plane(src, 2, 2, 0).tolist() == [[25, 45], [105, 125]]


# ------------------------------------------------------------------ the sample's call order


def test_sample_order_decode_resize_copy_destroy(acl: ModuleType, session: Session,
                                                 tmp_path: Path) -> None:
    """DVPP-samples vpc_jpeg_resnet50 order (reference 9.2), data kept in DVPP memory."""
    path = tmp_path / "dog.jpg"
    path.write_bytes(make_jpeg(1024, 768))

    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    context, ret = acl.rt.create_context(0)
    assert ret == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    chan = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(chan) == 0

    # decode
    img = np.fromfile(path, dtype=np.byte)
    size = img.size
    with pytest.warns(Warning):
        img_ptr = acl.util.numpy_to_ptr(img)
    in_dev, ret = acl.media.dvpp_malloc(size)
    assert ret == 0
    assert acl.rt.memcpy(in_dev, size, img_ptr, size, H2D) == 0
    w, h, c, ret = acl.media.dvpp_jpeg_get_image_info(img_ptr, size)
    assert (w, h, c, ret) == (1024, 768, 3, 0)
    dec_desc = acl.media.dvpp_create_pic_desc()
    ws, hs = align(w, 128), align(h, 16)
    dec_size = ws * hs * 3 // 2
    dec_dev, ret = acl.media.dvpp_malloc(dec_size)
    assert ret == 0
    m = acl.media
    assert m.dvpp_set_pic_desc_data(dec_desc, dec_dev) == 0
    assert m.dvpp_set_pic_desc_size(dec_desc, dec_size) == 0
    assert m.dvpp_set_pic_desc_format(dec_desc, NV12) == 0
    assert m.dvpp_set_pic_desc_width(dec_desc, w) == 0
    assert m.dvpp_set_pic_desc_height(dec_desc, h) == 0
    assert m.dvpp_set_pic_desc_width_stride(dec_desc, ws) == 0
    assert m.dvpp_set_pic_desc_height_stride(dec_desc, hs) == 0
    assert m.dvpp_jpeg_decode_async(chan, in_dev, size, dec_desc, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert (m.dvpp_get_pic_desc_width(dec_desc), m.dvpp_get_pic_desc_height(dec_desc)) == (w, h)
    assert m.dvpp_free(in_dev) == 0

    # resize to the model size, reading the decoded picture where it is
    out_w = out_h = 224
    out_size = align(out_w, 16) * align(out_h, 2) * 3 // 2
    assert out_size == 75264
    out_dev, ret = m.dvpp_malloc(out_size)
    assert ret == 0
    out_desc = pic(acl, out_dev, out_size, NV12, out_w, out_h, 224, 224)
    cfg = m.dvpp_create_resize_config()
    assert m.dvpp_vpc_resize_async(chan, dec_desc, out_desc, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    host = np.zeros(out_size, dtype=np.uint8)
    with pytest.warns(Warning):
        host_p = acl.util.numpy_to_ptr(host)
    assert acl.rt.memcpy(host_p, out_size, out_dev, out_size, D2H) == 0
    y = host[:224 * 224].reshape(224, 224)
    ref = np.asarray(Image.open(path).convert("L").resize((224, 224), Image.BILINEAR), int)
    assert np.abs(y.astype(int) - ref).mean() < 3

    # tear-down, wrong order first
    assert m.dvpp_destroy_resize_config(cfg) == 0
    assert m.dvpp_destroy_channel_desc(chan) == 148051
    assert m.dvpp_destroy_channel(chan) == 0
    assert m.dvpp_destroy_channel_desc(chan) == 0
    assert m.dvpp_destroy_pic_desc(dec_desc) == 0
    assert m.dvpp_destroy_pic_desc(out_desc) == 0
    assert m.dvpp_free(dec_dev) == 0
    assert m.dvpp_free(out_dev) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0

    t = session.finish()
    assert t.findings() == []
    names = {t.call_name(i) for i in range(t.calls.rows)}
    assert {"acl.media.dvpp_jpeg_decode_async", "acl.media.dvpp_vpc_resize_async"} <= names
    t.to_chrome_trace()


def test_trace_round_trip_with_dvpp_objects(dv: Dvpp, session: Session,
                                            tmp_path: Path) -> None:
    dv.decode(make_jpeg(64, 48))
    t = session.trace()
    path = tmp_path / "t.acltrace"
    t.save(path)
    back = type(t).load(path)
    assert back.objects.rows == t.objects.rows
