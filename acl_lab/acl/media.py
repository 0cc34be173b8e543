"""``acl.media``: DVPP memory, channels, picture and stream descs, JPEG decode and encode,
PNG decode, VPC resize, crop and crop-and-paste (single and batch), and VDEC/VENC video channels.

Every ``acl.media`` function a public pyACL sample (or acllite) calls, with the binding's
names, parse formats and return shapes (the binding table's ``acl.media`` rows, docs/sources.md).
Every DVPP, VDEC and VENC operation is a task on the device's DVPP engine in virtual time
(acl_lab.runtime.dvpp, acl_lab.runtime.video), asynchronous like the real one; VDEC/VENC
frame callbacks go through the report queue that ``acl.rt.process_report`` drains. The
binding entries still missing, and why, are in ``acl_lab.acl._binding`` (``reason``).
"""

from __future__ import annotations

from typing import Any

from ..runtime import alloc, dvpp, video
from ..runtime.objects import HostThread
from ..runtime.session import Session
from ._boundary import acl_api


@acl_api("acl.media.dvpp_malloc", "acldvppMalloc", "k", out=1)
def dvpp_malloc(s: Session, th: HostThread, cid: int, size: int) -> int:
    """``(ptr, ret)``: device memory for DVPP, rounded like aclrtMalloc.

    Differs from real ACL: DVPP memory comes from the same capacity as other device memory.
    """
    return alloc.malloc(s, th, cid, size, 2, "dvpp")


@acl_api("acl.media.dvpp_free", "acldvppFree", "p")
def dvpp_free(s: Session, th: HostThread, cid: int, ptr: int) -> None:
    """Free DVPP memory; 107000 for host or unknown pointers (RT2 DevDvppFree). Device
    memory from acl.rt.malloc is freed too (DevDvppFree checks only that the pointer is
    device memory), with a warning finding naming acl.rt.free.

    Differs from real ACL: no difference known.
    """
    alloc.free(s, th, cid, ptr, "dvpp")


# ------------------------------------------------------------------ channels


@acl_api("acl.media.dvpp_create_channel_desc", "acldvppCreateChannelDesc", "", out="value")
def dvpp_create_channel_desc(s: Session, th: HostThread, cid: int) -> int:
    """A new channel description (the handle; no ``ret``).

    Differs from real ACL: no difference known.
    """
    return dvpp.create_channel_desc(s, cid)


@acl_api("acl.media.dvpp_get_channel_desc_channel_id", "acldvppGetChannelDescChannelId", "k",
         out="value")
def dvpp_get_channel_desc_channel_id(s: Session, th: HostThread, cid: int, desc: int) -> int:
    """The id of the desc's channel: channels are numbered 0, 1, ... in creation order
    (0 also for a desc with no channel yet; the value only).

    Differs from real ACL: the hardware's channel numbering is not documented.
    """
    return dvpp.channel_id(s, desc)


@acl_api("acl.media.dvpp_set_channel_desc_mode", "acldvppSetChannelDescMode", "kI")
def dvpp_set_channel_desc_mode(s: Session, th: HostThread, cid: int, desc: int, mode: int) -> None:
    """Set the channel mode bits (VPC=1, JPEGD=2, JPEGE=4, PNGD=8); samples never call it.

    Differs from real ACL: the mode is stored but not enforced (every channel can decode
    and resize).
    """
    dvpp.channel_desc(s, desc).mode = mode


