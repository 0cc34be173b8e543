"""Bad-input rows of the media functions beyond the JPEG-decode/resize subset: ROI configs,
batch pic descs, stream descs, JPEGE, the VPC crop family, VDEC and VENC (imported by
``bad_inputs`` at its end; the objects come from ``media_world``)."""

from __future__ import annotations

from .bad_inputs import (
    CFG,
    CHAN,
    CHAN_DESC,
    DEAD_CFG,
    DVPP_MEM,
    GARBAGE,
    HOST,
    NONZERO,
    PIC,
    STREAM,
    TID,
    VALUE,
    Ref,
    at,
    code,
    handle,
    no_ctx,
    nonzero,
    row,
    stream_arg,
    valued,
)

ROI, DEAD_ROI, ODD_ROI = Ref("roi"), Ref("dead_roi"), Ref("odd_roi")
BATCH, DEAD_BATCH, IN_BATCH, OUT_BATCH = (Ref("batch"), Ref("dead_batch"), Ref("in_batch"),
                                          Ref("out_batch"))
SDESC, DEAD_SDESC, H264 = Ref("sdesc"), Ref("dead_sdesc"), Ref("h264")
JCFG, DEAD_JCFG = Ref("jcfg"), Ref("dead_jcfg")
CROP_IN, CROP_OUT = Ref("crop_in"), Ref("crop_out")
SIZE_PTR, ZERO_SIZE_PTR, ENC_OUT = Ref("size_ptr"), Ref("zero_size_ptr"), Ref("enc_out")
VDEC_DESC, DEAD_VDEC_DESC, VDEC_READY, VDEC_CHAN = (Ref("vdec_desc"), Ref("dead_vdec_desc"),
                                                    Ref("vdec_ready"), Ref("vdec_chan"))
VDEC_CFG, DEAD_VDEC_CFG, VDEC_OUT = Ref("vdec_cfg"), Ref("dead_vdec_cfg"), Ref("vdec_out")
VENC_DESC, DEAD_VENC_DESC, VENC_READY, VENC_CHAN = (Ref("venc_desc"), Ref("dead_venc_desc"),
                                                    Ref("venc_ready"), Ref("venc_chan"))
VENC_CFG, DEAD_VENC_CFG, VENC_IN = Ref("venc_cfg"), Ref("dead_venc_cfg"), Ref("venc_in")
E_PARAM = code(100000)

# ------------------------------------------------------------------ makers (parse nothing)
for _n in ("dvpp_create_stream_desc", "dvpp_create_jpege_config", "vdec_create_channel_desc",
           "vdec_create_frame_config", "venc_create_channel_desc", "venc_create_frame_config"):
    row(f"acl.media.{_n}", ())

# ------------------------------------------------------------------ ROI configs
_ROI_BAD = handle(0, DEAD_ROI, None, PIC, what="roi config")
row("acl.media.dvpp_create_roi_config", (0, 31, 0, 31))
row("acl.media.dvpp_destroy_roi_config", (ROI,), _ROI_BAD)
row("acl.media.dvpp_set_roi_config", (ROI, 0, 31, 0, 31), _ROI_BAD)
for _f in ("left", "right", "top", "bottom"):
    row(f"acl.media.dvpp_set_roi_config_{_f}", (ROI, 2), _ROI_BAD)

# ------------------------------------------------------------------ batch pic descs
_BATCH_BAD = handle(0, DEAD_BATCH, None, PIC, what="batch pic desc")
row("acl.media.dvpp_create_batch_pic_desc", (2,),
    at(0, 0, NONZERO, "batch size 0 (null handle)"),
    at(0, 257, NONZERO, "more than the 256 pictures of a VPC batch"))
row("acl.media.dvpp_destroy_batch_pic_desc", (BATCH,), _BATCH_BAD)
row("acl.media.dvpp_get_pic_desc", (BATCH, 1), valued(_BATCH_BAD, 0),
    at(1, 2, NONZERO, "index past the batch"))

