"""Single operators through ``acl.op``: execute_v2 with tensor descs and data buffers.

Facts come from docs/sources.md sections 1.4 (argument errors), 2.7 (data
buffers, tensor descs), 2.9 (acl.op), 7.4 (the Add sample), 9.1(h) (execute_v2 lookup codes)
and 9.4 (attribute conventions). Every result is compared with a numpy reference; times are
virtual and checked against the session's device profile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_DT_UNDEFINED,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_OP_NOT_FOUND,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_FLOAT,
    ACL_FLOAT16,
    ACL_FORMAT_NCHW,
    ACL_FORMAT_ND,
    ACL_FORMAT_NHWC,
    ACL_FORMAT_UNDEFINED,
    ACL_INT32,
    ACL_INT64,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.schema import TASK_KINDS
from tests.helpers import compile_singleop

ACL_TYPES = {np.dtype(np.float32): ACL_FLOAT, np.dtype(np.float16): ACL_FLOAT16,
             np.dtype(np.int32): ACL_INT32, np.dtype(np.int64): ACL_INT64}
KERNEL = TASK_KINDS.index("kernel")
NS_PER_MS = 1_000_000

AttrSetup = Callable[[ModuleType, int], None]
OutSpec = tuple[tuple[int, ...], Any]


def ok(result: tuple[Any, ...]) -> Any:
    """The value of a ``(value, ret)`` pair, asserting ret is ACL_SUCCESS."""
    value, ret = result
    assert ret == ACL_SUCCESS, f"ret={ret}"
    return value


def malloc(acl: ModuleType, size: int) -> int:
    """Device memory of ``size`` bytes."""
    return int(ok(acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)))


def to_device(acl: ModuleType, arr: np.ndarray) -> tuple[int, int]:
    """``(device pointer, size)`` holding a copy of ``arr``."""
    data = np.ascontiguousarray(arr).tobytes()
    ptr = malloc(acl, len(data))
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data),
                         ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    return ptr, len(data)


def from_device(acl: ModuleType, ptr: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The device tensor at ``ptr``, copied back through malloc_host + ptr_to_bytes."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    host = ok(acl.rt.malloc_host(nbytes))
    assert acl.rt.memcpy(host, nbytes, ptr, nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    out = np.frombuffer(acl.util.ptr_to_bytes(host, nbytes), dtype=dtype).reshape(shape).copy()
    assert acl.rt.free_host(host) == ACL_SUCCESS
    return out


def desc_of(acl: ModuleType, shape: tuple[int, ...], dtype: Any, fmt: int = ACL_FORMAT_ND) -> int:
    """A tensor desc (note pyACL's argument order: dtype, dims list, format)."""
    return int(acl.create_tensor_desc(ACL_TYPES[np.dtype(dtype)], list(shape), fmt))


@dataclass
class OpArgs:
    """The four lists execute_v2 takes, plus the output device pointers and specs."""

    in_descs: list[int]
    in_bufs: list[int]
    out_descs: list[int]
    out_bufs: list[int]
    out_ptrs: list[int]
    outs: list[OutSpec]


def prepare(acl: ModuleType, inputs: list[np.ndarray], outs: list[OutSpec],
            consts: dict[int, np.ndarray] | None = None, fmt: int = ACL_FORMAT_ND) -> OpArgs:
    """Descs and device data buffers for ``inputs`` (copied in) and ``outs`` (allocated).

    Inputs listed in ``consts`` are marked with acl.set_tensor_const (their data is also on
    the device, as samples do).
    """
    consts = consts or {}
    in_descs, in_bufs = [], []
    for i, a in enumerate(inputs):
        d = desc_of(acl, a.shape, a.dtype, fmt)
        if i in consts:
            data = np.ascontiguousarray(consts[i]).tobytes()
            assert acl.set_tensor_const(d, acl.util.bytes_to_ptr(data), len(data)) == \
                ACL_SUCCESS
        in_descs.append(d)
        in_bufs.append(acl.create_data_buffer(*to_device(acl, a)))
    out_descs, out_bufs, out_ptrs = [], [], []
    for shape, dtype in outs:
        d = desc_of(acl, shape, dtype, fmt)
        size = max(acl.get_tensor_desc_size(d), 1)
        ptr = malloc(acl, size)
        out_descs.append(d)
        out_bufs.append(acl.create_data_buffer(ptr, size))
        out_ptrs.append(ptr)
    return OpArgs(in_descs, in_bufs, out_descs, out_bufs, out_ptrs, list(outs))


def make_attr(acl: ModuleType, attr_setup: AttrSetup | None) -> int:
    """An op attr set up by ``attr_setup(acl, attr)``."""
    attr = acl.op.create_attr()
    if attr_setup is not None:
        attr_setup(acl, attr)
    return int(attr)


def read_outputs(acl: ModuleType, args: OpArgs) -> list[np.ndarray]:
    """Every output copied back to the host."""
    return [from_device(acl, p, shape, dtype)
            for p, (shape, dtype) in zip(args.out_ptrs, args.outs, strict=True)]


def run_op(acl: ModuleType, op_type: str, inputs: list[np.ndarray], out_shapes_dtypes:
           list[OutSpec], attr_setup: AttrSetup | None = None,
           consts: dict[int, np.ndarray] | None = None,
           fmt: int = ACL_FORMAT_ND) -> list[np.ndarray]:
    """Run one operator on a new stream through execute_v2 and return its outputs."""
    args = prepare(acl, inputs, out_shapes_dtypes, consts, fmt)
    attr = make_attr(acl, attr_setup)
    stream = ok(acl.rt.create_stream())
    assert acl.op.execute_v2(op_type, args.in_descs, args.in_bufs, args.out_descs,
                             args.out_bufs, attr, stream) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
    return read_outputs(acl, args)


def execute(acl: ModuleType, op_type: str, args: OpArgs, attr_setup: AttrSetup | None = None,
            stream: int = 0) -> int:
    """execute_v2's ret for prepared arguments (synchronizing the stream on success)."""
    ret = acl.op.execute_v2(op_type, args.in_descs, args.in_bufs, args.out_descs,
                            args.out_bufs, make_attr(acl, attr_setup), stream)
    if ret == ACL_SUCCESS:
        assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
    return int(ret)


def kernel_durations(session: Session) -> list[int]:
    """end_ns - start_ns of every kernel task in the trace, in order."""
    t = session.trace().tasks
    return [int(t["end_ns"][i] - t["start_ns"][i]) for i in range(t.rows)
            if int(t["kind"][i]) == KERNEL]


def rng(seed: int = 0) -> np.random.Generator:
    """A seeded generator."""
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------ arithmetic

BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul"])
def test_binary_elementwise(ready: ModuleType, op_type: str, dtype: Any) -> None:
    """Add/Sub/Mul on (8, 16) int32 and float32 equal numpy."""
    a = (rng(1).standard_normal((8, 16)) * 50).astype(dtype)
    b = (rng(2).standard_normal((8, 16)) * 50).astype(dtype)
    [y] = run_op(ready, op_type, [a, b], [((8, 16), dtype)])
    np.testing.assert_allclose(y, BINARY[op_type](a, b), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_div(ready: ModuleType, dtype: Any) -> None:
    """Div equals numpy (int32 operands are exact multiples, so the rounding mode is moot)."""
    b = rng(3).integers(1, 9, (4, 6)) * rng(4).choice([-1, 1], (4, 6))
    a = b * rng(5).integers(-20, 20, (4, 6))
    [y] = run_op(ready, "Div", [a.astype(dtype), b.astype(dtype)], [((4, 6), dtype)])
    np.testing.assert_allclose(y, (a / b).astype(dtype), rtol=1e-6)


def test_add_float16(ready: ModuleType) -> None:
    """float16 Add equals numpy within rtol 1e-3."""
    a = rng(6).standard_normal((8, 16)).astype(np.float16)
    b = rng(7).standard_normal((8, 16)).astype(np.float16)
    [y] = run_op(ready, "Add", [a, b], [((8, 16), np.float16)])
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), (a + b).astype(np.float32), rtol=1e-3,
                               atol=1e-3)


