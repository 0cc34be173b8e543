"""The .om container's gears: one mechanism for batch, image size and dims (acl_lab.runtime.om).

A gear is a full assignment of the inputs' -1 dims; the header keeps the gears as ATC named
them. Broken gear rules make a file invalid (145006), as any other inconsistency does.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from acl_lab import zoo
from acl_lab.runtime.om import (
    ACL_FORMAT_NCHW,
    ACL_FORMAT_ND,
    ACL_FORMAT_NHWC,
    SHAPE_DATA_NAME,
    GraphBuilder,
    ModelFileError,
    ModelRunError,
    OmModel,
    dump_om_bytes,
    load_om_bytes,
    read_header,
)


def _pool_net(shape: tuple[int, ...], fmt: int, hw: list[list[int]] | None = None,
              dims: list[list[int]] | None = None) -> GraphBuilder:
    """x -> Relu, any shape: the output has the input's shape (-1 where the input has)."""
    g = GraphBuilder("relu_net")
    x = g.add_input("x", "float32", shape, fmt)
    y = g.add_node("Relu", [x])[0]
    g.add_output(y, "float32", shape)
    g.dynamic_hw = hw or []
    g.dynamic_dims = dims or []
    return g


def test_gears_are_full_assignments() -> None:
    hw = _pool_net((2, 3, -1, -1), ACL_FORMAT_NCHW, hw=[[4, 5], [6, 2]]).build()
    assert hw.dynamic_kind == "hw" and hw.gears == [(4, 5), (6, 2)]
    assert hw.fill((6, 2)) == (6, 2)
    assert [s.shape for s in hw.input_specs((4, 5))] == [(2, 3, 4, 5)]
    assert hw.max_gear == (4, 5)  # 20 elements per plane beat 12
    assert hw.input_size(0) == 2 * 3 * 4 * 5 * 4
    nhwc = _pool_net((1, -1, -1, 3), ACL_FORMAT_NHWC, hw=[[2, 2], [3, 1]]).build()
    assert [s.shape for s in nhwc.input_specs((3, 1))] == [(1, 3, 1, 3)]
    dims = _pool_net((-1, 4, -1), ACL_FORMAT_ND, dims=[[1, 2], [3, 3]]).build()
    assert dims.dynamic_kind == "dims"
    assert [s.shape for s in dims.output_specs((1, 2))] == [(1, 4, 2)]
    assert dims.acl_inputs[-1].name == SHAPE_DATA_NAME and dims.acl_inputs[-1].shape == (2,)
    batch = zoo.build("mlp_dynamic")
    assert batch.gears == [(1,), (2,), (4,), (8,)] and batch.gear_key(4) == (4,)
    assert batch.acl_inputs[-1].shape == (1,)


def test_a_gear_of_another_kind_or_not_listed_is_145013() -> None:
    hw = _pool_net((1, 3, -1, -1), ACL_FORMAT_NCHW, hw=[[4, 4], [8, 8]]).build()
    for gear in (2, (4, 8), (4,)):
        with pytest.raises(ModelRunError) as e:
            hw.run([np.zeros((1, 3, 4, 4), np.float32)], batch=gear)
        assert e.value.code == 145013
    with pytest.raises(ModelRunError) as e:
        hw.run([np.zeros((1, 3, 5, 5), np.float32)])  # no gear has these shapes
    assert e.value.code == 145013
    (y,) = hw.run([np.full((1, 3, 8, 8), -1.0, np.float32)])
    assert y.shape == (1, 3, 8, 8) and float(y.max()) == 0.0


def test_header_round_trip_and_static_bytes() -> None:
    """Image-size and dims gears survive the file; a model without them has no such key."""
    hw = _pool_net((1, 3, -1, -1), ACL_FORMAT_NCHW, hw=[[4, 4], [8, 8]]).build()
    data = dump_om_bytes(hw)
    assert read_header(data)["dynamic_hw"] == [[4, 4], [8, 8]]
    back = load_om_bytes(data)
    assert back.gears == hw.gears and back.outputs[0].shape == (1, 3, -1, -1)
    static = dump_om_bytes(zoo.build("lenet5"))
    assert "dynamic_hw" not in read_header(static) and "dynamic_dims" not in read_header(static)


def _with_header(model: OmModel, **changes: Any) -> bytes:
    data = dump_om_bytes(model)
    header = read_header(data)
    end = header.pop("_header_end")
    header.update(changes)
    raw = json.dumps(header, sort_keys=True).encode()
    raw += b" " * (-(21 + len(raw)) % 64)
    return data[:9] + (1).to_bytes(4, "little") + len(raw).to_bytes(8, "little") + raw \
        + data[end:]


@pytest.mark.parametrize(("changes", "text"), [
    ({"dynamic_batch": [1, 2]}, "one way"),                      # batch and hw together
    ({"dynamic_hw": [[4, 4], [4, 4]]}, "repeated"),
    ({"dynamic_hw": [[4, 4, 1], [8, 8, 1]]}, "pairs"),
    ({"dynamic_hw": [[4, 0], [8, 8]]}, "positive"),
    ({"dynamic_hw": [], "dynamic_dims": [[4], [8]]}, "one value per -1"),
    ({"dynamic_hw": []}, "only a dynamic model"),                # -1 dims, no gears
])
def test_broken_gear_rules_are_145006(changes: dict[str, Any], text: str) -> None:
    hw = _pool_net((1, 3, -1, -1), ACL_FORMAT_NCHW, hw=[[4, 4], [8, 8]]).build()
    with pytest.raises(ModelFileError) as e:
        load_om_bytes(_with_header(hw, **changes))
    assert e.value.code == 145006 and text in e.value.message, e.value.message


def test_image_size_needs_minus_one_at_h_and_w() -> None:
    for shape, fmt in (((1, -1, 4, -1), ACL_FORMAT_NCHW), ((1, 3, -1, -1), ACL_FORMAT_ND),
                       ((-1, -1), ACL_FORMAT_ND)):
        with pytest.raises(ModelFileError) as e:
            _pool_net(shape, fmt, hw=[[4, 4], [8, 8]]).build()
        assert "exactly H and W" in e.value.message
