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
free-form ``meta`` dict (who built it and with which options). The same model always gives
the same bytes: no timestamps, sorted keys.

``inputs`` are the graph's data inputs. A real ATC adds one more input to a dynamic-batch
model, ``ascend_mbatch_shape_data`` (``ACL_DYNAMIC_TENSOR_NAME``), which carries the chosen
gear to the device; the file does not store it, :attr:`OmModel.acl_inputs` derives it (it is
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
from typing import Any

import numpy as np

from ..constants import ACL_DYNAMIC_TENSOR_NAME
from .errors import AclError
from .opdefs import NUMPY_TO_ACL, OpDef, OpError, TensorSpec, get_op

MAGIC = b"ACLLAB-OM"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<9sIQ")  # magic, version, header length
_ALIGN = 64

#: ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID / _DATA_SIZE_INVALID / _PARAM_INVALID / ...
PATH_INVALID = 145002
DATA_INVALID = 145006
PARAM_INVALID = 145000
BATCH_INVALID = 145013
GE_FAILURE = 500002

ACL_FORMAT_NCHW = 0
ACL_FORMAT_ND = 2

#: The input real ATC adds to a dynamic-batch model, after the data inputs: int64 [1] in ND
#: format, 8 bytes, holding the batch size (what the Ascend samples' dynamic-batch yolov3 log
#: prints for it: ``name[ascend_mbatch_shape_data], inputSize[8], format[2], dataType[9]``,
#: ``dims:[1]``); ``acl.mdl.set_dynamic_batch_size`` writes the gear into its buffer.
SHAPE_DATA_NAME = ACL_DYNAMIC_TENSOR_NAME
SHAPE_DATA_DTYPE = "int64"
SHAPE_DATA_SHAPE = (1,)


class ModelFileError(AclError):
    """An ``.om`` file or buffer cannot be loaded (``code`` 145002 or 145006)."""


class ModelRunError(AclError):
    """A model cannot execute with these inputs (145000 bad input, 145013 bad batch,
    500002 a kernel failed)."""


@dataclass
class IODesc:
    """One model input or output: name, numpy dtype name, shape (-1 = dynamic batch), format."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    format: int = ACL_FORMAT_ND

    def spec(self, batch: int | None = None) -> TensorSpec:
        """The TensorSpec with -1 replaced by ``batch`` (kept as -1 when ``batch`` is None)."""
        shape = self.shape if batch is None else tuple(batch if d == -1 else d
                                                       for d in self.shape)
        return TensorSpec(self.dtype, shape, self.format)

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
    _specs: dict[int, dict[str, TensorSpec]] = field(default_factory=dict, init=False,
                                                     repr=False, compare=False)
    _costs: dict[int, list[tuple[str, str, int, int]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    # ----------------------------------------------------------------- descriptors
    def input_specs(self, batch: int | None = None) -> list[TensorSpec]:
        """Input TensorSpecs at ``batch`` (for a dynamic-batch model the -1 dimension
        becomes ``batch``, or the largest gear when None; ``inputs[i].shape`` keeps the -1
        that ``get_input_dims`` reports)."""
        b = self._batch_or_max(batch)
        return [d.spec(b if self.dynamic_batch else None) for d in self.inputs]

    def output_specs(self, batch: int | None = None) -> list[TensorSpec]:
        """Output TensorSpecs at ``batch`` (see :meth:`input_specs`)."""
        b = self._batch_or_max(batch)
        return [d.spec(b if self.dynamic_batch else None) for d in self.outputs]

    @property
    def is_dynamic(self) -> bool:
        """True for a dynamic-batch model."""
        return bool(self.dynamic_batch)

    @property
    def acl_inputs(self) -> list[IODesc]:
        """The inputs as the model desc reports them: the data inputs, then, for a
        dynamic-batch model, the ``ascend_mbatch_shape_data`` input real ATC adds (int64
        [1], ND, 8 bytes; see ``SHAPE_DATA_NAME``). ``run`` takes only the data inputs."""
        if not self.dynamic_batch:
            return list(self.inputs)
        return [*self.inputs, IODesc(SHAPE_DATA_NAME, SHAPE_DATA_DTYPE, SHAPE_DATA_SHAPE,
                                     ACL_FORMAT_ND)]

    @property
    def shape_data_index(self) -> int | None:
        """The index of the ``ascend_mbatch_shape_data`` input (after the data inputs), or
        None for a static model."""
        return len(self.inputs) if self.dynamic_batch else None

    @property
    def max_batch(self) -> int | None:
        """The largest batch gear, or None for a static model."""
        return max(self.dynamic_batch) if self.dynamic_batch else None

    def input_size(self, i: int, batch: int | None = None) -> int:
        """Byte size of input ``i`` (``get_input_size_by_index``): the largest gear for a
        dynamic-batch model unless ``batch`` is given."""
        return self.inputs[i].spec(self._batch_or_max(batch)).nbytes

    def output_size(self, i: int, batch: int | None = None) -> int:
        """Byte size of output ``i`` (largest gear for a dynamic-batch model)."""
        return self.outputs[i].spec(self._batch_or_max(batch)).nbytes

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
    def _batch_or_max(self, batch: int | None) -> int:
        """Validate ``batch`` and return the key used for caches (0 for a static model)."""
        if not self.dynamic_batch:
            if batch is not None:
                raise ModelRunError(BATCH_INVALID, f"model {self.name!r} has no dynamic batch; "
                                    f"batch {batch} cannot be set")
            return 0
        if batch is None:
            return max(self.dynamic_batch)
        if batch not in self.dynamic_batch:
            raise ModelRunError(BATCH_INVALID, f"batch {batch} is not one of the gears "
                                f"{self.dynamic_batch} of model {self.name!r}")
        return batch

    def tensor_specs(self, batch: int | None = None) -> dict[str, TensorSpec]:
        """The TensorSpec of every tensor (inputs, weights, node outputs) at ``batch``
        (largest gear when None), inferred with the operators' ``infer``; cached."""
        key = self._batch_or_max(batch)
        cached = self._specs.get(key)
        if cached is not None:
            return cached
        specs: dict[str, TensorSpec] = {}
        for d in self.inputs:
            specs[d.name] = d.spec(key if self.dynamic_batch else None)
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

    def cost(self, batch: int | None = None) -> list[tuple[str, str, int, int]]:
        """Per node ``(node name, op type, flops, bytes)`` from the operators' cost functions
        on the inferred shapes at ``batch`` (largest gear when None); cached per batch."""
        key = self._batch_or_max(batch)
        cached = self._costs.get(key)
        if cached is not None:
            return cached
        specs = self.tensor_specs(batch)
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

    def run(self, inputs: list[np.ndarray], batch: int | None = None) -> list[np.ndarray]:
        """Execute the graph on numpy ``inputs`` (one per model input, in order).

        Each array must have the input's dtype and its element count (it is reshaped to
        the descriptor's shape). For a dynamic-batch model ``batch`` selects the gear;
        when None it is deduced from the first input. Returns the outputs in order.
        Raises ModelRunError: 145000 for a wrong input count/dtype/size, 145013 for a batch
        that is not a gear, 500002 when a kernel fails.
        """
        if len(inputs) != len(self.inputs):
            raise ModelRunError(PARAM_INVALID, f"model {self.name!r} has {len(self.inputs)} "
                                f"inputs, {len(inputs)} arrays were given")
        if batch is None:
            batch = self.batch_for_inputs(inputs)
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
        if self.dynamic_batch:
            lines.append(f"  dynamic batch gears: {self.dynamic_batch} (the gear goes in "
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
    operator convention of ``acl_lab.runtime.ops``)."""
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
        """Declare ``tensor`` a model output with this dtype and shape (-1 = batch)."""
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
                        dict(self.meta))
        validate(model)
        return model


# --------------------------------------------------------------------- validation
def _bad(msg: str) -> ModelFileError:
    return ModelFileError(DATA_INVALID, f"the model data is not a valid OM: {msg}")


def validate(model: OmModel) -> None:
    """Check the graph is well formed and its shapes infer at every batch gear.

    Raises ModelFileError(145006) naming the first problem: duplicate or unknown tensor
    names, unknown op types, wrong input/output counts, non-constant const inputs, an
    operator rejecting the shapes, or outputs that disagree with the inferred ones.
    """
    gears = model.dynamic_batch
    if gears and (any(not isinstance(b, int) or isinstance(b, bool) or b <= 0 for b in gears)
                  or len(set(gears)) != len(gears)):
        raise _bad(f"dynamic_batch must be distinct positive integers, got {gears}")
    for d in [*model.inputs, *model.outputs]:
        if d.dtype not in NUMPY_TO_ACL:
            raise _bad(f"tensor {d.name!r} has unsupported dtype {d.dtype!r}")
        if any(s < -1 for s in d.shape) or (-1 in d.shape and (not gears or d.shape[0] != -1
                                                                 or -1 in d.shape[1:])):
            raise _bad(f"tensor {d.name!r} has shape {list(d.shape)}: only dim 0 of a "
                       "dynamic-batch model may be -1")
    if gears and not any(d.shape and d.shape[0] == -1 for d in model.inputs):
        raise _bad("dynamic_batch is set but no input has a -1 batch dimension")
    if gears and any(d.name == SHAPE_DATA_NAME for d in model.inputs):
        raise _bad(f"input name {SHAPE_DATA_NAME!r} is reserved in a dynamic-batch model for "
                   "the batch-size input ATC adds")
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
    batches: list[int | None] = list(gears) if gears else [None]
    for batch in batches:
        try:
            specs = model.tensor_specs(batch)
        except OpError as e:
            where = _failing_node(model, batch)
            raise _bad(f"{where}{e.message}") from None
        for d in model.outputs:
            want = d.spec(batch)
            got = specs[d.name]
            if got.dtype != want.dtype or got.shape != want.shape:
                raise _bad(f"model output {d.name!r} is declared {want.dtype}"
                           f"{list(want.shape)} but the graph gives {got.dtype}"
                           f"{list(got.shape)}" + (f" at batch {batch}" if gears else ""))


def _failing_node(model: OmModel, batch: int | None) -> str:
    """'node X (Op) at batch B: ' for the first node whose infer fails (best effort)."""
    specs: dict[str, TensorSpec] = {d.name: d.spec(batch) for d in model.inputs}
    for name, w in model.weights.items():
        specs[name] = TensorSpec(w.dtype.name, tuple(w.shape))
    for node in model.nodes:
        op = get_op(node.op)
        try:
            outs = op.infer([specs[t] for t in node.inputs],
                            _infer_attrs(op, node, model.weights))
            specs.update(zip(node.outputs, outs, strict=True))
        except Exception:
            at = f" at batch {batch}" if batch is not None else ""
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
    model = OmModel(name, inputs, outputs, nodes, weights, soc, list(gears), meta)
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
