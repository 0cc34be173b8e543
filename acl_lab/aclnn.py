"""``acl_lab.aclnn``: an aclnn-style two-phase operator API. **Not a real pyACL module.**

Real programs call aclnn (``aclnnAddGetWorkspaceSize`` + ``aclnnAdd`` and friends, from
``libopapi.so`` / ``libnnopbase.so``) from C/C++, or through ``torch_npu``, which calls it from
C++; some test kits reach it with ``ctypes``. pyACL has **no aclnn binding** (no aclnn
submodule in ``PyInit_acl``, reference section 6). This module is an acl_lab extension so that
learners can practise the two-phase pattern and its classic mistakes in Python:

1. ``t = create_tensor(shape, dtype, device_ptr)`` for every input and output (device memory
   from ``acl.rt.malloc``; contiguous strides; ``dtype`` is an aclDataType int).
2. Phase 1: ``ws_size, executor, ret = add_get_workspace_size(x, y, alpha, out)`` validates
   dtypes and shapes and reports the device workspace the op needs. Nothing runs yet.
3. ``ws, ret = acl.rt.malloc(ws_size, 0)`` when ``ws_size > 0`` (0 otherwise).
4. Phase 2: ``ret = add(ws, ws_size, executor, stream)`` queues the op on ``stream``. The
   executor is **single-use** and consumed here, unless ``set_executor_repeatable`` was called
   right after phase 1 (then run it as often as needed and ``destroy_executor`` it).
5. Synchronize the stream, copy the result back, then free the workspace (freeing it before the
   synchronize makes the queued op fail) and destroy tensors and scalars.

Every function is recorded in the trace like a pyACL call (name ``acl_lab.aclnn.*``, C name
``aclnn*`` / ``aclCreateTensor``...), so workspace allocations and their leaks show up with
the lines that made them. Return codes are aclnn status values: 161001
ACLNN_ERR_PARAM_NULLPTR, 161002 ACLNN_ERR_PARAM_INVALID, 561103 ACLNN_ERR_INNER_NULLPTR.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .acl._boundary import acl_api
from .constants import ErrorCode
from .runtime import streams
from .runtime.costs import aclnn_cost
from .runtime.errors import AclError
from .runtime.kinds import Engine, ObjectKind, TaskKind
from .runtime.memory import DEVICE, DVPP, KIND_NAMES
from .runtime.objects import HostThread
from .runtime.opdefs import ACL_TO_NUMPY, OpDef, OpError, TensorSpec, get_op
from .runtime.session import Session
from .runtime.singleop import queue_device_task

S = Session

ACLNN_SUCCESS = 0
ACLNN_ERR_PARAM_NULLPTR = ErrorCode.ACLNN_ERR_PARAM_NULLPTR
ACLNN_ERR_PARAM_INVALID = ErrorCode.ACLNN_ERR_PARAM_INVALID
ACLNN_ERR_INNER_NULLPTR = ErrorCode.ACLNN_ERR_INNER_NULLPTR

_T = TypeVar("_T")

#: aclTensor data must be 32-byte aligned (opbase aclCreateTensor.md)
TENSOR_ALIGN = 32
#: dtypes aclnnAdd accepts here (bool and the 64-bit unsigned types are left out)
_ADD_TYPES = frozenset({"float32", "float16", "float64", "int8", "int16", "int32", "int64",
                        "uint8"})


class AclnnTensor:
    """An aclTensor: a contiguous view of device memory with a shape and a dtype."""

    def __init__(self, shape: tuple[int, ...], dtype: int, addr: int, fmt: int) -> None:
        self.oid = -1
        self.handle = 0
        self.shape = shape
        self.dtype = dtype
        self.addr = addr
        self.format = fmt
        #: contiguous strides in elements: strides[i] = shape[i+1] * strides[i+1]
        self.strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64))
                             for i in range(len(shape)))
        self.alive = True

    @property
    def spec(self) -> TensorSpec:
        """The operator-facing description (numpy dtype name, shape, format)."""
        return TensorSpec(ACL_TO_NUMPY[self.dtype], self.shape, self.format)


class AclnnScalar:
    """An aclScalar: a host value with an aclDataType."""

    def __init__(self, value: Any, dtype: int) -> None:
        self.oid = -1
        self.handle = 0
        self.value = value
        self.dtype = dtype
        self.alive = True


class Executor:
    """An aclOpExecutor: what phase 1 planned, run by phase 2."""

    def __init__(self, api: str, workspace: int, reads: list[tuple[int, int, str]],
                 writes: list[tuple[int, int, str]], kernel: Callable[[list[bytes]], list[bytes]],
                 flops: int, nbytes: int, dtype: str) -> None:
        self.oid = -1
        self.handle = 0
        self.api = api
        self.workspace = workspace
        self.reads = reads
        self.writes = writes
        self.kernel = kernel
        self.flops = flops
        self.nbytes = nbytes
        self.dtype = dtype
        self.repeatable = False
        self.runs = 0
        self.alive = True


# ------------------------------------------------------------------ helpers


def _err(code: int, message: str) -> AclError:
    return AclError(code, message)


def _get(s: S, handle: int, cls: type[_T], what: str) -> _T:
    """The live ``cls`` object of ``handle``, with aclnn's codes (161001 null, 161002 other)."""
    return s.lookup(handle, cls, what, ACLNN_ERR_PARAM_INVALID, null_code=ACLNN_ERR_PARAM_NULLPTR)


