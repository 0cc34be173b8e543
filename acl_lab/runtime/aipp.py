"""AIPP (AI pre-processing): ATC's ``--insert_op_conf`` file, its checks, the operator ATC
inserts in front of the network, and the dynamic AIPP parameter set of ``acl.mdl``.

A model converted with ``--insert_op_conf=aipp.cfg`` takes the raw picture (YUV420SP_U8 from
DVPP, RGB888_U8, ...) and converts it itself: channel swap -> crop -> colour-space conversion
(CSC) -> mean/min/variance (DTC) -> padding, in that hardware order (ATC guide, "Configuration
File Template", general restriction 4). Here the converted model gets one more graph node,
``InsertedAipp``, between the new uint8 input and the nodes that read the original float
input, so execution, the cost model and the memo of ``models.py`` need nothing else.

Sources (facts, not code):

* the field list, types, ranges and defaults: the ATC AIPP configuration template (hiascend
  "Configuration File Template", atlasatc_16_0025) and GE ``aipp_op.cc`` (``ValidateParams``:
  ``aipp_mode`` must be static or dynamic, repeated CSC/var_reci fields are errors, static
  AIPP needs ``input_format``, sizes and positions must not be negative, dynamic AIPP needs
  ``max_src_image_size > 0``; ``SetCscDefaultValue``: the default YUV420SP matrix is the
  BT.601 narrow one with B in row 0, input and output biases 16/128/128; ``SetDtcDefaultValue``:
  ``var_reci_chn`` defaults to 1.0);
* the input size: GE ``insert_op_base`` / ATC "AIPP Verification of the Model Input Size":
  N * w * h * 1.5 (YUV420SP_U8), * 4 (XRGB8888_U8), * 3 (RGB888_U8), * 1 (YUV400_U8), with
  ``src_image_size_w/h`` 0 meaning the model's own width/height;
* static AIPP over ``--dynamic_image_size`` gears: the ATC ``--dynamic_image_size`` page
  (atlasatcparam_16_0019, usage constraints): crop and padding must be off and
  ``src_image_size_w/h`` 0, so the picture follows the gear (h x w; the input size at a gear
  is N * h * w * channels, ``get_input_size_by_index`` the largest gear's);
* the CSC formula: ATC guide "CSC Configuration": ``out = (M x (in - input_bias)) >> 8`` for
  YUV input; RGB input converts to YUV as ``(M x in) >> 8 + output_bias``;
* the dynamic AIPP setters' ranges: ACL ``acl_aipp.cpp`` (matrix -32677..32676, biases
  0..255, source width 2..4096 and height 1..4096, crop start 0..4095 and size 1..4096,
  padding 0..32, mean 0..255, min 0..255, var_reci -65504..65504, scf input 16..4096 and
  output width 16..1920; a batch index >= the batch count and any switch outside 0/1 is
  ACL_ERROR_INVALID_PARAM), ``aclmdlGetAippDataSize``: 64 + 96 x batch bytes (the
  ``kAippDynamicPara`` head plus one ``kAippDynamicBatchPara`` per batch, ``dynamic_aipp.h``).

Dynamic AIPP (``aipp_mode: dynamic``): the image input holds ``max_src_image_size`` bytes and
the model gets an ``ascend_dynamic_aipp_data`` input (64 + 96 x N bytes) after its inputs;
``acl.mdl.set_input_aipp`` checks the parameter set against the model (ACL
``GetAndCheckAippParams``) and copies it there, and ``InsertedAipp`` reads it at execution.

Differs from real ACL (documented once here): the input formats emulated are the four the
aclAippInputFormat page marks as supported by static and dynamic AIPP (YUV420SP_U8,
XRGB8888_U8, RGB888_U8, YUV400_U8; it marks the others "not supported yet", newer chips
convert some of them); resize (``resize: true``) is not
emulated (nor dynamic AIPP together with dynamic batch, image size or dims, nor static
YUV420SP_U8 AIPP over image-size gears, whose stored rows are 1.5 x the gear's height and
which acl_lab refuses); AIPP feeds
the network float16 (the output is rounded through float16, then given the network input's
dtype); the dynamic parameter buffer follows kAippDynamicPara's layout but is acl_lab's own.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..constants import ErrorCode
from . import buffers, opdefs
from .dvpp import Layout
from .dvpp import planes as sp420_planes
from .errors import AclError
from .opdefs import OpDef, OpError, TensorSpec

if TYPE_CHECKING:
    from .objects import HostThread
    from .session import Session

#: aclAippInputFormat (acl_mdl.h): the config file's names and the C enum values
INPUT_FORMATS: dict[str, int] = {
    "YUV420SP_U8": 1, "XRGB8888_U8": 2, "RGB888_U8": 3, "YUV400_U8": 4,
    "NC1HWC0DI_FP16": 5, "NC1HWC0DI_S8": 6, "ARGB8888_U8": 7, "YUYV_U8": 8,
    "YUV422SP_U8": 9, "AYUV444_U8": 10, "RAW10": 11, "RAW12": 12, "RAW16": 13, "RAW24": 14,
}
FORMAT_NAMES = {v: k for k, v in INPUT_FORMATS.items()}
#: the formats the emulated AIPP converts
EMULATED_FORMATS = ("YUV420SP_U8", "RGB888_U8", "XRGB8888_U8", "YUV400_U8")
#: channels of the picture as stored (uint8 per pixel per channel; YUV420SP is 1.5 bytes)
_STORED_CHANNELS = {"RGB888_U8": 3, "XRGB8888_U8": 4, "YUV400_U8": 1, "YUV420SP_U8": 1}
#: channels of the picture as aclmdlGetInputDims reports it (the image's channels)
IMAGE_CHANNELS = {"RGB888_U8": 3, "XRGB8888_U8": 4, "YUV400_U8": 1, "YUV420SP_U8": 3}
_YUV_INPUT = ("YUV420SP_U8", "YUV400_U8")

#: aclmdlInputAippType (acl_mdl.h)
DATA_WITHOUT_AIPP = 0
DATA_WITH_STATIC_AIPP = 1
DATA_WITH_DYNAMIC_AIPP = 2
DYNAMIC_AIPP_NODE = 3
#: the dynamic_attached_data_index of an input without dynamic AIPP (GE: 0xFFFFFFFF)
INVALID_NODE_INDEX = 0xFFFFFFFF
#: ACL_DYNAMIC_AIPP_NAME: the input real ATC adds for dynamic AIPP parameters
DYNAMIC_AIPP_NAME = "ascend_dynamic_aipp_data"
#: sizeof(kAippDynamicPara) - sizeof(kAippDynamicBatchPara) and sizeof(kAippDynamicBatchPara)
#: (dynamic_aipp.h: "lite: 64 + 96 * batchNum byte")
DYNAMIC_HEAD_BYTES = 64
DYNAMIC_BATCH_BYTES = 96

#: the op type of the node ``insert_static`` puts in front of the network
OP_TYPE = "InsertedAipp"
#: ACL_FORMAT_NHWC: the layout of an AIPP model's image input
ACL_FORMAT_NHWC = 1
ACL_FORMAT_NCHW = 0
ACL_FORMAT_ND = 2
_FLOPS_PER_OUTPUT = 8  # colour matrix (3 multiply-adds), subtract mean/min, scale

# GE aipp_op.cc SetCscDefaultValue: YUV420SP_U8 gets the BT.601 narrow-range YUV -> RGB rows
# in the order B, G, R (GE stores its DEFAULT_MATRIX_R2C* in matrix_r0c*), so the default
# output is BGR; other inputs get the RGB -> YUV matrix.
_DEFAULT_YUV420SP = (298, 516, 0, 298, -100, -208, 298, 0, 409)
_DEFAULT_RGB2YUV = (66, 129, 25, -38, -74, 112, 112, -94, -18)
_DEFAULT_BIAS = (16, 128, 128)


class AippConfigError(Exception):
    """An AIPP configuration file that ATC refuses (``message`` says why)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ------------------------------------------------------------------------ the fields
