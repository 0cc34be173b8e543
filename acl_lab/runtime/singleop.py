"""Operators on the emulated device: tensor descriptors, op attributes, single-op execution.

Functions over a ``Session`` (all state stays on the Session; this module keeps none). A
single operator becomes a kernel task on a stream: its inputs are read through the runtime's
address checks at the task's start, ``OpDef.compute`` runs, and the outputs are written at its
end. Its duration is the profile's kernel overhead plus the longer of the op's FLOPs on the
AI cores it occupies (at the profile's rate for the dtype) and its bytes at their share of the
device memory bandwidth (a roofline, ``costs.kernel_ns``). A kernel occupies as many AI cores
as its output can fill (``costs.occupancy``): small outputs leave cores free for kernels of
other streams.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..constants import ACL_DT_UNDEFINED, ErrorCode
from . import buffers, copies, scheduler, streams
from .costs import op_cost
from .errors import AclError
from .kinds import Engine, ObjectKind, TaskKind
from .memory import DEVICE, DVPP, HOST_PAGEABLE, HOST_PINNED, KIND_NAMES, SIZE_MAX
from .objects import HostThread, Task
from .opdefs import (
    ACL_TO_NUMPY,
    FORMATS_ATTR,
    NUMPY_TO_ACL,
    OpDef,
    OpError,
    TensorSpec,
    get_op,
)

if TYPE_CHECKING:
    from .session import Session

ACL_MEMTYPE_HOST = 1
#: The C API's int64_t dims.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

#: An unused optional input of an operator (Conv2D's bias, say) is described by
#: aclCreateTensorDesc(ACL_DT_UNDEFINED, 0, nullptr, ACL_FORMAT_UNDEFINED) with a data buffer
#: of (nullptr, 0) (the aclopExecuteV2 / aclopCompileAndExecute pages; the public
#: acl_compile_and_execute_conv2d sample does so): its spec is an empty uint8 tensor, which
#: the kernels read as "absent" (kernels._present)
PLACEHOLDER_DTYPE = "uint8"


class TensorDesc:
    """An aclTensorDesc: dtype, dims, format, and optional name / const data / placement."""

    def __init__(self, oid: int, handle: int, dtype: int, dims: list[int], fmt: int) -> None:
        self.oid = oid
        self.handle = handle
        self.dtype = dtype
        self.dims = list(dims)
        self.format = fmt
        self.name = ""
        self.const: bytes | None = None
        self.placement = 0
        self.alive = True

    def element_count(self) -> int:
        """Product of the dims as a size_t, the way aclGetTensorDescElementCount computes it:
        1 for a scalar, 0 for any negative (dynamic) dim and 0 when the product overflows
        size_t (public AscendCL ``tensor_desc_internal.cpp``: ``CheckSizeTMultiOverflow``
        per dim, returning 0 on failure)."""
        count = 1
        for d in self.dims:
            if d < 0:
                return 0
            count *= d
            if count > SIZE_MAX:
                return 0
        return count

    @property
    def placeholder(self) -> bool:
        """True for the desc of an unused optional input (ACL_DT_UNDEFINED, no dims)."""
        return self.dtype == ACL_DT_UNDEFINED and not self.dims

    def spec(self) -> TensorSpec:
        """The operator-facing description (an empty tensor for a placeholder desc); raises
        OpError for dtypes ops cannot handle."""
        if self.placeholder:
            return TensorSpec(PLACEHOLDER_DTYPE, (0,), self.format)
        name = ACL_TO_NUMPY.get(self.dtype)
        if name is None:
            raise OpError(f"data type {self.dtype} is not supported by the emulated operators",
                          ErrorCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE)
        return TensorSpec(name, tuple(self.dims), self.format)


class OpAttr:
    """An aclopAttr: named attribute values."""

    def __init__(self, oid: int, handle: int) -> None:
        self.oid = oid
        self.handle = handle
        self.values: dict[str, Any] = {}
        self.alive = True


class OpHandle:
    """A handle from aclopCreateHandle: an op type bound to descs and attributes."""

    def __init__(self, oid: int, handle: int, op: OpDef, in_descs: list[TensorDesc],
                 out_descs: list[TensorDesc], attrs: dict[str, Any]) -> None:
        self.oid = oid
        self.handle = handle
        self.op = op
        self.in_descs = in_descs
        self.out_descs = out_descs
        self.attrs = attrs
        self.alive = True


# ------------------------------------------------------------------ tensor descs


def int64_dims(dims: list[int], what: str) -> list[int]:
    """``dims`` if every one fits the C API's ``int64_t``, else AclError 100000.

    aclCreateTensorDesc and aclSetTensorShape take ``const int64_t *dims``; a Python int
    outside int64 cannot be passed (the emulator refuses it as an invalid parameter instead
    of letting OverflowError escape).
    """
    for i, d in enumerate(dims):
        if not INT64_MIN <= d <= INT64_MAX:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"{what}: dim {i} ({d}) does not fit int64_t, the type "
                           "of the C API's dims")
    return list(dims)


def create_tensor_desc(s: Session, cid: int, dtype: int, dims: list[int],
                       fmt: int) -> int:
    """aclCreateTensorDesc(dtype, numDims, dims, format)."""
    d = TensorDesc(-1, 0, dtype, int64_dims(dims, "acl.create_tensor_desc"), fmt)
    return s.register(d, ObjectKind.TENSOR_DESC, cid, f"tensor desc {dims}")


def tensor_desc(s: Session, handle: int) -> TensorDesc:
    """Resolve a tensor-desc handle (100000 for null or unknown)."""
    return s.lookup(handle, TensorDesc, "tensor desc")


def destroy_tensor_desc(s: Session, cid: int, handle: int) -> None:
    """aclDestroyTensorDesc."""
    s.retire(s.lookup(handle, TensorDesc, "tensor desc"), cid)


def tensor_desc_size(s: Session, handle: int) -> int:
    """aclGetTensorDescSize: element count x data type size as a size_t, 0 when the product
    overflows (public AscendCL ``tensor_desc_internal.cpp``: the result of
    ``CheckSizeTMultiOverflow`` is ignored and the size stays 0)."""
    from ..constants import DATA_TYPE_SIZE, DATA_TYPE_SIZE_DEFAULT_CASE
    d = tensor_desc(s, handle)
    size = d.element_count() * DATA_TYPE_SIZE.get(d.dtype, DATA_TYPE_SIZE_DEFAULT_CASE)
    return size if size <= SIZE_MAX else 0


# ------------------------------------------------------------------ attributes


def create_op_attr(s: Session, cid: int) -> int:
    """aclopCreateAttr."""
    return s.register(OpAttr(-1, 0), ObjectKind.OP_ATTR, cid, "op attr")


def op_attr(s: Session, handle: int) -> OpAttr:
    """Resolve an op-attr handle."""
    return s.lookup(handle, OpAttr, "op attr")


def destroy_op_attr(s: Session, cid: int, handle: int) -> None:
    """aclopDestroyAttr."""
    s.retire(s.lookup(handle, OpAttr, "op attr"), cid)


def set_op_model_dir(s: Session, path: str) -> None:
    """aclopSetModelDir: the emulator needs no compiled ops; the folder must exist and a
    second call returns 100002."""
    if not os.path.isdir(path):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_FILE,
                       f"op model directory {path!r} does not exist")
    if s.op_model_dir is not None:
        raise AclError(ErrorCode.ACL_ERROR_REPEAT_INITIALIZE,
                       "acl.op.set_model_dir was already called")
    s.op_model_dir = path


# ------------------------------------------------------------------ execution


def _op_attrs(s: Session, op: OpDef, attr: int) -> dict[str, Any]:
    values = dict(op.defaults)
    if attr:
        values.update(op_attr(s, attr).values)
    return values


def _read_host_const(s: Session, desc: TensorDesc, buf: Any,
                     board: bool = False) -> np.ndarray | None:
    """Data of a const input: set_tensor_const bytes, or host memory by placement; with
    ``board`` (an input the op needs as a constant, in the device run mode) whatever the
    buffer holds when the op is queued: on the board the compiled op reads such an input
    (Slice's offsets and size in the public Slice sample) from memory shared with the host."""
    spec = desc.spec()
    if desc.const is not None:
        return np.frombuffer(desc.const, dtype=spec.dtype)[:spec.size].reshape(spec.shape)
    if board and s.run_mode == "device" and buf is not None and buf.addr and \
            buf.size >= spec.nbytes:
        r = copies.resolve(s, buf.addr, spec.nbytes, "const input")
        off = buf.addr - r.addr
        return np.frombuffer(r.buf[off:off + spec.nbytes].tobytes(),
                             dtype=spec.dtype).reshape(spec.shape)
    if desc.placement == ACL_MEMTYPE_HOST and buf is not None:
        r = copies.resolve(s, buf.addr, spec.nbytes, "host input")
        if r.kind not in (HOST_PINNED, HOST_PAGEABLE):
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           "an input placed in host memory "
                           "(set_tensor_place_ment ACL_MEMTYPE_HOST) points at device "
                           "memory")
        off = buf.addr - r.addr
        return np.frombuffer(r.buf[off:off + spec.nbytes].tobytes(),
                             dtype=spec.dtype).reshape(spec.shape)
    return None