def _tensor(s: S, handle: int, what: str) -> AclnnTensor:
    t: AclnnTensor = _get(s, handle, AclnnTensor, f"{what} (an aclTensor)")
    return t


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, np.ndarray):
        shape = shape.tolist()
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
        raise TypeError("acl_lab.aclnn.create_tensor args parse failed: shape must be a list "
                        "of ints")
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise _err(ACLNN_ERR_PARAM_INVALID, f"shape {list(dims)} has a negative dim")
    return dims


def _fmt_spec(t: AclnnTensor) -> str:
    return f"{t.spec.dtype}{list(t.shape)}"


def _op_infer(op: OpDef, specs: list[TensorSpec], attrs: dict[str, Any]) -> TensorSpec:
    try:
        return op.infer(specs, {**op.defaults, **attrs, "__consts__": {}})[0]
    except OpError as e:
        raise _err(ACLNN_ERR_PARAM_INVALID, e.message) from None


def _check_out(api: str, want: TensorSpec, out: AclnnTensor) -> None:
    if out.spec.dtype != want.dtype or tuple(out.shape) != tuple(want.shape):
        raise _err(ACLNN_ERR_PARAM_INVALID,
                   f"{api}: out is {_fmt_spec(out)} but the result is "
                   f"{want.dtype}{list(want.shape)}: create out with that shape and dtype")


def _io(ins: list[AclnnTensor], out: AclnnTensor,
        ) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    reads = [(t.addr, t.spec.nbytes, f"aclnn input {i}") for i, t in enumerate(ins)]
    return reads, [(out.addr, out.spec.nbytes, "aclnn out")]


def _op_kernel(op: OpDef, specs: list[TensorSpec], out: TensorSpec, attrs: dict[str, Any],
               scratch: bool) -> Callable[[list[bytes]], list[bytes]]:
    """Input bytes -> [output bytes] (+ the workspace contents when ``scratch``)."""
    full = {**op.defaults, **attrs}

    def run(data: list[bytes]) -> list[bytes]:
        arrays = [np.frombuffer(b, dtype=sp.dtype).reshape(sp.shape)
                  for b, sp in zip(data, specs, strict=False)]
        y = np.ascontiguousarray(op.compute(arrays, full)[0], dtype=out.dtype).tobytes()
        return [y, y] if scratch else [y]

    return run