#: every aipp_op field of the ATC template: name -> kind ("enum", "int", "float", "bool")
FIELDS: dict[str, str] = {
    "aipp_mode": "enum", "related_input_rank": "int", "related_input_name": "str",
    "input_edge_idx": "int", "max_src_image_size": "int", "support_rotation": "bool",
    "input_format": "enum", "src_image_size_w": "int", "src_image_size_h": "int",
    "crop": "bool", "load_start_pos_w": "int", "load_start_pos_h": "int",
    "crop_size_w": "int", "crop_size_h": "int",
    "resize": "bool", "resize_output_w": "int", "resize_output_h": "int",
    "padding": "bool", "left_padding_size": "int", "right_padding_size": "int",
    "top_padding_size": "int", "bottom_padding_size": "int", "padding_value": "float",
    "csc_switch": "bool", "rbuv_swap_switch": "bool", "ax_swap_switch": "bool",
    "single_line_mode": "bool",
    **{f"matrix_r{r}c{c}": "int" for r in range(3) for c in range(3)},
    **{f"output_bias_{i}": "int" for i in range(3)},
    **{f"input_bias_{i}": "int" for i in range(3)},
    **{f"mean_chn_{i}": "int" for i in range(4)},
    **{f"min_chn_{i}": "float" for i in range(4)},
    **{f"var_reci_chn_{i}": "float" for i in range(4)},
}
#: the fields GE keeps as repeated (configuring one twice is an error, ValidateParams)
_REPEATED = {k for k in FIELDS if k.startswith(("matrix_", "output_bias_", "input_bias_",
                                                  "var_reci_chn_"))}


@dataclass
class AippConfig:
    """One ``aipp_op { ... }`` block, with every field resolved (defaults filled in)."""

    values: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def mode(self) -> str:
        """``static`` or ``dynamic``."""
        return str(self.values["aipp_mode"])

    @property
    def rank(self) -> int:
        """The model input this AIPP converts (``related_input_rank``)."""
        return int(self.values["related_input_rank"])

    def to_json(self) -> dict[str, Any]:
        """The form stored in the ``.om`` header (``meta["aipp"]``)."""
        return dict(self.values)


#: the numeric field kinds: how a value is read and what the error calls it
_NUMBERS: dict[str, tuple[type[int] | type[float], str]] = {
    "int": (int, "an integer"), "float": (float, "a number")}


def _value(key: str, raw: str, line: int) -> Any:
    kind = FIELDS[key]
    text = raw.strip().strip('"')
    if kind == "bool":
        if text.lower() in ("true", "1"):
            return True
        if text.lower() in ("false", "0"):
            return False
        raise AippConfigError(f"line {line}: {key} must be true or false, got {raw.strip()!r}")
    if kind in _NUMBERS:
        cast, what = _NUMBERS[kind]
        try:
            return cast(text)
        except ValueError:
            raise AippConfigError(f"line {line}: {key} must be {what}, got "
                                  f"{raw.strip()!r}") from None
    if kind == "enum" and key == "aipp_mode":
        if text not in ("static", "dynamic"):
            raise AippConfigError(f"line {line}: aipp_mode must be static or dynamic, got "
                                  f"{raw.strip()!r}")
        return text
    if kind == "enum":
        if text not in INPUT_FORMATS:
            raise AippConfigError(f"line {line}: input_format {raw.strip()!r} is not one of "
                                  + ", ".join(INPUT_FORMATS))
        return text
    return text


_TOKEN = re.compile(r"\s*(?:(?P<open>[A-Za-z_]\w*\s*\{)|(?P<close>\})|"
                    r"(?P<key>[A-Za-z_]\w*)\s*:\s*(?P<val>\"[^\"\n]*\"|[^\s{}#]+))")


def parse_config(text: str) -> list[AippConfig]:
    """Parse an ATC AIPP configuration (prototxt: ``aipp_op { key : value ... }``, ``#``
    comments, one block per converted input) and check it as GE's ``ValidateParams`` does.

    Returns one AippConfig per block, defaults filled in (``SetDefaultParams``). Raises
    AippConfigError naming the line and the field.
    """
    raw_blocks: list[list[tuple[str, str, int]]] = []
    current: list[tuple[str, str, int]] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0]
        pos = 0
        while pos < len(body):
            if not body[pos:].strip():
                break
            m = _TOKEN.match(body, pos)
            if m is None:
                raise AippConfigError(f"line {lineno}: cannot parse {body[pos:].strip()!r} "
                                      "(expected 'aipp_op {', 'key : value' or '}')")
            pos = m.end()
            if m.group("open"):
                name = m.group("open").rstrip("{ \t")
                if name != "aipp_op":
                    raise AippConfigError(f"line {lineno}: unknown block {name!r}: the "
                                          "configuration holds aipp_op { ... } blocks")
                if current is not None:
                    raise AippConfigError(f"line {lineno}: aipp_op blocks cannot nest")
                current = []
            elif m.group("close"):
                if current is None:
                    raise AippConfigError(f"line {lineno}: '}}' without an open aipp_op")
                raw_blocks.append(current)
                current = None
            else:
                if current is None:
                    raise AippConfigError(f"line {lineno}: {m.group('key')} is outside an "
                                          "aipp_op { ... } block")
                current.append((m.group("key"), m.group("val"), lineno))
    if current is not None:
        raise AippConfigError("the last aipp_op block is not closed with '}'")
    if not raw_blocks:
        raise AippConfigError("the file has no aipp_op { ... } block")
    configs = [_resolve(b) for b in raw_blocks]
    ranks = [c.rank for c in configs]
    if len(set(ranks)) != len(ranks):
        raise AippConfigError(f"two aipp_op blocks convert the same input "
                              f"(related_input_rank {ranks}): one AIPP per input")
    return configs


def _resolve(block: list[tuple[str, str, int]]) -> AippConfig:
    seen: dict[str, Any] = {}
    for key, raw, line in block:
        if key not in FIELDS:
            raise AippConfigError(f"line {line}: {key!r} is not an AIPP parameter (see the ATC "
                                  "AIPP configuration template)")
        if key in seen:
            what = ("can not be configured repeatedly" if key in _REPEATED
                    else "is configured twice")
            raise AippConfigError(f"line {line}: the parameter {key} {what}")
        seen[key] = _value(key, raw, line)
    if "aipp_mode" not in seen:
        raise AippConfigError("aipp_mode must be configured as static or dynamic")
    v: dict[str, Any] = {k: (False if t == "bool" else 0 if t == "int" else 0.0
                             if t == "float" else "") for k, t in FIELDS.items()}
    v["input_format"] = ""
    v.update(seen)
    if v["aipp_mode"] == "dynamic":
        if v["max_src_image_size"] <= 0:
            raise AippConfigError("for dynamic AIPP, max_src_image_size must be set to a "
                                  "number greater than 0")
        return AippConfig(v)
    if not v["input_format"]:
        raise AippConfigError("input_format must be set in static AIPP")
    for key in ("src_image_size_w", "src_image_size_h", "load_start_pos_w", "load_start_pos_h",
                "crop_size_w", "crop_size_h", "resize_output_w", "resize_output_h",
                "left_padding_size", "right_padding_size", "top_padding_size",
                "bottom_padding_size", "related_input_rank"):
        if v[key] < 0:
            raise AippConfigError(f"{key} must not be configured smaller than 0 (got {v[key]})")
    if v["csc_switch"]:  # SetCscDefaultValue: only the fields not configured
        yuv = v["input_format"] == "YUV420SP_U8"
        matrix = _DEFAULT_YUV420SP if yuv else _DEFAULT_RGB2YUV
        for i, m in enumerate(matrix):
            if f"matrix_r{i // 3}c{i % 3}" not in seen:
                v[f"matrix_r{i // 3}c{i % 3}"] = m
        for i, b in enumerate(_DEFAULT_BIAS):
            for kind in ("input_bias", "output_bias"):
                if f"{kind}_{i}" not in seen:
                    v[f"{kind}_{i}"] = b
    for i in range(4):  # SetDtcDefaultValue
        if f"var_reci_chn_{i}" not in seen:
            v[f"var_reci_chn_{i}"] = 1.0
    if not v["crop"]:
        for key in ("load_start_pos_w", "load_start_pos_h", "crop_size_w", "crop_size_h"):
            v[key] = 0
    if not v["padding"]:
        for key in ("left_padding_size", "right_padding_size", "top_padding_size",
                    "bottom_padding_size"):
            v[key] = 0
    return AippConfig(v)