def _op(op_type: str) -> OpDef:
    """The registered operator ``op_type``; AclError with its code (100024) when none."""
    try:
        return get_op(op_type)
    except OpError as e:
        raise AclError(e.code, e.message) from None


def launch_op(s: Session, th: HostThread, cid: int, op_type: str,
              in_descs: list[int], in_bufs: list[int], out_descs: list[int],
              out_bufs: list[int], attr: int, stream: int) -> None:
    """aclopExecuteV2: queue one operator on a stream as a kernel task."""
    if len(in_descs) != len(in_bufs) or len(out_descs) != len(out_bufs):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "the desc and buffer lists must have the same lengths")
    if any(h == 0 for h in (*in_descs, *out_descs)):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "a tensor desc in the lists is null")
    st = streams.lookup(s, th, stream)
    op = _op(op_type)
    ind = [tensor_desc(s, h) for h in in_descs]
    outd = [tensor_desc(s, h) for h in out_descs]
    inb = [buffers.lookup(s, h) if h else None for h in in_bufs]
    outb = [buffers.lookup(s, h) for h in out_bufs]
    if all(0 in d.dims for d in outd) and outd:
        return  # every output empty: real ACL returns at once (array_utils IsAllTensorEmpty)
    attrs = _op_attrs(s, op, attr)
    _queue_kernel(s, th, cid, st, op, ind, inb, outd, outb, attrs)


