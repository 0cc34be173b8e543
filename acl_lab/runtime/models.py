"""Offline models on the emulated device: load, describe, datasets and execution.

Functions over a ``Session`` (this module keeps no state but the opt-in ``shared_memo``). A
loaded model owns device memory for its weights and working tensors (allocated at load,
released at unload); executing it is one model task on the AI-core pool whose duration is the
sum of its layers' costs, reading the input buffers at its start and writing the outputs at its
end. Each layer is costed on the AI cores its output can fill (``costs.occupancy``); the task
books the execution's average occupancy (``costs.execution_cost``), so two streams can run two
batch-1 inferences side by side. The checks follow reference section 5(f): datasets and buffers
must be non-null, inputs may be up to 64 bytes short (more is an error, larger is a warning),
inputs and outputs must be device memory, and load, execute and unload must happen in one
context.

A dynamic model (gears named as batch sizes, image sizes or dims: ``OmModel.gears``) has one
more input than its graph, ``ascend_mbatch_shape_data`` (``OmModel.acl_inputs``), as real ATC
builds it: the input dataset needs a buffer for it. The three setters (aclmdlSetDynamicBatchSize,
aclmdlSetDynamicHWSize, aclmdlSetInputDynamicDims) are three ways to name a gear and share one
path, ``set_gear``: it checks the call in ACL's and GE's order, writes the gear's values into
that buffer, records the gear on the dataset (the gear its executions run at) and on the
loaded model (the gear ``get_cur_output_dims`` reports). Data buffers sized for the largest
gear (``get_input_size_by_index``) are normal at any gear.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..constants import ErrorCode, MemcpyKind
from . import buffers, costs, devices, scheduler, streams, waits
from .costs import ExecutionCost, execution_cost
from .errors import AclError
from .kinds import Engine, ObjectKind, TaskKind
from .memory import DEVICE, DVPP, HOST_PAGEABLE, HOST_PINNED
from .objects import Context, HostThread, Task
from .om import KIND_BATCH, KIND_DIMS, KIND_HW, SHAPE_DATA_NAME
from .opdefs import NUMPY_TO_ACL
from .singleop import _resolve_start

if TYPE_CHECKING:
    from .om import OmModel
    from .session import Session

#: Inputs may be this many bytes shorter than the model input (GE kDataMemAlignSizeCompare).
INPUT_SLACK = 64
#: The undersized-input code of CANN 5-8 (GE PARAM_INVALID); newest GE returns 500002.
UNDERSIZED_INPUT_CODE = ErrorCode.ACL_ERROR_GE_PARAM_INVALID
#: ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID: the shape-data buffer is too small for the gear
#: (fewer than 4 bytes per value), or set_input_dynamic_dims got dims that are not the
#: model's inputs (GE ge_executor.cc SetDynamic*, GetCurDynamicDims).
DYNAMIC_INPUT_LENGTH_CODE = ErrorCode.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID
#: ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID: a gear that is not the model's (a static model,
#: or gears of another kind); the same code for batch, image size and dims (GE
#: IsDynamicBatchSizeMatchModel / IsDynamicImageSizeMatchModel / IsDynmaicDimsSizeMatchModel).
DYNAMIC_BATCH_CODE = ErrorCode.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
#: ACL_ERROR_GE_EXEC_MODEL_ID_INVALID
MODEL_ID_CODE = ErrorCode.ACL_ERROR_GE_EXEC_MODEL_ID_INVALID


@dataclass
class LoadedModel:
    """A model id's state: the model, its context and the device memory it holds."""

    mid: int
    om: OmModel
    ctx: Context
    path: str
    regions: list[Any] = field(default_factory=list)
    last_stream: Any = None
    last_end: int = 0
    alive: bool = True
    #: the gear of the last successful gear setter (GE SetDynamicSize): what
    #: get_cur_output_dims reports; None until one (the largest gear is reported then)
    cur_gear: tuple[int, ...] | None = None
    #: execution_cost per gear (the profile does not change within a session)
    costs: dict[tuple[int, ...], ExecutionCost] = field(default_factory=dict)
    #: outputs of the last few executions by input digest (see ``_model_fn``)
    memo: OrderedDict[bytes, list[bytes]] = field(default_factory=OrderedDict)