def read_config(path: str) -> list[AippConfig]:
    """``parse_config`` of a file; AippConfigError when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise AippConfigError(f"cannot read the AIPP configuration file {path!r} "
                              f"({type(e).__name__}: {e})") from None
    return parse_config(text)


# ------------------------------------------------------------------------ geometry
@dataclass(frozen=True)
class Geometry:
    """Sizes of one static AIPP: source picture, crop window, output picture, channels."""

    fmt: str
    src_w: int
    src_h: int
    crop_x: int
    crop_y: int
    crop_w: int
    crop_h: int
    pad: tuple[int, int, int, int]  # top, bottom, left, right
    channels: int  # the network's C

    @property
    def out_h(self) -> int:
        """Height of the picture AIPP gives the network."""
        return self.crop_h + self.pad[0] + self.pad[1]

    @property
    def out_w(self) -> int:
        """Width of the picture AIPP gives the network."""
        return self.crop_w + self.pad[2] + self.pad[3]

    def stored_shape(self, n: int) -> tuple[int, ...]:
        """The uint8 input's shape as stored (aclmdlGetInputDimsV2: the product is the
        input size): [N, H*3/2, W, 1] for YUV420SP_U8, else [N, H, W, channels]."""
        if self.fmt == "YUV420SP_U8":
            return (n, self.src_h * 3 // 2, self.src_w, 1)
        return (n, self.src_h, self.src_w, _STORED_CHANNELS[self.fmt])

    def image_dims(self, n: int) -> list[int]:
        """aclmdlGetInputDims of the input: [N, H, W, C] of the picture."""
        return [n, self.src_h, self.src_w, IMAGE_CHANNELS[self.fmt]]


def geometry(cfg: AippConfig, model_input: TensorSpec) -> Geometry:
    """Check a static AIPP against the network input it feeds ([N, C, H, W], NCHW) and
    return its sizes; raises AippConfigError as ATC's checks do."""
    fmt = cfg["input_format"]
    if fmt not in EMULATED_FORMATS:
        raise AippConfigError(f"input_format {fmt} is not emulated by acl_lab (emulated: "
                              f"{', '.join(EMULATED_FORMATS)})")
    shape = model_input.shape
    if len(shape) != 4 or model_input.format != ACL_FORMAT_NCHW:
        raise AippConfigError(f"the input converted by AIPP must be a 4-D NCHW image tensor, "
                              f"input {cfg.rank} is {list(shape)}")
    if model_input.dtype not in ("float32", "float16"):
        raise AippConfigError(f"the input converted by AIPP must be float (AIPP feeds the "
                              f"network float16), input {cfg.rank} is {model_input.dtype}")
    _, c, h, w = shape
    if cfg["resize"]:
        raise AippConfigError("resize (resize: true) is not emulated by acl_lab's AIPP")
    if cfg["csc_switch"] and fmt == "YUV400_U8":
        raise AippConfigError("csc_switch needs a colour input; YUV400_U8 is one channel")
    want_c = 1 if fmt == "YUV400_U8" else 3
    if c != want_c:
        raise AippConfigError(f"AIPP with input_format {fmt} gives {want_c} channel(s); the "
                              f"network input {cfg.rank} has C = {c}")
    pad = (cfg["top_padding_size"], cfg["bottom_padding_size"], cfg["left_padding_size"],
           cfg["right_padding_size"])
    if any(p > 32 for p in pad):
        raise AippConfigError(f"padding sizes must be in [0, 32], got {list(pad)}")
    inner_h, inner_w = h - pad[0] - pad[1], w - pad[2] - pad[3]
    src_w = cfg["src_image_size_w"] or (cfg["crop_size_w"] if cfg["crop"] and
                                        cfg["crop_size_w"] else inner_w)
    src_h = cfg["src_image_size_h"] or (cfg["crop_size_h"] if cfg["crop"] and
                                        cfg["crop_size_h"] else inner_h)
    if not (1 <= src_w <= 4096 and 1 <= src_h <= 4096):
        raise AippConfigError(f"src_image_size_w/h must be in [1, 4096], got {src_w}x{src_h}")
    cx, cy = cfg["load_start_pos_w"], cfg["load_start_pos_h"]
    cw = cfg["crop_size_w"] or (inner_w if cfg["crop"] else src_w)
    ch = cfg["crop_size_h"] or (inner_h if cfg["crop"] else src_h)
    if fmt == "YUV420SP_U8":
        odd = [k for k, x in (("src_image_size_w", src_w), ("src_image_size_h", src_h),
                              ("load_start_pos_w", cx), ("load_start_pos_h", cy),
                              ("crop_size_w", cw), ("crop_size_h", ch)) if x % 2]
        if odd:
            raise AippConfigError(f"for YUV420SP_U8 {', '.join(odd)} must be even")
    if cx + cw > src_w or cy + ch > src_h:
        raise AippConfigError(f"the crop window ({cx}, {cy}) + {cw}x{ch} does not fit in the "
                              f"{src_w}x{src_h} source picture: load_start_pos + crop_size "
                              "must not exceed src_image_size")
    g = Geometry(fmt, src_w, src_h, cx, cy, cw, ch, pad, c)
    if (g.out_h, g.out_w) != (h, w):
        raise AippConfigError(f"the AIPP output is {g.out_w}x{g.out_h} (crop + padding) but the "
                              f"network input {cfg.rank} is {w}x{h}: they must be equal")
    for i in range(4):
        if not 0 <= cfg[f"mean_chn_{i}"] <= 255:
            raise AippConfigError(f"mean_chn_{i} must be in [0, 255]")
        if not 0.0 <= cfg[f"min_chn_{i}"] <= 255.0:
            raise AippConfigError(f"min_chn_{i} must be in [0, 255]")
        if not -65504.0 <= cfg[f"var_reci_chn_{i}"] <= 65504.0:
            raise AippConfigError(f"var_reci_chn_{i} must be in [-65504, 65504]")
    if cfg["csc_switch"]:
        for r in range(3):
            for cc in range(3):
                if not -32677 <= cfg[f"matrix_r{r}c{cc}"] <= 32676:
                    raise AippConfigError(f"matrix_r{r}c{cc} must be in [-32677, 32676]")
        for i in range(3):
            for kind in ("input_bias", "output_bias"):
                if not 0 <= cfg[f"{kind}_{i}"] <= 255:
                    raise AippConfigError(f"{kind}_{i} must be in [0, 255]")
    return g


def input_size(cfg: AippConfig, g: Geometry, n: int) -> int:
    """The AIPP input's byte size at batch ``n`` (GE / ATC formula)."""
    if cfg.mode == "dynamic":
        return n * int(cfg["max_src_image_size"])
    return int(np.prod(g.stored_shape(n), dtype=np.int64))


# ------------------------------------------------------------------------ the conversion
def _attrs_of(cfg: AippConfig, g: Geometry) -> dict[str, Any]:
    a = cfg.to_json()
    a.update({"src_w": g.src_w, "src_h": g.src_h, "crop_x": g.crop_x, "crop_y": g.crop_y,
              "crop_w": g.crop_w, "crop_h": g.crop_h, "pad": list(g.pad),
              "channels": g.channels, "out_dtype": "float32"})
    return a


