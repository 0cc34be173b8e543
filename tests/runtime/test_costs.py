"""The cost model (acl_lab.runtime.costs): each formula on a profile with round numbers, the
shape of each cost (monotone in size, pinned vs pageable, engine choice, occupancy, gear), and
that the session charges a task what the cost model says.

The round-number profiles make each expected value a line of arithmetic: a changed formula
(a lost factor, another rounding, a swapped engine) fails here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.constants import MemcpyKind
from acl_lab.runtime import costs
from acl_lab.runtime.hooks import TaskLog
from acl_lab.runtime.kinds import Engine, TaskKind
from acl_lab.runtime.opdefs import TensorSpec, get_op
from acl_lab.runtime.profiles import (
    HOST_COPY_BYTES_PER_NS,
    PROFILES,
    DeviceProfile,
    HostProfile,
    get_profile,
)
from acl_lab.runtime.session import Session

H2H, H2D, D2H, D2D = (int(MemcpyKind.HOST_TO_HOST), int(MemcpyKind.HOST_TO_DEVICE),
                      int(MemcpyKind.DEVICE_TO_HOST), int(MemcpyKind.DEVICE_TO_DEVICE))

#: Round numbers: every cost below is a line of arithmetic on them.
ROUND = get_profile("Ascend310P3", h2d_pinned_bw=2.0, d2h_pinned_bw=4.0, device_mem_bw=8.0,
                    pageable_factor=0.5, copy_setup_ns=100, aicore_count=4,
                    flops_per_ns={"float16": 100.0, "float32": 50.0, "int8": 200.0,
                                  "int32": 25.0},
                    kernel_overhead_ns=7, core_block_outputs=256, dvpp_setup_ns=1000,
                    dvpp_pixels_per_ns=0.5, api_call_ns=11, launch_call_ns=22,
                    callback_task_ns=33, event_task_ns=44)
REAL = [PROFILES[name] for name in sorted(PROFILES)]
SIZES = [0, 1, 63, 64, 4096, 10**6, 3 * 10**7]


def spec(*shape: int, dtype: str = "float32") -> TensorSpec:
    """A tensor spec of ``shape``."""
    return TensorSpec(dtype, tuple(shape))


# ============================================================================ copies, memset
def test_copy_cost_by_hand() -> None:
    """setup + bytes / bandwidth, per direction, on its own engine; pageable host memory
    divides the PCIe bandwidth by pageable_factor; device to device runs at half the memory
    bandwidth; host to host on the host at one core's memcpy rate."""
    p = ROUND
    assert costs.copy_cost(p, H2D, 1000, True) == (Engine.COPY_H2D, 100 + 500)
    assert costs.copy_cost(p, H2D, 1000, False) == (Engine.COPY_H2D, 100 + 1000)
    assert costs.copy_cost(p, D2H, 1000, True) == (Engine.COPY_D2H, 100 + 250)
    assert costs.copy_cost(p, D2H, 1000, False) == (Engine.COPY_D2H, 100 + 500)
    assert costs.copy_cost(p, D2D, 1000, True) == (Engine.COPY_D2D, 100 + 250)
    host = 100 + int(1000 / HOST_COPY_BYTES_PER_NS)
    assert costs.copy_cost(p, H2H, 1000, True) == (Engine.HOST, host)
    # the byte time is truncated to whole ns: 3 bytes at 2 B/ns are 1 ns
    assert costs.copy_cost(p, H2D, 3, True) == (Engine.COPY_H2D, 101)


def test_pageable_factor_applies_only_over_pcie() -> None:
    """A pageable side slows H2D and D2H by 1 / pageable_factor, and nothing else."""
    for p in [*REAL, ROUND]:
        for n in SIZES[1:]:
            for kind in (H2D, D2H):
                _, pinned = costs.copy_cost(p, kind, n, True)
                _, pageable = costs.copy_cost(p, kind, n, False)
                assert pageable >= pinned
                bw = p.h2d_pinned_bw if kind == H2D else p.d2h_pinned_bw
                assert pageable - p.copy_setup_ns == int(n / (bw * p.pageable_factor))
            for kind in (D2D, H2H):
                assert costs.copy_cost(p, kind, n, False) == costs.copy_cost(p, kind, n, True)


