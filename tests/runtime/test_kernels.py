"""Tests of the built-in operator kernels (acl_lab.runtime.kernels) against numpy references."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from acl_lab.runtime import kernels
from acl_lab.runtime.opdefs import REGISTRY, OpError, TensorSpec, get_op

NOT_FOUND = 100024
INVALID_PARAM = 100000
FLOATS = ["float32", "float16"]
NUMERIC = ["float32", "float16", "int32", "int8"]
ACL_DT = {"float32": 0, "float16": 1, "int8": 2, "int32": 3}

Arrays = list[np.ndarray]


# ------------------------------------------------------------------------- helpers
def rand(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0,
         positive: bool = False) -> np.ndarray:
    """Seeded test data: normal floats, small integers (no zeros when ``positive``)."""
    rng = np.random.default_rng(seed + 7919 * len(shape) + sum(shape))
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(shape)
        if positive:
            a = np.abs(a) + 0.5
        return a.astype(dtype)
    lo, hi = (1, 9) if positive else (-9, 10)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def run(name: str, arrays: Arrays, attrs: dict[str, Any] | None = None) -> Arrays:
    """get_op(name).compute."""
    return get_op(name).compute(arrays, dict(attrs or {}))


def specs_of(arrays: Arrays, fmt: int = 2) -> list[TensorSpec]:
    """TensorSpecs of arrays."""
    return [TensorSpec(a.dtype.name, tuple(a.shape), fmt) for a in arrays]


def infer(name: str, arrays: Arrays, attrs: dict[str, Any] | None = None,
          fmt: int = 2) -> list[TensorSpec]:
    """get_op(name).infer on the arrays' specs, const inputs passed as the runtime does."""
    op = get_op(name)
    consts = {i: arrays[i] for i in op.const_inputs if i < len(arrays)}
    return op.infer(specs_of(arrays, fmt), {**(attrs or {}), "__consts__": consts})


def cost(name: str, arrays: Arrays, attrs: dict[str, Any] | None = None) -> tuple[int, int]:
    """get_op(name).cost on the inferred output specs."""
    return get_op(name).cost(specs_of(arrays), infer(name, arrays, attrs), dict(attrs or {}))


def close(actual: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    """Dtype and shape exact; values within the tolerance for ``dtype`` (exact for ints)."""
    assert actual.dtype == np.dtype(dtype)
    assert actual.shape == expected.shape
    if np.dtype(dtype).kind in "iub":
        np.testing.assert_array_equal(actual, expected)
    elif dtype == "float16":
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=1e-2, atol=1e-3)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def f64(a: np.ndarray) -> np.ndarray:
    """float64 copy."""
    return a.astype(np.float64)


def raises(code: int, fn: Callable[[], Any], *words: str) -> OpError:
    """Assert ``fn`` raises OpError with ``code`` and all ``words`` in its message."""
    with pytest.raises(OpError) as info:
        fn()
    assert info.value.code == code, info.value.message
    for w in words:
        assert w in info.value.message, info.value.message
    return info.value