def _planes(x: np.ndarray, fmt: str, h: int, w: int, swap: bool, ax_swap: bool) -> np.ndarray:
    """uint8 picture [N, rows, W, c] -> int64 planes [N, C, H, W] after the channel swap."""
    n = x.shape[0]
    if fmt == "YUV420SP_U8":  # unpadded (strides = size); NV21 with rbuv_swap_switch
        lay = Layout(w, h, w, h, swap)
        pics = [sp420_planes(pic, lay) for pic in x.reshape(n, -1)]
        return np.stack([np.stack([y, u.repeat(2, 0).repeat(2, 1), v.repeat(2, 0).repeat(2, 1)])
                         for y, u, v in pics]).astype(np.int64)
    px = x.reshape(n, h, w, _STORED_CHANNELS[fmt]).astype(np.int64)
    if fmt == "XRGB8888_U8":  # the padding byte is first, last with ax_swap_switch (RGBX)
        px = px[..., 0:3] if ax_swap else px[..., 1:4]
    planes = np.moveaxis(px, -1, 1)
    if swap and planes.shape[1] == 3:  # R and B exchange
        planes = planes[:, ::-1]
    return planes


def convert(x: np.ndarray, a: dict[str, Any], out_dtype: str = "float32") -> np.ndarray:
    """Apply a static AIPP (attributes from ``_attrs_of``) to the uint8 pictures ``x``
    ([N, rows, W, c] as the input desc stores them): swap, crop, CSC, DTC, padding. Returns
    [N, C, H, W] in ``out_dtype`` (values rounded through float16, AIPP's output type)."""
    fmt = a["input_format"]
    h, w = a["src_h"], a["src_w"]
    planes = _planes(x, fmt, h, w, bool(a["rbuv_swap_switch"]), bool(a["ax_swap_switch"]))
    cy, cx, ch, cw = a["crop_y"], a["crop_x"], a["crop_h"], a["crop_w"]
    planes = planes[:, :, cy:cy + ch, cx:cx + cw]
    if a["csc_switch"]:
        m = np.array([[a[f"matrix_r{r}c{c}"] for c in range(3)] for r in range(3)], np.int64)
        if fmt in _YUV_INPUT:  # YUV -> RGB/BGR: (M x (in - input_bias)) >> 8
            bias = np.array([a[f"input_bias_{i}"] for i in range(3)], np.int64)
            acc = np.einsum("ij,njhw->nihw", m, planes - bias.reshape(1, 3, 1, 1)) >> 8
        else:  # RGB -> YUV: (M x in) >> 8 + output_bias
            bias = np.array([a[f"output_bias_{i}"] for i in range(3)], np.int64)
            acc = (np.einsum("ij,njhw->nihw", m, planes) >> 8) + bias.reshape(1, 3, 1, 1)
        planes = np.clip(acc, 0, 255)
    c = planes.shape[1]
    mean = np.array([a[f"mean_chn_{i}"] for i in range(c)], np.float32).reshape(1, c, 1, 1)
    low = np.array([a[f"min_chn_{i}"] for i in range(c)], np.float32).reshape(1, c, 1, 1)
    scale = np.array([a[f"var_reci_chn_{i}"] for i in range(c)], np.float32).reshape(1, c, 1, 1)
    with np.errstate(over="ignore"):
        out = ((planes.astype(np.float32) - mean - low) * scale).astype(np.float16)
    top, bottom, left, right = a["pad"]
    if top or bottom or left or right:
        value = np.float16(a.get("padding_value", 0.0))
        out = np.pad(out, ((0, 0), (0, 0), (top, bottom), (left, right)),
                     constant_values=value)
    return np.ascontiguousarray(out.astype(out_dtype))


def gear_attrs(attrs: dict[str, Any], shape: tuple[int, ...]) -> dict[str, Any]:
    """The static AIPP attributes at the picture size of this input ``shape``.

    A static AIPP over image-size gears (``follow_gear``, see ``insert_static``) has no
    size of its own: its source, and with crop and padding off its output, are the gear's
    h x w, read from the uint8 input [N, h, w, c]. Other AIPPs are returned unchanged."""
    if not attrs.get("follow_gear") or len(shape) != 4:
        return attrs
    h, w = int(shape[1]), int(shape[2])
    return {**attrs, "src_h": h, "src_w": w, "crop_h": h, "crop_w": w}


_T = TypeVar("_T")
_V = TypeVar("_V")


def _checked_attrs(fn: Callable[[_V, dict[str, Any]], _T]) -> Callable[[_V, dict[str, Any]], _T]:
    """``fn`` with malformed attributes (a missing key, a value of the wrong type: what a
    hand-made op attribute can hold) reported as OpError 100000 instead of a crash."""
    @functools.wraps(fn)
    def checked(values: _V, attrs: dict[str, Any]) -> _T:
        try:
            return fn(values, attrs)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise OpError(f"{OP_TYPE}: malformed attributes ({type(e).__name__}: {e})",
                          ErrorCode.ACL_ERROR_INVALID_PARAM) from None
    return checked


@_checked_attrs
def _infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    if attrs.get("dynamic"):
        if len(specs) != 2 or any(x.dtype != "uint8" for x in specs):
            raise OpError(f"{OP_TYPE}: dynamic AIPP takes the uint8 pictures and the uint8 "
                          f"parameters, got {[(x.dtype, list(x.shape)) for x in specs]}")
        n = int(attrs["out_shape"][0])
        if specs[0].size != int(attrs["max_src_image_size"]) or \
                specs[1].size != data_size(n):
            raise OpError(f"{OP_TYPE}: inputs must hold {attrs['max_src_image_size']} and "
                          f"{data_size(n)} bytes")
        return [TensorSpec(str(attrs["out_dtype"]), tuple(int(v) for v in attrs["out_shape"]),
                           ACL_FORMAT_NCHW)]
    if len(specs) != 1:
        raise OpError(f"{OP_TYPE}: takes 1 input, got {len(specs)}")
    x = specs[0]
    attrs = gear_attrs(attrs, x.shape)
    fmt = attrs.get("input_format")
    if fmt not in EMULATED_FORMATS or "src_w" not in attrs:
        raise OpError(f"{OP_TYPE}: the attributes are not a resolved static AIPP",
                      ErrorCode.ACL_ERROR_INVALID_PARAM)
    rows = attrs["src_h"] * 3 // 2 if fmt == "YUV420SP_U8" else attrs["src_h"]
    stored = (rows, attrs["src_w"], _STORED_CHANNELS[fmt])
    if x.dtype != "uint8" or len(x.shape) != 4 or tuple(x.shape[1:]) != stored:
        raise OpError(f"{OP_TYPE}: input 0 must be uint8 [N, {stored[0]}, {stored[1]}, "
                      f"{stored[2]}] ({fmt}), got {x.dtype}{list(x.shape)}")
    top, bottom, left, right = attrs["pad"]
    out = (x.shape[0], attrs["channels"], attrs["crop_h"] + top + bottom,
           attrs["crop_w"] + left + right)
    return [TensorSpec(str(attrs.get("out_dtype", "float32")), out, ACL_FORMAT_NCHW)]