def test_matmul_transpose_x2(ready: ModuleType) -> None:
    """MatMul with transpose_x2 takes x2 as [N, K]: y = x1 @ x2.T."""
    x1 = rng(8).standard_normal((3, 5)).astype(np.float32)
    x2 = rng(9).standard_normal((4, 5)).astype(np.float32)

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_bool(attr, "transpose_x1", False) == ACL_SUCCESS
        assert acl.op.set_attr_bool(attr, "transpose_x2", True) == ACL_SUCCESS

    [y] = run_op(ready, "MatMul", [x1, x2], [((3, 4), np.float32)], attrs)
    np.testing.assert_allclose(y, x1 @ x2.T, rtol=1e-5, atol=1e-5)


def conv2d_reference(x: np.ndarray, w: np.ndarray, stride: tuple[int, int],
                     pads: tuple[int, int, int, int]) -> np.ndarray:
    """A loop-based NCHW cross-correlation; ``pads`` is [top, bottom, left, right]."""
    n, c, h, wd = x.shape
    cout, _, kh, kw = w.shape
    top, bottom, left, right = pads
    xp = np.zeros((n, c, h + top + bottom, wd + left + right), np.float64)
    xp[:, :, top:top + h, left:left + wd] = x
    ho = (h + top + bottom - kh) // stride[0] + 1
    wo = (wd + left + right - kw) // stride[1] + 1
    y = np.zeros((n, cout, ho, wo), np.float64)
    for b in range(n):
        for o in range(cout):
            for i in range(ho):
                for j in range(wo):
                    r, s = i * stride[0], j * stride[1]
                    y[b, o, i, j] = np.sum(xp[b, :, r:r + kh, s:s + kw] * w[o])
    return y


