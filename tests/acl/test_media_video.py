"""VDEC and VENC channels: callbacks through the report queue, argument rules and codes,
timeouts and deadlocks (never a hang), and the codec output against PyAV."""

from __future__ import annotations

import threading
from fractions import Fraction
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab.runtime.errors import DeadlockError
from acl_lab.runtime.session import Session

av = pytest.importorskip("av")

H2D, D2H = 1, 2
NV12, H265, H264_BASELINE = 1, 0, 1
W = H = 128


def packets(codec: str, n: int, w: int = W, h: int = H) -> tuple[list[bytes], list[np.ndarray]]:
    """``n`` Annex-B frames made with PyAV (one packet each) and PyAV's decode of them."""
    enc = av.CodecContext.create(codec, "w")
    enc.width, enc.height, enc.pix_fmt = w, h, "yuv420p"
    enc.time_base = Fraction(1, 25)
    enc.options = ({"tune": "zerolatency", "preset": "ultrafast"} if codec == "libx264" else
                   {"tune": "zerolatency", "x265-params": "log-level=none"})
    out: list[bytes] = []
    for i in range(n):
        yuv = np.zeros((h * 3 // 2, w), np.uint8)
        yuv[:h] = (np.arange(w)[None, :] + 16 * i + np.arange(h)[:, None]) % 256
        yuv[h:] = 128 + 8 * i
        f = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
        f.pts = i
        out += [bytes(p) for p in enc.encode(f)]
    out += [bytes(p) for p in enc.encode(None)]
    dec = av.CodecContext.create("h264" if codec == "libx264" else "hevc", "r")
    frames = [fr.to_ndarray(format="yuv420p") for p in out for fr in dec.decode(av.Packet(p))]
    return out, frames


def to_dvpp(acl: ModuleType, data: bytes) -> int:
    p, ret = acl.media.dvpp_malloc(len(data))
    assert ret == 0
    assert acl.rt.memcpy(p, len(data), acl.util.bytes_to_ptr(data), len(data), H2D) == 0
    return int(p)


def stream_desc(acl: ModuleType, data: bytes) -> int:
    d = acl.media.dvpp_create_stream_desc()
    assert acl.media.dvpp_set_stream_desc_data(d, to_dvpp(acl, data)) == 0
    assert acl.media.dvpp_set_stream_desc_size(d, len(data)) == 0
    return int(d)


def out_pic(acl: ModuleType, size: int = W * H * 3 // 2) -> int:
    p, ret = acl.media.dvpp_malloc(size)
    assert ret == 0
    d = acl.media.dvpp_create_pic_desc()
    assert acl.media.dvpp_set_pic_desc_data(d, p) == 0
    assert acl.media.dvpp_set_pic_desc_size(d, size) == 0
    assert acl.media.dvpp_set_pic_desc_format(d, NV12) == 0
    return int(d)


def vdec(acl: ModuleType, cb: Any, tid: int | None = None, entype: int = H264_BASELINE) -> int:
    m = acl.media
    d = m.vdec_create_channel_desc()
    assert m.vdec_set_channel_desc_thread_id(d, threading.get_ident() if tid is None else tid) == 0
    assert m.vdec_set_channel_desc_callback(d, cb) == 0
    assert m.vdec_set_channel_desc_entype(d, entype) == 0
    assert m.vdec_set_channel_desc_out_pic_format(d, NV12) == 0
    assert m.vdec_create_channel(d) == 0
    return int(d)


def last_ret(s: Session, name: str) -> int:
    tr = s.trace()
    rows = [i for i in range(tr.calls.rows) if tr.call_name(i) == name]
    return int(tr.calls["ret"][rows[-1]])


def read(acl: ModuleType, ptr: int, n: int) -> np.ndarray:
    out = bytes(n)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), n, ptr, n, D2H) == 0
    return np.frombuffer(out, np.uint8)


@pytest.mark.parametrize("codec,entype", [("libx264", H264_BASELINE), ("libx265", H265)])
def test_vdec_frames_arrive_in_process_report(ready: ModuleType, codec: str,
                                              entype: int) -> None:
    """The channel subscribes its thread: process_report in that thread runs one callback per
    frame with the stream desc, the output desc (size and strides filled in) and user_data;
    the pixels are PyAV's decode."""
    acl = ready
    pkts, ref = packets(codec, 3)
    got: list[tuple[int, int, int, int, int, Any]] = []
    descs: list[tuple[int, int]] = []

    def cb(sd: int, pd: int, ud: Any) -> None:
        m = acl.media
        got.append((sd, pd, m.dvpp_get_pic_desc_width(pd), m.dvpp_get_pic_desc_width_stride(pd),
                    m.dvpp_get_pic_desc_ret_code(pd), ud))

    ch = vdec(acl, cb, entype=entype)
    cfg = acl.media.vdec_create_frame_config()
    for i, p in enumerate(pkts):
        sd, pd = stream_desc(acl, p), out_pic(acl)
        descs.append((sd, pd))
        assert acl.media.vdec_send_frame(ch, sd, pd, cfg, {"frame": i}) == 0
    assert got == []  # nothing runs until the report thread processes reports
    assert acl.rt.process_report(1000) == 0
    assert [g[:2] for g in got] == descs
    assert [(g[2], g[3], g[4]) for g in got] == [(W, W, 0)] * 3
    assert [g[5] for g in got] == [{"frame": i} for i in range(3)]
    for (_, pd), r in zip(descs, ref, strict=True):
        y = read(acl, acl.media.dvpp_get_pic_desc_data(pd), W * H)
        assert np.array_equal(y.reshape(H, W), r[:H])
    assert acl.media.vdec_destroy_channel(ch) == 0
    assert acl.media.vdec_destroy_channel_desc(ch) == 0


def test_process_report_times_out_when_no_frame_comes(ready: ModuleType,
                                                      session: Session) -> None:
    """A thread subscribed by a channel but sent no frames gets 507012 from process_report
    (the timeout code), not 107012 and not a hang; after the channel is gone, 107012."""
    acl = ready
    ch = vdec(acl, lambda *a: None)
    assert acl.rt.process_report(20) == 507012
    assert acl.media.vdec_destroy_channel(ch) == 0
    assert acl.rt.process_report(20) == 107012


def test_destroy_waits_for_the_report_thread(ready: ModuleType) -> None:
    """Sending EOS, like vdec_destroy_channel, returns only after every frame callback ran in
    the report thread."""
    acl = ready
    pkts, _ = packets("libx264", 2)
    seen: list[int] = []
    stop = threading.Event()

    def loop(_: Any) -> None:
        while not stop.is_set():
            acl.rt.process_report(20)

    tid, ret = acl.util.start_thread(loop, [])
    assert ret == 0
    ch = vdec(acl, lambda sd, pd, ud: seen.append(ud), tid=tid)
    cfg = acl.media.vdec_create_frame_config()
    for i, p in enumerate(pkts):
        assert acl.media.vdec_send_frame(ch, stream_desc(acl, p), out_pic(acl), cfg, i) == 0
    eos = acl.media.dvpp_create_stream_desc()
    assert acl.media.dvpp_set_stream_desc_eos(eos, 1) == 0
    assert acl.media.vdec_send_frame(ch, eos, 0, cfg, "eos") == 0  # waits, like the real one
    assert seen == [0, 1, "eos"]
    assert acl.media.vdec_destroy_channel(ch) == 0
    stop.set()
    assert acl.util.stop_thread(tid) == 0


def test_destroy_in_the_report_thread_itself_is_a_deadlock(ready: ModuleType) -> None:
    """Destroying a channel with undelivered frames from the very thread that must deliver
    them can never finish: a deadlock report, not a hang."""
    acl = ready
    pkts, _ = packets("libx264", 1)
    ch = vdec(acl, lambda *a: None)
    cfg = acl.media.vdec_create_frame_config()
    assert acl.media.vdec_send_frame(ch, stream_desc(acl, pkts[0]), out_pic(acl), cfg, 0) == 0
    with pytest.raises(DeadlockError, match="process_report"):
        acl.media.vdec_destroy_channel(ch)


def test_vdec_argument_rules(ready: ModuleType, session: Session) -> None:
    """No callback: RuntimeError like the binding; no thread id, bad enType, a bad output
    stride or a destroyed frame config: 100000; the desc while its channel exists: 148051."""
    acl = ready
    m = acl.media
    d = m.vdec_create_channel_desc()
    assert m.vdec_set_channel_desc_callback(d, lambda *a: None) == 0
    assert m.vdec_create_channel(d) == 100000  # no thread id
    assert m.vdec_set_channel_desc_thread_id(d, threading.get_ident()) == 0
    assert m.vdec_set_channel_desc_entype(d, 7) == 0
    assert m.vdec_create_channel(d) == 100000
    assert m.vdec_set_channel_desc_entype(d, H264_BASELINE) == 0
    assert m.vdec_create_channel(d) == 0
    assert m.vdec_destroy_channel_desc(d) == 148051
    with pytest.raises(TypeError, match="parameter must be callable"):
        m.vdec_set_channel_desc_callback(d, 3)
    bare = m.vdec_create_channel_desc()
    with pytest.raises(RuntimeError, match="did not set callback"):
        m.vdec_send_frame(bare, 0, 0, 0, None)
    with pytest.raises(RuntimeError, match="did not set callback"):
        m.vdec_get_channel_desc_callback(bare)
    pkts, _ = packets("libx264", 1)
    cfg = m.vdec_create_frame_config()
    pd = out_pic(acl)
    assert m.dvpp_set_pic_desc_width(pd, W) == 0
    assert m.dvpp_set_pic_desc_height(pd, H) == 0
    assert m.dvpp_set_pic_desc_width_stride(pd, 120) == 0  # not 16-aligned
    assert m.vdec_send_frame(d, stream_desc(acl, pkts[0]), pd, cfg, None) == 100000
    assert m.dvpp_set_pic_desc_width_stride(pd, W) == 0
    assert m.vdec_destroy_frame_config(cfg) == 0
    assert m.vdec_send_frame(d, stream_desc(acl, pkts[0]), pd, cfg, None) == 100000
    assert m.vdec_destroy_channel(d) == 0
    assert m.vdec_destroy_channel_desc(d) == 0


def test_corrupt_frame_reports_in_the_output_desc(ready: ModuleType,
                                                  session: Session) -> None:
    """A frame the decoder cannot use still gets its callback; the output desc's ret_code
    says it failed and the trace has a readable diagnostic."""
    acl = ready
    codes: list[int] = []
    ch = vdec(acl, lambda sd, pd, ud: codes.append(acl.media.dvpp_get_pic_desc_ret_code(pd)))
    cfg = acl.media.vdec_create_frame_config()
    junk = bytes(range(256)) * 4
    assert acl.media.vdec_send_frame(ch, stream_desc(acl, junk), out_pic(acl), cfg, None) == 0
    assert acl.rt.process_report(1000) == 0
    assert codes == [100000]
    tr = session.trace()
    texts = [tr.string(int(i)) for i in tr.diags["message"]]
    assert any("VDEC frame 0 failed" in t for t in texts), texts
    assert acl.media.vdec_destroy_channel(ch) == 0


def venc(acl: ModuleType, cb: Any, w: int = W, h: int = H) -> tuple[int, int]:
    m = acl.media
    d = m.venc_create_channel_desc()
    for fn, v in (("thread_id", threading.get_ident()), ("entype", H264_BASELINE),
                  ("pic_format", NV12), ("pic_width", w), ("pic_height", h),
                  ("key_frame_interval", 4)):
        assert getattr(m, "venc_set_channel_desc_" + fn)(d, v) == 0
    assert m.venc_set_channel_desc_callback(d, cb) == 0
    return int(d), int(m.venc_create_channel(d))


def test_venc_encodes_what_pyav_decodes(ready: ModuleType) -> None:
    """VENC gives one bitstream per frame through the callback (valid while it runs); the
    bytes decode with PyAV to the picture sent, and an I frame can be forced."""
    acl = ready
    m = acl.media
    out: list[bytes] = []
    keys: list[bool] = []

    def cb(pic: int, sd: int, ud: Any) -> None:
        assert m.dvpp_get_stream_desc_ret_code(sd) == 0
        n = m.dvpp_get_stream_desc_size(sd)
        out.append(read(acl, m.dvpp_get_stream_desc_data(sd), n).tobytes())

    d, ret = venc(acl, cb)
    assert ret == 0
    cfg = m.venc_create_frame_config()
    yuv = np.zeros(W * H * 3 // 2, np.uint8)
    yuv[:W * H] = np.tile(np.arange(W, dtype=np.uint8), H)
    yuv[W * H:] = 128
    pic = out_pic(acl)
    data = yuv.tobytes()
    assert acl.rt.memcpy(m.dvpp_get_pic_desc_data(pic), len(data), acl.util.bytes_to_ptr(data),
                         len(data), H2D) == 0
    for i in range(3):
        assert m.venc_set_frame_config_force_i_frame(cfg, int(i == 2)) == 0
        assert m.venc_send_frame(d, pic, 0, cfg, i) == 0
    assert m.venc_set_frame_config_eos(cfg, 1) == 0
    assert m.venc_get_frame_config_eos(cfg) == 1
    assert m.venc_send_frame(d, 0, 0, cfg, None) == 0
    assert acl.rt.process_report(1000) == 0
    dec = av.CodecContext.create("h264", "r")
    frames = []
    assert len(out) == 4 and out[3] == b""  # three frames, then the (empty) EOS flush
    for b in out[:3]:
        for f in dec.decode(av.Packet(b)):  # each callback's bitstream is one access unit
            frames.append(f)
            keys.append(bool(f.key_frame))
    assert len(frames) == 3 and keys[0] and keys[2] and not keys[1]
    y = frames[0].to_ndarray(format="yuv420p")[:H].astype(int)
    assert np.abs(y - yuv[:W * H].reshape(H, W).astype(int)).mean() < 2.0
    assert m.venc_destroy_channel(d) == 0
    assert m.venc_destroy_channel_desc(d) == 0


def test_venc_argument_rules(ready: ModuleType) -> None:
    """VENC refuses a picture size outside 128..1920 and a picture desc of another size."""
    acl = ready
    m = acl.media
    d, ret = venc(acl, lambda *a: None, w=64, h=64)
    assert ret == 100000
    assert m.venc_set_channel_desc_pic_width(d, W) == 0
    assert m.venc_set_channel_desc_pic_height(d, H) == 0
    assert m.venc_create_channel(d) == 0
    cfg = m.venc_create_frame_config()
    small = out_pic(acl, 64 * 64 * 3 // 2)
    assert m.venc_send_frame(d, small, 0, cfg, None) == 100000  # size too small for 128x128
    assert m.dvpp_set_pic_desc_width(small, 64) == 0
    assert m.dvpp_set_pic_desc_height(small, 64) == 0
    assert m.venc_send_frame(d, small, 0, cfg, None) == 100000  # another size
    assert m.venc_destroy_channel(d) == 0


def test_skipped_frame_is_a_reference_without_a_picture(ready: ModuleType) -> None:
    """vdec_send_skipped_frame decodes the frame (later frames that reference it are right)
    and its callback gets no output desc (0)."""
    acl = ready
    pkts, ref = packets("libx264", 2)
    got: list[tuple[int, Any]] = []
    ch = vdec(acl, lambda sd, pd, ud: got.append((pd, ud)))
    cfg = acl.media.vdec_create_frame_config()
    assert acl.media.vdec_send_skipped_frame(ch, stream_desc(acl, pkts[0]), cfg, "skip") == 0
    pd = out_pic(acl)
    assert acl.media.vdec_send_frame(ch, stream_desc(acl, pkts[1]), pd, cfg, "show") == 0
    assert acl.rt.process_report(1000) == 0
    assert got == [(0, "skip"), (pd, "show")]
    y = read(acl, acl.media.dvpp_get_pic_desc_data(pd), W * H).reshape(H, W)
    assert np.array_equal(y, ref[1][:H])
    assert acl.media.vdec_destroy_channel(ch) == 0


def test_input_freed_before_its_callback_fails_the_frame(ready: ModuleType) -> None:
    """Freeing a VENC input before the frame's callback (as the public VENC sample does) fails
    the encode task; the callback's stream desc carries the task's code, not 0."""
    acl = ready
    m = acl.media
    codes: list[tuple[int, int]] = []
    d, ret = venc(acl, lambda pic, sd, ud: codes.append(
        (m.dvpp_get_stream_desc_ret_code(sd), m.dvpp_get_stream_desc_size(sd))))
    assert ret == 0
    cfg = m.venc_create_frame_config()
    pic = out_pic(acl)
    assert m.venc_send_frame(d, pic, 0, cfg, None) == 0
    assert m.dvpp_free(m.dvpp_get_pic_desc_data(pic)) == 0  # before the callback: too early
    assert acl.rt.process_report(1000) == 0
    assert codes == [(507053, 0)]
    assert m.venc_destroy_channel(d) == 0


def test_channel_outlived_by_its_context(ready: ModuleType) -> None:
    """Destroying the context first takes the channel's stream with it: a later send gets
    507000 (an invalid stream), and destroying the channel still works instead of waiting
    for callbacks that can never come."""
    acl = ready
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    ch = vdec(acl, lambda *a: None)
    pkts, _ = packets("libx264", 1)
    sd, pd = stream_desc(acl, pkts[0]), out_pic(acl)
    cfg = acl.media.vdec_create_frame_config()
    assert acl.rt.destroy_context(ctx) == 0
    assert acl.rt.set_device(0) == 0
    assert acl.media.vdec_send_frame(ch, sd, pd, cfg, None) == 507000
    assert acl.media.vdec_destroy_channel(ch) == 0


def _send_all_from_one_buffer(acl: ModuleType, pkts: list[bytes], asynchronous: bool
                              ) -> tuple[int, list[int]]:
    """Send every packet from one DVPP input buffer, refilled before each send (with a
    synchronous copy, or an async copy on another stream that nothing waits for)."""
    m = acl.media
    got: list[int] = []
    ch = vdec(acl, lambda sd, pd, ud: got.append(pd))
    cap = max(len(p) for p in pkts)
    buf, ret = m.dvpp_malloc(cap)
    assert ret == 0
    copy_stream, ret = acl.rt.create_stream()
    assert ret == 0
    keep = [bytes(p) for p in pkts]
    cfg = m.vdec_create_frame_config() if asynchronous else 0  # reserved: NULL is allowed
    pics = []
    for data in keep:
        src = acl.util.bytes_to_ptr(data)
        if asynchronous:
            assert acl.rt.memcpy_async(buf, cap, src, len(data), H2D, copy_stream) == 0
        else:
            assert acl.rt.memcpy(buf, cap, src, len(data), H2D) == 0
        sd = m.dvpp_create_stream_desc()
        assert m.dvpp_set_stream_desc_data(sd, buf) == 0
        assert m.dvpp_set_stream_desc_size(sd, len(data)) == 0
        pd = out_pic(acl)
        pics.append(pd)
        assert m.vdec_send_frame(ch, sd, pd, cfg, None) == 0
    while len(got) < len(pkts):
        assert acl.rt.process_report(1000) == 0
    assert acl.rt.synchronize_stream(copy_stream) == 0
    assert acl.media.vdec_destroy_channel(ch) == 0
    return buf, pics


def test_vdec_takes_the_bitstream_before_send_frame_returns(ready: ModuleType,
                                                            session: Session) -> None:
    """One input buffer refilled for each of 12 frames, as on hardware (issue 28: every
    frame decoded): aclvdecSendFrame has handed the bitstream to the decoder when it returns
    (it synchronizes its send stream), so the next refill cannot reach a frame sent before;
    every picture is right and there is no race."""
    from acl_lab.tracer.checks import run_checks

    pkts, ref = packets("libx264", 12)
    assert len(pkts) == 12
    _, pics = _send_all_from_one_buffer(ready, pkts, asynchronous=False)
    for i, pd in enumerate(pics):
        assert ready.media.dvpp_get_pic_desc_ret_code(pd) == 0, i
        y = read(ready, ready.media.dvpp_get_pic_desc_data(pd), W * H).reshape(H, W)
        assert np.array_equal(y, ref[i][:H]), i
    assert [f for f in run_checks(session.trace()) if f.kind == "race"] == []


def test_vdec_input_refilled_by_an_unwaited_async_copy_is_a_race(ready: ModuleType,
                                                                 session: Session) -> None:
    """The unsafe reuse stays a race: the buffer is refilled by an async copy on another
    stream that nothing orders before aclvdecSendFrame, which reads the bitstream at once."""
    from acl_lab.tracer.checks import run_checks

    pkts, _ = packets("libx264", 3)
    _send_all_from_one_buffer(ready, pkts, asynchronous=True)
    races = [f for f in run_checks(session.trace()) if f.kind == "race"]
    assert races
    assert any("vdec_send_frame" in f.message for f in races)
