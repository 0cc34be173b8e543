"""VDEC and VENC channels on the emulated device, with a real codec (FFmpeg through PyAV).

Functions over a ``Session``; the session holds every object (this module keeps no state).
A channel works the way the real one is documented to (pyACL/C "VDEC功能及约束说明" and
"aclvdecCreateChannel"/"aclvdecDestroyChannel" pages, aclcppdevg_03_0331, CANN 8.0):

- ``create_channel`` makes an internal stream on the current context and subscribes the
  channel desc's thread to it (aclvdecCreateChannel wraps aclrtCreateStream and
  aclrtSubscribeReport), so that thread's ``acl.rt.process_report`` runs the callbacks;
- every ``send_frame`` queues a codec task on that stream (on the device's DVPP engine, in
  virtual time: it reads the input at its start and writes the output at its end) followed by
  a callback task that goes through the session's one report queue, exactly like
  ``acl.rt.launch_callback``;
- ``destroy_channel`` waits until every frame sent was processed and its callback returned,
  then unsubscribes the thread and destroys the stream. A wait that can never end (the report
  thread has exited or is the caller) is reported as a deadlock, never a hang.

Decoding and encoding use PyAV (FFmpeg's h264/hevc decoders, libx264/libx265 encoders in the
PyAV wheels), imported only when a channel is created. Both run in low-delay modes: one frame
in, one picture (or one bitstream packet) out, like VDEC's and VENC's frame-by-frame modes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..constants import ErrorCode
from . import alloc, devices, scheduler, streams, threads, waits
from .costs import callback_ns, dvpp_ns
from .dvpp import (
    ACL_ERROR_INVALID_PARAM,
    PIXEL_FORMAT_YVU_SEMIPLANAR_420,
    YUV420SP,
    Layout,
    PicDesc,
    StreamDesc,
    _align,
    _dvpp_buffer,
    blank_sp420,
    pic_desc,
    planes,
    resize_plane,
    stream_desc,
)
from .errors import AclError
from .kinds import Engine, ObjectKind, SyncKind, TaskKind
from .memory import DEVICE, DVPP
from .objects import HostThread, Stream, Task
from .singleop import queue_device_task, read_now

if TYPE_CHECKING:
    from .session import Session


#: acldvppStreamFormat / enType values (DVPP-hdr): H265 main, H264 baseline/main/high
H265_MAIN_LEVEL, H264_BASELINE_LEVEL, H264_MAIN_LEVEL, H264_HIGH_LEVEL = 0, 1, 2, 3
_EN_TYPES = {H265_MAIN_LEVEL: "H.265 main", H264_BASELINE_LEVEL: "H.264 baseline",
             H264_MAIN_LEVEL: "H.264 main", H264_HIGH_LEVEL: "H.264 high"}
#: VDEC input resolution on Atlas inference/training products (VDEC constraint page)
VDEC_MIN_WH, VDEC_MAX_WH = 128, 4096
#: VENC picture limits (pyACL VENC constraint page: 128x128 to 1920x1920; unverified here)
VENC_MIN_WH, VENC_MAX_WH = 128, 1920
#: bytes reserved per VENC output bitstream beyond the raw picture size
VENC_SLACK = 4096
#: VENC output buffer when the program sets none (aclvencSetChannelDescBufSize)
VENC_DEFAULT_BUF = 8 << 20
#: code a failed frame reports in its output desc (the hardware's code is not documented)
FRAME_FAILED = ACL_ERROR_INVALID_PARAM


def _codec() -> Any:
    """The PyAV module (FFmpeg); a readable error when it is not installed."""
    try:
        import av
    except ImportError:  # pragma: no cover - av is a test dependency
        raise AclError(ACL_ERROR_INVALID_PARAM, "VDEC/VENC need PyAV (pip install av, or the "
                                                "acl_lab[media] extra)") from None
    return av


# ------------------------------------------------------------------ objects


class VdecChannelDesc:
    """An aclvdecChannelDesc: the channel's settings and, once created, its channel."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.channel_id = 0
        self.thread_id = 0
        self.callback: Callable[..., Any] | None = None
        self.en_type = H265_MAIN_LEVEL
        self.out_pic_format = 1
        self.out_pic_width = 0
        self.out_pic_height = 0
        self.ref_frame_num = 0
        self.out_mode = 0
        self.bit_depth = 0
        self.channel: CodecChannel | None = None
        self.alive = True