@_checked_attrs
def _compute(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    specs = [TensorSpec(a.dtype.name, tuple(a.shape)) for a in arrays]
    (spec,) = _infer(specs, attrs)
    if not attrs.get("dynamic"):
        return [convert(arrays[0], gear_attrs(attrs, arrays[0].shape), spec.dtype)]
    n, c, h, w = spec.shape
    p = decode_params(np.ascontiguousarray(arrays[1]).tobytes(), n)
    pics = np.ascontiguousarray(arrays[0]).reshape(-1)
    out = np.empty(spec.shape, spec.dtype)
    offset = 0
    for i in range(n):
        a = batch_attrs(p, i, c, h, w)
        size = picture_bytes(a["input_format"], a["src_w"], a["src_h"])
        rows = a["src_h"] * 3 // 2 if a["input_format"] == "YUV420SP_U8" else a["src_h"]
        pic = pics[offset:offset + size].reshape(1, rows, a["src_w"],
                                                 _STORED_CHANNELS[a["input_format"]])
        out[i] = convert(pic, a, spec.dtype)[0]
        offset += size
    return [out]


def _cost(ins: list[TensorSpec], outs: list[TensorSpec],
          attrs: dict[str, Any]) -> tuple[int, int]:
    """flops: per output element the colour matrix and the DTC; bytes: input + output."""
    return (_FLOPS_PER_OUTPUT * sum(o.size for o in outs),
            sum(t.nbytes for t in ins) + sum(o.nbytes for o in outs))


def _register() -> None:
    opdefs._load_builtin()  # the registry loads the built-in ops only while it is empty
    if OP_TYPE not in opdefs.REGISTRY:
        opdefs.register(OpDef(name=OP_TYPE, inputs=(1, 2), outputs=1,
                              dtypes=frozenset({"uint8"}), infer=_infer, compute=_compute,
                              cost=_cost, defaults={}))


_register()


# ------------------------------------------------------------------------ ATC's insertion
def insert_static(model: Any, configs: list[AippConfig]) -> Any:
    """The OmModel ``model`` with each AIPP of ``configs`` in front of its input.

    Static AIPP: the input becomes uint8 NHWC (``Geometry.stored_shape``, the size ATC gives
    it) and an ``InsertedAipp`` node converts it to the tensor the network reads. Dynamic
    AIPP (GE ``CreateAippData``): the input becomes ``max_src_image_size`` uint8 bytes and
    the model gets one more input, ``ascend_dynamic_aipp_data`` (uint8, 64 + 96 x N bytes),
    after its inputs, whose parameters ``acl.mdl.set_input_aipp`` writes. The resolved
    configuration is kept in ``meta["aipp"]`` (for ``get_first_aipp_info`` and
    ``get_aipp_type``). Raises AippConfigError for a configuration that does not fit."""
    from dataclasses import replace

    from .om import KIND_HW, IODesc, Node, validate

    inputs = list(model.inputs)
    nodes = list(model.nodes)
    stored: list[dict[str, Any]] = []
    dynamic = [c for c in configs if c.mode == "dynamic"]
    if dynamic and (getattr(model, "is_dynamic", False) or model.dynamic_batch):
        raise AippConfigError("dynamic AIPP together with dynamic batch, image size or dims "
                              "is not emulated by acl_lab")
    if len(dynamic) > 1:
        raise AippConfigError("acl_lab emulates one dynamic AIPP input per model")
    for cfg in configs:
        name = cfg["related_input_name"]
        if name:  # GE ConvertRelatedInputNameToRank
            names = [d.name for d in model.inputs]
            if name not in names:
                raise AippConfigError(f"related_input_name {name} convert rank failed: the "
                                      f"model inputs are {names}")
            cfg.values["related_input_rank"] = names.index(name)
        if not 0 <= cfg.rank < len(model.inputs):
            raise AippConfigError(f"related_input_rank {cfg.rank} names no model input (the "
                                  f"model has {len(model.inputs)})")
        d = inputs[cfg.rank]
        follow = (cfg.mode == "static" and getattr(model, "dynamic_kind", "") == KIND_HW
                  and len(d.shape) == 4 and d.shape[2:] == (-1, -1) and d.shape[1] > 0)
        if any(x < 0 for x in d.shape[1:]) and not follow:
            raise AippConfigError(f"input {cfg.rank} has dynamic dims {list(d.shape)}: AIPP "
                                  "with dynamic dims (or dynamic AIPP with dynamic image "
                                  "size) is not emulated by acl_lab (a -1 batch is, and "
                                  "static AIPP over --dynamic_image_size gears)")
        inner = f"{d.name}:aipp"
        nodes = [Node(nd.name, nd.op, [inner if t == d.name else t for t in nd.inputs],
                      list(nd.outputs), dict(nd.attrs)) for nd in nodes]
        if follow:
            g = _gear_geometry(cfg, d, model.gears)
            attrs = _attrs_of(cfg, g)
            attrs["out_dtype"] = d.dtype
            attrs["follow_gear"] = True
            nodes.insert(0, Node(f"{d.name}_aipp", OP_TYPE, [d.name], [inner], attrs))
            inputs[cfg.rank] = IODesc(d.name, "uint8",
                                      (d.shape[0], -1, -1, _STORED_CHANNELS[g.fmt]),
                                      ACL_FORMAT_NHWC)
            geo = [-1, -1, 0, 0, -1, -1, 0, 0, 0, 0, g.channels]
        elif cfg.mode == "static":
            g = geometry(cfg, d.spec(1))
            attrs = _attrs_of(cfg, g)
            attrs["out_dtype"] = d.dtype
            nodes.insert(0, Node(f"{d.name}_aipp", OP_TYPE, [d.name], [inner], attrs))
            inputs[cfg.rank] = IODesc(d.name, "uint8", g.stored_shape(d.shape[0]),
                                      ACL_FORMAT_NHWC)
            geo = [g.src_w, g.src_h, g.crop_x, g.crop_y, g.crop_w, g.crop_h, *g.pad,
                   g.channels]
        else:
            spec = d.spec(1)
            if len(spec.shape) != 4 or spec.format != ACL_FORMAT_NCHW or \
                    spec.dtype not in ("float32", "float16"):
                raise AippConfigError(f"the input converted by AIPP must be a 4-D NCHW float "
                                      f"tensor, input {cfg.rank} is {spec.dtype}"
                                      f"{list(spec.shape)}")
            n, c, h, w = d.shape
            if c not in (1, 3):
                raise AippConfigError(f"AIPP gives 1 or 3 channels; input {cfg.rank} has {c}")
            attrs = {"dynamic": True, "max_src_image_size": cfg["max_src_image_size"],
                     "out_shape": [n, c, h, w], "out_dtype": d.dtype}
            nodes.insert(0, Node(f"{d.name}_aipp", OP_TYPE, [d.name, DYNAMIC_AIPP_NAME],
                                 [inner], attrs))
            inputs[cfg.rank] = IODesc(d.name, "uint8", (int(cfg["max_src_image_size"]),),
                                      ACL_FORMAT_ND)
            inputs.append(IODesc(DYNAMIC_AIPP_NAME, "uint8", (data_size(n),), ACL_FORMAT_ND))
            geo = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, c]
        stored.append({**cfg.to_json(), "geometry": geo, "src_input": d.to_json()})
    meta = dict(model.meta)
    meta["aipp"] = stored
    out = replace(model, inputs=inputs, nodes=nodes, meta=meta)
    validate(out)
    return out


def _gear_geometry(cfg: AippConfig, d: Any, gears: list[tuple[int, ...]]) -> Geometry:
    """Check a static AIPP in front of an input with image-size gears ([N, C, -1, -1]) and
    return its geometry at the largest gear (the other fields are checked as for a fixed
    size). The ATC ``--dynamic_image_size`` page (atlasatcparam_16_0019): with static AIPP
    crop and padding must be off and src_image_size_w/h 0 (the picture is the gear's)."""
    if cfg["src_image_size_w"] or cfg["src_image_size_h"]:
        raise AippConfigError("with --dynamic_image_size, src_image_size_w and "
                              "src_image_size_h must be 0 (the picture follows the gear), got "
                              f"{cfg['src_image_size_w']}x{cfg['src_image_size_h']}")
    pads = [cfg[f"{k}_padding_size"] for k in ("top", "bottom", "left", "right")]
    if cfg["crop"] or cfg["padding"] or any(pads):
        raise AippConfigError("with --dynamic_image_size, crop and padding must be off")
    if cfg["input_format"] == "YUV420SP_U8":
        raise AippConfigError("static YUV420SP_U8 AIPP over --dynamic_image_size gears is "
                              "not emulated by acl_lab (RGB888_U8, XRGB8888_U8 and YUV400_U8 "
                              "are)")
    h, w = max(gears, key=lambda g: g[0] * g[1])
    spec = TensorSpec(d.dtype, (d.shape[0], d.shape[1], h, w), d.format)
    return geometry(cfg, spec)