@acl_api("acl.media.dvpp_create_channel", "acldvppCreateChannel", "k")
def dvpp_create_channel(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Create the DVPP channel of a channel desc; 100000 if it already has one.

    Differs from real ACL: a current context is required (107002 without one); whether the
    real call needs one is unverified.
    """
    dvpp.create_channel(s, th, cid, desc)


@acl_api("acl.media.dvpp_destroy_channel", "acldvppDestroyChannel", "k")
def dvpp_destroy_channel(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Destroy the channel of a channel desc (100000 if it has none).

    Differs from real ACL: tasks already queued through the channel still run (the
    emulator does not wait for them or cancel them).
    """
    dvpp.destroy_channel(s, cid, desc)


@acl_api("acl.media.dvpp_destroy_channel_desc", "acldvppDestroyChannelDesc", "k")
def dvpp_destroy_channel_desc(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Destroy a channel desc; 148051 (ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED) while its
    channel still exists: destroy the channel first.

    Differs from real ACL: no difference known.
    """
    dvpp.destroy_channel_desc(s, cid, desc)


# ------------------------------------------------------------------ picture descs


@acl_api("acl.media.dvpp_create_pic_desc", "acldvppCreatePicDesc", "", out="value")
def dvpp_create_pic_desc(s: Session, th: HostThread, cid: int) -> int:
    """A new picture description with every field 0 (the handle; no ``ret``).

    Differs from real ACL: no difference known.
    """
    return dvpp.create_pic_desc(s, cid)


@acl_api("acl.media.dvpp_destroy_pic_desc", "acldvppDestroyPicDesc", "k")
def dvpp_destroy_pic_desc(s: Session, th: HostThread, cid: int, desc: int) -> None:
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
    def impl(s: Session, th: HostThread, cid: int, desc: int, value: int) -> None:
        setattr(dvpp.pic_desc(s, desc), field, value)

    impl.__name__ = impl.__qualname__ = f"dvpp_set_pic_desc_{field}"
    impl.__doc__ = (f"Set {what}; returns ``ret`` (100000 for a null or destroyed desc).\n\n"
                    "Differs from real ACL: values are not checked here; DVPP calls check "
                    "them when the desc is used.")
    return acl_api(f"acl.media.dvpp_set_pic_desc_{field}", f"acldvppSetPicDesc{cpart}",
                   "k" + letter)(impl)


def _pic_getter(field: str, cpart: str, letter: str, what: str) -> Any:
    del letter  # getters take only the desc

    def impl(s: Session, th: HostThread, cid: int, desc: int) -> int:
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
dvpp_set_pic_desc_ret_code = _pic_setter(
    "ret_code", "RetCode", "I", "the result code (VDEC and JPEGD write it; 0 = success)")
dvpp_get_pic_desc_ret_code = _pic_getter(
    "ret_code", "RetCode", "I", "the result code of the last decode into this desc (0 = success)")


# ------------------------------------------------------------------ JPEG


@acl_api("acl.media.dvpp_jpeg_get_image_info", "acldvppJpegGetImageInfo", "pI", out=3,
         default=(0, 0, 0))
def dvpp_jpeg_get_image_info(s: Session, th: HostThread, cid: int, data: int,
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
def dvpp_jpeg_get_image_info_v2(s: Session, th: HostThread, cid: int, data: int,
                                size: int) -> tuple[int, int, int, int]:
    """``(width, height, components, jpeg_format, ret)``; jpeg_format is ACL_JPEG_CSS_444=0,
    422=1, 420=2, GRAY=3, 440=4, 411=5 or UNKNOWN=1000, from the sampling factors.

    Differs from real ACL: as dvpp_jpeg_get_image_info.
    """
    info = dvpp.jpeg_image_info(s, data, size, "acl.media.dvpp_jpeg_get_image_info_v2")
    return info.width, info.height, info.components, info.jpeg_format


@acl_api("acl.media.dvpp_jpeg_predict_dec_size", "acldvppJpegPredictDecSize", "pIi", out=1)
def dvpp_jpeg_predict_dec_size(s: Session, th: HostThread, cid: int, data: int, size: int,
                               out_format: int) -> int:
    """``(size, ret)``: output buffer size for decoding the JPEG at host ``data``:
    ``align(w, A) * align(h, 16) * 3 // 2`` for YUV420SP (x2 for 422SP, x3 for 444SP),
    A = 128 on Ascend310 and 64 on 310P/910B-class SoCs.

    Differs from real ACL: the formula follows the documented JPEGD output alignment; the
    real function's exact result is unverified.
    """
    return dvpp.jpeg_predict_dec_size(s, data, size, out_format)


@acl_api("acl.media.dvpp_jpeg_decode_async", "acldvppJpegDecodeAsync", "kpIkk", launch=True)
def dvpp_jpeg_decode_async(s: Session, th: HostThread, cid: int, chan_desc: int, data: int,
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


# ------------------------------------------------------------------ PNG


@acl_api("acl.media.dvpp_png_get_image_info", "acldvppPngGetImageInfo", "pI", out=3,
         default=(0, 0, 0))
def dvpp_png_get_image_info(s: Session, th: HostThread, cid: int, data: int,
                            size: int) -> tuple[int, int, int]:
    """``(width, height, components, ret)`` from the IHDR chunk of a PNG in **host** memory;
    components is 1 for gray, 2 for gray + alpha, 3 for RGB and 4 for RGBA.

    100000 for a null, device or unknown pointer, or bytes that are not a PNG header.
    Differs from real ACL: the header is parsed by the emulator; a palette PNG reports 3
    components (with or without a tRNS chunk), the real function's count for it is
    unverified.
    """
    info = dvpp.png_image_info(s, data, size, "acl.media.dvpp_png_get_image_info")
    return info.width, info.height, info.components


@acl_api("acl.media.dvpp_png_predict_dec_size", "acldvppPngPredictDecSize", "pIi", out=1)
def dvpp_png_predict_dec_size(s: Session, th: HostThread, cid: int, data: int, size: int,
                              out_format: int) -> int:
    """``(size, ret)``: output buffer size for decoding the PNG at host ``data``:
    ``align(w, 128) * 3 * align(h, 16)`` for PIXEL_FORMAT_RGB_888 (12), ``* 4`` for
    PIXEL_FORMAT_RGBA_8888 (16) and PIXEL_FORMAT_UNKNOWN (10000, sized for the larger
    format); 100000 for any other format.

    Differs from real ACL: the formula follows the documented PNGD output strides; the real
    function's exact result (and whether UNKNOWN is sized by the source's own kind) is
    unverified.
    """
    return dvpp.png_predict_dec_size(s, data, size, out_format)


@acl_api("acl.media.dvpp_png_decode_async", "acldvppPngDecodeAsync", "kpIkk", launch=True)
def dvpp_png_decode_async(s: Session, th: HostThread, cid: int, chan_desc: int, data: int,
                          size: int, out_desc: int, stream: int) -> None:
    """Queue a PNG decode (PNGD) on ``stream``: the PNG bytes at device address ``data``
    become packed RGB888 (out desc format 12) or RGBA8888 (16, sources with alpha only), or
    the source's own kind for PIXEL_FORMAT_UNKNOWN (10000), written with the out desc's
    strides; synchronize the stream before reading them or the desc's width/height.

    Codes: 100000 for a channel that was not created, host memory, another output format,
    RGBA8888 from a PNG without alpha, output strides that break the PNGD rule (widthStride
    = width aligned to 128 times 3 or 4 bytes per pixel; heightStride = height aligned to
    16), a buffer smaller than widthStride*heightStride or a resolution outside
    32x32..4096x4096. Strides left at 0 are filled in.
    Differs from real ACL: decoding uses Pillow (libpng-compatible, lossless, so pixels
    match); 16-bit samples keep their high byte; memory from acl.rt.malloc is accepted with
    a warning; the checks run at call time when the PNG bytes are already in device memory,
    otherwise the task reports a failure through dvpp_get_pic_desc_ret_code and a trace
    diagnostic (ret stays 0); a desc left at PIXEL_FORMAT_UNKNOWN keeps that format.
    """
    dvpp.png_decode_async(s, th, cid, chan_desc, data, size, out_desc, stream)


# ------------------------------------------------------------------ resize


@acl_api("acl.media.dvpp_create_resize_config", "acldvppCreateResizeConfig", "", out="value")
def dvpp_create_resize_config(s: Session, th: HostThread, cid: int) -> int:
    """A new resize configuration, interpolation 0 (the handle; no ``ret``).

    Differs from real ACL: no difference known.
    """
    return dvpp.create_resize_config(s, cid)


@acl_api("acl.media.dvpp_destroy_resize_config", "acldvppDestroyResizeConfig", "k")
def dvpp_destroy_resize_config(s: Session, th: HostThread, cid: int, cfg: int) -> None:
    """Destroy a resize configuration.

    Differs from real ACL: no difference known.
    """
    dvpp.destroy_resize_config(s, cid, cfg)


@acl_api("acl.media.dvpp_set_resize_config_interpolation",
         "acldvppSetResizeConfigInterpolation", "kI")
def dvpp_set_resize_config_interpolation(s: Session, th: HostThread, cid: int, cfg: int,
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
def dvpp_get_resize_config_interpolation(s: Session, th: HostThread, cid: int, cfg: int) -> int:
    """The interpolation value (the value only).

    Differs from real ACL: no difference known.
    """
    return dvpp.resize_config(s, cfg).interpolation


@acl_api("acl.media.dvpp_vpc_resize_async", "acldvppVpcResizeAsync", "kkkkk", launch=True)
def dvpp_vpc_resize_async(s: Session, th: HostThread, cid: int, chan_desc: int, in_desc: int,
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


# ------------------------------------------------------------------ attribute families
# Setters and getters of the small media objects follow one shape (pymedia_methods.cpp,
# the binding table's acl.media rows): a setter parses ``(handle, value)`` and returns
# ``ret`` (100000 for a null, unknown or destroyed handle); a getter parses ``(handle,)`` and
# returns the bare value (0 when the handle is bad, with the code in the trace).


def _setter(name: str, cname: str, fmt: str, resolve: Any, field: str, what: str) -> Any:
    def impl(s: Session, th: HostThread, cid: int, handle: int, value: int) -> None:
        setattr(resolve(s, handle), field, value)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"Set {what}; returns ``ret`` (100000 for a null or destroyed handle).\n\n"
                    "Differs from real ACL: the value is checked when the object is used, "
                    "not here.")
    return acl_api(f"acl.media.{name}", cname, fmt)(impl)


def _getter(name: str, cname: str, resolve: Any, field: str, what: str) -> Any:
    def impl(s: Session, th: HostThread, cid: int, handle: int) -> int:
        # a plain int, as the binding builds it: a code field may hold an ErrorCode member
        return int(getattr(resolve(s, handle), field))

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"Get {what} (the value only; 0 for a null or destroyed handle).\n\n"
                    "Differs from real ACL: no difference known.")
    return acl_api(f"acl.media.{name}", cname, "k", out="value")(impl)


def _maker(name: str, cname: str, make: Any, what: str) -> Any:
    def impl(s: Session, th: HostThread, cid: int) -> int:
        return int(make(s, cid))

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"A new {what} (the handle; no ``ret``).\n\n"
                    "Differs from real ACL: no difference known.")
    return acl_api(f"acl.media.{name}", cname, "", out="value")(impl)


def _destroyer(name: str, cname: str, destroy: Any, what: str) -> Any:
    def impl(s: Session, th: HostThread, cid: int, handle: int) -> None:
        destroy(s, cid, handle)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"Destroy a {what}; ``ret`` (100000 for a null or destroyed handle).\n\n"
                    "Differs from real ACL: no difference known.")
    return acl_api(f"acl.media.{name}", cname, "k")(impl)


# ------------------------------------------------------------------ ROI configs


@acl_api("acl.media.dvpp_create_roi_config", "acldvppCreateRoiConfig", "IIII", out="value")
def dvpp_create_roi_config(s: Session, th: HostThread, cid: int, left: int, right: int, top: int,
                           bottom: int) -> int:
    """A ROI config ``[left, right] x [top, bottom]`` (inclusive offsets; the handle).

    For YUV420SP, left/top are even and right/bottom odd; VPC checks that when the area is
    used (VPC crop/paste rules, runtime.dvpp).
    Differs from real ACL: no difference known.
    """
    return dvpp.create_roi_config(s, cid, left, right, top, bottom)


dvpp_destroy_roi_config = _destroyer("dvpp_destroy_roi_config", "acldvppDestroyRoiConfig",
                                     dvpp.destroy_roi_config, "ROI config")


@acl_api("acl.media.dvpp_set_roi_config", "acldvppSetRoiConfig", "kIIII")
def dvpp_set_roi_config(s: Session, th: HostThread, cid: int, cfg: int, left: int, right: int,
                        top: int, bottom: int) -> None:
    """Set all four offsets of a ROI config; ``ret``.

    Differs from real ACL: values are checked when the area is used.
    """
    r = dvpp.roi_config(s, cfg)
    r.left, r.right, r.top, r.bottom = left, right, top, bottom


dvpp_set_roi_config_left = _setter("dvpp_set_roi_config_left", "acldvppSetRoiConfigLeft", "kI",
                                   dvpp.roi_config, "left", "the left offset")
dvpp_set_roi_config_right = _setter("dvpp_set_roi_config_right", "acldvppSetRoiConfigRight",
                                    "kI", dvpp.roi_config, "right", "the right offset")
dvpp_set_roi_config_top = _setter("dvpp_set_roi_config_top", "acldvppSetRoiConfigTop", "kI",
                                  dvpp.roi_config, "top", "the top offset")
dvpp_set_roi_config_bottom = _setter("dvpp_set_roi_config_bottom", "acldvppSetRoiConfigBottom",
                                     "kI", dvpp.roi_config, "bottom", "the bottom offset")


# ------------------------------------------------------------------ batch pic descs


@acl_api("acl.media.dvpp_create_batch_pic_desc", "acldvppCreateBatchPicDesc", "I",
         out="value")
def dvpp_create_batch_pic_desc(s: Session, th: HostThread, cid: int, batch_size: int) -> int:
    """A batch of ``batch_size`` picture descs (the handle; 0 for a size of 0 or > 256).

    Differs from real ACL: sizes above 256 (the VPC batch limit) are refused here.
    """
    return dvpp.create_batch_pic_desc(s, cid, batch_size)


dvpp_destroy_batch_pic_desc = _destroyer("dvpp_destroy_batch_pic_desc",
                                         "acldvppDestroyBatchPicDesc",
                                         dvpp.destroy_batch_pic_desc,
                                         "batch pic desc and its picture descs")


@acl_api("acl.media.dvpp_get_pic_desc", "acldvppGetPicDesc", "kI", out="value")
def dvpp_get_pic_desc(s: Session, th: HostThread, cid: int, batch: int, index: int) -> int:
    """The pic desc at ``index`` of a batch (the handle; 0 and 100000 outside the batch).

    Differs from real ACL: no difference known.
    """
    return dvpp.batch_get_pic_desc(s, batch, index)


# ------------------------------------------------------------------ VPC crop family


@acl_api("acl.media.dvpp_vpc_crop_async", "acldvppVpcCropAsync", "kkkkk", launch=True)
def dvpp_vpc_crop_async(s: Session, th: HostThread, cid: int, chan: int, in_desc: int,
                        out_desc: int, crop: int, stream: int) -> None:
    """Queue a VPC crop: the crop area of the input, resized to the whole output picture.

    Areas: inclusive offsets, left/top even, right/bottom odd, at least 10x6, inside the
    picture, scale 1/32 to 16; pictures follow the VPC stride rules of
    dvpp_vpc_resize_async. Violations return 100000 naming the rule.
    Differs from real ACL: pixels are computed in numpy (bilinear), so they can differ from
    the hardware by rounding; only NV12/NV21 are emulated.
    """
    dvpp.vpc_crop_async(s, th, cid, "acl.media.dvpp_vpc_crop_async", chan,
                        [(in_desc, out_desc, crop, None)], None, stream)


@acl_api("acl.media.dvpp_vpc_crop_resize_async", "acldvppVpcCropResizeAsync", "kkkkkk",
         launch=True)
def dvpp_vpc_crop_resize_async(s: Session, th: HostThread, cid: int, chan: int, in_desc: int,
                               out_desc: int, crop: int, cfg: int, stream: int) -> None:
    """Queue a VPC crop whose resize uses the resize config's interpolation.

    Differs from real ACL: as dvpp_vpc_crop_async.
    """
    dvpp.vpc_crop_async(s, th, cid, "acl.media.dvpp_vpc_crop_resize_async", chan,
                        [(in_desc, out_desc, crop, None)], cfg, stream)


@acl_api("acl.media.dvpp_vpc_crop_and_paste_async", "acldvppVpcCropAndPasteAsync", "kkkkkk",
         launch=True)
def dvpp_vpc_crop_and_paste_async(s: Session, th: HostThread, cid: int, chan: int, in_desc: int,
                                  out_desc: int, crop: int, paste: int, stream: int) -> None:
    """Queue a VPC crop-and-paste: the crop area, resized to the paste area, written at the
    paste area of the output; the rest of the output keeps its bytes.

    The paste area's left offset must be 16-aligned (aclcppdevg_03_0344); other rules as
    dvpp_vpc_crop_async.
    Differs from real ACL: as dvpp_vpc_crop_async.
    """
    dvpp.vpc_crop_async(s, th, cid, "acl.media.dvpp_vpc_crop_and_paste_async", chan,
                        [(in_desc, out_desc, crop, paste)], None, stream)


@acl_api("acl.media.dvpp_vpc_crop_resize_paste_async", "acldvppVpcCropResizePasteAsync",
         "kkkkkkk", launch=True)
def dvpp_vpc_crop_resize_paste_async(s: Session, th: HostThread, cid: int, chan: int, in_desc: int,
                                     out_desc: int, crop: int, paste: int, cfg: int,
                                     stream: int) -> None:
    """Queue a crop-and-paste whose resize uses the resize config's interpolation.

    Differs from real ACL: as dvpp_vpc_crop_async.
    """
    dvpp.vpc_crop_async(s, th, cid, "acl.media.dvpp_vpc_crop_resize_paste_async", chan,
                        [(in_desc, out_desc, crop, paste)], cfg, stream)


@acl_api("acl.media.dvpp_vpc_batch_crop_async", "acldvppVpcBatchCropAsync", "kkOkOk", out=1,
         launch=True, default=0)
def dvpp_vpc_batch_crop_async(s: Session, th: HostThread, cid: int, chan: int, src_batch: int,
                              roi_nums: Any, dst_batch: int, crops: Any,
                              stream: int) -> int:
    """``(dst_batch, ret)``: queue one VPC task cropping ``roi_nums[i]`` areas of input
    picture ``i`` into consecutive pictures of the output batch.

    Lists outside 1..256 raise ValueError("number of crop areas must be between 1 and 256"),
    non-lists TypeError("argument 3 or 5 is not list") like the binding; areas that do not
    add up to ``sum(roi_nums)`` give 100000.
    Differs from real ACL: as dvpp_vpc_crop_async; the batch is one task on the DVPP engine.
    """
    api = "acl.media.dvpp_vpc_batch_crop_async"
    jobs = dvpp.batch_jobs(s, api, src_batch, roi_nums, dst_batch, crops, None)
    dvpp.vpc_crop_async(s, th, cid, api, chan, jobs, None, stream)
    return dst_batch


@acl_api("acl.media.dvpp_vpc_batch_crop_and_paste_async", "acldvppVpcBatchCropAndPasteAsync",
         "kkOkOOk", out=1, launch=True, default=0)
def dvpp_vpc_batch_crop_and_paste_async(s: Session, th: HostThread, cid: int, chan: int,
                                        src_batch: int, roi_nums: Any, dst_batch: int,
                                        crops: Any, pastes: Any, stream: int) -> int:
    """``(dst_batch, ret)``: the batch form of dvpp_vpc_crop_and_paste_async (the paste list
    is as long as the crop list).

    Differs from real ACL: as dvpp_vpc_batch_crop_async.
    """
    api = "acl.media.dvpp_vpc_batch_crop_and_paste_async"
    jobs = dvpp.batch_jobs(s, api, src_batch, roi_nums, dst_batch, crops, pastes)
    dvpp.vpc_crop_async(s, th, cid, api, chan, jobs, None, stream)
    return dst_batch


@acl_api("acl.media.dvpp_vpc_batch_crop_resize_async", "acldvppVpcBatchCropResizeAsync",
         "kkOkOkk", launch=True)
def dvpp_vpc_batch_crop_resize_async(s: Session, th: HostThread, cid: int, chan: int,
                                     src_batch: int, roi_nums: Any, dst_batch: int,
                                     crops: Any, cfg: int, stream: int) -> None:
    """``ret`` only (unlike batch_crop): batch crop with the resize config's interpolation.

    Differs from real ACL: as dvpp_vpc_batch_crop_async.
    """
    api = "acl.media.dvpp_vpc_batch_crop_resize_async"
    jobs = dvpp.batch_jobs(s, api, src_batch, roi_nums, dst_batch, crops, None)
    dvpp.vpc_crop_async(s, th, cid, api, chan, jobs, cfg, stream)


@acl_api("acl.media.dvpp_vpc_batch_crop_resize_paste_async",
         "acldvppVpcBatchCropResizePasteAsync", "kkOkOOkk", launch=True)
def dvpp_vpc_batch_crop_resize_paste_async(s: Session, th: HostThread, cid: int, chan: int,
                                           src_batch: int, roi_nums: Any, dst_batch: int,
                                           crops: Any, pastes: Any, cfg: int,
                                           stream: int) -> None:
    """``ret``: batch crop-and-paste with the resize config's interpolation.

    Differs from real ACL: as dvpp_vpc_batch_crop_async.
    """
    api = "acl.media.dvpp_vpc_batch_crop_resize_paste_async"
    jobs = dvpp.batch_jobs(s, api, src_batch, roi_nums, dst_batch, crops, pastes)
    dvpp.vpc_crop_async(s, th, cid, api, chan, jobs, cfg, stream)


# ------------------------------------------------------------------ stream descs

dvpp_create_stream_desc = _maker("dvpp_create_stream_desc", "acldvppCreateStreamDesc",
                                 dvpp.create_stream_desc, "stream description, every field 0")
dvpp_destroy_stream_desc = _destroyer("dvpp_destroy_stream_desc", "acldvppDestroyStreamDesc",
                                      dvpp.destroy_stream_desc,
                                      "stream description (its data buffer is not freed)")
dvpp_set_stream_desc_data = _setter("dvpp_set_stream_desc_data", "acldvppSetStreamDescData",
                                    "kp", dvpp.stream_desc, "data",
                                    "the bitstream address (device memory)")
dvpp_set_stream_desc_size = _setter("dvpp_set_stream_desc_size", "acldvppSetStreamDescSize",
                                    "kI", dvpp.stream_desc, "size", "the bitstream size")
dvpp_set_stream_desc_format = _setter("dvpp_set_stream_desc_format",
                                      "acldvppSetStreamDescFormat", "ki", dvpp.stream_desc,
                                      "format", "the acldvppStreamFormat (0 = H.265 main)")
dvpp_set_stream_desc_timestamp = _setter("dvpp_set_stream_desc_timestamp",
                                         "acldvppSetStreamDescTimestamp", "kK",
                                         dvpp.stream_desc, "timestamp", "the timestamp")
dvpp_set_stream_desc_ret_code = _setter("dvpp_set_stream_desc_ret_code",
                                        "acldvppSetStreamDescRetCode", "kI", dvpp.stream_desc,
                                        "ret_code", "the result code")
dvpp_set_stream_desc_eos = _setter("dvpp_set_stream_desc_eos", "acldvppSetStreamDescEos", "kB",
                                   dvpp.stream_desc, "eos",
                                   "the end-of-stream flag (VDEC flushes on it)")
dvpp_get_stream_desc_data = _getter("dvpp_get_stream_desc_data", "acldvppGetStreamDescData",
                                    dvpp.stream_desc, "data", "the bitstream address")
dvpp_get_stream_desc_size = _getter("dvpp_get_stream_desc_size", "acldvppGetStreamDescSize",
                                    dvpp.stream_desc, "size", "the bitstream size")
dvpp_get_stream_desc_format = _getter("dvpp_get_stream_desc_format",
                                      "acldvppGetStreamDescFormat", dvpp.stream_desc, "format",
                                      "the stream format")
dvpp_get_stream_desc_timestamp = _getter("dvpp_get_stream_desc_timestamp",
                                         "acldvppGetStreamDescTimestamp", dvpp.stream_desc,
                                         "timestamp", "the timestamp")
dvpp_get_stream_desc_ret_code = _getter("dvpp_get_stream_desc_ret_code",
                                        "acldvppGetStreamDescRetCode", dvpp.stream_desc,
                                        "ret_code", "the result code (VENC output: 0 = ok)")
dvpp_get_stream_desc_eos = _getter("dvpp_get_stream_desc_eos", "acldvppGetStreamDescEos",
                                   dvpp.stream_desc, "eos", "the end-of-stream flag")


# ------------------------------------------------------------------ JPEG encode

dvpp_create_jpege_config = _maker("dvpp_create_jpege_config", "acldvppCreateJpegeConfig",
                                  dvpp.create_jpege_config, "JPEGE config (level 100)")
dvpp_destroy_jpege_config = _destroyer("dvpp_destroy_jpege_config",
                                       "acldvppDestroyJpegeConfig", dvpp.destroy_jpege_config,
                                       "JPEGE config")


@acl_api("acl.media.dvpp_set_jpege_config_level", "acldvppSetJpegeConfigLevel", "kI")
def dvpp_set_jpege_config_level(s: Session, th: HostThread, cid: int, cfg: int, level: int) -> None:
    """Set the encoding quality level, 0-100 (100000 above 100).

    Differs from real ACL: the level is Pillow's (libjpeg's) quality, 0 taken as 1.
    """
    dvpp.set_jpege_level(s, cfg, level)


dvpp_get_jpege_config_level = _getter("dvpp_get_jpege_config_level",
                                      "acldvppGetJpegeConfigLevel", dvpp.jpege_config, "level",
                                      "the encoding level")


@acl_api("acl.media.dvpp_jpeg_predict_enc_size", "acldvppJpegPredictEncSize", "kk", out=1)
def dvpp_jpeg_predict_enc_size(s: Session, th: HostThread, cid: int, in_desc: int, cfg: int) -> int:
    """``(size, ret)``: an output buffer size enough for the JPEG of the input picture:
    ``align(w, 16) * align(h, 16) * 3 // 2 + 4096``; the input follows the JPEGE rules of
    dvpp_jpeg_encode_async (100000 otherwise).

    Differs from real ACL: the real estimate's formula is not documented.
    """
    return dvpp.jpeg_predict_enc_size(s, in_desc, cfg)


@acl_api("acl.media.dvpp_jpeg_encode_async", "acldvppJpegEncodeAsync", "kkppkk", launch=True)
def dvpp_jpeg_encode_async(s: Session, th: HostThread, cid: int, chan: int, in_desc: int,
                           out_data: int, size_ptr: int, cfg: int, stream: int) -> None:
    """Queue a JPEG encode (JPEGE) of a YUV420SP picture into DVPP memory at ``out_data``.

    ``size_ptr`` is the address of a host uint32 (numpy_to_ptr/bytes_to_ptr of a 1-element
    array) holding the buffer size; the JPEG's size is written there when the task ends.
    Input rules (JPEGE constraint page, aclpythondevg_01_0328): NV12/NV21, even width and
    height in 32..8192, widthStride a multiple of 16 >= width, heightStride = height or
    height aligned up to 16 (at least 32), size >= wStride*hStride*3//2; 100000 otherwise.
    Differs from real ACL: encoding uses Pillow (libjpeg, baseline Huffman 4:2:0), so the
    bytes differ from the hardware encoder's; a JPEG larger than the buffer fails the task
    (507899 at synchronize) instead of a hardware code.
    """
    dvpp.jpeg_encode_async(s, th, cid, chan, in_desc, out_data, size_ptr, cfg, stream)


# ------------------------------------------------------------------ VDEC

vdec_create_channel_desc = _maker("vdec_create_channel_desc", "aclvdecCreateChannelDesc",
                                  lambda s, cid: video.create_desc(s, cid, False),
                                  "VDEC channel description")
vdec_destroy_channel_desc = _destroyer(
    "vdec_destroy_channel_desc", "aclvdecDestroyChannelDesc",
    lambda s, cid, h: video.destroy_desc(s, cid, h, False),
    "VDEC channel description (148051 while its channel exists)")
vdec_create_frame_config = _maker("vdec_create_frame_config", "aclvdecCreateFrameConfig",
                                  lambda s, cid: video.create_frame_config(s, cid, False),
                                  "VDEC frame config")
vdec_destroy_frame_config = _destroyer("vdec_destroy_frame_config", "aclvdecDestroyFrameConfig",
                                       lambda s, cid, h: video.destroy_frame_config(
                                           s, cid, h, False), "VDEC frame config")

_VDEC_FIELDS = (("channel_id", "ChannelId", "kI", "the channel id"),
                ("thread_id", "ThreadId", "kK", "the report thread (acl.util.start_thread id)"),
                ("entype", "EnType", "ki", "the stream type: 0 H.265 main, 1-3 H.264 "
                                          "baseline/main/high"),
                ("out_pic_format", "OutPicFormat", "ki", "the output format (1 NV12, 2 NV21)"),
                ("out_pic_width", "OutPicWidth", "kI", "the output width"),
                ("out_pic_height", "OutPicHeight", "kI", "the output height"),
                ("ref_frame_num", "RefFrameNum", "kI", "the reference frame count"),
                ("out_mode", "OutMode", "kI", "the output mode (0 default, 1 fast)"),
                ("bit_depth", "BitDepth", "kI", "the bit depth"))
_VENC_FIELDS = (("thread_id", "ThreadId", "kK", "the report thread (acl.util.start_thread id)"),
                ("entype", "EnType", "ki", "the stream type: 0 H.265 main, 1-3 H.264 "
                                          "baseline/main/high"),
                ("pic_format", "PicFormat", "ki", "the input format (1 NV12, 2 NV21)"),
                ("pic_width", "PicWidth", "kI", "the picture width"),
                ("pic_height", "PicHeight", "kI", "the picture height"),
                ("key_frame_interval", "KeyFrameInterval", "kI", "the GOP length"),
                ("buf_addr", "BufAddr", "kk", "the output buffer address"),
                ("buf_size", "BufSize", "kI", "the output buffer size"),
                ("max_bit_rate", "MaxBitRate", "kI", "the maximum bit rate"),
                ("rc_mode", "RcMode", "kI", "the rate-control mode"),
                ("src_rate", "SrcRate", "kI", "the input frame rate"))
_ATTR = {"entype": "en_type"}


def _vdec(s: Session, h: int) -> Any:
    return video.vdec_desc(s, h)


def _venc(s: Session, h: int) -> Any:
    return video.venc_desc(s, h)


def _vframe(s: Session, h: int) -> Any:
    return video.frame_config(s, h, venc=True)


for _fam, _cfam, _fields, _res in (("vdec", "aclvdec", _VDEC_FIELDS, _vdec),
                                   ("venc", "aclvenc", _VENC_FIELDS, _venc)):
    for _f, _c, _fmt, _what in _fields:
        _sn, _gn = f"{_fam}_set_channel_desc_{_f}", f"{_fam}_get_channel_desc_{_f}"
        globals()[_sn] = _setter(_sn, f"{_cfam}SetChannelDesc{_c}", _fmt, _res,
                                 _ATTR.get(_f, _f), _what)
        globals()[_gn] = _getter(_gn, f"{_cfam}GetChannelDesc{_c}", _res, _ATTR.get(_f, _f),
                                 _what)
vdec_get_channel_desc_channel_id = globals()["vdec_get_channel_desc_channel_id"]
venc_get_channel_desc_channel_id = _getter("venc_get_channel_desc_channel_id",
                                           "aclvencGetChannelDescChannelId", _venc,
                                           "channel_id", "the channel id (0: VENC has no "
                                                         "setter)")


@acl_api("acl.media.vdec_set_channel_desc_callback", "aclvdecSetChannelDescCallback", "kC")
def vdec_set_channel_desc_callback(s: Session, th: HostThread, cid: int,
                                   desc: int, fn: Any) -> None:
    """Store ``fn(input_stream_desc, output_pic_desc, user_data)``, called once per frame in
    the desc's report thread; a non-callable raises TypeError("parameter must be callable").

    Differs from real ACL: no difference known.
    """
    video.set_callback(s, desc, fn, venc=False)


@acl_api("acl.media.vdec_get_channel_desc_callback", "aclvdecGetChannelDescCallback", "k",
         out="value")
def vdec_get_channel_desc_callback(s: Session, th: HostThread, cid: int, desc: int) -> Any:
    """The callable stored for the desc; RuntimeError("did not set callback, failed") if none.

    Differs from real ACL: no difference known.
    """
    return video.get_callback(s, desc, venc=False)


@acl_api("acl.media.vdec_create_channel", "aclvdecCreateChannel", "k")
def vdec_create_channel(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Create the decoder: an internal stream on the current context, with the desc's thread
    subscribed to it so its process_report runs the frame callbacks.

    100000 without a callback or thread id, for an enType outside 0-3 or an output format
    other than NV12/NV21, or when the desc already has a channel.
    Differs from real ACL: decoding uses FFmpeg (PyAV) in low-delay mode, so every frame sent
    gives its picture at once, in decoding order (like out_mode 1); B-frame reordering of the
    default mode is not emulated.
    """
    video.vdec_create_channel(s, th, cid, desc)


