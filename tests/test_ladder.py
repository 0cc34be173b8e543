"""The optimisation ladder and its mechanisms: occupancy, AIPP, the four variants.

The ratios' 15% bands are reported by ``benchmarks/bench_ladder.py``, not asserted here:
these tests check that the mechanisms behave (host work on the clock, cores left free at
batch 1, AIPP's colour conversion, the variants' order and agreement).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab import ladder, zoo
from acl_lab.hostwork import HOST_WORK_CALL, first_touch_ns, jpeg_decode_ns, preprocess_ns
from acl_lab.runtime import dvpp
from acl_lab.runtime.costs import execution_cost, kernel_ns, occupancy
from acl_lab.runtime.hooks import TaskLog
from acl_lab.runtime.kinds import Engine, TaskKind
from acl_lab.runtime.models import shared_memo
from acl_lab.runtime.om import load_om
from acl_lab.runtime.opdefs import OpError, TensorSpec, get_op
from acl_lab.runtime.profiles import get_profile
from acl_lab.runtime.session import Session

P310P3 = get_profile("Ascend310P3")
H2D, D2H = 1, 2


def spec(*shape: int, dtype: str = "float32") -> TensorSpec:
    return TensorSpec(dtype, tuple(shape))


# ============================================================================ occupancy
@pytest.mark.parametrize(("shape", "cores"), [
    ((1, 64, 112, 112), 8),   # ResNet-50 stem: 3136 tiles of 16x16, 25 blocks
    ((1, 256, 56, 56), 8),
    ((1, 128, 28, 28), 4),    # 49 x 8 tiles = 100352 outputs -> 4 blocks of 32768
    ((1, 256, 14, 14), 2),    # 13 x 16 tiles -> 2 blocks
    ((1, 512, 7, 7), 1),      # 4 x 32 tiles = 32768 outputs: one block
    ((1, 2048, 7, 7), 4),
    ((1, 1000), 1),
    ((8, 16), 1),
    ((), 1),
])
def test_occupancy_counts_cube_tiles_per_core_block(shape: tuple[int, ...], cores: int) -> None:
    assert occupancy(P310P3, [spec(*shape)]) == cores


def test_occupancy_rule_by_hand() -> None:
    """min(cores, ceil(padded outputs / block)) with the output padded to 16x16 tiles."""
    for shape in ((1, 3, 224, 224), (1, 48, 30, 30), (4, 100, 9, 9), (300, 70)):
        rows, cols = ((shape[0] * shape[2] * shape[3], shape[1]) if len(shape) == 4
                      else (shape[0], shape[1]))
        padded = math.ceil(rows / 16) * 16 * math.ceil(cols / 16) * 16
        want = max(1, min(8, math.ceil(padded / P310P3.core_block_outputs)))
        assert occupancy(P310P3, [spec(*shape)]) == want


def test_occupancy_uses_the_largest_output_and_the_profile() -> None:
    assert occupancy(P310P3, [spec(1, 512, 7, 7), spec(1, 2048, 7, 7)]) == 4
    # the 910B's L0C is half as large: the same output needs twice the blocks
    assert occupancy(get_profile("Ascend910B1"), [spec(1, 512, 7, 7)]) == 2
    assert occupancy(get_profile("Ascend310"), [spec(1, 64, 112, 112)]) == 2  # 2 cores


def test_fewer_cores_take_longer(session: Session) -> None:
    """A compute-bound kernel on k of 8 cores takes 8/k times as long (after overhead)."""
    p = session.profile
    ovh = p.kernel_overhead_ns
    full = kernel_ns(p, 10**10, 1000, "float32") - ovh
    assert kernel_ns(p, 10**10, 1000, "float32", 8) - ovh == full
    assert kernel_ns(p, 10**10, 1000, "float32", 2) - ovh == pytest.approx(4 * full, 1e-6)
    # memory-bound too: each core brings its share of the bandwidth
    mem = kernel_ns(p, 0, 10**8, "float32") - ovh
    assert kernel_ns(p, 0, 10**8, "float32", 1) - ovh == pytest.approx(8 * mem, 1e-6)


def test_single_op_books_its_occupancy(ready: ModuleType, session: Session) -> None:
    """acl.op kernels follow the same rule: a small Add books 1 core, a big one all 8."""
    acl = ready
    log = TaskLog()
    session.hooks.subscribe(log)
    stream, _ = acl.rt.create_stream()
    units = []
    for shape in ((16, 16), (1, 256, 56, 56)):
        n = int(np.prod(shape)) * 4
        descs, bufs, ptrs = [], [], []
        for _ in range(3):
            descs.append(acl.create_tensor_desc(0, list(shape), 2))
            p, _ = acl.rt.malloc(n, 0)
            acl.rt.memset(p, n, 0, n)
            ptrs.append(p)
            bufs.append(acl.create_data_buffer(p, n))
        assert acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:],
                                 acl.op.create_attr(), stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        t = log.tasks[-1]
        assert t.kind == TaskKind.KERNEL
        want = occupancy(session.profile, [spec(*shape)])
        assert t.units == want
        flops, nbytes = get_op("Add").cost([spec(*shape)] * 2, [spec(*shape)], {})
        assert t.end - t.start == kernel_ns(session.profile, flops, nbytes, "float32", want)
        units.append(t.units)
    assert units == [1, 8]


def test_resnet50_books_about_half_the_cores() -> None:
    """At batch 1 ResNet-50's late layers fill few cores: the execution books fewer than
    all 8 (so two fit together), and the core time it uses is below cores x duration."""
    om = zoo.build("resnet50")
    with Session() as s:
        ec = execution_cost(s.profile, om)
    assert 0 < ec.units < P310P3.aicore_count
    assert 2 * ec.units <= P310P3.aicore_count
    assert (ec.units - 1) * ec.duration_ns < ec.core_ns <= ec.units * ec.duration_ns
    average = ec.core_ns / ec.duration_ns / P310P3.aicore_count
    assert 0.3 < average < 0.6
    # every layer's time, summed, with each layer on the cores its output fills
    specs = om.tensor_specs()
    total = 0
    with Session() as s:
        for node, (_, _, flops, nbytes) in zip(om.nodes, om.cost(), strict=True):
            k = occupancy(s.profile, [specs[t] for t in node.outputs])
            total += kernel_ns(s.profile, flops, nbytes, specs[node.inputs[0]].dtype, k)
    assert ec.duration_ns == total


# ============================================================================ two streams
def _two_models(acl: ModuleType, path: str, streams: list[int]) -> None:
    """Load ``path`` once per stream (a model must not run on two streams at once), execute
    each once, all queued before any sync; then release everything."""
    loaded = []
    for stream in streams:
        mid, ret = acl.mdl.load_from_file(path)
        assert ret == 0
        desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(desc, mid) == 0
        ds, ptrs = [], []
        for size in (acl.mdl.get_input_size_by_index(desc, 0),
                     acl.mdl.get_output_size_by_index(desc, 0)):
            p, _ = acl.rt.malloc(size, 0)
            assert acl.rt.memset(p, size, 0, size) == 0
            d = acl.mdl.create_dataset()
            acl.mdl.add_dataset_buffer(d, acl.create_data_buffer(p, size))
            ds.append(d)
            ptrs.append(p)
        assert acl.mdl.execute_async(mid, ds[0], ds[1], stream) == 0
        loaded.append((mid, desc, ds, ptrs))
    for stream in set(streams):
        assert acl.rt.synchronize_stream(stream) == 0
    for mid, desc, ds, ptrs in loaded:
        for d in ds:
            assert acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(d, 0)) == 0
            assert acl.mdl.destroy_dataset(d) == 0
        for p in ptrs:
            assert acl.rt.free(p) == 0
        assert acl.mdl.unload(mid) == 0
        assert acl.mdl.destroy_desc(desc) == 0


@pytest.mark.parametrize("model", ["tiny_resnet", "resnet50"])
def test_two_streams_overlap_two_inferences_one_stream_does_not(
        ready: ModuleType, session: Session, model: str) -> None:
    acl = ready
    log = TaskLog()
    session.hooks.subscribe(log)
    path = zoo.path(model)
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    with shared_memo():  # identical inputs: compute the graph once
        _two_models(acl, path, [s1, s1])
        _two_models(acl, path, [s1, s2])
    models = [t for t in log.tasks if t.kind == TaskKind.MODEL]
    assert len(models) == 4
    same, split = models[:2], models[2:]
    assert same[1].start >= same[0].end  # one stream: one after the other
    assert split[1].start < split[0].end  # two streams: side by side
    assert split[0].units + split[1].units <= session.profile.aicore_count
    assert split[1].end - split[0].start < 1.2 * (split[0].end - split[0].start)
    for stream in (s1, s2):
        assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
    assert session.trace().findings() == []


def _run_tiny(inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Execute the zoo tiny_resnet synchronously on each input in a fresh session."""
    outs = []
    with Session() as s:
        acl = acl_lab.install()
        log = TaskLog()
        s.hooks.subscribe(log)
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            mid, _ = acl.mdl.load_from_file(zoo.path("tiny_resnet"))
            desc = acl.mdl.create_desc()
            acl.mdl.get_desc(desc, mid)
            n_in = acl.mdl.get_input_size_by_index(desc, 0)
            n_out = acl.mdl.get_output_size_by_index(desc, 0)
            dev_in, _ = acl.rt.malloc(n_in, 0)
            dev_out, _ = acl.rt.malloc(n_out, 0)
            ds = []
            for p, n in ((dev_in, n_in), (dev_out, n_out)):
                d = acl.mdl.create_dataset()
                acl.mdl.add_dataset_buffer(d, acl.create_data_buffer(p, n))
                ds.append(d)
            for x in inputs:
                data = x.tobytes()
                assert acl.rt.memcpy(dev_in, n_in, acl.util.bytes_to_ptr(data), n_in, H2D) == 0
                assert acl.mdl.execute(mid, ds[0], ds[1]) == 0
                out = bytes(n_out)
                assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), n_out, dev_out, n_out,
                                     D2H) == 0
                outs.append(np.frombuffer(out, np.float32).copy())
            assert any(t.kind == TaskKind.MODEL for t in log.tasks)
        finally:
            acl_lab.uninstall()
    return outs


