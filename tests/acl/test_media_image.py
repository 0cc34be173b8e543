"""VPC crop / crop-and-paste / batch crop, JPEGE, stream and batch descs: pixels, rules, codes."""

from __future__ import annotations

import io
from types import ModuleType

import numpy as np
import pytest
from PIL import Image

from acl_lab.runtime.session import Session

from .test_media import pic, read_back

H2D = 1
NV12, NV21 = 1, 2


def nv12(w: int, h: int, seed: int = 0) -> np.ndarray:
    """A random NV12 picture (strides = size) as one uint8 array."""
    return np.random.default_rng(seed).integers(0, 256, w * h * 3 // 2, dtype=np.uint8)


def picture(acl: ModuleType, w: int, h: int, data: np.ndarray | None = None,
            fmt: int = NV12) -> tuple[int, int]:
    """A pic desc with a DVPP buffer of ``w``x``h`` (strides 16/2-aligned): (desc, ptr)."""
    ws, hs = (w + 15) // 16 * 16, (h + 1) // 2 * 2
    size = ws * hs * 3 // 2
    p, ret = acl.media.dvpp_malloc(size)
    assert ret == 0
    buf = np.zeros(size, np.uint8) if data is None else data
    raw = buf.tobytes()
    assert acl.rt.memcpy(p, size, acl.util.bytes_to_ptr(raw), size, H2D) == 0
    return pic(acl, p, size, fmt, w, h, ws, hs), int(p)


def planes(a: np.ndarray, w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    return a[:w * h].reshape(h, w), a[w * h:w * h * 3 // 2].reshape(h // 2, w)


@pytest.fixture
def vpc(ready: ModuleType) -> tuple[ModuleType, int, int]:
    acl = ready
    chan = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(chan) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    return acl, int(chan), int(stream)


def roi(acl: ModuleType, left: int, right: int, top: int, bottom: int) -> int:
    return int(acl.media.dvpp_create_roi_config(left, right, top, bottom))


def last_diag(session: Session) -> str:
    """The message of the session's latest diagnostic (the rule a refused call broke)."""
    tr = session.trace()
    return tr.string(int(tr.diags["message"][-1]))


def test_crop_and_paste_copies_and_keeps_the_canvas(vpc: tuple[ModuleType, int, int]) -> None:
    """A same-size crop-and-paste copies the area exactly (Y and interleaved UV) to the paste
    offset; canvas bytes outside the paste area are left as they were."""
    acl, chan, stream = vpc
    src = nv12(64, 48, 1)
    canvas = nv12(64, 48, 2)
    din, _ = picture(acl, 64, 48, src)
    dout, pout = picture(acl, 64, 48, canvas.copy())
    ret = acl.media.dvpp_vpc_crop_and_paste_async(chan, din, dout, roi(acl, 8, 39, 4, 23),
                                                  roi(acl, 16, 47, 20, 39), stream)
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
    got = read_back(acl, pout, 64 * 48 * 3 // 2)
    ys, uvs = planes(src, 64, 48)
    yg, uvg = planes(got, 64, 48)
    yc, uvc = planes(canvas, 64, 48)
    assert np.array_equal(yg[20:40, 16:48], ys[4:24, 8:40])
    assert np.array_equal(uvg[10:20, 16:48], uvs[2:12, 8:40])
    mask = np.ones((48, 64), bool)
    mask[20:40, 16:48] = False
    assert np.array_equal(yg[mask], yc[mask])
    assert np.array_equal(uvg[:10], uvc[:10]) and np.array_equal(uvg[:, :16], uvc[:, :16])


def test_crop_resizes_to_the_whole_output(vpc: tuple[ModuleType, int, int]) -> None:
    """dvpp_vpc_crop_async scales the crop area to the output size (bilinear, close to
    Pillow's for a 2x upscale of a smooth picture)."""
    acl, chan, stream = vpc
    y = np.tile(np.linspace(0, 255, 64).astype(np.uint8), (32, 1))
    src = np.concatenate([y.ravel(), np.full(64 * 16, 128, np.uint8)])
    din, _ = picture(acl, 64, 32, src)
    dout, pout = picture(acl, 64, 32)
    assert acl.media.dvpp_vpc_crop_async(chan, din, dout, roi(acl, 0, 31, 0, 15), stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    got, _ = planes(read_back(acl, pout, 64 * 32 * 3 // 2), 64, 32)
    ref = np.asarray(Image.fromarray(y[:16, :32]).resize((64, 32), Image.BILINEAR))
    assert np.abs(got.astype(int) - ref.astype(int)).mean() < 2


@pytest.mark.parametrize("area,paste,why", [
    ((1, 32, 0, 15), None, "left and top offsets must be even"),
    ((0, 31, 0, 14), None, "right and bottom odd"),
    ((0, 7, 0, 5), None, "at least 10x6"),
    ((32, 65, 0, 47), None, "does not fit"),
    ((0, 31, 0, 15), (8, 39, 0, 15), "16-aligned"),
    ((0, 31, 0, 15), (0, 63, 0, 47), "does not fit"),
])
def test_area_rules(vpc: tuple[ModuleType, int, int], session: Session,
                    area: tuple[int, int, int, int], paste: tuple[int, int, int, int] | None,
                    why: str) -> None:
    """Areas break the YUV420SP offset rules, the minimum size, the picture or the paste
    alignment: 100000 with the rule in the trace, and no task is queued."""
    acl, chan, stream = vpc
    din, _ = picture(acl, 64, 48)
    dout, _ = picture(acl, 32, 16)
    tasks = session.task_count
    if paste is None:
        ret = acl.media.dvpp_vpc_crop_async(chan, din, dout, roi(acl, *area), stream)
    else:
        ret = acl.media.dvpp_vpc_crop_and_paste_async(chan, din, dout, roi(acl, *area),
                                                      roi(acl, *paste), stream)
    assert ret == 100000
    assert session.task_count == tasks
    assert why in last_diag(session)


def test_scale_limit(vpc: tuple[ModuleType, int, int], session: Session) -> None:
    """A crop scaled by more than 16 is refused (VPC's 1/32..16 range); 16 is accepted."""
    acl, chan, stream = vpc
    din, _ = picture(acl, 64, 48)
    dout, _ = picture(acl, 768, 96)
    assert acl.media.dvpp_vpc_crop_async(chan, din, dout, roi(acl, 0, 9, 0, 5), stream) \
        == 100000
    assert "1/32 to 16" in last_diag(session)
    assert acl.media.dvpp_vpc_crop_async(chan, din, dout, roi(acl, 0, 47, 0, 5), stream) == 0


def test_batch_crop_fills_consecutive_outputs(vpc: tuple[ModuleType, int, int]) -> None:
    """roi_nums [1, 2]: one area of input 0 and two of input 1 fill outputs 0, 1 and 2; the
    call returns (dst_batch, ret) like the binding."""
    acl, chan, stream = vpc
    m = acl.media
    srcs = [nv12(32, 32, 5), nv12(32, 32, 6)]
    sb = m.dvpp_create_batch_pic_desc(2)
    db = m.dvpp_create_batch_pic_desc(3)
    for i, s in enumerate(srcs):
        p, _ = m.dvpp_malloc(s.size)
        assert acl.rt.memcpy(p, s.size, acl.util.bytes_to_ptr(s.tobytes()), s.size, H2D) == 0
        d = m.dvpp_get_pic_desc(sb, i)
        for fn, v in (("data", p), ("size", s.size), ("format", NV12), ("width", 32),
                      ("height", 32), ("width_stride", 32), ("height_stride", 32)):
            assert getattr(m, "dvpp_set_pic_desc_" + fn)(d, v) == 0
    outs = []
    for i in range(3):
        p, _ = m.dvpp_malloc(768)  # widthStride 32: VPC's minimum stride
        outs.append(int(p))
        d = m.dvpp_get_pic_desc(db, i)
        for fn, v in (("data", p), ("size", 768), ("format", NV12), ("width", 16),
                      ("height", 16), ("width_stride", 32), ("height_stride", 16)):
            assert getattr(m, "dvpp_set_pic_desc_" + fn)(d, v) == 0
    areas = [roi(acl, 0, 15, 0, 15), roi(acl, 16, 31, 0, 15), roi(acl, 0, 15, 16, 31)]
    assert m.dvpp_vpc_batch_crop_async(chan, sb, [1, 2], db, areas, stream) == (db, 0)
    assert acl.rt.synchronize_stream(stream) == 0
    want = [(0, 0, 0), (1, 0, 16), (1, 16, 0)]
    for p, (k, top, left) in zip(outs, want, strict=True):
        y = planes(read_back(acl, p, 768), 32, 16)[0][:, :16]
        ys, _ = planes(srcs[k], 32, 32)
        assert np.array_equal(y, ys[top:top + 16, left:left + 16])
    with pytest.raises(ValueError, match="between 1 and 256"):
        m.dvpp_vpc_batch_crop_async(chan, sb, [], db, areas, stream)
    with pytest.raises(TypeError, match="not list"):
        m.dvpp_vpc_batch_crop_async(chan, sb, (1, 2), db, areas, stream)
    assert m.dvpp_vpc_batch_crop_async(chan, sb, [1, 1], db, areas, stream) == (0, 100000)
    assert m.dvpp_destroy_batch_pic_desc(sb) == 0
    assert m.dvpp_get_pic_desc_width(m.dvpp_get_pic_desc(db, 0)) == 16
    inner = m.dvpp_get_pic_desc(db, 0)
    assert m.dvpp_destroy_batch_pic_desc(db) == 0
    assert m.dvpp_destroy_pic_desc(inner) == 100000  # went with its batch


def jpege_input(acl: ModuleType, w: int, h: int, hs: int | None = None) -> tuple[int, bytes]:
    x = np.linspace(16, 235, w).astype(np.uint8)
    y = np.tile(x, (h, 1))
    hs = h if hs is None else hs
    ws = (w + 15) // 16 * 16
    buf = np.full(ws * hs * 3 // 2, 128, np.uint8)
    buf[:ws * hs].reshape(hs, ws)[:h, :w] = y
    p, _ = acl.media.dvpp_malloc(buf.size)
    raw = buf.tobytes()
    assert acl.rt.memcpy(p, buf.size, acl.util.bytes_to_ptr(raw), buf.size, H2D) == 0
    return pic(acl, int(p), buf.size, NV12, w, h, ws, hs), y.tobytes()


def test_jpeg_encode_writes_the_size_at_the_pointer(vpc: tuple[ModuleType, int, int]) -> None:
    """JPEGE writes a baseline JPEG into DVPP memory and its size into the host uint32 at
    size_ptr when the task ends; Pillow decodes it to the picture."""
    acl, chan, stream = vpc
    m = acl.media
    d, y = jpege_input(acl, 48, 32)
    cfg = m.dvpp_create_jpege_config()
    assert m.dvpp_get_jpege_config_level(cfg) == 100
    assert m.dvpp_set_jpege_config_level(cfg, 95) == 0
    cap, ret = m.dvpp_jpeg_predict_enc_size(d, cfg)
    assert ret == 0 and cap == 48 * 32 * 3 // 2 + 4096
    out, _ = m.dvpp_malloc(cap)
    size = np.array([cap], np.uint32)
    with pytest.warns(Warning):
        size_ptr = acl.util.numpy_to_ptr(size)
    assert m.dvpp_jpeg_encode_async(chan, d, out, size_ptr, cfg, stream) == 0
    assert int(size[0]) == cap  # not yet: the task has not ended
    assert acl.rt.synchronize_stream(stream) == 0
    n = int(size[0])
    assert 0 < n < cap
    im = Image.open(io.BytesIO(read_back(acl, out, n).tobytes()))
    assert im.format == "JPEG" and im.size == (48, 32)
    back = np.asarray(im.convert("YCbCr"))[:, :, 0].astype(int)
    ref = np.frombuffer(y, np.uint8).reshape(32, 48).astype(int)
    assert np.abs(back - ref).mean() < 2


def test_jpeg_encode_rules(vpc: tuple[ModuleType, int, int]) -> None:
    """JPEGE input rules: heightStride is the height or the height aligned to 16 (at least
    32), level <= 100, a size of 0 at the pointer is refused; a buffer too small for the
    JPEG fails the task, reported at synchronize."""
    acl, chan, stream = vpc
    m = acl.media
    cfg = m.dvpp_create_jpege_config()
    assert m.dvpp_set_jpege_config_level(cfg, 101) == 100000
    out, _ = m.dvpp_malloc(8192)
    ok_size = acl.util.bytes_to_ptr(np.array([8192], np.uint32).tobytes())
    zero = acl.util.bytes_to_ptr(bytes(4))
    bad_hs, _ = jpege_input(acl, 48, 34, hs=40)
    assert m.dvpp_jpeg_encode_async(chan, bad_hs, out, ok_size, cfg, stream) == 100000
    good_hs, _ = jpege_input(acl, 48, 34, hs=48)
    assert m.dvpp_jpeg_predict_enc_size(good_hs, cfg)[1] == 0
    assert m.dvpp_jpeg_encode_async(chan, good_hs, out, zero, cfg, stream) == 100000
    tiny = acl.util.bytes_to_ptr(np.array([64], np.uint32).tobytes())
    assert m.dvpp_jpeg_encode_async(chan, good_hs, out, tiny, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) != 0


def test_stream_desc_fields(ready: ModuleType, session: Session) -> None:
    """Stream desc setters and getters round-trip; eos is an unsigned char (masked like the
    binding's "B"); a destroyed desc reads 0 with 100000 in the trace."""
    acl = ready
    m = acl.media
    d = m.dvpp_create_stream_desc()
    for f, v in (("size", 77), ("format", 2), ("timestamp", 1 << 40), ("ret_code", 5)):
        assert getattr(m, "dvpp_set_stream_desc_" + f)(d, v) == 0
        assert getattr(m, "dvpp_get_stream_desc_" + f)(d) == v
    assert m.dvpp_set_stream_desc_eos(d, 257) == 0
    assert m.dvpp_get_stream_desc_eos(d) == 1
    assert m.dvpp_destroy_stream_desc(d) == 0
    assert m.dvpp_get_stream_desc_size(d) == 0
    assert int(session.trace().calls["ret"][-1]) == 100000


def test_channel_ids_and_pic_ret_code(ready: ModuleType) -> None:
    """DVPP channels are numbered in creation order; a pic desc's ret code can be set."""
    acl = ready
    m = acl.media
    a, b = m.dvpp_create_channel_desc(), m.dvpp_create_channel_desc()
    assert m.dvpp_get_channel_desc_channel_id(a) == 0
    assert m.dvpp_create_channel(a) == 0 and m.dvpp_create_channel(b) == 0
    assert (m.dvpp_get_channel_desc_channel_id(a), m.dvpp_get_channel_desc_channel_id(b)) \
        == (0, 1)
    d = m.dvpp_create_pic_desc()
    assert m.dvpp_set_pic_desc_ret_code(d, 7) == 0
    assert m.dvpp_get_pic_desc_ret_code(d) == 7