def _queue_kernel(s: Session, th: HostThread, cid: int, st: Any, op: OpDef,
                  ind: list[TensorDesc], inb: list[Any], outd: list[TensorDesc],
                  outb: list[Any], attrs: dict[str, Any]) -> None:
    lo, hi = op.inputs
    if not lo <= len(ind) <= hi:
        raise AclError(ErrorCode.ACL_ERROR_OP_NOT_FOUND,
                       f"{op.name} takes {lo}..{hi} inputs, got {len(ind)}: no "
                       "compiled op matches")
    if len(outd) != op.outputs:
        raise AclError(ErrorCode.ACL_ERROR_OP_NOT_FOUND,
                       f"{op.name} has {op.outputs} output(s), got {len(outd)}")
    try:
        in_specs = [d.spec() for d in ind]
        consts: dict[int, np.ndarray] = {}
        for i, d in enumerate(ind):
            if d.placeholder:  # an unused optional input: no data, nothing read
                consts[i] = np.zeros(0, dtype=PLACEHOLDER_DTYPE)
                continue
            c = _read_host_const(s, d, inb[i], i in op.const_inputs)
            if c is not None:
                consts[i] = c
            elif i in op.const_inputs:
                raise OpError(f"{op.name} input {i} must be constant: mark it with "
                              "acl.set_tensor_const or place it in host memory",
                              ErrorCode.ACL_ERROR_INVALID_PARAM)
        out_specs = op.infer(in_specs, {**attrs, "__consts__": consts})
    except OpError as e:
        raise AclError(e.code, e.message) from None
    for i, (want, d) in enumerate(zip(out_specs, outd, strict=True)):
        got = d.spec()
        if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
            raise AclError(ErrorCode.ACL_ERROR_OP_NOT_FOUND,
                           f"{op.name} output {i} is {want.dtype}{list(want.shape)}"
                           f" but its desc says {got.dtype}{list(got.shape)}: no "
                           "compiled op matches")
    t = Task(TaskKind.KERNEL, st, cid, th.clock, Engine.AICORE, 0)
    t.label = op.name
    # In the device run mode (RC, on the board) host memory is device memory too.
    device_kinds = (DEVICE, DVPP) if s.run_mode == "host" else (DEVICE, DVPP, HOST_PINNED,
                                                                HOST_PAGEABLE)
    for i, spec in enumerate(in_specs):
        if i in consts:
            continue
        b = inb[i]
        if b is None or b.addr == 0:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"{op.name} input {i} has a null data buffer")
        if b.size < spec.nbytes:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"{op.name} input {i} needs {spec.nbytes} bytes "
                           f"({spec.dtype}{list(spec.shape)}), its data buffer "
                           f"holds {b.size}")
        _device_access(s, t, b.addr, spec.nbytes, f"{op.name} input {i}", device_kinds,
                       "op inputs must be device memory (acl.rt.malloc)", False)
    for i, spec in enumerate(out_specs):
        b = outb[i]
        if b.addr == 0 or b.size < spec.nbytes:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"{op.name} output {i} needs {spec.nbytes} bytes, its "
                           f"data buffer holds {b.size}")
        _device_access(s, t, b.addr, spec.nbytes, f"{op.name} output {i}", device_kinds,
                       "op outputs must be device memory", True)
    flops, nbytes = op.cost(in_specs, out_specs, attrs)
    t.duration, t.units = op_cost(s.profile, flops, nbytes, in_specs, out_specs)
    t.nbytes = nbytes
    order = [i for i in range(len(ind)) if i not in consts]
    t.kernel = _kernel_fn(op, in_specs, out_specs, attrs, consts, order)
    scheduler.submit(s, t)