# ------------------------------------------------------------------------- one case per op
def _case(name: str, s: int, dtype: str | None = None) -> tuple[Arrays, dict[str, Any]]:
    """A valid call of ``name`` whose size grows with ``s`` (>= 1)."""
    f = dtype or "float32"
    cases: dict[str, Callable[[], tuple[Arrays, dict[str, Any]]]] = {
        "Add": lambda: ([rand((s, 3, 4), f), rand((3, 1), f, 1)], {}),
        "Sub": lambda: ([rand((s, 3, 4), f), rand((4,), f, 1)], {}),
        "Mul": lambda: ([rand((s, 1, 4), f), rand((3, 1), f, 1)], {}),
        "Div": lambda: ([rand((s, 3, 4), f), rand((3, 4), f, 1, positive=True)], {}),
        "Relu": lambda: ([rand((s, 5), f)], {}),
        "ReLU": lambda: ([rand((s, 5), f)], {}),
        "Gelu": lambda: ([rand((s, 5), f)], {}),
        "Sigmoid": lambda: ([rand((s, 5), f)], {}),
        "Tanh": lambda: ([rand((s, 5), f)], {}),
        "SoftmaxV2": lambda: ([rand((s, 6), f)], {"axes": [-1]}),
        "Softmax": lambda: ([rand((s, 6), f)], {"axis": 1}),
        "LayerNorm": lambda: ([rand((s, 4, 6), f), rand((6,), f, 1), rand((6,), f, 2)],
                              {"begin_norm_axis": -1, "begin_params_axis": -1}),
        "MatMul": lambda: ([rand((s, 8), f), rand((8, 5), f, 1), rand((5,), f, 2)], {}),
        "MatMulV2": lambda: ([rand((8, s), f), rand((5, 8), f, 1)],
                             {"transpose_x1": True, "transpose_x2": True}),
        "BatchMatMul": lambda: ([rand((s, 3, 4), f), rand((4, 6), f, 1)], {}),
        "BatchMatMulV2": lambda: ([rand((2, s, 4), f), rand((2, 4, 3), f, 1)], {}),
        "GEMM": lambda: ([rand((4, s), f), rand((5, 4), f, 1), rand((s, 5), f, 2),
                          rand((), f, 3), rand((), f, 4)],
                         {"transpose_a": True, "transpose_b": True}),
        "Conv2D": lambda: ([rand((1, 3, 4 + s, 4 + s), f), rand((4, 3, 3, 3), f, 1),
                            rand((4,), f, 2)], {"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1]}),
        "MaxPool": lambda: ([rand((1, 2, 4 + s, 4 + s), f)],
                            {"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "padding": "SAME",
                             "data_format": "NCHW"}),
        "AvgPool": lambda: ([rand((1, 2, 4 + s, 4 + s), f)],
                            {"ksize": [1, 1, 3, 3], "strides": [1, 1, 1, 1], "padding": "VALID",
                             "data_format": "NCHW"}),
        "GlobalAveragePool": lambda: ([rand((1, 3, s + 1, s + 2), f)], {}),
        "Cast": lambda: ([rand((s, 4), f)], {"dst_type": 1}),
        "Transpose": lambda: ([rand((s, 3, 4), f), np.array([2, 0, 1], np.int32)], {}),
        "TransposeD": lambda: ([rand((s, 3, 4), f)], {"perm": [2, 0, 1]}),
        "Reshape": lambda: ([rand((s, 6), f), np.array([-1, 3], np.int64)], {}),
        "Flatten": lambda: ([rand((s, 2, 3), f)], {}),
        "ConcatD": lambda: ([rand((s, 3), f), rand((2, 3), f, 1)], {"concat_dim": 0}),
        "Concat": lambda: ([rand((3, s), f), rand((3, 2), f, 1)], {"axis": -1}),
        "ReduceSum": lambda: ([rand((s, 4, 5), f), np.array([1], np.int32)], {"keep_dims": True}),
        "ReduceMean": lambda: ([rand((s, 4, 5), f), np.array([0, 2], np.int64)], {}),
        "ReduceSumD": lambda: ([rand((s, 4, 5), f)], {"axes": [0, 2]}),
        "ReduceMeanD": lambda: ([rand((s, 4, 5), f)], {"axes": [-1], "keep_dims": True}),
        "Slice": lambda: ([rand((s + 2, 6), f), np.array([1, 2], np.int32),
                           np.array([s + 1, -1], np.int32)], {}),
        "ArgMaxV2": lambda: ([rand((s, 7), f), np.array([1], np.int32)], {}),
        # an NV12 picture of 2(s+1) x 4(s+1) pixels: Y rows, then half as many UV rows
        "Aipp": lambda: ([np.random.default_rng(s).integers(
            0, 256, (1, 3 * (s + 1), 4 * (s + 1)), dtype=np.uint8)], {}),
        # the op ATC inserts for --insert_op_conf: an RGB888 picture of (s+1) x 2(s+1) pixels
        "InsertedAipp": lambda: ([np.random.default_rng(s).integers(
            0, 256, (1, s + 1, 2 * (s + 1), 3), dtype=np.uint8)], _inserted_aipp(s)),
    }
    return cases[name]()


def _inserted_aipp(s: int) -> dict[str, Any]:
    from acl_lab.runtime import aipp
    (cfg,) = aipp.parse_config("aipp_op { aipp_mode: static input_format: RGB888_U8 "
                               "mean_chn_0: 10 var_reci_chn_1: 0.5 }")
    g = aipp.geometry(cfg, TensorSpec("float32", (1, 3, s + 1, 2 * (s + 1)), 0))
    return aipp._attrs_of(cfg, g)


ALL_OPS = sorted(REGISTRY)  # importing acl_lab.runtime.kernels registered them
REQUIRED = {"Add", "Sub", "Mul", "Div", "MatMul", "BatchMatMul", "Relu", "ReLU", "Gelu",
            "Sigmoid", "Tanh", "SoftmaxV2", "Softmax", "LayerNorm", "Conv2D", "MaxPool",
            "AvgPool", "GlobalAveragePool", "Cast", "Transpose", "TransposeD", "Reshape",
            "Concat", "ReduceSum", "ReduceMean", "ReduceSumD", "ReduceMeanD", "Flatten"}


# ------------------------------------------------------------------------- registry
def test_registry_holds_every_required_op() -> None:
    """Importing the ops module registers every required op under its own name."""
    assert set(ALL_OPS) >= REQUIRED
    for name in ALL_OPS:
        assert get_op(name).name == name


def test_unknown_op_is_100024() -> None:
    """get_op of an unknown type raises OpError 100024 (ACL_ERROR_OP_NOT_FOUND)."""
    raises(NOT_FOUND, lambda: get_op("Nope"), "Nope")


@pytest.mark.parametrize("name", ALL_OPS)
def test_infer_matches_compute_for_every_op(name: str) -> None:
    """For every registered op, infer's output shapes/dtypes equal compute's outputs."""
    for s in (1, 3):
        arrays, attrs = _case(name, s)
        outs = run(name, arrays, attrs)
        want = infer(name, arrays, attrs)
        assert len(outs) == len(want) == get_op(name).outputs
        for o, w in zip(outs, want, strict=True):
            assert (o.dtype.name, o.shape) == (w.dtype, w.shape)


@pytest.mark.parametrize("name", ALL_OPS)
def test_cost_is_monotonic_in_size(name: str) -> None:
    """Cost (flops, bytes) are ints that do not shrink, and bytes grow, with the tensors."""
    small, big = cost(name, *_case(name, 1)), cost(name, *_case(name, 4))
    assert all(isinstance(v, int) for v in (*small, *big))
    assert small[0] <= big[0] and small[1] < big[1]


@pytest.mark.parametrize("name", ALL_OPS)
def test_bytes_moved_is_inputs_plus_outputs(name: str) -> None:
    """bytes_moved is the bytes of every input (weights and consts included) plus outputs."""
    arrays, attrs = _case(name, 2)
    outs = run(name, arrays, attrs)
    assert cost(name, arrays, attrs)[1] == sum(a.nbytes for a in arrays + outs)


@pytest.mark.parametrize("name", ["Add", "Gelu", "Conv2D", "MaxPool", "Transpose", "ReduceSum"])
def test_read_only_inputs_are_not_written(name: str) -> None:
    """Kernels accept read-only input arrays (np.frombuffer) and leave them unchanged."""
    arrays, attrs = _case(name, 2)
    frozen = [np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape) for a in arrays]
    before = [a.copy() for a in frozen]
    run(name, frozen, attrs)
    for a, b in zip(frozen, before, strict=True):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------- elementwise
BINARY_REF = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", ["Add", "Sub", "Mul", "Div"])
def test_binary_ops_broadcast(name: str, dtype: str) -> None:
    """Add/Sub/Mul/Div broadcast like numpy and match a float64/int64 reference."""
    a, b = rand((2, 3, 4), dtype), rand((3, 1), dtype, 1, positive=(name == "Div"))
    (y,) = run(name, [a, b])
    if name == "Div":
        ref = f64(a) / f64(b)
        ref = np.floor(ref) if dtype.startswith("int") else ref
    else:
        ref = BINARY_REF[name](f64(a), f64(b))
    close(y, ref.astype(dtype) if dtype.startswith("int") else ref, dtype)


def test_integer_add_wraps_and_div_floors() -> None:
    """int8 Add wraps at 8 bits; integer Div rounds toward -inf (CANN TBE div floors)."""
    (y,) = run("Add", [np.array([127, -128], np.int8), np.array([1, -1], np.int8)])
    assert y.tolist() == [-128, 127]
    (q,) = run("Div", [np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32)])
    assert q.tolist() == [3, -4, -4, 3]


def test_float_div_by_zero_is_ieee() -> None:
    """Float Div by zero gives ±inf and 0/0 gives nan, without raising."""
    (y,) = run("Div", [np.array([1.0, -1.0, 0.0], np.float32), np.zeros(3, np.float32)])
    assert y[0] == np.inf and y[1] == -np.inf and np.isnan(y[2])


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       dtype=st.sampled_from(NUMERIC), name=st.sampled_from(["Add", "Sub", "Mul", "Div"]))
def test_elementwise_infer_agrees_with_compute(shapes: Any, dtype: str, name: str) -> None:
    """On random broadcastable shapes, infer's spec equals compute's output and numpy's."""
    s1, s2 = shapes.input_shapes
    arrays = [rand(s1, dtype), rand(s2, dtype, 1, positive=True)]
    (y,) = run(name, arrays)
    (spec,) = infer(name, arrays)
    assert (y.dtype.name, y.shape) == (spec.dtype, spec.shape) == (dtype, shapes.result_shape)


@settings(max_examples=40, deadline=None)
@given(s1=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5),
       s2=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5))