# ------------------------------------------------------------------ stream descs
_SD_BAD = handle(0, DEAD_SDESC, None, PIC, what="stream desc")
row("acl.media.dvpp_destroy_stream_desc", (SDESC,), _SD_BAD)
for _f, _v in (("data", DVPP_MEM), ("size", 64), ("format", 1), ("timestamp", 7),
               ("ret_code", 1), ("eos", 1)):
    row(f"acl.media.dvpp_set_stream_desc_{_f}", (SDESC, _v), _SD_BAD)
    row(f"acl.media.dvpp_get_stream_desc_{_f}", (SDESC,), valued(_SD_BAD, 0))

# ------------------------------------------------------------------ JPEGE
_JCFG_BAD = handle(0, DEAD_JCFG, None, PIC, what="jpege config")
row("acl.media.dvpp_destroy_jpege_config", (JCFG,), _JCFG_BAD)
row("acl.media.dvpp_set_jpege_config_level", (JCFG, 90), _JCFG_BAD,
    at(1, 101, NONZERO, "level above 100"))
row("acl.media.dvpp_get_jpege_config_level", (JCFG,), valued(_JCFG_BAD, 0))
row("acl.media.dvpp_jpeg_predict_enc_size", (CROP_IN, JCFG),
    handle(0, None, None, JCFG, what="input pic desc"),
    at(0, PIC, NONZERO, "input desc with no picture (format 0, size 0)"),
    at(1, DEAD_JCFG, NONZERO, "destroyed jpege config"))
_ENC = (CHAN, CROP_IN, ENC_OUT, SIZE_PTR, JCFG, STREAM)
row("acl.media.dvpp_jpeg_encode_async", _ENC,
    handle(0, None, None, PIC, what="channel desc"),
    at(0, CHAN_DESC, NONZERO, "channel desc without a channel"),
    at(1, PIC, NONZERO, "input desc with no picture"),
    at(1, 0, NONZERO, "null input desc"),
    at(2, 0, NONZERO, "null output"),
    at(2, HOST, NONZERO, "output in host memory (JPEGE: dvpp_malloc memory)"),
    at(2, GARBAGE, NONZERO, "garbage output pointer"),
    at(3, 0, NONZERO, "null size pointer"),
    at(3, ZERO_SIZE_PTR, NONZERO, "a size of 0 at the size pointer"),
    at(3, ENC_OUT, NONZERO, "a device address as the size pointer"),
    at(4, DEAD_JCFG, NONZERO, "destroyed jpege config"),
    at(4, 0, NONZERO, "null jpege config"),
    stream_arg(5, foreign=NONZERO),
    no_ctx(_ENC, NONZERO, "no current context"))

# ------------------------------------------------------------------ VPC crop family


def _vpc_cases(n: int, stream_at: int, cfg_at: int | None = None) -> list:
    out = [*handle(0, None, None, PIC, what="channel desc"),
           at(0, CHAN_DESC, NONZERO, "channel desc without a channel"),
           at(1, PIC, NONZERO, "input desc with no picture"),
           at(2, PIC, NONZERO, "output desc with no picture"),
           at(3, DEAD_ROI, NONZERO, "destroyed crop area"),
           at(3, ODD_ROI, NONZERO, "crop area with an odd left offset (YUV420SP rule)"),
           at(3, 0, NONZERO, "null crop area"),
           *stream_arg(stream_at, foreign=NONZERO)]
    if n >= 5:
        out.append(at(4, ODD_ROI, NONZERO, "paste area with an odd left offset"))
    if cfg_at is not None:
        out.append(at(cfg_at, DEAD_CFG, NONZERO, "destroyed resize config"))
    return out


row("acl.media.dvpp_vpc_crop_async", (CHAN, CROP_IN, CROP_OUT, ROI, STREAM), _vpc_cases(4, 4))
row("acl.media.dvpp_vpc_crop_resize_async", (CHAN, CROP_IN, CROP_OUT, ROI, CFG, STREAM),
    _vpc_cases(4, 5, 4))
row("acl.media.dvpp_vpc_crop_and_paste_async", (CHAN, CROP_IN, CROP_OUT, ROI, ROI, STREAM),
    _vpc_cases(5, 5))