def _device_access(s: Session, t: Task, addr: int, nbytes: int, what: str,
                   kinds: tuple[int, ...], rule: str, write: bool) -> None:
    """Add the access of an operator's data buffer to ``t``; 100000 when its memory is not
    of ``kinds`` (host memory, in EP mode)."""
    r = _resolve_start(s, addr, what, nbytes)
    if r.kind not in kinds:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"{what} is in host memory: {rule}")
    t.add_access(r, addr - r.addr, nbytes, write)


def _resolve_start(s: Session, addr: int, what: str, nbytes: int = 1) -> Any:
    """The region ``addr`` starts in; raw host memory (a C program's stack or heap, which no
    region indexes) is resolved for the ``nbytes`` the task will touch."""
    r = s.memory.find(addr)
    if r is None:
        r = s.memory.resolve(addr, max(nbytes, 1), what)
    return r


def cast(s: Session, th: HostThread, cid: int, src_desc: int, src_buf: int,
         dst_desc: int, dst_buf: int, truncate: int, stream: int) -> None:
    """aclopCast: the Cast op with ``dst_type`` taken from the destination desc."""
    st = streams.lookup(s, th, stream)
    try:
        op = get_op("Cast")
    except OpError as e:
        raise AclError(e.code, e.message) from None
    dd = tensor_desc(s, dst_desc)
    _queue_kernel(s, th, cid, st, op, [tensor_desc(s, src_desc)],
                       [buffers.lookup(s, src_buf)], [dd], [buffers.lookup(s, dst_buf)],
                       {**op.defaults, "dst_type": dd.dtype, "truncate": bool(truncate)})