class ModelDesc:
    """An aclmdlDesc: filled by get_desc from a loaded model."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.model: LoadedModel | None = None
        self.alive = True


class Dataset:
    """An aclmdlDataset: an ordered list of data-buffer handles (it owns none of them), and
    the gear set on it by a gear setter (ACL's ``dataset->dynamicBatchSize``,
    ``dynamicResolutionHeight/Width`` and ``dynamicDims``: one named gear here)."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.buffers: list[int] = []
        self.gear: tuple[int, ...] | None = None
        #: input index -> bytes the model reads there, set by acl.mdl.set_input_aipp for a
        #: dynamic-AIPP picture input (its pictures, not all of max_src_image_size)
        self.aipp_reads: dict[int, int] = {}
        self.alive = True


# ------------------------------------------------------------------------------ loading


def _load(s: Session, th: HostThread, cid: int, om: OmModel, path: str,
          with_mem: bool = False) -> int:
    ctx = devices.require_ctx(s, th)
    mid = s.next_model_id
    s.next_model_id += 1
    lm = LoadedModel(mid, om, ctx, path)
    if _shared_memos is not None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            pass
        else:
            ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            lm.memo = _shared_memos.setdefault(ident, OrderedDict())
    if not with_mem:
        for size in (om.weight_bytes(), om.work_bytes()):
            if size > 0:
                r = s.memory.alloc_device(ctx.device.index, size, 2, cid, ctx.oid)
                r.mark_written(0, r.size)
                s.hooks.on_alloc(r, cid)
                lm.regions.append(r)
    s.models[mid] = lm
    s.diag(cid, "model_loaded", f"model {mid} loaded from {path}: "
           f"{len(om.acl_inputs)} input(s), {len(om.output_specs())} output(s)"
           f"{_batch_rows(om)}", level=0)
    return mid


def _batch_rows(om: OmModel) -> str:
    """'; batch rows: input 0 = 8 x 150528 bytes, ...' for the inputs with a batch dimension
    over 1 (the gear dimension of a dynamic-batch model at its largest gear; the first of
    two or more dimensions of a static one), so checks can tell whole trailing batch rows
    (a partial last batch) from other never-written bytes; '' when no input has one."""
    parts = []
    for i, spec in enumerate(om.input_specs()):
        n = spec.shape[0] if len(spec.shape) >= 2 else 1
        if n > 1 and spec.nbytes % n == 0:
            parts.append(f"input {i} = {n} x {spec.nbytes // n} bytes")
    return "; batch rows: " + ", ".join(parts) if parts else ""


def load_from_file(s: Session, th: HostThread, cid: int, path: str) -> int:
    """aclmdlLoadFromFile: 145002 for a missing path, 145006 for a file that is not an OM."""
    from .om import ModelFileError, load_om
    try:
        om = load_om(path)
    except ModelFileError as e:
        raise AclError(e.code, e.message) from None
    return _load(s, th, cid, om, path)


def load_from_mem(s: Session, th: HostThread, cid: int, ptr: int, size: int) -> int:
    """aclmdlLoadFromMem: the model bytes in host memory (EP mode)."""
    from .om import ModelFileError, load_om_bytes
    _, view = buffers.host_view(s, ptr, size, "acl.mdl.load_from_mem")
    try:
        om = load_om_bytes(view.tobytes())
    except ModelFileError as e:
        raise AclError(e.code, e.message) from None
    return _load(s, th, cid, om, f"<memory {size} bytes>")


def query_size(path: str) -> tuple[int, int]:
    """aclmdlQuerySize: (work size, weight size) a model needs."""
    from .om import ModelFileError, load_om
    try:
        om = load_om(path)
    except ModelFileError as e:
        raise AclError(e.code, e.message) from None
    return om.work_bytes(), om.weight_bytes()


def load_from_file_with_mem(s: Session, th: HostThread, cid: int, path: str, work: int,
                            work_size: int, weight: int, weight_size: int) -> int:
    """aclmdlLoadFromFileWithMem: the caller provides work and weight device memory."""
    from .om import ModelFileError, load_om
    try:
        om = load_om(path)
    except ModelFileError as e:
        raise AclError(e.code, e.message) from None
    for ptr, size, need, what in ((work, work_size, om.work_bytes(), "work"),
                                  (weight, weight_size, om.weight_bytes(), "weight")):
        if size < need:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                           f"{what} memory of {size} bytes is smaller than the "
                           f"{need} bytes acl.mdl.query_size reports")
        if need:
            r = s.memory.resolve(ptr, need, f"{what} memory")
            if r.kind not in (DEVICE, DVPP):
                raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                               f"{what} memory must be device memory")
    return _load(s, th, cid, om, path, with_mem=True)


def model(s: Session, mid: int, code: int = ErrorCode.ACL_ERROR_INVALID_MODEL_ID) -> LoadedModel:
    """A loaded model by id."""
    lm = s.models.get(mid)
    if lm is None or not lm.alive:
        raise AclError(code, f"model id {mid} is not loaded")
    return lm


