"""Built-in operators of the emulated AI core: shape inference, numpy kernels and costs.

Importing this module registers every operator below in ``opdefs.REGISTRY`` (``get_op``
imports it lazily). Op types, inputs, attribute names and defaults follow the GE operator
prototypes (reference §9.4, ``docs/sources.md``). Each kernel's docstring says what it computes and
where it is narrower than the real operator.

Conventions
-----------
* **float16** is computed in float32 and rounded back to float16 once, at the end, because the
  AI core's cube and vector units accumulate in float32. Results can differ in the last bit from
  a float16-only numpy computation.
* **int8 MatMul/BatchMatMul** give int32: int8 x int8 products accumulated in int32 as the cube
  unit does (the exact sum, wrapped to 32 bits on overflow).
* **Integer arithmetic** (Add/Sub/Mul, ReduceSum) wraps on overflow like numpy; integer Div is
  floor division (CANN's TBE ``div`` divides in float and floors); integer ReduceMean truncates
  toward zero.
* **Errors** are ``OpError``. 100024 ACL_ERROR_OP_NOT_FOUND for anything the compiled-op lookup
  would fail to match (input count, shapes, formats, dtypes, values outside a kernel's support);
  100000 ACL_ERROR_INVALID_PARAM for a missing required attribute or a malformed attribute or
  constant-input value. Messages start with the op type and name the input index and shapes.
* **Const inputs** (Transpose ``perm``, Reshape ``shape``, ReduceSum ``axes``): ``infer`` reads
  their values from ``attrs["__consts__"][index]`` (the runtime puts them there); ``compute``
  receives them as ordinary arrays.
* **Optional inputs** (bias, offset_w): a slot counts as unused when it is absent from the list,
  or holds the placeholder desc (shape ``[]``, zero elements or a non-numeric dtype), or, in
  ``compute``, a 0-d or empty array.
* ``compute`` re-runs ``infer`` on its arrays first, so calling it directly with bad inputs gives
  the same ``OpError`` as the runtime would.

Dtype support (``f32 f16 i32 i8``; "any" = every dtype in ``opdefs.ACL_TO_NUMPY``)

==========================================================  ================================
Add, Sub, Mul, Div, Relu/ReLU, MaxPool, ReduceSum(D),        f32 f16 i32 i8
ReduceMean(D)
Gelu, Sigmoid, Tanh, SoftmaxV2/Softmax, LayerNorm, Conv2D,   f32 f16
AvgPool, GlobalAveragePool
MatMul(V2), BatchMatMul(V2), GEMM                            f32 f16, i8 -> i32
Cast, Transpose, TransposeD, Reshape, Flatten, ConcatD/      any
Concat, Slice
ArgMaxV2                                                     f32 f16 i32 i8 -> i32/i64
==========================================================  ================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..constants import ErrorCode
from .opdefs import (
    ACL_TO_NUMPY,
    FORMATS_ATTR,
    Cost,
    Infer,
    OpDef,
    OpError,
    TensorSpec,
    register,
)

# ---------------------------------------------------------------------------------------------
# Cost model constants. A cost is (flops, bytes_moved); bytes_moved is always the bytes of every
# input (weights and const inputs included) plus every output, i.e. one read and one write of
# each tensor through device memory. FLOPs count one per arithmetic step of an element:
FLOPS_ELEMENTWISE = 1  # Add/Sub/Mul/Div/Relu: one op per output element
FLOPS_TRANSCENDENTAL = 8  # Gelu/Sigmoid/Tanh per output element: exp/tanh ~ a short polynomial
FLOPS_SOFTMAX = 8  # per element: max, subtract, exp (~5), sum, divide
FLOPS_LAYERNORM = 8  # per input element: mean, centre, square, mean, rsqrt, scale, shift
FLOPS_PER_MAC = 2  # MatMul/BatchMatMul/Conv2D: a multiply-accumulate is 2 FLOPs (2*M*N*K)
FLOPS_POOL_TAP = 1  # MaxPool/AvgPool: one compare/add per window tap per output element
FLOPS_REDUCE = 1  # ReduceSum/ReduceMean/GlobalAveragePool: one add per input element
FLOPS_CAST = 1  # Cast converts each element
FLOPS_MOVE = 0  # Transpose/Reshape/Flatten/Concat only move bytes
# ---------------------------------------------------------------------------------------------

#: ACL codes used by this module
NOT_FOUND = ErrorCode.ACL_ERROR_OP_NOT_FOUND  # "no compiled op matches"
INVALID_PARAM = ErrorCode.ACL_ERROR_INVALID_PARAM  # a required attr missing or a bad attr value
#: Mixed or unsupported input dtypes. Real aclopExecuteV2 looks a compiled op up by type, input
#: dtypes, formats, shapes and attrs, and any difference gives 100024 (reference §9.4 "How a
#: call is matched"); 100026 ACL_ERROR_UNSUPPORTED_DATA_TYPE is what the runtime itself reports
#: for a dtype number it cannot represent at all (TensorDesc.spec), not an operator's verdict.
DTYPE_ERROR = NOT_FOUND

FLOAT = frozenset({"float32", "float16"})
NUMERIC = FLOAT | {"int32", "int8"}
MATMUL_TYPES = FLOAT | {"int8"}
ANY = frozenset(ACL_TO_NUMPY.values())
INDEX_TYPES = frozenset({"int32", "int64"})
MAX_CONCAT_INPUTS = 1024  # an emulator bound, not a documented CANN limit

FMT_NCHW, FMT_NHWC, FMT_ND = 0, 1, 2
FMT_HWCN = 16
FORMAT_NAMES = {-1: "UNDEFINED", 0: "NCHW", 1: "NHWC", 2: "ND", 3: "NC1HWC0", 4: "FRACTAL_Z",
                16: "HWCN", 29: "FRACTAL_NZ"}

Kernel = Callable[[list[np.ndarray], dict[str, Any]], list[np.ndarray]]


# ============================================================================ helpers
def _fail(name: str, message: str, code: int = NOT_FOUND) -> NoReturn:
    raise OpError(f"{name}: {message}", code)


def _dims(shape: Sequence[int]) -> list[int]:
    return [int(d) for d in shape]


def _fmt(code: int) -> str:
    return FORMAT_NAMES.get(code, str(code))


def _check_count(name: str, n: int, lo: int, hi: int) -> None:
    if not lo <= n <= hi:
        want = str(lo) if lo == hi else f"{lo}..{hi}"
        _fail(name, f"takes {want} inputs, got {n}")


def _common_dtype(name: str, specs: Sequence[TensorSpec], allowed: frozenset[str],
                  indices: Sequence[int] | None = None) -> str:
    """The one dtype of the inputs at ``indices``; OpError if unsupported or mixed."""
    idx = list(range(len(specs))) if indices is None else list(indices)
    first = specs[idx[0]].dtype
    if first not in allowed:
        _fail(name, f"input {idx[0]} dtype {first} is not supported "
                    f"(supported: {', '.join(sorted(allowed))})", DTYPE_ERROR)
    for i in idx[1:]:
        if specs[i].dtype != first:
            _fail(name, f"input {i} is {specs[i].dtype} but input {idx[0]} is {first}: no "
                        "compiled op takes mixed input dtypes", DTYPE_ERROR)
    return first


def _present(specs: Sequence[TensorSpec], i: int) -> TensorSpec | None:
    """Optional input ``i``, or None when the slot is unused (absent or a placeholder desc)."""
    if i >= len(specs):
        return None
    s = specs[i]
    if s.dtype not in ANY or len(s.shape) == 0 or any(d <= 0 for d in s.shape):
        return None
    return s


def _present_array(arrays: Sequence[np.ndarray], i: int) -> np.ndarray | None:
    """Optional input array ``i``, or None when unused (absent, 0-d or empty)."""
    if i >= len(arrays):
        return None
    a = arrays[i]
    return None if a.ndim == 0 or a.size == 0 else a


def _require(name: str, attrs: dict[str, Any], key: str) -> Any:
    if key not in attrs or attrs[key] is None:
        _fail(name, f"required attribute {key!r} is missing", INVALID_PARAM)
    return attrs[key]


def _int_attr(name: str, attrs: dict[str, Any], key: str) -> int:
    v = _require(name, attrs, key)
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
        _fail(name, f"attribute {key!r} must be an int, got {v!r}", INVALID_PARAM)
    return int(v)


def _bool_attr(name: str, attrs: dict[str, Any], key: str) -> bool:
    v = _require(name, attrs, key)
    if not isinstance(v, bool | int | np.bool_ | np.integer):
        _fail(name, f"attribute {key!r} must be a bool, got {v!r}", INVALID_PARAM)
    return bool(v)


def _float_attr(name: str, attrs: dict[str, Any], key: str) -> float:
    v = _require(name, attrs, key)
    if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
        _fail(name, f"attribute {key!r} must be a float, got {v!r}", INVALID_PARAM)
    return float(v)


def _str_attr(name: str, attrs: dict[str, Any], key: str) -> str:
    v = _require(name, attrs, key)
    if isinstance(v, bytes):
        v = v.decode()
    if not isinstance(v, str):
        _fail(name, f"attribute {key!r} must be a string, got {v!r}", INVALID_PARAM)
    return v


def _as_ints(name: str, value: Any, what: str) -> list[int]:
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iu" or value.ndim > 1:
            _fail(name, f"{what} must be a list of ints, got {value.dtype} array of shape "
                        f"{_dims(value.shape)}", INVALID_PARAM)
        return [int(v) for v in value.reshape(-1)]
    if not isinstance(value, list | tuple) or not all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
        _fail(name, f"{what} must be a list of ints, got {value!r}", INVALID_PARAM)
    return [int(v) for v in value]


def _ints_attr(name: str, attrs: dict[str, Any], key: str, length: int | None = None) -> list[int]:
    v = _as_ints(name, _require(name, attrs, key), f"attribute {key!r}")
    if length is not None and len(v) != length:
        _fail(name, f"attribute {key!r} must have {length} values, got {v}", INVALID_PARAM)
    return v


def _const_input(name: str, specs: Sequence[TensorSpec], attrs: dict[str, Any], index: int,
                 what: str) -> list[int]:
    """Values of const input ``index`` (int32/int64, at most 1-D) from ``attrs['__consts__']``."""
    if specs[index].dtype not in INDEX_TYPES:
        _fail(name, f"input {index} ({what}) must be int32 or int64, got {specs[index].dtype}",
              DTYPE_ERROR)
    consts = attrs.get("__consts__") or {}
    if index not in consts:
        _fail(name, f"input {index} ({what}) must be constant: mark it with "
                    "acl.set_tensor_const or place it in host memory", INVALID_PARAM)
    arr = np.asarray(consts[index])
    if arr.ndim > 1:
        _fail(name, f"input {index} ({what}) must be 1-D, got shape {_dims(arr.shape)}",
              INVALID_PARAM)
    return _as_ints(name, arr.reshape(-1).astype(np.int64), f"input {index} ({what})")


def _axis(name: str, axis: int, rank: int, what: str, allow_end: bool = False) -> int:
    """Normalise a possibly negative axis into [0, rank) (or [0, rank] with allow_end)."""
    hi = rank + 1 if allow_end else rank
    if not -rank <= axis < hi or (rank == 0 and not allow_end):
        _fail(name, f"{what} {axis} is out of range for a rank-{rank} input", INVALID_PARAM)
    return axis + rank if axis < 0 else axis


def _axes(name: str, axes: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    out = tuple(_axis(name, a, rank, what) for a in axes)
    if len(set(out)) != len(out):
        _fail(name, f"{what} {list(axes)} repeats an axis", INVALID_PARAM)
    return out


def _f32(a: np.ndarray) -> np.ndarray:
    """float16 -> float32 (the AI core's accumulation type); other dtypes unchanged."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _nbytes(spec: TensorSpec) -> int:
    return spec.nbytes if spec.dtype in ANY else 0


def _io_bytes(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec]) -> int:
    return sum(_nbytes(s) for s in ins) + sum(_nbytes(s) for s in outs)


