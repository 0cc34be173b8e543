"""The emulated .om container (acl_lab.runtime.om): format, corruption codes, execution."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.runtime.om import (
    MAGIC,
    GraphBuilder,
    ModelFileError,
    ModelRunError,
    OmModel,
    dump_om_bytes,
    load_om,
    load_om_bytes,
    save_om,
)

PREFIX = struct.Struct("<9sIQ")


@pytest.fixture(scope="module")
def mlp() -> OmModel:
    """The dynamic-batch mlp (gears 1/2/4/8)."""
    return zoo.build("mlp_dynamic")


@pytest.fixture(scope="module")
def lenet() -> OmModel:
    return zoo.build("lenet5")


def _split(data: bytes) -> tuple[dict[str, Any], bytes]:
    _, _, hlen = PREFIX.unpack_from(data)
    return json.loads(data[PREFIX.size:PREFIX.size + hlen]), data[PREFIX.size + hlen:]


def _pack(header: dict[str, Any], blob: bytes, version: int = 1, magic: bytes = MAGIC) -> bytes:
    raw = json.dumps(header, sort_keys=True).encode()
    return PREFIX.pack(magic, version, len(raw)) + raw + blob


# ------------------------------------------------------------------------- format
def test_round_trip_is_byte_identical(lenet: OmModel, tmp_path: Path) -> None:
    data = dump_om_bytes(lenet)
    assert data[:9] == b"ACLLAB-OM"
    assert struct.unpack_from("<I", data, 9)[0] == 1
    path = tmp_path / "lenet5.om"
    save_om(lenet, path)
    assert path.read_bytes() == data
    again = load_om(path)
    assert dump_om_bytes(again) == data
    assert [n.name for n in again.nodes] == [n.name for n in lenet.nodes]
    assert again.nodes[0].attrs == lenet.nodes[0].attrs
    assert list(again.weights) == list(lenet.weights)
    for k, w in lenet.weights.items():
        np.testing.assert_array_equal(again.weights[k], w)
        assert again.weights[k].dtype == w.dtype
    # the weight blob starts 64-byte aligned and each initializer too
    header, _ = _split(data)
    _, _, hlen = PREFIX.unpack_from(data)
    assert (PREFIX.size + hlen) % 64 == 0
    assert all(i["offset"] % 64 == 0 for i in header["initializers"])
    assert header["dynamic_batch"] == [] and header["soc_version"] == lenet.soc_version


def test_same_model_same_bytes() -> None:
    assert dump_om_bytes(zoo.build("mlp")) == dump_om_bytes(zoo.build("mlp"))


def test_header_fields(mlp: OmModel) -> None:
    header, _ = _split(dump_om_bytes(mlp))
    assert header["inputs"] == [{"name": "input", "dtype": "float32", "shape": [-1, 784],
                                 "format": 2}]
    assert header["outputs"][0]["shape"] == [-1, 10]
    assert header["dynamic_batch"] == [1, 2, 4, 8]
    assert {"name", "op", "inputs", "outputs", "attrs"} == set(header["nodes"][0])
    assert {"name", "dtype", "shape", "offset", "nbytes"} == set(header["initializers"][0])


def test_loaded_weights_are_read_only(lenet: OmModel) -> None:
    m = load_om_bytes(dump_om_bytes(lenet))
    w = next(iter(m.weights.values()))
    with pytest.raises(ValueError):
        w[...] = 0


# ------------------------------------------------------------------------- error codes
def test_missing_path_is_145002(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError) as e:
        load_om(tmp_path / "nope.om")
    assert e.value.code == 145002
    with pytest.raises(ModelFileError) as e:
        load_om(tmp_path)  # a directory cannot be read as a file
    assert e.value.code == 145002


def test_empty_and_short_files_are_145006(tmp_path: Path) -> None:
    for content in (b"", b"ACL", b"ACLLAB-OM\x01\x00"):
        p = tmp_path / "short.om"
        p.write_bytes(content)
        with pytest.raises(ModelFileError) as e:
            load_om(p)
        assert e.value.code == 145006
        assert "shorter than the OM file header" in e.value.message


def _mutate_header(fn: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        header, blob = _split(data)
        fn(header)
        return _pack(header, blob)
    return apply


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(h: dict[str, Any]) -> None:
        obj: Any = h
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
    return fn


CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "wrong magic": lambda d: b"NOTANOM!!" + d[9:],
    "onnx file": lambda d: b"\x08\x07\x12\x07pytorch" + d[16:],
    "version 2": lambda d: d[:9] + struct.pack("<I", 2) + d[13:],
    "header length past end": lambda d: d[:13] + struct.pack("<Q", len(d)) + d[21:],
    "bad json": lambda d: _pack({}, b"")[:21] + b"{not json" + b" " * 10,
    "not utf-8": lambda d: PREFIX.pack(MAGIC, 1, 4) + b"\xff\xfe\xfd\xfc",
    "header not an object": lambda d: PREFIX.pack(MAGIC, 1, 5) + b"[1,2]",
    "truncated weights": lambda d: d[:-7],
    "trailing bytes": lambda d: d + b"extra",
    "unknown op": _mutate_header(_set(["nodes", 0, "op"], "NoSuchOp")),
    "unknown tensor": _mutate_header(_set(["nodes", 1, "inputs", 0], "ghost")),
    "output not produced": _mutate_header(_set(["outputs", 0, "name"], "ghost")),
    "missing nodes": _mutate_header(lambda h: h.pop("nodes")),
    "inputs wrong type": _mutate_header(_set(["inputs"], "x")),
    "bad dtype": _mutate_header(_set(["inputs", 0, "dtype"], "complex64")),
    "bad shape": _mutate_header(_set(["inputs", 0, "shape"], [1, "x", 28, 28])),
    "nbytes mismatch": _mutate_header(_set(["initializers", 0, "nbytes"], 4)),
    "offset outside": _mutate_header(_set(["initializers", 0, "offset"], 1 << 40)),
    "weights_size mismatch": _mutate_header(lambda h: h.update(weights_size=h["weights_size"]
                                                               + 64)),
    "dynamic batch on a static model": _mutate_header(_set(["dynamic_batch"], [1, 2])),
    "attrs rejected by infer": _mutate_header(_set(["nodes", 0, "attrs", "strides"], [1, 1])),
    "graph out of order": _mutate_header(lambda h: h["nodes"].reverse()),
    "tensor defined twice": _mutate_header(_set(["nodes", 1, "outputs", 0], "conv1")),
    "wrong input count": _mutate_header(lambda h: h["nodes"][1]["inputs"].append("conv1")),
    "declared output shape wrong": _mutate_header(_set(["outputs", 0, "shape"], [1, 11])),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_corrupt_files_are_145006(name: str, lenet: OmModel, tmp_path: Path) -> None:
    data = CORRUPTIONS[name](dump_om_bytes(lenet))
    p = tmp_path / "bad.om"
    p.write_bytes(data)
    with pytest.raises(ModelFileError) as e:
        load_om(p)
    assert e.value.code == 145006, e.value.message
    assert e.value.message
    with pytest.raises(ModelFileError):
        load_om_bytes(data)


def test_fuzzed_files_give_a_code_or_load(lenet: OmModel) -> None:
    """Random byte flips, truncations and insertions never raise anything but 145006."""
    data = dump_om_bytes(lenet)
    _, _, hlen = PREFIX.unpack_from(data)
    rng = np.random.default_rng(7)
    outcomes = {"ok": 0, "145006": 0}
    for _ in range(300):
        b = bytearray(data)
        kind = rng.integers(3)
        if kind == 0:  # flip bytes, mostly in the prefix and header
            for _ in range(int(rng.integers(1, 4))):
                pos = int(rng.integers(PREFIX.size + hlen + 64))
                b[pos % len(b)] ^= int(rng.integers(1, 256))
        elif kind == 1:
            del b[int(rng.integers(len(b))):]
        else:
            pos = int(rng.integers(PREFIX.size + hlen))
            b[pos:pos] = bytes(rng.integers(0, 256, int(rng.integers(1, 8)), dtype=np.uint8))
        try:
            load_om_bytes(bytes(b))
            outcomes["ok"] += 1
        except ModelFileError as e:
            assert e.code == 145006
            outcomes["145006"] += 1
    assert outcomes["145006"] > 200


# ------------------------------------------------------------------------- execution
def _mlp_forward(m: OmModel, x: np.ndarray) -> np.ndarray:
    w = {k: v.astype(np.float64) for k, v in m.weights.items()}
    h = np.maximum(x @ w["fc1.weight"] + w["fc1.bias"], 0)
    return h @ w["fc2.weight"] + w["fc2.bias"]


def test_mlp_matches_numpy(mlp: OmModel) -> None:
    x = np.random.default_rng(0).standard_normal((1, 784)).astype(np.float32)
    (y,) = mlp.run([x])
    assert y.shape == (1, 10) and y.dtype == np.float32
    np.testing.assert_allclose(y, _mlp_forward(mlp, x), rtol=1e-4, atol=1e-4)


def test_mlp_dynamic_batch(mlp: OmModel) -> None:
    x = np.random.default_rng(1).standard_normal((2, 784)).astype(np.float32)
    (y,) = mlp.run([x], batch=2)
    assert y.shape == (2, 10)
    np.testing.assert_allclose(y, _mlp_forward(mlp, x), rtol=1e-4, atol=1e-4)
    (y2,) = mlp.run([x])  # the gear is deduced from the input
    np.testing.assert_array_equal(y, y2)
    (y3,) = mlp.run([x.reshape(-1)], batch=2)  # a flat buffer is reshaped
    np.testing.assert_array_equal(y, y3)
    with pytest.raises(ModelRunError) as e:
        mlp.run([np.zeros((3, 784), np.float32)])
    assert e.value.code == 145013
    with pytest.raises(ModelRunError) as e:
        mlp.run([np.zeros((4, 784), np.float32)], batch=3)
    assert e.value.code == 145013


def test_run_rejects_bad_inputs(lenet: OmModel) -> None:
    with pytest.raises(ModelRunError) as e:
        lenet.run([])
    assert e.value.code == 145000
    with pytest.raises(ModelRunError) as e:
        lenet.run([np.zeros((1, 1, 28, 28), np.float64)])
    assert e.value.code == 145000 and "float32" in e.value.message
    with pytest.raises(ModelRunError) as e:
        lenet.run([np.zeros((1, 1, 28, 27), np.float32)])
    assert e.value.code == 145000
    with pytest.raises(ModelRunError) as e:
        lenet.run([np.zeros((1, 1, 28, 28), np.float32)], batch=1)
    assert e.value.code == 145013


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    ho, wo = h - kh + 1, wd - kw + 1
    y = np.zeros((x.shape[0], o, ho, wo))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", x[:, :, i:i + ho, j:j + wo], w[:, :, i, j])
    return y + b[None, :, None, None]


def _maxpool2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def test_lenet5_matches_numpy(lenet: OmModel) -> None:
    w = {k: v.astype(np.float64) for k, v in lenet.weights.items()}
    x = np.random.default_rng(2).standard_normal((1, 1, 28, 28)).astype(np.float32)
    h = _maxpool2(np.maximum(_conv(x, w["conv1.weight"], w["conv1.bias"], 2), 0))
    h = _maxpool2(np.maximum(_conv(h, w["conv2.weight"], w["conv2.bias"], 0), 0))
    h = h.reshape(1, -1)
    h = np.maximum(h @ w["fc1.weight"] + w["fc1.bias"], 0)
    h = np.maximum(h @ w["fc2.weight"] + w["fc2.bias"], 0)
    logits = h @ w["fc3.weight"] + w["fc3.bias"]
    e = np.exp(logits - logits.max())
    want = e / e.sum()
    (y,) = lenet.run([x])
    assert y.shape == (1, 10)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-6)
    assert abs(float(y.sum()) - 1) < 1e-5


# ------------------------------------------------------------------------- sizes and cost
def test_sizes(mlp: OmModel, lenet: OmModel) -> None:
    assert mlp.input_size(0) == 8 * 784 * 4  # the largest gear
    assert mlp.output_size(0) == 8 * 10 * 4
    assert mlp.input_size(0, batch=2) == 2 * 784 * 4
    assert lenet.input_size(0) == 28 * 28 * 4
    assert lenet.output_size(0) == 10 * 4
    assert mlp.weight_bytes() == (784 * 256 + 256 + 256 * 10 + 10) * 4
    assert lenet.weight_bytes() == sum(w.nbytes for w in lenet.weights.values())
    # intermediates at batch 8: fc1 [8,256] and relu1 [8,256] (the output is not counted)
    assert mlp.work_bytes() == 2 * 8 * 256 * 4
    assert lenet.work_bytes() > 0


def test_specs_and_descriptors(mlp: OmModel) -> None:
    assert mlp.inputs[0].shape == (-1, 784)
    assert dict(mlp.inputs[0]) == {"name": "input", "dtype": "float32", "shape": (-1, 784),
                                   "format": 2}
    assert mlp.inputs[0]["name"] == "input"
    assert [s.shape for s in mlp.input_specs()] == [(8, 784)]
    assert [s.shape for s in mlp.input_specs(4)] == [(4, 784)]
    assert [s.shape for s in mlp.output_specs(1)] == [(1, 10)]
    assert mlp.max_batch == 8 and mlp.is_dynamic


def test_cost(mlp: OmModel, lenet: OmModel) -> None:
    rows = mlp.cost()
    assert [r[:2] for r in rows] == [("fc1", "MatMul"), ("relu1", "Relu"), ("fc2", "MatMul")]
    assert rows[0][2] == 2 * 8 * 784 * 256
    assert mlp.cost(1)[0][2] == 2 * 784 * 256
    assert mlp.cost() is rows  # cached per batch
    conv1 = lenet.cost()[0]
    assert conv1[1] == "Conv2D" and conv1[2] == 2 * 6 * 28 * 28 * 25
    assert all(f >= 0 and b > 0 for _, _, f, b in lenet.cost())


def test_builder_rejects_bad_graphs() -> None:
    g = GraphBuilder("bad")
    x = g.add_input("x", "float32", (1, 4))
    w = g.add_weight("w", np.zeros((5, 3), np.float32))
    y = g.add_node("MatMul", [x, w], name="mm")[0]
    g.add_output(y, "float32", (1, 3))
    with pytest.raises(ModelFileError) as e:
        g.build()
    assert e.value.code == 145006 and "'mm' (MatMul)" in e.value.message
    g2 = GraphBuilder("bad2")
    x = g2.add_input("x", "float32", (1, 4))
    g2.add_node("NoSuchOp", [x])
    with pytest.raises(ModelFileError, match="unknown op type"):
        g2.build()


def _with_gears(gears: list[int]) -> bytes:
    """mlp_dynamic's bytes with its batch gears replaced."""
    data = Path(zoo.path("mlp_dynamic")).read_bytes()
    return _mutate_header(_set(["dynamic_batch"], gears))(data)


@pytest.mark.parametrize("gears", [[1, 2**64], [1, 2**63 - 1], [1, 2**62],
                                   list(range(1, 102))],
                         ids=["2^64", "2^63-1", "2^62", "101 gears"])
def test_gears_past_the_limits_are_145006(gears: list[int]) -> None:
    """A gear whose tensors' byte size overflows int64 (GE's size check), or more gears
    than ATC allows: 145006 at load, never a Python error or a wrapped size."""
    with pytest.raises(ModelFileError) as e:
        load_om_bytes(_with_gears(gears))
    assert e.value.code == 145006
    assert ("more than" in e.value.message) or ("at most 100" in e.value.message)


def test_a_large_but_representable_gear_loads_with_exact_sizes() -> None:
    """A gear of 2**40 is representable: it loads and its sizes are exact, not wrapped."""
    m = load_om_bytes(_with_gears([1, 2**40]))
    spec = m.input_specs(2**40)[0]
    assert spec.nbytes == 2**40 * spec.nbytes // spec.shape[0] > 0