def infer_op_shape(s: Session, op_type: str, in_descs: list[int], in_bufs: list[int],
                   num_outputs: int, out_descs: list[int], attr: int) -> None:
    """aclopInferShape: fill the output descs' dims and dtypes from the inputs."""
    op = _op(op_type)
    ind = [tensor_desc(s, h) for h in in_descs]
    inb = [buffers.lookup(s, h) if h else None for h in in_bufs]
    attrs = _op_attrs(s, op, attr)
    try:
        consts = {i: c for i, d in enumerate(ind)
                  if (c := _read_host_const(s, d, inb[i] if i < len(inb) else None))
                  is not None}
        specs = op.infer([d.spec() for d in ind], {**attrs, "__consts__": consts})
    except OpError as e:
        raise AclError(e.code, e.message) from None
    if num_outputs != len(specs) or len(out_descs) != len(specs):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{op.name} has {len(specs)} outputs, got {num_outputs}")
    for h, spec in zip(out_descs, specs, strict=True):
        d = tensor_desc(s, h)
        d.dims = list(spec.shape)
        d.dtype = NUMPY_TO_ACL.get(spec.dtype, d.dtype)


class CompiledOp:
    """An operator aclopCompile compiled in this process (no handle in the trace)."""

    def __init__(self, op_type: str, ins: list[tuple[str, tuple[int, ...], int]],
                 outs: list[tuple[str, tuple[int, ...], int]]) -> None:
        self.handle = 0
        self.op_type = op_type
        self.ins = ins
        self.outs = outs
        self.alive = True


#: the "format" field of the single-op models ``acl-lab atc --singleop`` writes
SINGLEOP_FILE_FORMAT = "acl_lab-singleop"


def _desc_key(d: TensorDesc) -> tuple[str, tuple[int, ...], int]:
    return ACL_TO_NUMPY.get(d.dtype, str(d.dtype)), tuple(d.dims), d.format


def compiled_ops(s: Session) -> list[CompiledOp]:
    """The single-op models the program can run by handle: the ``.om`` files of the folder
    given to aclopSetModelDir (``acl-lab atc --singleop`` output) and the ops aclopCompile
    compiled."""
    import json

    out = [o for o in s.handles.values() if isinstance(o, CompiledOp)]
    folder = s.op_model_dir
    if folder is None or not os.path.isdir(folder):
        return out
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".om"):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict) or doc.get("format") != SINGLEOP_FILE_FORMAT:
            continue
        out.append(CompiledOp(str(doc.get("op")),
                              [(str(t), tuple(d), int(f)) for t, d, f in doc.get("inputs", [])],
                              [(str(t), tuple(d), int(f)) for t, d, f in doc.get("outputs", [])]))
    return out


