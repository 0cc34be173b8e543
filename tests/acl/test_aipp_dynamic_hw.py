"""Static AIPP over ``--dynamic_image_size`` gears (issue 12, the dynamic-hw classification
sample): ``atc --input_shape=x:1,3,-1,-1 --dynamic_image_size=... --insert_op_conf=...``.

The ATC ``--dynamic_image_size`` page (usage constraints): with static AIPP, crop and padding
must be off and ``src_image_size_w/h`` 0; the picture then follows the gear. The uint8 input
is [1, -1, -1, 3] (RGB888_U8), holds h * w * 3 bytes at a gear, and
``get_input_size_by_index`` gives the largest gear's size.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from acl_lab import atc
from acl_lab.constants import ACL_DYNAMIC_TENSOR_NAME, ACL_SUCCESS

H2D, D2H = 1, 2
GEARS = ((4, 6), (8, 8))
MIN, VAR = (10.0, 20.0, 30.0), (0.5, 0.25, 2.0)
CFG = """aipp_op {
    aipp_mode : static
    input_format : RGB888_U8
    src_image_size_w : %d
    src_image_size_h : 0
    crop : %s
    min_chn_0 : 10
    min_chn_1 : 20
    min_chn_2 : 30
    var_reci_chn_0 : 0.5
    var_reci_chn_1 : 0.25
    var_reci_chn_2 : 2.0
}
"""


def ok(result: Any) -> Any:
    """The value of a ``(value, ret)`` pair whose ret is 0."""
    *value, ret = result
    assert ret == ACL_SUCCESS, result
    return value[0] if len(value) == 1 else tuple(value)


def convert(tmp_path: Path, capsys: pytest.CaptureFixture[str], cfg: str,
            gears: str = "4,6;8,8") -> tuple[int, str, Path]:
    """atc a channel-mean network (ReduceMean over H, W) with image-size gears and ``cfg``;
    (exit code, stderr, .om path)."""
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["x"], ["y"], axes=[2, 3], keepdims=0, name="mean")],
        "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "net.onnx"))
    (tmp_path / "aipp.cfg").write_text(cfg)
    out = tmp_path / "net_aipp"
    rc = atc.main([f"--model={tmp_path / 'net.onnx'}", "--framework=5", f"--output={out}",
                   "--soc_version=Ascend310", "--input_shape=x:1,3,-1,-1",
                   f"--dynamic_image_size={gears}",
                   f"--insert_op_conf={tmp_path / 'aipp.cfg'}"])
    return rc, capsys.readouterr().err, Path(str(out) + ".om")


def expected(pic: np.ndarray) -> np.ndarray:
    """The channel means of AIPP's output ((pixel - min) * var_reci, through float16)."""
    planes = np.moveaxis(pic[0].astype(np.float32), -1, 0)
    conv = ((planes - np.array(MIN, np.float32)[:, None, None])
            * np.array(VAR, np.float32)[:, None, None]).astype(np.float16)
    return conv.astype(np.float32).mean(axis=(1, 2))


def test_the_model_takes_the_gear_sized_picture(
        ready: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Converts (exit 0); the picture input is uint8 [1, -1, -1, 3] of the largest gear's
    8 * 8 * 3 bytes, the gears are the flag's, and the shape-data input follows it."""
    rc, err, om = convert(tmp_path, capsys, CFG % (0, "false"))
    assert rc == 0, err
    acl = ready
    mid = ok(acl.mdl.load_from_file(str(om)))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == 0
    assert ok(acl.mdl.get_dynamic_hw(desc, 0)) == {"hwCount": 2, "hw": [[4, 6], [8, 8]]}
    assert acl.mdl.get_input_size_by_index(desc, 0) == 8 * 8 * 3
    assert ok(acl.mdl.get_input_dims(desc, 0))["dims"] == [1, -1, -1, 3]
    assert ok(acl.mdl.get_input_index_by_name(desc, ACL_DYNAMIC_TENSOR_NAME)) == 1
    info = ok(acl.mdl.get_first_aipp_info(mid, 0))
    assert (info["srcImageSizeW"], info["srcImageSizeH"]) == (0, 0)


def test_each_gear_converts_its_own_picture(
        ready: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """At each gear the model reads h * w * 3 bytes of the (largest-gear) input buffer as an
    h x w RGB picture: its output is the channel means of AIPP's (pixel - min) * var_reci."""
    rc, err, om = convert(tmp_path, capsys, CFG % (0, "false"))
    assert rc == 0, err
    acl = ready
    mid = ok(acl.mdl.load_from_file(str(om)))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == 0
    size = acl.mdl.get_input_size_by_index(desc, 0)
    dev_in = ok(acl.rt.malloc(size, 0))
    dev_shape = ok(acl.rt.malloc(acl.mdl.get_input_size_by_index(desc, 1), 0))
    dev_out = ok(acl.rt.malloc(12, 0))
    rng = np.random.default_rng(3)
    for h, w in GEARS:
        pic = rng.integers(0, 256, (1, h, w, 3), dtype=np.uint8)
        assert acl.rt.memcpy(dev_in, size, pic.ctypes.data, pic.nbytes, H2D) == 0
        ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        for ptr, n in ((dev_in, size), (dev_shape, 16)):
            ok(acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(ptr, n)))
        ok(acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(dev_out, 12)))
        assert acl.mdl.set_dynamic_hw_size(mid, ins, 1, h, w) == 0
        assert acl.mdl.execute(mid, ins, outs) == 0
        host = np.zeros(3, np.float32)
        assert acl.rt.memcpy(host.ctypes.data, 12, dev_out, 12, D2H) == 0
        np.testing.assert_allclose(host, expected(pic), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(("cfg", "needle"), [
    (CFG % (224, "false"), "src_image_size_w and src_image_size_h must be 0"),
    (CFG % (0, "true"), "crop and padding must be off"),
    (CFG.replace("RGB888_U8", "YUV420SP_U8") % (0, "false"), "YUV420SP_U8 AIPP over"),
])
def test_atc_refuses_what_dynamic_image_size_forbids(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cfg: str, needle: str) -> None:
    """A source size, crop, or (not emulated) a YUV420SP_U8 picture with image-size gears:
    exit 255 with E10052 and the reason; no model written."""
    rc, err, om = convert(tmp_path, capsys, cfg)
    assert rc == 255 and "E10052" in err and needle in err, err
    assert not om.exists()