def unload(s: Session, th: HostThread, cid: int, mid: int) -> None:
    """aclmdlUnload: release the model's memory (in the context that loaded it)."""
    lm = model(s, mid)
    _check_ctx(s, th, lm, "unload")
    if lm.last_stream is not None and lm.last_stream.alive:
        waits.wait_streams(s, th, cid, [lm.last_stream], f"model {mid}'s last execution", -1)
    for r in lm.regions:
        if r.live:
            s.memory.free(r)
            s.hooks.on_free(r, cid, 0)
    lm.alive = False


def _check_ctx(s: Session, th: HostThread, lm: LoadedModel, what: str) -> None:
    ctx = devices.require_ctx(s, th)
    if ctx is not lm.ctx:
        raise AclError(ErrorCode.ACL_ERROR_RT_MODEL_CONTEXT,
                       f"model {lm.mid} was loaded in {lm.ctx.label()}, but {what} "
                       f"runs in {ctx.label()}: load, execute and unload must happen "
                       "in the same context")


# ------------------------------------------------------------------------------ descs


def create_desc(s: Session, cid: int) -> int:
    """aclmdlCreateDesc."""
    return s.register(ModelDesc(), ObjectKind.MODEL_DESC, cid, "model desc")


def desc(s: Session, handle: int, filled: bool = True) -> ModelDesc:
    """A model desc (100000 for null/unknown; for queries it must have been filled)."""
    d: ModelDesc = s.lookup(handle, ModelDesc, "model desc")
    if filled and d.model is None:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       "this model desc is empty: call acl.mdl.get_desc first")
    return d


def get_desc(s: Session, handle: int, mid: int) -> None:
    """aclmdlGetDesc: fill a desc from a loaded model."""
    d = desc(s, handle, filled=False)
    d.model = model(s, mid)


def destroy_desc(s: Session, cid: int, handle: int) -> None:
    """aclmdlDestroyDesc."""
    d = desc(s, handle, filled=False)
    s.retire(d, cid)


def _io_descs(s: Session, handle: int, output: bool) -> tuple[LoadedModel, list[Any]]:
    lm = desc(s, handle).model
    assert lm is not None
    return lm, (lm.om.outputs if output else lm.om.acl_inputs)


def io_count(s: Session, handle: int, output: bool) -> int:
    """Number of inputs/outputs (a dynamic-batch model's inputs include
    ``ascend_mbatch_shape_data``)."""
    return len(_io_descs(s, handle, output)[1])


def io_spec(s: Session, handle: int, index: int, output: bool) -> dict[str, Any]:
    """One input's or output's description: name, dtype, shape, format."""
    _, specs = _io_descs(s, handle, output)
    if not 0 <= index < len(specs):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{'output' if output else 'input'} index {index} is out of "
                       f"range (the model has {len(specs)})")
    return dict(specs[index])


def io_size(s: Session, handle: int, index: int, output: bool) -> int:
    """Bytes of an input/output: for a dynamic model the most any gear needs (GE reports the
    largest gear's size); ``8 k`` for the ``ascend_mbatch_shape_data`` input."""
    lm, specs = _io_descs(s, handle, output)
    io_spec(s, handle, index, output)
    om = lm.om
    if output:
        return om.output_size(index)
    if index == om.shape_data_index:
        return int(specs[index].spec().nbytes)
    return om.input_size(index)


def io_dims(s: Session, handle: int, index: int, output: bool,
            current: bool = False) -> dict[str, Any]:
    """``{'name', 'dimCount', 'dims'}`` of an input/output.

    Inputs keep the -1 dims of a dynamic model; outputs give the largest gear's (as GE
    reports them), or with ``current`` those of the gear of the model's last gear setter
    (the largest before any: GE's GetCurShape is empty then and ACL falls back to the
    output dims, model.cpp aclmdlGetCurOutputDims).
    """
    spec = io_spec(s, handle, index, output)
    dims = [int(x) for x in spec["shape"]]
    lm = desc(s, handle).model
    assert lm is not None
    if output and lm.om.is_dynamic:
        gear = lm.cur_gear if current else None
        dims = [int(x) for x in lm.om.output_specs(gear)[index].shape]
    return {"name": spec["name"], "dimCount": len(dims), "dims": dims}


def io_dtype(s: Session, handle: int, index: int, output: bool) -> int:
    """The aclDataType of an input/output."""
    return NUMPY_TO_ACL.get(io_spec(s, handle, index, output)["dtype"], -1)