@acl_api("acl.media.vdec_destroy_channel", "aclvdecDestroyChannel", "k")
def vdec_destroy_channel(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Wait until every frame sent was decoded and its callback returned, then unsubscribe
    the report thread and destroy the internal stream (aclcppdevg_03_0331).

    A wait that can never end (the report thread exited, or is the caller) is a deadlock
    report, not a hang.
    Differs from real ACL: no difference known.
    """
    video.vdec_destroy_channel(s, th, cid, desc)


@acl_api("acl.media.vdec_send_skipped_frame", "aclvdecSendSkippedFrame", "kkkO", launch=True)
def vdec_send_skipped_frame(s: Session, th: HostThread, cid: int, desc: int, in_stream: int,
                            cfg: int, user_data: Any) -> None:
    """Queue a frame that is decoded (as a reference for later frames) but gives no picture;
    its callback gets ``(in_stream, 0, user_data)``. Rules and codes as vdec_send_frame.

    Differs from real ACL: no difference known.
    """
    video.vdec_send_frame(s, th, cid, desc, in_stream, 0, cfg, user_data, skipped=True)


@acl_api("acl.media.vdec_send_frame", "aclvdecSendFrame", "kkkkO", launch=True)
def vdec_send_frame(s: Session, th: HostThread, cid: int, desc: int, in_stream: int, out_pic: int,
                    cfg: int, user_data: Any) -> None:
    """Queue the decode of one H.264/H.265 frame (Annex-B bytes in device memory, described by
    ``in_stream``) into ``out_pic``; the callback then gets ``(in_stream, out_pic,
    user_data)``. An EOS stream desc (dvpp_set_stream_desc_eos) flushes the decoder; its
    output pic may be 0, and the call returns only when every frame sent was decoded and its
    callback returned (aclvdecSendFrame page; a wait that cannot end is a deadlock report).

    The output desc's width, height and both strides are all left 0 (the stream's size and
    the VDEC strides, width aligned to 16, at least 32, height aligned to 2, are filled in)
    or all set (then they follow those rules, and a size different from the stream's
    resizes the picture); setting only some is 100000, as is size < wStride*hStride*3//2.
    A frame that cannot be decoded reports 100000 in dvpp_get_pic_desc_ret_code. No callback set:
    RuntimeError("did not set callback, failed") like the binding. ``config`` is reserved
    and may be 0. The bitstream is read before the call returns (the decoder takes it), so
    the input buffer may be refilled for the next frame at once.
    Differs from real ACL: the code of a failed frame is 100000 (the hardware's is not
    documented); see vdec_create_channel for output order.
    """
    video.vdec_send_frame(s, th, cid, desc, in_stream, out_pic, cfg, user_data)


# ------------------------------------------------------------------ VENC

venc_create_channel_desc = _maker("venc_create_channel_desc", "aclvencCreateChannelDesc",
                                  lambda s, cid: video.create_desc(s, cid, True),
                                  "VENC channel description")
venc_destroy_channel_desc = _destroyer(
    "venc_destroy_channel_desc", "aclvencDestroyChannelDesc",
    lambda s, cid, h: video.destroy_desc(s, cid, h, True),
    "VENC channel description (148051 while its channel exists)")
venc_create_frame_config = _maker("venc_create_frame_config", "aclvencCreateFrameConfig",
                                  lambda s, cid: video.create_frame_config(s, cid, True),
                                  "VENC frame config")
venc_destroy_frame_config = _destroyer("venc_destroy_frame_config", "aclvencDestroyFrameConfig",
                                       lambda s, cid, h: video.destroy_frame_config(
                                           s, cid, h, True), "VENC frame config")
venc_set_frame_config_force_i_frame = _setter(
    "venc_set_frame_config_force_i_frame", "aclvencSetFrameConfigForceIFrame", "kB", _vframe,
    "force_i_frame", "whether the next frame is forced to be an I frame")
venc_set_frame_config_eos = _setter("venc_set_frame_config_eos", "aclvencSetFrameConfigEos",
                                    "kB", _vframe, "eos", "the end-of-stream flag")
venc_get_frame_config_force_i_frame = _getter(
    "venc_get_frame_config_force_i_frame", "aclvencGetFrameConfigForceIFrame", _vframe,
    "force_i_frame", "the force-I-frame flag")
venc_get_frame_config_eos = _getter("venc_get_frame_config_eos", "aclvencGetFrameConfigEos",
                                    _vframe, "eos", "the end-of-stream flag")


@acl_api("acl.media.venc_set_channel_desc_callback", "aclvencSetChannelDescCallback", "kC")
def venc_set_channel_desc_callback(s: Session, th: HostThread, cid: int,
                                   desc: int, fn: Any) -> None:
    """Store ``fn(input_pic_desc, output_stream_desc, user_data)``, called once per frame in
    the desc's report thread; a non-callable raises TypeError("parameter must be callable").

    Differs from real ACL: no difference known.
    """
    video.set_callback(s, desc, fn, venc=True)


@acl_api("acl.media.venc_get_channel_desc_callback", "aclvencGetChannelDescCallback", "k",
         out="value")
def venc_get_channel_desc_callback(s: Session, th: HostThread, cid: int, desc: int) -> Any:
    """The callable stored for the desc; RuntimeError("did not set callback, failed") if none.

    Differs from real ACL: no difference known.
    """
    return video.get_callback(s, desc, venc=True)


@acl_api("acl.media.venc_create_channel", "aclvencCreateChannel", "k")
def venc_create_channel(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Create the encoder (H.265 main for enType 0 with libx265, H.264 baseline/main/high for
    1-3 with libx264) of the desc's picture size, its output buffer (buf_size, default 8 MB
    of DVPP memory) and the report-thread subscription.

    100000 without a callback or thread id, for a size outside 128..1920 or odd, an enType
    outside 0-3 or a format other than NV12/NV21.
    Differs from real ACL: the output buffer is freed by venc_destroy_channel_desc (or the
    next venc_create_channel on the desc), not by venc_destroy_channel; the bitstream comes
    from x264/x265 (zero-latency, no B frames), not the hardware encoder, so its bytes and
    sizes differ; rate control settings (max_bit_rate, rc_mode) are stored but not applied;
    the 128..1920 limit is unverified.
    """
    video.venc_create_channel(s, th, cid, desc)


