"""Device profiles: the emulated hardware as data.

Each profile is one row of approximate public figures (product datasheets and the CANN docs'
limit tables), documented field by field. They drive capacity checks and the virtual-time cost
model (its formulas are in ``costs.py``); they are not measurements of real hardware, and the
ladder benchmark in ``benchmarks/`` shows how close the resulting ratios come to published
end-to-end figures. The host CPU's rates (``HostProfile``) are here too. This module holds
data only: no behaviour, no imports from the rest of acl_lab.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

GiB = 1 << 30
MiB = 1 << 20


@dataclass(frozen=True)
class DeviceProfile:
    """One emulated Ascend SoC.

    Bandwidths are bytes per nanosecond (1 B/ns = 1 GB/s); times are nanoseconds.
    """

    name: str
    soc_name: str
    #: device memory capacity and kind ("ddr" on 310-class cards, "hbm" on 910-class)
    memory_bytes: int
    memory_kind: str
    #: memory the driver keeps for itself; get_mem_info's total excludes it
    reserved_bytes: int
    #: on-device memory bandwidth, used by device-to-device copies and memset
    device_mem_bw: float
    #: host<->device bandwidth over PCIe with page-locked (pinned) host memory
    h2d_pinned_bw: float
    d2h_pinned_bw: float
    #: pageable host memory is staged through a bounce buffer: slower, see pageable_factor
    pageable_factor: float
    #: DMA engines per direction (H2D, D2H, D2D); copies in one direction share them
    copy_engines: int
    #: AI cores and their throughput in FLOP (or OP) per ns for the whole chip, per dtype
    aicore_count: int
    flops_per_ns: dict[str, float] = field(default_factory=dict)
    #: Occupancy rule (``costs.occupancy``): the smallest share of a kernel's output one AI
    #: core takes, in output elements. A core accumulates its block of the output in its L0C
    #: buffer as fp32 (4 bytes) and ping-pongs two halves of it (one is computed while the
    #: other drains), so a block is L0C / 4 / 2 elements: 32768 = 128 cube fractals of 16x16
    #: for the 256 KiB L0C of the Ascend 310/310P AI core (DaVinci cube: 16x16x16 fp16 MACs;
    #: L0A/L0B 64 KiB, L0C 256 KiB, UB 256 KiB), 16384 for the 128 KiB L0C of the 910B
    #: (dav-c220). A kernel with B blocks keeps min(B, aicore_count) cores busy; at batch 1
    #: the late layers of a CNN fill fewer cores than the chip has, so two streams can run
    #: two inferences side by side. This is the emulator's simplification of the TBE tiling
    #: (which chooses its own multi-core split), not a documented CANN rule.
    core_block_outputs: int = 32_768
    #: host cost of an ordinary API call, and of one that submits a task to a stream
    api_call_ns: int = 1_000
    launch_call_ns: int = 2_000
    #: from submission to the earliest time the device can start the task
    launch_latency_ns: int = 4_000
    #: fixed set-up cost of one DMA transfer
    copy_setup_ns: int = 2_000
    #: from device completion to the blocked host thread running again
    sync_wake_ns: int = 5_000
    #: fixed cost of starting one kernel (single op or model layer) on the AI cores
    kernel_overhead_ns: int = 3_000
    #: time an event record/wait/reset task occupies its stream
    event_task_ns: int = 500
    #: time a host-callback task takes to hand its report to the subscribed thread
    callback_task_ns: int = 2_000
    #: host cost of one operation on a Python threading or queue primitive under the host
    #: scheduler (``hostsched``): an uncontended lock acquire or release in CPython takes
    #: 50-100 ns, a ``queue.Queue`` put or get about 1 µs (its lock, deque and condition);
    #: 200 ns is charged per operation, so that a thread spinning on ``Queue.empty()`` moves
    #: through virtual time and lets the others run
    py_sync_ns: int = 200
    #: from ``Thread.start`` to the new thread's first line: ``pthread_create`` and the new
    #: thread taking the GIL, tens of microseconds on Linux (CPython's own start waits for
    #: the thread to signal that it runs, so the starter continues about as late)
    thread_start_ns: int = 30_000
    #: how much device task durations vary from run to run, as a share either way: PCIe DMA
    #: and kernel times on a loaded system move by a few percent (clock boosts, contention
    #: on the bus); a perturbed schedule (seed != 0, ``hostsched``) draws each task's
    #: duration within it. An estimate, not a measured figure of the SoC.
    jitter: float = 0.05
    #: limits from the CANN docs (C-doc 06/07): streams and events per device
    max_streams: int = 1024
    max_events: int = 1023
    #: page-locked host memory the emulator lets a program allocate in total
    host_pinned_limit: int = 64 * GiB
    #: DVPP JPEG decoder and VPC throughput (pixels per ns) and fixed cost per call
    dvpp_pixels_per_ns: float = 0.5
    dvpp_setup_ns: int = 100_000
    supports_huge1g: bool = False


# Ascend 310 (Atlas 300I inference card, one chip): 8 GiB LPDDR4X; 2 DaVinci AI cores,
# about 8 TFLOPS fp16 and 16 TOPS int8 (Ascend 310 datasheet figures); each chip sits on a
# PCIe 3.0 x4 link (about 3.5 GB/s usable). Stream/event limits: "Atlas inference" rows of
# C-doc 06/07 (1024 streams, 1023 events).
ASCEND310 = DeviceProfile(
    name="Ascend310",
    soc_name="Ascend310",
    memory_bytes=8 * GiB,
    memory_kind="ddr",
    reserved_bytes=512 * MiB,
    device_mem_bw=40.0,
    h2d_pinned_bw=3.2,
    d2h_pinned_bw=3.2,
    pageable_factor=1 / 1.3,
    copy_engines=1,
    aicore_count=2,
    flops_per_ns={"float16": 8_000.0, "float32": 2_000.0, "int8": 16_000.0, "int32": 1_000.0},
    launch_latency_ns=6_000,
    max_streams=1024,
    max_events=1023,
    dvpp_pixels_per_ns=0.35,
)

# Ascend 310P3 (Atlas 300I Pro): 24 GiB LPDDR4X at about 204.8 GB/s; 8 AI cores, about
# 70 TFLOPS fp16 and 140 TOPS int8 (Atlas 300I Pro datasheet); PCIe 4.0 x16 host link, of
# which a DMA engine sustains roughly 20 GB/s with pinned memory. Pageable copies lose about
# 30% through staging, the figure the optimisation-ladder article reports for pinned memory.
# AI core buffers (L0C 256 KiB) give the default core_block_outputs of 32768 (see the field).
# DVPP: the JPEGD performance table of the CANN media docs gives one channel of 1080p JPEG at
# 256 FPS on Atlas inference (310P) cards, 1920 * 1080 * 256 = 0.53 pixel/ns; the emulator has
# one DVPP rate and one DVPP engine, so VPC is charged at that rate too (its own table says
# 1080p -> 1080p at 360 FPS per channel, 0.75 pixel/ns: the emulated VPC is slower) and
# JPEGD and VPC tasks never overlap (on the chip they are separate units).
ASCEND310P3 = DeviceProfile(
    name="Ascend310P3",
    soc_name="Ascend310P3",
    memory_bytes=24 * GiB,
    memory_kind="ddr",
    reserved_bytes=1 * GiB,
    device_mem_bw=204.8,
    h2d_pinned_bw=20.0,
    d2h_pinned_bw=20.0,
    pageable_factor=1 / 1.3,
    copy_engines=1,
    aicore_count=8,
    flops_per_ns={"float16": 70_000.0, "float32": 17_500.0, "int8": 140_000.0,
                  "int32": 8_750.0},
    launch_latency_ns=4_000,
    max_streams=1024,
    max_events=1023,
    dvpp_pixels_per_ns=0.53,
)

# Ascend 910B1 (Atlas A2 training/inference): 64 GiB HBM2e at about 1.6 TB/s; 24 AI cores,
# a few hundred TFLOPS fp16 (about 378 is commonly quoted; approximate); PCIe 5.0 x16 host link
# (about 50 GB/s). Limits: A2 rows of C-doc 06/07 (1984 streams, 65536 events); supports the
# 1 GiB huge-page policies (C-doc 25-02).
ASCEND910B1 = DeviceProfile(
    name="Ascend910B1",
    soc_name="Ascend910B1",
    memory_bytes=64 * GiB,
    memory_kind="hbm",
    reserved_bytes=2 * GiB,
    device_mem_bw=1600.0,
    h2d_pinned_bw=48.0,
    d2h_pinned_bw=48.0,
    pageable_factor=1 / 1.3,
    copy_engines=2,
    aicore_count=24,
    flops_per_ns={"float16": 378_000.0, "float32": 94_500.0, "int8": 756_000.0,
                  "int32": 47_000.0},
    launch_latency_ns=3_000,
    max_streams=1984,
    max_events=65536,
    dvpp_pixels_per_ns=0.8,
    core_block_outputs=16_384,  # L0C 128 KiB on dav-c220 (see the field)
    supports_huge1g=True,
)

PROFILES: dict[str, DeviceProfile] = {p.name: p for p in (ASCEND310, ASCEND310P3, ASCEND910B1)}

#: Bytes per ns of a host-to-host copy (``costs.copy_cost``): one core's memcpy, about the
#: 10-12 GB/s a single x86 core reaches in a STREAM copy (see ``HostProfile``), taken at 10.
HOST_COPY_BYTES_PER_NS = 10.0


@dataclass(frozen=True)
class HostProfile:
    """The host CPU as data: rates of the work an inference program does on one core
    (``costs.jpeg_decode_ns``, ``costs.preprocess_ns``, ``costs.first_touch_ns``).

    Args:
        name: a label for the profile.
        jpeg_decode_pixels_per_ns: baseline (Huffman, 4:2:0) JPEG decoding with
            libjpeg-turbo, the decoder behind Pillow and OpenCV, on one core. libjpeg-turbo's
            published benchmarks put decompression of photographic images at the order of
            100-200 Mpixel/s on one x86 core; 150 Mpixel/s (0.15 pixel/ns) is the middle.
        stream_bytes_per_ns: bytes per ns one core moves through simple vectorised passes
            over memory (an OpenCV resize, NumPy casts, normalisation, a transpose copy),
            counting every pass's reads and writes. About 8 GB/s: a little below the
            10-12 GB/s a single core reaches in a STREAM copy, since each pass also computes.
        page_fault_ns: the first touch of a fresh anonymous 4 KiB page: a minor page fault
            (trap, page allocation, page-table update: about 0.5 µs of kernel time) plus
            clearing the page (4 KiB at about 16 GB/s: 0.25 µs).
        page_bytes: the page size of those faults (4 KiB, no transparent huge pages).
    """

    name: str = "x86 server core"
    jpeg_decode_pixels_per_ns: float = 0.15
    stream_bytes_per_ns: float = 8.0
    page_fault_ns: int = 750
    page_bytes: int = 4096


#: The host profile the host-work helpers use by default.
DEFAULT_HOST = HostProfile()
DEFAULT_PROFILE = "Ascend310P3"


def get_profile(name: str | DeviceProfile | None = None, **overrides: object) -> DeviceProfile:
    """Return a profile by name (default ``Ascend310P3``), with fields overridden.

    Raises:
        ValueError: the name is not a known profile.
    """
    if isinstance(name, DeviceProfile):
        base = name
    else:
        key = name or DEFAULT_PROFILE
        if key not in PROFILES:
            known = ", ".join(sorted(PROFILES))
            raise ValueError(f"unknown device profile {key!r}; known profiles: {known}")
        base = PROFILES[key]
    return replace(base, **overrides) if overrides else base  # type: ignore[arg-type]