def create_op_handle(s: Session, cid: int, op_type: str, in_descs: list[int],
                     out_descs: list[int], attr: int) -> int:
    """aclopCreateHandle: bind an op type to descs and attributes for repeated runs.

    The op must match a compiled single-op model (hicann/ge
    api/acl/acl_op_executor/single_op/op_executor.cpp ``OpExecutor::CreateOpHandle`` calls
    ``AclOpResourceManager::MatchOpModel``, which answers ACL_ERROR_OP_NOT_FOUND when no
    model loaded from the aclopSetModelDir folder, or compiled by aclopCompile, has this op
    type and these input and output descs).
    """
    op = _op(op_type)
    ind = [tensor_desc(s, x) for x in in_descs]
    outd = [tensor_desc(s, x) for x in out_descs]
    want = ([_desc_key(d) for d in ind], [_desc_key(d) for d in outd])
    if not any(c.op_type == op_type and (c.ins, c.outs) == want for c in compiled_ops(s)):
        where = (f"in {s.op_model_dir!r}" if s.op_model_dir is not None
                 else "(acl.op.set_model_dir was not called)")
        raise AclError(ErrorCode.ACL_ERROR_OP_NOT_FOUND,
                       f"no compiled single-op model {where} matches {op_type} with inputs "
                       f"{want[0]} and outputs {want[1]}: compile it with acl-lab atc "
                       "--singleop (or aclopCompile) before creating a handle")
    h = OpHandle(-1, 0, op, ind, outd, _op_attrs(s, op, attr))
    return s.register(h, ObjectKind.OP_HANDLE, cid, f"op handle {op_type}")


def compile_op(s: Session, op_type: str, in_descs: list[int], out_descs: list[int],
               attr: int, remember: bool = True) -> CompiledOp:
    """aclopCompile: check that the emulated operators compute ``op_type`` for these descs
    (its shape inference gives the output descs) and remember it as compiled (with
    ``remember``; else the caller does, with :func:`remember_compiled`, once the rest of its
    call succeeded)."""
    op = _op(op_type)
    ind = [tensor_desc(s, x) for x in in_descs]
    outd = [tensor_desc(s, x) for x in out_descs]
    try:
        specs = [d.spec() for d in ind]
        if not op.const_inputs:
            got = op.infer(specs, {**_op_attrs(s, op, attr), "__consts__": {}})
            if [(g.dtype, tuple(g.shape)) for g in got] != \
                    [(d.spec().dtype, tuple(d.dims)) for d in outd]:
                raise OpError(f"{op_type} computes {[(g.dtype, list(g.shape)) for g in got]}, "
                              "not the output descs given", ErrorCode.ACL_ERROR_OP_NOT_FOUND)
    except OpError as e:
        raise AclError(e.code, e.message) from None
    compiled = CompiledOp(op_type, [_desc_key(d) for d in ind], [_desc_key(d) for d in outd])
    if remember:
        remember_compiled(s, compiled)
    return compiled


def remember_compiled(s: Session, compiled: CompiledOp) -> None:
    """Keep ``compiled`` for later op handles (aclopCompile's online cache)."""
    s.register(compiled)


def run_internal_op(s: Session, th: HostThread, cid: int, op_type: str,
                    inputs: list[tuple[int, list[int], int, int, int]],
                    outputs: list[tuple[int, list[int], int, int, int]],
                    attrs: dict[str, Any], stream: int) -> None:
    """Queue ``op_type`` on ``stream`` with descs and buffers that exist only for this call
    (an API that runs an operator of its own, like aclblasGemmEx); each tensor is
    ``(aclDataType, dims, aclFormat, address, size)``."""
    st = streams.lookup(s, th, stream)
    op = _op(op_type)
    from .objects import DataBuffer

    def desc(t: tuple[int, list[int], int, int, int]) -> TensorDesc:
        return TensorDesc(-1, 0, t[0], t[1], t[2])

    def buf(t: tuple[int, list[int], int, int, int]) -> DataBuffer:
        return DataBuffer(-1, 0, t[3], t[4])

    _queue_kernel(s, th, cid, st, op, [desc(t) for t in inputs], [buf(t) for t in inputs],
                  [desc(t) for t in outputs], [buf(t) for t in outputs],
                  {**op.defaults, **attrs})


#: aclTransType / aclComputeType values (CANN ops/acl_cblas.h)
ACL_TRANS_N, ACL_TRANS_T, ACL_TRANS_NZ = 0, 1, 2
ACL_COMPUTE_HIGH_PRECISION = 0