def test_identical_executions_are_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded model remembers recent outputs by input: same input, same output, one graph
    run; within ``shared_memo`` loads of one file share that memory across sessions."""
    from acl_lab.runtime.om import OmModel

    calls = []
    real = OmModel.run

    def counting(self: OmModel, inputs: list[np.ndarray], batch: int | None = None) -> Any:
        calls.append(1)
        return real(self, inputs, batch)

    monkeypatch.setattr(OmModel, "run", counting)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(2))
    outs = _run_tiny([a, a, b, a])
    assert len(calls) == 2
    om = load_om(zoo.path("tiny_resnet"))
    want_a, want_b = (real(om, [x])[0].reshape(-1) for x in (a, b))
    for y, want in zip(outs, (want_a, want_a, want_b, want_a), strict=True):
        np.testing.assert_array_equal(y, want)
    calls.clear()
    _run_tiny([a])
    _run_tiny([a])
    assert len(calls) == 2  # separate sessions, no sharing
    calls.clear()
    with shared_memo():
        first = _run_tiny([a])
        second = _run_tiny([a])
    assert len(calls) == 1
    np.testing.assert_array_equal(first[0], second[0])


# ============================================================================ AIPP
def _bt601(nv12: np.ndarray, h: int, w: int, swap: bool = False) -> np.ndarray:
    """Independent float reference: NV12 -> RGB (BT.601 full range, JPEG) in float64."""
    y = nv12[:, :h, :].astype(np.float64)
    uv = nv12[:, h:, :].reshape(nv12.shape[0], h // 2, w // 2, 2).astype(np.float64)
    u, v = (uv[..., 1], uv[..., 0]) if swap else (uv[..., 0], uv[..., 1])
    u = u.repeat(2, axis=1).repeat(2, axis=2) - 128
    v = v.repeat(2, axis=1).repeat(2, axis=2) - 128
    r = y + 1.402 * v
    g = y - 0.344136 * u - 0.714136 * v
    b = y + 1.772 * u
    return np.clip(np.stack([r, g, b], axis=1), 0, 255)


@pytest.fixture
def nv12() -> np.ndarray:
    return np.random.default_rng(5).integers(0, 256, (2, 3 * 24 // 2, 40), dtype=np.uint8)


def test_aipp_colour_conversion_matches_bt601(nv12: np.ndarray) -> None:
    (out,) = get_op("Aipp").compute([nv12], {})
    assert out.dtype == np.float32 and out.shape == (2, 3, 24, 40)
    ref = _bt601(nv12, 24, 40)
    # the colour matrix is in 1/256 steps and the result is rounded to 8 bits
    assert np.abs(out - ref).max() <= 1.5
    assert np.abs(out - ref).mean() < 0.5
    assert np.array_equal(out, np.round(out))  # 8-bit RGB before normalisation


def test_aipp_normalises_per_channel(nv12: np.ndarray) -> None:
    attrs = {"mean_chn": [10, 20, 30], "min_chn": [0.5, 1.5, 2.5],
             "var_reci_chn": [0.1, 0.2, 0.5]}
    (raw,) = get_op("Aipp").compute([nv12], {})
    (out,) = get_op("Aipp").compute([nv12], attrs)
    for c in range(3):
        want = (raw[:, c] - attrs["mean_chn"][c] - attrs["min_chn"][c]) \
            * attrs["var_reci_chn"][c]
        np.testing.assert_allclose(out[:, c], want, rtol=1e-6, atol=1e-5)


def test_aipp_swap_and_no_csc(nv12: np.ndarray) -> None:
    (swapped,) = get_op("Aipp").compute([nv12], {"rbuv_swap_switch": True})
    assert np.abs(swapped - _bt601(nv12, 24, 40, swap=True)).max() <= 1.5
    (yuv,) = get_op("Aipp").compute([nv12], {"csc_switch": False})
    assert np.array_equal(yuv[:, 0], nv12[:, :24, :].astype(np.float32))
    assert np.array_equal(yuv[:, 1, ::2, ::2], nv12[:, 24:, 0::2].astype(np.float32))
    assert np.array_equal(yuv[:, 2, 1::2, 1::2], nv12[:, 24:, 1::2].astype(np.float32))


@pytest.mark.parametrize(("arrays", "attrs", "words"), [
    ([np.zeros((1, 36, 40), np.float32)], {}, "uint8"),
    ([np.zeros((1, 35, 40), np.uint8)], {}, "H*3/2"),
    ([np.zeros((1, 36, 40), np.uint8)], {"src_image_size_w": 64}, "src_image_size_w"),
    ([np.zeros((1, 36, 40), np.uint8)], {"input_format": "RGB888_U8"}, "input_format"),
    ([np.zeros((1, 36, 40), np.uint8)], {"matrix": [1, 2, 3]}, "matrix"),
    ([np.zeros((1, 36, 40), np.uint8)], {"var_reci_chn": [1.0]}, "var_reci_chn"),
])
def test_aipp_rejects_bad_inputs(arrays: list[np.ndarray], attrs: dict[str, Any],
                                 words: str) -> None:
    with pytest.raises(OpError, match=words):
        get_op("Aipp").compute(arrays, attrs)


def test_dvpp_and_aipp_reproduce_the_host_preprocessing() -> None:
    """JPEGD -> VPC 224x224 NV12 -> AIPP gives the host path's normalised RGB input up to
    chroma subsampling and rounding."""
    model = zoo.build("resnet50_aipp")
    assert model.inputs[0].dtype == "uint8" and model.inputs[0].shape == (1, 336, 224)
    aipp = model.nodes[0]
    for seed in (0, 3):
        jpeg = ladder.make_jpeg(seed)
        info = dvpp.parse_jpeg_header(jpeg)
        decoded = dvpp.decode_to_sp420(jpeg, info, 1280, 720)
        small = dvpp.resize_sp420(decoded, 1280, 720, 1280, 720, False, 224, 224, 224, 224,
                                  False, dvpp.INTERP_DEFAULT)
        nv12 = np.frombuffer(small, np.uint8).reshape(1, 336, 224)
        (x,) = get_op("Aipp").compute([nv12], aipp.attrs)
        host = ladder.host_preprocess(ladder.decode_rgb(jpeg))
        assert x.shape == host.shape == (1, 3, 224, 224)
        diff = np.abs(x - host)
        assert diff.mean() < 0.02  # ~1 grey level in normalised units is 0.017
        assert diff.max() < 0.3
        # the pictures are not flat: the comparison is not trivially true
        assert host.std() > 0.3


def test_resnet50_aipp_has_resnet50_weights() -> None:
    a, b = zoo.build("resnet50_aipp"), zoo.build("resnet50")
    assert a.weights.keys() == b.weights.keys()
    assert all(np.array_equal(a.weights[k], b.weights[k]) for k in b.weights)
    assert [n.op for n in a.nodes] == ["Aipp"] + [n.op for n in b.nodes]


# ============================================================================ the ladder
@pytest.fixture(scope="module")
def result() -> Iterator[ladder.LadderResult]:
    yield ladder.run_ladder("Ascend310P3", images=3, distinct=2)


def test_ladder_order(result: ladder.LadderResult) -> None:
    lat = [result.latency_ms(k) for k in "ABCD"]
    assert lat[0] > lat[1] > lat[2] > lat[3] > 0
    assert 1 < result.ratio("B") < result.ratio("C") < result.ratio("D")


def test_two_streams_raise_utilisation(result: ladder.LadderResult) -> None:
    one, two = result.streams[1].utilisation, result.streams[2].utilisation
    assert 0 < one < two <= 1
    assert two > 1.5 * one
    # one stream: about the execution's average occupancy (the copies are short)
    with Session() as s:
        ec = execution_cost(s.profile, load_om(zoo.path("resnet50")))
    assert one == pytest.approx(ec.core_ns / ec.duration_ns / s.profile.aicore_count, rel=0.05)


def test_variants_agree(result: ladder.LadderResult) -> None:
    assert result.correctness() == []
    top1 = result.variants["A"].top1
    assert len(top1) == 3
    for key in "BCD":
        assert result.variants[key].top1 == top1
        assert len(result.variants[key].logits) == 3
    # pictures 0 and 2 are the same JPEG, picture 1 another one
    a = result.variants["A"].logits
    assert np.array_equal(a[0], a[2]) and not np.array_equal(a[0], a[1])
    np.testing.assert_allclose(result.variants["D"].logits[1], a[1], rtol=0.05, atol=0.05)


def test_programs_are_clean(result: ladder.LadderResult) -> None:
    """No leaks, races or other findings; no warnings in any variant's trace."""
    for run in [*result.variants.values(), *result.streams.values()]:
        trace = run.trace
        assert trace.findings() == [], run.name
        levels = trace.diags["level"]
        assert not len(levels) or int(levels.max()) == 0, run.name