def test_conv2d_strides_and_pads(ready: ModuleType) -> None:
    """Conv2D NCHW with strides [1,1,2,1] and asymmetric pads [t,b,l,r] = [1,0,2,1]."""
    x = rng(10).standard_normal((1, 2, 5, 6)).astype(np.float32)
    w = rng(11).standard_normal((3, 2, 3, 3)).astype(np.float32)
    want = conv2d_reference(x, w, (2, 1), (1, 0, 2, 1))
    assert want.shape == (1, 3, 2, 7)

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_list_int(attr, "strides", [1, 1, 2, 1]) == ACL_SUCCESS
        assert acl.op.set_attr_list_int(attr, "pads", [1, 0, 2, 1]) == ACL_SUCCESS

    [y] = run_op(ready, "Conv2D", [x, w], [(want.shape, np.float32)], attrs,
                 fmt=ACL_FORMAT_NCHW)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_relu(ready: ModuleType) -> None:
    """Relu is max(x, 0)."""
    x = rng(12).standard_normal((4, 7)).astype(np.float32)
    [y] = run_op(ready, "Relu", [x], [((4, 7), np.float32)])
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_softmax_v2_axes(ready: ModuleType) -> None:
    """SoftmaxV2 with axes [1] normalises along dim 1."""
    x = rng(13).standard_normal((2, 3, 4)).astype(np.float32)

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_list_int(attr, "axes", [1]) == ACL_SUCCESS

    [y] = run_op(ready, "SoftmaxV2", [x], [((2, 3, 4), np.float32)], attrs)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_transpose_perm_const(ready: ModuleType) -> None:
    """Transpose takes perm as a const input marked with acl.set_tensor_const."""
    x = rng(14).standard_normal((2, 3, 4)).astype(np.float32)
    perm = np.array([2, 0, 1], np.int32)
    [y] = run_op(ready, "Transpose", [x, perm], [((4, 2, 3), np.float32)], consts={1: perm})
    np.testing.assert_array_equal(y, np.transpose(x, (2, 0, 1)))