@pytest.mark.parametrize("kind", [H2H, H2D, D2H, D2D])
def test_copy_cost_is_monotone_in_size_and_starts_at_the_setup(kind: int) -> None:
    """More bytes never cost less; zero bytes cost the DMA set-up alone."""
    for p in REAL:
        for pinned in (True, False):
            ns = [costs.copy_cost(p, kind, n, pinned)[1] for n in SIZES]
            assert ns == sorted(ns)
            assert ns[0] == p.copy_setup_ns
            assert ns[-1] > ns[0]


def test_copy_engine_follows_the_kind() -> None:
    """Each direction has its engine; any other kind (host to host, or one the caller did
    not resolve) runs on the host."""
    want = {H2D: Engine.COPY_H2D, D2H: Engine.COPY_D2H, D2D: Engine.COPY_D2D, H2H: Engine.HOST}
    for kind in MemcpyKind:
        eng, _ = costs.copy_cost(ROUND, int(kind), 64, True)
        assert eng == want.get(int(kind), Engine.HOST), kind


def test_memset_cost_by_hand() -> None:
    """setup + bytes at the whole memory bandwidth (a memset only writes), on the D2D
    engine: cheaper than a device-to-device copy of the same size, which reads too."""
    assert costs.memset_cost(ROUND, 1000) == 100 + 125
    assert costs.memset_cost(ROUND, 0) == 100
    assert costs.MEMSET_ENGINE == Engine.COPY_D2D
    for p in REAL:
        ns = [costs.memset_cost(p, n) for n in SIZES]
        assert ns == sorted(ns)
        big = 10**8
        assert costs.memset_cost(p, big) < costs.copy_cost(p, D2D, big, True)[1]


def test_sync_task_delay_is_half_a_dma_setup() -> None:
    """A synchronous task can start half a set-up after its call (rounded down)."""
    assert costs.sync_task_delay(ROUND) == 50
    assert costs.sync_task_delay(get_profile(ROUND, copy_setup_ns=101)) == 50


# ============================================================================ AI cores
def test_kernel_ns_is_a_roofline_by_hand() -> None:
    """overhead + max(flops / rate, bytes / bandwidth), at the dtype's rate."""
    p = ROUND
    assert costs.kernel_ns(p, 1000, 0, "float32") == 7 + 20
    assert costs.kernel_ns(p, 1000, 0, "float16") == 7 + 10
    assert costs.kernel_ns(p, 0, 1000, "float32") == 7 + 125  # memory-bound
    assert costs.kernel_ns(p, 1000, 80, "float32") == 7 + 20  # compute-bound: 20 > 10
    assert costs.kernel_ns(p, 0, 0, "float32") == 7


def test_kernel_rate_follows_the_dtype() -> None:
    """uint8 runs on the int8 path, other dtypes at the int32 rate, and a rate the profile
    does not list at FALLBACK_RATE."""
    p = ROUND
    assert costs.kernel_ns(p, 1000, 0, "uint8") == costs.kernel_ns(p, 1000, 0, "int8") == 12
    assert costs.kernel_ns(p, 1000, 0, "bool") == costs.kernel_ns(p, 1000, 0, "int32") == 47
    assert costs.kernel_ns(p, 1000, 0, "float64") == 47
    bare = get_profile(p, flops_per_ns={})
    assert costs.kernel_ns(bare, 10**6, 0, "float32") == 7 + int(10**6 / costs.FALLBACK_RATE)