def gemm_ex(s: Session, th: HostThread, cid: int, trans_a: int, trans_b: int, trans_c: int,
            m: int, n: int, k: int, alpha: int, a: int, lda: int, a_type: int, b: int,
            ldb: int, b_type: int, beta: int, c: int, ldc: int, c_type: int,
            compute_type: int, stream: int) -> None:
    """aclblasGemmEx: ``C = alpha * op(A) @ op(B) + beta * C`` as the GEMM single op.

    Checks and shapes follow hicann/ge api/acl/acl_cblas/single_op/blas/gemm_ops.cpp: null
    pointers, m/n/k <= 0, transA/transB outside N/T/NZ, transC other than N/NZ, any of
    lda/ldb/ldc other than -1 and a compute type other than HIGH_PRECISION are 100000; A is
    [m, k] ([k, m] transposed), B [k, n] ([n, k]), C [m, n], alpha and beta one value of C's
    type read from device memory.
    """
    for ptr, what in ((alpha, "alpha"), (beta, "beta"), (a, "matrixA"), (b, "matrixB"),
                      (c, "matrixC")):
        if ptr == 0:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"{what} is null")
    if m <= 0 or n <= 0 or k <= 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"m, n and k must be > 0 (m = {m}, n = {n}, k = {k})")
    if not (ACL_TRANS_N <= trans_a <= ACL_TRANS_NZ and ACL_TRANS_N <= trans_b <= ACL_TRANS_NZ):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "transA and transB must be ACL_TRANS_N, ACL_TRANS_T or ACL_TRANS_NZ")
    if trans_c not in (ACL_TRANS_N, ACL_TRANS_NZ):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "transC must be ACL_TRANS_N or ACL_TRANS_NZ")
    if (lda, ldb, ldc) != (-1, -1, -1):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"lda, ldb and ldc must be -1 (got {lda}, {ldb}, {ldc})")
    if compute_type != ACL_COMPUTE_HIGH_PRECISION:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "the compute type must be ACL_COMPUTE_HIGH_PRECISION")
    if ACL_TRANS_NZ in (trans_a, trans_b, trans_c):
        raise AclError(ErrorCode.ACL_ERROR_API_NOT_SUPPORT,
                       "fractal (ACL_TRANS_NZ) layouts are not emulated")
    fmt = 2  # ACL_FORMAT_ND

    def nbytes(dtype: int, count: int) -> int:
        name = ACL_TO_NUMPY.get(dtype)
        if name is None:
            raise AclError(ErrorCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                           f"data type {dtype} is not supported by the emulated GEMM")
        return int(np.dtype(name).itemsize) * count

    dims_a = [k, m] if trans_a == ACL_TRANS_T else [m, k]
    dims_b = [n, k] if trans_b == ACL_TRANS_T else [k, n]
    size_c = nbytes(c_type, m * n)
    run_internal_op(s, th, cid, "GEMM",
                    [(a_type, dims_a, fmt, a, nbytes(a_type, m * k)),
                     (b_type, dims_b, fmt, b, nbytes(b_type, k * n)),
                     (c_type, [m, n], fmt, c, size_c),
                     (c_type, [], fmt, alpha, nbytes(c_type, 1)),
                     (c_type, [], fmt, beta, nbytes(c_type, 1))],
                    [(c_type, [m, n], fmt, c, size_c)],
                    {"transpose_a": trans_a == ACL_TRANS_T,
                     "transpose_b": trans_b == ACL_TRANS_T}, stream)


def destroy_op_handle(s: Session, cid: int, handle: int) -> None:
    """aclopDestroyHandle."""
    s.retire(s.lookup(handle, OpHandle, "op handle"), cid)


