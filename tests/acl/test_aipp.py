"""AIPP: ``atc --insert_op_conf`` (static AIPP) and the dynamic AIPP API of ``acl.mdl``.

Facts: the ATC AIPP configuration template and GE ``aipp_op.cc`` (fields, defaults, the
checks of ``ValidateParams``), the ATC "AIPP Verification of the Model Input Size" table
(N * w * h * 1.5 for YUV420SP_U8, * 3 for RGB888_U8), the ATC "CSC Configuration" formula
(``(M x (YUV - input_bias)) >> 8``) and ACL ``acl_aipp.cpp`` (the dynamic setters' ranges and
codes, ``aclmdlGetAippDataSize`` = 64 + 96 x batch). The expected pictures are computed here
with numpy from those formulas, independently of ``acl_lab.runtime.aipp``.
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
from acl_lab.constants import (
    ACL_ERROR_GE_AIPP_NOT_EXIST,
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
    ACL_ERROR_GE_PARAM_INVALID,
    ACL_ERROR_INVALID_PARAM,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
    ACL_UINT8,
)
from acl_lab.runtime.aipp import AippConfigError, parse_config

ACL_FORMAT_NHWC = 1
ACL_YUV420SP_U8 = 1
ACL_RGB888_U8 = 3
ACL_DATA_WITHOUT_AIPP = 0
ACL_DATA_WITH_STATIC_AIPP = 1
ACL_ERROR_FAILURE = 500000
ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID = 145012
ACL_DATA_WITH_DYNAMIC_AIPP = 2
ACL_DYNAMIC_AIPP_NODE = 3

#: the configuration of the public level2 classification samples (caffe_model/aipp.cfg)
SAMPLE_CFG = """aipp_op {
    aipp_mode : static
    related_input_rank : 0
    input_format : YUV420SP_U8
    csc_switch : true
    rbuv_swap_switch : false
    var_reci_chn_0 : 1
    var_reci_chn_1 : 1
    var_reci_chn_2 : 1
    min_chn_0 : 123
    min_chn_1 : 117
    min_chn_2 : 104
    load_start_pos_h : 0
    load_start_pos_w : 0
    src_image_size_w : %d
    src_image_size_h : %d
}
"""


def _flatten_net(tmp_path: Path, c: int, h: int, w: int) -> Path:
    """A network that hands its input straight out (Flatten): the output is AIPP's."""
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"], name="flat")], "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c * h * w])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path))
    return path


def _convert(tmp_path: Path, capsys: pytest.CaptureFixture[str], cfg: str, c: int = 3,
             h: int = 8, w: int = 8) -> tuple[int, str, Path]:
    (tmp_path / "aipp.cfg").write_text(cfg)
    out = tmp_path / "net_aipp"
    rc = atc.main([f"--model={_flatten_net(tmp_path, c, h, w)}", "--framework=5",
                   f"--output={out}", "--soc_version=Ascend310",
                   f"--insert_op_conf={tmp_path / 'aipp.cfg'}"])
    _, err = capsys.readouterr()
    return rc, err, Path(str(out) + ".om")


def ok(result: tuple[Any, ...]) -> Any:
    """The value(s) of a ``(value..., ret)`` tuple, asserting ret is 0."""
    *values, ret = result
    assert ret == ACL_SUCCESS, f"ret={ret}"
    return values[0] if len(values) == 1 else tuple(values)


def _run(acl: ModuleType, path: Path, data: bytes) -> tuple[np.ndarray, int, int]:
    """Load, feed ``data`` as input 0, execute; (output floats, model id, desc)."""
    mid = ok(acl.mdl.load_from_file(str(path)))
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, mid) == ACL_SUCCESS
    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    out_size = acl.mdl.get_output_size_by_index(desc, 0)
    dev_in = ok(acl.rt.malloc(in_size, ACL_MEM_MALLOC_NORMAL_ONLY))
    dev_out = ok(acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy(dev_in, in_size, acl.util.bytes_to_ptr(data), len(data),
                         ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    ok(acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(dev_in, in_size)))
    ok(acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(dev_out, out_size)))
    assert acl.mdl.execute(mid, ins, outs) == ACL_SUCCESS
    host = bytes(out_size)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(host), out_size, dev_out, out_size,
                         ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    return np.frombuffer(host, np.float32).copy(), mid, desc


