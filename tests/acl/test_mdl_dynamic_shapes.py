"""``acl.mdl`` with image-size and dims gears: the getters, the setters' check order and codes,
and execution at the set gear (outputs compared with an independent forward pass,
``load_om(...).run`` at that gear).

Sources: model.cpp (aclmdlSetDynamicHWSize, aclmdlSetInputDynamicDims, aclmdlGetDynamicHW,
aclmdlGetInputDynamicGearCount, aclmdlGetInputDynamicDims, aclmdlGetCurOutputDims),
ge_executor.cc (SetDynamicImageSize, SetDynamicDims, GetCurDynamicDims), ge_error_codes.h
(145003, 145012, 145013) and the binding table (docs/sources.md §0, restated in
acl_lab/acl/_binding.py: set_dynamic_hw_size, get_dynamic_hw, set_input_dynamic_dims,
get_input_dynamic_gear_count, get_input_dynamic_dims).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.constants import (
    ACL_DYNAMIC_TENSOR_NAME,
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
    ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
    ACL_ERROR_INVALID_PARAM,
    ACL_SUCCESS,
)
from acl_lab.runtime.om import load_om

from ..dynamic_models import dims_model, hw_classifier, hw_features

H2D, D2H = 1, 2


def ok(result: Any) -> Any:
    """The value of a ``(value, ret)`` pair whose ret is 0."""
    *value, ret = result
    assert ret == ACL_SUCCESS, result
    return value[0] if len(value) == 1 else tuple(value)


@dataclass
class Loaded:
    """A loaded model with its desc and device buffers sized as samples size them."""

    acl: ModuleType
    path: Path
    mid: int
    desc: int
    ins: list[tuple[int, int]]
    outs: list[tuple[int, int]]

    def dataset(self, bufs: list[tuple[int, int]]) -> int:
        ds = self.acl.mdl.create_dataset()
        for ptr, size in bufs:
            ok(self.acl.mdl.add_dataset_buffer(ds, self.acl.create_data_buffer(ptr, size)))
        return int(ds)

    def put(self, i: int, arr: np.ndarray) -> None:
        data = np.ascontiguousarray(arr).tobytes()
        host = np.frombuffer(bytearray(data), dtype=np.uint8)
        ptr, size = self.ins[i]
        assert len(data) <= size
        assert self.acl.rt.memcpy(ptr, size, host.ctypes.data, len(data), H2D) == 0

    def get(self, ptr: int, nbytes: int) -> bytes:
        host = np.zeros(nbytes, np.uint8)
        assert self.acl.rt.memcpy(host.ctypes.data, nbytes, ptr, nbytes, D2H) == 0
        return host.tobytes()


def load(acl: ModuleType, path: Path) -> Loaded:
    mid = ok(acl.mdl.load_from_file(str(path)))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == 0
    bufs = []
    for get, n in ((acl.mdl.get_input_size_by_index, acl.mdl.get_num_inputs(desc)),
                   (acl.mdl.get_output_size_by_index, acl.mdl.get_num_outputs(desc))):
        side = []
        for i in range(n):
            size = get(desc, i)
            side.append((ok(acl.rt.malloc(size, 0)), size))
        bufs.append(side)
    return Loaded(acl, path, mid, desc, bufs[0], bufs[1])


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gears")
    return {"hw": hw_classifier(folder), "features": hw_features(folder),
            "dims": dims_model(folder)}


# ------------------------------------------------------------------------------ image size


def test_hw_model_desc(ready: ModuleType, models: dict[str, Path]) -> None:
    m = load(ready, models["hw"])
    acl, d = ready, m.desc
    assert acl.mdl.get_dynamic_hw(d, 0) == ({"hwCount": 2, "hw": [[8, 8], [12, 16]]}, 0)
    assert acl.mdl.get_dynamic_batch(d) == ({"batchCount": 0, "batch": []}, 0)
    assert acl.mdl.get_input_dynamic_gear_count(d, -1) == (0, 0)
    assert acl.mdl.get_num_inputs(d) == 2
    assert acl.mdl.get_input_index_by_name(d, ACL_DYNAMIC_TENSOR_NAME) == (1, 0)
    assert acl.mdl.get_input_dims(d, 0) == ({"name": "x", "dimCount": 4,
                                            "dims": [1, 3, -1, -1]}, 0)
    assert acl.mdl.get_input_dims_v2(d, 0)[0]["dims"] == [1, 3, -1, -1]
    assert acl.mdl.get_input_dims(d, 1)[0]["dims"] == [2]  # one int64 per named value
    assert acl.mdl.get_input_size_by_index(d, 0) == 1 * 3 * 12 * 16 * 4  # the largest gear
    assert acl.mdl.get_input_size_by_index(d, 1) == 16
    assert acl.mdl.get_output_dims(d, 0)[0]["dims"] == [1, 5]


def test_hw_execution_at_each_gear(ready: ModuleType, models: dict[str, Path]) -> None:
    """Each gear computes what the graph computes at that size; the shape-data buffer holds
    height and width as two little-endian int64s (GE SetDynamicImageSize)."""
    m = load(ready, models["hw"])
    om = load_om(models["hw"])
    acl = ready
    rng = np.random.default_rng(7)
    for h, w in ((12, 16), (8, 8)):
        ins, outs = m.dataset(m.ins), m.dataset(m.outs)
        x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        m.put(0, x)
        assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 1, h, w) == 0
        assert m.get(m.ins[1][0], 16) == h.to_bytes(8, "little") + w.to_bytes(8, "little")
        assert acl.mdl.execute(m.mid, ins, outs) == 0
        got = np.frombuffer(m.get(m.outs[0][0], 20), np.float32)
        want = om.run([x], batch=(h, w))[0].ravel()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_cur_output_dims_follow_the_gear(ready: ModuleType, models: dict[str, Path]) -> None:
    m = load(ready, models["features"])
    acl = ready
    assert acl.mdl.get_output_dims(m.desc, 0)[0]["dims"] == [1, 4, 10, 10]
    assert acl.mdl.get_cur_output_dims(m.desc, 0)[0]["dims"] == [1, 4, 10, 10]  # none set
    ins, outs = m.dataset(m.ins), m.dataset(m.outs)
    x = np.ones((1, 3, 4, 6), np.float32)
    m.put(0, x)
    assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 1, 4, 6) == 0
    assert acl.mdl.get_cur_output_dims(m.desc, 0) == ({"name": "y", "dimCount": 4,
                                                      "dims": [1, 4, 4, 6]}, 0)
    assert acl.mdl.get_output_dims(m.desc, 0)[0]["dims"] == [1, 4, 10, 10]
    assert acl.mdl.execute(m.mid, ins, outs) == 0
    got = np.frombuffer(m.get(m.outs[0][0], 4 * 4 * 6 * 4), np.float32)
    want = load_om(models["features"]).run([x], batch=(4, 6))[0].ravel()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_set_dynamic_hw_size_codes(ready: ModuleType, models: dict[str, Path]) -> None:
    """ACL's order (model.cpp) then GE's (SetDynamicImageSize): 100000 for the arguments,
    145012 for a buffer under 2 x 4 bytes, 145003 for an unknown model, 145013 for a size
    that is not a gear or a model whose gears are batches; then the emulator's index check."""
    acl = ready
    m = load(ready, models["hw"])
    ins = m.dataset(m.ins)
    assert acl.mdl.set_dynamic_hw_size(m.mid, 0, 1, 8, 8) == ACL_ERROR_INVALID_PARAM
    assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 1, 0, 8) == ACL_ERROR_INVALID_PARAM
    assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 5, 8, 8) == ACL_ERROR_INVALID_PARAM
    assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 1, 8, 9) == (
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)
    assert acl.mdl.set_dynamic_hw_size(m.mid + 50, ins, 1, 8, 8) == (
        ACL_ERROR_GE_EXEC_MODEL_ID_INVALID)
    assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 0, 8, 8) == ACL_ERROR_INVALID_PARAM  # x
    small = m.dataset([m.ins[0], (m.ins[1][0], 4)])
    assert acl.mdl.set_dynamic_hw_size(m.mid, small, 1, 8, 8) == (
        ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID)
    # the length check comes before the model lookup in GE
    assert acl.mdl.set_dynamic_hw_size(m.mid + 50, small, 1, 8, 8) == (
        ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID)
    # 8 bytes: height and width as two 4-byte values (GE: 8 bytes each only from 16)
    half = m.dataset([m.ins[0], (m.ins[1][0], 8)])
    assert acl.mdl.set_dynamic_hw_size(m.mid, half, 1, 12, 16) == 0
    assert m.get(m.ins[1][0], 8) == (12).to_bytes(4, "little") + (16).to_bytes(4, "little")
    batch = load(ready, Path(zoo.path("mlp_dynamic")))
    bins = batch.dataset(batch.ins)
    assert acl.mdl.set_dynamic_hw_size(batch.mid, bins, 1, 8, 8) == (
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)
    assert acl.mdl.set_dynamic_batch_size(m.mid, ins, 1, 1) == (
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)
    outs = m.dataset(m.outs)
    assert acl.mdl.execute(m.mid, ins, outs) == ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID


# ------------------------------------------------------------------------------ dims


def test_dims_getters(ready: ModuleType, models: dict[str, Path]) -> None:
    """Gear count and gears need index -1; each gear lists every input's dims concatenated."""
    acl = ready
    m = load(ready, models["dims"])
    d = m.desc
    assert acl.mdl.get_input_dynamic_gear_count(d, -1) == (3, 0)
    assert acl.mdl.get_input_dynamic_gear_count(d, 0) == (0, ACL_ERROR_INVALID_PARAM)
    gears, ret = acl.mdl.get_input_dynamic_dims(d, -1, 3)
    assert ret == 0
    assert [g["dims"] for g in gears] == [[1, 6, 1, 4], [3, 6, 3, 4], [3, 6, 1, 4]]
    assert all(g["dimCount"] == 4 and g["name"] == "" for g in gears)
    assert acl.mdl.get_input_dynamic_dims(d, -1, 2) == (None, ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.get_input_dynamic_dims(d, 0, 3) == (None, ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.get_input_dynamic_dims(d, -1, 5000) == (None, ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.get_dynamic_hw(d, 0) == ({"hwCount": 0, "hw": []}, 0)
    assert acl.mdl.get_num_inputs(d) == 3
    assert acl.mdl.get_input_dims(d, 2)[0]["dims"] == [2]
    assert acl.mdl.get_input_size_by_index(d, 0) == 3 * 6 * 4
    assert acl.mdl.get_input_size_by_index(d, 1) == 3 * 4 * 4


def test_dims_execution(ready: ModuleType, models: dict[str, Path]) -> None:
    """set_input_dynamic_dims with a gear from get_input_dynamic_dims: the -1 values go into
    the shape-data buffer, the outputs have that gear's shape and values."""
    acl = ready
    m = load(ready, models["dims"])
    om = load_om(models["dims"])
    gears = ok(acl.mdl.get_input_dynamic_dims(m.desc, -1, 3))
    rng = np.random.default_rng(9)
    for gear in gears:
        n, m_rows = gear["dims"][0], gear["dims"][2]
        ins, outs = m.dataset(m.ins), m.dataset(m.outs)
        x = rng.standard_normal((n, 6)).astype(np.float32)
        b = rng.standard_normal((m_rows, 4)).astype(np.float32)
        m.put(0, x)
        m.put(1, b)
        assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 2, gear) == 0
        assert m.get(m.ins[2][0], 16) == n.to_bytes(8, "little") + m_rows.to_bytes(8, "little")
        assert acl.mdl.get_cur_output_dims(m.desc, 0)[0]["dims"] == [n, 4]
        assert acl.mdl.execute(m.mid, ins, outs) == 0
        got = np.frombuffer(m.get(m.outs[0][0], n * 4 * 4), np.float32)
        want = om.run([x, b], batch=(n, m_rows))[0].ravel()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_set_input_dynamic_dims_codes(ready: ModuleType, models: dict[str, Path]) -> None:
    """dimCount 0 and the dataset checks give 100000 (model.cpp); then GE: 145003 for an
    unknown model, 145012 for dims that are not the inputs' (GetCurDynamicDims), 145013 for
    values that are no gear or a model without dims gears, 145012 for a short buffer."""
    acl = ready
    m = load(ready, models["dims"])
    ins = m.dataset(m.ins)

    def dims(*v: int) -> dict[str, Any]:
        return {"name": "", "dimCount": len(v), "dims": list(v)}

    assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 2, dims()) == ACL_ERROR_INVALID_PARAM
    assert acl.mdl.set_input_dynamic_dims(m.mid, 0, 2, dims(1, 6, 1, 4)) == (
        ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 7, dims(1, 6, 1, 4)) == (
        ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.set_input_dynamic_dims(m.mid + 50, ins, 2, dims(1, 6, 1, 4)) == (
        ACL_ERROR_GE_EXEC_MODEL_ID_INVALID)
    assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 2, dims(1, 1)) == (
        ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID)  # not every input's dims
    assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 2, dims(1, 5, 1, 4)) == (
        ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID)  # a static dim changed
    assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 2, dims(2, 6, 2, 4)) == (
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)  # not a gear
    short = m.dataset([m.ins[0], m.ins[1], (m.ins[2][0], 4)])
    assert acl.mdl.set_input_dynamic_dims(m.mid, short, 2, dims(1, 6, 1, 4)) == (
        ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID)
    assert acl.mdl.set_input_dynamic_dims(m.mid, ins, 0, dims(1, 6, 1, 4)) == (
        ACL_ERROR_INVALID_PARAM)  # x's buffer: the emulator's own index check
    assert acl.mdl.set_dynamic_hw_size(m.mid, ins, 2, 1, 1) == (
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)
    batch = load(ready, Path(zoo.path("mlp_dynamic")))
    bins = batch.dataset(batch.ins)
    assert acl.mdl.set_input_dynamic_dims(batch.mid, bins, 1, dims(2, 784)) == (
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)
    for bad, text in (([1, 6, 1, 4], "argument 4 is not dict"),
                      ({"dimCount": 4}, "The dims of parameter 4 is not a list."),
                      ({"dims": [1, "6"]}, "the dims of fourth parameter is not list of int")):
        with pytest.raises(TypeError, match=f"^{text}$"):
            acl.mdl.set_input_dynamic_dims(m.mid, ins, 2, bad)