class VencChannelDesc:
    """An aclvencChannelDesc."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.channel_id = 0
        self.thread_id = 0
        self.callback: Callable[..., Any] | None = None
        self.en_type = H265_MAIN_LEVEL
        self.pic_format = 1
        self.pic_width = 0
        self.pic_height = 0
        self.key_frame_interval = 16
        self.buf_addr = 0
        self.buf_size = 0
        self.max_bit_rate = 0
        self.rc_mode = 0
        self.src_rate = 0
        #: the output buffer of the last channel, freed with the desc
        self.ring = 0
        self.channel: CodecChannel | None = None
        self.alive = True


class FrameConfig:
    """An aclvdecFrameConfig or aclvencFrameConfig (VENC: force-I-frame and EOS flags)."""

    def __init__(self, venc: bool) -> None:
        self.oid = -1
        self.handle = 0
        self.venc = venc
        self.force_i_frame = 0
        self.eos = 0
        self.alive = True


class CodecChannel:
    """A created VDEC or VENC channel: its stream, report thread and codec context."""

    def __init__(self, kind: str, ctx: Any, stream: Stream, thread: HostThread,
                 codec: Any) -> None:
        self.oid = -1
        self.handle = 0
        self.kind = kind
        self.ctx = ctx
        self.stream = stream
        self.thread = thread
        self.codec = codec
        #: frames sent whose callback has not returned yet
        self.outstanding = 0
        self.frames = 0
        #: the report thread's clock when the latest callback returned
        self.done_clock = 0
        #: VENC: output ring buffer (address, size, next offset)
        self.ring = 0
        self.ring_size = 0
        self.ring_next = 0
        self.alive = True


def vdec_desc(s: Session, handle: int) -> VdecChannelDesc:
    """Resolve a VDEC channel-desc handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, VdecChannelDesc, "vdec channel desc")


