"""The emulated offline model (``.om``): a versioned container and a graph executor.

A real ``.om`` is a compiled GE graph; ours keeps the *operator* graph, so that
``acl.mdl`` can execute it with the same numpy kernels as ``acl.op`` (``opdefs.get_op``) and
charge each layer's cost to the timeline. This module knows nothing of streams, memory or
time: the runtime copies bytes in, calls :meth:`OmModel.run`, and copies bytes out.

File layout (all integers little-endian)::

    offset 0   magic            b"ACLLAB-OM" (9 bytes)
    offset 9   format version   uint32, currently 1
    offset 13  header length    uint64, H
    offset 21  header           H bytes of UTF-8 JSON (sorted keys, padded with spaces so
                                that the weight blob starts at a multiple of 64)
    21 + H     weight blob      header["weights_size"] bytes: the initializers, each at a
                                64-byte aligned ``offset`` (zero padding in between)

The header holds ``name``, ``soc_version``, ``inputs``/``outputs`` (``name``, ``dtype`` as a
numpy name, ``shape`` with -1 for the dynamic batch dimension, ``format`` as an aclFormat
number), ``nodes`` in topological order (``name``, ``op``, ``inputs``, ``outputs``,
``attrs``), ``initializers`` (``name``, ``dtype``, ``shape``, ``offset``, ``nbytes``),
``dynamic_batch`` (the allowed batch sizes, empty for a static model), ``weights_size`` and a
free-form ``meta`` dict (who built it and with which options); ``dynamic_hw`` and
``dynamic_dims`` only when set. The same model always gives the same bytes: no timestamps,
sorted keys.

Dynamic shapes are one mechanism, gears: the inputs carry -1 dims and the model has a list of
gears, each a full assignment of those dims. ATC names a gear in one of three ways
(``--dynamic_batch_size``, ``--dynamic_image_size``, ``--dynamic_dims``), and the header keeps
the gears the way they were named: ``dynamic_batch`` ``[b, ...]`` (every -1, at dim 0, is
``b``), ``dynamic_hw`` ``[[h, w], ...]`` (each dynamic input has -1 at H and W of its NCHW or
NHWC format) or ``dynamic_dims`` ``[[v0, v1, ...], ...]`` (one value per -1, in input order).
:attr:`OmModel.gears` lists them as tuples and :meth:`OmModel.fill` expands one into the full
assignment; every shape, cost and execution is computed per gear. Outputs keep -1 where their
size differs between gears; their shape at a gear is inferred through the graph.

``inputs`` are the graph's data inputs. A real ATC adds one more input to a dynamic model,
``ascend_mbatch_shape_data`` (``ACL_DYNAMIC_TENSOR_NAME``), which carries the chosen gear to
the device (int64 ``[k]``: one value per named gear value, so 1 for batch, 2 for hw, one per -1
for dims: GE's ``SetDynamicBatchSize``, ``SetDynamicImageSize`` and ``SetDynamicDims`` write
that many values); the file does not store it, :attr:`OmModel.acl_inputs` derives it (it is
what the model desc reports: ``get_num_inputs``, ``get_input_index_by_name``, ...).

Loading never raises anything but :class:`ModelFileError`: 145002
(ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID) when the path cannot be opened, 145006
(ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID) for anything that is not a valid OM (reference
section 9.1(a)).
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..constants import ACL_DYNAMIC_TENSOR_NAME, ErrorCode
from .errors import AclError
from .opdefs import NUMPY_TO_ACL, OpDef, OpError, TensorSpec, get_op

MAGIC = b"ACLLAB-OM"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<9sIQ")  # magic, version, header length
_ALIGN = 64

#: ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID / _DATA_SIZE_INVALID / _PARAM_INVALID / ...
PATH_INVALID = ErrorCode.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID
DATA_INVALID = ErrorCode.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID
PARAM_INVALID = ErrorCode.ACL_ERROR_GE_PARAM_INVALID
BATCH_INVALID = ErrorCode.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
GE_FAILURE = ErrorCode.ACL_ERROR_GE_FAILURE

ACL_FORMAT_NCHW = 0
ACL_FORMAT_NHWC = 1
ACL_FORMAT_ND = 2

#: where H and W are in a 4-D input of each format (GE multi_batch_options.cc
#: CheckDynamicImageSizeShape: NCHW dims 2 and 3, NHWC dims 1 and 2)
HW_AXES = {ACL_FORMAT_NCHW: (2, 3), ACL_FORMAT_NHWC: (1, 2)}

#: the gear kinds: how ATC named the gears (``dynamic_kind``)
KIND_BATCH, KIND_HW, KIND_DIMS = "batch", "hw", "dims"

#: a gear as the model's methods accept it: an int batch (dynamic-batch models), a tuple as
#: :attr:`OmModel.gears` lists it, or None for the largest gear (or a static model)
Gear = int | tuple[int, ...] | None

#: The input real ATC adds to a dynamic-batch model, after the data inputs: int64 [1] in ND
#: format, 8 bytes, holding the batch size (what the Ascend samples' dynamic-batch yolov3 log
#: prints for it: ``name[ascend_mbatch_shape_data], inputSize[8], format[2], dataType[9]``,
#: ``dims:[1]``); ``acl.mdl.set_dynamic_batch_size`` writes the gear into its buffer.
SHAPE_DATA_NAME = ACL_DYNAMIC_TENSOR_NAME
SHAPE_DATA_DTYPE = "int64"
SHAPE_DATA_SHAPE = (1,)

#: At most this many gears: ATC's ``--dynamic_batch_size``, ``--dynamic_image_size`` and
#: ``--dynamic_dims`` take "(1, 100]" gears (CANN ATC parameter reference, the gear count
#: constraint of each flag).
MAX_GEARS = 100
#: The largest tensor a model may describe, in bytes: GE computes a tensor's memory size in
#: int64 and refuses a shape whose product overflows it (``CheckInt64MulOverflow`` in the
#: tensor size calculation), so a loaded model never holds a size that wraps.
MAX_TENSOR_BYTES = 2**63 - 1


class ModelFileError(AclError):
    """An ``.om`` file or buffer cannot be loaded (``code`` 145002 or 145006)."""


class ModelRunError(AclError):
    """A model cannot execute with these inputs (145000 bad input, 145013 a gear that is not
    the model's, 500002 a kernel failed)."""


@dataclass
class IODesc:
    """One model input or output: name, numpy dtype name, shape (-1 = a dynamic dim), format."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    format: int = ACL_FORMAT_ND

    def spec(self, batch: int | None = None) -> TensorSpec:
        """The TensorSpec with -1 replaced by ``batch`` (kept as -1 when ``batch`` is None)."""
        shape = self.shape if batch is None else tuple(batch if d == -1 else d
                                                       for d in self.shape)
        return TensorSpec(self.dtype, shape, self.format)

    def filled(self, values: Any) -> tuple[int, ...]:
        """The shape with its -1 dims taken, in order, from the iterator ``values``."""
        return tuple(int(next(values)) if d == -1 else d for d in self.shape)

    def to_json(self) -> dict[str, Any]:
        """The header form."""
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape),
                "format": self.format}

    # Mapping-style access, so ``dict(desc)`` and ``desc["shape"]`` work like the header.
    def keys(self) -> tuple[str, ...]:
        """The header keys: name, dtype, shape, format."""
        return ("name", "dtype", "shape", "format")

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)


@dataclass
class Node:
    """One operator instance: ``op`` is an OpDef name; tensors are referred to by name."""

    name: str
    op: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The header form."""
        return {"name": self.name, "op": self.op, "inputs": list(self.inputs),
                "outputs": list(self.outputs), "attrs": _jsonable(self.attrs)}


@dataclass
class OmModel:
    """An emulated offline model: I/O descriptors, an operator graph and its weights.

    Treat an instance as immutable once built: inferred shapes and costs are cached per batch.
    """

    name: str
    inputs: list[IODesc]
    outputs: list[IODesc]
    nodes: list[Node]
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    soc_version: str = "Ascend310P3"
    dynamic_batch: list[int] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    dynamic_hw: list[list[int]] = field(default_factory=list)
    dynamic_dims: list[list[int]] = field(default_factory=list)
    _specs: dict[tuple[int, ...], dict[str, TensorSpec]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _costs: dict[tuple[int, ...], list[tuple[str, str, int, int]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    # ----------------------------------------------------------------- gears
    @property
    def dynamic_kind(self) -> str:
        """How the gears are named: ``"batch"``, ``"hw"``, ``"dims"``, or ``""`` (static)."""
        if self.dynamic_batch:
            return KIND_BATCH
        if self.dynamic_hw:
            return KIND_HW
        return KIND_DIMS if self.dynamic_dims else ""

    @cached_property
    def gears(self) -> list[tuple[int, ...]]:
        """The gears as ATC named them: ``(batch,)``, ``(height, width)`` or one value per
        -1 dim in input order; ``[]`` for a static model. Computed once (the model is
        immutable): every execution and gear setter looks them up."""
        if self.dynamic_batch:
            return [(int(b),) for b in self.dynamic_batch]
        return [tuple(int(v) for v in g) for g in (self.dynamic_hw or self.dynamic_dims)]

    @property
    def named_gears(self) -> list[Any]:
        """The gears as messages name them: batch sizes as ints, other gears as lists."""
        if self.dynamic_batch:
            return [int(b) for b in self.dynamic_batch]
        return [list(g) for g in self.gears]

    def fill(self, gear: tuple[int, ...]) -> tuple[int, ...]:
        """The full assignment of the inputs' -1 dims (in input and dim order) for a named
        gear: a batch fills every -1, an image size the H and W of every dynamic input, dims
        are the assignment already."""
        kind = self.dynamic_kind
        if kind == KIND_DIMS:
            return tuple(gear)
        out: list[int] = []
        for d in self.inputs:
            n = d.shape.count(-1)
            if n:
                out.extend([gear[0]] * n if kind == KIND_BATCH else gear)
        return tuple(out)

    def gear_key(self, gear: Gear = None) -> tuple[int, ...]:
        """Validate ``gear`` and return it as a tuple of :attr:`gears` (``()`` for a static
        model; the largest gear for None). Raises ModelRunError(145013) for a gear the
        model does not have."""
        gears = self.gears
        if not gears:
            if gear is not None and gear != ():
                raise ModelRunError(BATCH_INVALID, f"model {self.name!r} is static: it has no "
                                    f"gears, {gear!r} cannot be set")
            return ()
        if gear is None:
            return self.max_gear
        if isinstance(gear, int):
            if self.dynamic_kind != KIND_BATCH:
                raise ModelRunError(BATCH_INVALID, f"model {self.name!r} has "
                                    f"{self.dynamic_kind} gears {gears}, not batch gears: "
                                    f"batch {gear} cannot be set")
            key: tuple[int, ...] = (int(gear),)
        else:
            key = tuple(int(v) for v in gear)
        if key not in gears:
            what = f"batch {key[0]}" if self.dynamic_kind == KIND_BATCH else f"gear {list(key)}"
            raise ModelRunError(BATCH_INVALID, f"{what} is not one of the gears "
                                f"{self.named_gears} of model {self.name!r}")
        return key

    @cached_property
    def max_gear(self) -> tuple[int, ...]:
        """The largest gear: the largest batch, otherwise the gear whose inputs hold the most
        bytes (the first of equals); ``()`` for a static model."""
        gears = self.gears
        if not gears:
            return ()
        if self.dynamic_batch:
            return (max(self.dynamic_batch),)
        return max(gears, key=lambda g: sum(s.nbytes for s in self._in_specs(g)))

    def _in_specs(self, key: tuple[int, ...]) -> list[TensorSpec]:
        vals = iter(self.fill(key)) if key else iter(())
        return [TensorSpec(d.dtype, d.filled(vals), d.format) for d in self.inputs]

    # ----------------------------------------------------------------- descriptors
    def input_specs(self, gear: Gear = None) -> list[TensorSpec]:
        """Input TensorSpecs at ``gear`` (the largest when None; see :data:`Gear`): the -1
        dims filled in; ``inputs[i].shape`` keeps the -1 that ``get_input_dims`` reports."""
        return self._in_specs(self.gear_key(gear))

    def output_specs(self, gear: Gear = None) -> list[TensorSpec]:
        """Output TensorSpecs at ``gear`` (see :meth:`input_specs`), inferred through the
        graph for a dynamic model."""
        if not self.gears:
            return [d.spec() for d in self.outputs]
        specs = self.tensor_specs(gear)
        return [TensorSpec(d.dtype, specs[d.name].shape, d.format) for d in self.outputs]

    @property
    def is_dynamic(self) -> bool:
        """True for a model with gears (dynamic batch, image size or dims)."""
        return bool(self.dynamic_kind)

    @property
    def acl_inputs(self) -> list[IODesc]:
        """The inputs as the model desc reports them: the data inputs, then, for a dynamic
        model, the ``ascend_mbatch_shape_data`` input real ATC adds (int64 ``[k]``, ND,
        ``8 k`` bytes, ``k`` the length of a named gear; see ``SHAPE_DATA_NAME``). ``run``
        takes only the data inputs."""
        gears = self.gears
        if not gears:
            return list(self.inputs)
        return [*self.inputs, IODesc(SHAPE_DATA_NAME, SHAPE_DATA_DTYPE, (len(gears[0]),),
                                     ACL_FORMAT_ND)]

    @property
    def shape_data_index(self) -> int | None:
        """The index of the ``ascend_mbatch_shape_data`` input (after the data inputs), or
        None for a static model."""
        return len(self.inputs) if self.is_dynamic else None

    @property
    def max_batch(self) -> int | None:
        """The largest batch gear, or None for a model without batch gears."""
        return max(self.dynamic_batch) if self.dynamic_batch else None

    def input_size(self, i: int, gear: Gear = None, *, batch: Gear = None) -> int:
        """Byte size of input ``i`` (``get_input_size_by_index``): at ``gear`` (``batch`` is
        the same argument under its dynamic-batch name), or for a dynamic model without one
        the most any gear needs."""
        gear = batch if gear is None else gear
        if gear is None and self.gears:
            return self._max_input_sizes[i]
        return self.input_specs(gear)[i].nbytes

    @cached_property
    def _max_input_sizes(self) -> list[int]:
        """Per data input, the most bytes any gear needs (each execution checks its buffers
        against these)."""
        per_gear = [[x.nbytes for x in self._in_specs(g)] for g in self.gears]
        return [max(sizes) for sizes in zip(*per_gear, strict=True)]

    def output_size(self, i: int, gear: Gear = None, *, batch: Gear = None) -> int:
        """Byte size of output ``i``: at ``gear`` (or ``batch``), or the most any gear
        produces."""
        gear = batch if gear is None else gear
        if gear is None and self.gears:
            return max(self.output_specs(g)[i].nbytes for g in self.gears)
        return self.output_specs(gear)[i].nbytes

    def weight_bytes(self) -> int:
        """Sum of the weight (initializer) sizes: the weight memory of ``query_size``."""
        return sum(int(w.nbytes) for w in self.weights.values())

    def work_bytes(self) -> int:
        """Sum of the intermediate tensor sizes at the largest gear: the work memory of
        ``query_size`` (graph outputs live in the user's buffers and are not counted)."""
        specs = self.tensor_specs()
        outs = {d.name for d in self.outputs}
        return sum(specs[t].nbytes for n in self.nodes for t in n.outputs if t not in outs)

    # ----------------------------------------------------------------- inference
    def tensor_specs(self, gear: Gear = None) -> dict[str, TensorSpec]:
        """The TensorSpec of every tensor (inputs, weights, node outputs) at ``gear``
        (largest when None), inferred with the operators' ``infer``; cached per gear."""
        key = self.gear_key(gear)
        cached = self._specs.get(key)
        if cached is not None:
            return cached
        specs: dict[str, TensorSpec] = {}
        for d, spec in zip(self.inputs, self._in_specs(key), strict=True):
            specs[d.name] = spec
        for name, w in self.weights.items():
            specs[name] = TensorSpec(w.dtype.name, tuple(int(s) for s in w.shape))
        for node in self.nodes:
            op = get_op(node.op)
            try:
                outs = op.infer([specs[t] for t in node.inputs],
                                _infer_attrs(op, node, self.weights))
            except OpError:
                raise
            except Exception as e:  # a kernel's infer should only raise OpError
                raise OpError(f"{type(e).__name__}: {e}") from e
            if len(outs) != len(node.outputs):
                raise OpError(f"infer returned {len(outs)} outputs, the node lists "
                              f"{len(node.outputs)}")
            specs.update(zip(node.outputs, outs, strict=True))
        self._specs[key] = specs
        return specs

    def cost(self, gear: Gear = None) -> list[tuple[str, str, int, int]]:
        """Per node ``(node name, op type, flops, bytes)`` from the operators' cost functions
        on the inferred shapes at ``gear`` (largest when None); cached per gear."""
        key = self.gear_key(gear)
        cached = self._costs.get(key)
        if cached is not None:
            return cached
        specs = self.tensor_specs(key)
        rows: list[tuple[str, str, int, int]] = []
        for node in self.nodes:
            op = get_op(node.op)
            flops, nbytes = op.cost([specs[t] for t in node.inputs],
                                    [specs[t] for t in node.outputs], _attrs(op, node))
            rows.append((node.name, node.op, int(flops), int(nbytes)))
        self._costs[key] = rows
        return rows

    # ----------------------------------------------------------------- execution
    def batch_for_inputs(self, inputs: list[np.ndarray]) -> int | None:
        """The gear a dynamic-batch model runs at for these arrays (from the first input's
        element count), None for a static model; raises ModelRunError(145013) when the size
        matches no gear."""
        if not self.dynamic_batch:
            return None
        if not inputs:
            raise ModelRunError(PARAM_INVALID, "no input arrays given")
        d = self.inputs[0]
        per = int(np.prod([s for s in d.shape if s != -1], dtype=np.int64))
        size = int(np.asarray(inputs[0]).size)
        if per > 0 and size % per == 0 and size // per in self.dynamic_batch:
            return size // per
        raise ModelRunError(BATCH_INVALID, f"input {d.name!r} has {size} elements, which "
                            f"matches none of the batch gears {self.dynamic_batch} "
                            f"(one sample is {per} elements); set the batch size explicitly")

    def gear_for_inputs(self, inputs: list[np.ndarray]) -> Gear:
        """The gear these arrays match: for a dynamic-batch model from the first input's
        element count (:meth:`batch_for_inputs`), otherwise the first gear whose input shapes
        (or, for flat arrays, element counts) they have; None for a static model. Raises
        ModelRunError(145013) when none matches."""
        if self.dynamic_batch or not self.gears:
            return self.batch_for_inputs(inputs)
        arrays = [np.asarray(a) for a in inputs]
        for exact in (True, False):
            for g in self.gears:
                specs = self._in_specs(g)
                if all((a.shape == s.shape) if exact else (a.size == s.size)
                       for a, s in zip(arrays, specs, strict=False)):
                    return g
        raise ModelRunError(BATCH_INVALID, f"the input shapes {[list(a.shape) for a in arrays]}"
                            f" match none of the gears {[list(g) for g in self.gears]} of "
                            f"model {self.name!r}; set the gear explicitly")

    def run(self, inputs: list[np.ndarray], batch: Gear = None) -> list[np.ndarray]:
        """Execute the graph on numpy ``inputs`` (one per model input, in order).

        Each array must have the input's dtype and its element count (it is reshaped to
        the descriptor's shape). For a dynamic model ``batch`` selects the gear (an int
        batch, or a tuple of :attr:`gears`); when None it is deduced from the inputs
        (:meth:`gear_for_inputs`). Returns the outputs in order. Raises ModelRunError: 145000
        for a wrong input count/dtype/size, 145013 for a gear the model does not have,
        500002 when a kernel fails.
        """
        if len(inputs) != len(self.inputs):
            raise ModelRunError(PARAM_INVALID, f"model {self.name!r} has {len(self.inputs)} "
                                f"inputs, {len(inputs)} arrays were given")
        if batch is None:
            batch = self.gear_for_inputs(inputs)
        specs = self.tensor_specs(batch)
        env: dict[str, np.ndarray] = dict(self.weights)
        for d, arr in zip(self.inputs, inputs, strict=True):
            spec = specs[d.name]
            a = np.asarray(arr)
            if a.dtype != np.dtype(spec.dtype):
                raise ModelRunError(PARAM_INVALID, f"input {d.name!r} must be {spec.dtype}, "
                                    f"got {a.dtype}")
            if a.shape != spec.shape:
                if a.size != spec.size:
                    raise ModelRunError(PARAM_INVALID, f"input {d.name!r} must have shape "
                                        f"{spec.shape} ({spec.size} elements), got {a.shape}")
                a = a.reshape(spec.shape)
            env[d.name] = a
        last_use = self._last_use()
        for i, node in enumerate(self.nodes):
            op = get_op(node.op)
            try:
                outs = op.compute([env[t] for t in node.inputs], _attrs(op, node))
            except Exception as e:
                raise ModelRunError(GE_FAILURE, f"node {node.name!r} ({node.op}) failed: "
                                    f"{e}") from e
            if len(outs) != len(node.outputs):
                raise ModelRunError(GE_FAILURE, f"node {node.name!r} ({node.op}) produced "
                                    f"{len(outs)} outputs, expected {len(node.outputs)}")
            for t, a in zip(node.outputs, outs, strict=True):
                want = specs[t]
                if a.shape != want.shape or a.dtype != np.dtype(want.dtype):
                    raise ModelRunError(GE_FAILURE, f"node {node.name!r} ({node.op}) produced "
                                        f"{a.dtype}{list(a.shape)}, inferred "
                                        f"{want.dtype}{list(want.shape)}")
                env[t] = a
            for t in last_use.get(i, ()):
                env.pop(t, None)
        return [env[d.name] for d in self.outputs]

    def _last_use(self) -> dict[int, list[str]]:
        """Node index -> intermediate tensors that are dead after it (freed during run)."""
        keep = {d.name for d in self.outputs} | set(self.weights) | {d.name for d in self.inputs}
        last: dict[str, int] = {}
        for i, node in enumerate(self.nodes):
            for t in node.inputs:
                last[t] = i
            for t in node.outputs:
                last.setdefault(t, i)
        out: dict[int, list[str]] = {}
        for t, i in last.items():
            if t not in keep:
                out.setdefault(i, []).append(t)
        return out

    # ----------------------------------------------------------------- serialisation
    def to_bytes(self) -> bytes:
        """The ``.om`` bytes (deterministic)."""
        return dump_om_bytes(self)

    def describe(self) -> str:
        """A short multi-line summary: I/O, node count per op type, weight and work bytes."""
        counts: dict[str, int] = {}
        for n in self.nodes:
            counts[n.op] = counts.get(n.op, 0) + 1
        lines = [f"model {self.name!r} for {self.soc_version}"]
        lines += [f"  input  {d.name}: {d.dtype}{list(d.shape)}" for d in self.acl_inputs]
        lines += [f"  output {d.name}: {d.dtype}{list(d.shape)}" for d in self.outputs]
        if self.is_dynamic:
            lines.append(f"  dynamic {self.dynamic_kind} gears: {self.named_gears} (the "
                         "gear goes in "
                         f"input {self.shape_data_index}, {SHAPE_DATA_NAME})")
        lines.append(f"  {len(self.nodes)} nodes: "
                     + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
        lines.append(f"  weights {self.weight_bytes()} B, work {self.work_bytes()} B")
        return "\n".join(lines)


def _attrs(op: OpDef, node: Node) -> dict[str, Any]:
    """The node's attributes over the op's defaults."""
    return {**op.defaults, **node.attrs}


def _infer_attrs(op: OpDef, node: Node, weights: dict[str, np.ndarray]) -> dict[str, Any]:
    """Attributes for ``infer``: with the values of constant inputs in ``__consts__`` (the
    operator convention of ``acl_lab.runtime.kernels``)."""
    attrs = _attrs(op, node)
    consts = {i: weights[node.inputs[i]] for i in op.const_inputs
              if i < len(node.inputs) and node.inputs[i] in weights}
    if consts:
        attrs["__consts__"] = consts
    return attrs


def _jsonable(v: Any) -> Any:
    """Attribute values as plain JSON types (numpy scalars/arrays and tuples included)."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    return v


# --------------------------------------------------------------------- building graphs
class GraphBuilder:
    """Builds an OmModel node by node (used by the zoo and the ATC converter).

    Tensor and node names are made unique automatically; ``add_node`` returns the output
    tensor names.
    """

    def __init__(self, name: str, soc_version: str = "Ascend310P3") -> None:
        self.name = name
        self.soc_version = soc_version
        self.inputs: list[IODesc] = []
        self.outputs: list[IODesc] = []
        self.nodes: list[Node] = []
        self.weights: dict[str, np.ndarray] = {}
        self.dynamic_batch: list[int] = []
        self.dynamic_hw: list[list[int]] = []
        self.dynamic_dims: list[list[int]] = []
        self.meta: dict[str, Any] = {}
        self._names: set[str] = set()
        self._node_names: set[str] = set()
        self._counter: dict[str, int] = {}

    def unique(self, base: str, node: bool = False) -> str:
        """``base`` or ``base_N``, not used yet (for tensors, or for nodes if ``node``)."""
        taken = self._node_names if node else self._names
        name = base
        while name in taken or not name:
            self._counter[base] = self._counter.get(base, 0) + 1
            name = f"{base}_{self._counter[base]}"
        taken.add(name)
        return name

    def add_input(self, name: str, dtype: str, shape: tuple[int, ...] | list[int],
                  fmt: int | None = None) -> str:
        """Declare a model input (format NCHW for 4-D, ND otherwise, unless ``fmt``)."""
        shape = tuple(int(s) for s in shape)
        if fmt is None:
            fmt = ACL_FORMAT_NCHW if len(shape) == 4 else ACL_FORMAT_ND
        if name in self._names:
            raise ValueError(f"tensor name {name!r} is already used")
        self._names.add(name)
        self.inputs.append(IODesc(name, np.dtype(dtype).name, shape, fmt))
        return name

    def add_weight(self, name: str, array: np.ndarray) -> str:
        """Add an initializer (stored contiguous, read-only); returns its unique name."""
        name = self.unique(name)
        a = np.ascontiguousarray(array)
        a.flags.writeable = False
        self.weights[name] = a
        return name

    def add_node(self, op: str, inputs: list[str], attrs: dict[str, Any] | None = None,
                 name: str | None = None, outputs: list[str] | None = None,
                 n_outputs: int = 1) -> list[str]:
        """Append a node; returns its output tensor names (made unique)."""
        node_name = self.unique(name or op, node=True)
        if outputs is None:
            outputs = [node_name if i == 0 else f"{node_name}:{i}" for i in range(n_outputs)]
        outs = [self.unique(t) for t in outputs]
        self.nodes.append(Node(node_name, op, list(inputs), outs,
                               _jsonable(dict(attrs or {}))))
        return outs

    def add_output(self, tensor: str, dtype: str, shape: tuple[int, ...] | list[int],
                   fmt: int = ACL_FORMAT_ND) -> None:
        """Declare ``tensor`` a model output with this dtype and shape (-1 = a dim that
        differs between gears)."""
        self.outputs.append(IODesc(tensor, np.dtype(dtype).name,
                                   tuple(int(s) for s in shape), fmt))

    def rename_tensor(self, old: str, new: str) -> str:
        """Rename a node-produced tensor everywhere (node inputs/outputs, model outputs);
        ``new`` is made unique. Returns the name actually used."""
        new = self.unique(new)
        self._names.discard(old)
        for n in self.nodes:
            n.inputs = [new if t == old else t for t in n.inputs]
            n.outputs = [new if t == old else t for t in n.outputs]
        for d in self.outputs:
            if d.name == old:
                d.name = new
        return new

    def build(self) -> OmModel:
        """The OmModel (validated like a loaded file; raises ModelFileError(145006))."""
        model = OmModel(self.name, list(self.inputs), list(self.outputs), list(self.nodes),
                        dict(self.weights), self.soc_version, list(self.dynamic_batch),
                        dict(self.meta), [list(g) for g in self.dynamic_hw],
                        [list(g) for g in self.dynamic_dims])
        validate(model)
        return model


# --------------------------------------------------------------------- validation
def _bad(msg: str) -> ModelFileError:
    return ModelFileError(DATA_INVALID, f"the model data is not a valid OM: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _validate_gears(model: OmModel) -> None:
    """The gear rules: at most one way of naming gears; batch gears are distinct positive
    ints with -1 only at dim 0 of the inputs; image sizes are distinct positive (h, w)
    pairs with -1 exactly at H and W of 4-D NCHW/NHWC inputs; dims gears are distinct lists
    of positive ints, one per -1 of the inputs; a static model has no -1 input dim; only a
    dynamic model's outputs may have -1."""
    kinds = [k for k, v in ((KIND_BATCH, model.dynamic_batch), (KIND_HW, model.dynamic_hw),
                            (KIND_DIMS, model.dynamic_dims)) if v]
    if len(kinds) > 1:
        raise _bad(f"a model names its gears one way, this one has {' and '.join(kinds)} gears")
    kind = kinds[0] if kinds else ""
    if kind == KIND_BATCH:
        gears: list[Any] = list(model.dynamic_batch)
        if not all(_is_int(b) and b > 0 for b in gears):
            raise _bad(f"dynamic_batch must be distinct positive integers, got {gears}")
    else:
        gears = [list(g) if isinstance(g, (list, tuple)) else g
                 for g in (model.dynamic_hw or model.dynamic_dims)]
        if not all(isinstance(g, list) and g and all(_is_int(v) and v > 0 for v in g)
                   for g in gears):
            raise _bad(f"dynamic_{kind} gears must be lists of positive integers, got {gears}")
    if len(gears) > MAX_GEARS:
        raise _bad(f"dynamic_{kind} has {len(gears)} gears; ATC allows at most {MAX_GEARS}")
    keys = [repr(g) for g in gears]
    if len(set(keys)) != len(keys):
        raise _bad(f"dynamic_{kind} has a repeated gear: {gears}")
    for d in [*model.inputs, *model.outputs]:
        if d.dtype not in NUMPY_TO_ACL:
            raise _bad(f"tensor {d.name!r} has unsupported dtype {d.dtype!r}")
        if any(s < -1 for s in d.shape):
            raise _bad(f"tensor {d.name!r} has shape {list(d.shape)}: dims are >= 0, or -1")
    for d in model.outputs:
        if -1 in d.shape and not kind:
            raise _bad(f"output {d.name!r} has shape {list(d.shape)}: only a dynamic model's "
                       "outputs may have -1")
    dyn = [d for d in model.inputs if -1 in d.shape]
    for d in dyn:
        if not kind:
            raise _bad(f"input {d.name!r} has shape {list(d.shape)}: only a dynamic model's "
                       "inputs may have -1")
        if kind == KIND_BATCH and (d.shape[0] != -1 or -1 in d.shape[1:]):
            raise _bad(f"input {d.name!r} has shape {list(d.shape)}: only dim 0 of a "
                       "dynamic-batch model may be -1")
        if kind == KIND_HW:
            axes = HW_AXES.get(d.format)
            if (len(d.shape) != 4 or axes is None or d.shape.count(-1) != 2
                    or d.shape[axes[0]] != -1 or d.shape[axes[1]] != -1):
                raise _bad(f"input {d.name!r} has shape {list(d.shape)} in format {d.format}: "
                           "a dynamic image size needs -1 at exactly H and W of an NCHW or "
                           "NHWC input")
    if kind and not dyn:
        raise _bad(f"dynamic_{kind} is set but no input has a -1 dimension")
    if kind == KIND_HW and any(len(g) != 2 for g in gears):
        raise _bad(f"dynamic_hw gears are [height, width] pairs, got {gears}")
    if kind == KIND_DIMS:
        n = sum(d.shape.count(-1) for d in model.inputs)
        if any(len(g) != n for g in gears):
            raise _bad(f"dynamic_dims gears need one value per -1 of the inputs ({n}), got "
                       f"{gears}")
    if kind and any(d.name == SHAPE_DATA_NAME for d in model.inputs):
        raise _bad(f"input name {SHAPE_DATA_NAME!r} is reserved in a dynamic model for "
                   "the gear input ATC adds")


def validate(model: OmModel) -> None:
    """Check the graph is well formed and its shapes infer at every gear.

    Raises ModelFileError(145006) naming the first problem: a gear rule broken
    (``_validate_gears``), duplicate or unknown tensor names, unknown op types, wrong
    input/output counts, non-constant const inputs, an operator rejecting the shapes, or
    outputs that disagree with the inferred ones (a declared -1 matches any size).
    """
    _validate_gears(model)
    known: set[str] = set()
    for name in [d.name for d in model.inputs] + list(model.weights):
        if name in known:
            raise _bad(f"tensor name {name!r} is defined twice")
        known.add(name)
    for name, w in model.weights.items():
        if w.dtype.name not in NUMPY_TO_ACL:
            raise _bad(f"weight {name!r} has unsupported dtype {w.dtype.name!r}")
    node_names: set[str] = set()
    for node in model.nodes:
        if node.name in node_names:
            raise _bad(f"node name {node.name!r} is used twice")
        node_names.add(node.name)
        try:
            op = get_op(node.op)
        except OpError:
            raise _bad(f"node {node.name!r} has unknown op type {node.op!r}") from None
        lo, hi = op.inputs
        if not lo <= len(node.inputs) <= hi:
            raise _bad(f"node {node.name!r} ({node.op}) has {len(node.inputs)} inputs, the op "
                       f"takes {lo}..{hi}")
        if len(node.outputs) != op.outputs:
            raise _bad(f"node {node.name!r} ({node.op}) has {len(node.outputs)} outputs, the "
                       f"op has {op.outputs}")
        for t in node.inputs:
            if t not in known:
                raise _bad(f"node {node.name!r} refers to unknown tensor {t!r}")
        for i in op.const_inputs:
            if i < len(node.inputs) and node.inputs[i] not in model.weights:
                raise _bad(f"input {i} ({node.inputs[i]!r}) of node {node.name!r} "
                           f"({node.op}) must be a constant (weight)")
        for t in node.outputs:
            if t in known:
                raise _bad(f"tensor {t!r} (output of node {node.name!r}) is defined twice")
            known.add(t)
    for d in model.outputs:
        if d.name not in known:
            raise _bad(f"model output {d.name!r} is not produced by the graph")
    model._specs.clear()
    model._costs.clear()
    keys: list[tuple[int, ...]] = model.gears or [()]
    for key in keys:
        try:
            specs = model.tensor_specs(key)
        except OpError as e:
            where = _failing_node(model, key)
            raise _bad(f"{where}{e.message}") from None
        for name, spec in specs.items():
            if spec.nbytes > MAX_TENSOR_BYTES:
                at = f" at {_gear_text(model, key)}" if key else ""
                raise _bad(f"tensor {name!r} of shape {list(spec.shape)}{at} holds "
                           f"{spec.nbytes} bytes, more than a tensor size can hold "
                           f"({MAX_TENSOR_BYTES})")
        for d in model.outputs:
            got = specs[d.name]
            if got.dtype != d.dtype or len(got.shape) != len(d.shape) or any(
                    w not in (-1, g) for w, g in zip(d.shape, got.shape, strict=True)):
                raise _bad(f"model output {d.name!r} is declared {d.dtype}{list(d.shape)} but "
                           f"the graph gives {got.dtype}{list(got.shape)}"
                           + (f" at {_gear_text(model, key)}" if key else ""))


    work = model.work_bytes()
    if work > MAX_TENSOR_BYTES:
        raise _bad(f"the model's intermediate tensors hold {work} bytes, more than a memory "
                   f"size can hold ({MAX_TENSOR_BYTES})")


def _gear_text(model: OmModel, key: tuple[int, ...]) -> str:
    """'batch 4' / 'gear [224, 224]' for messages."""
    return f"batch {key[0]}" if model.dynamic_batch else f"gear {list(key)}"


def _failing_node(model: OmModel, key: tuple[int, ...]) -> str:
    """'node X (Op) at batch B: ' for the first node whose infer fails (best effort)."""
    specs: dict[str, TensorSpec] = {d.name: s for d, s in zip(model.inputs,
                                                               model._in_specs(key),
                                                               strict=True)}
    for name, w in model.weights.items():
        specs[name] = TensorSpec(w.dtype.name, tuple(w.shape))
    for node in model.nodes:
        op = get_op(node.op)
        try:
            outs = op.infer([specs[t] for t in node.inputs],
                            _infer_attrs(op, node, model.weights))
            specs.update(zip(node.outputs, outs, strict=True))
        except Exception:
            at = f" at {_gear_text(model, key)}" if key else ""
            return f"node {node.name!r} ({node.op}){at}: "
    return ""


# --------------------------------------------------------------------- (de)serialisation
def dump_om_bytes(model: OmModel) -> bytes:
    """Serialise ``model`` (validated first) to deterministic ``.om`` bytes."""
    validate(model)
    inits: list[dict[str, Any]] = []
    blobs: list[bytes] = []
    offset = 0
    for name, w in model.weights.items():
        pad = -offset % _ALIGN
        if pad:
            blobs.append(b"\0" * pad)
            offset += pad
        data = np.ascontiguousarray(w).tobytes()
        inits.append({"name": name, "dtype": w.dtype.name, "shape": [int(s) for s in w.shape],
                      "offset": offset, "nbytes": len(data)})
        blobs.append(data)
        offset += len(data)
    header = {
        "name": model.name,
        "soc_version": model.soc_version,
        "inputs": [d.to_json() for d in model.inputs],
        "outputs": [d.to_json() for d in model.outputs],
        "nodes": [n.to_json() for n in model.nodes],
        "initializers": inits,
        "dynamic_batch": [int(b) for b in model.dynamic_batch],
        "weights_size": offset,
        "meta": _jsonable(model.meta),
    }
    # written only when set, so that models without them keep their bytes
    if model.dynamic_hw:
        header["dynamic_hw"] = [[int(v) for v in g] for g in model.dynamic_hw]
    if model.dynamic_dims:
        header["dynamic_dims"] = [[int(v) for v in g] for g in model.dynamic_dims]
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    raw = text.encode("ascii")
    raw += b" " * (-(_PREFIX.size + len(raw)) % _ALIGN)
    return _PREFIX.pack(MAGIC, FORMAT_VERSION, len(raw)) + raw + b"".join(blobs)


def save_om(model: OmModel, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path`` (the caller chooses the ``.om`` suffix)."""
    data = dump_om_bytes(model)
    with open(path, "wb") as f:
        f.write(data)


def read_header(data: bytes) -> dict[str, Any]:
    """Parse the prefix and JSON header of ``.om`` bytes (``data`` may stop after the
    header); raises ModelFileError(145006)."""
    if len(data) < _PREFIX.size:
        raise _bad(f"{len(data)} bytes is shorter than the OM file header ({_PREFIX.size})")
    magic, version, hlen = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise _bad(f"wrong magic number {magic[:9]!r} (expected {MAGIC!r})")
    if version != FORMAT_VERSION:
        raise _bad(f"unsupported OM format version {version} (this acl_lab reads "
                   f"{FORMAT_VERSION})")
    if hlen > len(data) - _PREFIX.size:
        raise _bad(f"the header length {hlen} runs past the end of the data")
    try:
        header = json.loads(data[_PREFIX.size:_PREFIX.size + hlen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _bad(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad("the header is not a JSON object")
    header["_header_end"] = _PREFIX.size + hlen
    return header


def _get(d: Any, key: str, typ: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise _bad(f"{what} has no {key!r}")
    v = d[key]
    if not isinstance(v, typ) or (isinstance(v, bool) and typ is int):
        raise _bad(f"{what}: {key!r} has the wrong type ({type(v).__name__})")
    return v


def _shape(v: Any, what: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                          for s in v):
        raise _bad(f"{what}: shape must be a list of integers, got {v!r}")
    return tuple(v)


def _io(d: Any, what: str) -> IODesc:
    name = _get(d, "name", str, what)
    dtype = _get(d, "dtype", str, what)
    fmt = _get(d, "format", int, what)
    return IODesc(name, dtype, _shape(_get(d, "shape", list, what), what), fmt)


def load_om_bytes(data: bytes) -> OmModel:
    """Parse and validate ``.om`` bytes; raises only ModelFileError(145006)."""
    try:
        return _load(bytes(data))
    except ModelFileError:
        raise
    except Exception as e:  # a corrupt file must give a code, never a Python error
        raise _bad(f"{type(e).__name__}: {e}") from None


def _load(data: bytes) -> OmModel:
    header = read_header(data)
    start = header["_header_end"]
    name = _get(header, "name", str, "header")
    soc = _get(header, "soc_version", str, "header")
    inputs = [_io(d, f"input {i}") for i, d in enumerate(_get(header, "inputs", list,
                                                                "header"))]
    outputs = [_io(d, f"output {i}") for i, d in enumerate(_get(header, "outputs", list,
                                                                  "header"))]
    if not inputs or not outputs:
        raise _bad("a model needs at least one input and one output")
    nodes = []
    for i, n in enumerate(_get(header, "nodes", list, "header")):
        what = f"node {i}"
        ins = _get(n, "inputs", list, what)
        outs = _get(n, "outputs", list, what)
        if not all(isinstance(t, str) for t in ins + outs):
            raise _bad(f"{what}: tensor names must be strings")
        nodes.append(Node(_get(n, "name", str, what), _get(n, "op", str, what), ins, outs,
                          _get(n, "attrs", dict, what)))
    gears = _get(header, "dynamic_batch", list, "header")
    hw = _get(header, "dynamic_hw", list, "header") if "dynamic_hw" in header else []
    dims = _get(header, "dynamic_dims", list, "header") if "dynamic_dims" in header else []
    size = _get(header, "weights_size", int, "header")
    meta = _get(header, "meta", dict, "header")
    blob = memoryview(data)[start:]
    if len(blob) < size:
        raise _bad(f"the weights are truncated: {len(blob)} of {size} bytes present")
    if len(blob) > size:
        raise _bad(f"{len(blob) - size} unexpected bytes after the weights")
    weights: dict[str, np.ndarray] = {}
    for i, d in enumerate(_get(header, "initializers", list, "header")):
        what = f"initializer {i}"
        wname = _get(d, "name", str, what)
        dtype = _get(d, "dtype", str, what)
        if dtype not in NUMPY_TO_ACL:
            raise _bad(f"{what} has unsupported dtype {dtype!r}")
        shape = _shape(_get(d, "shape", list, what), what)
        off = _get(d, "offset", int, what)
        nbytes = _get(d, "nbytes", int, what)
        if any(s < 0 for s in shape):
            raise _bad(f"{what} has a negative dimension")
        expect = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if nbytes != expect:
            raise _bad(f"{what} ({wname!r}) says {nbytes} bytes, {dtype}{list(shape)} is "
                       f"{expect}")
        if off < 0 or off + nbytes > size:
            raise _bad(f"{what} ({wname!r}) lies outside the weight data")
        if wname in weights:
            raise _bad(f"initializer {wname!r} is defined twice")
        arr = np.frombuffer(blob, dtype=dtype, count=nbytes // np.dtype(dtype).itemsize,
                            offset=off).reshape(shape)
        weights[wname] = arr
    model = OmModel(name, inputs, outputs, nodes, weights, soc, list(gears), meta, list(hw),
                    list(dims))
    validate(model)
    return model


def load_om(path: str | os.PathLike[str]) -> OmModel:
    """Load an ``.om`` file: ModelFileError(145002) when it cannot be opened,
    ModelFileError(145006) when it is not a valid OM."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (OSError, TypeError, ValueError) as e:
        raise ModelFileError(PATH_INVALID, f"the model path {path!r} is invalid "
                             f"or cannot be read ({type(e).__name__}: {e})") from None
    return load_om_bytes(data)