def test_host_work_is_what_separates_a_from_b(result: ladder.LadderResult) -> None:
    """A differs from B by the first touch of its fresh buffers and the slower pageable
    copy; both pay the same decode and preprocessing."""
    w, h = ladder.JPEG_WIDTH, ladder.JPEG_HEIGHT
    jpeg = ladder.make_jpeg(0)
    fresh = (first_touch_ns(len(jpeg)) + first_touch_ns(w * h * 3)
             + first_touch_ns(ladder.fresh_bytes(w, h) - w * h * 3)
             + first_touch_ns(4 * ladder.LOGITS))
    p = P310P3
    n = 3 * 224 * 224 * 4
    pageable_extra = n / (p.h2d_pinned_bw * p.pageable_factor) - n / p.h2d_pinned_bw
    gap = (result.latency_ms("A") - result.latency_ms("B")) * 1e6
    assert gap == pytest.approx(fresh + pageable_extra, rel=0.05)
    assert 0 < result.pinned_bw_gain < 0.35


def test_async_streams_hide_the_device_behind_the_host(result: ladder.LadderResult) -> None:
    """C is host-bound: its time per image is the host work (read, decode, preprocess) plus
    API calls, while the model runs meanwhile."""
    w, h = ladder.JPEG_WIDTH, ladder.JPEG_HEIGHT
    host = (jpeg_decode_ns(w, h) + preprocess_ns(ladder.preprocess_bytes(w, h))
            + preprocess_ns(2 * len(ladder.make_jpeg(0))))
    c = result.variants["C"]
    assert c.latency_ms * 1e6 == pytest.approx(host, rel=0.03)
    trace = c.trace
    work = trace.calls_named(HOST_WORK_CALL)
    models = np.nonzero(trace.tasks["engine"] == int(Engine.AICORE))[0]
    starts, ends = trace.calls["start_ns"][work], trace.calls["end_ns"][work]
    overlapped = [m for m in models
                  if ((starts < trace.tasks["end_ns"][m]) & (trace.tasks["start_ns"][m] < ends))
                  .any()]
    assert len(overlapped) >= 2  # the device ran while the host decoded the next picture


