"""DVPP on the emulated device: channels, picture, batch and stream descriptions, ROI and
JPEGE configs, JPEG decode (JPEGD) and encode (JPEGE), PNG decode (PNGD), VPC resize, crop and
crop-and-paste (single and batch). VDEC/VENC channels are in ``runtime.video``.

Functions over a ``Session`` (all state stays on the Session; this module keeps none). The
JPEG decoder (JPEGD) and the resizer (VPC) are tasks on the device's DVPP engine
(``Engine.DVPP``, one unit per device): they read their input bytes at the task's start and
write YUV420SP (NV12/NV21) bytes at its end, like every other device task, so a missing
synchronize or a buffer freed too early shows up as it would on the hardware. A task takes
``profile.dvpp_setup_ns + pixels / profile.dvpp_pixels_per_ns`` (``costs.dvpp_ns``; a VPC job is
charged the larger of its input and output areas, ``costs.vpc_ns``).

Header parsing (``parse_jpeg_header``) reads the SOF marker itself; pixel decoding uses
Pillow, imported only when a picture is decoded. Rules and codes follow reference section
9.2: JPEGD output strides aligned to 128 (Ascend310) or 64 (310P/910B-class) by 16; VPC
strides aligned to 16 by 2; YUV420SP size ``wStride * hStride * 3 // 2``; odd VPC sizes
rounded down to even; progressive or arithmetic-coded JPEG gives 148052; destroying a
channel desc whose channel still exists gives 148051.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..constants import (
    PIXEL_FORMAT_RGB_888,
    PIXEL_FORMAT_RGBA_8888,
    PIXEL_FORMAT_UNKNOWN,
    ErrorCode,
)
from . import buffers, copies, devices, streams
from .costs import dvpp_ns, vpc_ns
from .errors import AccessError, AclError
from .kinds import Engine, ObjectKind, TaskKind
from .memory import DEVICE, DVPP, HOST_PAGEABLE, HOST_PINNED, KIND_NAMES
from .objects import HostThread, Stream
from .singleop import queue_device_task

if TYPE_CHECKING:
    from .session import Session

# acldvppPixelFormat values used here (DVPP-hdr).
PIXEL_FORMAT_YUV_400 = 0
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1  # NV12
PIXEL_FORMAT_YVU_SEMIPLANAR_420 = 2  # NV21
YUV420SP = (PIXEL_FORMAT_YUV_SEMIPLANAR_420, PIXEL_FORMAT_YVU_SEMIPLANAR_420)
#: bytes per pixel (x2) of the semi-planar formats dvpp_jpeg_predict_dec_size knows
_SP_SIZE_X2 = {1: 3, 2: 3, 3: 4, 4: 4, 5: 6, 6: 6}

# acldvppJpegFormat values (DVPP-hdr).
ACL_JPEG_CSS_444 = 0
ACL_JPEG_CSS_422 = 1
ACL_JPEG_CSS_420 = 2
ACL_JPEG_CSS_GRAY = 3
ACL_JPEG_CSS_440 = 4
ACL_JPEG_CSS_411 = 5
ACL_JPEG_CSS_UNKNOWN = 1000

ACL_ERROR_INVALID_PARAM = ErrorCode.ACL_ERROR_INVALID_PARAM
ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = ErrorCode.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED
ACL_ERROR_UNSUPPORTED_JPEG = ErrorCode.ACL_ERROR_UNSUPPORTED_JPEG

#: VPC limits (DVPP-hdr comments, reference 9.2): strides and resolutions. The stride ranges
#: are the VPC restrictions page's (aclcppdevg_03_0337, Atlas 200/300/500 inference products:
#: width stride 32..16384 = 4096 x 4, height stride 6..16384).
VPC_MIN_W, VPC_MIN_H, VPC_MAX_WH = 10, 6, 4096
VPC_MIN_WSTRIDE, VPC_MAX_WSTRIDE = 32, 4096 * 4
VPC_MIN_HSTRIDE, VPC_MAX_HSTRIDE = 6, 16384
#: 8K resize: acldvppVpcResizeAsync's input may be up to 8192 wide or high for YUV420SP
#: (its restrictions on Atlas inference products: "the width or height of the input image
#: is within (4096, 8192]", NV12/NV21 among the formats); its output stays within 4096x4096
VPC_8K_MAX_WH = 8192
#: JPEGD input resolution limits (reference 9.2)
JPEGD_MIN_WH = 32

#: interpolation values of acldvppSetResizeConfigInterpolation
INTERP_DEFAULT, INTERP_BILINEAR, INTERP_NEAREST = 0, 1, 2
INTERP_TF_BILINEAR, INTERP_TF_NEAREST, INTERP_HIGH_ORDER = 3, 4, 5


# ------------------------------------------------------------------ objects


class Channel:
    """A created DVPP channel (acldvppCreateChannel): lives inside its channel desc."""

    def __init__(self, ctx: Any) -> None:
        self.oid = -1
        self.handle = 0
        self.ctx = ctx
        self.alive = True


class ChannelDesc:
    """An acldvppChannelDesc: the mode and, once created, its channel."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.mode = 0
        self.channel: Channel | None = None
        self.alive = True


class PicDesc:
    """An acldvppPicDesc: where a picture lives and how it is laid out."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.data = 0
        self.size = 0
        self.format = PIXEL_FORMAT_YUV_400
        self.width = 0
        self.height = 0
        self.width_stride = 0
        self.height_stride = 0
        self.ret_code = 0
        self.alive = True


class ResizeConfig:
    """An acldvppResizeConfig: the interpolation algorithm."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.interpolation = INTERP_DEFAULT
        self.alive = True


@dataclass(frozen=True)
class JpegInfo:
    """What the JPEG header says: size, components, coding process and subsampling."""

    width: int
    height: int
    components: int
    #: the SOF marker's low nibble: 0 baseline, 1 extended, 2 progressive, 3 lossless,
    #: 9-11 and 13-15 arithmetic coding, 5-7 hierarchical
    sof: int
    precision: int
    #: (h, v) sampling factors per component
    sampling: tuple[tuple[int, int], ...]

    @property
    def jpeg_format(self) -> int:
        """The acldvppJpegFormat of the subsampling (ACL_JPEG_CSS_*)."""
        if self.components == 1:
            return ACL_JPEG_CSS_GRAY
        if self.components != 3 or self.sampling[1] != self.sampling[2]:
            return ACL_JPEG_CSS_UNKNOWN
        (hy, vy), (hc, vc) = self.sampling[0], self.sampling[1]
        if hc == 0 or vc == 0 or hy % hc or vy % vc:
            return ACL_JPEG_CSS_UNKNOWN
        return {(1, 1): ACL_JPEG_CSS_444, (2, 1): ACL_JPEG_CSS_422, (2, 2): ACL_JPEG_CSS_420,
                (1, 2): ACL_JPEG_CSS_440, (4, 1): ACL_JPEG_CSS_411}.get(
                    (hy // hc, vy // vc), ACL_JPEG_CSS_UNKNOWN)

    def unsupported(self) -> str | None:
        """Why JPEGD cannot decode this stream (None when it can): only Huffman
        sequential 8-bit JPEG with 1 or 3 components is accepted."""
        if self.sof == 2:
            return "it is a progressive JPEG"
        if self.sof in (9, 10, 11, 13, 14, 15):
            return "it uses arithmetic coding"
        if self.sof == 3:
            return "it is a lossless JPEG"
        if self.sof in (5, 6, 7):
            return "it is a hierarchical JPEG"
        if self.precision != 8:
            return f"it has {self.precision}-bit samples (only 8-bit is supported)"
        if self.components not in (1, 3):
            return f"it has {self.components} components (CMYK/YCCK are not supported)"
        return None


# ------------------------------------------------------------------ channels


def create_channel_desc(s: Session, cid: int) -> int:
    """acldvppCreateChannelDesc."""
    return s.register(ChannelDesc(), ObjectKind.DVPP_CHANNEL_DESC, cid, "dvpp channel desc")


def channel_desc(s: Session, handle: int) -> ChannelDesc:
    """Resolve a channel-desc handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, ChannelDesc, "dvpp channel desc")


def create_channel(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """acldvppCreateChannel: needs a current context; one channel per desc."""
    d = channel_desc(s, handle)
    ctx = devices.require_ctx(s, th)
    if d.channel is not None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"channel desc {handle:#x} already has a "
                                                "channel: destroy it before creating another")
    ch = Channel(ctx)
    s.register(ch, ObjectKind.DVPP_CHANNEL, cid, f"dvpp channel of desc {handle:#x}",
               device=ctx.device.index, ctx=ctx.oid)
    d.channel = ch


def destroy_channel(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyChannel."""
    d = channel_desc(s, handle)
    if d.channel is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"channel desc {handle:#x} has no channel: "
                                                "call acl.media.dvpp_create_channel first")
    s.retire(d.channel, cid)
    d.channel = None


def destroy_channel_desc(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyChannelDesc: 148051 while the desc's channel still exists."""
    d = channel_desc(s, handle)
    if d.channel is not None:
        raise AclError(ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED,
                       f"channel desc {handle:#x} still has a channel: call "
                       "acl.media.dvpp_destroy_channel(desc) before "
                       "acl.media.dvpp_destroy_channel_desc(desc)")
    s.retire(d, cid)


def channel_id(s: Session, handle: int) -> int:
    """acldvppGetChannelDescChannelId: how many DVPP channels were created before this one."""
    ch = channel_desc(s, handle).channel
    if ch is None:
        return 0
    return sum(1 for o in s.objects[:ch.oid] if isinstance(o, Channel))


def _live_channel(s: Session, handle: int) -> ChannelDesc:
    d = channel_desc(s, handle)
    if d.channel is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"channel desc {handle:#x} has no channel: "
                                                "call acl.media.dvpp_create_channel first")
    return d


# ------------------------------------------------------------------ picture descs


def create_pic_desc(s: Session, cid: int) -> int:
    """acldvppCreatePicDesc: every field starts at 0."""
    return s.register(PicDesc(), ObjectKind.DVPP_PIC_DESC, cid, "dvpp pic desc")


def pic_desc(s: Session, handle: int) -> PicDesc:
    """Resolve a pic-desc handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, PicDesc, "dvpp pic desc")


def destroy_pic_desc(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyPicDesc: the data buffer is not freed."""
    s.retire(pic_desc(s, handle), cid)


# ------------------------------------------------------------------ resize configs


def create_resize_config(s: Session, cid: int) -> int:
    """acldvppCreateResizeConfig: interpolation 0 (the default algorithm)."""
    return s.register(ResizeConfig(), ObjectKind.DVPP_RESIZE_CONFIG, cid, "dvpp resize config")


def resize_config(s: Session, handle: int) -> ResizeConfig:
    """Resolve a resize-config handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, ResizeConfig, "dvpp resize config")


def destroy_resize_config(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyResizeConfig."""
    s.retire(resize_config(s, handle), cid)


def set_interpolation(s: Session, handle: int, value: int) -> None:
    """acldvppSetResizeConfigInterpolation: 0-5 (reference 9.2)."""
    cfg = resize_config(s, handle)
    if not 0 <= value <= INTERP_HIGH_ORDER:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"interpolation {value} is not 0-5 (0 default, "
                                                "1 bilinear, 2 nearest, 3/4 TF-like bilinear/"
                                                "nearest, 5 high-order)")
    cfg.interpolation = value