def model_aipp(om: Any, index: int) -> dict[str, Any] | None:
    """The stored static AIPP of input ``index`` of an OmModel, or None."""
    for a in om.meta.get("aipp", []) or []:
        if isinstance(a, dict) and a.get("related_input_rank") == index:
            return a
    return None


def stored_geometry(a: dict[str, Any]) -> Geometry:
    """The Geometry of a stored (``meta["aipp"]``) AIPP."""
    sw, sh, cx, cy, cw, ch, t, b, left, r, c = a["geometry"]
    return Geometry(a["input_format"], sw, sh, cx, cy, cw, ch, (t, b, left, r), c)


def image_dims(om: Any, index: int, dims: dict[str, Any]) -> dict[str, Any]:
    """``dims`` (an input's ``{'name', 'dimCount', 'dims'}``) as aclmdlGetInputDims gives
    them: for an input with static AIPP the picture's [N, H, W, C] (the hiascend
    aclmdlGetInputDims page: consistent with the input image; V2 multiplies H and sets C by
    the format so that the product is the size), else unchanged."""
    if dims.get("name") is None or index < 0:
        return dims
    a = model_aipp(om, index)
    if a is None or a["aipp_mode"] != "static":
        return dims
    n = dims["dims"][0]
    out = stored_geometry(a).image_dims(n)
    return {"name": dims["name"], "dimCount": len(out), "dims": out}


def input_note(om: Any, index: int) -> str:
    """'' or, for an input an AIPP converts, what it takes: '; input 0 is the raw
    YUV420SP_U8 224x224 picture the model's AIPP converts, not the network's float tensor'
    (for the messages about a wrongly sized input buffer)."""
    a = model_aipp(om, index)
    if a is None:
        return ""
    if a["aipp_mode"] == "dynamic":
        return (f"; input {index} holds the pictures the model's dynamic AIPP converts (up to "
                f"max_src_image_size = {a['max_src_image_size']} bytes)")
    g = stored_geometry(a)
    size = f"{g.src_w}x{g.src_h}" if g.src_w > 0 else "gear-sized (h x w of the gear set)"
    return (f"; input {index} is the raw {g.fmt} {size} picture the model's AIPP "
            "converts (atc --insert_op_conf), not the network's float tensor: copy the "
            "picture's bytes")


def first_aipp_info(om: Any, index: int, batch_gears: int) -> dict[str, Any]:
    """The aclAippInfo dict of input ``index`` (``acl.mdl.get_first_aipp_info``);
    AclError 145015 (ACL_ERROR_GE_AIPP_NOT_EXIST) when the input has no AIPP, 145000
    when ``index`` names no input (GE GetAIPPInfo)."""
    if not 0 <= index < len(om.acl_inputs):
        raise AclError(ErrorCode.ACL_ERROR_GE_PARAM_INVALID,
                       f"input index {index} is invalid (the model has "
                       f"{len(om.acl_inputs)} inputs)")
    a = model_aipp(om, index)
    if a is None:
        raise AclError(ErrorCode.ACL_ERROR_GE_AIPP_NOT_EXIST,
                       f"input {index} is not configured with AIPP "
                       "(ACL_ERROR_GE_AIPP_NOT_EXIST)")
    g = stored_geometry(a)
    src = a["src_input"]
    info: dict[str, Any] = {
        "inputFormat": INPUT_FORMATS.get(a["input_format"], 0),
        "srcImageSizeW": max(g.src_w, 0), "srcImageSizeH": max(g.src_h, 0),
        "cropSwitch": int(a["crop"]),
        "loadStartPosW": a["load_start_pos_w"], "loadStartPosH": a["load_start_pos_h"],
        "cropSizeW": a["crop_size_w"], "cropSizeH": a["crop_size_h"],
        "resizeSwitch": int(a["resize"]), "resizeOutputW": a["resize_output_w"],
        "resizeOutputH": a["resize_output_h"], "paddingSwitch": int(a["padding"]),
        "leftPaddingSize": a["left_padding_size"], "rightPaddingSize": a["right_padding_size"],
        "topPaddingSize": a["top_padding_size"], "bottomPaddingSize": a["bottom_padding_size"],
        "cscSwitch": int(a["csc_switch"]), "rbuvSwapSwitch": int(a["rbuv_swap_switch"]),
        "axSwapSwitch": int(a["ax_swap_switch"]), "singleLineMode": int(a["single_line_mode"]),
    }
    for r in range(3):
        for c in range(3):
            info[f"matrixR{r}C{c}"] = a[f"matrix_r{r}c{c}"]
    for i in range(3):
        info[f"outputBias{i}"] = a[f"output_bias_{i}"]
        info[f"inputBias{i}"] = a[f"input_bias_{i}"]
    for i in range(4):
        info[f"meanChn{i}"] = a[f"mean_chn_{i}"]
        info[f"minChn{i}"] = a[f"min_chn_{i}"]
        info[f"varReciChn{i}"] = a[f"var_reci_chn_{i}"]
    from .opdefs import NUMPY_TO_ACL
    info["srcFormat"] = src["format"]
    info["srcDatatype"] = NUMPY_TO_ACL.get(src["dtype"], -1)
    info["srcDimNum"] = len(src["shape"])
    gears = list(om.dynamic_batch) or [src["shape"][0]]
    info["shapeCount"] = len(gears) if om.dynamic_batch else 1
    out_dims = []
    for n in gears[:info["shapeCount"]]:
        src_dims = [n if d == -1 else d for d in src["shape"]]
        aipp_out = ([n, g.channels, g.out_h, g.out_w] if a["aipp_mode"] == "static"
                    else src_dims)
        out_dims.append({
            "srcDims": {"name": src["name"], "dimCount": len(src_dims), "dims": src_dims},
            "srcSize": int(np.prod(src_dims)) * np.dtype(src["dtype"]).itemsize,
            "aippOutdims": {"name": src["name"], "dimCount": 4, "dims": aipp_out},
            "aippOutSize": int(np.prod(aipp_out)) * 2,  # float16
        })
    info["outDims"] = out_dims
    return info


# ------------------------------------------------------------------------ dynamic AIPP set
INVALID_PARAM = ErrorCode.ACL_ERROR_INVALID_PARAM


@dataclass
class BatchParams:
    """One batch's dynamic AIPP parameters (kAippDynamicBatchPara)."""

    crop: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # switch, x, y, w, h
    scf: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # switch, in w, in h, out w, out h
    padding: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # switch, top, bottom, l, r
    mean: tuple[int, int, int, int] = (0, 0, 0, 0)
    min: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    var_reci: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)


class DynamicAipp:
    """An aclmdlAIPP: the dynamic AIPP parameter set of ``acl.mdl.create_aipp(batch)``."""

    def __init__(self, batch: int) -> None:
        self.oid = -1
        self.handle = 0
        self.alive = True
        self.batch = batch
        self.input_format = 0
        self.csc: tuple[int, ...] = (0,) * 16  # switch, 9 matrix, 3 out bias, 3 in bias
        self.rbuv_swap = 0
        self.ax_swap = 0
        self.src_size = (0, 0)
        self.batches = [BatchParams() for _ in range(batch)]

    def data_size(self) -> int:
        """Bytes of the parameter buffer these parameters fill."""
        return data_size(self.batch)


#: the largest batch count create_aipp accepts: real ACL sizes a vector by it and gets
#: NULL (bad_alloc) for absurd counts; the emulator stops well before memory runs out
MAX_AIPP_BATCH = 1 << 16


def data_size(batch: int) -> int:
    """aclmdlGetAippDataSize: 64 + 96 x batch (100000 for batch 0, or when the size does
    not fit in size_t: ACL_CHECK_ASSIGN_SIZET_MULTI)."""
    if batch <= 0:
        raise AclError(INVALID_PARAM, "batch size must be positive")
    size = DYNAMIC_HEAD_BYTES + DYNAMIC_BATCH_BYTES * batch
    if size >= 1 << 64:
        raise AclError(INVALID_PARAM, f"the AIPP data size of batch {batch} overflows size_t")
    return size