def _phase1(s: S, cid: int, ex: Executor, label: str) -> tuple[int, int]:
    return ex.workspace, s.register(ex, ObjectKind.ACLNN_EXECUTOR, cid, label)


# ------------------------------------------------------------------ tensors and scalars


def _op_phase1(s: S, cid: int, api: str, name: str, op_type: str, ins: list[AclnnTensor],
               out: AclnnTensor, attrs: dict[str, Any], with_workspace: bool
               ) -> tuple[int, int]:
    """Phase 1 for an op of the registry: infer and check the output, cost it, and create
    the executor (its workspace is one output's size when ``with_workspace``)."""
    op = get_op(op_type)
    specs = [t.spec for t in ins]
    want = _op_infer(op, specs, attrs)
    _check_out(api, want, out)
    flops, nbytes = op.cost(specs, [want], {**op.defaults, **attrs})
    ws = want.nbytes if with_workspace else 0
    reads, writes = _io(ins, out)
    ex = Executor(name, ws, reads, writes, _op_kernel(op, specs, want, attrs, ws > 0), flops,
                  nbytes, specs[0].dtype)
    return _phase1(s, cid, ex, f"aclnn executor {name} {want.dtype}{list(want.shape)}")


@acl_api("acl_lab.aclnn.create_tensor", "aclCreateTensor", "Oip|i", out="value")
def create_tensor(s: S, th: HostThread, cid: int, shape: Any, dtype: int, device_ptr: int,
                  fmt: int = 2) -> int:
    """An aclTensor over ``device_ptr`` (the handle; 0 on failure, the code is in the trace).

    ``shape`` is a list of ints, ``dtype`` an aclDataType int (0 float32, 1 float16, 3 int32,
    ...), ``fmt`` an aclFormat (default 2, ND). Strides are contiguous, the offset is 0 and the
    storage shape equals the shape. The pointer must be device memory holding the whole tensor
    (161002 otherwise, 161001 if null); one not 32-byte aligned gets a warning in the trace.
    Differs from real ACL: an acl_lab extension (pyACL has no aclnn binding); real
    aclCreateTensor checks nothing about the pointer (misalignment is undefined behaviour).
    """
    dims = _shape(shape)
    if dtype not in ACL_TO_NUMPY:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"aclDataType {dtype} is not supported by the "
                                            "emulated aclnn ops")
    if device_ptr == 0:
        raise _err(ACLNN_ERR_PARAM_NULLPTR, "the tensor data pointer is null")
    t = AclnnTensor(dims, dtype, device_ptr, fmt)
    nbytes = t.spec.nbytes
    r = s.memory.find(device_ptr)
    if r is None or r.kind not in (DEVICE, DVPP):
        kind = "memory the emulator does not know" if r is None else \
            f"{KIND_NAMES[r.kind]} memory"
        raise _err(ACLNN_ERR_PARAM_INVALID, f"tensor data {device_ptr:#x} is {kind}: aclnn "
                                            "tensors live in device memory (acl.rt.malloc)")
    if device_ptr + nbytes > r.end:
        raise _err(ACLNN_ERR_PARAM_INVALID,
                   f"a {ACL_TO_NUMPY[dtype]}{list(dims)} tensor needs {nbytes} bytes, but only "
                   f"{r.end - device_ptr} remain in allocation #{r.id} after {device_ptr:#x}")
    if device_ptr % TENSOR_ALIGN:
        s.diag(cid, "misaligned_tensor",
               f"aclnn tensor data {device_ptr:#x} is not {TENSOR_ALIGN}-byte aligned (offset "
               f"{device_ptr - r.addr} into allocation #{r.id}); aclCreateTensor requires "
               "32-byte alignment, otherwise behaviour is undefined")
    return s.register(t, ObjectKind.ACLNN_TENSOR, cid,
                f"aclnn tensor {ACL_TO_NUMPY[dtype]}{list(dims)}")


