"""``acl.media``: DVPP memory, channels, picture descs, JPEG decode and VPC resize.

Enough of DVPP for the decode -> resize -> infer pipeline of the samples (reference 9.2):
``dvpp_malloc``/``dvpp_free``, channel and picture descriptions, JPEG header queries,
``dvpp_jpeg_decode_async`` and ``dvpp_vpc_resize_async``. Decode and resize are tasks on the
device's DVPP engine (acl_lab.runtime.dvpp); they are asynchronous like the real ones.
"""

from __future__ import annotations

from typing import Any

from ..runtime import dvpp
from ..runtime.session import Session
from ._boundary import acl_api


@acl_api("acl.media.dvpp_malloc", "acldvppMalloc", "L", out=1)
def dvpp_malloc(s: Session, th: Any, cid: int, size: int) -> int:
    """``(ptr, ret)``: device memory for DVPP, rounded like aclrtMalloc.

    Differs from real ACL: DVPP memory comes from the same capacity as other device memory.
    """
    return s.malloc(th, cid, size, 2, "dvpp")


@acl_api("acl.media.dvpp_free", "acldvppFree", "p")
def dvpp_free(s: Session, th: Any, cid: int, ptr: int) -> None:
    """Free DVPP memory; 107000 for host or unknown pointers (RT2 DevDvppFree).

    Differs from real ACL: no difference known.
    """
    s.free(th, cid, ptr, "dvpp")


# ------------------------------------------------------------------ channels


@acl_api("acl.media.dvpp_create_channel_desc", "acldvppCreateChannelDesc", "", out="value")
def dvpp_create_channel_desc(s: Session, th: Any, cid: int) -> int:
    """A new channel description (the handle; no ``ret``).

    Differs from real ACL: no difference known.
    """
    return dvpp.create_channel_desc(s, cid)


@acl_api("acl.media.dvpp_set_channel_desc_mode", "acldvppSetChannelDescMode", "kI")
def dvpp_set_channel_desc_mode(s: Session, th: Any, cid: int, desc: int, mode: int) -> None:
    """Set the channel mode bits (VPC=1, JPEGD=2, JPEGE=4, PNGD=8); samples never call it.

    Differs from real ACL: the mode is stored but not enforced (every channel can decode
    and resize).
    """
    dvpp.channel_desc(s, desc).mode = mode


@acl_api("acl.media.dvpp_create_channel", "acldvppCreateChannel", "k")
def dvpp_create_channel(s: Session, th: Any, cid: int, desc: int) -> None:
    """Create the DVPP channel of a channel desc; 100000 if it already has one.

    Differs from real ACL: a current context is required (107002 without one); whether the
    real call needs one is unverified.
    """
    dvpp.create_channel(s, th, cid, desc)


@acl_api("acl.media.dvpp_destroy_channel", "acldvppDestroyChannel", "k")
def dvpp_destroy_channel(s: Session, th: Any, cid: int, desc: int) -> None:
    """Destroy the channel of a channel desc (100000 if it has none).

    Differs from real ACL: tasks already queued through the channel still run (the
    emulator does not wait for them or cancel them).
    """
    dvpp.destroy_channel(s, cid, desc)


@acl_api("acl.media.dvpp_destroy_channel_desc", "acldvppDestroyChannelDesc", "k")
def dvpp_destroy_channel_desc(s: Session, th: Any, cid: int, desc: int) -> None:
    """Destroy a channel desc; 148051 (ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED) while its
    channel still exists: destroy the channel first.

    Differs from real ACL: no difference known.
    """
    dvpp.destroy_channel_desc(s, cid, desc)


# ------------------------------------------------------------------ picture descs


@acl_api("acl.media.dvpp_create_pic_desc", "acldvppCreatePicDesc", "", out="value")
def dvpp_create_pic_desc(s: Session, th: Any, cid: int) -> int:
    """A new picture description with every field 0 (the handle; no ``ret``).

    Differs from real ACL: no difference known.
    """
    return dvpp.create_pic_desc(s, cid)


@acl_api("acl.media.dvpp_destroy_pic_desc", "acldvppDestroyPicDesc", "k")
def dvpp_destroy_pic_desc(s: Session, th: Any, cid: int, desc: int) -> None:
    """Destroy a picture description; its data buffer is not freed (call dvpp_free).

    Differs from real ACL: a task already queued with the desc still completes normally.
    """
    dvpp.destroy_pic_desc(s, cid, desc)


_PIC_FIELDS = (("data", "Data", "p", "the picture buffer address (from dvpp_malloc)"),
               ("size", "Size", "I", "the buffer size in bytes"),
               ("format", "Format", "i", "the acldvppPixelFormat (1 = NV12, 2 = NV21)"),
               ("width", "Width", "I", "the picture width in pixels"),
               ("height", "Height", "I", "the picture height in pixels"),
               ("width_stride", "WidthStride", "I", "the row pitch in bytes"),
               ("height_stride", "HeightStride", "I", "the number of rows of the Y plane"))