# ------------------------------------------------------------------ JPEG headers

_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB,
                          0xCD, 0xCE, 0xCF})


def parse_jpeg_header(data: bytes) -> JpegInfo:
    """Walk the markers of a JPEG stream up to its SOF segment.

    Raises:
        AclError: 100000 when the bytes are not a JPEG or the header is cut short.
    """
    def bad(why: str) -> AclError:
        return AclError(ACL_ERROR_INVALID_PARAM, f"not a valid JPEG stream: {why}")

    n = len(data)
    if n < 4 or data[0] != 0xFF or data[1] != 0xD8:
        raise bad("it does not start with the SOI marker FF D8")
    i = 2
    while i < n:
        if data[i] != 0xFF:
            raise bad(f"expected a marker at byte {i}, found {data[i]:#04x}")
        while i < n and data[i] == 0xFF:  # fill bytes
            i += 1
        if i >= n:
            break
        marker = data[i]
        i += 1
        if marker == 0xD8 or 0xD0 <= marker <= 0xD7 or marker == 0x01:
            continue  # standalone markers
        if marker == 0xD9:
            raise bad("the end-of-image marker comes before any frame header")
        if i + 2 > n:
            break
        length = (data[i] << 8) | data[i + 1]
        if length < 2:
            raise bad(f"segment {marker:#04x} has length {length}")
        if marker in _SOF_MARKERS:
            seg = data[i + 2:i + length]
            if len(seg) < 6:
                break
            precision = seg[0]
            height = (seg[1] << 8) | seg[2]
            width = (seg[3] << 8) | seg[4]
            ncomp = seg[5]
            if len(seg) < 6 + 3 * ncomp:
                break
            sampling = tuple((seg[7 + 3 * k] >> 4, seg[7 + 3 * k] & 0x0F)
                             for k in range(ncomp))
            if width == 0 or height == 0 or ncomp == 0:
                raise bad(f"the frame header gives {width}x{height} with {ncomp} components")
            return JpegInfo(width, height, ncomp, marker & 0x0F, precision, sampling)
        if marker == 0xDA:
            raise bad("the scan starts before any frame header (SOF)")
        i += length
    raise bad("the stream ends before its frame header (SOF)")


def read_host_jpeg(s: Session, ptr: int, size: int, api: str, what: str = "JPEG") -> bytes:
    """The ``size`` bytes at host address ``ptr`` (100000 for null, device or unknown);
    ``what`` names the picture kind in the messages (``"JPEG"``, ``"PNG"``).

    In the device run mode (RC, the program on the board) device and DVPP memory are the
    host's memory too, so the header is read where the program put the file: the public
    on-board samples read the JPEG straight into acldvppMalloc memory and ask for its
    size there, which succeeds on a 310B board (issue 28's hardware run).
    """
    if ptr == 0 or size == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the {what} data is null or empty")
    if s.run_mode == "host" and s.memory.is_device_addr(ptr):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api} reads the {what} header from host "
                                                f"memory, but {ptr:#x} is a device address: "
                                                "pass the host buffer the file was read into")
    try:
        _, view = buffers.host_view(s, ptr, size, api)
    except AclError as e:
        raise AclError(ACL_ERROR_INVALID_PARAM, e.message) from None
    return bytes(view)


def jpeg_image_info(s: Session, ptr: int, size: int, api: str) -> JpegInfo:
    """acldvppJpegGetImageInfo(V2): parse the header of a JPEG in host memory."""
    return parse_jpeg_header(read_host_jpeg(s, ptr, size, api))


def jpegd_width_align(s: Session) -> int:
    """JPEGD output widthStride alignment: 128 on Ascend310, 64 on 310P/910B-class SoCs."""
    return 128 if s.profile.name == "Ascend310" else 64


def _align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def jpeg_predict_dec_size(s: Session, ptr: int, size: int, out_format: int) -> int:
    """acldvppJpegPredictDecSize: align(w, 128 or 64) * align(h, 16) * bytes per pixel."""
    info = jpeg_image_info(s, ptr, size, "acl.media.dvpp_jpeg_predict_dec_size")
    x2 = _SP_SIZE_X2.get(out_format)
    if x2 is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"output pixel format {out_format} is not a "
                                                "JPEGD output format the emulator knows "
                                                "(1/2 YUV420SP, 3/4 YUV422SP, 5/6 YUV444SP)")
    return _align(info.width, jpegd_width_align(s)) * _align(info.height, 16) * x2 // 2


# ------------------------------------------------------------------ kernels


#: what needs Pillow, as MissingExtra names it
JPEGD_FEATURE, JPEGE_FEATURE = "JPEG decoding (DVPP JPEGD)", "JPEG encoding (DVPP JPEGE)"


def _require_pillow(feature: str) -> None:
    """Raise MissingExtra (naming the media extra) when Pillow is not installed: at the call
    that queues a JPEG task (not later inside the task), and again in the kernel."""
    from .._extras import require
    require("PIL", "media", feature)