def io_index(s: Session, handle: int, name: str, output: bool) -> int:
    """Index of the input/output called ``name`` (100000 when none is)."""
    _, specs = _io_descs(s, handle, output)
    for i, spec in enumerate(specs):
        if spec["name"] == name:
            return i
    raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                   f"the model has no {'output' if output else 'input'} named {name!r}")


def dynamic_batch(s: Session, handle: int) -> dict[str, Any]:
    """``{'batchCount', 'batch'}`` of a dynamic-batch model (0 and [] otherwise)."""
    om = desc(s, handle).model.om  # type: ignore[union-attr]
    gears = list(om.dynamic_batch)
    return {"batchCount": len(gears), "batch": gears}


def dynamic_hw(s: Session, handle: int) -> dict[str, Any]:
    """``{'hwCount', 'hw'}`` of a dynamic-image-size model, ``hw`` a list of ``[h, w]``
    (0 and [] for any other model, as aclmdlGetDynamicHW fills in)."""
    om = desc(s, handle).model.om  # type: ignore[union-attr]
    gears = [list(g) for g in om.dynamic_hw]
    return {"hwCount": len(gears), "hw": gears}


#: the index aclmdlGetInputDynamicGearCount / aclmdlGetInputDynamicDims require: (size_t)-1,
#: which the binding's ``k`` makes of a Python -1 (model.cpp: "index must be -1")
ALL_INPUTS_INDEX = (1 << 64) - 1


def _all_inputs_index(index: int, what: str) -> None:
    if index != ALL_INPUTS_INDEX:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{what}: index must be -1 (all inputs), got {index}")


def dynamic_gear_count(s: Session, handle: int, index: int) -> int:
    """aclmdlGetInputDynamicGearCount: the number of dims gears (0 for a model without
    ``--dynamic_dims`` gears); ``index`` must be -1."""
    om = desc(s, handle).model.om  # type: ignore[union-attr]
    _all_inputs_index(index, "acl.mdl.get_input_dynamic_gear_count")
    return len(om.dynamic_dims)


def _all_dims(om: OmModel, gear: tuple[int, ...] | None) -> list[int]:
    """Every data input's dims, concatenated in input order, with a gear's values in the -1
    dims (or -1 kept when ``gear`` is None)."""
    vals = iter(om.fill(gear)) if gear is not None else None
    out: list[int] = []
    for d in om.inputs:
        out.extend(d.filled(vals) if vals is not None else d.shape)
    return [int(v) for v in out]


def input_dynamic_dims(s: Session, handle: int, index: int,
                       gear_count: int) -> list[dict[str, Any]]:
    """aclmdlGetInputDynamicDims: per dims gear, ``{'name', 'dimCount', 'dims'}`` with every
    data input's dims concatenated (the gear's values in the -1 dims; model.cpp), ``name``
    empty. ``index`` must be -1 and ``gear_count`` at least the model's gear count (100000)."""
    om = desc(s, handle).model.om  # type: ignore[union-attr]
    _all_inputs_index(index, "acl.mdl.get_input_dynamic_dims")
    gears = [tuple(g) for g in om.dynamic_dims]
    if gear_count < len(gears):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"gear_count {gear_count} is less than the model's "
                       f"{len(gears)} dims gears (acl.mdl.get_input_dynamic_gear_count)")
    out = []
    for g in gears:
        dims = _all_dims(om, g)
        out.append({"name": "", "dimCount": len(dims), "dims": dims})
    return out


# ------------------------------------------------------------------------------ datasets


def create_dataset(s: Session, cid: int) -> int:
    """aclmdlCreateDataset."""
    return s.register(Dataset(), ObjectKind.DATASET, cid, "dataset")


def dataset(s: Session, handle: int) -> Dataset:
    """A dataset by handle (100000 for null or unknown)."""
    ds: Dataset = s.lookup(handle, Dataset, "dataset")
    return ds


def destroy_dataset(s: Session, cid: int, handle: int) -> None:
    """aclmdlDestroyDataset: the data buffers and their memory are NOT released."""
    ds = dataset(s, handle)
    s.retire(ds, cid)


def set_dynamic_batch(s: Session, th: HostThread, cid: int, mid: int, handle: int,
                      index: int, batch: int) -> None:
    """aclmdlSetDynamicBatchSize: the gear ``(batch,)`` (``set_gear``); batch 0 is 100000
    (model.cpp)."""
    set_gear(s, th, cid, mid, handle, index, KIND_BATCH, (batch,))