def _pic_setter(field: str, cpart: str, letter: str, what: str) -> Any:
    def impl(s: Session, th: Any, cid: int, desc: int, value: int) -> None:
        setattr(dvpp.pic_desc(s, desc), field, value)

    impl.__name__ = impl.__qualname__ = f"dvpp_set_pic_desc_{field}"
    impl.__doc__ = (f"Set {what}; returns ``ret`` (100000 for a null or destroyed desc).\n\n"
                    "Differs from real ACL: values are not checked here; DVPP calls check "
                    "them when the desc is used.")
    return acl_api(f"acl.media.dvpp_set_pic_desc_{field}", f"acldvppSetPicDesc{cpart}",
                   "k" + letter)(impl)


def _pic_getter(field: str, cpart: str, letter: str, what: str) -> Any:
    del letter  # getters take only the desc

    def impl(s: Session, th: Any, cid: int, desc: int) -> int:
        return int(getattr(dvpp.pic_desc(s, desc), field))

    impl.__name__ = impl.__qualname__ = f"dvpp_get_pic_desc_{field}"
    impl.__doc__ = (f"Get {what} (the value only; 0 for a null or destroyed desc).\n\n"
                    "Differs from real ACL: no difference known.")
    return acl_api(f"acl.media.dvpp_get_pic_desc_{field}", f"acldvppGetPicDesc{cpart}", "k",
                   out="value")(impl)


dvpp_set_pic_desc_data = _pic_setter(*_PIC_FIELDS[0])
dvpp_set_pic_desc_size = _pic_setter(*_PIC_FIELDS[1])
dvpp_set_pic_desc_format = _pic_setter(*_PIC_FIELDS[2])
dvpp_set_pic_desc_width = _pic_setter(*_PIC_FIELDS[3])
dvpp_set_pic_desc_height = _pic_setter(*_PIC_FIELDS[4])
dvpp_set_pic_desc_width_stride = _pic_setter(*_PIC_FIELDS[5])
dvpp_set_pic_desc_height_stride = _pic_setter(*_PIC_FIELDS[6])
dvpp_get_pic_desc_data = _pic_getter(*_PIC_FIELDS[0])
dvpp_get_pic_desc_size = _pic_getter(*_PIC_FIELDS[1])
dvpp_get_pic_desc_format = _pic_getter(*_PIC_FIELDS[2])
dvpp_get_pic_desc_width = _pic_getter(*_PIC_FIELDS[3])
dvpp_get_pic_desc_height = _pic_getter(*_PIC_FIELDS[4])
dvpp_get_pic_desc_width_stride = _pic_getter(*_PIC_FIELDS[5])
dvpp_get_pic_desc_height_stride = _pic_getter(*_PIC_FIELDS[6])
dvpp_get_pic_desc_ret_code = _pic_getter(
    "ret_code", "RetCode", "I", "the result code of the last decode into this desc (0 = success)")


# ------------------------------------------------------------------ JPEG


@acl_api("acl.media.dvpp_jpeg_get_image_info", "acldvppJpegGetImageInfo", "pI", out=3,
         default=(0, 0, 0))
def dvpp_jpeg_get_image_info(s: Session, th: Any, cid: int, data: int,
                             size: int) -> tuple[int, int, int]:
    """``(width, height, components, ret)`` from the header of a JPEG in **host** memory.

    100000 for a null, device or unknown pointer, or bytes that are not a JPEG header.
    Differs from real ACL: the header is parsed by the emulator (SOF marker), not libjpeg;
    a progressive JPEG is described normally here and only rejected by the decoder.
    """
    info = dvpp.jpeg_image_info(s, data, size, "acl.media.dvpp_jpeg_get_image_info")
    return info.width, info.height, info.components


@acl_api("acl.media.dvpp_jpeg_get_image_info_v2", "acldvppJpegGetImageInfoV2", "pI", out=4,
         default=(0, 0, 0, 0))
def dvpp_jpeg_get_image_info_v2(s: Session, th: Any, cid: int, data: int,
                                size: int) -> tuple[int, int, int, int]:
    """``(width, height, components, jpeg_format, ret)``; jpeg_format is ACL_JPEG_CSS_444=0,
    422=1, 420=2, GRAY=3, 440=4, 411=5 or UNKNOWN=1000, from the sampling factors.

    Differs from real ACL: as dvpp_jpeg_get_image_info.
    """
    info = dvpp.jpeg_image_info(s, data, size, "acl.media.dvpp_jpeg_get_image_info_v2")
    return info.width, info.height, info.components, info.jpeg_format


