"""``acl.media`` PNG decode (PNGD): image info, predicted size, decode to RGB888/RGBA8888,
the output format and stride rules, the DVPP memory rules and the task on the DVPP engine
(the JPEG decoder's tests, ``test_media.py``, for the same shape)."""

from __future__ import annotations

import io
from types import ModuleType

import numpy as np
import pytest
from PIL import Image

from acl_lab.runtime.dvpp import parse_png_header
from acl_lab.runtime.errors import AclError
from acl_lab.runtime.session import Session
from acl_lab.tracer.schema import ENGINES, TASK_KINDS

from .test_media import Dvpp, align, gradient, host_ptr, pic, read_back, to_device

H2D = 1
RGB888, RGBA8888, UNKNOWN = 12, 16, 10000


def make_png(w: int, h: int, mode: str = "RGB") -> bytes:
    """A PNG of the gradient picture in ``mode`` (RGB, RGBA, L, LA, P or I;16)."""
    rgb = gradient(w, h)
    if mode in ("RGBA", "LA"):
        alpha = (np.arange(w * h).reshape(h, w) % 251).astype(np.uint8)
        im = Image.fromarray(np.dstack([rgb, alpha]), "RGBA").convert(mode)
    elif mode == "I;16":
        im = Image.fromarray(rgb[:, :, 0].astype(np.uint16) * 257)  # mode I;16
    else:
        im = Image.fromarray(rgb).convert(mode)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def pillow_pixels(png: bytes, mode: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert(mode), dtype=np.uint8)


def rows(buf: np.ndarray, w: int, h: int, c: int, ws: int) -> np.ndarray:
    """The (h, w, c) pixels of packed rows of ``ws`` bytes."""
    return buf[:ws * h].reshape(h, ws)[:, :w * c].reshape(h, w, c)


def decode(dv: Dvpp, png: bytes, fmt: int = RGB888, bpp: int = 3, ws: int | None = None,
           hs: int | None = None) -> tuple[int, int, int, int]:
    """Decode ``png`` into a fresh DVPP buffer; returns (out desc, out ptr, wStride, size)."""
    acl = dv.acl
    info = parse_png_header(png)
    ws = align(info.width, 128) * bpp if ws is None else ws
    hs = align(info.height, 16) if hs is None else hs
    size = ws * hs
    inp = to_device(acl, png)
    out, ret = acl.media.dvpp_malloc(size)
    assert ret == 0
    d = pic(acl, out, size, fmt, info.width, info.height, ws, hs)
    assert acl.media.dvpp_png_decode_async(dv.chan, inp, len(png), d, dv.stream) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 0
    return d, out, ws, size


@pytest.fixture
def dv(ready: ModuleType) -> Dvpp:
    return Dvpp(ready)


# ------------------------------------------------------------------ header and sizes


@pytest.mark.parametrize(("mode", "comps"), [
    ("L", 1), ("LA", 2), ("RGB", 3), ("RGBA", 4), ("P", 3), ("I;16", 1)])
def test_get_image_info(ready: ModuleType, mode: str, comps: int) -> None:
    png = make_png(70, 50, mode)
    hp, _keep = host_ptr(ready, png)
    assert ready.media.dvpp_png_get_image_info(hp, len(png)) == (70, 50, comps, 0)


def test_get_image_info_errors(ready: ModuleType) -> None:
    m = ready.media
    png = make_png(64, 48)
    assert m.dvpp_png_get_image_info(0, 10) == (0, 0, 0, 100000)
    dev = to_device(ready, png)
    assert m.dvpp_png_get_image_info(dev, len(png)) == (0, 0, 0, 100000)
    assert "host memory" in ready.get_recent_err_msg()
    jpg = io.BytesIO()
    Image.fromarray(gradient(64, 48)).save(jpg, "JPEG")
    hp, _keep = host_ptr(ready, jpg.getvalue())
    assert m.dvpp_png_get_image_info(hp, len(jpg.getvalue())) == (0, 0, 0, 100000)
    assert "PNG signature" in ready.get_recent_err_msg()
    hp2, _keep2 = host_ptr(ready, png[:20])               # cut inside the IHDR chunk
    assert m.dvpp_png_get_image_info(hp2, 20) == (0, 0, 0, 100000)
    assert m.dvpp_png_predict_dec_size(hp2, 20, RGB888) == (0, 100000)