def _nv12_to_bgr(pic: np.ndarray, h: int, w: int) -> np.ndarray:
    """NV12 -> B, G, R planes with ATC's default YUV420SP matrix (BT.601 narrow, B row
    first: GE SetCscDefaultValue) and the CSC formula's >> 8, saturated to 0..255."""
    y = pic[:h * w].reshape(h, w).astype(np.int64) - 16
    uv = pic[h * w:].reshape(h // 2, w // 2, 2).astype(np.int64) - 128
    u = uv[..., 0].repeat(2, 0).repeat(2, 1)
    v = uv[..., 1].repeat(2, 0).repeat(2, 1)
    b = (298 * y + 516 * u) >> 8
    g = (298 * y - 100 * u - 208 * v) >> 8
    r = (298 * y + 409 * v) >> 8
    return np.clip(np.stack([b, g, r]), 0, 255)


# ------------------------------------------------------------------------- parsing
@pytest.mark.parametrize(("text", "needle"), [
    ("aipp_op { input_format : YUV420SP_U8 }", "aipp_mode must be configured"),
    ("aipp_op { aipp_mode : fast input_format : YUV420SP_U8 }", "aipp_mode must be static"),
    ("aipp_op { aipp_mode : static }", "input_format must be set in static AIPP"),
    ("aipp_op { aipp_mode : static input_format : NV12 }", "input_format 'NV12' is not"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 colour : 1 }",
     "'colour' is not an AIPP parameter"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8\n matrix_r0c0 : 1\n"
     " matrix_r0c0 : 2 }", "matrix_r0c0 can not be configured repeatedly"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 src_image_size_w : -2 }",
     "src_image_size_w must not be configured smaller than 0"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 csc_switch : maybe }",
     "csc_switch must be true or false"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 src_image_size_w : 2.5 }",
     "src_image_size_w must be an integer, got '2.5'"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 var_reci_chn_0 : half }",
     "var_reci_chn_0 must be a number, got 'half'"),
    ("aipp_op { aipp_mode : dynamic }", "max_src_image_size must be set"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8", "not closed"),
    ("# only a comment\n", "no aipp_op"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 }\n"
     "aipp_op { aipp_mode : static input_format : RGB888_U8 }", "same input"),
])
def test_config_errors(text: str, needle: str) -> None:
    """What ATC refuses in the configuration file is refused, saying which field."""
    with pytest.raises(AippConfigError) as info:
        parse_config(text)
    assert needle in info.value.message


def test_config_defaults() -> None:
    """csc_switch without a matrix takes GE's YUV420SP default (B row first) and biases
    16/128/128; var_reci defaults to 1.0; comments and quoted values parse."""
    (cfg,) = parse_config("# sample\naipp_op {\n aipp_mode: static  # mode\n"
                          ' input_format : "YUV420SP_U8"\n csc_switch : true\n'
                          " matrix_r2c2 : 7\n mean_chn_1 : 5\n}\n")
    assert [cfg[f"matrix_r{i // 3}c{i % 3}"] for i in range(9)] == \
        [298, 516, 0, 298, -100, -208, 298, 0, 7]
    assert [cfg[f"input_bias_{i}"] for i in range(3)] == [16, 128, 128]
    assert [cfg[f"var_reci_chn_{i}"] for i in range(4)] == [1.0] * 4
    assert cfg["mean_chn_1"] == 5 and cfg.rank == 0 and cfg.mode == "static"


# ------------------------------------------------------------------------- atc
@pytest.mark.parametrize(("cfg", "needle"), [
    (SAMPLE_CFG % (6, 8), "the AIPP output is 6x8"),
    ((SAMPLE_CFG % (8, 8)).replace("load_start_pos_h : 0", "crop : true\n crop_size_w : 8\n"
                                   " crop_size_h : 6\n load_start_pos_h : 1"),
     "load_start_pos_h must be even"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 crop : true "
     "src_image_size_w : 8 src_image_size_h : 8 load_start_pos_w : 4 crop_size_w : 8 "
     "crop_size_h : 8 }", "does not fit"),
    ("aipp_op { aipp_mode : static input_format : YUV400_U8 }", "gives 1 channel"),
    ("aipp_op { aipp_mode : static input_format : YUV422SP_U8 }", "not emulated"),
    ("aipp_op { aipp_mode : static related_input_rank : 1 input_format : RGB888_U8 }",
     "related_input_rank 1 names no model input"),
    ("aipp_op { aipp_mode : dynamic max_src_image_size : 1000 }\n"
     "aipp_op { aipp_mode : dynamic related_input_rank : 1 max_src_image_size : 9 }",
     "one dynamic AIPP input per model"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 mean_chn_0 : 300 }",
     "mean_chn_0 must be in [0, 255]"),
    ("aipp_op { aipp_mode : static input_format : RGB888_U8 }\n}", "without an open"),
    ("aipp_op { aipp_mode : static related_input_name : img input_format : RGB888_U8 }",
     "related_input_name img convert rank failed"),
])
def test_atc_refuses_bad_configurations(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        cfg: str, needle: str) -> None:
    """ATC fails (255, no .om) with E10052 and the reason."""
    rc, err, om = _convert(tmp_path, capsys, cfg)
    assert rc == 255
    assert "E10052" in err and needle in err, err
    assert not om.exists()