def _decode_yuv(data: bytes, info: JpegInfo) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Y, Cb, Cr planes (uint8, full resolution) of a JPEG, decoded by Pillow."""
    _require_pillow(JPEGD_FEATURE)
    from PIL import Image

    im: Image.Image = Image.open(io.BytesIO(data))
    if im.mode == "RGB":
        im.draft("YCbCr", im.size)  # libjpeg's own YCbCr output: no RGB round trip
    im.load()
    if im.mode == "L":
        y = np.asarray(im, dtype=np.uint8)
        gray = np.full_like(y, 128)  # jpeg(400) decoded to YUV420SP: UV filled with 0x80
        return y, gray, gray
    if im.mode != "YCbCr":
        im = im.convert("YCbCr")
    a = np.asarray(im, dtype=np.uint8)
    return a[:, :, 0], a[:, :, 1], a[:, :, 2]


def _half(plane: np.ndarray) -> np.ndarray:
    """2x2 box downsampling (edges replicated for odd sizes), rounded to nearest."""
    h, w = plane.shape
    p = np.pad(plane, ((0, h % 2), (0, w % 2)), mode="edge").astype(np.uint16)
    q = p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2]
    return ((q + 2) // 4).astype(np.uint8)


def _pack_sp420(y: np.ndarray, u: np.ndarray, v: np.ndarray, w_stride: int, h_stride: int,
                nv21: bool) -> bytes:
    """Y plane + interleaved chroma plane with the given strides; padding is Y 0, UV 0x80."""
    out = np.zeros(w_stride * h_stride * 3 // 2, dtype=np.uint8)
    yp = out[:w_stride * h_stride].reshape(h_stride, w_stride)
    uvp = out[w_stride * h_stride:].reshape(h_stride // 2, w_stride)
    uvp[:] = 128
    yp[:y.shape[0], :y.shape[1]] = y
    ch, cw = u.shape
    uv = np.empty((ch, cw, 2), dtype=np.uint8)
    uv[:, :, 0], uv[:, :, 1] = (v, u) if nv21 else (u, v)
    uvp[:ch, :2 * cw] = uv.reshape(ch, 2 * cw)
    return out.tobytes()


def decode_to_sp420(data: bytes, info: JpegInfo, w_stride: int, h_stride: int,
                    nv21: bool = False) -> bytes:
    """Decode a JPEG into YUV420SP (NV12, or NV21) bytes laid out with these strides."""
    y, cb, cr = _decode_yuv(data, info)
    return _pack_sp420(y, _half(cb), _half(cr), w_stride, h_stride, nv21)


def _coords(n_out: int, n_in: int, mode: int) -> np.ndarray:
    scale = n_in / n_out
    d = np.arange(n_out, dtype=np.float64)
    if mode in (INTERP_NEAREST, INTERP_TF_NEAREST):
        return np.minimum(np.floor(d * scale), n_in - 1)
    if mode == INTERP_TF_BILINEAR:
        return np.minimum(d * scale, n_in - 1)
    return np.clip((d + 0.5) * scale - 0.5, 0, n_in - 1)  # OpenCV-like half-pixel centres


def resize_plane(src: np.ndarray, out_h: int, out_w: int, mode: int) -> np.ndarray:
    """Resize one uint8 plane: bilinear (modes 0, 1, 3, 5) or nearest (2, 4), vectorised."""
    h, w = src.shape
    sy, sx = _coords(out_h, h, mode), _coords(out_w, w, mode)
    y0 = sy.astype(np.intp)
    x0 = sx.astype(np.intp)
    if mode in (INTERP_NEAREST, INTERP_TF_NEAREST):
        return src[y0[:, None], x0[None, :]]
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    wy = (sy - y0)[:, None]
    wx = (sx - x0)[None, :]
    f = src.astype(np.float32)
    top = f[y0][:, x0] * (1 - wx) + f[y0][:, x1] * wx
    bottom = f[y1][:, x0] * (1 - wx) + f[y1][:, x1] * wx
    out = top * (1 - wy) + bottom * wy
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def resize_sp420(data: bytes, in_w: int, in_h: int, in_ws: int, in_hs: int, in_nv21: bool,
                 out_w: int, out_h: int, out_ws: int, out_hs: int, out_nv21: bool,
                 mode: int) -> bytes:
    """Resize a YUV420SP picture (sizes even) into another YUV420SP layout."""
    buf = np.frombuffer(data, dtype=np.uint8)
    yp = buf[:in_ws * in_hs].reshape(in_hs, in_ws)[:in_h, :in_w]
    uvp = buf[in_ws * in_hs:in_ws * in_hs * 3 // 2].reshape(in_hs // 2, in_ws)
    uv = uvp[:in_h // 2, :in_w].reshape(in_h // 2, in_w // 2, 2)
    u, v = (uv[:, :, 1], uv[:, :, 0]) if in_nv21 else (uv[:, :, 0], uv[:, :, 1])
    y2 = resize_plane(yp, out_h, out_w, mode)
    u2 = resize_plane(np.ascontiguousarray(u), out_h // 2, out_w // 2, mode)
    v2 = resize_plane(np.ascontiguousarray(v), out_h // 2, out_w // 2, mode)
    return _pack_sp420(y2, u2, v2, out_ws, out_hs, out_nv21)


# ------------------------------------------------------------------ checks


def _dvpp_buffer(s: Session, cid: int, ptr: int, nbytes: int, what: str) -> None:
    """``[ptr, ptr+nbytes)`` must lie in one DVPP (or device) allocation; device memory
    from acl.rt.malloc gets a warning."""
    if ptr == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{what} is a null pointer")
    try:
        r = copies.resolve(s, ptr, nbytes, what)
    except AccessError as e:
        raise AclError(ACL_ERROR_INVALID_PARAM, e.message) from None
    if r.kind not in (DEVICE, DVPP):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{what} is {KIND_NAMES[r.kind]} memory: DVPP "
                                                "reads and writes device memory from "
                                                "acl.media.dvpp_malloc")
    if r.kind == DEVICE:
        s.diag(cid, "dvpp_memory", f"{what} comes from acl.rt.malloc; every picture buffer "
                                   "handed to DVPP should come from acl.media.dvpp_malloc "
                                   "(acldvppSetPicDescData)")


def _peek(s: Session, ptr: int, size: int) -> bytes | None:
    """The bytes at a device address now, or None if some were never written (an async
    copy still in flight): then the task itself validates them when it runs."""
    r = s.memory.find(ptr)
    if r is None:
        return None
    off = ptr - r.addr
    n = min(size, r.size - off)
    if r.unwritten(off, off + n):
        return None
    return bytes(r.buf[off:off + n])


def _check_jpegd_input(s: Session, info: JpegInfo) -> None:
    why = info.unsupported()
    if why is not None:
        raise AclError(ACL_ERROR_UNSUPPORTED_JPEG, f"JPEGD decodes only Huffman baseline "
                                                   f"JPEG, and {why}")
    top = 16384 if s.profile.name.startswith("Ascend910B") else 8192
    if not (JPEGD_MIN_WH <= info.width <= top and JPEGD_MIN_WH <= info.height <= top):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"JPEGD input resolution must be {JPEGD_MIN_WH}x{JPEGD_MIN_WH} to "
                       f"{top}x{top}; this JPEG is {info.width}x{info.height}")


def _check_jpegd_output(s: Session, ws: int, hs: int, size: int, info: JpegInfo) -> None:
    a = jpegd_width_align(s)
    if ws % a or ws < info.width:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"JPEGD output widthStride must be the width aligned up to {a} on "
                       f"{s.profile.name} (128 on Ascend310, 64 on 310P/910B-class SoCs); got "
                       f"widthStride={ws} for width {info.width}: use "
                       f"{_align(info.width, a)}")
    if hs % 16 or hs < info.height:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"JPEGD output heightStride must be the height aligned up to 16; got "
                       f"heightStride={hs} for height {info.height}: use "
                       f"{_align(info.height, 16)}")
    need = ws * hs * 3 // 2
    if size < need:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"JPEGD output needs widthStride*heightStride*3//2 = {ws}*{hs}*3//2 = "
                       f"{need} bytes (acl.media.dvpp_jpeg_predict_dec_size), but the pic "
                       f"desc size is {size}")


# ------------------------------------------------------------------ JPEG decode


def jpeg_decode_async(s: Session, th: HostThread, cid: int, chan: int, in_ptr: int,
                      in_size: int, out_handle: int, stream: int) -> None:
    """acldvppJpegDecodeAsync: queue a JPEGD task that writes YUV420SP into the out desc."""
    api = "acl.media.dvpp_jpeg_decode_async"
    out, st = _decode_call(s, th, cid, (chan, in_ptr, in_size, out_handle, stream), "JPEG",
                           JPEGD_FEATURE)
    if out.format not in YUV420SP:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the output pic desc format is {out.format}; the emulator "
                       "decodes to YUV420SP only (1 = NV12, 2 = NV21): call "
                       "acl.media.dvpp_set_pic_desc_format(desc, 1)")
    head = _peek(s, in_ptr, in_size)
    info: JpegInfo | None = None
    a = jpegd_width_align(s)
    if head is not None:
        info = parse_jpeg_header(head)
        _check_jpegd_input(s, info)
        if out.width_stride == 0:
            out.width_stride = _align(info.width, a)
        if out.height_stride == 0:
            out.height_stride = _align(info.height, 16)
        _check_jpegd_output(s, out.width_stride, out.height_stride, out.size, info)
    elif out.width_stride == 0 or out.height_stride == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the JPEG bytes are not in device memory yet (a copy is still "
                       "in flight), so set the output widthStride/heightStride explicitly")
    ws, hs = out.width_stride, out.height_stride
    need = ws * hs * 3 // 2
    if out.size < need:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"JPEGD output needs {need} bytes "
                                                f"(widthStride*heightStride*3//2), the pic "
                                                f"desc size is {out.size}")
    _dvpp_buffer(s, cid, out.data, need, "JPEGD output")
    nv21 = out.format == PIXEL_FORMAT_YVU_SEMIPLANAR_420
    size = out.size
    pixels = info.width * info.height if info is not None else ws * hs

    def decode(data: bytes) -> tuple[bytes, Any]:
        got = parse_jpeg_header(data)
        _check_jpegd_input(s, got)
        _check_jpegd_output(s, ws, hs, size, got)
        return decode_to_sp420(data, got, ws, hs, nv21), got

    _queue_decode(s, th, cid, st, out, (in_ptr, in_size), need, pixels, "JPEG", decode)


def _decode_call(s: Session, th: HostThread, cid: int, args: tuple[int, int, int, int, int],
                 codec: str, feature: str) -> tuple[PicDesc, Stream]:
    """The checks every picture decode call makes first (``args``: channel, input pointer,
    input size, out desc handle, stream): the decoder is installed, the channel lives, the
    out desc and the stream exist, the input is non-empty DVPP memory. The out desc and the
    stream."""
    chan, in_ptr, in_size, out_handle, stream = args
    _require_pillow(feature)
    _live_channel(s, chan)
    out = pic_desc(s, out_handle)
    st = streams.lookup(s, th, stream)
    if in_size == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"acl.media.dvpp_{codec.lower()}_decode_async: the {codec} size is 0")
    _dvpp_buffer(s, cid, in_ptr, in_size, f"{codec}D input")
    return out, st


def _queue_decode(s: Session, th: HostThread, cid: int, st: Stream, out: PicDesc,
                  source: tuple[int, int], need: int, pixels: int, codec: str,
                  decode: Callable[[bytes], tuple[bytes, Any]]) -> None:
    """Queue a picture decode (JPEGD, PNGD) on ``st``: ``decode`` turns the input bytes into
    the output bytes and the image's header (its ``width``, ``height``), raising AclError
    for what the decoder refuses; that failure reaches the program as the out desc's ret
    code (``dvpp_get_pic_desc_ret_code``) and a diagnostic, as the hardware reports it."""
    out.ret_code = 0
    unit = f"{codec}D"

    def run(inputs: list[bytes]) -> list[bytes]:
        try:
            try:
                data, got = decode(inputs[0])
            except (OSError, ValueError, SyntaxError) as e:
                raise AclError(ACL_ERROR_INVALID_PARAM, f"the {codec} stream is corrupt: "
                                                        f"{e}") from None
        except AclError as e:
            out.ret_code = e.code
            s.diag(cid, "dvpp_task_failed", f"{unit} task failed ({e.code}): {e.message}; "
                                            "see acl.media.dvpp_get_pic_desc_ret_code", 2)
            return [b""]
        out.width, out.height = got.width, got.height
        return [data]

    queue_device_task(s, th, cid, st, TaskKind.DVPP, Engine.DVPP, dvpp_ns(s.profile, pixels),
                      [(*source, f"{unit} input")], [(out.data, need, f"{unit} output")],
                      run, unit, allowed=(DEVICE, DVPP))


# ------------------------------------------------------------------ PNG decode (PNGD)
#
# The PNGD rules, from CANN's "PNGD functions and restrictions" page (aclcppdevg_03_0367 in
# the 8.0 API reference; aclpythondevg_01_0405 for pyACL) and the acldvppPngDecodeAsync,
# acldvppPngGetImageInfo and acldvppPngPredictDecSize pages:
#
# * input resolution 32x32 to 4096x4096; the output keeps the input's resolution;
# * output RGB888 from an RGB, GRAY, RGBA or AGRAY (gray + alpha) source, RGBA8888 only from
#   a source with alpha (RGBA, AGRAY); PIXEL_FORMAT_UNKNOWN keeps the source's kind (RGB888
#   for RGB/GRAY, RGBA8888 for RGBA/AGRAY);
# * widthStride = align(width, 128) * 3 (RGB888) or * 4 (RGBA8888), in bytes;
#   heightStride = align(height, 16); the buffer holds widthStride * heightStride bytes;
# * acldvppPngPredictDecSize takes RGB888, RGBA8888 or UNKNOWN ("the format that requires
#   the maximum allocation").
#
# The PNG signature and IHDR layout are the PNG specification's (W3C PNG, section 11.2.2).

#: the 8-byte PNG file signature (PNG specification, 5.2)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: IHDR colour types (PNG specification, 11.2.2)
PNG_GRAY, PNG_RGB, PNG_PALETTE, PNG_GRAY_ALPHA, PNG_RGBA = 0, 2, 3, 4, 6
#: colour channels acldvppPngGetImageInfo reports per colour type (a palette is RGB)
_PNG_COMPONENTS = {PNG_GRAY: 1, PNG_RGB: 3, PNG_PALETTE: 3, PNG_GRAY_ALPHA: 2, PNG_RGBA: 4}
#: bit depths the PNG specification allows per colour type
_PNG_DEPTHS = {PNG_GRAY: (1, 2, 4, 8, 16), PNG_RGB: (8, 16), PNG_PALETTE: (1, 2, 4, 8),
               PNG_GRAY_ALPHA: (8, 16), PNG_RGBA: (8, 16)}
#: PNGD resolution limits and output alignment (the PNGD restrictions page)
PNGD_MIN_WH, PNGD_MAX_WH = 32, 4096
PNGD_WIDTH_ALIGN, PNGD_HEIGHT_ALIGN = 128, 16
#: bytes per pixel of the PNGD output formats
PNGD_BYTES_PER_PIXEL = {PIXEL_FORMAT_RGB_888: 3, PIXEL_FORMAT_RGBA_8888: 4}
PNGD_FEATURE = "PNG decoding (DVPP PNGD)"


@dataclass(frozen=True)
class PngInfo:
    """What a PNG's IHDR chunk says."""

    width: int
    height: int
    bit_depth: int
    color_type: int
    interlace: int

    @property
    def components(self) -> int:
        """The colour channels acldvppPngGetImageInfo reports (GRAY 1, AGRAY 2, RGB and
        palette 3, RGBA 4)."""
        return _PNG_COMPONENTS[self.color_type]

    @property
    def has_alpha(self) -> bool:
        """True for RGBA and gray + alpha sources (the two that decode to RGBA8888)."""
        return self.color_type in (PNG_GRAY_ALPHA, PNG_RGBA)

    def output_format(self, requested: int) -> int:
        """The pixel format PNGD writes for ``requested`` (UNKNOWN keeps the source kind)."""
        if requested == PIXEL_FORMAT_UNKNOWN:
            return PIXEL_FORMAT_RGBA_8888 if self.has_alpha else PIXEL_FORMAT_RGB_888
        return requested