def set_dynamic_hw(s: Session, th: HostThread, cid: int, mid: int, handle: int, index: int,
                   height: int, width: int) -> None:
    """aclmdlSetDynamicHWSize: the gear ``(height, width)`` (``set_gear``); a zero height or
    width is 100000 (model.cpp)."""
    set_gear(s, th, cid, mid, handle, index, KIND_HW, (height, width))


def set_dynamic_dims(s: Session, th: HostThread, cid: int, mid: int, handle: int, index: int,
                     dims: list[int]) -> None:
    """aclmdlSetInputDynamicDims: ``dims`` is every data input's dims concatenated (the
    values of one gear in the -1 dims, model.cpp and the aclmdlSetInputDynamicDims doc);
    an empty list is 100000."""
    set_gear(s, th, cid, mid, handle, index, KIND_DIMS, tuple(dims))


_SETTER = {KIND_BATCH: "acl.mdl.set_dynamic_batch_size", KIND_HW: "acl.mdl.set_dynamic_hw_size",
           KIND_DIMS: "acl.mdl.set_input_dynamic_dims"}


def set_gear(s: Session, th: HostThread, cid: int, mid: int, handle: int, index: int,
             kind: str, values: tuple[int, ...]) -> None:
    """The three gear setters, one path: choose the gear of the next executions with this
    dataset.

    The checks run in ACL's order (model.cpp ``aclmdlSetDynamicBatchSize`` /
    ``aclmdlSetDynamicHWSize`` / ``aclmdlSetInputDynamicDims``, then ge_executor.cc
    ``SetDynamicBatchSize`` / ``SetDynamicImageSize`` / ``SetDynamicDims``): a null dataset,
    a zero value (batch, height, width; an empty dims list), an index with no buffer or a
    buffer with a null address give 100000. Then GE: an unknown model 145003 (unverified:
    one GE version returns an internal code that reaches Python as 500002); batch and image
    size check the buffer length first (145012 under 4 bytes per value); dims must be the
    model's inputs' dims (145012 for another count or a static dim that differs: GE
    GetCurDynamicDims), their -1 values give the gear. A gear the model does not have, of
    its kind, is 145013 (a static model, another kind's gears); dims check the buffer length
    after that (145012). Then the emulator's own check: ``index`` must be the model's
    ``ascend_mbatch_shape_data`` input (100000 otherwise; real ACL writes the gear into
    whatever buffer ``index`` names and returns 0, which corrupts a data input and leaves
    the shape-data buffer unset). On success the gear's values are written into that buffer
    as GE does (8 bytes each, little-endian, 4 if the buffer is smaller than 8 per value;
    one synchronous host-to-device copy) and recorded on the dataset and the model.
    """
    ds = dataset(s, handle)
    if not values or any(v <= 0 for v in values):
        what = {KIND_BATCH: "batch size", KIND_HW: "height and width",
                KIND_DIMS: "dims"}[kind]
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{_SETTER[kind]}: the {what} must be positive (and dims not "
                       f"empty), got {list(values)}")
    if not 0 <= index < len(ds.buffers):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"the dataset has no buffer at index {index} (it has "
                       f"{len(ds.buffers)}): pass the index of the "
                       f"{SHAPE_DATA_NAME} input, from acl.mdl.get_input_index_by_name")
    b = buffers.lookup(s, ds.buffers[index])
    if b.addr == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"the data buffer at index {index} has a null address")
    if kind != KIND_DIMS:  # GE checks the length before it looks the model up
        _check_length(b.size, 4 * len(values), index)
    lm = model(s, mid, MODEL_ID_CODE)
    om = lm.om
    gear = _dims_gear(om, values) if kind == KIND_DIMS else values
    if gear not in om.gears or om.dynamic_kind != kind:
        raise AclError(DYNAMIC_BATCH_CODE, _not_a_gear(om, mid, kind, gear))
    if kind == KIND_DIMS:  # ... and for dims after the gear check
        _check_length(b.size, 4 * len(gear), index)
    want = om.shape_data_index
    if index != want:
        names = [d.name for d in om.acl_inputs]
        what = f"input {names[index]!r}" if index < len(names) else "no model input"
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"index {index} is {what}, not the gear input: pass {want}, the "
                       f"index of {SHAPE_DATA_NAME} (from "
                       f"acl.mdl.get_input_index_by_name(desc, \"{SHAPE_DATA_NAME}\")); "
                       f"real ACL would write the gear into buffer {index} and "
                       "return 0, corrupting it")
    width = 8 if b.size >= 8 * len(gear) else 4
    payload = b"".join(v.to_bytes(width, "little") for v in gear)
    write_input_params(s, th, cid, b.addr, payload, f"the {SHAPE_DATA_NAME} buffer",
                       f"{_gear_label(om, gear)} -> {SHAPE_DATA_NAME}")
    ds.gear = gear
    lm.cur_gear = gear