@pytest.mark.parametrize(("w", "h", "fmt", "want"), [
    (64, 48, RGB888, 128 * 3 * 48),
    (130, 40, RGB888, 256 * 3 * 48),
    (130, 40, RGBA8888, 256 * 4 * 48),
    (130, 40, UNKNOWN, 256 * 4 * 48),                      # the larger format
])
def test_predict_dec_size(ready: ModuleType, w: int, h: int, fmt: int, want: int) -> None:
    png = make_png(w, h)
    hp, _keep = host_ptr(ready, png)
    assert ready.media.dvpp_png_predict_dec_size(hp, len(png), fmt) == (want, 0)
    assert ready.media.dvpp_png_predict_dec_size(hp, len(png), 1) == (0, 100000)  # NV12


def test_parse_header_rejects_bad_ihdr() -> None:
    png = bytearray(make_png(64, 48))
    png[8 + 8 + 9] = 5                                      # colour type 5 does not exist
    with pytest.raises(AclError, match="colour type 5"):
        parse_png_header(bytes(png))
    with pytest.raises(AclError, match="signature"):
        parse_png_header(b"\x89PNX\r\n\x1a\n" + bytes(30))


# ------------------------------------------------------------------ decode


@pytest.mark.parametrize("mode", ["RGB", "L", "P", "RGBA", "LA"])
def test_decode_rgb888_matches_pillow(dv: Dvpp, mode: str) -> None:
    png = make_png(70, 50, mode)
    d, out, ws, size = decode(dv, png)
    assert ws == 128 * 3
    assert dv.acl.media.dvpp_get_pic_desc_ret_code(d) == 0
    buf = read_back(dv.acl, out, size)
    assert np.array_equal(rows(buf, 70, 50, 3, ws), pillow_pixels(png, "RGB"))
    padding = buf.reshape(-1, ws)
    assert not padding[:, 70 * 3:].any() and not padding[50:].any()


@pytest.mark.parametrize("mode", ["RGBA", "LA"])
def test_decode_rgba8888_keeps_alpha(dv: Dvpp, mode: str) -> None:
    png = make_png(70, 50, mode)
    for fmt in (RGBA8888, UNKNOWN):
        _, out, ws, size = decode(dv, png, fmt, bpp=4)
        got = rows(read_back(dv.acl, out, size), 70, 50, 4, ws)
        assert np.array_equal(got, pillow_pixels(png, "RGBA"))
        assert len(np.unique(got[:, :, 3])) > 100           # the alpha ramp survived


def test_decode_unknown_keeps_the_source_kind(dv: Dvpp) -> None:
    png = make_png(64, 48, "RGB")
    _, out, ws, size = decode(dv, png, UNKNOWN)             # RGB source: RGB888 strides
    assert ws == 128 * 3
    assert np.array_equal(rows(read_back(dv.acl, out, size), 64, 48, 3, ws),
                          pillow_pixels(png, "RGB"))


def test_decode_16_bit_gray_keeps_the_high_byte(dv: Dvpp) -> None:
    png = make_png(64, 48, "I;16")
    _, out, ws, size = decode(dv, png)
    got = rows(read_back(dv.acl, out, size), 64, 48, 3, ws)
    want = gradient(64, 48)[:, :, 0]                        # v * 257 >> 8 == v
    assert all(np.array_equal(got[:, :, k], want) for k in range(3))