def parse_png_header(data: bytes) -> PngInfo:
    """Check the PNG signature and read the IHDR chunk (the first chunk of every PNG).

    Raises:
        AclError: 100000 when the bytes are not a PNG or the IHDR is invalid.
    """
    def bad(why: str) -> AclError:
        return AclError(ACL_ERROR_INVALID_PARAM, f"not a valid PNG stream: {why}")

    if not data.startswith(PNG_SIGNATURE):
        raise bad("it does not start with the PNG signature 89 50 4E 47 0D 0A 1A 0A")
    i = len(PNG_SIGNATURE)
    if len(data) < i + 8 + 13:
        raise bad("the stream ends before its IHDR chunk")
    length = int.from_bytes(data[i:i + 4], "big")
    if data[i + 4:i + 8] != b"IHDR" or length != 13:
        raise bad("the first chunk is not a 13-byte IHDR")
    h = data[i + 8:i + 21]
    width, height = int.from_bytes(h[0:4], "big"), int.from_bytes(h[4:8], "big")
    depth, ctype, compression, filt, interlace = h[8], h[9], h[10], h[11], h[12]
    if width == 0 or height == 0:
        raise bad(f"the IHDR gives {width}x{height}")
    if ctype not in _PNG_DEPTHS or depth not in _PNG_DEPTHS[ctype]:
        raise bad(f"colour type {ctype} with bit depth {depth} is not a PNG combination")
    if compression != 0 or filt != 0 or interlace not in (0, 1):
        raise bad(f"compression {compression}, filter {filt} or interlace {interlace} is not 0")
    return PngInfo(width, height, depth, ctype, interlace)