@acl_api("acl.media.dvpp_jpeg_predict_dec_size", "acldvppJpegPredictDecSize", "pIi", out=1)
def dvpp_jpeg_predict_dec_size(s: Session, th: Any, cid: int, data: int, size: int,
                               out_format: int) -> int:
    """``(size, ret)``: output buffer size for decoding the JPEG at host ``data``:
    ``align(w, A) * align(h, 16) * 3 // 2`` for YUV420SP (x2 for 422SP, x3 for 444SP),
    A = 128 on Ascend310 and 64 on 310P/910B-class SoCs.

    Differs from real ACL: the formula follows the documented JPEGD output alignment; the
    real function's exact result is unverified.
    """
    return dvpp.jpeg_predict_dec_size(s, data, size, out_format)


@acl_api("acl.media.dvpp_jpeg_decode_async", "acldvppJpegDecodeAsync", "kpIkk", launch=True)
def dvpp_jpeg_decode_async(s: Session, th: Any, cid: int, chan_desc: int, data: int,
                           size: int, out_desc: int, stream: int) -> None:
    """Queue a JPEG decode (JPEGD) on ``stream``: the JPEG bytes at device address ``data``
    become YUV420SP (NV12 or NV21, the out desc's format) written with the out desc's strides;
    synchronize the stream before reading them or the desc's width/height.

    Codes: 148052 for progressive, arithmetic-coded, lossless, 12-bit or CMYK JPEG; 100000
    for a channel that was not created, host memory, output strides that break the JPEGD
    rule (widthStride = width aligned to 128 on Ascend310, 64 on 310P/910B-class SoCs;
    heightStride = height aligned to 16), a buffer smaller than wStride*hStride*3//2 or a
    resolution outside 32x32..8192x8192 (16384 on 910B). Strides left at 0 are filled in.
    Differs from real ACL: decoding uses Pillow (libjpeg), so pixels can differ from the
    hardware decoder by rounding; only YUV420SP output is emulated; memory from
    acl.rt.malloc is accepted with a warning; the checks run at call time when the JPEG
    bytes are already in device memory, otherwise the task reports a failure through
    dvpp_get_pic_desc_ret_code and a trace diagnostic (ret stays 0).
    """
    dvpp.jpeg_decode_async(s, th, cid, chan_desc, data, size, out_desc, stream)


# ------------------------------------------------------------------ resize


@acl_api("acl.media.dvpp_create_resize_config", "acldvppCreateResizeConfig", "", out="value")
def dvpp_create_resize_config(s: Session, th: Any, cid: int) -> int:
    """A new resize configuration, interpolation 0 (the handle; no ``ret``).

    Differs from real ACL: no difference known.
    """
    return dvpp.create_resize_config(s, cid)


@acl_api("acl.media.dvpp_destroy_resize_config", "acldvppDestroyResizeConfig", "k")
def dvpp_destroy_resize_config(s: Session, th: Any, cid: int, cfg: int) -> None:
    """Destroy a resize configuration.

    Differs from real ACL: no difference known.
    """
    dvpp.destroy_resize_config(s, cid, cfg)


@acl_api("acl.media.dvpp_set_resize_config_interpolation",
         "acldvppSetResizeConfigInterpolation", "kI")
def dvpp_set_resize_config_interpolation(s: Session, th: Any, cid: int, cfg: int,
                                         value: int) -> None:
    """Choose the algorithm: 0 default, 1 bilinear, 2 nearest, 3/4 TF-like bilinear/nearest,
    5 high-order filter (100000 for other values).

    Differs from real ACL: 0 and 5 are emulated as bilinear (on Ascend310, 0 is Huawei's own
    high-order filter); 3/4 are rejected on Ascend310P3 and 5 outside 910B only when a
    resize runs.
    """
    dvpp.set_interpolation(s, cfg, value)


@acl_api("acl.media.dvpp_get_resize_config_interpolation",
         "acldvppGetResizeConfigInterpolation", "k", out="value")
def dvpp_get_resize_config_interpolation(s: Session, th: Any, cid: int, cfg: int) -> int:
    """The interpolation value (the value only).

    Differs from real ACL: no difference known.
    """
    return dvpp.resize_config(s, cfg).interpolation


@acl_api("acl.media.dvpp_vpc_resize_async", "acldvppVpcResizeAsync", "kkkkk", launch=True)
def dvpp_vpc_resize_async(s: Session, th: Any, cid: int, chan_desc: int, in_desc: int,
                          out_desc: int, cfg: int, stream: int) -> None:
    """Queue a VPC resize of the input picture into the output picture on ``stream``.

    Both descs must describe YUV420SP in DVPP memory with the VPC rules: widthStride =
    width aligned up to 16 (in [32, 16384]), heightStride = height aligned up to 2 (in
    [6, 4096]), size >= widthStride*heightStride*3//2, resolution 10x6..4096x4096; odd
    widths and heights are rounded down to even. Violations return 100000 naming the rule.
    Differs from real ACL: pixels are computed in numpy (OpenCV-like bilinear or nearest),
    so they can differ from the hardware by rounding; only NV12/NV21 are emulated and the
    8K-resize path (strides 4096-8192) is not.
    """
    dvpp.vpc_resize_async(s, th, cid, chan_desc, in_desc, out_desc, cfg, stream)