def venc_desc(s: Session, handle: int) -> VencChannelDesc:
    """Resolve a VENC channel-desc handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, VencChannelDesc, "venc channel desc")


def frame_config(s: Session, handle: int, venc: bool) -> FrameConfig:
    """Resolve a frame-config handle of the right family."""
    what = "venc frame config" if venc else "vdec frame config"
    cfg: FrameConfig = s.lookup(handle, FrameConfig, what)
    if cfg.venc != venc:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{handle:#x} is not a {what}")
    return cfg


def create_desc(s: Session, cid: int, venc: bool) -> int:
    """aclvdecCreateChannelDesc / aclvencCreateChannelDesc."""
    if venc:
        return s.register(VencChannelDesc(), ObjectKind.VENC_CHANNEL_DESC, cid, "venc channel desc")
    return s.register(VdecChannelDesc(), ObjectKind.VDEC_CHANNEL_DESC, cid, "vdec channel desc")


def destroy_desc(s: Session, cid: int, handle: int, venc: bool) -> None:
    """Destroy a channel desc; 148051 while its channel still exists (destroy it first)."""
    d: Any = venc_desc(s, handle) if venc else vdec_desc(s, handle)
    if d.channel is not None:
        fam = "venc" if venc else "vdec"
        raise AclError(ErrorCode.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED,
                       f"{fam} channel desc {handle:#x} still has a channel: call "
                       f"acl.media.{fam}_destroy_channel(desc) first")
    if venc and d.ring:
        alloc.free(s, s.thread(), cid, d.ring, "dvpp")
        d.ring = 0
    s.retire(d, cid)


def create_frame_config(s: Session, cid: int, venc: bool) -> int:
    """aclvdecCreateFrameConfig / aclvencCreateFrameConfig."""
    kind = ObjectKind.VENC_FRAME_CONFIG if venc else ObjectKind.VDEC_FRAME_CONFIG
    return s.register(FrameConfig(venc), kind, cid, ("venc" if venc else "vdec") + " frame config")


def destroy_frame_config(s: Session, cid: int, handle: int, venc: bool) -> None:
    """aclvdecDestroyFrameConfig / aclvencDestroyFrameConfig."""
    cfg = frame_config(s, handle, venc)
    s.retire(cfg, cid)


def set_callback(s: Session, handle: int, fn: Any, venc: bool) -> None:
    """Store the per-frame callback (the binding checks it is callable)."""
    if not callable(fn):
        raise TypeError("parameter must be callable")
    d: Any = venc_desc(s, handle) if venc else vdec_desc(s, handle)
    d.callback = fn


def get_callback(s: Session, handle: int, venc: bool) -> Any:
    """The stored callback; RuntimeError like the binding when none was set."""
    d: Any = venc_desc(s, handle) if venc else vdec_desc(s, handle)
    if d.callback is None:
        raise RuntimeError("did not set callback, failed")
    return d.callback


# ------------------------------------------------------------------ channels


def _open_channel(s: Session, th: HostThread, cid: int, d: Any, kind: str,
                  codec: Any) -> CodecChannel:
    """The internal stream, the report-thread subscription and the channel object."""
    fam = kind.lower()
    if d.channel is not None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{fam} channel desc {d.handle:#x} already has "
                                                "a channel")
    if d.callback is None:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{fam} channel desc {d.handle:#x} has no callback: call "
                       f"acl.media.{fam}_set_channel_desc_callback first")
    if d.thread_id == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{fam} channel desc {d.handle:#x} has no thread id: call "
                       f"acl.media.{fam}_set_channel_desc_thread_id with the thread that "
                       "loops on acl.rt.process_report")
    ctx = devices.require_ctx(s, th)
    target = threads.thread_by_tid(s, d.thread_id)
    st = streams.make(s, ctx, False, 0, cid)
    # aclvdecCreateChannel subscribes the thread to its stream (aclrtSubscribeReport).
    st.subscriber = target
    target.subscriptions.append(st)
    ch = CodecChannel(kind, ctx, st, target, codec)
    s.register(ch, ObjectKind.VDEC_CHANNEL if kind == "VDEC" else ObjectKind.VENC_CHANNEL, cid,
               f"{fam} channel of desc {d.handle:#x}", device=ctx.device.index, ctx=ctx.oid)
    d.channel = ch
    return ch


def _close_channel(s: Session, th: HostThread, cid: int, d: Any, fam: str) -> CodecChannel:
    """Wait for every frame's callback, then unsubscribe and destroy the stream."""
    ch: CodecChannel | None = d.channel
    if ch is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{fam} channel desc {d.handle:#x} has no "
                                                f"channel: call acl.media.{fam}_create_channel "
                                                "first")

    st = ch.stream
    if st.alive:
        _wait_frames(s, th, cid, ch, f"acl.media.{fam}_destroy_channel")
    # else the context went first and took the stream and its queued frames with it
    if st.subscriber is not None:
        sub = st.subscriber
        sub.subscriptions = [x for x in sub.subscriptions if x is not st]
        st.subscriber = None
    if st.alive:
        streams.destroy_now(s, st, cid, 0)
    s.retire(ch, cid)
    d.channel = None
    return ch