def test_decode_task_on_dvpp_engine_fills_width_and_height(dv: Dvpp, session: Session) -> None:
    acl = dv.acl
    png = make_png(300, 200)
    inp = to_device(acl, png)
    ws, hs = 384 * 3, 208
    out, _ = acl.media.dvpp_malloc(ws * hs)
    d = pic(acl, out, ws * hs, RGB888, 0, 0, 0, 0)          # strides filled in
    assert acl.media.dvpp_png_decode_async(dv.chan, inp, len(png), d, dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_width_stride(d) == ws
    assert acl.media.dvpp_get_pic_desc_height_stride(d) == hs
    assert acl.media.dvpp_get_pic_desc_width(d) == 0       # not yet: the task is queued
    assert acl.rt.synchronize_stream(dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_width(d) == 300
    assert acl.media.dvpp_get_pic_desc_height(d) == 200
    t = session.trace()
    tasks = t.tasks
    found = [i for i in range(tasks.rows) if TASK_KINDS[int(tasks["kind"][i])] == "dvpp"]
    assert len(found) == 1
    i = found[0]
    assert ENGINES[int(tasks["engine"][i])] == "dvpp"
    p = session.profile
    want = p.dvpp_setup_ns + int(300 * 200 / p.dvpp_pixels_per_ns)
    assert int(tasks["end_ns"][i]) - int(tasks["start_ns"][i]) == want


def test_decode_error_codes(dv: Dvpp) -> None:
    acl = dv.acl
    m = acl.media
    png = make_png(64, 48)
    inp = to_device(acl, png)
    ws, hs = 128 * 3, 48
    size = ws * hs
    out, _ = m.dvpp_malloc(128 * 4 * 48)

    def dec(d: int, chan: int = dv.chan, src: int = inp, n: int = len(png)) -> int:
        return int(m.dvpp_png_decode_async(chan, src, n, d, dv.stream))

    good = pic(acl, out, size, RGB888, 64, 48, ws, hs)
    bare = m.dvpp_create_channel_desc()
    assert dec(good, chan=bare) == 100000                   # no channel
    assert dec(0) == 100000
    hp, _keep = host_ptr(acl, png)
    assert dec(good, src=hp) == 100000                      # input in host memory
    assert "host" in acl.get_recent_err_msg()
    assert dec(pic(acl, out, size, 1, 64, 48, ws, hs)) == 100000            # NV12
    assert "PIXEL_FORMAT_RGB_888" in acl.get_recent_err_msg()
    assert dec(pic(acl, out, 128 * 4 * 48, RGBA8888, 64, 48, 512, hs)) == 100000
    assert "alpha" in acl.get_recent_err_msg()              # RGBA8888 from an RGB PNG
    assert dec(pic(acl, out, size - 1, RGB888, 64, 48, ws, hs)) == 100000   # too small
    assert dec(pic(acl, out, size, RGB888, 64, 48, 64 * 3, hs)) == 100000   # 192 % 384
    assert "aligned up to 128" in acl.get_recent_err_msg()
    assert dec(pic(acl, out, size, RGB888, 64, 48, ws, 40)) == 100000       # 40 % 16
    assert dec(pic(acl, 0, size, RGB888, 64, 48, ws, hs)) == 100000         # null data
    tiny = make_png(16, 16)
    assert dec(good, src=to_device(acl, tiny), n=len(tiny)) == 100000
    assert "32x32" in acl.get_recent_err_msg()
    big = make_png(4100, 32, "L")
    assert dec(good, src=to_device(acl, big), n=len(big)) == 100000
    assert "4096x4096" in acl.get_recent_err_msg()
    assert dec(good, n=0) == 100000
    assert dec(good) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 0


def test_deferred_check_reports_through_ret_code(dv: Dvpp, session: Session) -> None:
    """The PNG bytes arrive by memcpy_async: the task checks them when it runs (an RGBA8888
    output for a PNG without alpha fails the task, ret 0 at the call)."""
    acl = dv.acl
    png = make_png(64, 48)
    n = len(png)
    host, _ = acl.rt.malloc_host(n)
    acl.util.ptr_to_numpy(host, (n,), 2)[:] = np.frombuffer(png, np.uint8)
    inp, _ = acl.media.dvpp_malloc(n)
    size = 128 * 4 * 48
    out, _ = acl.media.dvpp_malloc(size)
    d = pic(acl, out, size, RGBA8888, 64, 48, 128 * 4, 48)
    assert acl.rt.memcpy_async(inp, n, host, n, H2D, dv.stream) == 0
    assert acl.media.dvpp_png_decode_async(dv.chan, inp, n, d, dv.stream) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 0
    assert acl.media.dvpp_get_pic_desc_ret_code(d) == 100000
    t = session.trace()
    assert "dvpp_task_failed" in [t.string(int(k)) for k in t.diags["kind"]]


def test_free_before_sync_fails_the_task(dv: Dvpp) -> None:
    acl = dv.acl
    png = make_png(64, 48)
    inp = to_device(acl, png)
    size = 128 * 3 * 48
    out, _ = acl.media.dvpp_malloc(size)
    d = pic(acl, out, size, RGB888, 64, 48, 128 * 3, 48)
    assert acl.media.dvpp_png_decode_async(dv.chan, inp, len(png), d, dv.stream) == 0
    assert acl.media.dvpp_free(out) == 0
    assert acl.rt.synchronize_stream(dv.stream) == 507053
