"""``acl-lab atc``: an emulated ATC (offline model converter) for ONNX models.

Usage, as with the real tool (reference section 9.3)::

    acl-lab atc --model=resnet50.onnx --framework=5 --output=resnet50 \\
        --input_shape="actual_input_1:1,3,224,224" --soc_version=Ascend310

The ONNX graph is mapped onto the emulator's operators (``acl_lab.runtime.opdefs``), all
shapes are inferred with the operators' ``infer`` at conversion time, and the result is
written as ``<output>.om`` (the emulated container of ``acl_lab.runtime.om``). Messages
and exit codes follow ATC: "ATC start working now, please wait for a moment." first, then
"ATC run success, welcome to the next use." and status 0, or "ATC run failed, ..." with
E-coded messages and status 255. Failure messages go to stderr.

What is emulated and what is not:

* only ``--framework=5`` (ONNX); Caffe (0), MindSpore (1) and TensorFlow (3) are not;
* only ``--mode=0`` (build a model); ``--out_nodes`` is refused with a clear message;
* ``--insert_op_conf=aipp.cfg`` (AIPP, ``acl_lab.runtime.aipp``): with static AIPP the
  converted input becomes the raw uint8 picture (NHWC, the size ATC gives it, e.g. w*h*3/2
  for YUV420SP_U8) and the model converts it itself; with dynamic AIPP the input holds
  max_src_image_size bytes and the model gets the ``ascend_dynamic_aipp_data`` input for
  ``acl.mdl.set_input_aipp``; static AIPP over ``--dynamic_image_size`` gears (crop and
  padding off, ``src_image_size_w/h`` 0) takes the gear's h x w picture; a configuration
  ATC refuses fails with E10052;
* ``--singleop=JSON --output=DIR`` checks each op of the list against the emulated op
  registry and writes one ``.om`` per op (acl_lab's own JSON, not a real kernel) into DIR,
  for ``acl.op.set_model_dir``; the emulated ops run with or without it;
* ``--precision_mode`` and ``--log`` are checked and recorded but the emulator always
  computes in the model's own dtypes (real ATC's default ``force_fp16`` runs convolutions
  and matrix products in fp16 on the NPU, so real results differ slightly);
* dynamic shapes as gears: ``-1`` dims in ``--input_shape`` with one of
  ``--dynamic_batch_size`` (-1 only at dim 0), ``--dynamic_image_size`` (-1 exactly at H and
  W of an NCHW input) or ``--dynamic_dims`` (any -1 dims, ``--input_format=ND``), with ATC's
  checks and E-codes (GE option_utils.cc and multi_batch_options.cc: one of the three at a
  time, 2 to 100 distinct gears of positive values, ...). As with real ATC the model then
  has one more input, ``ascend_mbatch_shape_data`` (int64 ``[k]``), after the source
  model's inputs, which carries the gear chosen with ``acl.mdl.set_dynamic_batch_size``,
  ``set_dynamic_hw_size`` or ``set_input_dynamic_dims``. Operators whose attributes would
  depend on the image size (SAME padding with a stride, ceil-mode pooling, explicit pooling
  pads) are refused for image-size and dims gears; a Reshape to a constant shape that does
  not fit every gear fails the conversion.

Supported ONNX ops: see :data:`SUPPORTED_OPS`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._extras import MissingExtra
from .runtime.om import (
    ACL_FORMAT_NCHW,
    ACL_FORMAT_ND,
    KIND_BATCH,
    KIND_DIMS,
    KIND_HW,
    SHAPE_DATA_NAME,
    GraphBuilder,
    ModelFileError,
    Node,
    OmModel,
    dump_om_bytes,
)
from .runtime.opdefs import NUMPY_TO_ACL, OpError, TensorSpec, get_op

if TYPE_CHECKING:  # pragma: no cover
    import onnx

START = "ATC start working now, please wait for a moment."
SUCCESS = "ATC run success, welcome to the next use."
FAILED = "ATC run failed, Please check the detail log, Try 'atc --help' for more information"

USAGE = """\
usage: acl-lab atc --model=<model.onnx> --framework=5 --output=<name> --soc_version=<soc> [options]

acl_lab's emulated ATC: converts an ONNX model to an emulated offline model <name>.om.

Required:
  --model             Path of the source model (.onnx).
  --framework         Framework type: 5 (ONNX). 0 (Caffe), 1 (MindSpore) and 3 (TensorFlow)
                      exist in real ATC but are not emulated.
  --output            Path and file-name prefix of the output; ".om" is appended.
  --soc_version       Target chip, e.g. Ascend310, Ascend310P3, Ascend910B1.

Single operators (instead of --model/--framework):
  --singleop          A JSON list of ops ("op", "input_desc", "output_desc", "attr"); with
                      --output=DIR each op becomes DIR/<n>_<op>_<types, formats, dims>.om
                      for acl.op.set_model_dir(DIR).