def _wait_frames(s: Session, th: HostThread, cid: int, ch: CodecChannel, api: str) -> None:
    """Block until every frame sent to ``ch`` was processed and its callback returned.

    The caller then continues after the last callback (virtual time too) and is ordered after
    every task of the channel, like a synchronize of its stream. A wait the report thread can
    never end is a deadlock report (waits.block), not a hang.
    """
    def needs() -> list[tuple[Any, str]]:
        return [(ch.thread, f"{api} waits for {ch.outstanding} frame callback(s), which run "
                            f"in {ch.thread.label()}'s acl.rt.process_report")]

    start = th.clock
    waits.block(s, th, cid, lambda: ch.outstanding == 0, needs,
             f"{ch.kind} channel {ch.handle:#x} to finish its frames", -1, 0)
    st = ch.stream
    th.clock = max(th.clock, ch.done_clock, st.tail_end)
    scheduler.advance(s, th.clock)
    s.hooks.on_sync(cid, SyncKind.STREAM, st.oid, start, th.clock)


def _live_stream(ch: CodecChannel, api: str) -> None:
    """507000 when the channel's stream went with its context (RT_ERROR_STREAM_INVALID)."""
    if not ch.stream.alive:
        raise AclError(ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR,
                       f"{api}: the channel's stream was destroyed with its context "
                       "(acl.rt.destroy_context or reset_device); destroy the channel "
                       "before its context")


def _queue_callback(s: Session, th: HostThread, cid: int, ch: CodecChannel,
                    fn: Callable[..., Any], args: tuple[int, int], user_data: Any,
                    work: Any, out: Any, done: Callable[[], None] | None = None) -> None:
    """A callback task on the channel's stream, after the codec task ``work``, delivered by
    the report queue. ``out`` (the output pic or stream desc, or None) gets the task's code
    when the task itself failed (its memory was freed, for instance)."""
    ch.outstanding += 1

    def deliver(ud: Any) -> None:
        try:
            with s.lock:  # the frame's effects are due by now (the task ended before)
                scheduler.advance(s, s.thread().clock)
                if work.status and out is not None and not out.ret_code:
                    out.ret_code = work.status
            fn(args[0], args[1], ud)
        finally:
            with s.lock:
                if done is not None:
                    done()
                ch.done_clock = max(ch.done_clock, s.thread().clock)
                ch.outstanding -= 1
                s.progress += 1
                s.cond.notify_all()

    t = Task(TaskKind.CALLBACK, ch.stream, cid, th.clock, Engine.NONE,
             callback_ns(s.profile))
    t.callback = deliver
    t.user_data = user_data
    scheduler.submit(s, t)


def _out_layout(w: int, h: int, pic: PicDesc, api: str, fmt: int) -> Layout:
    """The VDEC output layout (VDEC table: widthStride = width aligned to 16, at least 32;
    heightStride = height aligned to 2; size >= wStride*hStride*3/2); 0 strides are filled."""
    ws = pic.width_stride or max(_align(w, 16), 32)
    hs = pic.height_stride or _align(h, 2)
    if ws % 16 or ws < w or ws < 32:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the output widthStride is {ws}; VDEC writes rows of the width "
                       f"aligned up to 16 (at least 32): use {max(_align(w, 16), 32)}")
    if hs % 2 or hs < h:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the output heightStride is {hs}; VDEC needs the height aligned "
                       f"up to 2: use {_align(h, 2)}")
    lay = Layout(w, h, ws, hs, fmt == PIXEL_FORMAT_YVU_SEMIPLANAR_420)
    if pic.size < lay.nbytes:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the output size is {pic.size}, but a {w}x{h} YUV420SP picture "
                       f"with strides {ws}x{hs} takes {lay.nbytes} bytes")
    return lay