def test_atc_missing_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable --insert_op_conf is E10052 too."""
    rc = atc.main([f"--model={_flatten_net(tmp_path, 3, 8, 8)}", "--framework=5",
                   f"--output={tmp_path / 'x'}", "--soc_version=Ascend310",
                   f"--insert_op_conf={tmp_path / 'nope.cfg'}"])
    err = capsys.readouterr().err
    assert rc == 255 and "E10052" in err and "cannot read" in err


def test_yuv420sp_model_input_desc(ready: ModuleType, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The converted input is the raw picture: uint8, NHWC, w*h*3/2 bytes; dims_v2 give
    [N, H*3/2, W, 1] (their product is the size)."""
    rc, err, om = _convert(tmp_path, capsys, SAMPLE_CFG % (8, 6), h=6, w=8)
    assert rc == 0, err
    mid = ok(ready.mdl.load_from_file(str(om)))
    desc = ready.mdl.create_desc()
    assert ready.mdl.get_desc(desc, mid) == ACL_SUCCESS
    assert ready.mdl.get_num_inputs(desc) == 1
    assert ready.mdl.get_input_size_by_index(desc, 0) == 8 * 6 * 3 // 2
    assert ready.mdl.get_input_data_type(desc, 0) == ACL_UINT8
    assert ready.mdl.get_input_format(desc, 0) == ACL_FORMAT_NHWC
    assert ok(ready.mdl.get_input_dims_v2(desc, 0))["dims"] == [1, 9, 8, 1]
    assert ok(ready.mdl.get_input_dims(desc, 0))["dims"] == [1, 6, 8, 3]
    assert ready.mdl.get_output_size_by_index(desc, 0) == 3 * 6 * 8 * 4