def write_input_params(s: Session, th: HostThread, cid: int, addr: int, payload: bytes,
                       what: str, label: str) -> None:
    """Write ``payload`` (parameters ACL fills in for the program: the gear of a dynamic
    model, dynamic AIPP's parameter set) into the model input buffer at ``addr`` the way GE
    does: one synchronous, pinned host-to-device copy, traced as a write of those bytes."""
    r = _io_region(s, addr, what)
    devices.require_ctx(s, th)
    eng, dur = costs.copy_cost(s.profile, MemcpyKind.HOST_TO_DEVICE, len(payload), True)
    t = Task(TaskKind.H2D, None, cid, th.clock, eng, dur)
    t.label = label
    t.pinned = True
    t.nbytes = len(payload)
    t.payload = payload
    t.add_access(r, addr - r.addr, len(payload), True)
    scheduler.run_sync(s, th, t)


def _check_length(size: int, need: int, index: int) -> None:
    if size < need:
        raise AclError(DYNAMIC_INPUT_LENGTH_CODE,
                       f"the data buffer at index {index} holds {size} bytes; the gear needs "
                       f"at least {need} (4 per value; allocate "
                       f"acl.mdl.get_input_size_by_index(desc, index) bytes for the "
                       f"{SHAPE_DATA_NAME} input)")


def _dims_gear(om: OmModel, dims: tuple[int, ...]) -> tuple[int, ...]:
    """The -1 values of a set_input_dynamic_dims list (GE GetCurDynamicDims: the list must
    have every data input's dims, the static ones as the model has them; 145012 else)."""
    model_dims = _all_dims(om, None)
    if len(dims) != len(model_dims):
        raise AclError(DYNAMIC_INPUT_LENGTH_CODE,
                       f"dims has {len(dims)} values, the model's inputs have {len(model_dims)}"
                       f" dims {model_dims}: give every input's dims, in input order, with "
                       "one gear's values in the -1 dims (acl.mdl.get_input_dynamic_dims)")
    for i, (got, want) in enumerate(zip(dims, model_dims, strict=True)):
        if want >= 0 and got != want:
            raise AclError(DYNAMIC_INPUT_LENGTH_CODE,
                           f"dims[{i}] is {got}, but that dim of the model's inputs is "
                           f"static, {want} (the inputs' dims: {model_dims})")
    return tuple(v for v, want in zip(dims, model_dims, strict=True) if want < 0)


def _gear_label(om: OmModel, gear: tuple[int, ...]) -> str:
    kind = om.dynamic_kind
    if kind == KIND_BATCH:
        return f"batch size {gear[0]}"
    if kind == KIND_HW:
        return f"image size {gear[0]}x{gear[1]}"
    return f"dims {list(gear)}"


def _not_a_gear(om: OmModel, mid: int, kind: str, gear: tuple[int, ...]) -> str:
    if kind == KIND_BATCH:
        asked = f"batch {gear[0]}"
    else:
        asked = f"image size {list(gear)}" if kind == KIND_HW else f"dims gear {list(gear)}"
    if not om.is_dynamic:
        return (f"model {mid} is static (converted without --dynamic_batch_size, "
                f"--dynamic_image_size or --dynamic_dims): it has no gears, {asked} cannot "
                "be set")
    have = om.dynamic_kind
    getter = {KIND_BATCH: "acl.mdl.get_dynamic_batch", KIND_HW: "acl.mdl.get_dynamic_hw",
              KIND_DIMS: "acl.mdl.get_input_dynamic_dims"}[have]
    named = om.named_gears
    if have != kind:
        return (f"model {mid} has {have} gears {named}, not {kind} gears: {asked} cannot be "
                f"set with {_SETTER[kind]}; use {_SETTER[have]}")
    return f"{asked} is not one of the model's gears {named} ({getter})"


# ------------------------------------------------------------------------------ execution