def png_image_info(s: Session, ptr: int, size: int, api: str) -> PngInfo:
    """acldvppPngGetImageInfo: parse the header of a PNG in host memory."""
    return parse_png_header(read_host_jpeg(s, ptr, size, api, "PNG"))


def png_predict_dec_size(s: Session, ptr: int, size: int, out_format: int) -> int:
    """acldvppPngPredictDecSize: align(w, 128) * bytes per pixel * align(h, 16); UNKNOWN is
    sized as RGBA8888, the larger output format."""
    info = png_image_info(s, ptr, size, "acl.media.dvpp_png_predict_dec_size")
    fmt = PIXEL_FORMAT_RGBA_8888 if out_format == PIXEL_FORMAT_UNKNOWN else out_format
    bpp = PNGD_BYTES_PER_PIXEL.get(fmt)
    if bpp is None:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"output pixel format {out_format} is not a PNGD output format "
                       f"({PIXEL_FORMAT_RGB_888} RGB888, {PIXEL_FORMAT_RGBA_8888} RGBA8888 or "
                       f"{PIXEL_FORMAT_UNKNOWN} UNKNOWN)")
    return (_align(info.width, PNGD_WIDTH_ALIGN) * bpp
            * _align(info.height, PNGD_HEIGHT_ALIGN))


def pngd_strides(info: PngInfo, fmt: int) -> tuple[int, int]:
    """The (widthStride, heightStride) PNGD requires for this picture in format ``fmt``."""
    bpp = PNGD_BYTES_PER_PIXEL[info.output_format(fmt)]
    return (_align(info.width, PNGD_WIDTH_ALIGN) * bpp,
            _align(info.height, PNGD_HEIGHT_ALIGN))


def _check_pngd_input(info: PngInfo) -> None:
    if not (PNGD_MIN_WH <= info.width <= PNGD_MAX_WH
            and PNGD_MIN_WH <= info.height <= PNGD_MAX_WH):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"PNGD input resolution must be {PNGD_MIN_WH}x{PNGD_MIN_WH} to "
                       f"{PNGD_MAX_WH}x{PNGD_MAX_WH}; this PNG is {info.width}x{info.height}")


def _check_pngd_format(fmt: int, info: PngInfo) -> None:
    """RGBA8888 output needs a source with alpha (the PNGD format table)."""
    if fmt == PIXEL_FORMAT_RGBA_8888 and not info.has_alpha:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       "PNGD writes RGBA8888 only from a PNG with an alpha channel (RGBA or "
                       "gray + alpha); this PNG has none: use PIXEL_FORMAT_RGB_888 "
                       f"({PIXEL_FORMAT_RGB_888}) or PIXEL_FORMAT_UNKNOWN")


def _check_pngd_output(ws: int, hs: int, size: int, fmt: int, info: PngInfo) -> None:
    """The output format and layout rules (format ``fmt`` as the desc gives it)."""
    _check_pngd_format(fmt, info)
    out_fmt = info.output_format(fmt)
    bpp = PNGD_BYTES_PER_PIXEL[out_fmt]
    want_ws, want_hs = pngd_strides(info, fmt)
    if ws % (PNGD_WIDTH_ALIGN * bpp) or ws < info.width * bpp:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"PNGD output widthStride must be the width aligned up to "
                       f"{PNGD_WIDTH_ALIGN} times {bpp} bytes per pixel; got "
                       f"widthStride={ws} for width {info.width}: use {want_ws}")
    if hs % PNGD_HEIGHT_ALIGN or hs < info.height:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"PNGD output heightStride must be the height aligned up to "
                       f"{PNGD_HEIGHT_ALIGN}; got heightStride={hs} for height {info.height}: "
                       f"use {want_hs}")
    if size < ws * hs:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"PNGD output needs widthStride*heightStride = {ws}*{hs} = {ws * hs} "
                       "bytes (acl.media.dvpp_png_predict_dec_size), but the pic desc size "
                       f"is {size}")


def decode_png(data: bytes, info: PngInfo, fmt: int, ws: int, hs: int) -> bytes:
    """Decode a PNG (Pillow) into packed RGB888 or RGBA8888 rows of ``ws`` bytes, ``hs``
    rows; padding is 0. Samples of 16-bit PNGs keep their high byte."""
    _require_pillow(PNGD_FEATURE)
    from PIL import Image

    im: Image.Image = Image.open(io.BytesIO(data))
    im.load()
    if im.mode in ("I", "I;16", "I;16B", "I;16L"):  # 16-bit gray: keep the high byte
        im = Image.fromarray((np.asarray(im, dtype=np.uint32) >> 8).astype(np.uint8), "L")
    out_fmt = info.output_format(fmt)
    rgb = np.asarray(im.convert("RGBA" if out_fmt == PIXEL_FORMAT_RGBA_8888 else "RGB"),
                     dtype=np.uint8)
    h, w, c = rgb.shape
    out = np.zeros((hs, ws), dtype=np.uint8)
    out[:h, :w * c] = rgb.reshape(h, w * c)
    return out.tobytes()


def png_decode_async(s: Session, th: HostThread, cid: int, chan: int, in_ptr: int,
                     in_size: int, out_handle: int, stream: int) -> None:
    """acldvppPngDecodeAsync: queue a PNGD task that writes RGB888/RGBA8888 into the out
    desc (the JPEGD task's shape: checks at call time when the PNG bytes are already in
    device memory, otherwise in the task through the desc's ret code)."""
    api = "acl.media.dvpp_png_decode_async"
    out, st = _decode_call(s, th, cid, (chan, in_ptr, in_size, out_handle, stream), "PNG",
                           PNGD_FEATURE)
    fmt = out.format
    if fmt not in (*PNGD_BYTES_PER_PIXEL, PIXEL_FORMAT_UNKNOWN):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the output pic desc format is {fmt}; PNGD writes "
                       f"PIXEL_FORMAT_RGB_888 ({PIXEL_FORMAT_RGB_888}), PIXEL_FORMAT_RGBA_8888 "
                       f"({PIXEL_FORMAT_RGBA_8888}) or, with PIXEL_FORMAT_UNKNOWN "
                       f"({PIXEL_FORMAT_UNKNOWN}), the source's own kind")
    head = _peek(s, in_ptr, in_size)
    info: PngInfo | None = None
    if head is not None:
        info = parse_png_header(head)
        _check_pngd_input(info)
        _check_pngd_format(fmt, info)
        want_ws, want_hs = pngd_strides(info, fmt)
        if out.width_stride == 0:
            out.width_stride = want_ws
        if out.height_stride == 0:
            out.height_stride = want_hs
        _check_pngd_output(out.width_stride, out.height_stride, out.size, fmt, info)
    elif out.width_stride == 0 or out.height_stride == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the PNG bytes are not in device memory yet (a copy is still "
                       "in flight), so set the output widthStride/heightStride explicitly")
    ws, hs = out.width_stride, out.height_stride
    need = ws * hs
    if out.size < need:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"PNGD output needs {need} bytes "
                                                f"(widthStride*heightStride), the pic desc "
                                                f"size is {out.size}")
    _dvpp_buffer(s, cid, out.data, need, "PNGD output")
    size = out.size
    pixels = info.width * info.height if info is not None else ws * hs

    def decode(data: bytes) -> tuple[bytes, Any]:
        got = parse_png_header(data)
        _check_pngd_input(got)
        _check_pngd_output(ws, hs, size, fmt, got)
        return decode_png(data, got, fmt, ws, hs), got

    _queue_decode(s, th, cid, st, out, (in_ptr, in_size), need, pixels, "PNG", decode)


# ------------------------------------------------------------------ VPC resize