def test_kernel_on_fewer_cores_gets_their_share_of_rate_and_bandwidth() -> None:
    """On k of n cores both the FLOP rate and the bandwidth are k/n of the chip's; a core
    count of 0 or at least n means the whole chip."""
    p = ROUND  # 4 cores
    assert costs.kernel_ns(p, 1000, 0, "float32", 1) == 7 + 80
    assert costs.kernel_ns(p, 1000, 0, "float32", 2) == 7 + 40
    assert costs.kernel_ns(p, 0, 1000, "float32", 2) == 7 + 250
    whole = costs.kernel_ns(p, 1000, 1000, "float32")
    for cores in (None, 0, 4, 9):
        assert costs.kernel_ns(p, 1000, 1000, "float32", cores) == whole
    for q in REAL:
        ns = [costs.kernel_ns(q, 10**9, 10**7, "float16", k)
              for k in range(1, q.aicore_count + 1)]
        assert ns == sorted(ns, reverse=True)


def test_occupancy_by_hand() -> None:
    """Largest output in 16x16 tiles, blocks of core_block_outputs elements, capped by the
    chip: with blocks of 256 (one tile), an output of 17 channels is 2 tiles, 2 cores."""
    p = ROUND
    assert costs.occupancy(p, [spec(1, 16, 1, 1)]) == 1
    assert costs.occupancy(p, [spec(1, 17, 1, 1)]) == 2
    assert costs.occupancy(p, [spec(1, 16, 4, 4)]) == 1  # 16 rows x 16 channels: one tile
    assert costs.occupancy(p, [spec(1, 16, 4, 5)]) == 2  # 20 rows: two tiles
    assert costs.occupancy(p, [spec(33, 16)]) == 3  # 2-D: 33 rows -> 3 tiles
    assert costs.occupancy(p, [spec()]) == 1
    assert costs.occupancy(p, [spec(1, 1024, 16, 16)]) == 4  # capped at the chip's 4 cores
    assert costs.occupancy(p, [spec(16, 16), spec(1, 48, 1, 1)]) == 3  # the largest output
    assert costs.occupancy(p, []) == 1


def test_op_cost_runs_at_the_first_inputs_dtype_on_the_cores_its_outputs_fill() -> None:
    """A single op: kernel_ns at in_specs[0]'s dtype (float32 with no inputs) on occupancy
    cores."""
    p = ROUND
    outs = [spec(1, 17, 1, 1)]
    ns, cores = costs.op_cost(p, 1000, 0, [spec(4, dtype="float16"), spec(4)], outs)
    assert cores == 2
    assert ns == costs.kernel_ns(p, 1000, 0, "float16", 2) == 7 + 20
    ns, cores = costs.op_cost(p, 1000, 0, [], outs)
    assert ns == costs.kernel_ns(p, 1000, 0, "float32", 2) == 7 + 40


def test_aclnn_cost_books_the_whole_chip() -> None:
    """An aclnn kernel runs at the dtype's full rate and books every AI core."""
    for p in [*REAL, ROUND]:
        ns, cores = costs.aclnn_cost(p, 10**9, 10**6, "float16")
        assert cores == p.aicore_count
        assert ns == costs.kernel_ns(p, 10**9, 10**6, "float16")