@acl_api("acl_lab.aclnn.destroy_tensor", "aclDestroyTensor", "k")
def destroy_tensor(s: S, th: HostThread, cid: int, tensor: int) -> None:
    """Destroy an aclTensor (its device memory is not freed); 161001 for null.

    Differs from real ACL: an acl_lab extension; destroying twice returns 161002 instead of
    being undefined.
    """
    t = _tensor(s, tensor, "tensor")
    s.retire(t, cid)


@acl_api("acl_lab.aclnn.create_scalar", "aclCreateScalar", "Oi", out="value")
def create_scalar(s: S, th: HostThread, cid: int, value: Any, dtype: int) -> int:
    """An aclScalar holding ``value`` as aclDataType ``dtype`` (the handle; 0 on failure).

    Differs from real ACL: an acl_lab extension; the value is passed directly instead of a
    pointer to host memory.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (int, float, bool)):
        raise TypeError("acl_lab.aclnn.create_scalar args parse failed: value must be a number")
    name = ACL_TO_NUMPY.get(dtype)
    if name is None:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"aclDataType {dtype} is not supported")
    if isinstance(value, float) and np.dtype(name).kind in "iub":
        raise _err(ACLNN_ERR_PARAM_INVALID, f"scalar value {value} does not fit the integer "
                                            f"type {name}")
    sc = AclnnScalar(np.array(value).astype(name)[()], dtype)  # [()] gives a numpy scalar
    return s.register(sc, ObjectKind.ACLNN_SCALAR, cid, f"aclnn scalar {name}({value})")


@acl_api("acl_lab.aclnn.destroy_scalar", "aclDestroyScalar", "k")
def destroy_scalar(s: S, th: HostThread, cid: int, scalar: int) -> None:
    """Destroy an aclScalar; 161001 for null.

    Differs from real ACL: an acl_lab extension; destroying twice returns 161002.
    """
    sc: AclnnScalar = _get(s, scalar, AclnnScalar, "aclScalar")
    s.retire(sc, cid)


# ------------------------------------------------------------------ executors


def _executor(s: S, handle: int, null_code: int) -> Executor:
    ex = s.lookup(handle, Executor, "aclOpExecutor", ACLNN_ERR_PARAM_INVALID,
                  null_code=null_code, live=False)
    if not ex.alive:
        how = "consumed by its phase-2 call (a single-use executor runs once)" \
            if ex.runs and not ex.repeatable else "destroyed"
        raise _err(ACLNN_ERR_INNER_NULLPTR, f"executor {handle:#x} was already {how}: call "
                                            "the GetWorkspaceSize function again, or call "
                                            "set_executor_repeatable right after it")
    return ex


@acl_api("acl_lab.aclnn.set_executor_repeatable", "aclSetAclOpExecutorRepeatable", "k")
def set_executor_repeatable(s: S, th: HostThread, cid: int, executor: int) -> None:
    """Make an executor reusable: phase 2 may then run it many times, and the program must
    call destroy_executor. Call it right after phase 1. A null executor returns 561103.

    Differs from real ACL: an acl_lab extension; a consumed or destroyed executor returns
    561103 (approximate: real behaviour is a dangling pointer).
    """
    _executor(s, executor, ACLNN_ERR_INNER_NULLPTR).repeatable = True


@acl_api("acl_lab.aclnn.destroy_executor", "aclDestroyAclOpExecutor", "k")
def destroy_executor(s: S, th: HostThread, cid: int, executor: int) -> None:
    """Destroy an executor (needed for repeatable ones; single-use executors are destroyed by
    their phase-2 call). 161001 for null.

    Differs from real ACL: an acl_lab extension; destroying a consumed or destroyed executor
    returns 561103 (approximate: unverified, real code would use a dangling pointer).
    """
    ex = _executor(s, executor, ACLNN_ERR_PARAM_NULLPTR)
    s.retire(ex, cid)


def _run(s: S, th: HostThread, cid: int, api: str, workspace: int, workspace_size: int,
         executor: int, stream: int) -> None:
    """Phase 2 of every op: check the workspace, queue the kernel, consume the executor."""
    ex = _executor(s, executor, ACLNN_ERR_PARAM_NULLPTR)
    if ex.api != api:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"this executor was made by {ex.api}_get_workspace_"
                                            f"size, not {api}_get_workspace_size")
    st = streams.lookup(s, th, stream)
    need = ex.workspace
    if workspace_size < need:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"workspace_size {workspace_size} is smaller than "
                                            f"the {need} bytes {api}_get_workspace_size "
                                            "reported")
    writes = list(ex.writes)
    if need > 0:
        if workspace == 0:
            raise _err(ACLNN_ERR_PARAM_INVALID, f"{api} needs a {need}-byte workspace but the "
                                                "workspace pointer is null: allocate it with "
                                                "acl.rt.malloc(workspace_size, 0)")
        r = s.memory.find(workspace)
        if r is None or r.kind not in (DEVICE, DVPP):
            kind = "not memory the emulator knows" if r is None else \
                f"{KIND_NAMES[r.kind]} memory"
            raise _err(ACLNN_ERR_PARAM_INVALID, f"workspace {workspace:#x} is {kind}: it must "
                                                "be device memory from acl.rt.malloc")
        if workspace + need > r.end:
            raise _err(ACLNN_ERR_PARAM_INVALID,
                       f"workspace {workspace:#x} has {r.end - workspace} bytes left in "
                       f"allocation #{r.id}, {api} needs {need}")
        writes.append((workspace, need, "aclnn workspace"))
    ns, cores = aclnn_cost(s.profile, ex.flops, ex.nbytes, ex.dtype)
    queue_device_task(s, th, cid, st, TaskKind.KERNEL, Engine.AICORE, ns, ex.reads, writes,
                      ex.kernel, f"aclnn {api}", units=cores)
    ex.runs += 1
    if not ex.repeatable:
        s.retire(ex, cid)


# ------------------------------------------------------------------ Add


def _promote(a: str, b: str) -> str:
    """Torch-like promotion: a float operand wins over an integer one."""
    if a == b:
        return a
    fa, fb = np.dtype(a).kind == "f", np.dtype(b).kind == "f"
    if fa != fb:
        return a if fa else b
    return np.result_type(a, b).name


@acl_api("acl_lab.aclnn.add_get_workspace_size", "aclnnAddGetWorkspaceSize", "kkkk", out=2,
         default=(0, 0))
def add_get_workspace_size(s: S, th: HostThread, cid: int, self_: int, other: int, alpha: int,
                           out: int) -> tuple[int, int]:
    """``(workspace_size, executor, ret)`` for ``out = self + alpha * other``.

    Broadcasting as numpy; the result dtype is the promotion of self and other (a float
    operand wins over an integer one), and must cast to out's dtype within its kind; an
    integer result needs an integer alpha. 161001 for a null tensor or alpha, 161002 for
    shape or dtype mismatches. The workspace size is 0.
    Differs from real ACL: an acl_lab extension; bool, complex and bfloat16 tensors are not
    supported; float16 is computed in float32 and rounded once.
    """
    x = _tensor(s, self_, "self")
    y = _tensor(s, other, "other")
    a: AclnnScalar = _get(s, alpha, AclnnScalar, "alpha (an aclScalar)")
    o = _tensor(s, out, "out")
    api = "acl_lab.aclnn.add_get_workspace_size"
    for name, t in (("self", x), ("other", y), ("out", o)):
        if t.spec.dtype not in _ADD_TYPES:
            raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: {name} dtype {t.spec.dtype} is not "
                                                f"supported ({', '.join(sorted(_ADD_TYPES))})")
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(x.shape, y.shape))
    except ValueError:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: self {list(x.shape)} and other "
                                            f"{list(y.shape)} do not broadcast") from None
    if o.shape != shape:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: out is {list(o.shape)} but self + other "
                                            f"broadcasts to {list(shape)}")
    promoted = _promote(x.spec.dtype, y.spec.dtype)
    if not np.can_cast(promoted, o.spec.dtype, "same_kind"):
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: the result type {promoted} cannot be "
                                            f"cast to out's dtype {o.spec.dtype}")
    if np.dtype(promoted).kind in "iu" and np.asarray(a.value).dtype.kind == "f":
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: alpha {a.value} is a float but the "
                                            f"result type {promoted} is an integer type")
    calc = "float32" if promoted == "float16" else promoted
    alpha_v = np.asarray(a.value).astype(calc)[()]
    xs, ys, os_ = x.spec, y.spec, o.spec

    def run(data: list[bytes]) -> list[bytes]:
        xa = np.frombuffer(data[0], dtype=xs.dtype).reshape(xs.shape).astype(calc)
        ya = np.frombuffer(data[1], dtype=ys.dtype).reshape(ys.shape).astype(calc)
        with np.errstate(over="ignore"):
            z = xa + alpha_v * ya
        return [np.ascontiguousarray(np.broadcast_to(z, os_.shape)).astype(os_.dtype).tobytes()]

    reads, writes = _io([x, y], o)
    nbytes = xs.nbytes + ys.nbytes + os_.nbytes
    ex = Executor("add", 0, reads, writes, run, 2 * os_.size, nbytes, calc)
    return _phase1(s, cid, ex, f"aclnn executor add {os_.dtype}{list(shape)}")


@acl_api("acl_lab.aclnn.add", "aclnnAdd", "pkkk", launch=True)
def add(s: S, th: HostThread, cid: int, workspace: int, workspace_size: int, executor: int,
        stream: int) -> None:
    """Phase 2 of Add: queue it on ``stream`` (asynchronous) and consume the executor.

    161001 for a null executor; 161002 for an executor of another op or a workspace smaller
    than phase 1 reported; 561103 when a single-use executor already ran.
    Differs from real ACL: an acl_lab extension; the code for reusing a consumed executor
    (561103) is approximate: the real behaviour is undefined and unverified.
    """
    _run(s, th, cid, "add", workspace, workspace_size, executor, stream)


# ------------------------------------------------------------------ Matmul


@acl_api("acl_lab.aclnn.matmul_get_workspace_size", "aclnnMatmulGetWorkspaceSize", "kkk|i",
         out=2, default=(0, 0))
def matmul_get_workspace_size(s: S, th: HostThread, cid: int, self_: int, mat2: int, out: int,
                              cube_math_type: int = 0) -> tuple[int, int]:
    """``(workspace_size, executor, ret)`` for ``out = self @ mat2``.

    2-D inputs use MatMul; inputs with batch dims use BatchMatMul (numpy broadcasting of the
    batch dims). ``cube_math_type`` is 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16
    or 3 USE_HF32 (161002 otherwise). The workspace size is the size of one output: an
    emulator choice (real sizes depend on the tiling).
    Differs from real ACL: an acl_lab extension; 1-D inputs are not supported;
    cube_math_type does not change the arithmetic (float16 accumulates in float32).
    """
    x = _tensor(s, self_, "self")
    w = _tensor(s, mat2, "mat2")
    o = _tensor(s, out, "out")
    api = "acl_lab.aclnn.matmul_get_workspace_size"
    if not 0 <= cube_math_type <= 3:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: cube_math_type {cube_math_type} is not "
                                            "0-3")
    if len(x.shape) < 2 or len(w.shape) < 2:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: self {list(x.shape)} and mat2 "
                                            f"{list(w.shape)} must be at least 2-D here")
    op_type = "MatMul" if len(x.shape) == 2 and len(w.shape) == 2 else "BatchMatMul"
    return _op_phase1(s, cid, api, "matmul", op_type, [x, w], o, {}, True)


@acl_api("acl_lab.aclnn.matmul", "aclnnMatmul", "pkkk", launch=True)
def matmul(s: S, th: HostThread, cid: int, workspace: int, workspace_size: int, executor: int,
           stream: int) -> None:
    """Phase 2 of Matmul: needs the workspace phase 1 reported (non-null device memory).

    Codes as ``add``; the op writes scratch data into the workspace, so freeing it before the
    stream is synchronized makes the task fail.
    Differs from real ACL: an acl_lab extension; 561103 for reuse is approximate.
    """
    _run(s, th, cid, "matmul", workspace, workspace_size, executor, stream)


# ------------------------------------------------------------------ Relu


@acl_api("acl_lab.aclnn.relu_get_workspace_size", "aclnnReluGetWorkspaceSize", "kk", out=2,
         default=(0, 0))
def relu_get_workspace_size(s: S, th: HostThread, cid: int, self_: int,
                            out: int) -> tuple[int, int]:
    """``(workspace_size, executor, ret)`` for ``out = max(self, 0)``; workspace size 0.

    out must have self's shape and dtype (161002 otherwise).
    Differs from real ACL: an acl_lab extension; dtypes are those of the emulator's Relu
    (float32, float16, int32, int8).
    """
    return _op_phase1(s, cid, "acl_lab.aclnn.relu_get_workspace_size", "relu", "Relu",
                      [_tensor(s, self_, "self")], _tensor(s, out, "out"), {}, False)


@acl_api("acl_lab.aclnn.relu", "aclnnRelu", "pkkk", launch=True)
def relu(s: S, th: HostThread, cid: int, workspace: int, workspace_size: int, executor: int,
         stream: int) -> None:
    """Phase 2 of Relu (workspace may be 0 / null).

    Differs from real ACL: an acl_lab extension; 561103 for reuse is approximate.
    """
    _run(s, th, cid, "relu", workspace, workspace_size, executor, stream)


# ------------------------------------------------------------------ Softmax


@acl_api("acl_lab.aclnn.softmax_get_workspace_size", "aclnnSoftmaxGetWorkspaceSize", "kLk",
         out=2, default=(0, 0))
def softmax_get_workspace_size(s: S, th: HostThread, cid: int, self_: int, dim: int,
                               out: int) -> tuple[int, int]:
    """``(workspace_size, executor, ret)`` for softmax of ``self`` along ``dim``.

    ``dim`` must be in [-rank, rank); out must match self (161002 otherwise). The workspace
    size is the size of one output: an emulator choice.
    Differs from real ACL: an acl_lab extension; float32 and float16 only, computed in
    float32.
    """
    x = _tensor(s, self_, "self")
    o = _tensor(s, out, "out")
    api = "acl_lab.aclnn.softmax_get_workspace_size"
    rank = len(x.shape)
    if not -rank <= dim < rank:
        raise _err(ACLNN_ERR_PARAM_INVALID, f"{api}: dim {dim} is out of range for a "
                                            f"{rank}-D tensor (use -{rank}..{rank - 1})")
    return _op_phase1(s, cid, api, "softmax", "SoftmaxV2", [x], o, {"axes": [dim]}, True)


@acl_api("acl_lab.aclnn.softmax", "aclnnSoftmax", "pkkk", launch=True)
def softmax(s: S, th: HostThread, cid: int, workspace: int, workspace_size: int, executor: int,
            stream: int) -> None:
    """Phase 2 of Softmax: needs the workspace phase 1 reported.

    Differs from real ACL: an acl_lab extension; 561103 for reuse is approximate.
    """
    _run(s, th, cid, "softmax", workspace, workspace_size, executor, stream)


__all__ = ["add", "add_get_workspace_size", "create_scalar", "create_tensor", "destroy_executor",
           "destroy_scalar", "destroy_tensor", "matmul", "matmul_get_workspace_size", "relu",
           "relu_get_workspace_size", "set_executor_repeatable", "softmax",
           "softmax_get_workspace_size"]