def execute_op_handle(s: Session, th: HostThread, cid: int, handle: int,
                      in_bufs: list[int], out_bufs: list[int], stream: int) -> None:
    """aclopExecWithHandle: run a created handle with new buffers."""
    h: OpHandle = s.lookup(handle, OpHandle, "op handle")
    st = streams.lookup(s, th, stream)
    if len(in_bufs) != len(h.in_descs) or len(out_bufs) != len(h.out_descs):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "buffer counts do not match the handle's descs")
    _queue_kernel(s, th, cid, st, h.op, h.in_descs,
                       [buffers.lookup(s, b) if b else None for b in in_bufs],
                       h.out_descs, [buffers.lookup(s, b) for b in out_bufs], h.attrs)


def _kernel_fn(op: OpDef, in_specs: list[TensorSpec], out_specs: list[TensorSpec],
               attrs: dict[str, Any], consts: dict[int, np.ndarray],
               order: list[int]) -> Any:
    """The task's effect: bytes of the device inputs -> bytes of the outputs (the kernel is
    told the inputs' tensor formats, see ``kernels.FORMATS_ATTR``)."""
    attrs = {**attrs, FORMATS_ATTR: tuple(spec.format for spec in in_specs)}

    def run(data: list[bytes]) -> list[bytes]:
        arrays: list[np.ndarray] = []
        it = iter(data)
        for i, spec in enumerate(in_specs):
            if i in consts:
                arrays.append(consts[i])
            else:
                raw = next(it)
                arrays.append(np.frombuffer(raw, dtype=spec.dtype).reshape(spec.shape))
        with np.errstate(all="ignore"):  # a device computes inf/nan silently
            outs = op.compute(arrays, attrs)
        return [np.ascontiguousarray(o, dtype=spec.dtype).tobytes()
                for o, spec in zip(outs, out_specs, strict=True)]

    del order
    return run




# ------------------------------------------------------------------ generic device tasks


def read_now(s: Session, th: HostThread, cid: int, kind: TaskKind, duration: int,
             addr: int, nbytes: int, what: str, label: str,
             allowed: tuple[int, ...] = (DEVICE, DVPP)) -> bytes:
    """Read ``[addr, addr+nbytes)`` as a task on no stream that runs within the call (the
    host waits for it), as a call that takes its input before it returns does; the bytes.
    The read is recorded like any task's, so a write the program has not ordered before the
    call is a race."""
    r = _resolve_start(s, addr, what, nbytes)
    if r.kind not in allowed:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{what} must be device memory, not {KIND_NAMES[r.kind]} memory")
    t = Task(kind, None, cid, th.clock, Engine.HOST, duration)
    t.label = label
    t.add_access(r, addr - r.addr, nbytes, False)
    got: list[bytes] = []

    def take(inputs: list[bytes]) -> list[bytes]:
        got.extend(inputs)
        return []

    t.kernel = take
    scheduler.run_sync(s, th, t)
    return got[0] if got else b""


def queue_device_task(s: Session, th: HostThread, cid: int, st: Any, kind: TaskKind,
                      engine: Engine, duration: int,
                      reads: list[tuple[int, int, str]], writes: list[tuple[int, int, str]],
                      fn: Any, label: str, units: int = 1,
                      allowed: tuple[int, ...] = (DEVICE, DVPP)) -> Task:
    """Queue a task that reads ``reads`` at its start and writes ``writes`` at its end.

    ``reads``/``writes`` are ``(address, nbytes, what)``; each must start inside memory of one
    of the ``allowed`` region kinds (device memory by default). ``fn(list of input bytes) ->
    list of output bytes`` computes the outputs. Used by DVPP and the aclnn extension.
    """
    t = Task(kind, st, cid, th.clock, engine, duration)
    t.label = label
    t.units = units
    for group, write in ((reads, False), (writes, True)):
        for addr, nbytes, what in group:
            if addr == 0:
                raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"{what} is a null pointer")
            r = _resolve_start(s, addr, what, nbytes)
            if r.kind not in allowed:
                raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                               f"{what} must be device memory, not {KIND_NAMES[r.kind]} "
                               "memory")
            t.add_access(r, addr - r.addr, nbytes, write)
    t.kernel = fn
    scheduler.submit(s, t)
    return t