row("acl.media.dvpp_vpc_crop_resize_paste_async",
    (CHAN, CROP_IN, CROP_OUT, ROI, ROI, CFG, STREAM), _vpc_cases(5, 6, 5))


def _batch_cases(crops_at: int, stream_at: int) -> list:
    return [*handle(0, None, None, PIC, what="channel desc"),
            at(1, DEAD_BATCH, NONZERO, "destroyed input batch"),
            at(3, DEAD_BATCH, NONZERO, "destroyed output batch"),
            at(2, [], VALUE, "empty roi_nums (1-256 entries)"),
            at(2, [3], NONZERO, "roi_nums adds up to more areas than given"),
            at(crops_at, [ROI], NONZERO, "one crop area for two roi_nums"),
            at(crops_at, [ROI, DEAD_ROI], NONZERO, "a destroyed crop area in the list"),
            *stream_arg(stream_at, foreign=NONZERO)]


row("acl.media.dvpp_vpc_batch_crop_async", (CHAN, IN_BATCH, [2], OUT_BATCH, [ROI, ROI], STREAM),
    valued(_batch_cases(4, 5), 0))
row("acl.media.dvpp_vpc_batch_crop_and_paste_async",
    (CHAN, IN_BATCH, [2], OUT_BATCH, [ROI, ROI], [ROI, ROI], STREAM),
    valued(_batch_cases(4, 6), 0),
    at(5, [ROI], nonzero(0), "paste list shorter than the crop list"))
row("acl.media.dvpp_vpc_batch_crop_resize_async",
    (CHAN, IN_BATCH, [2], OUT_BATCH, [ROI, ROI], CFG, STREAM), _batch_cases(4, 6))
row("acl.media.dvpp_vpc_batch_crop_resize_paste_async",
    (CHAN, IN_BATCH, [2], OUT_BATCH, [ROI, ROI], [ROI, ROI], CFG, STREAM), _batch_cases(4, 7),
    at(5, [ROI], NONZERO, "paste list shorter than the crop list"))

# ------------------------------------------------------------------ VDEC / VENC descs
for _fam, _desc, _dead, _ready, _fields in (
        ("vdec", VDEC_DESC, DEAD_VDEC_DESC, VDEC_READY,
         (("channel_id", 3), ("thread_id", TID), ("entype", 1), ("out_pic_format", 1),
          ("out_pic_width", 128), ("out_pic_height", 128), ("ref_frame_num", 2),
          ("out_mode", 0), ("bit_depth", 0))),
        ("venc", VENC_DESC, DEAD_VENC_DESC, VENC_READY,
         (("thread_id", TID), ("entype", 1), ("pic_format", 1), ("pic_width", 128),
          ("pic_height", 128), ("key_frame_interval", 16), ("buf_addr", DVPP_MEM),
          ("buf_size", 1 << 20), ("max_bit_rate", 1000), ("rc_mode", 0), ("src_rate", 30)))):
    _bad = handle(0, _dead, None, PIC, what=f"{_fam} channel desc")
    row(f"acl.media.{_fam}_destroy_channel_desc", (_desc,), _bad)
    for _f, _v in _fields:
        row(f"acl.media.{_fam}_set_channel_desc_{_f}", (_desc, _v), _bad)
        row(f"acl.media.{_fam}_get_channel_desc_{_f}", (_desc,), valued(_bad, 0))
    row(f"acl.media.{_fam}_set_channel_desc_callback", (_desc, print), _bad)
    row(f"acl.media.{_fam}_get_channel_desc_callback", (_ready,), valued(_bad, 0))
row("acl.media.venc_get_channel_desc_channel_id", (VENC_DESC,),
    valued(handle(0, DEAD_VENC_DESC, None, PIC, what="venc channel desc"), 0))
for _fam, _cfg, _dead in (("vdec", VDEC_CFG, DEAD_VDEC_CFG), ("venc", VENC_CFG, DEAD_VENC_CFG)):
    row(f"acl.media.{_fam}_destroy_frame_config", (_cfg,),
        handle(0, _dead, None, PIC, what=f"{_fam} frame config"))
