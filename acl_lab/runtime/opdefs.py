"""The operator interface shared by single-op execution (acl.op), models and aclnn.

An ``OpDef`` is pure: shape/dtype inference, a numpy kernel and a cost function, with no
knowledge of streams, memory or time. The runtime wraps it in a kernel task: it reads the
input bytes at the task's start, calls ``compute`` and writes the outputs at the task's end,
and charges ``cost`` to the AI-core pool of the device profile. Operator modules register
their definitions with ``register``; nothing here imports the rest of acl_lab.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..constants import ErrorCode

#: aclDataType number -> numpy dtype name (the types operators support)
ACL_TO_NUMPY: dict[int, str] = {0: "float32", 1: "float16", 2: "int8", 3: "int32", 4: "uint8",
                                6: "int16", 7: "uint16", 8: "uint32", 9: "int64",
                                10: "uint64", 11: "float64", 12: "bool"}
NUMPY_TO_ACL: dict[str, int] = {v: k for k, v in ACL_TO_NUMPY.items()}


#: the attribute under which the runtime hands an op's ``compute`` the inputs' tensor formats
#: (a tuple of aclFormat codes in input order; absent or short: ND), for the kernels whose
#: layout follows the tensor format (Conv2D)
FORMATS_ATTR = "__formats__"


@dataclass(frozen=True)
class TensorSpec:
    """What an operator needs to know of a tensor: dtype (numpy name), shape and format."""

    dtype: str
    shape: tuple[int, ...]
    format: int = 2  # ACL_FORMAT_ND

    @property
    def nbytes(self) -> int:
        """Size in bytes (element count x element size), exact: a shape from a crafted
        model cannot wrap it around int64."""
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize

    @property
    def size(self) -> int:
        """Element count (exact)."""
        return math.prod(self.shape)


class OpError(Exception):
    """An operator cannot run with these inputs/attributes.

    ``code`` is the ACL code the API returns: 100024 (ACL_ERROR_OP_NOT_FOUND, what real
    aclopExecuteV2 returns when no compiled op matches type, dtypes, shapes, formats or attrs)
    unless a more specific one applies (100026 unsupported data type, 100000 bad attribute).
    """

    def __init__(self, message: str, code: int = ErrorCode.ACL_ERROR_OP_NOT_FOUND) -> None:
        super().__init__(message)
        self.code = int(code)  # a plain int, as AclError keeps it
        self.message = message


Infer = Callable[[list[TensorSpec], dict[str, Any]], list[TensorSpec]]
Compute = Callable[[list[np.ndarray], dict[str, Any]], list[np.ndarray]]
Cost = Callable[[list[TensorSpec], list[TensorSpec], dict[str, Any]], tuple[int, int]]


@dataclass(frozen=True)
class OpDef:
    """One operator type.

    Args:
        name: the op type string (``"Add"``, ``"MatMul"``, ``"Conv2D"``...).
        inputs: (min, max) number of inputs.
        outputs: number of outputs.
        dtypes: numpy dtype names the op accepts for its (first) input.
        infer: input specs + attrs -> output specs; raises OpError for bad shapes/attrs.
        compute: input arrays + attrs -> output arrays (numpy, exact dtypes of ``infer``).
        cost: (input specs, output specs, attrs) -> (flops, bytes moved), for the timeline.
        defaults: attribute defaults (OpProto names, reference section 9.4).
        const_inputs: indices of inputs that must be constant/host data (e.g. perm, axes).
    """

    name: str
    inputs: tuple[int, int]
    outputs: int
    dtypes: frozenset[str]
    infer: Infer
    compute: Compute
    cost: Cost
    defaults: dict[str, Any] = field(default_factory=dict)
    const_inputs: tuple[int, ...] = ()


REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add an operator to the registry (one name, one definition)."""
    REGISTRY[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    """The definition of ``name``; raises OpError(100024) for an unknown op type."""
    _load_builtin()
    op = REGISTRY.get(name)
    if op is None:
        raise OpError(f"op type {name!r} is unknown: no compiled single-op model matches it "
                      f"(known: {', '.join(sorted(REGISTRY))})")
    return op


def _load_builtin() -> None:
    if not REGISTRY:
        from . import kernels  # noqa: F401  (registers the built-in operators)