def _vpc_layout(d: PicDesc, which: str, api: str, max_wh: int = VPC_MAX_WH) -> tuple[int, int]:
    """Validate a VPC picture's format, size and strides; returns (width, height) rounded
    down to even. ``max_wh`` is the largest width and height (``VPC_8K_MAX_WH`` for a resize
    input)."""
    if d.format not in YUV420SP:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the {which} format is {d.format}; the emulator's VPC handles "
                       "YUV420SP only (1 = NV12, 2 = NV21)")
    w, h = d.width - d.width % 2, d.height - d.height % 2
    if not (VPC_MIN_W <= w <= max_wh and VPC_MIN_H <= h <= max_wh):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the {which} is {d.width}x{d.height}; VPC supports "
                       f"{VPC_MIN_W}x{VPC_MIN_H} to {max_wh}x{max_wh} here")
    ws, hs = d.width_stride, d.height_stride
    if ws % 16 or ws < d.width or not VPC_MIN_WSTRIDE <= ws <= VPC_MAX_WSTRIDE:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the {which} widthStride is {ws}, but VPC needs the width "
                       f"aligned up to 16 for YUV420SP (a multiple of 16, >= width, in "
                       f"[{VPC_MIN_WSTRIDE}, {VPC_MAX_WSTRIDE}]): use "
                       f"{max(_align(d.width, 16), VPC_MIN_WSTRIDE)} for width {d.width}")
    if hs % 2 or hs < d.height or not VPC_MIN_HSTRIDE <= hs <= VPC_MAX_HSTRIDE:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the {which} heightStride is {hs}, but VPC needs the height "
                       f"aligned up to 2 (an even number >= height, in [{VPC_MIN_HSTRIDE}, "
                       f"{VPC_MAX_HSTRIDE}]): use {max(_align(d.height, 2), VPC_MIN_HSTRIDE)} "
                       f"for height {d.height}")
    need = ws * hs * 3 // 2
    if d.size < need:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the {which} size is {d.size}, but a YUV420SP picture takes "
                       f"widthStride*heightStride*3//2 = {ws}*{hs}*3//2 = {need} bytes")
    return w, h


def vpc_resize_async(s: Session, th: HostThread, cid: int, chan: int, in_handle: int,
                     out_handle: int, cfg_handle: int, stream: int) -> None:
    """acldvppVpcResizeAsync: queue a VPC task resizing YUV420SP into YUV420SP."""
    api = "acl.media.dvpp_vpc_resize_async"
    _live_channel(s, chan)
    src = pic_desc(s, in_handle)
    dst = pic_desc(s, out_handle)
    cfg = resize_config(s, cfg_handle)
    st = streams.lookup(s, th, stream)
    mode = cfg.interpolation
    if mode in (INTERP_TF_BILINEAR, INTERP_TF_NEAREST) and s.profile.name == "Ascend310P3":
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: interpolation {mode} (TF-like) is not "
                                                "supported on Ascend310P3: use 0, 1 or 2")
    if mode == INTERP_HIGH_ORDER and not s.profile.name.startswith("Ascend910B"):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: interpolation 5 (high-order filter) "
                                                f"is not supported on {s.profile.name}")
    in_w, in_h = _vpc_layout(src, "input", api, VPC_8K_MAX_WH)  # 8K resize input
    out_w, out_h = _vpc_layout(dst, "output", api)
    in_need = src.width_stride * src.height_stride * 3 // 2
    out_need = dst.width_stride * dst.height_stride * 3 // 2
    _dvpp_buffer(s, cid, src.data, in_need, "VPC input")
    _dvpp_buffer(s, cid, dst.data, out_need, "VPC output")
    args = (in_w, in_h, src.width_stride, src.height_stride,
            src.format == PIXEL_FORMAT_YVU_SEMIPLANAR_420,
            out_w, out_h, dst.width_stride, dst.height_stride,
            dst.format == PIXEL_FORMAT_YVU_SEMIPLANAR_420, mode)

    def run(inputs: list[bytes]) -> list[bytes]:
        return [resize_sp420(inputs[0], *args)]

    queue_device_task(s, th, cid, st, TaskKind.DVPP, Engine.DVPP,
                      vpc_ns(s.profile, [(in_w * in_h, out_w * out_h)]),
                      [(src.data, in_need, "VPC input")], [(dst.data, out_need, "VPC output")],
                      run, "VPC resize", allowed=(DEVICE, DVPP))


# ------------------------------------------------------------------ ROI, batch, stream descs
#
# Crop and paste rules (pyACL "dvpp_vpc_crop_and_paste_async" page aclpythondevg_01_0302 and
# the C page acldvppVpcCropAndPasteAsync aclcppdevg_03_0344, CANN 8.0/9.0; VPC constraint
# table of the Atlas 200/300/500 inference products): areas are inclusive pixel offsets
# [left, right] x [top, bottom]; for YUV420SP the left/top offsets are even and the
# right/bottom offsets odd, so every area has an even width and height; a crop area is at
# least 10x6 and lies inside its picture; the paste area's left offset is 16-aligned and it
# lies inside the output; the scale between crop and paste is 1/32 to 16. Batch calls take
# at most 256 areas in all (acldvppVpcBatchCropAndPasteAsync page, roiNums sum <= 256).

#: VPC scale limits between a crop area and its output (paste) area
VPC_MIN_SCALE, VPC_MAX_SCALE = 1 / 32, 16.0
#: most areas one batch call may carry (roiNums[0] + ... <= 256)
VPC_MAX_ROIS = 256
#: JPEGE input limits (pyACL JPEGE "功能及约束说明" page aclpythondevg_01_0328, CANN 8.0)
JPEGE_MIN_WH, JPEGE_MAX_WH = 32, 8192
#: bytes added to the raw YUV420SP size by dvpp_jpeg_predict_enc_size (headers, tables)
JPEGE_HEADER_BYTES = 4096


class RoiConfig:
    """An acldvppRoiConfig: an inclusive area ``[left, right] x [top, bottom]``."""

    def __init__(self, left: int, right: int, top: int, bottom: int) -> None:
        self.oid = -1
        self.handle = 0
        self.left, self.right, self.top, self.bottom = left, right, top, bottom
        self.alive = True


class BatchPicDesc:
    """An acldvppBatchPicDesc: ``batch_size`` picture descs made (and destroyed) with it."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.pics: list[PicDesc] = []
        self.alive = True


class StreamDesc:
    """An acldvppStreamDesc: a bitstream in device memory (VDEC input, VENC output)."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.data = 0
        self.size = 0
        self.format = 0
        self.timestamp = 0
        self.ret_code = 0
        self.eos = 0
        self.alive = True


class JpegeConfig:
    """An acldvppJpegeConfig: the encoding quality level (0-100)."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.level = 100
        self.alive = True


def create_roi_config(s: Session, cid: int, left: int, right: int, top: int,
                      bottom: int) -> int:
    """acldvppCreateRoiConfig(left, right, top, bottom): values are checked when used."""
    return s.register(RoiConfig(left, right, top, bottom), ObjectKind.DVPP_ROI_CONFIG, cid,
                      "dvpp roi config")


def roi_config(s: Session, handle: int) -> RoiConfig:
    """Resolve a ROI-config handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, RoiConfig, "dvpp roi config")


def destroy_roi_config(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyRoiConfig."""
    s.retire(roi_config(s, handle), cid)


def create_batch_pic_desc(s: Session, cid: int, batch_size: int) -> int:
    """acldvppCreateBatchPicDesc: ``batch_size`` (>= 1) empty picture descs."""
    if batch_size == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM, "batch size 0: a batch holds at least one "
                                                "picture (the call returns a null handle)")
    if batch_size > VPC_MAX_ROIS:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"batch size {batch_size} is more than the "
                                                f"{VPC_MAX_ROIS} pictures a VPC batch takes")
    b = BatchPicDesc()
    h = s.register(b, ObjectKind.DVPP_BATCH_PIC_DESC, cid, f"dvpp batch pic desc ({batch_size})")
    for i in range(batch_size):
        p = PicDesc()
        s.register(p, ObjectKind.DVPP_PIC_DESC, cid, f"dvpp pic desc {i} of batch {h:#x}")
        b.pics.append(p)
    return h


def batch_pic_desc(s: Session, handle: int) -> BatchPicDesc:
    """Resolve a batch-pic-desc handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, BatchPicDesc, "dvpp batch pic desc")


def batch_get_pic_desc(s: Session, handle: int, index: int) -> int:
    """acldvppGetPicDesc(batch, index): the handle of picture ``index`` of the batch."""
    b = batch_pic_desc(s, handle)
    if index >= len(b.pics):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"index {index} is outside batch {handle:#x} "
                                                f"of {len(b.pics)} pictures")
    return b.pics[index].handle


def destroy_batch_pic_desc(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyBatchPicDesc: its picture descs go with it (their buffers do not)."""
    b = batch_pic_desc(s, handle)
    for p in b.pics:
        if p.alive:
            s.retire(p, cid)
    s.retire(b, cid)


def create_stream_desc(s: Session, cid: int) -> int:
    """acldvppCreateStreamDesc: every field 0."""
    return s.register(StreamDesc(), ObjectKind.DVPP_STREAM_DESC, cid, "dvpp stream desc")


def stream_desc(s: Session, handle: int) -> StreamDesc:
    """Resolve a stream-desc handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, StreamDesc, "dvpp stream desc")


