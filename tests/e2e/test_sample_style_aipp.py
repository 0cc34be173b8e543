"""A program in the style of the level2 classification samples that feed DVPP output to a
model converted with ``atc --insert_op_conf=aipp.cfg`` (static AIPP; the samples'
caffe_model/aipp.cfg settings), run unmodified under ``acl-lab run``: it finishes, its
classes match an independent numpy/ONNX-reference pipeline, and it gets no finding (it
sizes the input by get_input_size_by_index, w*h*3/2, and releases everything)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from acl_lab import atc
from tests.e2e.test_cli_run import acl_lab_run, check_summary_schema, describe

SIZE = 16
CFG = f"""aipp_op {{
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
    src_image_size_w : {SIZE}
    src_image_size_h : {SIZE}
}}
"""


def _cnn(path: Path) -> None:
    """Conv 3x3 + Relu + global pooling + Gemm to 5 classes on a 3 x 16 x 16 input."""
    rng = np.random.default_rng(11)
    inits = {"W": (rng.standard_normal((4, 3, 3, 3)) * 0.1).astype(np.float32),
             "B": np.zeros(4, np.float32),
             "FC": (rng.standard_normal((5, 4)) * 0.5).astype(np.float32),
             "FB": np.zeros(5, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "FC", "FB"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                     [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _network_input(pic: np.ndarray) -> np.ndarray:
    """What the AIPP gives the network: NV12 -> B, G, R (ATC's default YUV420SP matrix,
    >> 8, saturated) minus min_chn, rounded through float16."""
    n = SIZE * SIZE
    y = pic[:n].reshape(SIZE, SIZE).astype(np.int64) - 16
    uv = pic[n:].reshape(SIZE // 2, SIZE // 2, 2).astype(np.int64) - 128
    u = uv[..., 0].repeat(2, 0).repeat(2, 1)
    v = uv[..., 1].repeat(2, 0).repeat(2, 1)
    bgr = np.clip(np.stack([(298 * y + 516 * u) >> 8, (298 * y - 100 * u - 208 * v) >> 8,
                            (298 * y + 409 * v) >> 8]), 0, 255).astype(np.float32)
    out = bgr - np.array([123, 117, 104], np.float32).reshape(3, 1, 1)
    return out.astype(np.float16).astype(np.float32)[None]


def test_aipp_classification_sample_style(tmp_path: Path) -> None:
    """Four NV12 pictures through the AIPP model: the input is 16*16*3/2 = 384 bytes, the
    classes are the reference pipeline's, and the run has no finding."""
    onnx_path = tmp_path / "cnn.onnx"
    _cnn(onnx_path)
    (tmp_path / "aipp.cfg").write_text(CFG)
    assert atc.main([f"--model={onnx_path}", "--framework=5", f"--output={tmp_path / 'cnn'}",
                     "--soc_version=Ascend310P3",
                     f"--insert_op_conf={tmp_path / 'aipp.cfg'}"]) == 0
    size = SIZE * SIZE * 3 // 2
    pics = np.random.default_rng(2).integers(0, 256, (4, size), dtype=np.uint8)
    # brighter or bluer pictures, so that the classes differ
    pics[1, :SIZE * SIZE] //= 4
    pics[2, SIZE * SIZE::2] = 250
    pics[3, SIZE * SIZE + 1::2] = 5
    (tmp_path / "frames.nv12").write_bytes(pics.tobytes())
    run = acl_lab_run(tmp_path, "samplestyle/classify_aipp.py", str(tmp_path / "cnn.om"),
                      str(tmp_path / "frames.nv12"))
    assert run.proc.returncode == 0, describe(run)
    check_summary_schema(run.summary)
    out = dict(line.split(" ", 1) for line in run.proc.stdout.splitlines() if " " in line)
    assert out["aipp"] == f"{SIZE}x{SIZE} {size}"
    ref = ReferenceEvaluator(onnx.load(str(onnx_path)))
    want = [int(ref.run(None, {"x": _network_input(p)})[0].argmax()) for p in pics]
    assert out["classes"].split() == [str(c) for c in want]
    assert len(set(want)) > 1  # the pictures tell the classes apart
    assert run.summary["findings"] == [], run.summary["findings"]