Options:
  --input_shape       "name:d0,d1,...;name2:d0,..." fixes input shapes (quote it in the
                      shell). -1 marks a dynamic dim (needs one of the three gear flags).
  --dynamic_batch_size  "1,2,4,8": batch gears (-1 at dim 0 only). The model gets one more
                      input, ascend_mbatch_shape_data (int64 [1]), for the batch that
                      acl.mdl.set_dynamic_batch_size chooses.
  --dynamic_image_size  "224,224;448,448": image-size gears (height,width; -1 at H and W of
                      an NCHW input); acl.mdl.set_dynamic_hw_size chooses one.
  --dynamic_dims      "1,224;4,224": one value per -1 of --input_shape, per gear (needs
                      --input_format=ND); acl.mdl.set_input_dynamic_dims chooses one.
                      Only one gear flag at a time, 2 to 100 gears.
  --input_format      NCHW (default), NCDHW or ND.
  --output_type       FP32, FP16, UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64,
                      DOUBLE: the data type of every network output.
  --precision_mode    force_fp16 (default), force_fp32, cube_fp16in_fp32out,
                      allow_fp32_to_fp16, must_keep_origin_dtype, allow_mix_precision,
                      allow_mix_precision_fp16, allow_mix_precision_bf16, allow_fp32_to_bf16
                      (recorded only: the emulator computes in the model's dtypes).
  --precision_mode_v2 fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16
                      (recorded only; not together with --precision_mode).
  --insert_op_conf    An AIPP configuration (aipp_op { aipp_mode: static input_format: ...
                      }): the input becomes the raw picture and the model crops, converts
                      colours and normalises it (static; with aipp_mode: dynamic the
                      parameters come from acl.mdl.set_input_aipp).
  --mode              0 (default): build an .om. Other modes are not emulated.
  --log               debug, info, warning, error, null (default).
  --weight            Caffe weights; ignored with a warning for ONNX.
  --help, --h         Print this help and exit.
"""

_REQUIRED_HINT = ("Another possible reason is that the values of some parameters are not "
                  "enclosed by quotation marks (\"\").")

_FLAGS = {"model", "framework", "output", "soc_version", "input_shape", "input_format",
          "output_type", "dynamic_batch_size", "dynamic_image_size", "dynamic_dims", "log",
          "precision_mode", "precision_mode_v2",
          "mode", "weight", "singleop", "insert_op_conf"}
#: real flags accepted with a warning: they tune code generation, which is not emulated
_IGNORED = {"host_env_os", "host_env_cpu", "op_select_implmode", "optypelist_for_implmode",
            "buffer_optimize", "enable_small_channel", "fusion_switch_file",
            "display_model_info", "op_debug_level", "core_type", "virtual_type",
            "modify_mixlist", "keep_dtype", "customize_dtypes", "status_check",
            "disable_reuse_memory", "op_precision_mode", "auto_tune_mode", "sparsity",
            "external_weight", "compression_optimize_conf", "allow_hf32", "oo_level"}
#: real flags whose feature the emulator does not have
_NOT_EMULATED = {"out_nodes", "input_fp16_nodes",
                 "om", "json", "input_shape_range",
                 "is_input_adjust_hw_layout", "is_output_adjust_hw_layout", "dump_mode",
                 "check_report", "input_hint_shape", "is_weight_clip", "enable_scope_fusion_passes"}

_FORMATS = {"NCHW": ACL_FORMAT_NCHW, "ND": ACL_FORMAT_ND, "NCDHW": 30}
_OUTPUT_TYPES = {"FP32": "float32", "FP16": "float16", "UINT8": "uint8", "INT8": "int8",
                 "UINT16": "uint16", "INT16": "int16", "UINT32": "uint32", "INT32": "int32",
                 "UINT64": "uint64", "INT64": "int64", "DOUBLE": "float64"}
_LOG_LEVELS = ("debug", "info", "warning", "error", "null")
_PRECISION = ("force_fp16", "force_fp32", "cube_fp16in_fp32out", "allow_fp32_to_fp16",
              "must_keep_origin_dtype", "allow_mix_precision", "allow_mix_precision_fp16",
              "allow_mix_precision_bf16", "allow_fp32_to_bf16")
_PRECISION_V2 = ("fp16", "origin", "cube_fp16in_fp32out", "mixed_float16", "mixed_bfloat16",
                 "cube_hif8", "mixed_hif8")


class AtcError(Exception):
    """A conversion failure; ``lines`` are printed after the "ATC run failed" line."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


def _e10001(value: str, flag: str, reason: str) -> str:
    return f"E10001: Value [{value}] for parameter [--{flag}] is invalid. Reason: {reason}"


def _e10054(flag: str) -> str:
    return f"E10054: The required parameter --{flag} for ATC is empty. {_REQUIRED_HINT}"


def _e10003(value: str, flag: str, reason: str) -> str:
    return f"E10003: Value [{value}] for parameter [--{flag}] is invalid. Reason: {reason}"


#: the gear flags, at most one at a time (GE option_utils.cc CheckDynamicInputParamValid)
_GEAR_FLAGS = ("dynamic_batch_size", "dynamic_image_size", "dynamic_dims")
#: how many gears a model may have (GE multi_batch_options.cc CheckDynamicParams:
#: kMinShapesCount 2, kMaxShapesCount 100)
MIN_GEARS, MAX_GEARS = 2, 100


# ------------------------------------------------------------------------- flags
def parse_flags(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """gflags-style parsing: ``--name=value``, ``--name value``, ``-name=value``.

    Returns (flags, warnings); raises AtcError for unknown flags, positional arguments and
    flags the emulator does not have. A repeated flag keeps its last value (as gflags).
    """
    flags: dict[str, str] = {}
    warnings: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if not tok.startswith("-") or tok in ("-", "--"):
            raise AtcError(f"ERROR: unexpected argument '{tok}': every ATC option is a "
                           "--name=value flag")
        body = tok.lstrip("-")
        if "=" in body:
            name, value = body.split("=", 1)
        else:
            name = body
            if name in ("help", "h"):
                value = "true"
            elif i < len(argv) and not argv[i].startswith("--"):
                value = argv[i]
                i += 1
            else:
                value = ""
        if name in ("help", "h"):
            flags["help"] = value
        elif name in _FLAGS:
            flags[name] = value
        elif name in _IGNORED:
            warnings.append(f"[WARNING] --{name} tunes code generation on a real NPU; the "
                            "emulator ignores it.")
        elif name in _NOT_EMULATED:
            raise AtcError(f"ERROR: --{name} is a real ATC option, but acl_lab's ATC does not "
                           "emulate it (only ONNX to .om conversion with --mode=0).")
        else:
            raise AtcError(f"ERROR: unknown command line flag '{name}'")
    return flags, warnings


def _parse_input_shape(text: str) -> dict[str, list[int]]:
    shapes: dict[str, list[int]] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        if ":" not in part:
            raise AtcError(_e10001(text, "input_shape", f"'{part}' has no ':'; the format is "
                                   "\"name:d0,d1,...;name2:...\""))
        name, dims_text = part.rsplit(":", 1)
        dims: list[int] = []
        for d in (x.strip() for x in dims_text.split(",") if x.strip()):
            if "~" in d:
                raise AtcError(_e10001(text, "input_shape", f"the range '{d}' (dynamic shape "
                                       "ranges) is not emulated; use -1 in dim 0 with "
                                       "--dynamic_batch_size"))
            try:
                v = int(d)
            except ValueError:
                raise AtcError(_e10001(text, "input_shape", f"'{d}' is not an integer")
                               ) from None
            if v < -1 or v == 0:
                raise AtcError(_e10001(text, "input_shape", f"dimension {v} of '{name}' must "
                                       "be positive (or -1 for a dynamic dim)"))
            dims.append(v)
        if name in shapes:
            raise AtcError(_e10001(text, "input_shape", f"input '{name}' is given twice"))
        shapes[name] = dims
    return shapes


def _check_gear_list(gears: list[list[int]]) -> None:
    """GE CheckDynamicParams: 2 to 100 gears (E10035, E10036), of one length (E10037), of
    values over 0 (E10038), none repeated (E10039)."""
    n = len(gears)
    if n < MIN_GEARS:
        raise AtcError(f"E10035: --dynamic_batch_size, --dynamic_image_size, or --dynamic_dims "
                       f"has {n} profiles, which is less than the minimum {MIN_GEARS}.")
    if n > MAX_GEARS:
        raise AtcError(f"E10036: --dynamic_batch_size, --dynamic_image_size, or --dynamic_dims "
                       f"has {n} profiles, which is greater than the maximum {MAX_GEARS}.")
    for g in gears:
        if len(g) != len(gears[0]):
            raise AtcError("E10037: The profiles configured in --dynamic_batch_size, "
                           "--dynamic_image_size, or --dynamic_dims have inconsistent "
                           f"dimension counts. A profile has {len(gears[0])} dimensions while "
                           f"another has {len(g)} dimensions.")
        for v in g:
            if v <= 0:
                raise AtcError(f"E10038: Dimension size {v} is invalid. The value must be "
                               "greater than 0.")
    if len({tuple(g) for g in gears}) != n:
        raise AtcError("E10039: --dynamic_batch_size, --dynamic_image_size, or --dynamic_dims "
                       "has duplicate profiles.")


def _parse_batches(text: str) -> list[int]:
    """``--dynamic_batch_size``: digits and commas only (E10003, GE
    CheckDynamicBatchSizeInputShapeValid), then the gear-list rules."""
    if any(not (c.isdigit() or c == ",") for c in text):
        raise AtcError(_e10003(text, "dynamic_batch_size",
                               "It can only contain digits and \",\"."))
    gears = [[int(d)] for d in text.split(",") if d]
    _check_gear_list(gears)
    return [g[0] for g in gears]


def _parse_sizes(text: str, flag: str) -> list[list[int]]:
    """``--dynamic_image_size`` / ``--dynamic_dims``: gears split by ';', values by ','.
    Image sizes may hold digits, ',', ' ' and ';' only (E10003) and have two values per gear
    (E10020, GE CheckDynamicImagesizeInputShapeValid); dims values must be digits (E10001,
    GE CheckAndParseDynamicDims). Then the gear-list rules."""
    text = text.rstrip(";")
    if flag == "dynamic_image_size":
        if any(not (c.isdigit() or c in ", ;") for c in text):
            raise AtcError(_e10003(text, flag, "It can only contain digits, \",\", \" \" and "
                                               "\";\"."))
    elif not text:
        raise AtcError(f"E10058: --{flag} cannot be empty.")
    gears: list[list[int]] = []
    for part in text.split(";"):
        values = [v.strip() for v in part.split(",")]
        if flag == "dynamic_image_size":
            values = [v for v in values if v]
            if len(values) != 2:
                raise AtcError(f"E10020: Value [{text}] for parameter --dynamic_image_size is "
                               "invalid. The value must be formatted as \"imagesize1_height,"
                               "imagesize1_width;imagesize2_height,imagesize2_width\": each "
                               "profile has two dimensions.")
        for v in values:
            if not v.isdigit():
                raise AtcError(_e10001(v, flag, "Dynamic dims must be a positive integer."))
        gears.append([int(v) for v in values])
    _check_gear_list(gears)
    return gears


# ------------------------------------------------------------------------- conversion
#: ONNX op type -> converter method name (domain "" unless noted in the method)
SUPPORTED_OPS: tuple[str, ...] = (
    "Add", "Sub", "Mul", "Div", "MatMul", "Gemm", "Relu", "Sigmoid", "Tanh", "Gelu",
    "Softmax", "LayerNormalization", "BatchNormalization", "Conv", "MaxPool", "AveragePool",
    "GlobalAveragePool", "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Concat",
    "ReduceSum", "ReduceMean", "Cast", "Identity", "Dropout", "Constant")


class _Converter:
    """Maps one ONNX graph onto OpDef nodes, tracking inferred specs as it goes."""

    def __init__(self, model: onnx.ModelProto, name: str, soc: str,
                 input_shape: dict[str, list[int]] | None, input_format: str | None,
                 output_type: str | None, batches: list[int], log: str,
                 image_sizes: list[list[int]] | None = None,
                 dims: list[list[int]] | None = None) -> None:
        self.onnx = model
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("",
                                                                                "ai.onnx")), 1)
        self.g = GraphBuilder(name, soc)
        self.g.dynamic_batch = list(batches)
        self.g.dynamic_hw = [list(g) for g in image_sizes or []]
        self.g.dynamic_dims = [list(g) for g in dims or []]
        self.batch = max(batches) if batches else None
        #: how the gears are named ("" static), and the gear the conversion infers shapes
        #: at (the largest batch, or the image size / dims gear with the largest product)
        self.kind = (KIND_BATCH if batches else KIND_HW if image_sizes
                     else KIND_DIMS if dims else "")
        named = self.g.dynamic_hw or self.g.dynamic_dims
        self.rep_gear = (max(named, key=lambda g: int(np.prod(g, dtype=np.int64)))
                         if named else [])
        self.input_shape = input_shape
        self.input_format = input_format
        self.output_type = output_type
        self.log = log
        self.specs: dict[str, TensorSpec] = {}
        self.t: dict[str, str] = {}  # ONNX tensor name -> our tensor name
        self.consts: dict[str, np.ndarray] = {}
        self.producer: dict[str, Node] = {}
        self.weight_source: dict[str, str] = {}  # our weight -> ONNX constant it came from
        self.consumers: dict[str, int] = {}
        self.graph_outputs = [o.name for o in self.graph.output]
        self.messages: list[str] = []

    # ---- helpers
    def debug(self, msg: str) -> None:
        if self.log in ("debug", "info"):
            self.messages.append(f"[INFO] {msg}")

    def const(self, name: str) -> np.ndarray | None:
        """The value of an ONNX tensor that is an initializer or a Constant output."""
        return self.consts.get(name) if name else None

    def inp(self, name: str, node: Any) -> str:
        """Our tensor for ONNX tensor ``name`` (constants become weights on first use)."""
        if name in self.t:
            return self.t[name]
        if name in self.consts:
            our = self.weight(name, self.consts[name])
            self.t[name] = our
            self.weight_source[our] = name
            return our
        raise AtcError(f"ERROR: node '{node.name}' ({node.op_type}) uses tensor '{name}', which "
                       "no earlier node produces (the graph is not topologically sorted or the "
                       "tensor comes from a subgraph)")

    def weight(self, base: str, array: np.ndarray) -> str:
        a = np.asarray(array)
        if a.dtype.name not in NUMPY_TO_ACL:
            raise AtcError(f"ERROR: constant '{base}' has data type {a.dtype}, which the "
                           "emulator does not support")
        our = self.g.add_weight(base, a)
        self.specs[our] = TensorSpec(a.dtype.name, tuple(int(s) for s in a.shape))
        return our

    def spec(self, our: str) -> TensorSpec:
        return self.specs[our]

    def emit(self, node: Any, op: str, inputs: list[str], attrs: dict[str, Any],
             outputs: list[str | None], suffix: str = "") -> list[str]:
        """Add one of our nodes for ONNX ``node``; ``outputs`` are ONNX names (None for an
        internal tensor). Infers the output specs and maps the ONNX names."""
        opdef = get_op(op)
        base = (node.name or node.op_type) + suffix
        names = [f"{base}#{k}" if o is None else o for k, o in enumerate(outputs)]
        in_specs = [self.specs[t] for t in inputs]
        consts = {i: self.g.weights[inputs[i]] for i in opdef.const_inputs
                  if i < len(inputs) and inputs[i] in self.g.weights}
        try:
            out_specs = opdef.infer(in_specs, {**opdef.defaults, **attrs, "__consts__": consts})
        except OpError as e:
            shapes = ", ".join(f"{s.dtype}{list(s.shape)}" for s in in_specs)
            raise AtcError(f"ERROR: ONNX node '{node.name}' ({node.op_type}), converted to "
                           f"{op}, rejects its inputs ({shapes}): {e.message}") from None
        outs = self.g.add_node(op, inputs, attrs, name=base, outputs=names)
        gnode = self.g.nodes[-1]
        for our, s, o in zip(outs, out_specs, outputs, strict=True):
            self.specs[our] = s
            self.producer[our] = gnode
            if o is not None:
                self.t[o] = our
        self.debug(f"{node.op_type} '{node.name}' -> {op}: "
                   + ", ".join(f"{self.specs[o].dtype}{list(self.specs[o].shape)}"
                               for o in outs))
        return outs

    def int64(self, node: Any, what: str, values: list[int]) -> str:
        return self.weight(f"{node.name or node.op_type}#{what}", np.asarray(values, np.int64))

    def keep_batch(self, in_shape: tuple[int, ...], target: list[int]) -> list[int]:
        """For a dynamic-batch model, keep dim 0 as -1 when it carries the batch."""
        if (self.batch is not None and in_shape and target and in_shape[0] == self.batch
                and target[0] == self.batch):
            return [-1, *target[1:]]
        return target

    # ---- inputs and outputs
    def add_inputs(self) -> None:
        from onnx import helper

        init_names = {i.name for i in self.graph.initializer}
        graph_inputs = [i for i in self.graph.input if i.name not in init_names]
        valid = [i.name for i in graph_inputs]
        if self.input_shape:
            for name in self.input_shape:
                if name not in valid:
                    raise AtcError(_e10001(name, "input_shape", f"the model has no input "
                                           f"'{name}'; its inputs are: {', '.join(valid)}"))
        for vi in graph_inputs:
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                raise AtcError(f"ERROR: input '{vi.name}' is not a tensor")
            try:
                dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)).name
            except Exception:
                dtype = f"ONNX type {tt.elem_type}"
            if dtype not in NUMPY_TO_ACL:
                raise AtcError(f"ERROR: input '{vi.name}' has data type {dtype}, which the "
                               "emulator does not support")
            model_dims: list[int | str] = []
            if tt.HasField("shape"):
                for d in tt.shape.dim:
                    model_dims.append(d.dim_value if d.HasField("dim_value") else
                                      (d.dim_param or "?"))
            if self.input_shape and vi.name in self.input_shape:
                dims = self.input_shape[vi.name]
                if tt.HasField("shape") and len(dims) != len(model_dims):
                    raise AtcError(_e10001(f"{vi.name}:{','.join(map(str, dims))}",
                                           "input_shape", f"input '{vi.name}' has "
                                           f"{len(model_dims)} dimensions {model_dims} in the "
                                           f"model, {len(dims)} were given"))
            else:
                if not tt.HasField("shape") or not all(isinstance(d, int) and d > 0
                                                       for d in model_dims):
                    raise AtcError(f"ERROR: input '{vi.name}' has the dynamic shape "
                                   f"{model_dims} in the model; fix it with --input_shape="
                                   f"\"{vi.name}:...\"")
                dims = [int(d) for d in model_dims]
            if self.input_format is not None:
                fmt = _FORMATS[self.input_format]
            else:
                fmt = ACL_FORMAT_NCHW if len(dims) == 4 else ACL_FORMAT_ND
            if -1 in dims:
                self._check_dynamic_input(vi.name, dims)
            rep = self._rep_shape(dims)  # before add_input: it counts earlier -1 dims
            our = self.g.add_input(vi.name, dtype, tuple(dims), fmt)
            self.t[vi.name] = our
            self.specs[our] = TensorSpec(dtype, rep, fmt)
        self._check_dynamic_inputs()

    def _check_dynamic_input(self, name: str, dims: list[int]) -> None:
        """ATC's rules for an input with -1 dims, by gear flag (GE option_utils.cc and
        multi_batch_options.cc): batch E10018 (-1 at dim 0 only); image size E10019 (a 4-D
        input with -1 at exactly H and W of NCHW); dims 1 to 4 dims per input."""
        text = ",".join(map(str, dims))
        if not self.kind:
            raise AtcError(_e10001(text, "input_shape",
                                   f"input '{name}' has -1 but --dynamic_batch_size is not set "
                                   "(nor --dynamic_image_size or --dynamic_dims; fully dynamic "
                                   "shapes are not emulated)"))
        if self.kind == KIND_BATCH and (dims[0] != -1 or -1 in dims[1:]):
            i = next(j for j, v in enumerate(dims) if v == -1 and j > 0)
            raise AtcError(f"E10018: Value [{dims[i]}] for shape [{i}] is invalid. When "
                           "[--dynamic_batch_size] is included, only batch size N can be -1 "
                           f"in [--input_shape] (input '{name}': {text}).")
        if self.kind == KIND_HW and (len(dims) != 4 or dims.count(-1) != 2
                                     or dims[2] != -1 or dims[3] != -1):
            raise AtcError("E10019: When [--dynamic_image_size] is included, only the height "
                           f"and width axes can be -1 in [--input_shape] (input '{name}': "
                           f"{text}; NCHW: H and W are dims 2 and 3).")
        if self.kind == KIND_DIMS and not 1 <= len(dims) <= 4:
            raise AtcError(_e10001(text, "input_shape", f"input '{name}' has {len(dims)} dims: "
                                   "each input needs 1 to 4 dims when --dynamic_dims is set"))

    def _rep_shape(self, dims: list[int]) -> tuple[int, ...]:
        """The shape an input with -1 dims has at the gear the conversion infers at."""
        if -1 not in dims:
            return tuple(dims)
        if self.kind == KIND_BATCH:
            return tuple(self.batch or 0 if d == -1 else d for d in dims)
        if self.kind == KIND_HW:
            h, w = self.rep_gear
            return (dims[0], dims[1], h, w)
        used = sum(d.shape.count(-1) for d in self.g.inputs)
        vals = iter(self.rep_gear[used:])
        return tuple(next(vals, 1) if d == -1 else d for d in dims)

    def _check_dynamic_inputs(self) -> None:
        """After all inputs: some input must have -1 (E10031 for batch, E10019 for image
        size, E10001 for dims); dims gears need one value per -1 (E10003); the shape-data
        input's name must be free."""
        if not self.kind:
            return
        n = sum(d.shape.count(-1) for d in self.g.inputs)
        if n == 0:
            if self.kind == KIND_BATCH:
                raise AtcError("E10031: --dynamic_batch_size is included, but none of the "
                               "nodes specified in --input_shape has a batch size equaling -1 "
                               "(no input has -1 in dim 0; set it with --input_shape, e.g. "
                               "\"x:-1,3,224,224\").")
            if self.kind == KIND_HW:
                raise AtcError("E10019: When [--dynamic_image_size] is included, only the "
                               "height and width axes can be -1 in [--input_shape] (no input "
                               "has -1: set H and W to -1, e.g. \"x:1,3,-1,-1\").")
            raise AtcError(_e10001("0", "input_shape's dynamic dim num", "At least one dim "
                                   "should be -1 when dynamic_dims is set."))
        if self.kind == KIND_DIMS and any(len(g) != n for g in self.g.dynamic_dims):
            text = ";".join(",".join(map(str, g)) for g in self.g.dynamic_dims)
            raise AtcError(_e10003(text, "dynamic_dims", "Each setting needs to be consistent "
                                   f"with the number of -1 in the input shape ({n})."))
        if any(d.name == SHAPE_DATA_NAME for d in self.g.inputs):
            flag = {KIND_BATCH: "dynamic_batch_size", KIND_HW: "dynamic_image_size",
                    KIND_DIMS: "dynamic_dims"}[self.kind]
            raise AtcError(_e10001(SHAPE_DATA_NAME, flag, f"the model has an input named "
                                   f"'{SHAPE_DATA_NAME}', the name of the gear input a dynamic "
                                   "model gets; rename that input"))

    def dynamic_outputs(self) -> None:
        """For image-size and dims gears: infer the graph at every gear and mark each output
        dim that differs between gears -1 (batch outputs get -1 in ``add_outputs``)."""
        if self.kind not in (KIND_HW, KIND_DIMS):
            return
        g = self.g
        probe = OmModel(g.name, list(g.inputs), list(g.outputs), list(g.nodes), dict(g.weights),
                        g.soc_version, [], {}, [list(x) for x in g.dynamic_hw],
                        [list(x) for x in g.dynamic_dims])
        per_gear = []
        for gear in probe.gears:
            try:
                specs = probe.tensor_specs(gear)
            except OpError as e:
                raise AtcError(f"ERROR: the converted graph does not fit gear {list(gear)}: "
                               f"{e.message} (its shapes were fixed at gear "
                               f"{list(self.rep_gear)}, e.g. by a Reshape to a constant "
                               "shape)") from None
            per_gear.append([specs[d.name].shape for d in g.outputs])
        for i, d in enumerate(g.outputs):
            shapes = [p[i] for p in per_gear]
            if len({len(x) for x in shapes}) != 1:
                raise AtcError(f"ERROR: output '{d.name}' has a different rank at different "
                               f"gears: {[list(x) for x in shapes]}")
            d.shape = tuple(v if all(x[j] == v for x in shapes) else -1
                            for j, v in enumerate(shapes[0]))

    def spatial_dynamic(self, node: Any, what: str) -> None:
        """Refuse ``what`` on an image-size or dims model: its attributes would depend on
        the gear (the emulator fixes them at conversion)."""
        if self.kind in (KIND_HW, KIND_DIMS):
            raise AtcError(f"ERROR: {node.op_type} '{node.name}' uses {what}, which depends on "
                           "the input size; with --dynamic_image_size or --dynamic_dims the "
                           "emulator converts it only where it does not")

    def add_outputs(self) -> None:
        """Declare the graph outputs (adding a Cast for --output_type) under their ONNX
        names."""
        named: set[str] = set()
        for name in self.graph_outputs:
            if name not in self.t:
                raise AtcError(f"ERROR: graph output '{name}' is not produced by any node")
            our = self.t[name]
            if self.output_type is not None:
                dst = _OUTPUT_TYPES[self.output_type]
                if self.specs[our].dtype != dst:
                    if our == name and our in self.producer:
                        our = self._rename(our, f"{name}#pre_cast")
                    our = self.emit(_FakeNode(f"{name}#cast", "Cast"), "Cast", [our],
                                    {"dst_type": NUMPY_TO_ACL[dst]}, [None])[0]
            if our != name and our in self.producer and our not in named:
                our = self._rename(our, name)
            named.add(our)
            spec = self.specs[our]
            shape = list(spec.shape)
            if self.batch is not None and shape and shape[0] == self.batch:
                shape[0] = -1
            self.g.add_output(our, spec.dtype, shape)

    def _rename(self, old: str, new: str) -> str:
        """Rename one of our node-produced tensors (and everything that refers to it)."""
        new = self.g.rename_tensor(old, new)
        self.specs[new] = self.specs.pop(old)
        self.producer[new] = self.producer.pop(old)
        for k, v in list(self.t.items()):
            if v == old:
                self.t[k] = new
        return new

    # ---- the graph
    def run(self) -> OmModel:
        from onnx import numpy_helper

        for init in self.graph.initializer:
            if any(d < 0 for d in init.dims):
                # a stored tensor has a fixed shape: ATC refuses negative dims (only an
                # input's shape may say -1, and only through --input_shape)
                raise AtcError(f"ERROR: initializer '{init.name}' has dims "
                               f"{list(init.dims)}: a constant's dims must not be negative")
            try:
                self.consts[init.name] = numpy_helper.to_array(init)
            except Exception as e:
                raise AtcError(f"ERROR: initializer '{init.name}' cannot be read: {e}"
                               ) from None
        for n in self.graph.node:
            for t in n.input:
                self.consumers[t] = self.consumers.get(t, 0) + 1
        for o in self.graph_outputs:
            self.consumers[o] = self.consumers.get(o, 0) + 1
        self.add_inputs()
        if not self.g.inputs:
            raise AtcError("ERROR: the graph has no inputs (every graph input is an "
                           "initializer): an offline model needs at least one input")
        for i, node in enumerate(self.graph.node):
            if not node.name:
                node.name = f"{node.op_type}_{i}"
            fn = self._handler(node)
            fn(node, list(node.input), _attrs(node))
        self.add_outputs()
        if not self.g.outputs:
            raise AtcError("ERROR: the graph has no outputs: an offline model needs at least "
                           "one output")
        self.dynamic_outputs()
        self.g.meta = {"producer": "acl_lab.atc", "framework": 5, "opset": self.opset}
        try:
            return self.g.build()
        except ModelFileError as e:
            raise AtcError(f"ERROR: the converted graph is inconsistent: {e.message}"
                           ) from None

    def _handler(self, node: Any) -> Callable[[Any, list[str], dict[str, Any]], None]:
        domain = node.domain or ""
        if node.op_type == "Gelu" and domain in ("", "ai.onnx", "com.microsoft"):
            return self.op_gelu
        if domain in ("", "ai.onnx") and node.op_type in SUPPORTED_OPS:
            fn: Callable[[Any, list[str], dict[str, Any]], None] = getattr(
                self, f"op_{node.op_type.lower()}")
            return fn
        where = f" (domain '{domain}')" if domain not in ("", "ai.onnx") else ""
        raise AtcError(f"ERROR: ONNX op type '{node.op_type}'{where} of node '{node.name}' is "
                       "not supported by acl_lab's emulated ATC. Supported op types: "
                       f"{', '.join(SUPPORTED_OPS)}.")

    def _no_extra_outputs(self, node: Any, keep: int) -> None:
        for o in list(node.output)[keep:]:
            if o and self.consumers.get(o, 0):
                raise AtcError(f"ERROR: output '{o}' of node '{node.name}' ({node.op_type}) is "
                               "used, but the emulator only produces the first "
                               f"{keep} output(s) of {node.op_type}")

    # ---- op handlers
    def _unary(self, op: str) -> Callable[[Any, list[str], dict[str, Any]], None]:
        def fn(node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
            self.emit(node, op, [self.inp(ins[0], node)], {}, [node.output[0]])
        return fn

    def op_relu(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._unary("Relu")(node, ins, attrs)

    def op_sigmoid(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._unary("Sigmoid")(node, ins, attrs)

    def op_tanh(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._unary("Tanh")(node, ins, attrs)

    def op_gelu(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        if attrs.get("approximate", "none") != "tanh":
            self.messages.append(f"[WARNING] Gelu node '{node.name}' asks for the exact (erf) "
                                 "form; CANN's Gelu, and the emulator's, is the tanh "
                                 "approximation: results differ by up to ~1e-3.")
        self.emit(node, "Gelu", [self.inp(ins[0], node)], {}, [node.output[0]])

    def _binary(self, node: Any, ins: list[str], op: str) -> None:
        self.emit(node, op, [self.inp(ins[0], node), self.inp(ins[1], node)], {},
                  [node.output[0]])

    def op_add(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._binary(node, ins, "Add")

    def op_sub(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._binary(node, ins, "Sub")

    def op_mul(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._binary(node, ins, "Mul")

    def op_div(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._binary(node, ins, "Div")

    def op_identity(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self.t[node.output[0]] = self.inp(ins[0], node)

    def op_dropout(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._no_extra_outputs(node, 1)
        self.op_identity(node, ins, attrs)

    def op_constant(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
            if key in attrs:
                v = attrs[key]
                arr = np.asarray(v, dtype=np.float32 if "float" in key else
                                 np.int64 if "int" in key else None)
                self.consts[node.output[0]] = arr
                return
        raise AtcError(f"ERROR: Constant node '{node.name}' has no supported value attribute "
                       "(value, value_float(s), value_int(s))")

    def op_matmul(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        a, b = self.inp(ins[0], node), self.inp(ins[1], node)
        if len(self.spec(a).shape) == 2 and len(self.spec(b).shape) == 2:
            self.emit(node, "MatMul", [a, b], {"transpose_x1": False, "transpose_x2": False},
                      [node.output[0]])
        else:
            self.emit(node, "BatchMatMul", [a, b], {"adj_x1": False, "adj_x2": False},
                      [node.output[0]])

    def op_gemm(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        alpha = float(attrs.get("alpha", 1.0))
        beta = float(attrs.get("beta", 1.0))
        ta, tb = bool(attrs.get("transA", 0)), bool(attrs.get("transB", 0))
        a = self.inp(ins[0], node)
        bval = self.const(ins[1])
        if alpha != 1.0 and bval is not None:
            b = self.weight(f"{node.name}#B", (bval * alpha).astype(bval.dtype))
            alpha = 1.0
        else:
            b = self.inp(ins[1], node)
        mm_attrs = {"transpose_x1": ta, "transpose_x2": tb}
        n_out = self.spec(b).shape[0 if tb else 1] if len(self.spec(b).shape) == 2 else -1
        cname = ins[2] if len(ins) > 2 and ins[2] else ""
        cval = self.const(cname)
        bias: str | None = None
        if cname and cval is not None and cval.size == n_out and alpha == 1.0 and (
                cval.ndim == 1 or (cval.ndim == 2 and cval.shape[0] == 1)):
            bias = self.weight(f"{node.name}#bias",
                               (cval.reshape(-1) * beta).astype(cval.dtype))
        final = alpha == 1.0 and (not cname or bias is not None)
        y = self.emit(node, "MatMul", [a, b] + ([bias] if bias else []), mm_attrs,
                      [node.output[0] if final else None])[0]
        if alpha != 1.0:
            s = self.weight(f"{node.name}#alpha", np.asarray(alpha, self.spec(y).dtype))
            last = not cname
            y = self.emit(node, "Mul", [y, s], {}, [node.output[0] if last else None],
                          "#alpha")[0]
        if cname and bias is None:
            if cval is not None:
                c = self.weight(f"{node.name}#C", (cval * beta).astype(cval.dtype))
            else:
                c = self.inp(cname, node)
                if beta != 1.0:
                    s = self.weight(f"{node.name}#beta", np.asarray(beta, self.spec(c).dtype))
                    c = self.emit(node, "Mul", [c, s], {}, [None], "#beta")[0]
            self.emit(node, "Add", [y, c], {}, [node.output[0]], "#C")

    def op_softmax(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        rank = len(self.spec(x).shape)
        if self.opset < 13:
            axis = int(attrs.get("axis", 1)) % rank
            axes = list(range(axis, rank))  # "flatten to 2-D from axis" semantics
        else:
            axes = [int(attrs.get("axis", -1))]
        self.emit(node, "SoftmaxV2", [x], {"axes": axes}, [node.output[0]])

    def op_layernormalization(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._no_extra_outputs(node, 1)
        x = self.inp(ins[0], node)
        rank = len(self.spec(x).shape)
        axis = int(attrs.get("axis", -1)) % rank
        xs = self.spec(x)
        norm_shape = tuple(xs.shape[axis:])

        def param(i: int, what: str) -> str:
            """Scale/bias as a [x.shape[axis:]] tensor (constants are broadcast)."""
            if i >= len(ins) or not ins[i]:
                return self.weight(f"{node.name}#{what}", np.zeros(norm_shape, xs.dtype))
            v = self.const(ins[i])
            if v is not None and v.shape != norm_shape:
                try:
                    b = np.broadcast_to(v, norm_shape).astype(v.dtype)
                except ValueError:
                    raise AtcError(f"ERROR: LayerNormalization '{node.name}': {what} shape "
                                   f"{list(v.shape)} does not broadcast to "
                                   f"{list(norm_shape)}") from None
                return self.weight(f"{node.name}#{what}", b)
            return self.inp(ins[i], node)

        scale, bias = param(1, "Scale"), param(2, "B")
        la = {"begin_norm_axis": axis, "begin_params_axis": axis,
              "epsilon": float(attrs.get("epsilon", 1e-5))}
        self.emit(node, "LayerNorm", [x, scale, bias], la, [node.output[0], None, None])

    def op_batchnormalization(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        if int(attrs.get("training_mode", 0)):
            raise AtcError(f"ERROR: BatchNormalization '{node.name}' is in training mode; "
                           "only inference graphs are converted")
        self._no_extra_outputs(node, 1)
        vals = [self.const(n) for n in ins[1:5]]
        if len(ins) < 5 or any(v is None for v in vals):
            raise AtcError(f"ERROR: BatchNormalization '{node.name}' needs constant scale, B, "
                           "mean and var")
        gamma, beta, mean, var = (np.asarray(v, np.float64) for v in vals)
        eps = float(attrs.get("epsilon", 1e-5))
        inv = gamma / np.sqrt(var + eps)
        shift = beta - mean * inv
        xo = ins[0]
        x = self.inp(xo, node)
        conv = self.producer.get(x)
        if (conv is not None and conv.op == "Conv2D" and self.consumers.get(xo, 0) == 1
                and xo not in self.graph_outputs and self._sole_use(conv.inputs[1])
                and (len(conv.inputs) < 3 or self._sole_use(conv.inputs[2]))):
            # fold into the convolution, as ATC's fusion passes do
            w = self.g.weights[conv.inputs[1]]
            wd = w.dtype
            nw = (w.astype(np.float64) * inv.reshape(-1, 1, 1, 1)).astype(wd)
            b_old = (self.g.weights[conv.inputs[2]].astype(np.float64) if len(conv.inputs) > 2
                     else np.zeros(w.shape[0]))
            nb = (b_old * inv + shift).astype(wd)
            nw.flags.writeable = False
            nb.flags.writeable = False
            self.g.weights[conv.inputs[1]] = nw
            if len(conv.inputs) > 2:
                self.g.weights[conv.inputs[2]] = nb
            else:
                conv.inputs.append(self.weight(f"{conv.name}#bias", nb))
            self.t[node.output[0]] = x
            return
        spec = self.spec(x)
        shape = (-1,) + (1,) * (len(spec.shape) - 2)
        sc = self.weight(f"{node.name}#scale", inv.reshape(shape).astype(spec.dtype))
        sh = self.weight(f"{node.name}#shift", shift.reshape(shape).astype(spec.dtype))
        y = self.emit(node, "Mul", [x, sc], {}, [None], "#mul")[0]
        self.emit(node, "Add", [y, sh], {}, [node.output[0]], "#add")

    def _sole_use(self, our: str) -> bool:
        """True when weight ``our`` comes from an ONNX constant used by one node only (so
        folding a batch norm into it changes nothing else)."""
        src = self.weight_source.get(our)
        return src is not None and self.consumers.get(src, 0) == 1

    def _conv_pads(self, node: Any, attrs: dict[str, Any], in_hw: tuple[int, int],
                   k: tuple[int, int], s: tuple[int, int],
                   d: tuple[int, int]) -> list[int]:
        """ONNX padding -> [top, bottom, left, right]."""
        auto = attrs.get("auto_pad", "NOTSET")
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            if any(v > 1 for v in s):
                self.spatial_dynamic(node, f"auto_pad {auto} with strides {list(s)}")
            out = []
            for i in range(2):
                o = -(-in_hw[i] // s[i])
                total = max((o - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in_hw[i], 0)
                small, big = total // 2, total - total // 2
                out += [small, big] if auto == "SAME_UPPER" else [big, small]
            return out
        if auto == "VALID":
            return [0, 0, 0, 0]
        if auto not in ("NOTSET", ""):
            raise AtcError(f"ERROR: node '{node.name}' has unknown auto_pad '{auto}'")
        pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])]
        if len(pads) != 4:
            raise AtcError(f"ERROR: node '{node.name}' has pads {pads}; 2-D ops need 4 values")
        # ONNX [x1_begin, x2_begin, x1_end, x2_end] = [top, left, bottom, right]
        return [pads[0], pads[2], pads[1], pads[3]]

    def op_conv(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        w = self.inp(ins[1], node)
        xs, ws = self.spec(x).shape, self.spec(w).shape
        if len(xs) != 4 or len(ws) != 4:
            raise AtcError(f"ERROR: Conv '{node.name}' is {len(xs) - 2}-D; the emulator "
                           "converts only 2-D convolutions (NCHW input, OIHW weight)")
        k = (int(ws[2]), int(ws[3]))
        ks = attrs.get("kernel_shape")
        if ks is not None and tuple(int(v) for v in ks) != k:
            raise AtcError(f"ERROR: Conv '{node.name}' has kernel_shape {list(ks)} but its "
                           f"weight is {list(ws)}")
        st = tuple(int(v) for v in attrs.get("strides", [1, 1]))
        dl = tuple(int(v) for v in attrs.get("dilations", [1, 1]))
        pads = self._conv_pads(node, attrs, (int(xs[2]), int(xs[3])), k,
                               (st[0], st[1]), (dl[0], dl[1]))
        inputs = [x, w]
        if len(ins) > 2 and ins[2]:
            inputs.append(self.inp(ins[2], node))
        cattrs = {"strides": [1, 1, st[0], st[1]], "pads": pads,
                  "dilations": [1, 1, dl[0], dl[1]], "groups": int(attrs.get("group", 1)),
                  "data_format": "NCHW"}
        self.emit(node, "Conv2D", inputs, cattrs, [node.output[0]])

    def _pool(self, node: Any, ins: list[str], attrs: dict[str, Any], op: str) -> None:
        self._no_extra_outputs(node, 1)
        x = self.inp(ins[0], node)
        spec = self.spec(x)
        if len(spec.shape) != 4:
            raise AtcError(f"ERROR: {node.op_type} '{node.name}' has a {len(spec.shape)}-D "
                           "input; the emulator converts only 2-D pooling on NCHW")
        k = tuple(int(v) for v in attrs["kernel_shape"])
        s = tuple(int(v) for v in attrs.get("strides", [1, 1]))
        if any(int(v) != 1 for v in attrs.get("dilations", [1, 1])):
            raise AtcError(f"ERROR: {node.op_type} '{node.name}' uses dilations; dilated "
                           "pooling is not emulated")
        hw = (int(spec.shape[2]), int(spec.shape[3]))
        pads = self._conv_pads(node, attrs, hw, (k[0], k[1]), (s[0], s[1]), (1, 1))
        t, b, left, r = pads
        floor_out = [(hw[0] + t + b - k[0]) // s[0] + 1, (hw[1] + left + r - k[1]) // s[1] + 1]
        if int(attrs.get("ceil_mode", 0)):
            self.spatial_dynamic(node, "ceil_mode=1")
            ceil_out = [-(-(hw[0] + t + b - k[0]) // s[0]) + 1,
                        -(-(hw[1] + left + r - k[1]) // s[1]) + 1]
            if ceil_out != floor_out:
                raise AtcError(f"ERROR: {node.op_type} '{node.name}' uses ceil_mode=1, which "
                               f"changes its output size here ({floor_out} -> {ceil_out}); "
                               "only pooling whose ceil and floor sizes agree is emulated")
        same = []
        for i, (lo, hi) in enumerate(((t, b), (left, r))):
            total = max((-(-hw[i] // s[i]) - 1) * s[i] + k[i] - hw[i], 0)
            same.append((lo, hi) == (total // 2, total - total // 2))
        include_pad = op == "AvgPool" and int(attrs.get("count_include_pad", 0))
        pattrs = {"ksize": [1, 1, k[0], k[1]], "strides": [1, 1, s[0], s[1]],
                  "data_format": "NCHW"}
        if pads == [0, 0, 0, 0]:
            padding = "VALID"
        elif all(same) and not include_pad:
            if any(v > 1 for v in s):
                self.spatial_dynamic(node, f"pads {pads} with strides {list(s)}")
            padding = "SAME"
        elif op == "MaxPool" or include_pad:
            # explicit padding: concatenate constant borders (-inf for max, 0 for a
            # count_include_pad average), then pool VALID; exact, static shapes only
            if self.kind:
                raise AtcError(f"ERROR: {node.op_type} '{node.name}' has explicit pads "
                               f"{[t, b, left, r]} (top, bottom, left, right); the emulator "
                               "pads them with Concat, which needs static shapes (no gears)")
            dt = np.dtype(spec.dtype)
            fill = (-np.inf if dt.kind == "f" else np.iinfo(dt).min) if op == "MaxPool" else 0
            x = self._pad_concat(node, x, t, b, 2, fill)
            x = self._pad_concat(node, x, left, r, 3, fill)
            padding = "VALID"
        else:
            raise AtcError(f"ERROR: AveragePool '{node.name}' has pads {[t, b, left, r]} (top, "
                           "bottom, left, right) with count_include_pad=0; the emulator maps "
                           "pooling pads only to VALID (all 0) or SAME (TensorFlow-style: "
                           "total = max((ceil(in/stride)-1)*stride + kernel - in, 0), the odd "
                           "pixel at the end)")
        pattrs["padding"] = padding
        self.emit(node, op, [x], pattrs, [node.output[0]])

    def _pad_concat(self, node: Any, x: str, lo: int, hi: int, axis: int, fill: float) -> str:
        if lo == 0 and hi == 0:
            return x
        spec = self.spec(x)
        parts = []
        for n, tag in ((lo, "lo"), (hi, "hi")):
            if n:
                shape = list(spec.shape)
                shape[axis] = n
                parts.append((tag, self.weight(f"{node.name}#pad{axis}{tag}",
                                               np.full(shape, fill, dtype=spec.dtype))))
        ins = [p for tag, p in parts if tag == "lo"] + [x] + [p for tag, p in parts
                                                          if tag == "hi"]
        return self.emit(node, "Concat", ins, {"concat_dim": axis, "N": len(ins)}, [None],
                         f"#pad{axis}")[0]

    def op_maxpool(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._pool(node, ins, attrs, "MaxPool")

    def op_averagepool(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._pool(node, ins, attrs, "AvgPool")

    def op_globalaveragepool(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self.emit(node, "GlobalAveragePool", [self.inp(ins[0], node)], {}, [node.output[0]])

    def op_flatten(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        axis = int(attrs.get("axis", 1))
        self.emit(node, "Flatten", [x], {"axis": axis}, [node.output[0]])

    def _reshape(self, node: Any, x: str, target: list[int]) -> None:
        shape = self.keep_batch(self.spec(x).shape, target)
        self.emit(node, "Reshape", [x, self.int64(node, "shape", shape)], {},
                  [node.output[0]])

    def op_reshape(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        sv = self.const(ins[1])
        if sv is None:
            raise AtcError(f"ERROR: Reshape '{node.name}' takes its shape from a computed "
                           f"tensor '{ins[1]}'; the emulator needs a constant shape "
                           "(an initializer or Constant)")
        in_shape = self.spec(x).shape
        target = [int(v) for v in sv.reshape(-1)]
        if not int(attrs.get("allowzero", 0)):
            target = [in_shape[i] if v == 0 and i < len(in_shape) else v
                      for i, v in enumerate(target)]
        size = int(np.prod(in_shape, dtype=np.int64))
        if target.count(-1) == 1:
            known = int(np.prod([v for v in target if v != -1], dtype=np.int64))
            if known == 0 or size % known:
                raise AtcError(f"ERROR: Reshape '{node.name}' cannot reshape {list(in_shape)} "
                               f"to {[int(v) for v in sv.reshape(-1)]}")
            target[target.index(-1)] = size // known
        if target.count(-1) > 1 or int(np.prod(target, dtype=np.int64)) != size:
            raise AtcError(f"ERROR: Reshape '{node.name}' cannot reshape {list(in_shape)} to "
                           f"{[int(v) for v in sv.reshape(-1)]}")
        self._reshape(node, x, target)

    def _axes(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> list[int] | None:
        if len(ins) > 1 and ins[1]:
            v = self.const(ins[1])
            if v is None:
                raise AtcError(f"ERROR: {node.op_type} '{node.name}' takes its axes from a "
                               "computed tensor; the emulator needs constant axes")
            return [int(a) for a in v.reshape(-1)]
        if "axes" in attrs:
            return [int(a) for a in attrs["axes"]]
        return None

    def op_squeeze(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        shape = list(self.spec(x).shape)
        axes = self._axes(node, ins, attrs)
        rank = len(shape)
        drop = {a % rank for a in axes} if axes else {i for i, d in enumerate(shape) if d == 1}
        if any(shape[a] != 1 for a in drop):
            raise AtcError(f"ERROR: Squeeze '{node.name}' squeezes a dimension that is not 1 "
                           f"(shape {shape}, axes {sorted(drop)})")
        self._reshape(node, x, [d for i, d in enumerate(shape) if i not in drop])

    def op_unsqueeze(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        shape = list(self.spec(x).shape)
        axes = self._axes(node, ins, attrs) or []
        rank = len(shape) + len(axes)
        out = list(shape)
        for a in sorted(a % rank for a in axes):
            out.insert(a, 1)
        self._reshape(node, x, out)

    def op_transpose(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        x = self.inp(ins[0], node)
        rank = len(self.spec(x).shape)
        perm = [int(p) for p in attrs.get("perm", list(range(rank))[::-1])]
        self.emit(node, "Transpose", [x, self.int64(node, "perm", perm)], {},
                  [node.output[0]])

    def op_concat(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        xs = [self.inp(n, node) for n in ins if n]
        axis = int(attrs["axis"])
        self.emit(node, "Concat", xs, {"concat_dim": axis, "N": len(xs)}, [node.output[0]])

    def _reduce(self, node: Any, ins: list[str], attrs: dict[str, Any], op: str) -> None:
        x = self.inp(ins[0], node)
        axes = self._axes(node, ins, attrs)
        if not axes:
            if int(attrs.get("noop_with_empty_axes", 0)):
                self.t[node.output[0]] = x
                return
            axes = list(range(len(self.spec(x).shape)))
        self.emit(node, op, [x, self.int64(node, "axes", axes)],
                  {"keep_dims": bool(int(attrs.get("keepdims", 1)))}, [node.output[0]])

    def op_reducesum(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._reduce(node, ins, attrs, "ReduceSum")

    def op_reducemean(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        self._reduce(node, ins, attrs, "ReduceMean")

    def op_cast(self, node: Any, ins: list[str], attrs: dict[str, Any]) -> None:
        from onnx import helper

        to = int(attrs["to"])
        try:
            dst = np.dtype(helper.tensor_dtype_to_np_dtype(to)).name
        except Exception:
            dst = f"ONNX type {to}"
        if dst not in NUMPY_TO_ACL:
            raise AtcError(f"ERROR: Cast '{node.name}' casts to {dst}, which the emulator "
                           "does not support")
        self.emit(node, "Cast", [self.inp(ins[0], node)], {"dst_type": NUMPY_TO_ACL[dst]},
                  [node.output[0]])


class _FakeNode:
    """Stands in for an ONNX node when the converter adds nodes of its own."""

    def __init__(self, name: str, op_type: str) -> None:
        self.name = name
        self.op_type = op_type


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper, numpy_helper

    out: dict[str, Any] = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [x.decode("utf-8", "replace") for x in v]
        elif hasattr(v, "dims") and hasattr(v, "data_type"):
            v = numpy_helper.to_array(v)
        out[a.name] = v
    return out


def convert_onnx(model_path: str, *, soc_version: str, name: str | None = None,
                 input_shape: dict[str, list[int]] | None = None,
                 input_format: str | None = None, output_type: str | None = None,
                 dynamic_batch: list[int] | None = None, log: str = "null",
                 meta: dict[str, Any] | None = None,
                 dynamic_image_size: list[list[int]] | None = None,
                 dynamic_dims: list[list[int]] | None = None) -> OmModel:
    """Convert an ONNX file to an OmModel (what ``main`` does before writing ``.om``).

    At most one of ``dynamic_batch`` (batch gears), ``dynamic_image_size`` ([h, w] gears)
    and ``dynamic_dims`` (one value per -1 of ``input_shape``) may be given.

    Raises AtcError with the message lines ATC would print.
    """
    try:
        import onnx
    except ImportError:
        raise AtcError(f"ERROR: {MissingExtra('onnx', 'atc', 'converting ONNX models')}"
                       ) from None
    try:
        proto = onnx.load(model_path)
    except Exception as e:
        raise AtcError(_e10001(model_path, "model", f"the file is not a readable ONNX model "
                               f"({type(e).__name__}: {e})")) from None
    conv = _Converter(proto, name or os.path.splitext(os.path.basename(model_path))[0],
                      soc_version, input_shape, input_format, output_type,
                      list(dynamic_batch or []), log, dynamic_image_size, dynamic_dims)
    model = conv.run()
    model.meta.update(meta or {})
    model.meta["opset"] = conv.opset
    for m in conv.messages:
        print(m)
    return model


# ------------------------------------------------------------------------- single ops
#: single-op JSON formats and types (ATC's --singleop description: "format", "shape",
#: "type" per tensor; aclFormat numbers as in acl.create_tensor_desc)
_SINGLEOP_FORMATS = {"ND": 2, "NCHW": 0, "NHWC": 1}
#: formats ATC's single-op JSON names that the emulator does not lay out (5D and fractal
#: device layouts, and RESERVED for an unused optional input; ATC singleop_desc_intro.md)
_SINGLEOP_FORMATS_NOT_EMULATED = {"NC1HWC0": 3, "FRACTAL_Z": 4, "FRACTAL_NZ": 29,
                                  "RESERVED": 40}
#: every "type" name ATC's single-op JSON accepts (ATC singleop_desc_intro.md: float and
#: float32 both name DT_FLOAT; float16, fp16 and half name DT_FLOAT16), as numpy names
_SINGLEOP_TYPES = {"float": "float32", "float32": "float32", "float16": "float16",
                   "fp16": "float16", "half": "float16", "int8": "int8", "int16": "int16",
                   "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16",
                   "uint32": "uint32", "uint64": "uint64", "double": "float64",
                   "bool": "bool"}
#: type names ATC accepts whose elements numpy cannot hold (so no emulated op computes them);
#: UNDEFINED (28) marks an unused optional input
_SINGLEOP_TYPES_NOT_EMULATED = {"complex64": 16, "complex128": 17, "bfloat16": 27,
                                "UNDEFINED": 28, "int4": 29, "uint1": 30, "complex32": 33}
_SINGLEOP_FILE = "acl_lab-singleop"


def _singleop_tensor(op: str, i: int, side: str, d: Any) -> tuple[TensorSpec, int, Any]:
    where = f"op {op!r} {side} {i}"
    if not isinstance(d, dict):
        raise AtcError(_e10001(str(d), "singleop", f"{where} must be an object"))
    name, fmt, shape = d.get("type"), d.get("format", "ND"), d.get("shape")
    if name in _SINGLEOP_TYPES_NOT_EMULATED:
        raise AtcError(_e10001(str(name), "singleop", f"{where}: real ATC accepts type "
                               f"{name!r}, but acl_lab's operators do not compute it: here "
                               "type must be one of " + ", ".join(_SINGLEOP_TYPES)))
    if not isinstance(name, str) or name not in _SINGLEOP_TYPES:
        raise AtcError(_e10001(str(name), "singleop", f"{where}: type must be one of "
                               + ", ".join([*_SINGLEOP_TYPES, *_SINGLEOP_TYPES_NOT_EMULATED])))
    dtype = _SINGLEOP_TYPES[name]
    if fmt in _SINGLEOP_FORMATS_NOT_EMULATED:
        raise AtcError(_e10001(str(fmt), "singleop", f"{where}: real ATC accepts format "
                               f"{fmt!r}, but acl_lab does not lay it out: here format "
                               "must be ND, NCHW or NHWC"))
    if not isinstance(fmt, str) or fmt not in _SINGLEOP_FORMATS:
        raise AtcError(_e10001(str(fmt), "singleop", f"{where}: format must be ND, NCHW or "
                               "NHWC"))
    if not isinstance(shape, list) or not all(isinstance(x, int) and x >= 0 for x in shape):
        raise AtcError(_e10001(str(shape), "singleop", f"{where}: shape must be a list of "
                               "non-negative integers"))
    const = None
    if d.get("is_const"):
        const = np.asarray(d.get("const_value", []), dtype=dtype).reshape(shape)
    return TensorSpec(dtype, tuple(shape), _SINGLEOP_FORMATS[fmt]), _SINGLEOP_FORMATS[fmt], const


def _run_singleop(flags: dict[str, str]) -> str:
    """``--singleop=JSON --output=DIR``: check each op of the list against the emulated
    registry (its type, input count, dtypes and, when every const input is given, the output
    descs its shape inference gives) and write one ``.om`` per op into DIR, named as ATC
    names them (index, op type, then each tensor's data type, format and dims). Returns DIR.
    """
    import json

    path, out_dir = flags["singleop"], flags.get("output", "")
    missing = [f for f in ("output", "soc_version") if not flags.get(f)]
    if missing:
        raise AtcError(*[_e10054(f) for f in missing])
    try:
        with open(path, encoding="utf-8") as f:
            ops = json.load(f)
    except OSError as e:
        raise AtcError(_e10001(path, "singleop", f"cannot read it: {e.strerror}")) from None
    except ValueError as e:
        raise AtcError(_e10001(path, "singleop", f"it is not JSON: {e}")) from None
    if not isinstance(ops, list) or not ops:
        raise AtcError(_e10001(path, "singleop", "it must be a non-empty list of ops"))
    files: list[tuple[str, dict[str, Any]]] = []
    for n, entry in enumerate(ops):
        if not isinstance(entry, dict) or not isinstance(entry.get("op"), str):
            raise AtcError(_e10001(path, "singleop", f"entry {n} has no \"op\" type"))
        name = entry["op"]
        try:
            opdef = get_op(name)
        except OpError as e:
            raise AtcError(f"E19010: op {name!r} of entry {n}: {e.message}") from None
        ins = [_singleop_tensor(name, i, "input_desc", d)
               for i, d in enumerate(entry.get("input_desc", []))]
        outs = [_singleop_tensor(name, i, "output_desc", d)
                for i, d in enumerate(entry.get("output_desc", []))]
        attrs = {a["name"]: a.get("value") for a in entry.get("attr", [])
                 if isinstance(a, dict) and "name" in a}
        consts = {i: c for i, (_, _, c) in enumerate(ins) if c is not None}
        if all(i in consts for i in opdef.const_inputs):
            try:
                want = opdef.infer([t[0] for t in ins], {**attrs, "__consts__": consts})
            except OpError as e:
                raise AtcError(f"E19010: op {name!r} of entry {n} does not compile: "
                               f"{e.message}") from None
            got = [t[0] for t in outs]
            if [(w.dtype, tuple(w.shape)) for w in want] != [(g.dtype, tuple(g.shape))
                                                           for g in got]:
                raise AtcError(f"E19010: op {name!r} of entry {n}: its output_desc "
                               f"{[(g.dtype, list(g.shape)) for g in got]} is not what it "
                               f"computes, {[(w.dtype, list(w.shape)) for w in want]}")
        parts = [str(n), name]
        for spec, fmt, _ in ins + outs:
            parts += [str(NUMPY_TO_ACL[spec.dtype]), str(fmt), *map(str, spec.shape)]
        doc = {"format": _SINGLEOP_FILE, "op": name, "soc_version": flags["soc_version"],
               "inputs": [[t[0].dtype, list(t[0].shape), t[1]] for t in ins],
               "outputs": [[t[0].dtype, list(t[0].shape), t[1]] for t in outs],
               "attrs": attrs}
        files.append(("_".join(parts) + ".om", doc))
    try:
        os.makedirs(out_dir, exist_ok=True)
        for fname, doc in files:
            with open(os.path.join(out_dir, fname), "w", encoding="utf-8") as f:
                json.dump(doc, f)
    except OSError as e:
        raise AtcError(_e10001(out_dir, "output", f"cannot write there: {e.strerror}")
                       ) from None
    return out_dir


# ------------------------------------------------------------------------- main
def _run(flags: dict[str, str], warnings: list[str]) -> str:
    """Validate the flags, convert and write the model; returns the output path."""
    if flags.get("singleop"):
        return _run_singleop(flags)
    missing = [f for f in ("model", "output", "soc_version") if not flags.get(f)]
    errors = [_e10054(f) for f in missing]
    mode = flags.get("mode", "0") or "0"
    if mode != "0":
        raise AtcError(_e10001(mode, "mode", "only --mode=0 (build an .om from a model) is "
                               "emulated; modes 1, 3, 5, 6 and 30 are not"))
    fw = flags.get("framework", "")
    if not fw:
        errors.append("E10007: [--framework] is required. The value must be 0(Caffe) or "
                      "1(MindSpore) or 3(TensorFlow) or 5(Onnx).")
    elif fw != "5":
        extra = {"0": "Caffe", "1": "MindSpore", "3": "TensorFlow"}.get(fw)
        if extra:
            errors.append(f"E10007: [--framework] is {fw} ({extra}). acl_lab's ATC emulates "
                          "only 5 (Onnx): Caffe, MindSpore and TensorFlow models are not "
                          "emulated; export the model to ONNX and use --framework=5.")
        else:
            errors.append(f"E10007: [--framework] is {fw!r}. The value must be 0(Caffe) or "
                          "1(MindSpore) or 3(TensorFlow) or 5(Onnx); acl_lab emulates only "
                          "5(Onnx).")
    if errors:
        raise AtcError(*errors)
    model_path = flags["model"]
    if not os.path.isfile(model_path):
        raise AtcError(_e10001(model_path, "model", "the file does not exist or is not a "
                               "regular file"))
    if flags.get("weight"):
        warnings.append("[WARNING] --weight is only used for Caffe models; it is ignored "
                        "for ONNX.")
    fmt = flags.get("input_format") or None
    if fmt is not None and fmt not in _FORMATS:
        raise AtcError(_e10001(fmt, "input_format", "for ONNX models it must be NCHW, NCDHW "
                               "or ND"))
    otype = flags.get("output_type") or None
    if otype is not None:
        if otype in ("HIF8", "FP8E5M2", "FP8E4M3FN"):
            raise AtcError(_e10001(otype, "output_type", "8-bit float outputs exist only on "
                                   "Ascend 950 and are not emulated"))
        if otype not in _OUTPUT_TYPES:
            raise AtcError(_e10001(otype, "output_type", "it must be one of "
                                   + ", ".join(_OUTPUT_TYPES) + " (per-node forms need "
                                   "--out_nodes, which is not emulated)"))
    log = flags.get("log") or "null"
    if log not in _LOG_LEVELS:
        raise AtcError(_e10001(log, "log", "it must be debug, info, warning, error or null"))
    pm, pm2 = flags.get("precision_mode") or None, flags.get("precision_mode_v2") or None
    if pm and pm2:
        raise AtcError(_e10001(pm2, "precision_mode_v2", "--precision_mode and "
                               "--precision_mode_v2 cannot be used together"))
    if pm and pm not in _PRECISION:
        raise AtcError(_e10001(pm, "precision_mode", "it must be one of " + ", ".join(_PRECISION)))
    if pm2 and pm2 not in _PRECISION_V2:
        raise AtcError(_e10001(pm2, "precision_mode_v2", "it must be one of "
                               + ", ".join(_PRECISION_V2)))
    shapes = _parse_input_shape(flags["input_shape"]) if flags.get("input_shape") else None
    gear_flags = [f for f in _GEAR_FLAGS if flags.get(f)]
    if len(gear_flags) > 1:
        raise AtcError("E10009: --dynamic_batch_size, --dynamic_image_size, --input_shape_range,"
                       " and --dynamic_dims are mutually exclusive.")
    if gear_flags and not shapes:
        raise AtcError("E10004: Value for --input_shape is empty (a dynamic model needs "
                       f"--input_shape with -1 dims for --{gear_flags[0]}).")
    if flags.get("dynamic_image_size") and (fmt or "NCHW") != "NCHW":
        raise AtcError(_e10003(fmt or "", "input_format", "When --dynamic_image_size is set, "
                               "the input format only supports NCHW or NHWC (and ONNX models "
                               "NCHW)."))
    if flags.get("dynamic_dims") and fmt != "ND":
        raise AtcError(_e10001(fmt or "NCHW", "input_format", "input_format must be ND when "
                               "set dynamic_dims"))
    batches = (_parse_batches(flags["dynamic_batch_size"]) if flags.get("dynamic_batch_size")
               else [])
    sizes = (_parse_sizes(flags["dynamic_image_size"], "dynamic_image_size")
             if flags.get("dynamic_image_size") else None)
    dims = (_parse_sizes(flags["dynamic_dims"], "dynamic_dims") if flags.get("dynamic_dims")
            else None)
    aipp_cfgs = _aipp_configs(flags.get("insert_op_conf") or "")
    for w in warnings:
        print(w)
    out_base = flags["output"]
    meta: dict[str, Any] = {"source": os.path.basename(model_path)}
    if pm or pm2:
        meta["precision_mode" if pm else "precision_mode_v2"] = pm or pm2
    model = convert_onnx(model_path, soc_version=flags["soc_version"],
                         name=os.path.basename(out_base) or "model", input_shape=shapes,
                         input_format=fmt, output_type=otype, dynamic_batch=batches, log=log,
                         meta=meta, dynamic_image_size=sizes, dynamic_dims=dims)
    if aipp_cfgs:
        from .runtime import aipp
        try:
            model = aipp.insert_static(model, aipp_cfgs)
        except aipp.AippConfigError as e:
            raise AtcError(_e10052(e.message)) from None
    data = dump_om_bytes(model)
    path = out_base + ".om"
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise AtcError(_e10001(out_base, "output", f"cannot write {path}: {e.strerror}")
                       ) from None
    return path


def _e10052(reason: str) -> str:
    return f"E10052: [--insert_op_conf] The AIPP configuration is invalid: {reason}."


def _aipp_configs(path: str) -> list[Any]:
    """The AIPP blocks of ``--insert_op_conf`` (none without it); AtcError E10052 for a file
    ATC refuses (GE aipp_op.cc ValidateParams; acl_lab.runtime.aipp)."""
    if not path:
        return []
    from .runtime import aipp
    try:
        return aipp.read_config(path)
    except aipp.AippConfigError as e:
        raise AtcError(_e10052(e.message)) from None


def main(argv: list[str] | None = None) -> int:
    """Run the emulated ATC with command-line ``argv`` (without the program name).

    Returns the exit status: 0 on success (also for ``--help``), 255 on failure.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a.lstrip("-").split("=", 1)[0] in ("help", "h") for a in args if a.startswith("-")):
        print(USAGE, end="")
        return 0
    print(START, flush=True)
    try:
        flags, warnings = parse_flags(args)
        path = _run(flags, warnings)
    except AtcError as e:
        sys.stdout.flush()
        print(FAILED, file=sys.stderr)
        for line in e.lines:
            print(line, file=sys.stderr)
        sys.stderr.flush()
        return 255
    if flags.get("log") in ("debug", "info"):
        print(f"[INFO] model written to {path}")
    print(SUCCESS, flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