def destroy_stream_desc(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyStreamDesc: the data buffer is not freed."""
    s.retire(stream_desc(s, handle), cid)


def create_jpege_config(s: Session, cid: int) -> int:
    """acldvppCreateJpegeConfig: level 100."""
    return s.register(JpegeConfig(), ObjectKind.DVPP_JPEGE_CONFIG, cid, "dvpp jpege config")


def jpege_config(s: Session, handle: int) -> JpegeConfig:
    """Resolve a JPEGE-config handle (100000 for null, unknown or destroyed)."""
    return s.lookup(handle, JpegeConfig, "dvpp jpege config")


def destroy_jpege_config(s: Session, cid: int, handle: int) -> None:
    """acldvppDestroyJpegeConfig."""
    s.retire(jpege_config(s, handle), cid)


def set_jpege_level(s: Session, handle: int, level: int) -> None:
    """acldvppSetJpegeConfigLevel: 0-100 (100000 otherwise)."""
    cfg = jpege_config(s, handle)
    if level > 100:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"JPEGE level {level} is not in [0, 100]")
    cfg.level = level


# ------------------------------------------------------------------ YUV420SP planes


@dataclass(frozen=True)
class Layout:
    """Where a YUV420SP picture's pixels are: even size, strides, NV12 or NV21."""

    w: int
    h: int
    ws: int
    hs: int
    nv21: bool

    @property
    def nbytes(self) -> int:
        """``widthStride * heightStride * 3 // 2``."""
        return self.ws * self.hs * 3 // 2


def planes(data: bytes | np.ndarray, lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Y, U and V planes (views; chroma at half resolution) of a YUV420SP buffer."""
    buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    yp = buf[:lay.ws * lay.hs].reshape(lay.hs, lay.ws)[:lay.h, :lay.w]
    uvp = buf[lay.ws * lay.hs:lay.nbytes].reshape(lay.hs // 2, lay.ws)
    uv = uvp[:lay.h // 2, :lay.w].reshape(lay.h // 2, lay.w // 2, 2)
    if lay.nv21:
        return yp, uv[:, :, 1], uv[:, :, 0]
    return yp, uv[:, :, 0], uv[:, :, 1]


def blank_sp420(lay: Layout) -> np.ndarray:
    """A YUV420SP buffer of Y 0 and UV 0x80 (what _pack_sp420 pads with)."""
    out = np.zeros(lay.nbytes, dtype=np.uint8)
    out[lay.ws * lay.hs:] = 128
    return out


def paste_sp420(src: bytes, sl: Layout, crop: tuple[int, int, int, int], dst: np.ndarray,
                dl: Layout, paste: tuple[int, int, int, int], mode: int) -> None:
    """Crop ``(left, top, w, h)`` of ``src``, resize it to ``paste``'s size and write it at
    ``paste``'s offset in ``dst`` (in place). Offsets and sizes are even."""
    cl, ct, cw, ch = crop
    pl, pt, pw, ph = paste
    y, u, v = planes(src, sl)
    yc = np.ascontiguousarray(y[ct:ct + ch, cl:cl + cw])
    uc = np.ascontiguousarray(u[ct // 2:(ct + ch) // 2, cl // 2:(cl + cw) // 2])
    vc = np.ascontiguousarray(v[ct // 2:(ct + ch) // 2, cl // 2:(cl + cw) // 2])
    yo = dst[:dl.ws * dl.hs].reshape(dl.hs, dl.ws)
    uvo = dst[dl.ws * dl.hs:dl.nbytes].reshape(dl.hs // 2, dl.ws)
    yo[pt:pt + ph, pl:pl + pw] = resize_plane(yc, ph, pw, mode)
    u2 = resize_plane(uc, ph // 2, pw // 2, mode)
    v2 = resize_plane(vc, ph // 2, pw // 2, mode)
    uv = np.empty((ph // 2, pw // 2, 2), dtype=np.uint8)
    uv[:, :, 0], uv[:, :, 1] = (v2, u2) if dl.nv21 else (u2, v2)
    uvo[pt // 2:(pt + ph) // 2, pl:pl + pw] = uv.reshape(ph // 2, pw)


# ------------------------------------------------------------------ VPC crop and paste


def _area(roi: RoiConfig, which: str, api: str, w: int, h: int,
          paste: bool) -> tuple[int, int, int, int]:
    """Validate an inclusive ROI inside a ``w`` x ``h`` picture: (left, top, width, height)."""
    left, right, top, bottom = roi.left, roi.right, roi.top, roi.bottom
    where = f"{api}: the {which} area [{left}, {right}] x [{top}, {bottom}]"
    if right < left or bottom < top:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{where} is empty: right must be >= left and "
                                                "bottom >= top (offsets are inclusive)")
    if left % 2 or top % 2 or right % 2 == 0 or bottom % 2 == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{where} breaks the YUV420SP rule: left and top offsets must be even, "
                       "right and bottom odd (so the area's width and height are even), e.g. "
                       f"[{left - left % 2}, {right | 1}] x [{top - top % 2}, {bottom | 1}]")
    if paste and left % 16:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{where}: the paste area's left offset must be 16-aligned")
    if right >= w or bottom >= h:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{where} does not fit in the {w}x{h} picture")
    aw, ah = right - left + 1, bottom - top + 1
    if aw < VPC_MIN_W or ah < VPC_MIN_H:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{where} is {aw}x{ah}; VPC areas are at least "
                                                f"{VPC_MIN_W}x{VPC_MIN_H}")
    return left, top, aw, ah


def _layout(d: PicDesc, which: str, api: str) -> Layout:
    w, h = _vpc_layout(d, which, api)
    return Layout(w, h, d.width_stride, d.height_stride,
                  d.format == PIXEL_FORMAT_YVU_SEMIPLANAR_420)


#: one crop job: (input desc, output desc, crop ROI, paste ROI or None)
CropJob = tuple[int, int, int, int | None]


def vpc_crop_async(s: Session, th: HostThread, cid: int, api: str, chan: int,
                   jobs: list[CropJob], cfg_handle: int | None, stream: int) -> None:
    """The VPC crop family (crop, crop-resize, crop-and-paste and their batch forms): one
    DVPP task that crops each job's area, resizes it to the paste area (or the whole output)
    and writes it into the output. With a paste area the rest of the output keeps its bytes."""
    _live_channel(s, chan)
    st = streams.lookup(s, th, stream)
    mode = INTERP_DEFAULT if cfg_handle is None else resize_config(s, cfg_handle).interpolation
    srcs: dict[int, tuple[PicDesc, Layout]] = {}
    dsts: dict[int, tuple[PicDesc, Layout]] = {}
    plan: list[tuple[int, tuple[int, int, int, int], int, tuple[int, int, int, int]]] = []
    for k, (src_h, dst_h, crop_h, paste_h) in enumerate(jobs):
        tag = f" (area {k})" if len(jobs) > 1 else ""
        if src_h not in srcs:
            d = pic_desc(s, src_h)
            srcs[src_h] = d, _layout(d, "input" + tag, api)
        if dst_h not in dsts:
            d = pic_desc(s, dst_h)
            dsts[dst_h] = d, _layout(d, "output" + tag, api)
        sl, dl = srcs[src_h][1], dsts[dst_h][1]
        crop = _area(roi_config(s, crop_h), "crop" + tag, api, sl.w, sl.h, False)
        paste = (0, 0, dl.w, dl.h) if paste_h is None else \
            _area(roi_config(s, paste_h), "paste" + tag, api, dl.w, dl.h, True)
        for c, p, axis in ((crop[2], paste[2], "width"), (crop[3], paste[3], "height")):
            if not VPC_MIN_SCALE <= p / c <= VPC_MAX_SCALE:
                raise AclError(ACL_ERROR_INVALID_PARAM,
                               f"{api}: scaling the crop {axis} {c} to {p}{tag} is outside "
                               "VPC's 1/32 to 16 range")
        plan.append((list(srcs).index(src_h), crop, list(dsts).index(dst_h), paste))
    if len({d.data for d, _ in dsts.values()}) < len(dsts):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: two output pictures share one buffer")
    for d, lay in srcs.values():
        _dvpp_buffer(s, cid, d.data, lay.nbytes, "VPC input")
    for d, lay in dsts.values():
        _dvpp_buffer(s, cid, d.data, lay.nbytes, "VPC output")
    src_lays = [lay for _, lay in srcs.values()]
    dst_lays = [lay for _, lay in dsts.values()]
    # With paste areas the bytes around them stay as they are: the task starts its output
    # from the buffer's content when it runs (read straight from memory, not as a traced
    # read, so a fresh buffer is not an uninitialised read).
    keep = [s.memory.find(d.data) if any(j[3] is not None for j in jobs if j[1] == h) else None
            for h, (d, _) in dsts.items()]
    offs = [d.data for d, _ in dsts.values()]

    def run(inputs: list[bytes]) -> list[bytes]:
        outs = []
        for r, lay, addr in zip(keep, dst_lays, offs, strict=True):
            if r is None:
                outs.append(blank_sp420(lay))
            else:
                off = addr - r.addr
                outs.append(np.array(r.buf[off:off + lay.nbytes], dtype=np.uint8))
        for si, crop, di, paste in plan:
            paste_sp420(inputs[si], src_lays[si], crop, outs[di], dst_lays[di], paste, mode)
        return [o.tobytes() for o in outs]

    label = "VPC crop" if all(j[3] is None for j in jobs) else "VPC crop+paste"
    if len(jobs) > 1:
        label += f" x{len(jobs)}"
    ns = vpc_ns(s.profile, [(c[2] * c[3], p[2] * p[3]) for _, c, _, p in plan])
    queue_device_task(s, th, cid, st, TaskKind.DVPP, Engine.DVPP, ns,
                      [(d.data, lay.nbytes, "VPC input") for d, lay in srcs.values()],
                      [(d.data, lay.nbytes, "VPC output") for d, lay in dsts.values()],
                      run, label, allowed=(DEVICE, DVPP))


def batch_jobs(s: Session, api: str, src_batch: int, roi_nums: Any, dst_batch: int,
               crops: Any, pastes: Any | None) -> list[CropJob]:
    """Expand a batch call's lists into crop jobs: roi_nums[i] areas of input picture i,
    each written to the next output picture of the destination batch."""
    lists = (roi_nums, crops) if pastes is None else (roi_nums, crops, pastes)
    if not all(isinstance(x, list) for x in lists):
        raise TypeError("argument 3 or 5 is not list" if pastes is None
                        else "argument 3, 5 or 6 is not list")
    if not 1 <= len(roi_nums) <= VPC_MAX_ROIS or any(
            not isinstance(n, int) or not 0 <= n <= VPC_MAX_ROIS for n in roi_nums) \
            or not 1 <= len(crops) <= VPC_MAX_ROIS:
        raise ValueError("number of crop areas must be between 1 and 256")
    src = batch_pic_desc(s, src_batch)
    dst = batch_pic_desc(s, dst_batch)
    total = sum(roi_nums)
    if total != len(crops) or (pastes is not None and len(pastes) != len(crops)):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: roi_nums adds up to {total} but {len(crops)} crop areas"
                       + ("" if pastes is None else f" and {len(pastes)} paste areas")
                       + " were given; they must match")
    if total > VPC_MAX_ROIS:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: {total} areas; at most "
                                                f"{VPC_MAX_ROIS} in one call")
    if len(roi_nums) > len(src.pics):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: roi_nums has {len(roi_nums)} entries "
                                                f"but the input batch holds {len(src.pics)}")
    if total > len(dst.pics):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: {total} areas but the output batch "
                                                f"holds {len(dst.pics)} pictures")
    jobs: list[CropJob] = []
    k = 0
    for i, n in enumerate(roi_nums):
        for _ in range(n):
            paste = None if pastes is None else int(pastes[k])
            jobs.append((src.pics[i].handle, dst.pics[k].handle, int(crops[k]), paste))
            k += 1
    return jobs


# ------------------------------------------------------------------ JPEG encode


def _jpege_layout(d: PicDesc, api: str) -> Layout:
    """Validate a JPEGE input picture (JPEGE constraint table, aclpythondevg_01_0328)."""
    if d.format not in YUV420SP:
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the input format is {d.format}; the emulator's JPEGE encodes "
                       "YUV420SP only (1 = NV12, 2 = NV21)")
    w, h, ws, hs = d.width, d.height, d.width_stride, d.height_stride
    if w % 2 or h % 2:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: JPEGE needs an even width and height "
                                                f"for YUV420SP; the picture is {w}x{h}")
    if not (JPEGE_MIN_WH <= w <= JPEGE_MAX_WH and JPEGE_MIN_WH <= h <= JPEGE_MAX_WH):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: JPEGE input resolution is "
                                                f"{JPEGE_MIN_WH}x{JPEGE_MIN_WH} to "
                                                f"{JPEGE_MAX_WH}x{JPEGE_MAX_WH}; got {w}x{h}")
    if ws % 16 or ws < w:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the JPEGE input widthStride is {ws}; "
                                                "it must be the width aligned up to 16 (or a "
                                                f"larger multiple of 16): use {_align(w, 16)}")
    if hs not in (h, max(_align(h, 16), 32)):
        raise AclError(ACL_ERROR_INVALID_PARAM,
                       f"{api}: the JPEGE input heightStride is {hs}; it must equal the height "
                       f"({h}) or the height aligned up to 16, at least 32 "
                       f"({max(_align(h, 16), 32)})")
    lay = Layout(w, h, ws, hs, d.format == PIXEL_FORMAT_YVU_SEMIPLANAR_420)
    if d.size < lay.nbytes:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the input size is {d.size}, but the "
                                                f"picture takes widthStride*heightStride*3//2 "
                                                f"= {lay.nbytes} bytes")
    return lay