def test_yuv420sp_csc_and_min_match_numpy(ready: ModuleType, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The sample configuration: NV12 -> BGR with the default matrix, minus min_chn, as the
    network's float input (rounded through float16, AIPP's output type)."""
    rc, err, om = _convert(tmp_path, capsys, SAMPLE_CFG % (8, 8))
    assert rc == 0, err
    pic = np.random.default_rng(3).integers(0, 256, 8 * 8 * 3 // 2, dtype=np.uint8)
    got, _, _ = _run(ready, om, pic.tobytes())
    bgr = _nv12_to_bgr(pic, 8, 8).astype(np.float32)
    want = (bgr - np.array([123, 117, 104], np.float32).reshape(3, 1, 1)).astype(np.float16)
    np.testing.assert_array_equal(got.reshape(3, 8, 8), want.astype(np.float32))
    assert got.min() < 0 < got.max()  # the subtraction really happened


def test_nv21_batch_of_two(ready: ModuleType, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """YUV420SP with rbuv_swap_switch reads NV21 (V before U in each chroma pair), and a
    batch of two pictures converts each picture from its own w*h*3/2 bytes."""
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"], name="flat")], "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3 * 6 * 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "two.onnx"))
    cfg = (SAMPLE_CFG % (8, 6)).replace("rbuv_swap_switch : false", "rbuv_swap_switch : true")
    (tmp_path / "aipp.cfg").write_text(cfg)
    out = tmp_path / "two_aipp"
    assert atc.main([f"--model={tmp_path / 'two.onnx'}", "--framework=5", f"--output={out}",
                     "--soc_version=Ascend310",
                     f"--insert_op_conf={tmp_path / 'aipp.cfg'}"]) == 0, capsys.readouterr()
    rng = np.random.default_rng(8)
    nv12 = rng.integers(0, 256, (2, 8 * 6 * 3 // 2), dtype=np.uint8)
    nv21 = nv12.copy()
    nv21[:, 8 * 6:] = nv12[:, 8 * 6:].reshape(2, -1, 2)[..., ::-1].reshape(2, -1)
    got, _, desc = _run(ready, Path(str(out) + ".om"), nv21.tobytes())
    assert ready.mdl.get_input_size_by_index(desc, 0) == 2 * 8 * 6 * 3 // 2
    low = np.array([123, 117, 104], np.float32).reshape(3, 1, 1)
    want = np.stack([(_nv12_to_bgr(p, 6, 8).astype(np.float32) - low).astype(np.float16)
                     for p in nv12])
    np.testing.assert_array_equal(got.reshape(2, 3, 6, 8), want.astype(np.float32))
    assert not np.array_equal(want[0], want[1])


def test_rgb888_swap_crop_mean_var_padding(ready: ModuleType, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """RGB888 with the R/B swap, a crop window, mean and var_reci per channel and padding:
    each step in the hardware order (swap, crop, DTC, padding with zeros)."""
    cfg = """aipp_op {
        aipp_mode : static
        input_format : RGB888_U8
        src_image_size_w : 10
        src_image_size_h : 7
        rbuv_swap_switch : true
        crop : true
        load_start_pos_w : 3
        load_start_pos_h : 1
        crop_size_w : 6
        crop_size_h : 4
        padding : true
        top_padding_size : 1
        bottom_padding_size : 1
        left_padding_size : 2
        right_padding_size : 0
        mean_chn_0 : 10
        mean_chn_1 : 20
        mean_chn_2 : 30
        var_reci_chn_0 : 0.5
        var_reci_chn_1 : 0.3
        var_reci_chn_2 : 2.0
    }"""
    rc, err, om = _convert(tmp_path, capsys, cfg, h=6, w=8)
    assert rc == 0, err
    pic = np.random.default_rng(5).integers(0, 256, (7, 10, 3), dtype=np.uint8)
    got, mid, desc = _run(ready, om, pic.tobytes())
    assert ready.mdl.get_input_size_by_index(desc, 0) == 7 * 10 * 3
    planes = pic[1:5, 3:9, ::-1].transpose(2, 0, 1).astype(np.float32)  # B, G, R
    dtc = (planes - np.array([10, 20, 30], np.float32).reshape(3, 1, 1)) * np.array(
        [0.5, 0.3, 2.0], np.float32).reshape(3, 1, 1)
    want = np.zeros((3, 6, 8), np.float32)
    want[:, 1:5, 2:8] = dtc.astype(np.float16)
    np.testing.assert_array_equal(got.reshape(3, 6, 8), want)
    assert not np.array_equal(want[1, 1:5, 2:8], dtc[1])  # float16 rounding is visible
    info = ok(ready.mdl.get_first_aipp_info(mid, 0))
    assert (info["inputFormat"], info["srcImageSizeW"], info["srcImageSizeH"]) == \
        (ACL_RGB888_U8, 10, 7)
    assert (info["cropSwitch"], info["loadStartPosW"], info["cropSizeH"]) == (1, 3, 4)
    assert (info["paddingSwitch"], info["leftPaddingSize"], info["topPaddingSize"]) == (1, 2, 1)
    assert info["rbuvSwapSwitch"] == 1 and info["varReciChn2"] == 2.0
    assert info["outDims"][0]["aippOutdims"]["dims"] == [1, 3, 6, 8]


def test_aipp_type_and_info(ready: ModuleType, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """get_aipp_type says static AIPP on the converted input; a model without AIPP says
    none, its get_first_aipp_info is (None, 145015); bad index 145000, bad model 145003."""
    rc, err, om = _convert(tmp_path, capsys, SAMPLE_CFG % (8, 8))
    assert rc == 0, err
    mid = ok(ready.mdl.load_from_file(str(om)))
    assert ready.mdl.get_aipp_type(mid, 0) == (ACL_DATA_WITH_STATIC_AIPP, 0xFFFFFFFF, 0)
    info = ok(ready.mdl.get_first_aipp_info(mid, 0))
    assert info["inputFormat"] == ACL_YUV420SP_U8 and info["cscSwitch"] == 1
    assert (info["matrixR0C0"], info["matrixR0C1"], info["inputBias0"]) == (298, 516, 16)
    assert (info["minChn0"], info["minChn2"]) == (123.0, 104.0)
    assert (info["srcDimNum"], info["shapeCount"]) == (4, 1)
    assert ready.mdl.get_aipp_type(mid, 1)[-1] == ACL_ERROR_GE_PARAM_INVALID
    assert ready.mdl.get_aipp_type(4242, 0)[-1] == ACL_ERROR_GE_EXEC_MODEL_ID_INVALID
    plain = tmp_path / "plain"
    assert atc.main([f"--model={_flatten_net(tmp_path, 3, 8, 8)}", "--framework=5",
                     f"--output={plain}", "--soc_version=Ascend310"]) == 0
    pid = ok(ready.mdl.load_from_file(str(plain) + ".om"))
    assert ready.mdl.get_aipp_type(pid, 0) == (ACL_DATA_WITHOUT_AIPP, 0xFFFFFFFF, 0)
    assert ready.mdl.get_first_aipp_info(pid, 0) == (None, ACL_ERROR_GE_AIPP_NOT_EXIST)


# ------------------------------------------------------------------------- dynamic AIPP
def test_dynamic_aipp_parameter_checks(ready: ModuleType) -> None:
    """The setters' ranges and codes (acl_aipp.cpp): 0 on good values, 100000 on a value out
    of range, a switch other than 0/1 or a batch index not below the batch count."""
    mdl = ready.mdl
    assert mdl.create_aipp(0) == 0
    assert mdl.create_aipp(1 << 40) == 0  # real ACL cannot allocate it either: NULL
    assert mdl.get_aipp_data_size(1 << 62)[-1] == ACL_ERROR_INVALID_PARAM  # size_t overflow
    p = mdl.create_aipp(2)
    assert p != 0
    assert mdl.get_aipp_data_size(1) == (160, 0) and mdl.get_aipp_data_size(2) == (256, 0)
    assert mdl.get_aipp_data_size(0)[-1] == ACL_ERROR_INVALID_PARAM
    bad = ACL_ERROR_INVALID_PARAM
    assert mdl.set_aipp_input_format(p, ACL_YUV420SP_U8) == 0
    assert mdl.set_aipp_input_format(p, 99) == bad
    good_csc = (1, 298, 516, 0, 298, -100, -208, 298, 0, 409, 0, 0, 0, 16, 128, 128)
    assert mdl.set_aipp_csc_params(p, *good_csc) == 0
    assert mdl.set_aipp_csc_params(p, 2, *good_csc[1:]) == bad
    assert mdl.set_aipp_csc_params(p, 1, 32700, *good_csc[2:]) == bad
    assert mdl.set_aipp_csc_params(p, 0, 32700, *good_csc[2:]) == 0  # off: not checked
    assert mdl.set_aipp_rbuv_swap_switch(p, 1) == 0
    assert mdl.set_aipp_ax_swap_switch(p, 2) == bad
    assert mdl.set_aipp_src_image_size(p, 224, 224) == 0
    assert mdl.set_aipp_src_image_size(p, 1, 224) == bad
    assert mdl.set_aipp_src_image_size(p, 224, 4097) == bad
    assert mdl.set_aipp_crop_params(p, 1, 0, 0, 224, 224, 1) == 0
    assert mdl.set_aipp_crop_params(p, 1, 0, 0, 224, 224, 2) == bad  # batch index
    assert mdl.set_aipp_crop_params(p, 1, 4096, 0, 224, 224, 0) == bad
    assert mdl.set_aipp_padding_params(p, 1, 0, 0, 32, 32, 0) == 0
    assert mdl.set_aipp_padding_params(p, 1, 33, 0, 0, 0, 0) == bad
    assert mdl.set_aipp_scf_params(p, 1, 16, 16, 1920, 16, 0) == 0
    assert mdl.set_aipp_scf_params(p, 1, 16, 16, 1921, 16, 0) == bad
    assert mdl.set_aipp_dtc_pixel_mean(p, 104, 117, 123, 0, 0) == 0
    assert mdl.set_aipp_dtc_pixel_mean(p, 256, 0, 0, 0, 0) == bad
    assert mdl.set_aipp_dtc_pixel_min(p, 0.0, 0.0, 255.0, 0.0, 1) == 0
    assert mdl.set_aipp_dtc_pixel_min(p, -1.0, 0.0, 0.0, 0.0, 1) == bad
    assert mdl.set_aipp_pixel_var_reci(p, 1.0, 1.0, -65504.0, 1.0, 0) == 0
    assert mdl.set_aipp_pixel_var_reci(p, 70000.0, 1.0, 1.0, 1.0, 0) == bad
    assert mdl.set_aipp_pixel_var_reci(p, 1.0, 1.0, 1.0, 1.0, 5) == bad
    assert mdl.set_aipp_src_image_size(0, 224, 224) == bad
    assert mdl.destroy_aipp(p) == 0
    assert mdl.destroy_aipp(p) == bad
    assert mdl.set_aipp_rbuv_swap_switch(p, 0) == bad  # destroyed


def test_set_input_aipp_on_models_without_dynamic_aipp(ready: ModuleType, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """set_input_aipp needs the dynamic AIPP input: a static-AIPP input and a plain model get
    100000; set_aipp_by_input_index on an input without dynamic AIPP gets 500000."""
    rc, err, om = _convert(tmp_path, capsys, SAMPLE_CFG % (8, 8))
    assert rc == 0, err
    mid = ok(ready.mdl.load_from_file(str(om)))
    p = ready.mdl.create_aipp(1)
    ds = ready.mdl.create_dataset()
    dev = ok(ready.rt.malloc(96, ACL_MEM_MALLOC_NORMAL_ONLY))
    ok(ready.mdl.add_dataset_buffer(ds, ready.create_data_buffer(dev, 96)))
    assert ready.mdl.set_input_aipp(mid, 0, 0, p) == ACL_ERROR_INVALID_PARAM  # null dataset
    assert ready.mdl.set_input_aipp(mid, ds, 0, 0) == ACL_ERROR_INVALID_PARAM  # null params
    assert ready.mdl.set_input_aipp(mid, ds, 0, p) == ACL_ERROR_INVALID_PARAM
    assert ready.mdl.set_input_aipp(mid, ds, 3, p) == ACL_ERROR_GE_PARAM_INVALID
    assert ready.mdl.set_aipp_by_input_index(mid, ds, 0, p) == ACL_ERROR_FAILURE
    assert ready.mdl.set_aipp_by_input_index(mid, ds, 1, p) == ACL_ERROR_INVALID_PARAM


def _dev_dataset(acl: ModuleType, sizes: list[int]) -> tuple[int, list[int]]:
    ds = acl.mdl.create_dataset()
    ptrs = []
    for size in sizes:
        ptr = ok(acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY))
        ok(acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size)))
        ptrs.append(ptr)
    return ds, ptrs


def test_dynamic_aipp_model(ready: ModuleType, session: Any, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """aipp_mode: dynamic: the image input holds max_src_image_size bytes and the model gets
    ascend_dynamic_aipp_data (64 + 96 bytes for batch 1); set_input_aipp writes the
    parameters, and the execution converts with them (JPEG matrix, means, var_reci); without
    them the execution fails; parameters that do not fit are 100000, a short buffer 145012."""
    rc, err, om = _convert(tmp_path, capsys,
                           "aipp_op { aipp_mode : dynamic max_src_image_size : 1000 }")
    assert rc == 0, err
    mdl = ready.mdl
    mid = ok(mdl.load_from_file(str(om)))
    desc = mdl.create_desc()
    assert mdl.get_desc(desc, mid) == ACL_SUCCESS
    assert mdl.get_num_inputs(desc) == 2
    assert ok(mdl.get_input_index_by_name(desc, "ascend_dynamic_aipp_data")) == 1
    assert [mdl.get_input_size_by_index(desc, i) for i in (0, 1)] == [1000, 160]
    assert mdl.get_aipp_type(mid, 0) == (ACL_DATA_WITH_DYNAMIC_AIPP, 1, 0)
    assert mdl.get_aipp_type(mid, 1) == (ACL_DYNAMIC_AIPP_NODE, 0xFFFFFFFF, 0)
    ds, (pic_dev, _) = _dev_dataset(ready, [1000, 160])
    out_ds, (out_dev,) = _dev_dataset(ready, [3 * 8 * 8 * 4])
    assert mdl.execute(mid, ds, out_ds) != ACL_SUCCESS  # no parameters yet
    p = mdl.create_aipp(1)
    assert mdl.set_aipp_input_format(p, ACL_YUV420SP_U8) == 0
    jpeg = (256, 0, 359, 256, -88, -183, 256, 454, 0)
    assert mdl.set_aipp_csc_params(p, 1, *jpeg, 0, 0, 0, 0, 128, 128) == 0
    assert mdl.set_input_aipp(mid, ds, 1, p) == ACL_ERROR_INVALID_PARAM  # no source size
    assert mdl.set_aipp_src_image_size(p, 10, 8) == 0
    assert mdl.set_input_aipp(mid, ds, 1, p) == ACL_ERROR_INVALID_PARAM  # 10x8 != 8x8
    assert mdl.set_aipp_src_image_size(p, 8, 8) == 0
    assert mdl.set_aipp_dtc_pixel_mean(p, 10, 20, 30, 0, 0) == 0
    assert mdl.set_aipp_pixel_var_reci(p, 0.5, 0.5, 0.5, 1.0, 0) == 0
    assert mdl.set_input_aipp(mid, ds, 0, p) == ACL_ERROR_INVALID_PARAM  # not the params input
    assert mdl.set_input_aipp(mid, ds, 1, p) == ACL_SUCCESS
    pic = np.random.default_rng(9).integers(0, 256, 96, dtype=np.uint8)
    data = pic.tobytes()
    assert ready.rt.memcpy(pic_dev, 1000, ready.util.bytes_to_ptr(data), 96,
                           ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    assert mdl.execute(mid, ds, out_ds) == ACL_SUCCESS  # second execute
    host = bytes(3 * 8 * 8 * 4)
    assert ready.rt.memcpy(ready.util.bytes_to_ptr(host), len(host), out_dev, len(host),
                           ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    y = pic[:64].reshape(8, 8).astype(np.int64)
    uv = pic[64:].reshape(4, 4, 2).astype(np.int64) - 128
    u, v = (uv[..., k].repeat(2, 0).repeat(2, 1) for k in (0, 1))
    rgb = np.clip(np.stack([(256 * y + 359 * v) >> 8, (256 * y - 88 * u - 183 * v) >> 8,
                            (256 * y + 454 * u) >> 8]), 0, 255).astype(np.float32)
    want = ((rgb - np.array([10, 20, 30], np.float32).reshape(3, 1, 1)) * 0.5).astype(
        np.float16).astype(np.float32)
    np.testing.assert_array_equal(np.frombuffer(host, np.float32).reshape(3, 8, 8), want)
    assert mdl.set_aipp_by_input_index(mid, ds, 0, p) == ACL_SUCCESS
    two = mdl.create_aipp(2)
    assert mdl.set_input_aipp(mid, ds, 1, two) == ACL_ERROR_INVALID_PARAM  # batch 2 != 1
    short, _ = _dev_dataset(ready, [1000, 100])
    assert mdl.set_input_aipp(mid, short, 1, p) == ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID
    # the model reads the 96 bytes of the picture, not all of max_src_image_size: only the
    # execution without parameters read never-written memory (both of its buffers)
    reads = [f for f in session.finish().findings() if f.kind == "uninitialized_read"]
    second = Path(__file__).read_text().splitlines().index(
        "    assert mdl.execute(mid, ds, out_ds) == ACL_SUCCESS  # second execute") + 1
    assert reads and all(f.line != second for f in reads)
    assert sum("2 device allocations" in f.message for f in reads) == 1


def test_related_input_name_picks_the_input(ready: ModuleType, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """related_input_name names the input to convert (GE ConvertRelatedInputNameToRank)."""
    rc, err, om = _convert(tmp_path, capsys, (SAMPLE_CFG % (8, 8)).replace(
        "related_input_rank : 0", "related_input_name : x"))
    assert rc == 0, err
    mid = ok(ready.mdl.load_from_file(str(om)))
    assert ready.mdl.get_aipp_type(mid, 0) == (ACL_DATA_WITH_STATIC_AIPP, 0xFFFFFFFF, 0)


def test_aipp_is_a_costed_layer(session: Any, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """The AIPP runs as the model's first layer through the existing cost model: its row
    counts 8 flops per output element and the picture plus the float output, and the
    execution lasts longer than the same network without AIPP."""
    from acl_lab.runtime.costs import execution_cost
    from acl_lab.runtime.om import load_om
    rc, err, path = _convert(tmp_path, capsys, SAMPLE_CFG % (8, 8))
    assert rc == 0, err
    om = load_om(path)
    assert om.cost()[0] == ("x_aipp", "InsertedAipp", 8 * 3 * 8 * 8, 96 + 3 * 8 * 8 * 4)
    plain = tmp_path / "plain"
    assert atc.main([f"--model={tmp_path / 'net.onnx'}", "--framework=5", f"--output={plain}",
                     "--soc_version=Ascend310"]) == 0
    base = load_om(str(plain) + ".om")
    p = session.profile
    assert execution_cost(p, om).duration_ns > execution_cost(p, base).duration_ns


def test_static_aipp_with_dynamic_batch(ready: ModuleType, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Static AIPP on a dynamic-batch input: the picture input keeps the -1 batch, its size
    is the largest gear's pictures (2 x 96 bytes)."""
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"], name="flat")], "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 192])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "dyn.onnx"))
    (tmp_path / "aipp.cfg").write_text(SAMPLE_CFG % (8, 8))
    out = tmp_path / "dyn_aipp"
    assert atc.main([f"--model={tmp_path / 'dyn.onnx'}", "--framework=5", f"--output={out}",
                     "--soc_version=Ascend310", "--input_shape=x:-1,3,8,8",
                     "--dynamic_batch_size=1,2",
                     f"--insert_op_conf={tmp_path / 'aipp.cfg'}"]) == 0, capsys.readouterr()
    mid = ok(ready.mdl.load_from_file(str(out) + ".om"))
    desc = ready.mdl.create_desc()
    assert ready.mdl.get_desc(desc, mid) == ACL_SUCCESS
    assert ready.mdl.get_input_size_by_index(desc, 0) == 2 * 96
    assert ok(ready.mdl.get_input_dims(desc, 0))["dims"] == [-1, 8, 8, 3]
    assert ok(ready.mdl.get_input_dims_v2(desc, 0))["dims"] == [-1, 12, 8, 1]
    info = ok(ready.mdl.get_first_aipp_info(mid, 0))
    assert info["shapeCount"] == 2
    assert [d["srcDims"]["dims"][0] for d in info["outDims"]] == [1, 2]