def test_elementwise_rejects_non_broadcastable_shapes(s1: tuple[int, ...],
                                                      s2: tuple[int, ...]) -> None:
    """Shapes numpy cannot broadcast give 100024 naming the op, input 1 and both shapes."""
    try:
        np.broadcast_shapes(s1, s2)
    except ValueError:
        arrays = [rand(s1), rand(s2)]
        raises(NOT_FOUND, lambda: infer("Mul", arrays), "Mul", "input 1", str(list(s1)),
               str(list(s2)))
        raises(NOT_FOUND, lambda: run("Mul", arrays), "Mul")


def test_mixed_dtypes_are_rejected() -> None:
    """Inputs of different dtypes give 100024 (no compiled op matches mixed dtypes)."""
    arrays = [rand((2, 3)), rand((2, 3), "int32")]
    raises(kernels.DTYPE_ERROR, lambda: run("Add", arrays), "Add", "input 1", "int32", "float32")
    assert kernels.DTYPE_ERROR == NOT_FOUND


@pytest.mark.parametrize(("name", "arrays"), [
    ("Gelu", [rand((3,), "int32")]),
    ("SoftmaxV2", [rand((3,), "int8")]),
    ("MatMul", [rand((2, 2), "int32"), rand((2, 2), "int32")]),
    ("Add", [rand((3,), "float64"), rand((3,), "float64")]),
    ("Conv2D", [rand((1, 1, 3, 3), "int8"), rand((1, 1, 1, 1), "int8")]),
])
def test_unsupported_dtype_is_rejected(name: str, arrays: Arrays) -> None:
    """A dtype outside an op's table gives OpError 100024 naming the dtype."""
    raises(NOT_FOUND, lambda: run(name, arrays, {"strides": [1, 1, 1, 1], "pads": [0] * 4}),
           name, arrays[0].dtype.name, "not supported")


# ------------------------------------------------------------------------- activations
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", ["Relu", "ReLU"])
def test_relu(name: str, dtype: str) -> None:
    """Relu (and its alias ReLU) is max(x, 0) in the input dtype."""
    x = rand((4, 5), dtype)
    (y,) = run(name, [x])
    close(y, np.where(x > 0, x, 0).astype(dtype), dtype)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("name", "ref"), [
    ("Gelu", _gelu_tanh),
    ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("Tanh", np.tanh),
])
def test_transcendental_ops(name: str, ref: Callable[[np.ndarray], np.ndarray],
                            dtype: str) -> None:
    """Gelu (tanh approximation), Sigmoid and Tanh match their formulas in float64."""
    x = (rand((6, 7), dtype) * 3).astype(dtype)
    (y,) = run(name, [x])
    close(y, ref(f64(x)), dtype)


def test_gelu_is_cann_form_and_near_erf() -> None:
    """Gelu equals CANN's x/(1+exp(-2c(x+0.044715x^3))) form and is within 1e-3 of exact GELU."""
    x = np.linspace(-6, 6, 241).astype(np.float32)
    (y,) = run("Gelu", [x])
    c = np.sqrt(2 / np.pi)
    xd = f64(x)
    np.testing.assert_allclose(y, xd / (1 + np.exp(-2 * c * (xd + 0.044715 * xd**3))),
                               rtol=1e-5, atol=1e-6)
    exact = 0.5 * xd * (1 + np.vectorize(math.erf)(xd / math.sqrt(2)))
    assert np.max(np.abs(y - exact)) < 1e-3


def test_sigmoid_saturates_without_nan() -> None:
    """Sigmoid of huge magnitudes is exactly 0 or 1, never nan."""
    (y,) = run("Sigmoid", [np.array([-1e4, 1e4], np.float32)])
    assert y.tolist() == [0.0, 1.0]


# ------------------------------------------------------------------------- softmax
def _softmax_ref(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axes", [None, [1], [0], [1, 2], [-2, -1]])
def test_softmax_v2(axes: list[int] | None, dtype: str) -> None:
    """SoftmaxV2 normalises over ``axes`` (default [-1]) and matches the formula."""
    x = (rand((2, 3, 4), dtype) * 4).astype(dtype)
    attrs = {} if axes is None else {"axes": axes}
    (y,) = run("SoftmaxV2", [x], attrs)
    close(y, _softmax_ref(f64(x), tuple(axes or [-1])), dtype)


def test_softmax_is_stable_for_large_inputs() -> None:
    """Softmax subtracts the max first, so huge logits do not overflow to nan."""
    (y,) = run("SoftmaxV2", [np.array([[1000.0, 1000.0, -1000.0]], np.float32)])
    np.testing.assert_allclose(y, [[0.5, 0.5, 0.0]])


def test_softmax_half_to_float() -> None:
    """half_to_float makes a float16 SoftmaxV2 output float32, in infer and compute."""
    x = rand((2, 5), "float16")
    (y,) = run("SoftmaxV2", [x], {"half_to_float": True})
    assert y.dtype == np.float32 and infer("SoftmaxV2", [x], {"half_to_float": True})[0].dtype \
        == "float32"
    close(y, _softmax_ref(f64(x), (-1,)), "float32")


def test_softmax_alias_takes_onnx_axis() -> None:
    """Softmax (alias) takes ONNX's ``axis``; a conflicting ``axes`` is 100000."""
    x = rand((3, 4, 5))
    (y,) = run("Softmax", [x], {"axis": 1})
    close(y, _softmax_ref(f64(x), (1,)), "float32")
    (z,) = run("Softmax", [x], {"axes": [0]})
    close(z, _softmax_ref(f64(x), (0,)), "float32")
    raises(INVALID_PARAM, lambda: run("Softmax", [x], {"axis": 1, "axes": [0]}), "axis")


def test_softmax_bad_axis_is_invalid_param() -> None:
    """An out-of-range or repeated softmax axis is 100000."""
    x = rand((3, 4))
    raises(INVALID_PARAM, lambda: run("SoftmaxV2", [x], {"axes": [2]}), "SoftmaxV2", "2")
    raises(INVALID_PARAM, lambda: run("SoftmaxV2", [x], {"axes": [1, -1]}), "repeats")


# ------------------------------------------------------------------------- LayerNorm
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("bna", "bpa"), [(-1, -1), (1, 1), (2, 2), (1, 2), (0, 0)])
def test_layernorm(bna: int, bpa: int, dtype: str) -> None:
    """LayerNorm returns y, mean, variance (population) with reduced dims kept as 1."""
    x = (rand((2, 3, 4), dtype) * 2 + 1).astype(dtype)
    pshape = x.shape[bpa:]
    g, b = rand(pshape, dtype, 1), rand(pshape, dtype, 2)
    eps = 1e-5
    y, mean, var = run("LayerNorm", [x, g, b],
                       {"begin_norm_axis": bna, "begin_params_axis": bpa, "epsilon": eps})
    axes = tuple(range(bna % 3, 3))
    xd = f64(x)
    m = xd.mean(axis=axes, keepdims=True)
    v = ((xd - m) ** 2).mean(axis=axes, keepdims=True)
    close(y, (xd - m) / np.sqrt(v + eps) * f64(g) + f64(b), dtype)
    close(mean, m, dtype)
    close(var, v, dtype)
    assert mean.shape == x.shape[:bna % 3] + (1,) * (3 - bna % 3)