def execute(s: Session, th: HostThread, cid: int, mid: int, in_ds: int, out_ds: int,
            stream: int | None) -> None:
    """aclmdlExecute (``stream`` None: synchronous) and aclmdlExecuteAsync.

    A dynamic model runs at the gear set on ``in_ds`` by a gear setter (145013 when none
    was set) and reads its ``ascend_mbatch_shape_data`` buffer too (100000 when the dataset
    lacks it). Its data buffers may hold anything up to the largest gear's size
    (``get_input_size_by_index``) without a warning; more than 64 bytes less than the
    current gear needs is 145000, as for a static model. Output shapes follow the gear.
    """
    if in_ds == 0 or out_ds == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "input or output dataset is null")
    lm = model(s, mid, MODEL_ID_CODE)
    _check_ctx(s, th, lm, "execute")
    st = streams.lookup(s, th, stream) if stream is not None else None
    ins, outs = dataset(s, in_ds), dataset(s, out_ds)
    om = lm.om
    dynamic = om.is_dynamic
    shape_at = om.shape_data_index
    n_in = len(om.acl_inputs)
    if len(ins.buffers) < n_in:
        extra = ""
        if shape_at is not None and len(ins.buffers) == shape_at:
            extra = (f": input {shape_at} is {SHAPE_DATA_NAME}, the gear input ATC adds "
                     "to a dynamic model; add a buffer of "
                     f"acl.mdl.get_input_size_by_index(desc, {shape_at}) bytes for it and pass "
                     f"{shape_at} to {_SETTER[om.dynamic_kind]}")
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"the input dataset has {len(ins.buffers)} buffer(s), the model "
                       f"has {n_in} inputs (acl.mdl.get_num_inputs){extra}")
    gear = ins.gear if dynamic else None
    if dynamic and (gear is None or gear not in om.gears):
        kind = om.dynamic_kind
        raise AclError(DYNAMIC_BATCH_CODE,
                       f"model {mid} is a dynamic model ({kind} gears {om.named_gears}) and "
                       "no gear was set on this input dataset: call "
                       f"{_SETTER[kind]}(model_id, "
                       f"dataset, {shape_at}, ...) before executing")
    in_specs, out_specs = om.input_specs(gear), om.output_specs(gear)
    limits = [om.input_size(i) for i in range(len(in_specs))]
    if len(outs.buffers) < len(out_specs):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"the output dataset has {len(outs.buffers)} buffer(s), the "
                       f"model produces {len(out_specs)}")
    t = Task(TaskKind.MODEL, st, cid, th.clock, Engine.AICORE, 0)
    t.label = f"model {mid}"
    all_specs = list(in_specs)
    if shape_at is not None:
        shape_spec = om.acl_inputs[shape_at].spec()
        all_specs.append(shape_spec)
        limits.append(shape_spec.nbytes)
    for i, spec in enumerate(all_specs):
        b = buffers.lookup(s, ins.buffers[i])
        need = spec.nbytes
        if b.size == 0:
            raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"input {i} has an empty data buffer")
        if b.size + INPUT_SLACK < need:
            at = f" at {_gear_label(om, gear)}" if gear else ""
            raise AclError(UNDERSIZED_INPUT_CODE,
                           f"input {i} ({spec.dtype}{list(spec.shape)}) needs {need} bytes"
                           f"{at}; its buffer holds {b.size}, more than {INPUT_SLACK} bytes "
                           "short (acl.mdl.get_input_size_by_index gives the size to allocate)")
        if b.size > limits[i]:
            from .aipp import input_note
            largest = " (the largest gear)" if dynamic else ""
            s.diag(cid, "oversized_input", f"input {i} buffer holds {b.size} bytes, the model "
                   f"reads {need}: the extra bytes are ignored (GE warns: may cause "
                   f"inference problems); acl.mdl.get_input_size_by_index gives {limits[i]}"
                   f"{largest}{input_note(om, i)}")
        r = _io_region(s, b.addr, f"input {i}")
        read = min(need, b.size, ins.aipp_reads.get(i, need))
        t.add_access(r, b.addr - r.addr, read, False)
    for i, spec in enumerate(out_specs):
        b = buffers.lookup(s, outs.buffers[i])
        need = spec.nbytes
        if b.addr == 0 and b.size == 0 and st is None:
            ctx = lm.ctx
            r = s.memory.alloc_device(ctx.device.index, need, 0, cid, ctx.oid)
            s.hooks.on_alloc(r, cid)
            b.addr, b.size = r.addr, need
            s.diag(cid, "output_allocated", f"output {i} had no memory: execute allocated "
                   f"{need} bytes; free it with acl.rt.free", level=0)
        if b.size < need:
            raise AclError(UNDERSIZED_INPUT_CODE, f"output {i} needs {need} bytes; its buffer "
                                                  f"holds {b.size}")
        r = _io_region(s, b.addr, f"output {i}")
        t.add_access(r, b.addr - r.addr, need, True)
    key = gear or ()
    ec = lm.costs.get(key)
    if ec is None:
        ec = lm.costs[key] = execution_cost(s.profile, om, key)
    t.duration = ec.duration_ns
    t.nbytes = ec.nbytes
    t.units = ec.units
    t.kernel = _model_fn(om, in_specs, out_specs, gear, lm.memo)
    if st is not None:
        prev = lm.last_stream
        if prev is not None and prev is not st and prev.alive and not streams.done_at(
                prev, th.clock) and lm.last_end > th.clock:
            s.diag(cid, "model_concurrent_use",
                   f"model {mid} is executed on {st.label()} while its execution on "
                   f"{prev.label()} may still run: the same model must not run on two "
                   "streams at once (GE doc); use one stream or load it twice", level=2)
        lm.last_stream = st
        scheduler.submit(s, t)
        lm.last_end = t.end if t.placed else 1 << 62
    else:
        scheduler.run_sync(s, th, t)