def jpeg_predict_enc_size(s: Session, in_handle: int, cfg_handle: int) -> int:
    """acldvppJpegPredictEncSize: an upper bound for the JPEG of this picture."""
    lay = _jpege_layout(pic_desc(s, in_handle), "acl.media.dvpp_jpeg_predict_enc_size")
    jpege_config(s, cfg_handle)
    return _align(lay.w, 16) * _align(lay.h, 16) * 3 // 2 + JPEGE_HEADER_BYTES


def encode_sp420_jpeg(data: bytes, lay: Layout, level: int) -> bytes:
    """YUV420SP -> baseline Huffman JPEG (4:2:0) with Pillow (libjpeg), no RGB round trip."""
    _require_pillow(JPEGE_FEATURE)
    from PIL import Image

    y, u, v = planes(data, lay)
    ycc = np.empty((lay.h, lay.w, 3), dtype=np.uint8)
    ycc[:, :, 0] = y
    ycc[:, :, 1] = u.repeat(2, 0).repeat(2, 1)
    ycc[:, :, 2] = v.repeat(2, 0).repeat(2, 1)
    im = Image.frombytes("YCbCr", (lay.w, lay.h), ycc.tobytes())
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=max(1, min(level, 100)), subsampling=2)
    return buf.getvalue()


def jpeg_encode_async(s: Session, th: HostThread, cid: int, chan: int, in_handle: int,
                      out_ptr: int, size_ptr: int, cfg_handle: int, stream: int) -> None:
    """acldvppJpegEncodeAsync: queue a JPEGE task; the uint32 at host ``size_ptr`` holds the
    output buffer size in and gets the JPEG's size when the task ends."""
    api = "acl.media.dvpp_jpeg_encode_async"
    _require_pillow(JPEGE_FEATURE)
    _live_channel(s, chan)
    d = pic_desc(s, in_handle)
    cfg = jpege_config(s, cfg_handle)
    st = streams.lookup(s, th, stream)
    lay = _jpege_layout(d, api)
    if size_ptr == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the size pointer is null")
    try:
        _, view = buffers.host_view(s, size_ptr, 4, f"{api} size pointer")
    except AclError as e:
        raise AclError(ACL_ERROR_INVALID_PARAM, e.message) from None
    cap = int.from_bytes(bytes(view), "little")
    if cap == 0:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{api}: the output size at the size pointer "
                                                "is 0: store the output buffer size there "
                                                "(acl.media.dvpp_jpeg_predict_enc_size)")
    _dvpp_buffer(s, cid, d.data, lay.nbytes, "JPEGE input")
    _dvpp_buffer(s, cid, out_ptr, cap, "JPEGE output")
    level = cfg.level

    def run(inputs: list[bytes]) -> list[bytes]:
        jpg = encode_sp420_jpeg(inputs[0], lay, level)
        if len(jpg) > cap:
            raise AclError(ACL_ERROR_INVALID_PARAM, f"the JPEG takes {len(jpg)} bytes but the "
                                                    f"output buffer holds {cap}")
        return [jpg, len(jpg).to_bytes(4, "little")]

    queue_device_task(s, th, cid, st, TaskKind.DVPP, Engine.DVPP,
                      dvpp_ns(s.profile, lay.w * lay.h),
                      [(d.data, lay.nbytes, "JPEGE input")],
                      [(out_ptr, cap, "JPEGE output"), (size_ptr, 4, "JPEGE output size")],
                      run, "JPEGE", allowed=(DEVICE, DVPP, HOST_PINNED, HOST_PAGEABLE))