# ============================================================================ model execution
def test_execution_cost_sums_its_layers() -> None:
    """duration is the layers' sum, core time the sum of layer time x cores, units the
    average occupancy rounded up, bytes the layers' bytes; each layer is its node's kernel."""
    om = zoo.build("lenet5")
    for p in [*REAL, ROUND]:
        layers = costs.layer_costs(p, om)
        assert [(c.name, c.op) for c in layers] == [(r[0], r[1]) for r in om.cost()]
        specs = om.tensor_specs()
        for c, node, (_, _, flops, nb) in zip(layers, om.nodes, om.cost(), strict=True):
            assert c.cores == costs.occupancy(p, [specs[t] for t in node.outputs])
            assert c.ns == costs.kernel_ns(p, flops, nb, specs[node.inputs[0]].dtype, c.cores)
            assert c.nbytes == nb
        ec = costs.execution_cost(p, om)
        assert ec.duration_ns == sum(c.ns for c in layers)
        assert ec.core_ns == sum(c.ns * c.cores for c in layers)
        assert ec.nbytes == sum(c.nbytes for c in layers)
        assert ec.units == min(p.aicore_count, -(-ec.core_ns // ec.duration_ns))
        assert 1 <= ec.units <= p.aicore_count


def test_execution_cost_grows_with_the_gear() -> None:
    """A dynamic-batch model costs more at a larger batch; no gear means the largest."""
    om = zoo.build("mlp_dynamic")
    gears = [g for g in om.gears]
    assert len(gears) > 1
    for p in REAL:
        ns = [costs.execution_cost(p, om, g).duration_ns for g in gears]
        nbytes = [costs.execution_cost(p, om, g).nbytes for g in gears]
        assert ns == sorted(ns) and ns[-1] > ns[0]
        assert nbytes == sorted(nbytes) and nbytes[-1] > nbytes[0]
        assert costs.execution_cost(p, om) == costs.execution_cost(p, om, max(gears))


def test_execution_cost_follows_the_profile() -> None:
    """The same network runs faster on a faster chip (rates are the profile's)."""
    om = zoo.build("tiny_resnet")
    by = {p.name: costs.execution_cost(p, om).duration_ns for p in REAL}
    assert by["Ascend910B1"] < by["Ascend310P3"] < by["Ascend310"]


# ============================================================================ DVPP
def test_dvpp_ns_by_hand() -> None:
    """setup + pixels / rate, truncated to whole ns; monotone in pixels."""
    assert costs.dvpp_ns(ROUND, 0) == 1000
    assert costs.dvpp_ns(ROUND, 1001) == 1000 + 2002
    assert costs.dvpp_ns(get_profile(ROUND, dvpp_pixels_per_ns=3.0), 11) == 1003  # 3.67
    for p in REAL:
        ns = [costs.dvpp_ns(p, n) for n in SIZES]
        assert ns == sorted(ns) and ns[0] == p.dvpp_setup_ns


def test_vpc_ns_charges_each_job_its_larger_side() -> None:
    """A VPC job costs its larger area; a batch the sum of its jobs, in one set-up."""
    assert costs.vpc_ns(ROUND, [(100, 50)]) == costs.dvpp_ns(ROUND, 100)
    assert costs.vpc_ns(ROUND, [(50, 100)]) == costs.dvpp_ns(ROUND, 100)
    assert costs.vpc_ns(ROUND, [(100, 50), (10, 30)]) == costs.dvpp_ns(ROUND, 130) == 1260
    assert costs.vpc_ns(ROUND, []) == ROUND.dvpp_setup_ns


# ============================================================================ host side
def test_host_side_costs_are_the_profiles_fields() -> None:
    """An API call costs api_call_ns, one that launches a task launch_call_ns; callback and
    event tasks their fields."""
    assert costs.api_call_ns(ROUND, False) == 11
    assert costs.api_call_ns(ROUND, True) == 22
    assert costs.callback_ns(ROUND) == 33
    assert costs.event_task_ns(ROUND) == 44


HOST = HostProfile(name="round", jpeg_decode_pixels_per_ns=0.5, stream_bytes_per_ns=4.0,
                   page_fault_ns=700, page_bytes=1000)


def test_host_work_by_hand() -> None:
    """Decoding at pixels / rate, passes at bytes / rate (both rounded to nearest), first
    touch per whole page."""
    assert costs.jpeg_decode_ns(10, 5, HOST) == 100
    assert costs.jpeg_decode_ns(3, 1, HOST) == 6
    assert costs.preprocess_ns(10, HOST) == 2  # 2.5 rounds to even
    assert costs.preprocess_ns(14, HOST) == 4  # 3.5 rounds to even
    assert costs.first_touch_ns(0, HOST) == 0
    assert costs.first_touch_ns(1, HOST) == 700
    assert costs.first_touch_ns(1000, HOST) == 700
    assert costs.first_touch_ns(1001, HOST) == 1400


def test_preprocess_ns_of_is_decode_passes_and_first_touch() -> None:
    """preprocess_image's charge: decoding, the RGB picture plus 30 bytes per output element
    through memory, and when fresh the first touch of the RGB picture plus 17 bytes per
    output element."""
    w, h, size = 40, 30, 8
    n, rgb = size * size * 3, w * h * 3
    warm = costs.jpeg_decode_ns(w, h, HOST) + costs.preprocess_ns(rgb + 30 * n, HOST)
    assert costs.preprocess_ns_of(w, h, size, False, HOST) == warm
    assert costs.preprocess_ns_of(w, h, size, True, HOST) == \
        warm + costs.first_touch_ns(rgb + 17 * n, HOST)
    assert costs.preprocess_ns_of(2 * w, h, size, False, HOST) > warm


@pytest.mark.parametrize("bad", [-1, float("nan"), True, "3"])
def test_host_work_amounts_must_be_non_negative_numbers(bad: object) -> None:
    """A negative or NaN amount is a ValueError, a bool or string a TypeError."""
    err = TypeError if isinstance(bad, (bool, str)) else ValueError
    with pytest.raises(err):
        costs.preprocess_ns(bad)  # type: ignore[arg-type]
    with pytest.raises(err):
        costs.jpeg_decode_ns(4, bad)  # type: ignore[arg-type]


def test_cost_functions_read_nothing_but_their_arguments() -> None:
    """Pure functions: a profile built by hand (no session anywhere) gives the same costs
    every time, and a field changed on a copy changes only that copy's cost."""
    p = DeviceProfile(**{f: getattr(ROUND, f) for f in ROUND.__dataclass_fields__})
    assert costs.copy_cost(p, H2D, 10**6, True) == costs.copy_cost(ROUND, H2D, 10**6, True)
    slower = get_profile(p, h2d_pinned_bw=1.0)
    assert costs.copy_cost(slower, H2D, 10**6, True)[1] > costs.copy_cost(p, H2D, 10**6,
                                                                          True)[1]
    assert costs.copy_cost(p, H2D, 10**6, True) == (Engine.COPY_H2D, 100 + 500_000)


# ============================================================================ the session
@pytest.fixture
def log(session: Session) -> TaskLog:
    """A TaskLog subscribed to the test's session."""
    tl = TaskLog()
    session.hooks.subscribe(tl)
    return tl


def _task(log: TaskLog, kind: TaskKind) -> Any:
    found = [t for t in log.tasks if t.kind == kind]
    assert found, [t.kind for t in log.tasks]
    return found[-1]


def test_session_charges_copies_and_memsets_what_the_cost_model_says(
        ready: ModuleType, session: Session, log: TaskLog) -> None:
    """A pinned and a pageable async H2D copy, a D2H copy and a memset last exactly the
    cost model's time on the cost model's engine."""
    acl = ready
    n = 1 << 20
    stream, _ = acl.rt.create_stream()
    dev, _ = acl.rt.malloc(n, 0)
    host, _ = acl.rt.malloc_host(n)
    assert acl.rt.memset(dev, n, 0, n) == 0
    t = _task(log, TaskKind.MEMSET)
    assert (t.engine, t.end - t.start) == (costs.MEMSET_ENGINE,
                                           costs.memset_cost(session.profile, n))
    assert acl.rt.memcpy_async(dev, n, host, n, H2D, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    t = _task(log, TaskKind.H2D)
    assert (t.engine, t.end - t.start) == costs.copy_cost(
        session.profile, H2D, n, True)
    assert acl.rt.memcpy(host, n, dev, n, D2H) == 0
    t = _task(log, TaskKind.D2H)
    assert (t.engine, t.end - t.start) == costs.copy_cost(
        session.profile, D2H, n, True)
    page = bytes(4096)
    assert acl.rt.memcpy(dev, n, acl.util.bytes_to_ptr(page), len(page), H2D) == 0
    t = _task(log, TaskKind.H2D)
    assert (t.engine, t.end - t.start) == costs.copy_cost(
        session.profile, H2D, len(page), False)


def test_session_charges_a_single_op_its_op_cost(ready: ModuleType, session: Session,
                                                 log: TaskLog) -> None:
    """acl.op.execute_v2 books op_cost's time and cores."""
    acl = ready
    shape = (1, 64, 32, 32)
    n = int(np.prod(shape)) * 4
    stream, _ = acl.rt.create_stream()
    descs, bufs = [], []
    for _ in range(3):
        descs.append(acl.create_tensor_desc(0, list(shape), 2))
        ptr, _ = acl.rt.malloc(n, 0)
        assert acl.rt.memset(ptr, n, 0, n) == 0
        bufs.append(acl.create_data_buffer(ptr, n))
    assert acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:],
                             acl.op.create_attr(), stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    t = _task(log, TaskKind.KERNEL)
    specs = [spec(*shape)]
    flops, nbytes = get_op("Add").cost(specs * 2, specs, {})
    ns, cores = costs.op_cost(session.profile, flops, nbytes, specs * 2, specs)
    assert (t.end - t.start, t.units) == (ns, cores)


def test_session_charges_a_model_execution_its_execution_cost(
        ready: ModuleType, session: Session, log: TaskLog) -> None:
    """acl.mdl.execute books execution_cost's duration and units."""
    acl = ready
    model_id, ret = acl.mdl.load_from_file(zoo.path("lenet5"))
    assert ret == 0
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    datasets = []
    for count, size in ((acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index),
                        (acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)):
        ds = acl.mdl.create_dataset()
        for i in range(count):
            nbytes = size(desc, i)
            ptr, _ = acl.rt.malloc(nbytes, 0)
            assert acl.rt.memset(ptr, nbytes, 0, nbytes) == 0
            _, ret = acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, nbytes))
            assert ret == 0
        datasets.append(ds)
    assert acl.mdl.execute(model_id, datasets[0], datasets[1]) == 0
    t = _task(log, TaskKind.MODEL)
    ec = costs.execution_cost(session.profile, zoo.build("lenet5"))
    assert (t.end - t.start, t.units) == (ec.duration_ns, ec.units)


