"""The deterministic model zoo (acl_lab.zoo)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.runtime.om import load_om


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "zoo"
    monkeypatch.setenv("ACL_LAB_CACHE", str(folder))
    return folder


def test_names_and_describe() -> None:
    assert zoo.names() == ["mlp", "mlp_dynamic", "lenet5", "tiny_resnet", "resnet50",
                           "resnet50_aipp"]
    for n in zoo.names():
        assert zoo.describe(n).startswith(f"{n}: ")
    assert "actual_input_1" in zoo.describe("resnet50")
    with pytest.raises(KeyError, match="resnet50"):
        zoo.describe("vgg16")


def test_cache_dir_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACL_LAB_CACHE", raising=False)
    assert zoo.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "acl_lab", "zoo")


def test_path_is_deterministic_and_regenerated(cache: Path) -> None:
    p = zoo.path("lenet5")
    assert p == str(cache / "lenet5.om")
    first = Path(p).read_bytes()
    st = os.stat(p)
    assert zoo.path("lenet5") == p
    assert os.stat(p).st_mtime_ns == st.st_mtime_ns  # not rewritten when current
    os.unlink(p)
    assert Path(zoo.path("lenet5")).read_bytes() == first  # same bytes after regeneration
    Path(p).write_bytes(first[:-10])  # damaged -> regenerated
    assert Path(zoo.path("lenet5")).read_bytes() == first
    assert not [f for f in os.listdir(cache) if f.endswith(".tmp")]


def test_other_version_is_regenerated(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = zoo.path("mlp")
    old = Path(p).read_bytes()
    monkeypatch.setattr(zoo, "ZOO_VERSION", zoo.ZOO_VERSION + 1)
    new = Path(zoo.path("mlp")).read_bytes()
    assert new != old
    assert load_om(p).meta["zoo_version"] == zoo.ZOO_VERSION


def test_mlp_file(cache: Path) -> None:
    m = load_om(zoo.path("mlp_dynamic"))
    assert m.dynamic_batch == [1, 2, 4, 8]
    assert m.inputs[0].shape == (-1, 784)
    assert [d.name for d in m.acl_inputs] == ["input", "ascend_mbatch_shape_data"]
    (y,) = m.run([np.ones((2, 784), np.float32)], batch=2)
    assert y.shape == (2, 10)


def test_static_mlp_is_the_dynamic_one_at_batch_8(cache: Path) -> None:
    """mlp is static batch 8 with one input, and computes what mlp_dynamic does at gear 8."""
    static, dynamic = load_om(zoo.path("mlp")), load_om(zoo.path("mlp_dynamic"))
    assert static.dynamic_batch == [] and static.inputs[0].shape == (8, 784)
    assert [d.name for d in static.acl_inputs] == ["input"]
    x = np.random.default_rng(3).standard_normal((8, 784)).astype(np.float32)
    np.testing.assert_array_equal(static.run([x])[0], dynamic.run([x], batch=8)[0])


def test_tiny_resnet_runs(cache: Path) -> None:
    m = load_om(zoo.path("tiny_resnet"))
    (y,) = m.run([np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)])
    assert y.shape == (1, 10) and np.isfinite(y).all()
    assert sum(n.op == "Add" for n in m.nodes) == 3


def test_resnet50(cache: Path) -> None:
    """The zoo ResNet-50 has the real network's structure and computes sensible logits.

    How long generation and one run take is measured in ``benchmarks/bench_models.py``.
    """
    p = zoo.path("resnet50")
    m = load_om(p)
    assert m.inputs[0].name == "actual_input_1" and m.outputs[0].name == "output1"
    assert m.input_size(0) == 1 * 3 * 224 * 224 * 4
    assert m.output_size(0) == 1000 * 4
    convs = [n for n in m.nodes if n.op == "Conv2D"]
    assert len(convs) == 53  # stem + 16 bottlenecks x 3 + 4 downsample projections
    params = sum(w.size for w in m.weights.values())
    assert 25_400_000 < params < 25_700_000  # ResNet-50's 25.5M (+ folded BN biases)
    assert 8.0e9 < sum(f for _, _, f, _ in m.cost()) < 8.4e9  # ~4.1 GMACs
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (y,) = m.run([x])
    assert y.shape == (1, 1000) and y.dtype == np.float32 and np.isfinite(y).all()
    assert 0.1 < float(y.std()) < 100  # the logits stay in a sensible range