def _io_region(s: Session, addr: int, what: str) -> Any:
    if addr == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, f"{what} has a null data buffer")
    r = _resolve_start(s, addr, what)
    # In the device run mode (RC, on the board) host memory is device memory too.
    if r.kind in (HOST_PINNED, HOST_PAGEABLE) and s.run_mode == "host":
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{what} points at host memory: model inputs and outputs must "
                       "be device memory (acl.rt.malloc), copy the data there first")
    return r


#: executions whose outputs a loaded model remembers (see ``_model_fn``), and the largest
#: outputs (bytes, all outputs of one execution) worth remembering
MEMO_SIZE = 4
MEMO_MAX_BYTES = 8 << 20
#: while ``shared_memo`` is active: model file identity -> the memo its loads share
_shared_memos: dict[tuple[int, int, int, int], OrderedDict[bytes, list[bytes]]] | None = None


@contextmanager
def shared_memo() -> Iterator[None]:
    """Within the block, every load of the same model file (same device, inode, size and
    modification time), in any session, shares one memo of recent executions, so a
    benchmark that runs one model in several sessions computes each distinct input once.

    An emulator speed-up for harnesses such as ``acl_lab.ladder``: outputs and virtual time
    are the same as without it (the graph is a pure function of its inputs).
    """
    global _shared_memos
    prev = _shared_memos
    if prev is None:
        _shared_memos = {}
    try:
        yield
    finally:
        _shared_memos = prev


def _model_fn(om: OmModel, in_specs: list[Any], out_specs: list[Any],
              gear: tuple[int, ...] | None,
              memo: OrderedDict[bytes, list[bytes]] | None = None) -> Any:
    """The model task's effect. The graph is a pure function of its input bytes, so the
    outputs of the last ``MEMO_SIZE`` executions (up to ``MEMO_MAX_BYTES`` of outputs each)
    are remembered by input digest and reused for identical inputs (an emulator speed-up:
    nothing a program can observe changes)."""
    def run(data: list[bytes]) -> list[bytes]:
        key = b""
        if memo is not None:
            h = hashlib.blake2b(repr(gear).encode(), digest_size=20)
            for raw in data:
                h.update(len(raw).to_bytes(8, "little"))
                h.update(raw)
            key = h.digest()
            hit = memo.get(key)
            if hit is not None:
                return list(hit)
        outs = _run_model(data)
        if memo is not None and sum(len(o) for o in outs) <= MEMO_MAX_BYTES:
            memo[key] = outs
            while len(memo) > MEMO_SIZE:
                memo.popitem(last=False)
        return list(outs)

    def _run_model(data: list[bytes]) -> list[bytes]:
        if gear is not None:  # a dynamic model: the last input holds the gear's values
            data, shape = data[:-1], data[-1]
            n = len(gear)
            width = 8 if len(shape) >= 8 * n else 4
            got = tuple(int.from_bytes(shape[i * width:(i + 1) * width], "little")
                        for i in range(n))
            if got != gear:
                held = got[0] if om.dynamic_batch else list(got)
                raise RuntimeError(
                    f"the {SHAPE_DATA_NAME} input holds {held}, but this execution was "
                    f"prepared for {_gear_label(om, gear)} "
                    f"({_SETTER[om.dynamic_kind]} wrote it there; something overwrote that "
                    "buffer since)")
        arrays = []
        for raw, spec in zip(data, in_specs, strict=True):
            buf = raw[:spec.nbytes].ljust(spec.nbytes, b"\0")
            arrays.append(np.frombuffer(buf, dtype=spec.dtype).reshape(spec.shape))
        with np.errstate(all="ignore"):  # a device computes inf/nan silently
            outs = om.run(arrays, batch=gear)
        return [np.ascontiguousarray(o, dtype=spec.dtype).tobytes()
                for o, spec in zip(outs, out_specs, strict=True)]
    return run