def frame_to_sp420(frame: Any, lay: Layout) -> bytes:
    """A decoded PyAV frame as YUV420SP bytes in ``lay`` (resized when the sizes differ)."""
    yuv = frame.to_ndarray(format="yuv420p")
    fw, fh = frame.width, frame.height
    y = yuv[:fh]
    u = yuv[fh:fh + fh // 4].reshape(fh // 2, fw // 2)
    v = yuv[fh + fh // 4:].reshape(fh // 2, fw // 2)
    if (fw, fh) != (lay.w, lay.h):
        y = resize_plane(np.ascontiguousarray(y), lay.h, lay.w, 1)
        u = resize_plane(np.ascontiguousarray(u), lay.h // 2, lay.w // 2, 1)
        v = resize_plane(np.ascontiguousarray(v), lay.h // 2, lay.w // 2, 1)
    out = blank_sp420(lay)
    yo = out[:lay.ws * lay.hs].reshape(lay.hs, lay.ws)
    uvo = out[lay.ws * lay.hs:].reshape(lay.hs // 2, lay.ws)
    yo[:lay.h, :lay.w] = y
    uv = np.empty((lay.h // 2, lay.w // 2, 2), dtype=np.uint8)
    uv[:, :, 0], uv[:, :, 1] = (v, u) if lay.nv21 else (u, v)
    uvo[:lay.h // 2, :lay.w] = uv.reshape(lay.h // 2, lay.w)
    return out.tobytes()


# ------------------------------------------------------------------ VDEC


def vdec_create_channel(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """aclvdecCreateChannel: a decoder for the desc's enType, output NV12/NV21."""
    d = vdec_desc(s, handle)
    if d.en_type not in _EN_TYPES:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"enType {d.en_type} is not 0 (H.265 main) or "
                                                "1-3 (H.264 baseline/main/high)")
    if d.out_pic_format not in YUV420SP:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"output format {d.out_pic_format}: the "
                                                "emulator's VDEC writes YUV420SP (1 = NV12, "
                                                "2 = NV21)")
    av = _codec()
    codec = av.CodecContext.create("hevc" if d.en_type == H265_MAIN_LEVEL else "h264", "r")
    codec.thread_count = 1  # frame threads would hold frames back: one in, one out
    codec.flags |= getattr(av.codec.context.Flags, "low_delay", 0)
    _open_channel(s, th, cid, d, "VDEC", codec)


def vdec_destroy_channel(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """aclvdecDestroyChannel: waits for the frames sent and their callbacks."""
    ch = _close_channel(s, th, cid, vdec_desc(s, handle), "vdec")
    ch.codec = None


def vdec_send_frame(s: Session, th: HostThread, cid: int, handle: int, in_handle: int,
                    out_handle: int, cfg_handle: int, user_data: Any,
                    skipped: bool = False) -> None:
    """aclvdecSendFrame: queue the decode of one frame; the callback gets the stream desc,
    the output pic desc and ``user_data``. An EOS stream desc flushes the decoder.
    ``skipped`` (aclvdecSendSkippedFrame): decode as a reference, output no picture."""
    api = "acl.media.vdec_send_skipped_frame" if skipped else "acl.media.vdec_send_frame"
    d = vdec_desc(s, handle)
    if d.callback is None:
        raise RuntimeError("did not set callback, failed")
    ch = d.channel
    if ch is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"vdec channel desc {handle:#x} has no channel: "
                                                "call acl.media.vdec_create_channel first")
    _live_stream(ch, api)
    if cfg_handle:  # "config: reserved, may be NULL" (CANN's aclvdecSendFrame page)
        frame_config(s, cfg_handle, venc=False)
    sd = stream_desc(s, in_handle)
    eos = bool(sd.eos)
    pic: PicDesc | None = None
    if not skipped and (out_handle != 0 or not eos):
        pic = pic_desc(s, out_handle)
        fmt = pic.format or d.out_pic_format  # a desc left at 0 gets the channel's format
        if fmt not in YUV420SP:
            raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the output format is {fmt}; "
                                                    "VDEC writes YUV420SP (1 = NV12, 2 = NV21)")
        dims = (pic.width, pic.height, pic.width_stride, pic.height_stride)
        if any(dims) and not all(dims):
            raise AclError(ACL_ERROR_INVALID_PARAM,
                           f"{api}: the output desc sets only some of width, height, "
                           f"widthStride, heightStride ({dims}); set all four, or none to take "
                           "the stream's size (aclvdecSendFrame page)")
        if all(dims):
            _out_layout(pic.width, pic.height, pic, api, fmt)
        _dvpp_buffer(s, cid, pic.data, max(pic.size, 1), "VDEC output")
    bitstream = b""
    if not eos:
        if sd.size == 0:
            raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the stream desc size is 0 (set it "
                                                    "with acl.media.dvpp_set_stream_desc_size)")
        _dvpp_buffer(s, cid, sd.data, sd.size, "VDEC input")
    writes = [] if pic is None else [(pic.data, pic.size, "VDEC output")]
    want = (pic.width, pic.height) if pic is not None and pic.width and pic.height else None
    decoder = ch.codec
    av = _codec()

    def fail(why: str) -> list[bytes]:
        if pic is not None:
            pic.ret_code = FRAME_FAILED
        s.diag(cid, "dvpp_task_failed", f"VDEC frame {n} failed: {why}; the callback sees "
                                        "it in acl.media.dvpp_get_pic_desc_ret_code", 2)
        return [b""] * len(writes)

    n = ch.frames
    fmt = fmt if pic is not None else d.out_pic_format

    def run(inputs: list[bytes]) -> list[bytes]:
        frames, why = decoded
        if why:
            return fail(why)
        if pic is None:
            return []
        if not frames:
            return fail("the bitstream held no complete picture")
        f = frames[0]
        w, h = want if want is not None else (f.width - f.width % 2, f.height - f.height % 2)
        if not (VDEC_MIN_WH <= f.width <= VDEC_MAX_WH and VDEC_MIN_WH <= f.height <= VDEC_MAX_WH):
            return fail(f"the stream is {f.width}x{f.height}; VDEC decodes "
                        f"{VDEC_MIN_WH}x{VDEC_MIN_WH} to {VDEC_MAX_WH}x{VDEC_MAX_WH}")
        try:
            lay = _out_layout(w, h, pic, api, fmt)
        except AclError as e:
            return fail(e.message)
        pic.width, pic.height = w, h
        pic.width_stride, pic.height_stride = lay.ws, lay.hs
        pic.ret_code = 0
        return [frame_to_sp420(f, lay)]

    if not eos:
        # The decoder takes the frame before aclvdecSendFrame returns: the call runs its
        # send task (an AICPU kernel handing the bitstream to the VDEC) on the channel's send
        # stream and synchronizes that stream (hicann/ge's acl VDEC tests: a failing
        # rtStreamSynchronize fails aclvdecSendFrame, VdecTest aclvdecSendFrame_V100_11),
        # and the public vdec samples free or refill the input right after the call. So the
        # bitstream is read now, at the caller's clock, and reusing the buffer for the next
        # frame once the call returned is safe; a write the program did not order before
        # the call (an async copy still in flight) still races with this read.
        bitstream = read_now(s, th, cid, TaskKind.DVPP, dvpp_ns(s.profile, 0), sd.data,
                             sd.size, "VDEC input", "VDEC send")
    # the decoder's state moves in send order, which is the order of the channel's tasks;
    # the picture is written when the frame's task ends
    decoded: tuple[list[Any], str] = ([], "")
    try:
        decoded = (list(decoder.decode(None if eos else av.Packet(bitstream))), "")
    except (av.error.FFmpegError, ValueError) as e:
        decoded = ([], f"the {_EN_TYPES[d.en_type]} decoder rejected the bitstream ({e})")
    if decoded[1] and pic is None:
        s.diag(cid, "dvpp_task_failed", f"VDEC frame {n} failed: {decoded[1]}", 2)
    pixels = (pic.width * pic.height) if pic is not None and pic.width else \
        (pic.size * 2 // 3 if pic is not None else 0)
    work = queue_device_task(s, th, cid, ch.stream, TaskKind.DVPP, Engine.DVPP,
                             dvpp_ns(s.profile, pixels), [], writes, run,
                             "VDEC EOS" if eos else "VDEC skipped" if skipped else "VDEC",
                             allowed=(DEVICE, DVPP))
    ch.frames += 1
    cb = d.callback
    _queue_callback(s, th, cid, ch, cb, (in_handle, out_handle), user_data, work, pic)
    if eos:  # aclvdecSendFrame with EOS returns once every frame and callback is done
        _wait_frames(s, th, cid, ch, api + " (EOS)")


# ------------------------------------------------------------------ VENC


def venc_create_channel(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """aclvencCreateChannel: an H.264 (libx264) or H.265 (libx265) encoder of the desc's
    size, one bitstream packet per frame, and its output buffer in DVPP memory."""
    d = venc_desc(s, handle)
    if d.en_type not in _EN_TYPES:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"enType {d.en_type} is not 0 (H.265 main) or "
                                                "1-3 (H.264 baseline/main/high)")
    if d.pic_format not in YUV420SP:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"picture format {d.pic_format}: VENC encodes "
                                                "YUV420SP (1 = NV12, 2 = NV21)")
    w, h = d.pic_width, d.pic_height
    if not (VENC_MIN_WH <= w <= VENC_MAX_WH and VENC_MIN_WH <= h <= VENC_MAX_WH) \
            or w % 2 or h % 2:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"VENC picture size {w}x{h}: set an even width and height in "
                       f"[{VENC_MIN_WH}, {VENC_MAX_WH}] with venc_set_channel_desc_pic_width/"
                       "height")
    av = _codec()
    if d.en_type == H265_MAIN_LEVEL:
        enc = av.CodecContext.create("libx265", "w")
        enc.options = {"x265-params": "log-level=none:bframes=0:rc-lookahead=0",
                       "tune": "zerolatency"}
    else:
        enc = av.CodecContext.create("libx264", "w")
        enc.options = {"tune": "zerolatency", "preset": "ultrafast"}
        enc.profile = {1: "Baseline", 2: "Main", 3: "High"}[d.en_type]
    enc.width, enc.height = w, h
    enc.pix_fmt = "yuv420p"
    from fractions import Fraction
    enc.time_base = Fraction(1, max(d.src_rate, 1) if d.src_rate else 30)
    enc.gop_size = max(d.key_frame_interval, 1)
    enc.max_b_frames = 0
    enc.thread_count = 1
    size = d.buf_size or VENC_DEFAULT_BUF
    ch = _open_channel(s, th, cid, d, "VENC", enc)
    if d.ring:  # the buffer of an earlier channel of this desc
        alloc.free(s, th, cid, d.ring, "dvpp")
        d.ring = 0
    ch.ring = alloc.malloc(s, th, cid, size, 2, "dvpp")
    ch.ring_size = size


def venc_destroy_channel(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """aclvencDestroyChannel: waits for the frames sent and their callbacks, then frees the
    output buffer."""
    d = venc_desc(s, handle)
    ch = _close_channel(s, th, cid, d, "venc")
    ch.codec = None
    # The output buffer goes with the desc (venc_destroy_channel_desc): a free recorded
    # inside this call would be placed at the call's start, before the wait for the
    # callbacks that still read it.
    d.ring = ch.ring


def venc_send_frame(s: Session, th: HostThread, cid: int, handle: int, in_handle: int,
                    cfg_handle: int, user_data: Any) -> None:
    """aclvencSendFrame: queue the encoding of one picture (or, with the frame config's EOS,
    the flush); the callback gets the input pic desc, an output stream desc the channel
    owns (valid during the callback) and ``user_data``."""
    api = "acl.media.venc_send_frame"
    d = venc_desc(s, handle)
    if d.callback is None:
        raise RuntimeError("did not set callback, failed")
    ch = d.channel
    if ch is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"venc channel desc {handle:#x} has no channel: "
                                                "call acl.media.venc_create_channel first")
    _live_stream(ch, api)
    cfg = frame_config(s, cfg_handle, venc=True)
    eos = bool(cfg.eos)
    force_i = bool(cfg.force_i_frame)
    encoder = ch.codec
    av = _codec()
    w, h = d.pic_width, d.pic_height
    reads: list[tuple[int, int, str]] = []
    lay: Layout | None = None
    if not eos or in_handle != 0:
        pic = pic_desc(s, in_handle)
        if pic.width and pic.height and (pic.width, pic.height) != (w, h):
            raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the picture is {pic.width}x"
                                                    f"{pic.height}, the channel encodes {w}x{h}")
        ws = pic.width_stride or _align(w, 16)
        hs = pic.height_stride or _align(h, 2)
        if ws % 16 or ws < w or hs % 2 or hs < h:
            raise AclError(ACL_ERROR_INVALID_PARAM,
                           f"{api}: the input strides are {ws}x{hs}; VENC needs the width "
                           f"aligned up to 16 and the height up to 2 ({_align(w, 16)}x"
                           f"{_align(h, 2)})")
        # The channel's format counts; the pic desc's is ignored (aclvencSendFrame page).
        lay = Layout(w, h, ws, hs, d.pic_format == PIXEL_FORMAT_YVU_SEMIPLANAR_420)
        if pic.size < lay.nbytes:
            raise AclError(ACL_ERROR_INVALID_PARAM,
                           f"{api}: the input size is {pic.size}, but a {w}x{h} YUV420SP "
                           f"picture with strides {ws}x{hs} takes {lay.nbytes} bytes")
        _dvpp_buffer(s, cid, pic.data, lay.nbytes, "VENC input")
        reads = [(pic.data, lay.nbytes, "VENC input")]
    slot = min(w * h * 3 // 2 + VENC_SLACK, ch.ring_size)
    offset = 0 if ch.ring_next + slot > ch.ring_size else ch.ring_next
    addr = ch.ring + offset
    out = StreamDesc()
    out.data = addr
    out.format = d.en_type
    out.eos = int(eos)
    n = ch.frames

    def run(inputs: list[bytes]) -> list[bytes]:
        try:
            if lay is not None and not eos:
                y, u, v = planes(inputs[0], lay)
                i420 = np.concatenate([y.reshape(-1), u.reshape(-1), v.reshape(-1)])
                frame = av.VideoFrame.from_ndarray(i420.reshape(h * 3 // 2, w),
                                                   format="yuv420p")
                frame.pts = n
                if force_i:
                    frame.pict_type = av.video.frame.PictureType.I
                packets = encoder.encode(frame)
            else:
                packets = encoder.encode(None)
        except (av.error.FFmpegError, ValueError) as e:
            out.ret_code = FRAME_FAILED
            s.diag(cid, "dvpp_task_failed", f"VENC frame {n} failed: {e}", 2)
            return [b""]
        data = b"".join(bytes(p) for p in packets)
        if len(data) > slot:
            out.ret_code = FRAME_FAILED
            s.diag(cid, "dvpp_task_failed", f"VENC frame {n} needs {len(data)} bytes, more "
                                            f"than the {slot} the output buffer keeps per "
                                            "frame", 2)
            return [b""]
        out.size = len(data)
        out.timestamp = n
        out.ret_code = 0
        return [data]

    work = queue_device_task(s, th, cid, ch.stream, TaskKind.DVPP, Engine.DVPP,
                             dvpp_ns(s.profile, w * h), reads, [(addr, slot, "VENC output")],
                             run,
                             "VENC EOS" if eos else "VENC", allowed=(DEVICE, DVPP))
    ch.ring_next = offset + slot
    ch.frames += 1
    out_handle = s.register(out, ObjectKind.DVPP_STREAM_DESC, cid,
                            f"venc output of channel {ch.handle:#x}")

    def release() -> None:  # the channel owns its output descs: gone after the callback
        if out.alive:
            s.retire(out, cid)

    cb = d.callback
    _queue_callback(s, th, cid, ch, cb, (in_handle, out_handle), user_data, work, out, release)


__all__ = ["CodecChannel", "FrameConfig", "VdecChannelDesc", "VencChannelDesc",
           "frame_to_sp420"]