@acl_api("acl.media.venc_destroy_channel", "aclvencDestroyChannel", "k")
def venc_destroy_channel(s: Session, th: HostThread, cid: int, desc: int) -> None:
    """Wait until every frame sent was encoded and its callback returned, then unsubscribe
    the report thread and free the channel's stream and output buffer.

    Differs from real ACL: no difference known.
    """
    video.venc_destroy_channel(s, th, cid, desc)


@acl_api("acl.media.venc_send_frame", "aclvencSendFrame", "kkkkO", launch=True)
def venc_send_frame(s: Session, th: HostThread, cid: int, desc: int, in_pic: int, reserve: int,
                    cfg: int, user_data: Any) -> None:
    """Queue the encoding of one YUV420SP picture in DVPP memory; the callback gets
    ``(in_pic, out_stream_desc, user_data)`` where the output stream desc (owned by the
    channel, valid during the callback) describes the bitstream in the channel's buffer.
    A frame config with EOS flushes the encoder (``in_pic`` may be 0).

    The picture desc may give only data and size (as the VENC sample does): the channel's
    width/height and strides aligned to 16/2 are used; the format is always the channel's
    (the pic desc's is ignored, aclvencSendFrame page). The input buffer must stay allocated
    until the frame's callback (same page): freeing it earlier fails the task, and the
    callback's stream desc then carries the task's code. No callback set:
    RuntimeError("did not set callback, failed").
    Differs from real ACL: see venc_create_channel.
    """
    del reserve
    video.venc_send_frame(s, th, cid, desc, in_pic, cfg, user_data)