_VCFG_BAD = handle(0, DEAD_VENC_CFG, None, VDEC_CFG, what="venc frame config")
for _f in ("force_i_frame", "eos"):
    row(f"acl.media.venc_set_frame_config_{_f}", (VENC_CFG, 1), _VCFG_BAD)
    row(f"acl.media.venc_get_frame_config_{_f}", (VENC_CFG,), valued(_VCFG_BAD, 0))

# ------------------------------------------------------------------ VDEC / VENC channels
row("acl.media.vdec_create_channel", (VDEC_READY,),
    handle(0, DEAD_VDEC_DESC, None, PIC, what="vdec channel desc"),
    at(0, VDEC_DESC, NONZERO, "desc without callback or thread id"),
    at(0, VDEC_CHAN, NONZERO, "desc that already has a channel"),
    no_ctx((VDEC_READY,), NONZERO, "no current context"))
row("acl.media.vdec_destroy_channel", (VDEC_CHAN,),
    handle(0, DEAD_VDEC_DESC, None, PIC, what="vdec channel desc"),
    at(0, VDEC_READY, NONZERO, "desc without a channel"))
_SEND = (VDEC_CHAN, H264, VDEC_OUT, VDEC_CFG, None)
row("acl.media.vdec_send_frame", _SEND,
    handle(0, DEAD_VDEC_DESC, None, PIC, what="vdec channel desc"),
    at(0, VDEC_READY, NONZERO, "desc without a channel"),
    at(1, DEAD_SDESC, NONZERO, "destroyed stream desc"),
    at(1, SDESC, NONZERO, "stream desc with no data"),
    at(2, PIC, NONZERO, "output desc with no buffer"),
    at(2, 0, NONZERO, "null output desc for a frame that is not EOS"),
    at(3, DEAD_VDEC_CFG, NONZERO, "destroyed frame config"),
    at(3, VENC_CFG, NONZERO, "a VENC frame config"))
# a NULL frame config is allowed (reserved: "may be NULL", CANN's aclvdecSendFrame page; the
# public vdec samples pass nullptr): tests/acl/test_media_video.py sends frames with it
row("acl.media.venc_create_channel", (VENC_READY,),
    handle(0, DEAD_VENC_DESC, None, PIC, what="venc channel desc"),
    at(0, VENC_DESC, NONZERO, "desc without callback, thread id or size"),
    at(0, VENC_CHAN, NONZERO, "desc that already has a channel"),
    no_ctx((VENC_READY,), NONZERO, "no current context"))
row("acl.media.venc_destroy_channel", (VENC_CHAN,),
    handle(0, DEAD_VENC_DESC, None, PIC, what="venc channel desc"),
    at(0, VENC_READY, NONZERO, "desc without a channel"))
_VSEND = (VENC_CHAN, VENC_IN, 0, VENC_CFG, None)
row("acl.media.venc_send_frame", _VSEND,
    handle(0, DEAD_VENC_DESC, None, PIC, what="venc channel desc"),
    at(0, VENC_READY, NONZERO, "desc without a channel"),
    at(1, PIC, NONZERO, "input desc with no picture"),
    at(1, 0, NONZERO, "null input for a frame that is not EOS"),
    at(3, DEAD_VENC_CFG, NONZERO, "destroyed frame config"),
    at(3, VDEC_CFG, NONZERO, "a VDEC frame config"))
row("acl.media.vdec_send_skipped_frame", (VDEC_CHAN, H264, VDEC_CFG, None),
    handle(0, DEAD_VDEC_DESC, None, PIC, what="vdec channel desc"),
    at(0, VDEC_READY, NONZERO, "desc without a channel"),
    at(1, SDESC, NONZERO, "stream desc with no data"),
    at(2, DEAD_VDEC_CFG, NONZERO, "destroyed frame config"))
row("acl.media.dvpp_set_pic_desc_ret_code", (PIC, 1),
    handle(0, None, None, CFG, what="pic desc"))
row("acl.media.dvpp_get_channel_desc_channel_id", (CHAN,),
    valued(handle(0, None, None, PIC, what="channel desc"), 0))