def test_layernorm_gamma_shape_mismatch() -> None:
    """gamma not of shape x.shape[begin_params_axis:] gives 100024 naming input 1."""
    arrays = [rand((2, 3, 4)), rand((3,)), rand((4,))]
    raises(NOT_FOUND, lambda: run("LayerNorm", arrays, {"begin_norm_axis": -1,
                                                         "begin_params_axis": -1}),
           "LayerNorm", "input 1", "[3]", "[4]")


# ------------------------------------------------------------------------- MatMul
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("t1", [False, True])
@pytest.mark.parametrize("t2", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_matmul(dtype: str, t1: bool, t2: bool, bias: bool) -> None:
    """MatMul with transpose_x1/x2 and optional bias; int8 gives exact int32."""
    m, k, n = 5, 7, 3
    a = rand((k, m) if t1 else (m, k), dtype)
    b = rand((n, k) if t2 else (k, n), dtype, 1)
    out_dtype = "int32" if dtype == "int8" else dtype
    arrays = [a, b]
    ref = (f64(a).T if t1 else f64(a)) @ (f64(b).T if t2 else f64(b))
    if bias:
        c = rand((n,), "int32" if dtype == "int8" else dtype, 2)
        arrays.append(c)
        ref = ref + f64(c)
    (y,) = run("MatMul", arrays, {"transpose_x1": t1, "transpose_x2": t2})
    close(y, ref.astype(np.int64) if dtype == "int8" else ref, out_dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(("t1", "t2"), [(False, False), (True, False), (False, True)])
def test_gemm_is_alpha_ab_plus_beta_c(dtype: str, t1: bool, t2: bool) -> None:
    """GEMM (aclblasGemmEx's op): alpha * op(a) @ op(b) + beta * c, c's dtype and shape."""
    m, k, n = 4, 6, 3
    a = rand((k, m) if t1 else (m, k), dtype)
    b = rand((n, k) if t2 else (k, n), dtype, 1)
    c = rand((m, n), dtype, 2)
    alpha, beta = np.array(1.5, dtype), np.array(-0.5, dtype)
    (y,) = run("GEMM", [a, b, c, alpha, beta], {"transpose_a": t1, "transpose_b": t2})
    ref = 1.5 * ((f64(a).T if t1 else f64(a)) @ (f64(b).T if t2 else f64(b))) - 0.5 * f64(c)
    close(y, ref, dtype)


def test_gemm_refuses_a_c_of_another_shape() -> None:
    with pytest.raises(OpError):
        run("GEMM", [rand((2, 3), "float32"), rand((3, 4), "float32", 1),
                     rand((4, 2), "float32", 2), np.array(1, np.float32),
                     np.array(0, np.float32)])


def test_int8_matmul_accumulates_in_int32() -> None:
    """int8 x int8 sums far beyond the int8 range are exact in the int32 result."""
    a = np.full((2, 300), -128, np.int8)
    b = np.full((300, 2), -128, np.int8)
    (y,) = run("MatMul", [a, b])
    assert y.dtype == np.int32 and (y == 300 * 128 * 128).all()


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize(("s1", "s2", "adj1", "adj2"), [
    ((2, 1, 3, 4), (5, 4, 6), False, False),
    ((3, 4, 2), (3, 6, 4), True, True),
    ((3, 4), (2, 3, 5), True, False),
    ((2, 3, 4), (2, 5, 4), False, True),
])
def test_batch_matmul(s1: tuple[int, ...], s2: tuple[int, ...], adj1: bool, adj2: bool,
                      dtype: str) -> None:
    """BatchMatMul broadcasts batch dims and honours adj_x1/adj_x2."""
    a, b = rand(s1, dtype), rand(s2, dtype, 1)
    (y,) = run("BatchMatMul", [a, b], {"adj_x1": adj1, "adj_x2": adj2})
    ad = np.swapaxes(f64(a), -1, -2) if adj1 else f64(a)
    bd = np.swapaxes(f64(b), -1, -2) if adj2 else f64(b)
    ref = np.matmul(ad, bd)
    close(y, ref.astype(np.int64) if dtype == "int8" else ref,
          "int32" if dtype == "int8" else dtype)


def test_matmul_k_mismatch_names_inputs_and_shapes() -> None:
    """A K mismatch is 100024 naming the op, input 1 and both shapes."""
    raises(NOT_FOUND, lambda: run("MatMul", [rand((2, 3)), rand((4, 5))]),
           "MatMul", "input 1", "[4, 5]", "[2, 3]")
    raises(NOT_FOUND, lambda: run("MatMul", [rand((2, 3, 3)), rand((3, 5))]), "2-D")
    raises(NOT_FOUND, lambda: run("BatchMatMul", [rand((2, 3, 4)), rand((3, 4, 5))]),
           "batch")


def test_matmul_bias_checks() -> None:
    """Bias must be [N] of a matching dtype (int32 for int8); offset_w is not emulated."""
    a, b = rand((2, 3)), rand((3, 4))
    raises(NOT_FOUND, lambda: run("MatMul", [a, b, rand((3,))]), "bias", "[4]")
    raises(NOT_FOUND, lambda: run("MatMul", [a, b, rand((4,), "float16")]), "bias")
    i8 = [rand((2, 3), "int8"), rand((3, 4), "int8")]
    raises(NOT_FOUND, lambda: run("MatMul", [*i8, rand((4,), "int8")]), "bias", "int32")
    raises(NOT_FOUND, lambda: run("MatMulV2", [a, b, rand((4,)), rand((4,))]), "offset_w")


def test_unused_optional_input_slot_is_ignored() -> None:
    """A placeholder optional input (shape [] or empty) counts as an unused slot."""
    a, b = rand((2, 3)), rand((3, 4))
    (y,) = run("MatMulV2", [a, b, np.zeros((0,), np.float32), np.zeros((), np.float32)])
    close(y, f64(a) @ f64(b), "float32")
    spec = get_op("MatMulV2").infer([*specs_of([a, b]), TensorSpec("float32", ())], {})
    assert spec[0].shape == (2, 4)


@pytest.mark.parametrize(("name", "arrays", "attrs", "mnk", "batch"), [
    ("MatMul", [rand((5, 7)), rand((7, 3))], {}, (5, 3, 7), 1),
    ("MatMul", [rand((7, 5)), rand((3, 7))], {"transpose_x1": True, "transpose_x2": True},
     (5, 3, 7), 1),
    ("BatchMatMul", [rand((4, 2, 6, 9)), rand((9, 8))], {}, (6, 8, 9), 8),
    ("BatchMatMul", [rand((3, 9, 6)), rand((3, 8, 9))], {"adj_x1": True, "adj_x2": True},
     (6, 8, 9), 3),
])
def test_matmul_flops_are_exactly_2mnk(name: str, arrays: Arrays, attrs: dict[str, Any],
                                       mnk: tuple[int, int, int], batch: int) -> None:
    """MatMul/BatchMatMul cost is exactly 2*M*N*K FLOPs per batch entry."""
    m, n, k = mnk
    assert cost(name, arrays, attrs)[0] == 2 * m * n * k * batch


# ------------------------------------------------------------------------- Conv2D
def conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, strides: tuple[int, int],
             pads: tuple[int, int, int, int], dil: tuple[int, int], groups: int) -> np.ndarray:
    """Slow, obviously correct Conv2D: explicit loops over every output position and tap."""
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    pt, pb, pl, pr = pads
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    ho = (h + pt + pb - (dil[0] * (kh - 1) + 1)) // strides[0] + 1
    wo = (wd + pl + pr - (dil[1] * (kw - 1) + 1)) // strides[1] + 1
    og = cout // groups
    y = np.zeros((n, cout, ho, wo))
    for bi in range(n):
        for o in range(cout):
            g = o // og
            for i in range(ho):
                for j in range(wo):
                    acc = 0.0
                    for ci in range(cg):
                        for p in range(kh):
                            for q in range(kw):
                                acc += (xp[bi, g * cg + ci, i * strides[0] + p * dil[0],
                                           j * strides[1] + q * dil[1]] * w[o, ci, p, q])
                    y[bi, o, i, j] = acc + (b[o] if b is not None else 0.0)
    return y


CONV_CASES = [
    # (x shape, w shape, strides, pads, dilations, groups, bias)
    ((1, 3, 7, 7), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ((2, 2, 8, 6), (3, 2, 3, 2), (2, 1), (0, 1, 2, 0), (1, 1), 1, False),
    ((1, 4, 9, 9), (4, 2, 3, 3), (2, 2), (1, 0, 0, 1), (2, 1), 2, True),
    ((1, 4, 6, 6), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4, False),  # depthwise
    ((1, 2, 5, 5), (3, 2, 1, 1), (3, 3), (0, 0, 0, 0), (1, 1), 1, True),
    ((1, 1, 4, 4), (1, 1, 4, 4), (1, 1), (0, 0, 0, 0), (1, 1), 1, False),  # 1x1 output
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_matches_loop_reference(case: tuple[Any, ...], dtype: str) -> None:
    """Conv2D (strides, asymmetric pads, dilations, groups, bias) equals the loop reference."""
    xs, ws, st_, pads, dil, groups, bias = case
    x, w = rand(xs, dtype), rand(ws, dtype, 1)
    b = rand((ws[0],), dtype, 2) if bias else None
    attrs = {"strides": [1, 1, *st_], "pads": list(pads), "dilations": [1, 1, *dil],
             "groups": groups}
    (y,) = run("Conv2D", [x, w] + ([b] if b is not None else []), attrs)
    close(y, conv_ref(f64(x), f64(w), None if b is None else f64(b), st_, pads, dil, groups),
          dtype)


@settings(max_examples=60, deadline=None)
@given(h=st.integers(1, 12), w=st.integers(1, 12), kh=st.integers(1, 4), kw=st.integers(1, 4),
       sh=st.integers(1, 3), sw=st.integers(1, 3), dh=st.integers(1, 3), dw=st.integers(1, 3),
       pads=st.lists(st.integers(0, 3), min_size=4, max_size=4))
def test_conv2d_output_size_formula(h: int, w: int, kh: int, kw: int, sh: int, sw: int,
                                    dh: int, dw: int, pads: list[int]) -> None:
    """H_out = (H + pt + pb - (dh*(kh-1)+1)) // sh + 1 (likewise W) in infer and compute."""
    pt, pb, pl, pr = pads
    ho = (h + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
    wo = (w + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
    arrays = [rand((1, 2, h, w)), rand((3, 2, kh, kw), seed=1)]
    attrs = {"strides": [1, 1, sh, sw], "pads": pads, "dilations": [1, 1, dh, dw]}
    if ho < 1 or wo < 1:
        raises(NOT_FOUND, lambda: infer("Conv2D", arrays, attrs), "Conv2D", "smaller")
        return
    (spec,) = infer("Conv2D", arrays, attrs)
    (y,) = run("Conv2D", arrays, attrs)
    assert spec.shape == y.shape == (1, 3, ho, wo) and spec.dtype == y.dtype.name


def test_conv2d_flops_formula() -> None:
    """Conv2D cost is exactly 2*N*Cout*Hout*Wout*(Cin/groups)*kh*kw FLOPs."""
    arrays = [rand((2, 6, 9, 9)), rand((4, 3, 3, 2))]
    attrs = {"strides": [1, 1, 2, 1], "pads": [1, 1, 0, 0], "groups": 2}
    (spec,) = infer("Conv2D", arrays, attrs)
    n, cout, ho, wo = spec.shape
    assert cost("Conv2D", arrays, attrs)[0] == 2 * n * cout * ho * wo * 3 * 3 * 2


def test_conv2d_resnet50_layer_is_vectorised() -> None:
    """A ResNet-50 3x3 conv (1x64x56x56, 64 filters, pad 1) is right at a spot-checked point.

    Its speed (against a numpy GEMM of the same FLOPs) is a row of ``benchmarks/bench_ops.py``.
    """
    x, w = rand((1, 64, 56, 56)), rand((64, 64, 3, 3), seed=1)
    attrs = {"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1]}
    (y,) = run("Conv2D", [x, w], attrs)
    assert y.shape == (1, 64, 56, 56)
    # spot-check one output position against the definition
    xp = np.pad(f64(x), ((0, 0), (0, 0), (1, 1), (1, 1)))
    assert y[0, 5, 10, 20] == pytest.approx(float((xp[0, :, 10:13, 20:23] * f64(w)[5]).sum()),
                                            rel=1e-4)


@pytest.mark.parametrize(("attrs", "code", "word"), [
    ({"pads": [0, 0, 0, 0]}, INVALID_PARAM, "strides"),
    ({"strides": [1, 1, 1, 1]}, INVALID_PARAM, "pads"),
    ({"strides": [1, 1], "pads": [0, 0, 0, 0]}, INVALID_PARAM, "strides"),
    ({"strides": [2, 1, 1, 1], "pads": [0, 0, 0, 0]}, INVALID_PARAM, "N and C"),
    ({"strides": [1, 1, 64, 1], "pads": [0, 0, 0, 0]}, INVALID_PARAM, "63"),
    ({"strides": [1, 1, 1, 1], "pads": [0, 0, 0, -1]}, INVALID_PARAM, "pads"),
    ({"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0], "groups": 3}, INVALID_PARAM, "groups"),
])
def test_conv2d_bad_attributes(attrs: dict[str, Any], code: int, word: str) -> None:
    """Missing or malformed Conv2D attributes give 100000 naming the attribute."""
    raises(code, lambda: run("Conv2D", [rand((1, 4, 5, 5)), rand((2, 4, 3, 3))], attrs),
           "Conv2D", word)


def test_conv2d_shape_and_format_errors() -> None:
    """Wrong channel counts give 100024; x NC1HWC0 or a FRACTAL_Z filter are not emulated
    (100024 naming the format); NHWC x and HWCN filters are accepted."""
    attrs = {"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0]}
    raises(NOT_FOUND, lambda: run("Conv2D", [rand((1, 4, 5, 5)), rand((2, 3, 3, 3))], attrs),
           "input 1", "[2, 3, 3, 3]", "[1, 4, 5, 5]")
    x, w = rand((1, 4, 5, 5)), rand((2, 4, 3, 3))
    op = get_op("Conv2D")
    raises(NOT_FOUND, lambda: op.infer([TensorSpec("float32", x.shape, 3),
                                        TensorSpec("float32", w.shape, 0)], attrs), "NC1HWC0")
    raises(NOT_FOUND, lambda: op.infer([TensorSpec("float32", x.shape, 0),
                                        TensorSpec("float32", w.shape, 4)], attrs), "FRACTAL_Z")
    assert op.infer([TensorSpec("float32", x.shape, 0), TensorSpec("float32", w.shape, 0)],
                    attrs)[0].shape == (1, 2, 3, 3)
    nhwc = op.infer([TensorSpec("float32", (1, 5, 5, 4), 1),
                     TensorSpec("float32", (3, 3, 4, 2), 16)], attrs)[0]
    assert nhwc.shape == (1, 3, 3, 2) and nhwc.format == 1
    # NHWC strides are [1, h, w, 1]: an NCHW-ordered [1, 1, 2, 2] puts 2 in C's place
    raises(INVALID_PARAM, lambda: op.infer([TensorSpec("float32", (1, 5, 5, 4), 1),
                                            TensorSpec("float32", w.shape, 0)],
                                           {**attrs, "strides": [1, 1, 2, 2]}), "NHWC order")


@pytest.mark.parametrize("filter_hwcn", [False, True])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_nhwc_gives_the_nchw_numbers_transposed(case: tuple[Any, ...],
                                                       filter_hwcn: bool) -> None:
    """The same convolution with x (and y) NHWC, strides/dilations in NHWC order and the
    filter NCHW or HWCN (the tensor formats, FORMATS_ATTR) equals the NCHW result
    transposed; the inferred output spec is NHWC too."""
    xs, ws, st_, pads, dil, groups, bias = case
    x, w = rand(xs, "float32"), rand(ws, "float32", 1)
    b = [rand((ws[0],), "float32", 2)] if bias else []
    base = {"pads": list(pads), "groups": groups}
    (want,) = run("Conv2D", [x, w, *b], {**base, "strides": [1, 1, *st_],
                                          "dilations": [1, 1, *dil]})
    xn = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    wf = np.ascontiguousarray(w.transpose(2, 3, 1, 0)) if filter_hwcn else w
    fmts = (kernels.FMT_NHWC, kernels.FMT_HWCN if filter_hwcn else kernels.FMT_NCHW)
    attrs = {**base, "strides": [1, *st_, 1], "dilations": [1, *dil, 1],
             kernels.FORMATS_ATTR: fmts}
    (got,) = run("Conv2D", [xn, wf, *b], attrs)
    assert got.shape == (want.shape[0], want.shape[2], want.shape[3], want.shape[1])
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    spec = get_op("Conv2D").infer([TensorSpec("float32", xn.shape, fmts[0]),
                                   TensorSpec("float32", wf.shape, fmts[1])]
                                  + [TensorSpec("float32", a.shape) for a in b], attrs)[0]
    assert spec.shape == got.shape and spec.format == kernels.FMT_NHWC
    flops = cost("Conv2D", [x, w, *b], {**base, "strides": [1, 1, *st_],
                                         "dilations": [1, 1, *dil]})[0]
    assert get_op("Conv2D").cost([TensorSpec("float32", xn.shape, fmts[0]),
                                  TensorSpec("float32", wf.shape, fmts[1])], [spec],
                                 attrs)[0] == flops


# ------------------------------------------------------------------------- pooling
def pool_ref(x: np.ndarray, k: tuple[int, int], s: tuple[int, int], padding: str,
             kind: str) -> np.ndarray:
    """Slow NCHW pooling with TF SAME/VALID rules; loops over every output position."""
    n, c, h, w = x.shape
    if padding == "VALID":
        ho, wo = math.ceil((h - k[0] + 1) / s[0]), math.ceil((w - k[1] + 1) / s[1])
        top = left = 0
    else:
        ho, wo = math.ceil(h / s[0]), math.ceil(w / s[1])
        top = max((ho - 1) * s[0] + k[0] - h, 0) // 2
        left = max((wo - 1) * s[1] + k[1] - w, 0) // 2
    y = np.zeros((n, c, ho, wo))
    for bi in range(n):
        for ci in range(c):
            for i in range(ho):
                for j in range(wo):
                    vals = [x[bi, ci, i * s[0] - top + p, j * s[1] - left + q]
                            for p in range(k[0]) for q in range(k[1])
                            if 0 <= i * s[0] - top + p < h and 0 <= j * s[1] - left + q < w]
                    y[bi, ci, i, j] = max(vals) if kind == "max" else sum(vals) / len(vals)
    return y


POOL_CASES = [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((3, 2), (1, 2), "SAME"),
              ((3, 3), (1, 1), "VALID"), ((2, 3), (3, 1), "SAME"), ((1, 1), (2, 2), "SAME")]


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize(("k", "s", "padding"), POOL_CASES)
def test_maxpool_nchw(k: tuple[int, int], s: tuple[int, int], padding: str, dtype: str) -> None:
    """MaxPool on NCHW (data_format NCHW) equals the loop reference, all numeric dtypes."""
    x = rand((2, 3, 7, 6), dtype)
    attrs = {"ksize": [1, 1, *k], "strides": [1, 1, *s], "padding": padding,
             "data_format": "NCHW"}
    (y,) = run("MaxPool", [x], attrs)
    close(y, pool_ref(f64(x), k, s, padding, "max").astype(dtype), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("k", "s", "padding"), POOL_CASES)
def test_avgpool_nchw(k: tuple[int, int], s: tuple[int, int], padding: str, dtype: str) -> None:
    """AvgPool on NCHW equals the loop reference; SAME padding is not in the divisor."""
    x = rand((2, 3, 7, 6), dtype)
    attrs = {"ksize": [1, 1, *k], "strides": [1, 1, *s], "padding": padding,
             "data_format": "NCHW"}
    (y,) = run("AvgPool", [x], attrs)
    close(y, pool_ref(f64(x), k, s, padding, "avg"), dtype)


def test_avgpool_same_divisor_excludes_padding() -> None:
    """3x3 SAME AvgPool of ones is 1 everywhere (corners divide by 4, not 9)."""
    x = np.ones((1, 1, 3, 3), np.float32)
    (y,) = run("AvgPool", [x], {"ksize": [1, 1, 3, 3], "strides": [1, 1, 1, 1],
                                "padding": "SAME", "data_format": "NCHW"})
    np.testing.assert_array_equal(y, np.ones((1, 1, 3, 3), np.float32))


@pytest.mark.parametrize("name", ["MaxPool", "AvgPool"])
def test_pool_nhwc_data_format(name: str) -> None:
    """With data_format NHWC (the default), ksize/strides and data are read in NHWC order."""
    x = rand((1, 3, 7, 6))
    nchw = {"ksize": [1, 1, 3, 2], "strides": [1, 1, 2, 2], "padding": "SAME",
            "data_format": "NCHW"}
    (ref,) = run(name, [x], nchw)
    (y,) = run(name, [np.ascontiguousarray(x.transpose(0, 2, 3, 1))],
               {"ksize": [1, 3, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"})
    np.testing.assert_allclose(y, ref.transpose(0, 2, 3, 1), rtol=1e-6)


def test_pool_errors() -> None:
    """Bad padding/ksize are 100000; a tensor format that contradicts data_format is 100024."""
    x = rand((1, 2, 4, 4))
    base = {"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "padding": "SAME",
            "data_format": "NCHW"}
    raises(INVALID_PARAM, lambda: run("MaxPool", [x], {**base, "padding": "FULL"}), "padding")
    raises(INVALID_PARAM, lambda: run("MaxPool", [x], {**base, "ksize": [2, 1, 2, 2]}), "ksize")
    raises(INVALID_PARAM, lambda: run("MaxPool", [x], {**base, "ksize": [1, 1, 16, 16]}), "255")
    raises(INVALID_PARAM, lambda: run("MaxPool", [x], {"padding": "SAME"}), "ksize")
    raises(NOT_FOUND, lambda: run("MaxPool", [x], {**base, "ksize": [1, 1, 5, 5],
                                                  "padding": "VALID"}), "smaller")
    raises(NOT_FOUND, lambda: infer("MaxPool", [x], {**base, "data_format": "NHWC",
                                                     "ksize": [1, 2, 2, 1],
                                                     "strides": [1, 2, 2, 1]}, fmt=0),
           "MaxPool", "NCHW", "data_format")
    raises(NOT_FOUND, lambda: run("AvgPool", [rand((1, 2, 4, 4), "int32")], base), "int32")


def test_pool_flops() -> None:
    """Pool cost is output elements x kh*kw."""
    x = rand((1, 2, 8, 8))
    attrs = {"ksize": [1, 1, 3, 2], "strides": [1, 1, 2, 2], "padding": "SAME",
             "data_format": "NCHW"}
    (spec,) = infer("MaxPool", [x], attrs)
    assert cost("MaxPool", [x], attrs)[0] == spec.size * 6


@pytest.mark.parametrize("dtype", FLOATS)
def test_global_average_pool(dtype: str) -> None:
    """GlobalAveragePool averages H, W of NCHW into N, C, 1, 1."""
    x = rand((2, 3, 5, 4), dtype)
    (y,) = run("GlobalAveragePool", [x])
    close(y, f64(x).mean(axis=(2, 3), keepdims=True), dtype)


# ------------------------------------------------------------------------- Cast
@pytest.mark.parametrize("src", NUMERIC)
@pytest.mark.parametrize("dst", NUMERIC)
def test_cast(src: str, dst: str) -> None:
    """Cast to the aclDataType in dst_type equals numpy astype."""
    x = (rand((3, 4), src) * (3 if src.startswith("float") else 1)).astype(src)
    (y,) = run("Cast", [x], {"dst_type": ACL_DT[dst]})
    assert y.dtype == np.dtype(dst)
    np.testing.assert_array_equal(y, x.astype(dst))


def test_cast_truncates_toward_zero() -> None:
    """float -> int Cast truncates toward zero (numpy astype semantics)."""
    (y,) = run("Cast", [np.array([-1.7, -0.5, 0.5, 1.7, 2.0], np.float32)], {"dst_type": 3})
    assert y.tolist() == [-1, 0, 0, 1, 2]


def test_cast_bad_dst_type() -> None:
    """A missing dst_type is 100000; an unknown aclDataType number is 100024."""
    x = rand((2,))
    raises(INVALID_PARAM, lambda: run("Cast", [x]), "dst_type")
    raises(NOT_FOUND, lambda: run("Cast", [x], {"dst_type": 99}), "99")


# ------------------------------------------------------------------------- data movement
@pytest.mark.parametrize("dtype", NUMERIC)
def test_transpose_and_transpose_d(dtype: str) -> None:
    """Transpose (perm const input #1, int32 or int64) and TransposeD (perm attr)."""
    x = rand((2, 3, 4), dtype)
    for perm_dtype in (np.int32, np.int64):
        (y,) = run("Transpose", [x, np.array([1, 2, 0], perm_dtype)])
        close(y, np.transpose(x, (1, 2, 0)), dtype)
    (z,) = run("TransposeD", [x], {"perm": [-1, 0, 1]})
    close(z, np.transpose(x, (2, 0, 1)), dtype)


def test_transpose_errors() -> None:
    """A non-constant perm or a non-permutation is 100000; a float perm is 100024."""
    x = rand((2, 3))
    op = get_op("Transpose")
    raises(INVALID_PARAM, lambda: op.infer(specs_of([x, np.array([1, 0], np.int32)]), {}),
           "constant")
    raises(INVALID_PARAM, lambda: run("Transpose", [x, np.array([0, 0], np.int32)]), "perm")
    raises(NOT_FOUND, lambda: run("Transpose", [x, np.array([1.0, 0.0], np.float32)]), "int32")
    raises(INVALID_PARAM, lambda: run("TransposeD", [x]), "perm")


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize(("shape", "target", "want"), [
    ((2, 3, 4), [6, 4], (6, 4)), ((2, 3, 4), [-1], (24,)), ((2, 3, 4), [4, -1, 2], (4, 3, 2)),
])
def test_reshape(shape: tuple[int, ...], target: list[int], want: tuple[int, ...],
                 dtype: str) -> None:
    """Reshape to the const shape input, inferring one -1."""
    x = rand(shape, dtype)
    (y,) = run("Reshape", [x, np.array(target, np.int64)])
    close(y, x.reshape(want), dtype)
    assert infer("Reshape", [x, np.array(target, np.int32)])[0].shape == want


def test_reshape_errors() -> None:
    """A size mismatch is 100024; two -1s or a non-constant shape are 100000."""
    x = rand((2, 3))
    raises(NOT_FOUND, lambda: run("Reshape", [x, np.array([4, 2], np.int32)]), "[2, 3]")
    raises(NOT_FOUND, lambda: run("Reshape", [x, np.array([-1, 4], np.int32)]), "[2, 3]")
    raises(INVALID_PARAM, lambda: run("Reshape", [x, np.array([-1, -1], np.int32)]), "-1")
    raises(INVALID_PARAM, lambda: get_op("Reshape").infer(
        specs_of([x, np.array([6], np.int32)]), {}), "constant")


@pytest.mark.parametrize(("axis", "want"), [(None, (2, 12)), (0, (1, 24)), (2, (6, 4)),
                                            (3, (24, 1)), (-1, (6, 4))])
def test_flatten(axis: int | None, want: tuple[int, int]) -> None:
    """Flatten to [prod(shape[:axis]), prod(shape[axis:])], axis default 1."""
    x = rand((2, 3, 4), "int8")
    (y,) = run("Flatten", [x], {} if axis is None else {"axis": axis})
    close(y, x.reshape(want), "int8")


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", ["ConcatD", "Concat"])
def test_concat(name: str, dtype: str) -> None:
    """ConcatD/Concat join N inputs along concat_dim (negative allowed), N attr optional."""
    xs = [rand((2, k, 3), dtype, k) for k in (1, 2, 4)]
    (y,) = run(name, xs, {"concat_dim": -2, "N": 3})
    close(y, np.concatenate(xs, axis=1), dtype)
    (z,) = run(name, xs[:1], {"concat_dim": 0})
    close(z, xs[0], dtype)


def test_concat_errors() -> None:
    """Shape mismatch outside concat_dim is 100024 naming the input; bad N/missing dim 100000."""
    xs = [rand((2, 3)), rand((2, 3)), rand((3, 4))]
    raises(NOT_FOUND, lambda: run("ConcatD", xs, {"concat_dim": 0}), "input 2", "[3, 4]",
           "[2, 3]")
    raises(INVALID_PARAM, lambda: run("ConcatD", xs[:2], {"concat_dim": 0, "N": 3}), "N")
    raises(INVALID_PARAM, lambda: run("ConcatD", xs[:2]), "concat_dim")
    raises(INVALID_PARAM, lambda: run("ConcatD", xs[:2], {"concat_dim": 2}), "concat_dim")
    raises(NOT_FOUND, lambda: run("ConcatD", [rand((2, 3)), rand((2, 3), "int32")],
                                  {"concat_dim": 0}), "input 1", "int32")


# ------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axes", [[1], [0, 2], [-1], [0, 1, 2]])
def test_reduce_sum_and_mean(axes: list[int], keep: bool, dtype: str) -> None:
    """ReduceSum/Mean (axes const input) and ReduceSumD/MeanD (axes attr) match numpy."""
    x = rand((3, 4, 5), dtype)
    ax = tuple(a % 3 for a in axes)
    s = f64(x).sum(axis=ax, keepdims=keep)
    n = math.prod(x.shape[a] for a in ax)
    if dtype.startswith("int"):
        m = (np.sign(s) * (np.abs(s) // n)).astype(dtype)  # truncation toward zero
        s = s.astype(dtype)
    else:
        m = s / n
    (y1,) = run("ReduceSum", [x, np.array(axes, np.int32)], {"keep_dims": keep})
    (y2,) = run("ReduceSumD", [x], {"axes": axes, "keep_dims": keep})
    (y3,) = run("ReduceMean", [x, np.array(axes, np.int64)], {"keep_dims": keep})
    (y4,) = run("ReduceMeanD", [x], {"axes": axes, "keep_dims": keep})
    for y, ref in ((y1, s), (y2, s), (y3, m), (y4, m)):
        close(y, np.asarray(ref), dtype)


def test_reduce_empty_axes() -> None:
    """Empty axes: ReduceSum is the identity (noop_with_empty_axes), ReduceSumD reduces all."""
    x = rand((2, 3), "int32")
    empty = np.zeros((0,), np.int32)
    (y,) = run("ReduceSum", [x, empty])
    np.testing.assert_array_equal(y, x)
    (z,) = run("ReduceSum", [x, empty], {"noop_with_empty_axes": False})
    assert z.shape == () and int(z) == int(x.sum())
    (d,) = run("ReduceSumD", [x], {"axes": []})
    assert d.shape == () and int(d) == int(x.sum())


def test_reduce_int8_sum_wraps_and_mean_truncates() -> None:
    """int8 ReduceSum wraps at 8 bits; integer ReduceMean truncates toward zero."""
    (s,) = run("ReduceSumD", [np.array([100, 100], np.int8)], {"axes": [0]})
    assert s.dtype == np.int8 and int(s) == -56
    (m,) = run("ReduceMeanD", [np.array([-3, -4], np.int32)], {"axes": [0]})
    assert int(m) == -3


def test_reduce_errors() -> None:
    """Repeated or out-of-range axes are 100000; a non-constant axes input is 100000."""
    x = rand((2, 3))
    raises(INVALID_PARAM, lambda: run("ReduceSumD", [x], {"axes": [0, -2]}), "repeats")
    raises(INVALID_PARAM, lambda: run("ReduceSum", [x, np.array([2], np.int32)]), "2")
    raises(INVALID_PARAM, lambda: get_op("ReduceMean").infer(
        specs_of([x, np.array([0], np.int32)]), {}), "constant")


def test_reduction_cost_counts_input_elements() -> None:
    """Reductions cost one FLOP per input element."""
    x = rand((3, 4, 5))
    assert cost("ReduceSumD", [x], {"axes": [1]})[0] == 60
    assert cost("ReduceMean", [x, np.array([0], np.int32)])[0] == 60


# ------------------------------------------------------------------------- errors and counts
def test_wrong_input_count_is_100024() -> None:
    """Too few or too many inputs give 100024 naming the op."""
    raises(NOT_FOUND, lambda: run("Add", [rand((2,))]), "Add", "2 inputs, got 1")
    raises(NOT_FOUND, lambda: run("Relu", [rand((2,)), rand((2,))]), "Relu")


def test_defaults_are_the_opproto_defaults() -> None:
    """Registered defaults follow the OpProto table (reference §9.4)."""
    assert get_op("MatMul").defaults == {"transpose_x1": False, "transpose_x2": False}
    assert get_op("BatchMatMul").defaults == {"adj_x1": False, "adj_x2": False}
    assert get_op("SoftmaxV2").defaults["axes"] == [-1]
    assert get_op("LayerNorm").defaults == {"begin_norm_axis": 0, "begin_params_axis": 0,
                                            "epsilon": 1e-7}
    assert get_op("Conv2D").defaults["dilations"] == [1, 1, 1, 1]
    assert "strides" not in get_op("Conv2D").defaults  # required attrs have no default
    assert get_op("MaxPool").defaults["data_format"] == "NHWC"
    assert get_op("Transpose").const_inputs == (1,) and get_op("ReduceSum").const_inputs == (1,)