def test_xrgb_to_yuv_and_gray(ready: ModuleType, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    """XRGB8888_U8 (the pad byte first) with csc_switch and no matrix: GE's default RGB ->
    YUV matrix, (M x RGB) >> 8 + output_bias 16/128/128; YUV400_U8 into a 1-channel network
    is the gray plane minus the mean."""
    cfg = ("aipp_op { aipp_mode : static input_format : XRGB8888_U8 csc_switch : true "
           "src_image_size_w : 4 src_image_size_h : 2 }")
    rc, err, om = _convert(tmp_path, capsys, cfg, h=2, w=4)
    assert rc == 0, err
    pic = np.random.default_rng(4).integers(0, 256, (2, 4, 4), dtype=np.uint8)
    got, _, desc = _run(ready, om, pic.tobytes())
    assert ready.mdl.get_input_size_by_index(desc, 0) == 2 * 4 * 4
    rgb = pic[..., 1:].transpose(2, 0, 1).astype(np.int64)
    m = np.array([[66, 129, 25], [-38, -74, 112], [112, -94, -18]])
    yuv = np.clip((np.einsum("ij,jhw->ihw", m, rgb) >> 8) + np.array([16, 128, 128]).reshape(
        3, 1, 1), 0, 255)
    np.testing.assert_array_equal(got.reshape(3, 2, 4), yuv.astype(np.float32))
    gray_dir = tmp_path / "gray"
    gray_dir.mkdir()
    rc, err, om = _convert(gray_dir, capsys, "aipp_op { aipp_mode : static input_format : "
                           "YUV400_U8 mean_chn_0 : 100 }", c=1, h=3, w=5)
    assert rc == 0, err
    plane = np.random.default_rng(6).integers(0, 256, (3, 5), dtype=np.uint8)
    got, _, _ = _run(ready, om, plane.tobytes())
    np.testing.assert_array_equal(got.reshape(3, 5), plane.astype(np.float32) - 100)


def test_a_float_tensor_fed_to_an_aipp_model_is_reported(ready: ModuleType, session: Any,
                                                         tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """The mistake of feeding the network's float tensor (3 x 8 x 8 x 4 bytes) to a model
    whose input is the 96-byte NV12 picture: the execution reads the first 96 bytes and the
    size_mismatch warning says the input is the raw picture the AIPP converts."""
    rc, err, om = _convert(tmp_path, capsys, SAMPLE_CFG % (8, 8))
    assert rc == 0, err
    mid = ok(ready.mdl.load_from_file(str(om)))
    tensor = np.zeros((1, 3, 8, 8), np.float32).tobytes()
    ins, (dev,) = _dev_dataset(ready, [len(tensor)])
    outs, _ = _dev_dataset(ready, [3 * 8 * 8 * 4])
    assert ready.rt.memcpy(dev, len(tensor), ready.util.bytes_to_ptr(tensor), len(tensor),
                           ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    assert ready.mdl.execute(mid, ins, outs) == ACL_SUCCESS
    (f,) = [f for f in session.finish().findings() if f.kind == "size_mismatch"]
    assert f.severity == "warning"
    assert "holds 768 bytes, the model reads 96" in f.message
    assert "raw YUV420SP_U8 8x8 picture the model's AIPP converts" in f.message


@pytest.mark.parametrize(("broken", "infer_reads_it"),
                         [("src_w", True), ("pad", True), ("matrix_r0c0", False)])
def test_inserted_aipp_with_malformed_attributes_is_an_op_error(broken: str,
                                                                infer_reads_it: bool) -> None:
    """The InsertedAipp operator's infer and compute report attributes that are missing or
    of the wrong type as OpError 100000 naming the operator, never a KeyError or TypeError
    (the CSC matrix is read only by compute)."""
    from acl_lab.runtime import aipp
    from acl_lab.runtime.opdefs import OpError, TensorSpec, get_op

    (cfg,) = parse_config("aipp_op { aipp_mode: static input_format: RGB888_U8 "
                          "csc_switch: true src_image_size_w: 4 src_image_size_h: 2 }")
    good = aipp._attrs_of(cfg, aipp.geometry(cfg, TensorSpec("float32", (1, 3, 2, 4), 0)))
    pic = np.zeros((1, 2, 4, 3), np.uint8)
    op = get_op(aipp.OP_TYPE)
    assert op.compute([pic], good)[0].shape == (1, 3, 2, 4)
    attrs = dict(good)
    if broken == "pad":
        attrs["pad"] = 7  # not four sizes
    else:
        del attrs[broken]
    calls = [lambda: op.compute([pic], attrs)]
    if infer_reads_it:
        calls.append(lambda: op.infer([TensorSpec("uint8", pic.shape)], attrs))
    for call in calls:
        with pytest.raises(OpError) as info:
            call()
        assert info.value.code == ACL_ERROR_INVALID_PARAM
        assert aipp.OP_TYPE in info.value.message