def _out_cost(per_element: int) -> Cost:
    """Cost: ``per_element`` FLOPs per output element."""
    def cost(ins: list[TensorSpec], outs: list[TensorSpec],
             attrs: dict[str, Any]) -> tuple[int, int]:
        return per_element * sum(s.size for s in outs), _io_bytes(ins, outs)
    return cost


def _in_cost(per_element: int) -> Cost:
    """Cost: ``per_element`` FLOPs per element of input 0."""
    def cost(ins: list[TensorSpec], outs: list[TensorSpec],
             attrs: dict[str, Any]) -> tuple[int, int]:
        return per_element * ins[0].size, _io_bytes(ins, outs)
    return cost


def _define(name: str, inputs: tuple[int, int], outputs: int, dtypes: frozenset[str],
            infer: Infer, kernel: Kernel, cost: Cost, defaults: dict[str, Any] | None = None,
            const_inputs: tuple[int, ...] = ()) -> OpDef:
    """Register ``name``. All three functions fill attributes missing from ``attrs`` with
    ``defaults``; compute validates through ``infer`` before running ``kernel``."""
    defaults = dict(defaults or {})

    def infer_with_defaults(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        return infer(specs, {**defaults, **attrs})

    def compute(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
        arrays = [np.asarray(a) for a in arrays]
        merged = {**defaults, **{k: v for k, v in attrs.items() if k != "__consts__"}}
        fmts = tuple(attrs.get(FORMATS_ATTR, ()))
        specs = [TensorSpec(a.dtype.name, tuple(a.shape), fmts[i] if i < len(fmts) else FMT_ND)
                 for i, a in enumerate(arrays)]
        infer(specs, {**merged, "__consts__": {i: arrays[i] for i in const_inputs
                                               if i < len(arrays)}})
        return [np.asarray(y) for y in kernel(arrays, merged)]

    def cost_with_defaults(ins: list[TensorSpec], outs: list[TensorSpec],
                           attrs: dict[str, Any]) -> tuple[int, int]:
        flops, nbytes = cost(ins, outs, {**defaults, **attrs})
        return int(flops), int(nbytes)

    infer_with_defaults.__doc__ = f"Output specs of {name} (see the module docstring)."
    compute.__doc__ = kernel.__doc__
    for fn, prefix in ((infer_with_defaults, "infer"), (compute, "compute"),
                       (cost_with_defaults, "cost")):
        fn.__name__ = fn.__qualname__ = f"{prefix}_{name}"
    return register(OpDef(name=name, inputs=inputs, outputs=outputs, dtypes=dtypes,
                          infer=infer_with_defaults, compute=compute, cost=cost_with_defaults,
                          defaults=defaults, const_inputs=const_inputs))


# ============================================================================ elementwise
def _binary_infer(name: str) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 2, 2)
        dt = _common_dtype(name, specs, NUMERIC)
        try:
            shape = np.broadcast_shapes(specs[0].shape, specs[1].shape)
        except ValueError:
            _fail(name, f"input 1 shape {_dims(specs[1].shape)} does not broadcast with input 0 "
                        f"shape {_dims(specs[0].shape)}")
        return [TensorSpec(dt, tuple(int(d) for d in shape), specs[0].format)]
    return infer


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
            arrays: list[np.ndarray]) -> list[np.ndarray]:
    a, b = arrays
    return [np.asarray(fn(_f32(a), _f32(b))).astype(a.dtype, copy=False)]