def _picture(acl: ModuleType, w: int, h: int) -> int:
    """A zeroed NV12 picture of ``w`` x ``h`` in DVPP memory (strides 16 x 2), as a desc."""
    m = acl.media
    ws, hs = -(-w // 16) * 16, -(-h // 2) * 2
    size = ws * hs * 3 // 2
    ptr, ret = m.dvpp_malloc(size)
    assert ret == 0
    assert acl.rt.memset(ptr, size, 0, size) == 0
    d = m.dvpp_create_pic_desc()
    for fn, v in ((m.dvpp_set_pic_desc_data, ptr), (m.dvpp_set_pic_desc_size, size),
                  (m.dvpp_set_pic_desc_format, 1), (m.dvpp_set_pic_desc_width, w),
                  (m.dvpp_set_pic_desc_height, h), (m.dvpp_set_pic_desc_width_stride, ws),
                  (m.dvpp_set_pic_desc_height_stride, hs)):
        assert fn(d, v) == 0
    return int(d)


def test_session_charges_a_vpc_resize_its_larger_side(ready: ModuleType, session: Session,
                                                      log: TaskLog) -> None:
    """A VPC resize up and the same resize down take the same time: vpc_ns of the larger
    picture."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    chan = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(chan) == 0
    cfg = acl.media.dvpp_create_resize_config()
    small, big = (64, 48), (128, 96)
    want = costs.vpc_ns(session.profile, [(64 * 48, 128 * 96)])
    assert want == costs.dvpp_ns(session.profile, 128 * 96)
    for a, b in ((small, big), (big, small)):
        src, dst = _picture(acl, *a), _picture(acl, *b)
        assert acl.media.dvpp_vpc_resize_async(chan, src, dst, cfg, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        t = _task(log, TaskKind.DVPP)
        assert (t.engine, t.end - t.start) == (Engine.DVPP, want)
