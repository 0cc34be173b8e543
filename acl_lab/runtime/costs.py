"""The virtual-time cost model: how many nanoseconds each kind of work takes.

One pure function per kind of work, of a profile and the work's size: copies and memsets
(DMA engines), kernels (AI cores: a roofline on the cores a kernel's output fills), model
executions (the sum of their layers' kernels), DVPP jobs (JPEGD, JPEGE, VPC, VDEC, VENC),
callbacks, events, API calls and the host's own work (JPEG decoding, preprocessing passes,
page faults). ``profiles.py`` keeps the numbers (``DeviceProfile``, ``HostProfile``, with
the source of each); this module keeps the formulas, so a change to the cost model is a
change to this file. Callers (``copies``, ``singleop``, ``models``, ``dvpp``,
``video``, ``aclnn``, ``hostwork``, ``profiling``) charge what these functions return.

Nothing here reads a session or the clock: every function is a function of its arguments,
and the same arguments give the same nanoseconds on every machine (the traces are
deterministic because of it).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..constants import MemcpyKind
from .kinds import Engine
from .opdefs import TensorSpec
from .profiles import DEFAULT_HOST, HOST_COPY_BYTES_PER_NS, DeviceProfile, HostProfile

if TYPE_CHECKING:
    from .om import Gear, OmModel

# Plain ints of the memcpy kinds: copy_cost runs on every copy (the hot path of
# memcpy_async), where an int comparison is cheaper than an enum attribute lookup.
_H2D = int(MemcpyKind.HOST_TO_DEVICE)
_D2H = int(MemcpyKind.DEVICE_TO_HOST)
_D2D = int(MemcpyKind.DEVICE_TO_DEVICE)
# The engines of copies, read once: an enum member read through its class costs ~100 ns in
# Python 3.11 (``EnumType.__getattr__`` slows every class attribute lookup), a global ~7.
_ENG_H2D, _ENG_D2H, _ENG_D2D, _ENG_HOST = (Engine.COPY_H2D, Engine.COPY_D2H, Engine.COPY_D2D,
                                           Engine.HOST)

#: The ``flops_per_ns`` key a dtype runs at: uint8 runs on the int8 path; any dtype not
#: listed (int32, bool, float64 ...) at the int32 rate.
RATE_KEY = {"float16": "float16", "float32": "float32", "int8": "int8", "uint8": "int8"}
#: The rate (FLOP per ns) of a dtype whose key the profile does not list.
FALLBACK_RATE = 1000.0

#: The DaVinci cube unit multiplies 16x16 by 16x16 fp16 fractals: outputs are produced in
#: 16x16 tiles (rows x output channels), so a layer's output is padded up to whole tiles.
CUBE_TILE = 16


# ------------------------------------------------------------------ DMA: copies and memset

def copy_cost(profile: DeviceProfile, kind: int, count: int, pinned: bool) -> tuple[Engine, int]:
    """The engine a copy of ``count`` bytes of memcpy ``kind`` runs on, and its duration.

    A DMA transfer costs ``copy_setup_ns`` plus the bytes at the link's bandwidth:
    ``h2d_pinned_bw`` / ``d2h_pinned_bw`` over PCIe (times ``pageable_factor`` when either
    side is pageable host memory, which the driver stages through a bounce buffer),
    half of ``device_mem_bw`` device to device (the copy reads and writes the same
    memory), and ``HOST_COPY_BYTES_PER_NS`` (one host core's memcpy) for any other kind,
    which runs on the host. Numbers: ``profiles.py`` (datasheet link and memory rates; the
    30% pageable loss is the optimisation-ladder article's figure). The caller resolves
    ``ACL_MEMCPY_DEFAULT`` to a direction first.
    """
    if kind == _H2D:
        bw, eng = profile.h2d_pinned_bw, _ENG_H2D
    elif kind == _D2H:
        bw, eng = profile.d2h_pinned_bw, _ENG_D2H
    elif kind == _D2D:
        bw, eng = profile.device_mem_bw / 2, _ENG_D2D
    else:
        bw, eng = HOST_COPY_BYTES_PER_NS, _ENG_HOST
    if not pinned and kind in (_H2D, _D2H):
        bw *= profile.pageable_factor
    return eng, profile.copy_setup_ns + int(count / bw)


#: The engine a device memset runs on (the device-to-device DMA engines).
MEMSET_ENGINE = Engine.COPY_D2D


def memset_cost(profile: DeviceProfile, count: int) -> int:
    """Duration of a device memset of ``count`` bytes on ``MEMSET_ENGINE``.

    ``copy_setup_ns`` plus the bytes at the full ``device_mem_bw`` (a memset only writes).
    Host memory is set at once by the caller and costs no task.
    """
    return profile.copy_setup_ns + int(count / profile.device_mem_bw)


def sync_task_delay(profile: DeviceProfile) -> int:
    """From a synchronous call (memcpy, memset, model execute) to its task's earliest
    start: half a DMA set-up (``copy_setup_ns // 2``), less than a stream's
    ``launch_latency_ns`` since no stream queue is involved."""
    return profile.copy_setup_ns // 2


# ------------------------------------------------------------------ AI cores: kernels

def occupancy(profile: DeviceProfile, out_specs: Sequence[TensorSpec]) -> int:
    """AI cores a kernel keeps busy: its largest output in cube tiles, one core per block.

    The output is read as rows x channels (a 4-D tensor as NCHW: N*H*W rows of C channels;
    any other as the product of the leading dims by the last one), padded to whole 16x16
    cube tiles, and split into blocks of ``profile.core_block_outputs`` elements (half an
    AI core's L0C buffer of fp32 accumulators: see that field for the buffer sizes); the
    kernel uses ``min(blocks, cores)`` cores, at least one. Example (Ascend310P3, block
    32768): ResNet-50's first conv (64x112x112) fills all 8 cores, a last-stage 3x3 conv
    (512x7x7) fills 1.

    Differs from real ACL: the TBE/Ascend C tiling picks its own multi-core split per
    operator; this one rule stands in for it.
    """
    best = 0
    for spec in out_specs:
        shape = tuple(int(d) for d in spec.shape)
        if len(shape) == 4:
            cols, rows = shape[1], shape[0] * shape[2] * shape[3]
        elif shape:
            cols = shape[-1]
            rows = math.prod(shape[:-1])
        else:
            cols = rows = 1
        tiles = -(-max(rows, 1) // CUBE_TILE) * -(-max(cols, 1) // CUBE_TILE)
        best = max(best, tiles * CUBE_TILE * CUBE_TILE)
    blocks = -(-best // max(profile.core_block_outputs, 1))
    return max(1, min(profile.aicore_count, blocks))


def kernel_ns(profile: DeviceProfile, flops: int, nbytes: int, dtype: str,
              cores: int | None = None) -> int:
    """Kernel time: ``kernel_overhead_ns`` + the longer of compute and memory time (roofline).

    Compute time is ``flops`` at the chip's ``flops_per_ns`` for ``dtype`` (``RATE_KEY``),
    memory time ``nbytes`` at ``device_mem_bw``. ``cores`` (default: all) is the kernel's
    occupancy: it gets that share of the chip's FLOP rate and of its memory bandwidth (each
    AI core reaches device memory through its own bus interface, so a few busy cores cannot
    draw the whole chip's bandwidth). The flops and bytes come from the operator's own cost
    function (``opdefs.OpDef.cost``); the rates from the datasheet rows of ``profiles.py``.
    """
    rate = profile.flops_per_ns.get(RATE_KEY.get(dtype, "int32"), FALLBACK_RATE)
    bw = profile.device_mem_bw
    n = profile.aicore_count
    if cores is not None and 0 < cores < n:
        rate = rate * cores / n
        bw = bw * cores / n
    return profile.kernel_overhead_ns + int(max(flops / rate, nbytes / bw))


def op_cost(profile: DeviceProfile, flops: int, nbytes: int, in_specs: Sequence[TensorSpec],
            out_specs: Sequence[TensorSpec]) -> tuple[int, int]:
    """A single operator's ``(ns, cores)``: ``kernel_ns`` at its first input's dtype
    (float32 when it has none) on the cores its outputs fill (``occupancy``)."""
    cores = occupancy(profile, out_specs)
    dtype = in_specs[0].dtype if in_specs else "float32"
    return kernel_ns(profile, flops, nbytes, dtype, cores), cores


def aclnn_cost(profile: DeviceProfile, flops: int, nbytes: int, dtype: str) -> tuple[int, int]:
    """An aclnn operator's ``(ns, cores)``: ``kernel_ns`` at ``dtype`` on the whole chip.

    The two-phase aclnn kernels are not tiled by output size here: every one books all
    ``aicore_count`` cores for its duration.
    """
    return kernel_ns(profile, flops, nbytes, dtype), profile.aicore_count


@dataclass(frozen=True)
class LayerCost:
    """One model layer's cost: ``ns`` on ``cores`` AI cores, moving ``nbytes``.

    Args:
        name: the node's name.
        op: its operator type.
        cores: the cores its outputs fill (``occupancy``).
        ns: its ``kernel_ns`` on those cores.
        nbytes: the bytes it moves through device memory.
    """

    name: str
    op: str
    cores: int
    ns: int
    nbytes: int


def layer_costs(profile: DeviceProfile, om: OmModel, gear: Gear = None) -> list[LayerCost]:
    """Each layer of ``om`` at ``gear`` (the largest when None): its kernel on the cores its
    own outputs fill, at the rate of its first input's dtype (float32 when it has none).
    The flops and bytes are ``om.cost(gear)``, from the operators' cost functions."""
    specs = om.tensor_specs(gear)
    out = []
    for node, (name, op, flops, nb) in zip(om.nodes, om.cost(gear), strict=True):
        cores = occupancy(profile, [specs[t] for t in node.outputs])
        dtype = specs[node.inputs[0]].dtype if node.inputs else "float32"
        out.append(LayerCost(name, op, cores, kernel_ns(profile, flops, nb, dtype, cores), nb))
    return out


@dataclass(frozen=True)
class ExecutionCost:
    """What one execution costs on the device profile.

    Args:
        duration_ns: the sum over layers of ``kernel_ns`` on the cores each layer fills.
        core_ns: the sum over layers of layer time x cores: the AI-core time really used
            (what an AI-core utilisation counts).
        units: the cores the model task books for its whole duration: ``core_ns /
            duration_ns`` rounded up (the execution's average occupancy).
        nbytes: bytes the layers move through device memory.
    """

    duration_ns: int
    core_ns: int
    units: int
    nbytes: int


def execution_cost(profile: DeviceProfile, om: OmModel, gear: Gear = None) -> ExecutionCost:
    """The virtual cost of executing ``om`` once at ``gear`` (the largest when None):
    the sum of its ``layer_costs``, booked at their average occupancy.

    Differs from real ACL: the device's task scheduler places each layer's blocks on free
    cores as it goes; the emulator books the average occupancy for the whole execution, so
    two executions overlap when their averages fit the chip together.
    """
    duration = core = nbytes = 0
    for layer in layer_costs(profile, om, gear):
        duration += layer.ns
        core += layer.ns * layer.cores
        nbytes += layer.nbytes
    units = min(profile.aicore_count, max(1, -(-core // duration))) if duration else 1
    return ExecutionCost(duration, core, units, nbytes)


# ------------------------------------------------------------------ DVPP: JPEG, VPC, video

def dvpp_ns(profile: DeviceProfile, pixels: int) -> int:
    """Duration of one DVPP task (JPEGD, JPEGE, VPC, VDEC or VENC frame) on the device's
    one DVPP engine: ``dvpp_setup_ns`` plus ``pixels`` at ``dvpp_pixels_per_ns`` (the
    JPEGD figure of the CANN media docs' performance table, see ``profiles.py``; the
    emulator charges every DVPP unit that one rate)."""
    return profile.dvpp_setup_ns + int(pixels / profile.dvpp_pixels_per_ns)


def vpc_ns(profile: DeviceProfile, jobs: Iterable[tuple[int, int]]) -> int:
    """Duration of one VPC task of ``(input pixels, output pixels)`` jobs (a resize is one
    job, a batch crop-and-paste several): each job is charged its larger side, the task
    ``dvpp_ns`` of their sum."""
    return dvpp_ns(profile, sum(max(a, b) for a, b in jobs))


# ------------------------------------------------------------------ host side

def api_call_ns(profile: DeviceProfile, launch: bool) -> int:
    """Host time of one API call: ``launch_call_ns`` for one that submits a task to a
    stream, ``api_call_ns`` for any other."""
    return profile.launch_call_ns if launch else profile.api_call_ns


def callback_ns(profile: DeviceProfile) -> int:
    """Time a host-callback task occupies its stream, and from its start to its report
    reaching the subscribed thread: ``callback_task_ns``."""
    return profile.callback_task_ns


def event_task_ns(profile: DeviceProfile) -> int:
    """Time an event record, wait or reset task occupies its stream: ``event_task_ns``."""
    return profile.event_task_ns


def non_negative(value: float, what: str) -> float:
    """``value`` as a float, if it is a real number >= 0 (an amount of host work).

    Raises:
        TypeError: ``value`` is not a number (a bool is not one).
        ValueError: ``value`` is negative or NaN.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a number, got {value!r}")
    if not value >= 0:  # also rejects NaN
        raise ValueError(f"{what} must be >= 0, got {value!r}")
    return float(value)


def jpeg_decode_ns(width: int, height: int, host: HostProfile = DEFAULT_HOST) -> int:
    """CPU time to decode a ``width`` x ``height`` baseline JPEG on one core, at
    ``host.jpeg_decode_pixels_per_ns`` (libjpeg-turbo's published rate, see HostProfile).

    >>> jpeg_decode_ns(1280, 720)  # 921,600 pixels at 150 Mpixel/s
    6144000

    Raises:
        TypeError: a size is not a number.
        ValueError: a size is negative.
    """
    pixels = non_negative(width, "width") * non_negative(height, "height")
    return round(pixels / host.jpeg_decode_pixels_per_ns)


def preprocess_ns(nbytes: int, host: HostProfile = DEFAULT_HOST) -> int:
    """CPU time of preprocessing passes that read and write ``nbytes`` in total, at
    ``host.stream_bytes_per_ns``.

    Count every pass: a resize reads its source and writes its result, a cast reads and
    writes, and so on (``acl_lab.ladder.preprocess_bytes`` counts the usual ResNet-50 ones).

    >>> preprocess_ns(8_000_000)  # 8 MB at 8 GB/s
    1000000

    Raises:
        TypeError: ``nbytes`` is not a number.
        ValueError: ``nbytes`` is negative.
    """
    return round(non_negative(nbytes, "nbytes") / host.stream_bytes_per_ns)


def first_touch_ns(nbytes: int, host: HostProfile = DEFAULT_HOST) -> int:
    """Page-fault cost of writing ``nbytes`` of freshly allocated pageable memory: whole
    pages of ``host.page_bytes`` at ``host.page_fault_ns`` each.

    A buffer the program allocates anew (a new NumPy array, ``bytes`` object, decoder
    output) is backed by pages the kernel maps and zeroes on first touch; a buffer reused
    from the previous image is not.

    >>> first_touch_ns(602_112)  # one 224x224x3 float32 image: 147 pages
    110250

    Raises:
        TypeError: ``nbytes`` is not a number.
        ValueError: ``nbytes`` is negative.
    """
    pages = -(-int(non_negative(nbytes, "nbytes")) // host.page_bytes)
    return pages * host.page_fault_ns


def preprocess_ns_of(width: int, height: int, size: int, fresh: bool,
                     host: HostProfile = DEFAULT_HOST) -> int:
    """What ``hostwork.preprocess_image`` charges for a ``width`` x ``height`` JPEG made
    into a ``3 x size x size`` float32 input: decoding, the passes over memory (resize,
    cast, subtract, divide, CHW copy: 30 bytes read and written per output element besides
    the RGB picture) and, when ``fresh``, the first touch of every new buffer (the RGB
    picture and 17 bytes per output element)."""
    n = size * size * 3
    rgb = width * height * 3
    ns = jpeg_decode_ns(width, height, host) + preprocess_ns(rgb + 30 * n, host)
    if fresh:
        ns += first_touch_ns(rgb + 17 * n, host)
    return ns


__all__ = ["CUBE_TILE", "FALLBACK_RATE", "MEMSET_ENGINE", "RATE_KEY", "ExecutionCost",
           "LayerCost", "aclnn_cost", "api_call_ns", "callback_ns", "copy_cost",
           "dvpp_ns", "event_task_ns", "execution_cost", "first_touch_ns", "jpeg_decode_ns",
           "kernel_ns", "layer_costs", "memset_cost", "non_negative", "occupancy", "op_cost",
           "preprocess_ns", "preprocess_ns_of", "sync_task_delay", "vpc_ns"]