def _k_add(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Add: ``x1 + x2`` with numpy broadcasting; float16 via float32; integers wrap."""
    return _binary(np.add, arrays)


def _k_sub(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Sub: ``x1 - x2`` with numpy broadcasting; float16 via float32; integers wrap."""
    return _binary(np.subtract, arrays)


def _k_mul(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Mul: ``x1 * x2`` with numpy broadcasting; float16 via float32; integers wrap."""
    return _binary(np.multiply, arrays)


def _k_div(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Div: ``x1 / x2`` with numpy broadcasting.

    Floats follow IEEE (x/0 = ±inf, 0/0 = nan). Integers use floor division, as CANN's TBE
    ``div`` does (divide in float, then floor), but exactly, without float32 rounding of large
    int32 values; an integer division by zero gives 0 here (the device result is undefined).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if arrays[0].dtype.kind == "f":
            return _binary(np.divide, arrays)
        return _binary(np.floor_divide, arrays)


def _unary_infer(name: str, allowed: frozenset[str]) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 1, 1)
        dt = _common_dtype(name, specs, allowed)
        return [TensorSpec(dt, specs[0].shape, specs[0].format)]
    return infer


def _k_relu(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Relu: ``max(x, 0)`` elementwise, in the input dtype (NaN propagates)."""
    x = arrays[0]
    return [np.maximum(x, x.dtype.type(0))]


#: sqrt(2/pi), the constant of the tanh approximation of GELU
GELU_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_CUBIC = 0.044715


def _k_gelu(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Gelu: the tanh approximation ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    This is the approximation CANN's Gelu uses (its TBE ``gelu.py`` rewrites it as
    ``x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3)))``, the same function); the exact erf form
    (torch's default) differs from it by less than 1e-3. Computed in float32.
    """
    x = _f32(arrays[0])
    with np.errstate(over="ignore", invalid="ignore"):
        inner = x.dtype.type(GELU_SQRT_2_OVER_PI) * (x + x.dtype.type(GELU_CUBIC) * x * x * x)
        y = x.dtype.type(0.5) * x * (x.dtype.type(1) + np.tanh(inner))
    return [y.astype(arrays[0].dtype, copy=False)]


def _k_sigmoid(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Sigmoid: ``1 / (1 + exp(-x))``, computed in float32 (exp overflow gives exactly 0)."""
    x = _f32(arrays[0])
    with np.errstate(over="ignore"):
        y = x.dtype.type(1) / (x.dtype.type(1) + np.exp(-x))
    return [y.astype(arrays[0].dtype, copy=False)]


def _k_tanh(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Tanh: ``tanh(x)``, computed in float32."""
    return [np.tanh(_f32(arrays[0])).astype(arrays[0].dtype, copy=False)]


# ============================================================================ softmax
def _softmax_axes(name: str, rank: int, attrs: dict[str, Any], onnx_axis: bool) -> tuple[int, ...]:
    axes = _ints_attr(name, attrs, "axes")
    if onnx_axis and "axis" in attrs:
        axis = _int_attr(name, attrs, "axis")
        if axes not in ([-1], [axis]):
            _fail(name, f"attributes 'axis' ({axis}) and 'axes' ({axes}) disagree", INVALID_PARAM)
        axes = [axis]
    if not axes:
        _fail(name, "attribute 'axes' must name at least one axis", INVALID_PARAM)
    return _axes(name, axes, rank, "softmax axis")


def _softmax_infer(name: str, onnx_axis: bool) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 1, 1)
        dt = _common_dtype(name, specs, FLOAT)
        x = specs[0]
        if len(x.shape) == 0:
            _fail(name, "input 0 must have rank >= 1, got a scalar")
        _softmax_axes(name, len(x.shape), attrs, onnx_axis)
        if dt == "float16" and _bool_attr(name, attrs, "half_to_float"):
            dt = "float32"
        return [TensorSpec(dt, x.shape, x.format)]
    return infer


def _softmax_kernel(onnx_axis: bool, name: str) -> Kernel:
    def kernel(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
        x = arrays[0]
        axes = _softmax_axes(name, x.ndim, attrs, onnx_axis)
        x32 = _f32(x)
        e = np.exp(x32 - x32.max(axis=axes, keepdims=True))
        y = e / e.sum(axis=axes, keepdims=True)
        out = np.float32 if x.dtype == np.float16 and bool(attrs["half_to_float"]) else x.dtype
        return [y.astype(out, copy=False)]
    return kernel


def _k_softmax_v2(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """SoftmaxV2: ``exp(x - max) / sum(exp(x - max))`` over the ``axes`` attr (default [-1]).

    Several axes are normalised jointly. ``half_to_float`` makes a float16 input give a float32
    output. Computed in float32.
    """
    return _softmax_kernel(False, "SoftmaxV2")(arrays, attrs)


def _k_softmax(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Softmax (an emulator alias: GE has only SoftmaxV2): SoftmaxV2 that also takes ONNX's
    single ``axis`` attr (opset-13 meaning: one axis, no flattening)."""
    return _softmax_kernel(True, "Softmax")(arrays, attrs)


# ============================================================================ LayerNorm
def _layernorm_axes(name: str, rank: int, attrs: dict[str, Any]) -> tuple[int, int, float]:
    bna = _axis(name, _int_attr(name, attrs, "begin_norm_axis"), rank, "begin_norm_axis")
    bpa = _axis(name, _int_attr(name, attrs, "begin_params_axis"), rank, "begin_params_axis")
    return bna, bpa, _float_attr(name, attrs, "epsilon")


def _layernorm_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    name = "LayerNorm"
    _check_count(name, len(specs), 3, 3)
    dt = _common_dtype(name, specs, FLOAT)
    x = specs[0]
    rank = len(x.shape)
    if rank == 0:
        _fail(name, "input 0 must have rank >= 1, got a scalar")
    bna, bpa, _ = _layernorm_axes(name, rank, attrs)
    want = x.shape[bpa:]
    for i, what in ((1, "gamma"), (2, "beta")):
        if tuple(specs[i].shape) != tuple(want):
            _fail(name, f"input {i} ({what}) shape {_dims(specs[i].shape)} must equal "
                        f"x.shape[begin_params_axis:] = {_dims(want)} (input 0 shape "
                        f"{_dims(x.shape)}, begin_params_axis {bpa})")
    stats = tuple(x.shape[:bna]) + (1,) * (rank - bna)
    return [TensorSpec(dt, x.shape, x.format), TensorSpec(dt, stats, x.format),
            TensorSpec(dt, stats, x.format)]


def _k_layernorm(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """LayerNorm: ``y = (x - mean) / sqrt(variance + epsilon) * gamma + beta``.

    mean and (biased, population) variance are taken over the dims from ``begin_norm_axis`` on
    and returned with those dims kept as 1; gamma/beta have shape ``x.shape[begin_params_axis:]``.
    All three outputs have x's dtype. Computed in float32.
    """
    x, gamma, beta = arrays
    bna, _, eps = _layernorm_axes("LayerNorm", x.ndim, attrs)
    axes = tuple(range(bna, x.ndim))
    x32 = _f32(x)
    mean = x32.mean(axis=axes, keepdims=True)
    centred = x32 - mean
    var = (centred * centred).mean(axis=axes, keepdims=True)
    y = centred / np.sqrt(var + x32.dtype.type(eps)) * _f32(gamma) + _f32(beta)
    return [y.astype(x.dtype, copy=False), mean.astype(x.dtype, copy=False),
            var.astype(x.dtype, copy=False)]


# ============================================================================ MatMul family
def _bias_types(dtype: str) -> frozenset[str]:
    """Bias dtypes a MatMul/Conv2D of ``dtype`` accepts (int8 accumulates into int32)."""
    return {"float32": frozenset({"float32"}), "float16": frozenset({"float16", "float32"}),
            "int8": frozenset({"int32"})}[dtype]


def _check_bias_and_offset(name: str, specs: Sequence[TensorSpec], attrs: dict[str, Any],
                           dtype: str, channels: int, what: str) -> None:
    bias = _present(specs, 2)
    if bias is not None:
        if tuple(bias.shape) != (channels,):
            _fail(name, f"input 2 (bias) shape {_dims(bias.shape)} must be [{channels}] "
                        f"({what})")
        if bias.dtype not in _bias_types(dtype):
            _fail(name, f"input 2 (bias) dtype {bias.dtype} does not go with {dtype} inputs "
                        f"(supported: {', '.join(sorted(_bias_types(dtype)))})", DTYPE_ERROR)
    if _present(specs, 3) is not None:
        _fail(name, "input 3 (offset_w, weight quantisation offset) is not emulated")
    if int(attrs.get("offset_x", 0)) != 0:
        _fail(name, "offset_x != 0 (quantised input offset) is not emulated")


def _mm_dims(name: str, specs: Sequence[TensorSpec], attrs: dict[str, Any],
             keys: tuple[str, str], batched: bool) -> tuple[tuple[int, ...], int, int, int]:
    """(batch shape, M, N, K) of a MatMul/BatchMatMul call, validating ranks and K."""
    x1, x2 = specs[0], specs[1]
    t1, t2 = _bool_attr(name, attrs, keys[0]), _bool_attr(name, attrs, keys[1])
    for i, s in ((0, x1), (1, x2)):
        r = len(s.shape)
        if (batched and r < 2) or (not batched and r != 2):
            need = "at least 2-D" if batched else "2-D"
            _fail(name, f"input {i} must be {need}, got shape {_dims(s.shape)}")
    m, k1 = (x1.shape[-1], x1.shape[-2]) if t1 else (x1.shape[-2], x1.shape[-1])
    k2, n = (x2.shape[-1], x2.shape[-2]) if t2 else (x2.shape[-2], x2.shape[-1])
    if k1 != k2:
        _fail(name, f"input 1 shape {_dims(x2.shape)} ({keys[1]}={t2}, K={k2}) does not match "
                    f"input 0 shape {_dims(x1.shape)} ({keys[0]}={t1}, K={k1}): the contracted "
                    "dims must be equal")
    batch: tuple[int, ...] = ()
    if batched:
        try:
            batch = tuple(int(d) for d in np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
        except ValueError:
            _fail(name, f"input 1 batch dims {_dims(x2.shape[:-2])} do not broadcast with input "
                        f"0 batch dims {_dims(x1.shape[:-2])}")
    return batch, int(m), int(n), int(k1)


def _mm_infer(name: str, keys: tuple[str, str], batched: bool, max_inputs: int) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 2, max_inputs)
        dt = _common_dtype(name, specs, MATMUL_TYPES, (0, 1))
        batch, m, n, _ = _mm_dims(name, specs, attrs, keys, batched)
        _check_bias_and_offset(name, specs, attrs, dt, n, "N of the output")
        out = "int32" if dt == "int8" else dt
        return [TensorSpec(out, (*batch, m, n), specs[0].format)]
    return infer


def _mm_cost(keys: tuple[str, str]) -> Cost:
    def cost(ins: list[TensorSpec], outs: list[TensorSpec],
             attrs: dict[str, Any]) -> tuple[int, int]:
        x1 = ins[0]
        k = x1.shape[-2] if bool(attrs.get(keys[0], False)) else x1.shape[-1]
        # outs[0].size is batch * M * N, so this is 2*M*N*K per batch entry exactly
        return FLOPS_PER_MAC * outs[0].size * int(k), _io_bytes(ins, outs)
    return cost


def _matmul(arrays: list[np.ndarray], t1: bool, t2: bool) -> np.ndarray:
    a, b = arrays[0], arrays[1]
    if t1:
        a = np.swapaxes(a, -1, -2)
    if t2:
        b = np.swapaxes(b, -1, -2)
    bias = _present_array(arrays, 2)
    if a.dtype == np.int8:
        # int8 x int8 sums are exact in float64 (|sum| <= K * 2**14 << 2**53), so BLAS gives
        # the exact integer result; wrapping to int32 then models the int32 accumulator.
        y = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
        if bias is not None:
            y = y + bias.astype(np.int64)
        return y.astype(np.int32)
    y = np.matmul(_f32(a), _f32(b))
    if bias is not None:
        y = y + bias.astype(np.float32)
    return np.asarray(y).astype(a.dtype, copy=False)


def _k_matmul(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """MatMul: ``op(x1) @ op(x2) (+ bias[N])`` for 2-D x1, x2, where ``transpose_x1`` means x1
    is supplied as [K, M] and ``transpose_x2`` means x2 is supplied as [N, K].

    float16 accumulates in float32; int8 x int8 gives int32 (cube-unit accumulation, wrapping
    at 32 bits); the bias is float32/float16 for float inputs and int32 for int8. The quantised
    inputs of the real op (offset_w, offset_x) are not emulated.
    """
    return [_matmul(arrays, bool(attrs["transpose_x1"]), bool(attrs["transpose_x2"]))]


def _k_batch_matmul(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """BatchMatMul: ``op(x1) @ op(x2)`` over the last two dims (>= 2-D inputs), numpy batch
    broadcasting; ``adj_x1``/``adj_x2`` mean [.., K, M] / [.., N, K] are supplied.

    Same dtypes as MatMul (int8 -> int32). BatchMatMulV2's optional bias is [N].
    """
    return [_matmul(arrays, bool(attrs["adj_x1"]), bool(attrs["adj_x2"]))]


def _gemm_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    """GEMM: a [M, K] (or [K, M]), b [K, N] (or [N, K]), c [M, N], alpha and beta scalars of
    c's dtype; y is c's spec."""
    _check_count("GEMM", len(specs), 5, 5)
    dt = _common_dtype("GEMM", specs, MATMUL_TYPES, (0, 1))
    _, m, n, _ = _mm_dims("GEMM", specs, attrs, ("transpose_a", "transpose_b"), False)
    c = specs[2]
    want = "int32" if dt == "int8" else c.dtype
    if tuple(c.shape) != (m, n) or c.dtype != want:
        _fail("GEMM", f"input 2 (c) must be {want}[{m}, {n}], got {c.dtype}{_dims(c.shape)}")
    for i in (3, 4):
        if specs[i].dtype != c.dtype or specs[i].size != 1:
            _fail("GEMM", f"input {i} ({'alpha' if i == 3 else 'beta'}) must be one "
                          f"{c.dtype} value, got {specs[i].dtype}{_dims(specs[i].shape)}")
    return [TensorSpec(c.dtype, (m, n), c.format)]


def _k_gemm(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """GEMM (the BLAS single op behind aclblasGemmEx): ``alpha * op(a) @ op(b) + beta * c``
    with ``transpose_a`` / ``transpose_b``; float16 accumulates in float32, int8 in int32."""
    a, b, c, alpha, beta = arrays
    ab = _matmul([a, b], bool(attrs["transpose_a"]), bool(attrs["transpose_b"]))
    if c.dtype == np.int32:
        y = (int(alpha.reshape(-1)[0]) * ab.astype(np.int64)
             + int(beta.reshape(-1)[0]) * c.astype(np.int64))
        return [y.astype(np.int32)]
    y = _f32(alpha).reshape(-1)[0] * _f32(ab) + _f32(beta).reshape(-1)[0] * _f32(c)
    return [np.asarray(y).astype(c.dtype, copy=False)]


# ============================================================================ Conv2D
# CANN's Conv2D (the op proto of nn_calculation_ops.h): x NCHW [n, c, h, w] or NHWC
# [n, h, w, c]; filter NCHW [cout, cin/groups, kh, kw] or HWCN [kh, kw, cin/groups, cout];
# y in x's format. strides and dilations are 4 values "in the dimension order of the data
# format of x" with the n and c entries 1 ([1, 1, h, w] for NCHW, [1, h, w, 1] for NHWC); the
# data_format attribute is "Reserved" there, so the layout comes from the tensor formats.


def _conv_layout(name: str, x_fmt: int, f_fmt: int) -> tuple[bool, bool]:
    """(x is NHWC, filter is HWCN) for the tensor formats; ND is read as NCHW."""
    if x_fmt not in (FMT_NCHW, FMT_NHWC, FMT_ND):
        _fail(name, f"input 0 format {_fmt(x_fmt)} is not emulated: x must be NCHW or NHWC "
                    "(ND is read as NCHW)")
    if f_fmt not in (FMT_NCHW, FMT_HWCN, FMT_ND):
        _fail(name, f"input 1 (filter) format {_fmt(f_fmt)} is not emulated: supply the "
                    "filter as NCHW [Cout, Cin/groups, kh, kw] or HWCN [kh, kw, Cin/groups, "
                    "Cout]")
    return x_fmt == FMT_NHWC, f_fmt == FMT_HWCN


def _conv_params(name: str, x_shape: Sequence[int], w_shape: Sequence[int],
                 attrs: dict[str, Any], x_nhwc: bool = False,
                 f_hwcn: bool = False) -> dict[str, int]:
    """Validated Conv2D geometry (x NCHW or NHWC, filter NCHW or HWCN), in NCHW terms."""
    layout = "NHWC" if x_nhwc else "NCHW"
    if len(x_shape) != 4:
        _fail(name, f"input 0 (x) must be 4-D {layout}, got shape {_dims(x_shape)}")
    if len(w_shape) != 4:
        _fail(name, f"input 1 (filter) must be 4-D "
                    f"{'[kh, kw, Cin/groups, Cout]' if f_hwcn else '[Cout, Cin/groups, kh, kw]'}"
                    f", got shape {_dims(w_shape)}")
    strides = _ints_attr(name, attrs, "strides", 4)
    pads = _ints_attr(name, attrs, "pads", 4)
    dilations = _ints_attr(name, attrs, "dilations", 4)
    groups = _int_attr(name, attrs, "groups")
    hi_, wi_, ni_, ci_ = (1, 2, 0, 3) if x_nhwc else (2, 3, 0, 1)
    order = "[1, h, w, 1] (NHWC order" if x_nhwc else "[1, 1, h, w] (NCHW order"
    for key, vals, lo, hi in (("strides", strides, 1, 63), ("dilations", dilations, 1, 255)):
        if vals[ni_] != 1 or vals[ci_] != 1:
            _fail(name, f"attribute {key!r} {vals} must be {order} of x, N and C entries 1)",
                  INVALID_PARAM)
        if not (lo <= vals[hi_] <= hi and lo <= vals[wi_] <= hi):
            _fail(name, f"attribute {key!r} {vals}: H and W values must be in [{lo}, {hi}]",
                  INVALID_PARAM)
    if not all(0 <= p <= 255 for p in pads):
        _fail(name, f"attribute 'pads' {pads} values must be in [0, 255]", INVALID_PARAM)
    if x_nhwc:
        n, h, w, c = (int(d) for d in x_shape)
    else:
        n, c, h, w = (int(d) for d in x_shape)
    if f_hwcn:
        kh, kw, cg, cout = (int(d) for d in w_shape)
    else:
        cout, cg, kh, kw = (int(d) for d in w_shape)
    if groups < 1 or c % groups or cout % groups:
        _fail(name, f"groups={groups} must divide input 0 channels ({c}) and input 1 output "
                    f"channels ({cout})", INVALID_PARAM)
    if cg * groups != c:
        _fail(name, f"input 1 (filter) shape {_dims(w_shape)} needs Cin/groups = {c // groups} "
                    f"for input 0 shape {_dims(x_shape)} ({layout}) and groups={groups}")
    if not (1 <= kh <= 255 and 1 <= kw <= 255):
        _fail(name, f"input 1 (filter) kernel {kh}x{kw} must be within [1, 255]")
    pt, pb, pl, pr = pads
    dh, dw = dilations[hi_], dilations[wi_]
    sh, sw = strides[hi_], strides[wi_]
    ho = (h + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
    wo = (w + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
    if ho < 1 or wo < 1:
        _fail(name, f"input 0 shape {_dims(x_shape)} with pads {pads} is smaller than the "
                    f"dilated {kh}x{kw} kernel of input 1 (output would be {ho}x{wo})")
    return {"n": n, "c": c, "h": h, "w": w, "cout": cout, "kh": kh, "kw": kw, "sh": sh,
            "sw": sw, "dh": dh, "dw": dw, "pt": pt, "pb": pb, "pl": pl, "pr": pr,
            "groups": groups, "ho": ho, "wo": wo}


def _conv_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    name = "Conv2D"
    _check_count(name, len(specs), 2, 4)
    dt = _common_dtype(name, specs, FLOAT, (0, 1))
    x, f = specs[0], specs[1]
    x_nhwc, f_hwcn = _conv_layout(name, x.format, f.format)
    p = _conv_params(name, x.shape, f.shape, attrs, x_nhwc, f_hwcn)
    _check_bias_and_offset(name, specs, attrs, dt, p["cout"], "Cout of input 1")
    shape = ((p["n"], p["ho"], p["wo"], p["cout"]) if x_nhwc
             else (p["n"], p["cout"], p["ho"], p["wo"]))
    return [TensorSpec(dt, shape, x.format)]


def _k_conv2d(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Conv2D: cross-correlation of x (NCHW, or NHWC by its tensor format) with a filter
    (NCHW [Cout, Cin/groups, kh, kw], or HWCN [kh, kw, Cin/groups, Cout]), zero padding
    ``pads`` [top, bottom, left, right], ``strides``/``dilations`` in x's dimension order,
    ``groups``, plus an optional bias[Cout]; y in x's format.

    Narrower than CANN: no quantised (offset_w/offset_x) inputs; ND x is read as NCHW.
    Computed in float32 with an im2col view (sliding_window_view) and one tensordot per group
    (NHWC x and HWCN filters are transposed to NCHW first, so both layouts give the same
    numbers).
    """
    fmts = tuple(attrs.get(FORMATS_ATTR, ()))
    x_nhwc, f_hwcn = _conv_layout("Conv2D", fmts[0] if fmts else FMT_ND,
                                  fmts[1] if len(fmts) > 1 else FMT_ND)
    x, w = arrays[0], arrays[1]
    p = _conv_params("Conv2D", x.shape, w.shape, attrs, x_nhwc, f_hwcn)
    x32, w32 = _f32(x), _f32(w)
    if x_nhwc:
        x32 = x32.transpose(0, 3, 1, 2)
    if f_hwcn:
        w32 = w32.transpose(3, 2, 0, 1)
    xp = np.pad(x32, ((0, 0), (0, 0), (p["pt"], p["pb"]), (p["pl"], p["pr"])))
    ekh, ekw = p["dh"] * (p["kh"] - 1) + 1, p["dw"] * (p["kw"] - 1) + 1
    win = sliding_window_view(xp, (ekh, ekw), axis=(2, 3))  # N, C, H', W', ekh, ekw
    win = win[:, :, ::p["sh"], ::p["sw"], ::p["dh"], ::p["dw"]]  # N, C, Ho, Wo, kh, kw
    g = p["groups"]
    cg, og = p["c"] // g, p["cout"] // g
    parts = [np.tensordot(win[:, i * cg:(i + 1) * cg], w32[i * og:(i + 1) * og],
                          axes=([1, 4, 5], [1, 2, 3])) for i in range(g)]  # N, Ho, Wo, og
    y = parts[0] if g == 1 else np.concatenate(parts, axis=-1)  # N, Ho, Wo, Cout
    bias = _present_array(arrays, 2)
    if bias is not None:
        y = y + bias.astype(np.float32).reshape(1, 1, 1, -1)
    if not x_nhwc:
        y = y.transpose(0, 3, 1, 2)
    return [np.ascontiguousarray(y, dtype=x.dtype)]


def _conv_cost(ins: list[TensorSpec], outs: list[TensorSpec],
               attrs: dict[str, Any]) -> tuple[int, int]:
    """2 * N*Cout*Ho*Wo * (Cin/groups)*kh*kw."""
    f = ins[1]
    macs = f.shape[:3] if f.format == FMT_HWCN else f.shape[1:]
    per_out = int(np.prod([int(d) for d in macs], dtype=np.int64))
    return FLOPS_PER_MAC * outs[0].size * per_out, _io_bytes(ins, outs)


# ============================================================================ pooling
def _pool_params(name: str, x_shape: Sequence[int], attrs: dict[str, Any]) -> dict[str, Any]:
    """Validated pooling geometry; TF SAME/VALID rules."""
    layout = _str_attr(name, attrs, "data_format")
    if layout not in ("NCHW", "NHWC"):
        _fail(name, f"attribute 'data_format' {layout!r} must be 'NCHW' or 'NHWC'",
              INVALID_PARAM)
    if len(x_shape) != 4:
        _fail(name, f"input 0 must be 4-D {layout}, got shape {_dims(x_shape)}")
    ksize = _ints_attr(name, attrs, "ksize", 4)
    strides = _ints_attr(name, attrs, "strides", 4)
    padding = _str_attr(name, attrs, "padding")
    hi, wi, ni, ci = (2, 3, 0, 1) if layout == "NCHW" else (1, 2, 0, 3)
    for key, vals in (("ksize", ksize), ("strides", strides)):
        if vals[ni] != 1 or vals[ci] != 1:
            _fail(name, f"attribute {key!r} {vals} must have 1 in the N and C entries "
                        f"({layout} order)", INVALID_PARAM)
    kh, kw, sh, sw = ksize[hi], ksize[wi], strides[hi], strides[wi]
    if kh < 1 or kw < 1 or kh * kw > 255:
        _fail(name, f"attribute 'ksize' {ksize}: the window must be at least 1x1 and at most "
                    "255 elements (kh*kw)", INVALID_PARAM)
    if not (1 <= sh <= 63 and 1 <= sw <= 63):
        _fail(name, f"attribute 'strides' {strides}: H and W strides must be in [1, 63]",
              INVALID_PARAM)
    h, w = int(x_shape[hi]), int(x_shape[wi])
    if padding == "VALID":
        ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
        pads = (0, 0, 0, 0)
        if h < kh or w < kw:
            _fail(name, f"input 0 shape {_dims(x_shape)} is smaller than the {kh}x{kw} window "
                        "with VALID padding")
    elif padding == "SAME":
        ho, wo = -(-h // sh), -(-w // sw)
        ph = max((ho - 1) * sh + kh - h, 0)
        pw = max((wo - 1) * sw + kw - w, 0)
        pads = (ph // 2, ph - ph // 2, pw // 2, pw - pw // 2)
    else:
        _fail(name, f"attribute 'padding' {padding!r} must be 'SAME' or 'VALID'", INVALID_PARAM)
    return {"layout": layout, "kh": kh, "kw": kw, "sh": sh, "sw": sw, "pads": pads, "ho": ho,
            "wo": wo}


def _pool_infer(name: str, allowed: frozenset[str]) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 1, 1)
        dt = _common_dtype(name, specs, allowed)
        x = specs[0]
        p = _pool_params(name, x.shape, attrs)
        named = {FMT_NCHW: "NCHW", FMT_NHWC: "NHWC"}.get(x.format)
        if named is not None and named != p["layout"]:
            _fail(name, f"input 0 has tensor format {named} but attribute data_format is "
                        f"{p['layout']!r} (the OpProto default is 'NHWC'); set data_format to "
                        f"{named!r}")
        n = x.shape[0]
        if p["layout"] == "NCHW":
            shape = (n, x.shape[1], p["ho"], p["wo"])
        else:
            shape = (n, p["ho"], p["wo"], x.shape[3])
        return [TensorSpec(dt, tuple(int(d) for d in shape), x.format)]
    return infer


def _pool(x: np.ndarray, attrs: dict[str, Any], name: str, average: bool) -> np.ndarray:
    p = _pool_params(name, x.shape, attrs)
    nchw = x if p["layout"] == "NCHW" else x.transpose(0, 3, 1, 2)
    pt, pb, pl, pr = p["pads"]
    width = ((0, 0), (0, 0), (pt, pb), (pl, pr))
    if average:
        x32 = _f32(nchw)
        xp = np.pad(x32, width)
        win = sliding_window_view(xp, (p["kh"], p["kw"]), axis=(2, 3))[:, :, ::p["sh"], ::p["sw"]]
        # SAME padding is excluded from the divisor (TF/CANN AvgPool): count the real elements
        ones = np.pad(np.ones(nchw.shape[2:], np.float32), width[2:])
        counts = sliding_window_view(ones, (p["kh"], p["kw"]))[::p["sh"], ::p["sw"]].sum((-2, -1))
        y = (win.sum(axis=(-2, -1)) / counts).astype(x.dtype)
    else:
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(nchw, width, constant_values=np.array(low).astype(x.dtype))
        win = sliding_window_view(xp, (p["kh"], p["kw"]), axis=(2, 3))[:, :, ::p["sh"], ::p["sw"]]
        y = win.max(axis=(-2, -1))
    y = y if p["layout"] == "NCHW" else y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y)


def _k_maxpool(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """MaxPool: window maximum with ``ksize``/``strides`` (4 values in ``data_format`` order)
    and TF ``padding`` SAME (padding never wins) or VALID.

    ``data_format`` selects the layout of the data (NCHW or NHWC, OpProto default NHWC); an
    NCHW/NHWC tensor format that disagrees with it is rejected by infer. Any dtype of the table.
    """
    return [_pool(arrays[0], attrs, "MaxPool", average=False)]


def _k_avgpool(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """AvgPool: window mean, same attributes as MaxPool; with SAME padding the divisor counts
    only the real (unpadded) elements, as TF and CANN's AvgPool do. Computed in float32."""
    return [_pool(arrays[0], attrs, "AvgPool", average=True)]


def _pool_cost(name: str) -> Cost:
    def cost(ins: list[TensorSpec], outs: list[TensorSpec],
             attrs: dict[str, Any]) -> tuple[int, int]:
        p = _pool_params(name, ins[0].shape, attrs)
        return FLOPS_POOL_TAP * outs[0].size * p["kh"] * p["kw"], _io_bytes(ins, outs)
    return cost


def _gap_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    name = "GlobalAveragePool"
    _check_count(name, len(specs), 1, 1)
    dt = _common_dtype(name, specs, FLOAT)
    x = specs[0]
    if len(x.shape) < 3:
        _fail(name, f"input 0 must be N, C, spatial... (rank >= 3), got shape {_dims(x.shape)}")
    if x.format == FMT_NHWC:
        _fail(name, "input 0 format NHWC is not emulated: only NCHW (or ND) is supported")
    return [TensorSpec(dt, (*x.shape[:2], *(1,) * (len(x.shape) - 2)), x.format)]


def _k_global_avgpool(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """GlobalAveragePool (ONNX's name): mean over every dim after N, C -> [N, C, 1, 1].
    NCHW only. Computed in float32."""
    x = arrays[0]
    axes = tuple(range(2, x.ndim))
    return [_f32(x).mean(axis=axes, keepdims=True).astype(x.dtype, copy=False)]


# ============================================================================ Cast
def _cast_target(name: str, attrs: dict[str, Any]) -> str:
    dst = _int_attr(name, attrs, "dst_type")
    if dst not in ACL_TO_NUMPY:
        _fail(name, f"dst_type {dst} is not a supported aclDataType "
                    f"(supported: {sorted(ACL_TO_NUMPY)})", DTYPE_ERROR)
    return ACL_TO_NUMPY[dst]


def _cast_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    _check_count("Cast", len(specs), 1, 1)
    _common_dtype("Cast", specs, ANY)
    return [TensorSpec(_cast_target("Cast", attrs), specs[0].shape, specs[0].format)]


def _k_cast(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Cast: ``x.astype(dst_type)`` with numpy semantics: float -> int truncates toward zero,
    narrowing integers wrap, float32 -> float16 rounds to nearest (overflow -> inf), x != 0 ->
    bool. NaN or out-of-range float -> int gives numpy's (platform) value where the device
    saturates. ``dst_type`` is an aclDataType number; acl.op.cast's ``truncate`` is ignored.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return [arrays[0].astype(_cast_target("Cast", attrs))]


# ============================================================================ data movement
def _perm(name: str, perm: Sequence[int], rank: int) -> tuple[int, ...]:
    norm = [a + rank if a < 0 else a for a in perm]
    if sorted(norm) != list(range(rank)):
        _fail(name, f"perm {list(perm)} is not a permutation of the {rank} dims of input 0",
              INVALID_PARAM)
    return tuple(norm)


def _transpose_infer(name: str, from_input: bool) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 2 if from_input else 1, 2 if from_input else 1)
        dt = _common_dtype(name, specs, ANY, (0,))
        raw = (_const_input(name, specs, attrs, 1, "perm") if from_input
               else _ints_attr(name, attrs, "perm"))
        x = specs[0]
        perm = _perm(name, raw, len(x.shape))
        return [TensorSpec(dt, tuple(x.shape[a] for a in perm), x.format)]
    return infer


def _k_transpose(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Transpose: ``np.transpose(x, perm)`` with ``perm`` a constant int32/int64 input #1."""
    x = arrays[0]
    perm = _perm("Transpose", [int(v) for v in np.asarray(arrays[1]).reshape(-1)], x.ndim)
    return [np.ascontiguousarray(np.transpose(x, perm))]


def _k_transpose_d(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """TransposeD: ``np.transpose(x, perm)`` with ``perm`` a required list-int attribute."""
    x = arrays[0]
    perm = _perm("TransposeD", _ints_attr("TransposeD", attrs, "perm"), x.ndim)
    return [np.ascontiguousarray(np.transpose(x, perm))]


def _reshape_target(name: str, x_shape: Sequence[int], dims: Sequence[int]) -> tuple[int, ...]:
    size = math.prod(int(d) for d in x_shape)
    if any(d < -1 for d in dims) or list(dims).count(-1) > 1:
        _fail(name, f"shape {list(dims)} may hold at most one -1 and no other negative value",
              INVALID_PARAM)
    known = math.prod(d for d in dims if d != -1)
    out = list(dims)
    if -1 in out:
        if known == 0 or size % known:
            _fail(name, f"shape {list(dims)} cannot be inferred for input 0 shape "
                        f"{_dims(x_shape)} ({size} elements)")
        out[out.index(-1)] = size // known
    if math.prod(out) != size:
        _fail(name, f"shape {list(dims)} holds {math.prod(out)} elements but input 0 shape "
                    f"{_dims(x_shape)} holds {size}")
    return tuple(out)


def _reshape_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    name = "Reshape"
    _check_count(name, len(specs), 2, 2)
    dt = _common_dtype(name, specs, ANY, (0,))
    if _int_attr(name, attrs, "axis") != 0 or _int_attr(name, attrs, "num_axes") != -1:
        _fail(name, "attributes axis/num_axes (reshape of a sub-range of dims) are not emulated")
    dims = _const_input(name, specs, attrs, 1, "shape")
    return [TensorSpec(dt, _reshape_target(name, specs[0].shape, dims), specs[0].format)]


def _k_reshape(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Reshape: x with the shape of the constant int32/int64 input #1; one -1 is inferred.

    Unlike ONNX, 0 is a literal zero-size dim (not "copy this dim"); the sub-range attrs
    ``axis``/``num_axes`` of the GE prototype must keep their defaults.
    """
    x = arrays[0]
    dims = [int(v) for v in np.asarray(arrays[1]).reshape(-1)]
    return [x.reshape(_reshape_target("Reshape", x.shape, dims)).copy()]


def _flatten_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    name = "Flatten"
    _check_count(name, len(specs), 1, 1)
    dt = _common_dtype(name, specs, ANY)
    x = specs[0]
    axis = _axis(name, _int_attr(name, attrs, "axis"), len(x.shape), "axis", allow_end=True)
    shape = (math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
    return [TensorSpec(dt, tuple(int(d) for d in shape), x.format)]


def _k_flatten(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Flatten: x as 2-D [prod(shape[:axis]), prod(shape[axis:])], ``axis`` default 1
    (ONNX semantics; axis may be negative or equal to the rank)."""
    x = arrays[0]
    axis = _axis("Flatten", int(attrs["axis"]), x.ndim, "axis", allow_end=True)
    return [x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:])).copy()]


def _concat_axis(name: str, attrs: dict[str, Any], rank: int, onnx_axis: bool) -> int:
    key = "concat_dim" if "concat_dim" in attrs or not onnx_axis else "axis"
    return _axis(name, _int_attr(name, attrs, key), rank, key)


def _concat_infer(name: str, onnx_axis: bool) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        _check_count(name, len(specs), 1, MAX_CONCAT_INPUTS)
        dt = _common_dtype(name, specs, ANY)
        first = specs[0]
        rank = len(first.shape)
        if rank == 0:
            _fail(name, "input 0 must have rank >= 1, got a scalar")
        axis = _concat_axis(name, attrs, rank, onnx_axis)
        if "N" in attrs and _int_attr(name, attrs, "N") != len(specs):
            _fail(name, f"attribute N={attrs['N']} but {len(specs)} inputs were given",
                  INVALID_PARAM)
        total = 0
        for i, s in enumerate(specs):
            if len(s.shape) != rank or any(s.shape[d] != first.shape[d]
                                           for d in range(rank) if d != axis):
                _fail(name, f"input {i} shape {_dims(s.shape)} does not match input 0 shape "
                            f"{_dims(first.shape)} outside concat dim {axis}")
            total += int(s.shape[axis])
        shape = tuple(total if d == axis else int(first.shape[d]) for d in range(rank))
        return [TensorSpec(dt, shape, first.format)]
    return infer


def _k_concat_d(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ConcatD: the N inputs joined along the ``concat_dim`` attribute (required); the optional
    ``N`` attr, if given, must equal the input count (GE's default N=1 is not enforced)."""
    return [np.concatenate(arrays, axis=_concat_axis("ConcatD", attrs, arrays[0].ndim, False))]


def _k_concat(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Concat (emulator form): ConcatD semantics, taking ``concat_dim`` or ONNX's ``axis`` as
    an attribute. The real GE Concat takes concat_dim as an input tensor instead."""
    return [np.concatenate(arrays, axis=_concat_axis("Concat", attrs, arrays[0].ndim, True))]


# ============================================================================ reductions
def _reduce_axes(name: str, specs: Sequence[TensorSpec], attrs: dict[str, Any],
                 from_input: bool) -> tuple[int, ...]:
    """Axes to reduce. Const-input form: empty axes is a no-op unless noop_with_empty_axes is
    false (then all). Attr (``D``) form: empty axes reduces every dim, as TBE reduce_*_d."""
    rank = len(specs[0].shape)
    if from_input:
        raw = _const_input(name, specs, attrs, 1, "axes")
        if not raw:
            return () if _bool_attr(name, attrs, "noop_with_empty_axes") else tuple(range(rank))
    else:
        raw = _ints_attr(name, attrs, "axes")
        if not raw:
            return tuple(range(rank))
    return _axes(name, raw, rank, "reduce axis")


def _reduce_infer(name: str, from_input: bool) -> Infer:
    def infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
        n = 2 if from_input else 1
        _check_count(name, len(specs), n, n)
        dt = _common_dtype(name, specs, NUMERIC, (0,))
        axes = _reduce_axes(name, specs, attrs, from_input)
        keep = _bool_attr(name, attrs, "keep_dims")
        x = specs[0]
        shape = tuple(1 if d in axes else int(s) for d, s in enumerate(x.shape)
                      if keep or d not in axes)
        return [TensorSpec(dt, shape, x.format)]
    return infer


def _reduce(arrays: list[np.ndarray], attrs: dict[str, Any], name: str, from_input: bool,
            mean: bool) -> np.ndarray:
    x = arrays[0]
    specs = [TensorSpec(a.dtype.name, tuple(a.shape)) for a in arrays]
    consts = {1: arrays[1]} if from_input else {}
    axes = _reduce_axes(name, specs, {**attrs, "__consts__": consts}, from_input)
    keep = bool(attrs["keep_dims"])
    count = math.prod(x.shape[a] for a in axes)
    if x.dtype.kind == "f":
        s = _f32(x).sum(axis=axes, keepdims=keep)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = s / np.float32(count) if mean else s
        return np.asarray(y).astype(x.dtype)
    s = x.astype(np.int64).sum(axis=axes, keepdims=keep)
    if mean:
        q = np.abs(s) // max(count, 1)  # integer mean truncates toward zero
        s = np.where(s < 0, -q, q)
    return np.asarray(s).astype(x.dtype)  # wraps like an accumulator of the input dtype


def _k_reduce_sum(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ReduceSum: sum of x over the constant ``axes`` input #1, ``keep_dims`` keeps them as 1.

    Empty axes is the identity (``noop_with_empty_axes`` true, the prototype default). float16
    sums in float32; integer sums wrap to the input dtype.
    """
    return [_reduce(arrays, attrs, "ReduceSum", True, False)]


def _k_reduce_sum_d(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ReduceSumD: ReduceSum with ``axes`` as a required list-int attribute; empty axes
    reduces every dim."""
    return [_reduce(arrays, attrs, "ReduceSumD", False, False)]


def _k_reduce_mean(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ReduceMean: mean of x over the constant ``axes`` input #1 (same axes rules as
    ReduceSum); float16 in float32; integer means truncate toward zero."""
    return [_reduce(arrays, attrs, "ReduceMean", True, True)]


def _k_reduce_mean_d(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ReduceMeanD: ReduceMean with ``axes`` as a required list-int attribute; empty axes
    reduces every dim."""
    return [_reduce(arrays, attrs, "ReduceMeanD", False, True)]


# ============================================================================ registration
def _register_all() -> None:
    for name, kernel in (("Add", _k_add), ("Sub", _k_sub), ("Mul", _k_mul), ("Div", _k_div)):
        _define(name, (2, 2), 1, NUMERIC, _binary_infer(name), kernel,
                _out_cost(FLOPS_ELEMENTWISE))
    for name in ("Relu", "ReLU"):
        _define(name, (1, 1), 1, NUMERIC, _unary_infer(name, NUMERIC), _k_relu,
                _out_cost(FLOPS_ELEMENTWISE))
    for name, kernel in (("Gelu", _k_gelu), ("Sigmoid", _k_sigmoid), ("Tanh", _k_tanh)):
        _define(name, (1, 1), 1, FLOAT, _unary_infer(name, FLOAT), kernel,
                _out_cost(FLOPS_TRANSCENDENTAL))
    softmax_defaults = {"axes": [-1], "half_to_float": False}
    _define("SoftmaxV2", (1, 1), 1, FLOAT, _softmax_infer("SoftmaxV2", False), _k_softmax_v2,
            _out_cost(FLOPS_SOFTMAX), softmax_defaults)
    _define("Softmax", (1, 1), 1, FLOAT, _softmax_infer("Softmax", True), _k_softmax,
            _out_cost(FLOPS_SOFTMAX), softmax_defaults)
    _define("LayerNorm", (3, 3), 3, FLOAT, _layernorm_infer, _k_layernorm,
            _in_cost(FLOPS_LAYERNORM),
            {"begin_norm_axis": 0, "begin_params_axis": 0, "epsilon": 1e-7})

    mm = ("transpose_x1", "transpose_x2")
    bmm = ("adj_x1", "adj_x2")
    _define("MatMul", (2, 3), 1, MATMUL_TYPES, _mm_infer("MatMul", mm, False, 3), _k_matmul,
            _mm_cost(mm), {"transpose_x1": False, "transpose_x2": False})
    _define("MatMulV2", (2, 4), 1, MATMUL_TYPES, _mm_infer("MatMulV2", mm, False, 4),
            _k_matmul, _mm_cost(mm), {"transpose_x1": False, "transpose_x2": False,
                                      "offset_x": 0})
    # the single op aclblasGemmEx runs (hicann/ge api/acl/acl_cblas/single_op/blas/
    # gemm_ops.cpp: op type "GEMM", inputs a, b, c, alpha, beta, attrs transpose_a/b)
    gemm = ("transpose_a", "transpose_b")
    _define("GEMM", (5, 5), 1, MATMUL_TYPES, _gemm_infer, _k_gemm, _mm_cost(gemm),
            {"transpose_a": False, "transpose_b": False})
    _define("BatchMatMul", (2, 2), 1, MATMUL_TYPES, _mm_infer("BatchMatMul", bmm, True, 2),
            _k_batch_matmul, _mm_cost(bmm), {"adj_x1": False, "adj_x2": False})
    _define("BatchMatMulV2", (2, 4), 1, MATMUL_TYPES, _mm_infer("BatchMatMulV2", bmm, True, 4),
            _k_batch_matmul, _mm_cost(bmm), {"adj_x1": False, "adj_x2": False, "offset_x": 0})

    # strides and pads are required (no default); data_format is "Reserved" and ignored: the
    # layout follows x's tensor format (NCHW or NHWC; ND read as NCHW)
    _define("Conv2D", (2, 4), 1, FLOAT, _conv_infer, _k_conv2d, _conv_cost,
            {"dilations": [1, 1, 1, 1], "groups": 1, "data_format": "NHWC", "offset_x": 0})
    _define("MaxPool", (1, 1), 1, NUMERIC, _pool_infer("MaxPool", NUMERIC), _k_maxpool,
            _pool_cost("MaxPool"), {"data_format": "NHWC"})
    _define("AvgPool", (1, 1), 1, FLOAT, _pool_infer("AvgPool", FLOAT), _k_avgpool,
            _pool_cost("AvgPool"), {"data_format": "NHWC"})
    _define("GlobalAveragePool", (1, 1), 1, FLOAT, _gap_infer, _k_global_avgpool,
            _in_cost(FLOPS_REDUCE))

    _define("Cast", (1, 1), 1, ANY, _cast_infer, _k_cast, _out_cost(FLOPS_CAST))
    _define("Transpose", (2, 2), 1, ANY, _transpose_infer("Transpose", True), _k_transpose,
            _out_cost(FLOPS_MOVE), const_inputs=(1,))
    _define("TransposeD", (1, 1), 1, ANY, _transpose_infer("TransposeD", False),
            _k_transpose_d, _out_cost(FLOPS_MOVE))
    _define("Reshape", (2, 2), 1, ANY, _reshape_infer, _k_reshape, _out_cost(FLOPS_MOVE),
            {"axis": 0, "num_axes": -1}, const_inputs=(1,))
    _define("Flatten", (1, 1), 1, ANY, _flatten_infer, _k_flatten, _out_cost(FLOPS_MOVE),
            {"axis": 1})
    _define("ConcatD", (1, MAX_CONCAT_INPUTS), 1, ANY, _concat_infer("ConcatD", False),
            _k_concat_d, _out_cost(FLOPS_MOVE))
    _define("Concat", (1, MAX_CONCAT_INPUTS), 1, ANY, _concat_infer("Concat", True),
            _k_concat, _out_cost(FLOPS_MOVE))

    reduce_defaults = {"keep_dims": False, "noop_with_empty_axes": True}
    _define("ReduceSum", (2, 2), 1, NUMERIC, _reduce_infer("ReduceSum", True), _k_reduce_sum,
            _in_cost(FLOPS_REDUCE), reduce_defaults, const_inputs=(1,))
    _define("ReduceMean", (2, 2), 1, NUMERIC, _reduce_infer("ReduceMean", True),
            _k_reduce_mean, _in_cost(FLOPS_REDUCE), reduce_defaults, const_inputs=(1,))
    _define("ReduceSumD", (1, 1), 1, NUMERIC, _reduce_infer("ReduceSumD", False),
            _k_reduce_sum_d, _in_cost(FLOPS_REDUCE), {"keep_dims": False})
    _define("ReduceMeanD", (1, 1), 1, NUMERIC, _reduce_infer("ReduceMeanD", False),
            _k_reduce_mean_d, _in_cost(FLOPS_REDUCE), {"keep_dims": False})



# ============================================================================ AIPP
#: AIPP defaults: the JPEG (BT.601 full-range) YUV -> RGB matrix and biases of the ATC AIPP
#: configuration templates (``matrix_r0c0 .. matrix_r2c2``, ``input_bias_0 .. 2``): in
#: 1/256 units, R = Y + 1.402 (V-128), G = Y - 0.344 (U-128) - 0.714 (V-128),
#: B = Y + 1.772 (U-128).
AIPP_MATRIX_BT601_JPEG = (256, 0, 359, 256, -88, -183, 256, 454, 0)
AIPP_INPUT_BIAS = (0, 128, 128)
FLOPS_AIPP = 8  # per output element: 3 multiply-adds of the colour matrix, subtract, scale
AIPP_DEFAULTS: dict[str, Any] = {
    "input_format": "YUV420SP_U8", "src_image_size_w": 0, "src_image_size_h": 0,
    "csc_switch": True, "rbuv_swap_switch": False,
    "matrix": list(AIPP_MATRIX_BT601_JPEG), "input_bias": list(AIPP_INPUT_BIAS),
    "mean_chn": [0, 0, 0], "min_chn": [0.0, 0.0, 0.0], "var_reci_chn": [1.0, 1.0, 1.0],
}


def _aipp_floats(attrs: dict[str, Any], key: str) -> list[float]:
    v = _require("Aipp", attrs, key)
    if not isinstance(v, list | tuple) or len(v) != 3 or not all(
            isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
            for x in v):
        _fail("Aipp", f"attribute {key!r} must be 3 numbers (one per channel), got {v!r}",
              INVALID_PARAM)
    return [float(x) for x in v]


def _aipp_size(specs: list[TensorSpec], attrs: dict[str, Any]) -> tuple[int, int, int]:
    """(batch, height, width) of the picture; checks the format, dtype and sizes."""
    name = "Aipp"
    _check_count(name, len(specs), 1, 1)
    x = specs[0]
    if _str_attr(name, attrs, "input_format") != "YUV420SP_U8":
        _fail(name, f"input_format {attrs['input_format']!r} is not supported: the emulated "
                    "AIPP converts YUV420SP_U8 (NV12/NV21) only")
    if x.dtype != "uint8":
        _fail(name, f"input 0 must be uint8 (YUV420SP_U8), got {x.dtype}", DTYPE_ERROR)
    if len(x.shape) != 3 or x.shape[1] % 3 or x.shape[1] == 0 or x.shape[2] == 0:
        _fail(name, f"input 0 must be [N, H*3/2, W] (a Y plane of H rows followed by H/2 rows "
                    f"of interleaved UV), got {_dims(x.shape)}")
    n, rows, w = x.shape
    h = rows * 2 // 3
    if h % 2 or w % 2:
        _fail(name, f"YUV420SP needs an even width and height, got {w}x{h}")
    for key, got in (("src_image_size_w", w), ("src_image_size_h", h)):
        want = _int_attr(name, attrs, key)
        if want not in (0, got):
            _fail(name, f"{key} is {want} but the input holds a {w}x{h} picture")
    for key, count in (("matrix", 9), ("input_bias", 3), ("mean_chn", 3)):
        _ints_attr(name, attrs, key, count)
    for key in ("min_chn", "var_reci_chn"):
        _aipp_floats(attrs, key)
    return n, h, w


def _aipp_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    n, h, w = _aipp_size(specs, attrs)
    return [TensorSpec("float32", (n, 3, h, w), FMT_NCHW)]


def _k_aipp(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Aipp: what ATC's ``--insert_op_conf`` static AIPP does in front of a model, for
    ``input_format: YUV420SP_U8``. Input [N, H*3/2, W] uint8 NV12 (NV21 with
    ``rbuv_swap_switch``); output [N, 3, H, W] float32. Each pixel's chroma is its 2x2
    block's UV pair; with ``csc_switch`` the colour matrix (``matrix``, 9 ints in 1/256,
    default BT.601 JPEG full range) maps (Y, U, V) minus ``input_bias`` to 8-bit RGB, rounded
    to nearest and saturated to 0..255; then each channel c becomes
    ``(pixel - mean_chn[c] - min_chn[c]) * var_reci_chn[c]``.

    Differs from real ACL: real AIPP feeds the network float16 and also crops, pads and
    resizes (``crop``, ``padding``, ``resize`` switches), which this op does not do; its
    exact rounding of the colour matrix is not documented."""
    n, h, w = _aipp_size([TensorSpec(arrays[0].dtype.name, tuple(arrays[0].shape))], attrs)
    x = arrays[0]
    y = x[:, :h, :].astype(np.int32)
    uv = x[:, h:, :].reshape(n, h // 2, w // 2, 2).astype(np.int32)
    iu, iv = (1, 0) if attrs["rbuv_swap_switch"] else (0, 1)
    u = np.repeat(np.repeat(uv[..., iu], 2, axis=1), 2, axis=2)
    v = np.repeat(np.repeat(uv[..., iv], 2, axis=1), 2, axis=2)
    planes = np.stack([y, u, v], axis=1)  # N, 3, H, W
    if attrs["csc_switch"]:
        m = np.asarray(attrs["matrix"], dtype=np.int64).reshape(3, 3)
        bias = np.asarray(attrs["input_bias"], dtype=np.int64).reshape(1, 3, 1, 1)
        acc = np.einsum("ij,njhw->nihw", m, planes.astype(np.int64) - bias)
        planes = np.clip((acc + 128) >> 8, 0, 255)
    mean = np.asarray(attrs["mean_chn"], dtype=np.float32).reshape(1, 3, 1, 1)
    low = np.asarray(attrs["min_chn"], dtype=np.float32).reshape(1, 3, 1, 1)
    scale = np.asarray(attrs["var_reci_chn"], dtype=np.float32).reshape(1, 3, 1, 1)
    out = (planes.astype(np.float32) - mean - low) * scale
    return [np.ascontiguousarray(out, dtype=np.float32)]


def _register_aipp() -> None:
    _define("Aipp", (1, 1), 1, frozenset({"uint8"}), _aipp_infer, _k_aipp,
            _out_cost(FLOPS_AIPP), AIPP_DEFAULTS)


# ============================================================================ Slice, ArgMaxV2
# The operators the public samples' single-op models name (Ascend/samples python/:
# 4_op_dev/2_verify_op/acl_execute_slice/src/slice.json and the classification sample's
# op_models/op_list.json), with GE's prototypes: Slice(x, offsets, size) -> y and
# ArgMaxV2(x, dimension) -> y with attr ``dtype``.
def _slice_bounds(name: str, specs: Sequence[TensorSpec],
                  attrs: dict[str, Any]) -> list[tuple[int, int]]:
    x = specs[0]
    rank = len(x.shape)
    offsets = _const_input(name, specs, attrs, 1, "offsets")
    sizes = _const_input(name, specs, attrs, 2, "size")
    if len(offsets) != rank or len(sizes) != rank:
        _fail(name, f"offsets ({len(offsets)} values) and size ({len(sizes)}) must give one "
                    f"value per dimension of input 0 {_dims(x.shape)}", INVALID_PARAM)
    out = []
    for d, (off, n, dim) in enumerate(zip(offsets, sizes, x.shape, strict=True)):
        n = int(dim) - off if n == -1 else n  # size -1: to the end of the dimension
        if off < 0 or n < 0 or off + n > int(dim):
            _fail(name, f"dimension {d}: offset {off} and size {sizes[d]} leave the input's "
                        f"{dim} elements", INVALID_PARAM)
        out.append((off, off + n))
    return out


def _slice_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    _check_count("Slice", len(specs), 3, 3)
    _common_dtype("Slice", specs, ANY, (0,))
    bounds = _slice_bounds("Slice", specs, attrs)
    return [TensorSpec(specs[0].dtype, tuple(hi - lo for lo, hi in bounds), specs[0].format)]


def _k_slice(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """Slice: ``x[offsets[i] : offsets[i] + size[i]]`` in every dimension (size -1: to the
    end). offsets and size are const int32/int64 inputs, one value per dimension."""
    specs = [TensorSpec(a.dtype.name, tuple(a.shape)) for a in arrays]
    bounds = _slice_bounds("Slice", specs, {**attrs, "__consts__": {1: arrays[1],
                                                                     2: arrays[2]}})
    return [np.ascontiguousarray(arrays[0][tuple(slice(lo, hi) for lo, hi in bounds)])]


#: ArgMaxV2 output types (GE: y is int32 or int64)
ARGMAX_TYPES = {3: "int32", 9: "int64"}


def _argmax_axis(name: str, specs: Sequence[TensorSpec], attrs: dict[str, Any]) -> int:
    values = _const_input(name, specs, attrs, 1, "dimension")
    if len(values) != 1:
        _fail(name, f"input 1 (dimension) must hold one axis, got {values}", INVALID_PARAM)
    return _axis(name, values[0], len(specs[0].shape), "dimension")


def _argmax_infer(specs: list[TensorSpec], attrs: dict[str, Any]) -> list[TensorSpec]:
    _check_count("ArgMaxV2", len(specs), 2, 2)
    _common_dtype("ArgMaxV2", specs, NUMERIC, (0,))
    x = specs[0]
    if not x.shape:
        _fail("ArgMaxV2", "input 0 must have at least one dimension")
    axis = _argmax_axis("ArgMaxV2", specs, attrs)
    dtype = ARGMAX_TYPES.get(_int_attr("ArgMaxV2", attrs, "dtype"))
    if dtype is None:
        _fail("ArgMaxV2", f"attr dtype {attrs['dtype']} is not int32 (3) or int64 (9)",
              INVALID_PARAM)
    shape = tuple(int(d) for i, d in enumerate(x.shape) if i != axis) or (1,)
    return [TensorSpec(dtype, shape, x.format)]


def _k_argmax(arrays: list[np.ndarray], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ArgMaxV2: the index of the largest element along ``dimension`` (a const input), the
    first one on ties; NaN counts as largest (numpy). The dimension is removed; a 1-D input
    gives shape [1], as the public classification sample's compiled op (op_list.json:
    x [1000] -> y [1]). Differs: the ``dtype`` attr defaults to int32 (3), the type that
    sample's op is compiled for without setting the attr (GE's prototype default is int64)."""
    specs = [TensorSpec(a.dtype.name, tuple(a.shape)) for a in arrays]
    axis = _argmax_axis("ArgMaxV2", specs, {**attrs, "__consts__": {1: arrays[1]}})
    x = _f32(arrays[0]) if arrays[0].dtype.kind == "f" else arrays[0]
    y = np.argmax(x, axis=axis).astype(ARGMAX_TYPES[int(attrs["dtype"])])
    return [y.reshape(-1) if y.ndim == 0 else y]


def _register_sample_ops() -> None:
    _define("Slice", (3, 3), 1, ANY, _slice_infer, _k_slice, _out_cost(FLOPS_MOVE),
            const_inputs=(1, 2))
    _define("ArgMaxV2", (2, 2), 1, NUMERIC, _argmax_infer, _k_argmax, _in_cost(FLOPS_REDUCE),
            {"dtype": 3}, const_inputs=(1,))


_register_all()
_register_aipp()
_register_sample_ops()

# The static AIPP ATC's --insert_op_conf inserts lives with its configuration (runtime/aipp.py);
# importing it registers InsertedAipp once the operators above are in.
from . import aipp as _aipp  # noqa: E402,F401