def test_reduce_sum_axes_const_keep_dims(ready: ModuleType) -> None:
    """ReduceSum with const axes [1] and keep_dims keeps the reduced dim as 1."""
    x = rng(15).standard_normal((2, 3, 4)).astype(np.float32)
    axes = np.array([1], np.int32)

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_bool(attr, "keep_dims", True) == ACL_SUCCESS

    [y] = run_op(ready, "ReduceSum", [x, axes], [((2, 1, 4), np.float32)], attrs,
                 consts={1: axes})
    np.testing.assert_allclose(y, x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_cast_float32_to_int32(ready: ModuleType) -> None:
    """acl.op.cast takes the target type from the destination desc (float32 -> int32)."""
    x = np.array([[1.7, -2.5, 3.2], [0.0, 9.9, -7.1]], np.float32)
    args = prepare(ready, [x], [((2, 3), np.int32)])
    stream = ok(ready.rt.create_stream())
    assert ready.op.cast(args.in_descs[0], args.in_bufs[0], args.out_descs[0],
                         args.out_bufs[0], 1, stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    [y] = read_outputs(ready, args)
    np.testing.assert_array_equal(y, x.astype(np.int32))


def test_layer_norm_three_outputs(ready: ModuleType) -> None:
    """LayerNorm gives y, mean and variance (kept dims of 1) over the normalised axes."""
    x = rng(16).standard_normal((2, 8)).astype(np.float32)
    gamma = rng(17).standard_normal(8).astype(np.float32)
    beta = rng(18).standard_normal(8).astype(np.float32)
    eps = 1e-5

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_int(attr, "begin_norm_axis", 1) == ACL_SUCCESS
        assert acl.op.set_attr_int(attr, "begin_params_axis", 1) == ACL_SUCCESS
        assert acl.op.set_attr_float(attr, "epsilon", eps) == ACL_SUCCESS

    y, mean, var = run_op(ready, "LayerNorm", [x, gamma, beta],
                          [((2, 8), np.float32), ((2, 1), np.float32), ((2, 1), np.float32)],
                          attrs)
    want_mean, want_var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, want_var, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, (x - want_mean) / np.sqrt(want_var + eps) * gamma + beta,
                               rtol=1e-4, atol=1e-5)


def test_handle_runs_twice_with_different_buffers(ready: ModuleType, tmp_path: Path) -> None:
    """create_handle + execute_with_handle twice with different buffers gives both sums."""
    f32 = ([4, 4], "float32")
    assert ready.op.set_model_dir(str(compile_singleop(tmp_path, "Add", [f32, f32], [f32]))) \
        == ACL_SUCCESS
    a, b = (rng(i).standard_normal((4, 4)).astype(np.float32) for i in (19, 20))
    first = prepare(ready, [a, b], [((4, 4), np.float32)])
    second = prepare(ready, [b, b], [((4, 4), np.float32)])
    handle = ok(ready.op.create_handle("Add", first.in_descs, first.out_descs,
                                       make_attr(ready, None)))
    stream = ok(ready.rt.create_stream())
    for args in (first, second):
        assert ready.op.execute_with_handle(handle, args.in_bufs, args.out_bufs, stream) == \
            ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    np.testing.assert_allclose(read_outputs(ready, first)[0], a + b, rtol=1e-6)
    np.testing.assert_allclose(read_outputs(ready, second)[0], b + b, rtol=1e-6)
    assert ready.op.destroy_handle(handle) is None


def test_a_handle_needs_a_compiled_single_op_model(ready: ModuleType, tmp_path: Path) -> None:
    """create_handle finds the op among the compiled single-op models (hicann/ge
    OpExecutor::CreateOpHandle -> MatchOpModel): none at all, or none with these descs, is
    100024 (ACL_ERROR_OP_NOT_FOUND); after atc --singleop of the op and descs it succeeds."""
    a = np.ones((2, 3), np.float32)
    args = prepare(ready, [a, a], [((2, 3), np.float32)])
    attr = make_attr(ready, None)
    handle, ret = ready.op.create_handle("Add", args.in_descs, args.out_descs, attr)
    assert (handle, ret) == (0, ACL_ERROR_OP_NOT_FOUND)
    other = ([3, 3], "float32")
    assert ready.op.set_model_dir(str(compile_singleop(tmp_path, "Add", [other, other],
                                                       [other]))) == ACL_SUCCESS
    assert ready.op.create_handle("Add", args.in_descs, args.out_descs, attr)[1] == \
        ACL_ERROR_OP_NOT_FOUND
    f23 = ([2, 3], "float32")
    compile_singleop(tmp_path, "Add", [f23, f23], [f23])
    handle = ok(ready.op.create_handle("Add", args.in_descs, args.out_descs, attr))
    assert handle != 0
    ready.op.destroy_handle(handle)


def test_infer_shape_fills_output_dims(ready: ModuleType) -> None:
    """infer_shape writes the MatMul output dims into the output desc."""
    x1 = np.zeros((3, 5), np.float32)
    x2 = np.zeros((5, 4), np.float32)
    args = prepare(ready, [x1, x2], [((1, 1), np.float32)])
    assert ready.op.infer_shape("MatMul", args.in_descs, args.in_bufs, 1, args.out_descs,
                                make_attr(ready, None)) == ACL_SUCCESS
    out = args.out_descs[0]
    assert ready.get_tensor_desc_num_dims(out) == 2
    assert ready.get_tensor_desc_dim_v2(out, 0) == (3, ACL_SUCCESS)
    assert ready.get_tensor_desc_dim_v2(out, 1) == (4, ACL_SUCCESS)


# ------------------------------------------------------------------------------ codes


def add_args(acl: ModuleType, out_shape: tuple[int, ...] = (2, 3),
             b_dtype: Any = np.float32) -> OpArgs:
    """Arguments for Add over two (2, 3) tensors (the second of ``b_dtype``)."""
    return prepare(acl, [np.ones((2, 3), np.float32), np.ones((2, 3), b_dtype)],
                   [(out_shape, np.float32)])


def test_unknown_op_type_is_100024(ready: ModuleType) -> None:
    """An op type nothing matches gives 100024 ACL_ERROR_OP_NOT_FOUND."""
    assert execute(ready, "NoSuchOp", add_args(ready)) == ACL_ERROR_OP_NOT_FOUND


def test_wrong_output_shape_is_100024(ready: ModuleType) -> None:
    """An output desc whose shape no compiled op produces gives 100024."""
    assert execute(ready, "Add", add_args(ready, out_shape=(3, 2))) == ACL_ERROR_OP_NOT_FOUND


def test_mismatched_input_dtypes_is_100024(ready: ModuleType) -> None:
    """Add of float32 and int32 inputs matches no compiled op: 100024."""
    assert execute(ready, "Add", add_args(ready, b_dtype=np.int32)) == ACL_ERROR_OP_NOT_FOUND


def test_output_buffer_smaller_than_desc_is_100000(ready: ModuleType) -> None:
    """An output data buffer smaller than its desc gives 100000."""
    args = add_args(ready)
    args.out_bufs[0] = ready.create_data_buffer(args.out_ptrs[0], 2 * 3 * 4 - 4)
    assert execute(ready, "Add", args) == ACL_ERROR_INVALID_PARAM


def test_host_input_pointer_is_100000(ready: ModuleType) -> None:
    """A malloc_host pointer as an op input gives 100000 (inputs must be device memory)."""
    args = add_args(ready)
    host = ok(ready.rt.malloc_host(24))
    args.in_bufs[0] = ready.create_data_buffer(host, 24)
    assert execute(ready, "Add", args) == ACL_ERROR_INVALID_PARAM


def test_tuple_instead_of_list_raises(ready: ModuleType) -> None:
    """execute_v2 with a tuple for a list argument raises the binding's TypeError
    ("argument 2, 3, 4, or 5 is not list")."""
    args = add_args(ready)
    with pytest.raises(TypeError, match=r"^argument 2, 3, 4, or 5 is not list$"):
        ready.op.execute_v2("Add", tuple(args.in_descs), args.in_bufs, args.out_descs,
                            args.out_bufs, make_attr(ready, None), 0)


def test_stream_of_another_context_is_107003(ready: ModuleType) -> None:
    """A stream created in another context gives 107003."""
    args = add_args(ready)
    stream = ok(ready.rt.create_stream())
    other = ok(ready.rt.create_context(0))
    assert execute(ready, "Add", args, stream=stream) == ACL_ERROR_RT_STREAM_CONTEXT
    assert ready.rt.destroy_context(other) == ACL_SUCCESS


def test_all_outputs_empty_returns_at_once(ready: ModuleType, session: Session) -> None:
    """When every output desc has a 0 dim, execute_v2 returns 0 and queues no task."""
    descs = [desc_of(ready, (0, 3), np.float32) for _ in range(3)]
    bufs = [ready.create_data_buffer(0, 0) for _ in range(3)]
    before = session.trace().tasks.rows
    assert ready.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:],
                               make_attr(ready, None), 0) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(0) == ACL_SUCCESS
    assert session.trace().tasks.rows == before