def _range(name: str, value: float, lo: float, hi: float) -> None:
    if not lo <= value <= hi:
        raise AclError(INVALID_PARAM, f"{name} is {value}, it must be in [{lo}, {hi}]")


def _switch(name: str, value: int) -> None:
    if value not in (0, 1):
        raise AclError(INVALID_PARAM, f"{name} is {value}: only 0 and 1 are supported")


def _batch(p: DynamicAipp, index: int) -> BatchParams:
    if not 0 <= index < len(p.batches):
        raise AclError(INVALID_PARAM, f"batch_index ({index}) is greater than or equal to "
                                      f"batch_number ({len(p.batches)})")
    return p.batches[index]


def set_input_format(p: DynamicAipp, fmt: int) -> None:
    """aclmdlSetAIPPInputFormat: one of the aclAippInputFormat values."""
    if fmt not in FORMAT_NAMES:
        raise AclError(INVALID_PARAM, f"unsupported inputFormat[{fmt}]")
    p.input_format = fmt


def set_csc(p: DynamicAipp, switch: int, values: tuple[int, ...]) -> None:
    """aclmdlSetAIPPCscParams: switch, 9 matrix values, 3 output and 3 input biases."""
    _switch("cscSwitch", switch)
    if switch == 0:
        p.csc = (0, *p.csc[1:])
        return
    for i, v in enumerate(values[:9]):
        _range(f"cscMatrixR{i // 3}C{i % 3}", v, -32677, 32676)
    for i, v in enumerate(values[9:]):
        _range(("cscOutputBiasR" if i < 3 else "cscInputBiasR") + str(i % 3), v, 0, 255)
    p.csc = (switch, *values)


def set_swap(p: DynamicAipp, which: str, switch: int) -> None:
    """aclmdlSetAIPPRbuvSwapSwitch / aclmdlSetAIPPAxSwapSwitch."""
    _switch(which, switch)
    if which == "rbuvSwapSwitch":
        p.rbuv_swap = switch
    else:
        p.ax_swap = switch


def set_src_size(p: DynamicAipp, w: int, h: int) -> None:
    """aclmdlSetAIPPSrcImageSize: width 2..4096, height 1..4096."""
    _range("srcImageSizeW", w, 2, 4096)
    _range("srcImageSizeH", h, 1, 4096)
    p.src_size = (w, h)


def set_window(p: DynamicAipp, kind: str, switch: int, a: int, b: int, c: int, d: int,
               index: int) -> None:
    """aclmdlSetAIPPCropParams / PaddingParams / ScfParams of batch ``index``."""
    bp = _batch(p, index)
    _switch(f"{kind}Switch", switch)
    if kind == "crop":
        if switch:
            _range("cropStartPosW", a, 0, 4095)
            _range("cropStartPosH", b, 0, 4095)
            _range("cropSizeW", c, 1, 4096)
            _range("cropSizeH", d, 1, 4096)
        bp.crop = (switch, a, b, c, d) if switch else (0, *bp.crop[1:])
    elif kind == "padding":
        if switch:
            for n, v in (("paddingSizeTop", a), ("paddingSizeBottom", b),
                         ("paddingSizeLeft", c), ("paddingSizeRight", d)):
                _range(n, v, 0, 32)
        bp.padding = (switch, a, b, c, d) if switch else (0, *bp.padding[1:])
    else:
        if switch:
            _range("scfInputSizeW", a, 16, 4096)
            _range("scfInputSizeH", b, 16, 4096)
            _range("scfOutputSizeW", c, 16, 1920)
            _range("scfOutputSizeH", d, 16, 4096)
        bp.scf = (switch, a, b, c, d) if switch else (0, *bp.scf[1:])


def set_dtc(p: DynamicAipp, kind: str, values: tuple[float, float, float, float],
            index: int) -> None:
    """aclmdlSetAIPPDtcPixelMean / DtcPixelMin / PixelVarReci of batch ``index``."""
    bp = _batch(p, index)
    if kind == "mean":
        for i, v in enumerate(values):
            _range(f"dtcPixelMeanChn{i}", v, 0, 255)
        bp.mean = tuple(int(v) for v in values)  # type: ignore[assignment]
    elif kind == "min":
        for i, v in enumerate(values):
            _range(f"dtcPixelMinChn{i}", v, 0.0, 255.0)
        bp.min = tuple(float(v) for v in values)  # type: ignore[assignment]
    else:
        for i, v in enumerate(values):
            _range(f"dtcPixelVarReciChn{i}", v, -65504.0, 65504.0)
        bp.var_reci = tuple(float(v) for v in values)  # type: ignore[assignment]


def aipp_type(om: Any, index: int) -> tuple[int, int]:
    """aclmdlGetAippType: ``(type, dynamic_attached_data_index)`` of input ``index``;
    AclError 145000 (GE PARAM_INVALID) when ``index`` names no input."""
    if not 0 <= index < len(om.acl_inputs):
        raise AclError(ErrorCode.ACL_ERROR_GE_PARAM_INVALID,
                       f"input index {index} is invalid (the model has "
                       f"{len(om.acl_inputs)} inputs)")
    names = [d.name for d in om.acl_inputs]
    if names[index] == DYNAMIC_AIPP_NAME:
        return DYNAMIC_AIPP_NODE, INVALID_NODE_INDEX
    a = model_aipp(om, index)
    if a is None:
        return DATA_WITHOUT_AIPP, INVALID_NODE_INDEX
    if a["aipp_mode"] == "dynamic":
        return DATA_WITH_DYNAMIC_AIPP, names.index(DYNAMIC_AIPP_NAME)
    return DATA_WITH_STATIC_AIPP, INVALID_NODE_INDEX


# ------------------------------------------------------------------------ dynamic parameters
#: the parameter buffer's layout (kAippDynamicPara / kAippDynamicBatchPara, dynamic_aipp.h):
#: a 64-byte head (format, csc/rbuv/ax switches, batch count, source size, the 9 matrix
#: values, output and input biases) and 96 bytes per batch (crop/scf/padding switches and
#: sizes, means, then min and var_reci as float16 bits)
_HEAD = struct.Struct("<Bbbbb3xii9h6x3B3B2x16x")
_BATCH = struct.Struct("<bbbb4x12i4h4H4H16x")
assert _HEAD.size == DYNAMIC_HEAD_BYTES and _BATCH.size == DYNAMIC_BATCH_BYTES


def _f16_bits(v: float) -> int:
    return int(np.array(v, np.float16).view(np.uint16))


def _f16(bits: int) -> float:
    return float(np.array(bits, np.uint16).view(np.float16))


def encode_params(p: DynamicAipp) -> bytes:
    """The bytes ``set_input_aipp`` writes into the ``ascend_dynamic_aipp_data`` buffer."""
    csc = p.csc
    head = _HEAD.pack(p.input_format, csc[0], p.rbuv_swap, p.ax_swap, min(p.batch, 127),
                      p.src_size[0], p.src_size[1], *csc[1:10], *csc[10:13], *csc[13:16])
    body = b"".join(_BATCH.pack(b.crop[0], b.scf[0], b.padding[0], 0, *b.crop[1:],
                                *b.scf[1:], *b.padding[1:], *b.mean,
                                *(_f16_bits(v) for v in b.min),
                                *(_f16_bits(v) for v in b.var_reci)) for b in p.batches)
    return head + body