def test_dvpp_variant_does_no_host_decoding(result: ladder.LadderResult) -> None:
    d = result.variants["D"].trace
    whats = {d.call_args(int(c))[1] for c in d.calls_named(HOST_WORK_CALL)}
    assert whats == {"read JPEG"}
    kinds = d.tasks["kind"]
    assert int(np.count_nonzero(kinds == int(TaskKind.DVPP))) == 2 * 3  # JPEGD + VPC each
    a = result.variants["A"].trace
    assert int(np.count_nonzero(a.tasks["kind"] == int(TaskKind.DVPP))) == 0
    assert {"decode JPEG (libjpeg)", "resize + normalise (numpy)"} <= {
        a.call_args(int(c))[1] for c in a.calls_named(HOST_WORK_CALL)}


def test_table_lists_every_figure(result: ladder.LadderResult) -> None:
    text = result.table()
    for key in "ABCD":
        assert ladder.VARIANT_NAMES[key] in text
        assert f"{ladder.PUBLISHED.latency_ms[key]:.1f}ms" in text
    for key in "BCD":
        assert f"{result.ratio(key):.2f}x" in text
        assert ("ok" if result.within(key) else "MISS") in text
    assert "1 stream" in text and "2 streams" in text


def test_within_uses_the_tolerance(result: ladder.LadderResult) -> None:
    for key in "BCD":
        err = abs(result.ratio_error(key))
        assert result.within(key, err + 1e-9) and not result.within(key, err / 2)


def test_run_ladder_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="images"):
        ladder.run_ladder(images=1)
    with pytest.raises(ValueError, match="distinct"):
        ladder.run_ladder(images=2, distinct=0)


def test_install_state_is_restored(result: ladder.LadderResult) -> None:
    """Running the ladder leaves ``import acl`` as it found it."""
    import sys

    assert "acl" not in sys.modules or sys.modules["acl"].__name__.startswith("acl_lab")
    mod = acl_lab.install()
    try:
        ladder.run_program(lambda acl: ladder.InferenceLoop(acl, streams=1),
                           [ladder.make_jpeg(0)] * 2)
        assert sys.modules["acl"] is mod
    finally:
        acl_lab.uninstall()