# ------------------------------------------------------------------------------ timing

N = 512


def matmul_ns(acl: ModuleType, session: Session, dtype: Any) -> int:
    """Virtual duration of an (N, N) x (N, N) MatMul kernel task of ``dtype``."""
    a = np.ones((N, N), dtype)
    run_op(acl, "MatMul", [a, a], [((N, N), dtype)])
    return kernel_durations(session)[-1]


def test_matmul_time_follows_the_profile(ready: ModuleType, session: Session) -> None:
    """A 512^3 float32 MatMul lasts at least 2*N^3 / flops_per_ns and at most 1 ms more."""
    floor = 2 * N**3 / session.profile.flops_per_ns["float32"]
    took = matmul_ns(ready, session, np.float32)
    assert floor <= took <= floor + NS_PER_MS


def test_float16_matmul_is_faster(ready: ModuleType, session: Session) -> None:
    """The same MatMul in float16 takes less virtual time than in float32."""
    assert matmul_ns(ready, session, np.float16) < matmul_ns(ready, session, np.float32)


def test_conv2d_nhwc_with_an_unused_optional_bias(ready: ModuleType) -> None:
    """The acl_compile_and_execute_conv2d sample's call: x NHWC, filter NCHW, y NHWC, and the
    unused bias described by create_tensor_desc(ACL_DT_UNDEFINED, [], ACL_FORMAT_UNDEFINED)
    with a (0, 0) data buffer; the result is the NCHW convolution's, transposed."""
    acl = ready
    x = rng(30).standard_normal((1, 5, 6, 2)).astype(np.float32)
    w = rng(31).standard_normal((3, 2, 3, 3)).astype(np.float32)
    want = conv2d_reference(x.transpose(0, 3, 1, 2), w, (1, 1), (1, 1, 1, 1))
    descs = [desc_of(acl, x.shape, np.float32, ACL_FORMAT_NHWC),
             desc_of(acl, w.shape, np.float32, ACL_FORMAT_NCHW),
             int(acl.create_tensor_desc(ACL_DT_UNDEFINED, [], ACL_FORMAT_UNDEFINED))]
    bufs = [acl.create_data_buffer(*to_device(acl, a)) for a in (x, w)]
    bufs.append(acl.create_data_buffer(0, 0))
    out_shape = (1, 5, 6, 3)
    y_desc = desc_of(acl, out_shape, np.float32, ACL_FORMAT_NHWC)
    y_ptr = malloc(acl, 5 * 6 * 3 * 4)
    y_buf = acl.create_data_buffer(y_ptr, 5 * 6 * 3 * 4)

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_list_int(attr, "strides", [1, 1, 1, 1]) == ACL_SUCCESS
        assert acl.op.set_attr_list_int(attr, "pads", [1, 1, 1, 1]) == ACL_SUCCESS

    stream = ok(acl.rt.create_stream())
    assert acl.op.execute_v2("Conv2D", descs, bufs, [y_desc], [y_buf], make_attr(acl, attrs),
                             stream) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
    got = from_device(acl, y_ptr, out_shape, np.float32)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