def decode_params(raw: bytes, n: int) -> DynamicAipp:
    """The DynamicAipp of a parameter buffer (``encode_params``); OpError when it holds no
    valid parameters (set_input_aipp was not called)."""
    p = DynamicAipp(n)
    fmt, sw, rbuv, ax, _, w, h, *rest = _HEAD.unpack_from(raw, 0)
    if fmt not in FORMAT_NAMES or w <= 0 or h <= 0:
        raise OpError(f"{OP_TYPE}: the {DYNAMIC_AIPP_NAME} input holds no dynamic AIPP "
                      "parameters: call acl.mdl.set_input_aipp before executing",
                      ErrorCode.ACL_ERROR_INVALID_PARAM)
    p.input_format, p.rbuv_swap, p.ax_swap, p.src_size = fmt, rbuv, ax, (w, h)
    p.csc = (sw, *rest)
    for i in range(n):
        v = _BATCH.unpack_from(raw, DYNAMIC_HEAD_BYTES + i * DYNAMIC_BATCH_BYTES)
        crop_sw, scf_sw, pad_sw = v[0], v[1], v[2]
        ints = v[4:16]
        b = p.batches[i]
        b.crop = (crop_sw, *ints[0:4])
        b.scf = (scf_sw, *ints[4:8])
        b.padding = (pad_sw, *ints[8:12])
        b.mean = tuple(v[16:20])
        b.min = tuple(_f16(x) for x in v[20:24])  # type: ignore[assignment]
        b.var_reci = tuple(_f16(x) for x in v[24:28])  # type: ignore[assignment]
    return p


def picture_bytes(fmt: str, w: int, h: int) -> int:
    """Bytes of one picture of ``fmt`` (the ATC input-size table)."""
    if fmt == "YUV420SP_U8":
        return w * h * 3 // 2
    return w * h * _STORED_CHANNELS[fmt]


def batch_attrs(p: DynamicAipp, i: int, c: int, h: int, w: int) -> dict[str, Any]:
    """The ``convert`` attributes of batch ``i`` of dynamic parameters for a network input
    of C x H x W; AclError 100000 (as ACL's AippParamsCheck) when they cannot give it."""
    fmt = FORMAT_NAMES.get(p.input_format, "")
    if fmt not in EMULATED_FORMATS:
        raise AclError(INVALID_PARAM, f"input format {p.input_format} ({fmt or 'unset'}) is "
                                      "not emulated: set one of " + ", ".join(
                                          f"{k} ({INPUT_FORMATS[k]})" for k in EMULATED_FORMATS))
    sw, sh = p.src_size
    if sw <= 0 or sh <= 0:
        raise AclError(INVALID_PARAM, "the source image size is not set: "
                                      "acl.mdl.set_aipp_src_image_size is required")
    b = p.batches[i]
    if b.scf[0]:
        raise AclError(INVALID_PARAM, "resize (set_aipp_scf_params) is not emulated")
    cx, cy, cw, ch = b.crop[1:] if b.crop[0] else (0, 0, sw, sh)
    top, bottom, left, right = b.padding[1:] if b.padding[0] else (0, 0, 0, 0)
    if fmt == "YUV420SP_U8" and any(x % 2 for x in (sw, sh, cx, cy, cw, ch)):
        raise AclError(INVALID_PARAM, "for YUV420SP_U8 the source size, crop start and crop "
                                      "size must be even")
    if cx + cw > sw or cy + ch > sh:
        raise AclError(INVALID_PARAM, f"batch {i}: the crop window ({cx}, {cy}) + {cw}x{ch} "
                                      f"does not fit in the {sw}x{sh} source picture")
    out_h, out_w = ch + top + bottom, cw + left + right
    if (out_h, out_w) != (h, w):
        raise AclError(INVALID_PARAM, f"batch {i}: the AIPP output is {out_w}x{out_h} but the "
                                      f"model input is {w}x{h}: they must be equal")
    want_c = 1 if fmt == "YUV400_U8" else 3
    if want_c != c:
        raise AclError(INVALID_PARAM, f"input format {fmt} gives {want_c} channel(s), the "
                                      f"model input has {c}")
    csc = p.csc
    a: dict[str, Any] = {
        "input_format": fmt, "src_w": sw, "src_h": sh, "crop_x": cx, "crop_y": cy,
        "crop_w": cw, "crop_h": ch, "pad": [top, bottom, left, right], "padding_value": 0.0,
        "rbuv_swap_switch": p.rbuv_swap, "ax_swap_switch": p.ax_swap, "csc_switch": csc[0],
    }
    for k in range(9):
        a[f"matrix_r{k // 3}c{k % 3}"] = csc[1 + k]
    for k in range(3):
        a[f"output_bias_{k}"] = csc[10 + k]
        a[f"input_bias_{k}"] = csc[13 + k]
    for k in range(4):
        a[f"mean_chn_{k}"] = b.mean[k]
        a[f"min_chn_{k}"] = b.min[k]
        a[f"var_reci_chn_{k}"] = b.var_reci[k]
    return a


def check_dynamic(om: Any, index: int, p: DynamicAipp) -> bytes:
    """ACL GetAndCheckAippParams for the dynamic AIPP input ``index`` of ``om``: the pictures
    must fit in max_src_image_size, the parameter set's batch count must be the model's
    batch and every batch must give the network input (100000 otherwise). Returns the
    parameter bytes to write."""
    a = next((x for x in om.meta.get("aipp", []) or []
              if x.get("aipp_mode") == "dynamic"), None)
    assert a is not None
    n, c, h, w = a["src_input"]["shape"]
    if p.batch != n:
        raise AclError(INVALID_PARAM, f"the dynamic aipp batchSize[{p.batch}] is not equal to "
                                      f"model origin batch[{n}]")
    fmt = FORMAT_NAMES.get(p.input_format, "")
    if fmt in EMULATED_FORMATS and p.src_size[0] > 0:
        total = n * picture_bytes(fmt, *p.src_size)
        if total > a["max_src_image_size"]:
            raise AclError(INVALID_PARAM, f"the dynamic aipp size[{total}] is bigger than "
                                          f"max_src_image_size[{a['max_src_image_size']}]")
    for i in range(n):
        batch_attrs(p, i, c, h, w)
    return encode_params(p)


def set_input(s: Session, th: HostThread, cid: int, mid: int, ds_handle: int, index: int,
              p: DynamicAipp) -> None:
    """aclmdlSetInputAIPP after its null checks: check ``index`` (CheckAippDataIndex) and the
    parameters (GetAndCheckAippParams), then write them into the dataset's buffer at
    ``index`` with a synchronous host-to-device copy (GE SetDynamicAippData: 145012 when the
    buffer is smaller than the parameters)."""
    from . import models as M

    lm = M.model(s, mid)
    om = lm.om
    kind, _ = aipp_type(om, index)
    if kind == DATA_WITHOUT_AIPP:
        raise AclError(INVALID_PARAM, f"model {mid} is not a dynamic AIPP model: it has no "
                                      f"{DYNAMIC_AIPP_NAME} input (convert it with aipp_mode: "
                                      "dynamic)")
    if kind != DYNAMIC_AIPP_NODE:
        raise AclError(INVALID_PARAM, f"index {index} entered by the user is not the dynamic "
                                      f"AIPP data index: pass the index of {DYNAMIC_AIPP_NAME} "
                                      "(acl.mdl.get_input_index_by_name)")
    payload = check_dynamic(om, index, p)
    ds = M.dataset(s, ds_handle)
    if not 0 <= index < len(ds.buffers):
        raise AclError(INVALID_PARAM, f"failed to get data buffer by index[{index}] (the "
                                      f"dataset has {len(ds.buffers)})")
    b = buffers.lookup(s, ds.buffers[index])
    if b.addr == 0:
        raise AclError(INVALID_PARAM, f"failed to get addr by index[{index}]")
    if b.size < len(payload):
        raise AclError(ErrorCode.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
                       f"input dynamic aipp param len [{len(payload)}] is larger than "
                       f"aipp_data size [{b.size}] (allocate "
                       "acl.mdl.get_aipp_data_size(batch) bytes)")
    M.write_input_params(s, th, cid, b.addr, payload, f"the {DYNAMIC_AIPP_NAME} buffer",
                         f"dynamic AIPP parameters -> {DYNAMIC_AIPP_NAME}")
    a = next(x for x in om.meta["aipp"] if x.get("aipp_mode") == "dynamic")
    fmt = FORMAT_NAMES[p.input_format]
    ds.aipp_reads[int(a["related_input_rank"])] = p.batch * picture_bytes(fmt, *p.src_size)
