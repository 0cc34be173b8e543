"""The emulated ATC (acl_lab.atc): ONNX -> .om conversion, messages and exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from acl_lab import atc
from acl_lab.runtime.om import load_om

START = "ATC start working now, please wait for a moment."
SUCCESS = "ATC run success, welcome to the next use."
FAILED = "ATC run failed, Please check the detail log, Try 'atc --help' for more information"


def _w(rng: np.random.Generator, *shape: int, scale: float = 0.3) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _save(tmp_path: Path, nodes: list[Any], inputs: list[Any], outputs: list[Any],
          inits: dict[str, np.ndarray], name: str = "net", opset: int = 17) -> Path:
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _cnn(tmp_path: Path) -> Path:
    """Conv + Relu + MaxPool + Flatten + Gemm + Softmax, with asymmetric conv pads."""
    rng = np.random.default_rng(0)
    inits = {"W": _w(rng, 4, 3, 3, 3), "B": _w(rng, 4), "FC": _w(rng, 10, 48), "FB": _w(rng, 10)}
    nodes = [
        # ONNX pads are [top, left, bottom, right]: 1, 0, 2, 1 -> 9x6 from 8x7
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv0", pads=[1, 0, 2, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu0"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool0", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flat0"),
        helper.make_node("Gemm", ["f", "FC", "FB"], ["g"], name="fc0", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax0", axis=-1),
    ]
    return _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 [1, 3, 8, 7])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits, "cnn")


def _reference(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return list(ReferenceEvaluator(onnx.load(str(path))).run(None, feeds))


def _atc(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = atc.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _base(model: Path, output: Path) -> list[str]:
    return [f"--model={model}", "--framework=5", f"--output={output}",
            "--soc_version=Ascend310"]


# ------------------------------------------------------------------------- success
def test_cnn_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    out = tmp_path / "out" / "cnn"
    rc, stdout, stderr = _atc(capsys, *_base(src, out), "--input_shape=x:1,3,8,7")
    assert rc == 0, stderr
    lines = stdout.splitlines()
    assert lines[0] == START and lines[-1] == SUCCESS
    assert stderr == ""
    om = out.with_name("cnn.om")
    assert om.is_file()
    m = load_om(om)
    assert [n.op for n in m.nodes] == ["Conv2D", "Relu", "MaxPool", "Flatten", "MatMul",
                                       "SoftmaxV2"]
    assert m.nodes[0].attrs["pads"] == [1, 2, 0, 1]  # CANN order [top, bottom, left, right]
    assert m.nodes[0].attrs["strides"] == [1, 1, 1, 1]
    assert m.nodes[2].attrs["padding"] == "VALID"
    assert m.nodes[4].attrs["transpose_x2"] is True and len(m.nodes[4].inputs) == 3
    assert m.soc_version == "Ascend310"
    assert m.inputs[0].name == "x" and m.inputs[0].format == 0  # NCHW
    assert m.outputs[0].name == "y"
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 7)).astype(np.float32)
    (y,) = m.run([x])
    (ref,) = _reference(src, {"x": x})
    assert y.shape == ref.shape == (1, 10)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-6)
    # the same conversion again gives the same bytes
    rc, _, _ = _atc(capsys, *_base(src, tmp_path / "again" / "cnn"), "--input_shape=x:1,3,8,7")
    assert rc == 0
    assert (tmp_path / "again" / "cnn.om").read_bytes() == om.read_bytes()


def test_space_separated_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    rc, stdout, _ = _atc(capsys, "--model", str(src), "--framework", "5", "--output",
                         str(tmp_path / "m"), "--soc_version", "Ascend310P3")
    assert rc == 0 and stdout.splitlines()[-1] == SUCCESS
    assert load_om(tmp_path / "m.om").soc_version == "Ascend310P3"


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--help", "--h"):
        rc, stdout, _ = _atc(capsys, flag)
        assert rc == 0
        assert "--soc_version" in stdout and "--input_shape" in stdout


def _many_ops(tmp_path: Path) -> Path:
    """Most supported op types in one graph (opset 20 for Gelu)."""
    rng = np.random.default_rng(3)
    inits = {
        "W1": _w(rng, 6, 4, 3, 3), "B1": _w(rng, 6),
        "Wg": _w(rng, 6, 3, 3, 3),  # grouped conv, groups=2 (no bias)
        "bn_s": (1 + _w(rng, 6)), "bn_b": _w(rng, 6), "bn_m": _w(rng, 6),
        "bn_v": (1 + np.abs(_w(rng, 6))),
        "shape": np.array([0, 6, -1], np.int64),
        "ln_s": 1 + _w(rng, 16), "ln_b": _w(rng, 16),
        "red_axes": np.array([2], np.int64), "rm_axes": np.array([1], np.int64),
        "M": _w(rng, 16, 5), "k": np.array(0.5, np.float32),
        "sq_axes": np.array([3], np.int64), "us_axes": np.array([2, -1], np.int64),
    }
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "W1", "B1"], ["c1"], name="conv_same", auto_pad="SAME_UPPER",
          strides=[2, 2]),                                              # 6x4x4
        n("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], name="bn"),
        n("Sigmoid", ["bn"], ["s1"], name="sig"),
        n("Conv", ["s1", "Wg"], ["c2"], name="conv_group", group=2, pads=[1, 1, 1, 1]),
        n("Tanh", ["c2"], ["t1"], name="tanh"),
        n("AveragePool", ["t1"], ["ap"], name="avg", kernel_shape=[3, 3], strides=[1, 1],
          pads=[1, 1, 1, 1], count_include_pad=1),                      # 6x4x4
        n("MaxPool", ["ap"], ["mp"], name="maxp", kernel_shape=[3, 3], strides=[2, 2],
          auto_pad="SAME_UPPER"),                                       # 6x2x2
        n("Concat", ["mp", "mp"], ["cc"], name="concat", axis=2),       # 6x4x2
        n("Transpose", ["cc"], ["tr"], name="transpose", perm=[0, 1, 3, 2]),  # 6x2x4
        n("Reshape", ["tr", "shape"], ["rs"], name="reshape"),          # [1, 6, 8]
        n("Concat", ["rs", "rs"], ["rs2"], name="concat2", axis=2),     # [1, 6, 16]
        n("LayerNormalization", ["rs2", "ln_s", "ln_b"], ["ln"], name="ln", axis=-1,
          epsilon=1e-5),
        n("Gelu", ["ln"], ["ge"], name="gelu", approximate="tanh"),
        n("MatMul", ["ge", "M"], ["mm"], name="matmul3d"),               # [1, 6, 5]
        n("Mul", ["mm", "k"], ["mu"], name="mul"),
        n("Identity", ["mu"], ["id"], name="identity"),
        n("ReduceSum", ["id", "red_axes"], ["rsum"], name="rsum", keepdims=1),  # [1, 6, 1]
        n("Sub", ["id", "rsum"], ["sb"], name="sub"),
        n("Div", ["sb", "k"], ["dv"], name="div"),
        n("ReduceMean", ["dv", "rm_axes"], ["rmean"], name="rmean", keepdims=0),  # [1, 5]
        n("Unsqueeze", ["rmean", "us_axes"], ["us"], name="unsq"),       # [1, 5, 1, 1]
        n("GlobalAveragePool", ["us"], ["gap"], name="gap"),
        n("Squeeze", ["gap", "sq_axes"], ["sqz"], name="sqz"),          # [1, 5, 1]
        n("Flatten", ["sqz"], ["fl"], name="flat"),
        n("Cast", ["fl"], ["y"], name="cast", to=TensorProto.FLOAT16),
        n("Add", ["mu", "mu"], ["y2"], name="add"),
    ]
    return _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 [1, 4, 8, 8])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 5]),
                  helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 6, 5])],
                 inits, "many", opset=20)


def test_many_ops_match_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _many_ops(tmp_path)
    rc, _, stderr = _atc(capsys, *_base(src, tmp_path / "many"))
    assert rc == 0, stderr
    m = load_om(tmp_path / "many.om")
    ops = [n.op for n in m.nodes]
    assert "BatchNormalization" not in ops and ops.count("Conv2D") == 2
    assert ops.count("Mul") == 1  # the batch norm was folded into conv_same
    assert {"Concat", "Transpose", "Reshape", "LayerNorm", "Gelu", "BatchMatMul",
            "ReduceSum", "ReduceMean", "GlobalAveragePool", "Flatten", "Cast", "AvgPool",
            "MaxPool", "Sigmoid", "Tanh", "Sub", "Div", "Add"} <= set(ops)
    assert [o.name for o in m.outputs] == ["y", "y2"]
    assert m.outputs[0].dtype == "float16"
    x = np.random.default_rng(4).standard_normal((1, 4, 8, 8)).astype(np.float32)
    ys = m.run([x])
    refs = _reference(src, {"x": x})
    np.testing.assert_allclose(ys[0].astype(np.float32), refs[0].astype(np.float32),
                               rtol=2e-3, atol=1e-3)  # float16 output
    np.testing.assert_allclose(ys[1], refs[1], rtol=1e-4, atol=1e-5)


def test_explicit_maxpool_pads_and_gemm_variants(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(5)
    inits = {"A": _w(rng, 12, 7), "C": _w(rng, 1, 7), "C2": _w(rng, 2, 7)}
    n = helper.make_node
    nodes = [
        n("MaxPool", ["x"], ["p"], name="pool_pad1", kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1]),                                        # torchvision stem pool
        n("Flatten", ["p"], ["f"], name="flat"),                      # [2, 12]
        n("Gemm", ["f", "A", "C"], ["g1"], name="gemm_bias", alpha=0.5, beta=2.0),
        n("Gemm", ["f", "A", "C2"], ["g2"], name="gemm_matrix_c"),
        n("Add", ["g1", "g2"], ["y"], name="add"),
    ]
    src = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [2, 3, 4, 3])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7])], inits, "pp")
    rc, _, stderr = _atc(capsys, *_base(src, tmp_path / "pp"))
    assert rc == 0, stderr
    m = load_om(tmp_path / "pp.om")
    assert [n.op for n in m.nodes][:3] == ["Concat", "Concat", "MaxPool"]
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(m.run([x])[0], _reference(src, {"x": x})[0], rtol=1e-4,
                               atol=1e-6)


def test_converter_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ReduceMean's attribute axes (opset < 18), Constant/Dropout/Identity, batch norms that
    cannot be folded (shared weight, no conv), Gemm with a computed B, an output cast to FP16.

    Opset 17: onnx's ReferenceEvaluator gets opset 9-13 BatchNormalization wrong (the schema's
    default momentum makes it mix in batch statistics)."""
    rng = np.random.default_rng(11)
    bn = {f"bn_{k}": v for k, v in (("s", 1 + _w(rng, 3)), ("b", _w(rng, 3)),
                                    ("m", _w(rng, 3)), ("v", 1 + np.abs(_w(rng, 3))))}
    inits = {"W": _w(rng, 3, 3, 1, 1), **bn}
    n = helper.make_node
    bn_in = ["bn_s", "bn_b", "bn_m", "bn_v"]
    nodes = [
        n("Conv", ["x", "W"], ["c1"], name="conv_a"),
        n("Conv", ["x", "W"], ["c2"], name="conv_b"),  # shares W: no folding
        n("BatchNormalization", ["c1", *bn_in], ["b1"], name="bn_a", epsilon=1e-3),
        n("Relu", ["c2"], ["r2"], name="relu"),
        n("BatchNormalization", ["r2", *bn_in], ["b2"], name="bn_b"),  # after Relu
        n("Dropout", ["b2"], ["d2"], name="dropout"),
        n("Constant", [], ["two"], name="const", value=numpy_helper.from_array(
            np.array(2.0, np.float32))),
        n("Mul", ["b1", "two"], ["m1"], name="mul"),
        n("Add", ["m1", "d2"], ["s"], name="add"),                      # [1, 3, 4, 5]
        n("ReduceMean", ["s"], ["rm"], name="rmean", axes=[2], keepdims=0),  # [1, 3, 5]
        n("Transpose", ["rm"], ["rt"], name="tr", perm=[0, 2, 1]),     # [1, 5, 3]
        n("Squeeze", ["rt", "ax0"], ["sq"], name="sq"),                 # [5, 3]
        n("Gemm", ["sq", "sq"], ["g"], name="gemm_xx", transB=1, alpha=0.25),  # [5, 5]
        n("Identity", ["g"], ["y"], name="ident"),
    ]
    inits["ax0"] = np.array([0], np.int64)
    src = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [1, 3, 4, 5])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 5])], inits, "v13",
                opset=17)
    rc, _, stderr = _atc(capsys, *_base(src, tmp_path / "v13"), "--output_type=FP16")
    assert rc == 0, stderr
    m = load_om(tmp_path / "v13.om")
    assert [o.name for o in m.outputs] == ["y"] and m.outputs[0].dtype == "float16"
    assert [n.op for n in m.nodes].count("Mul") == 4  # 2 unfolded batch norms, x2, alpha
    x = np.random.default_rng(12).standard_normal((1, 3, 4, 5)).astype(np.float32)
    (y,) = m.run([x])
    (ref,) = _reference(src, {"x": x})
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def test_opset11_softmax_flattens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)]
    src = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [2, 3, 4])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])], {}, "sm",
                opset=11)
    rc, _, stderr = _atc(capsys, *_base(src, tmp_path / "sm"))
    assert rc == 0, stderr
    m = load_om(tmp_path / "sm.om")
    assert m.nodes[0].attrs["axes"] == [1, 2]  # opset < 13: softmax over dims 1.. jointly
    x = np.random.default_rng(13).standard_normal((2, 3, 4)).astype(np.float32)
    # numpy reference: onnx's ReferenceEvaluator applies opset-13 semantics to every version
    flat = np.exp(x.reshape(2, 12).astype(np.float64))
    want = (flat / flat.sum(axis=1, keepdims=True)).reshape(2, 3, 4)
    np.testing.assert_allclose(m.run([x])[0], want, rtol=1e-5)


def test_gelu_erf_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = [helper.make_node("Gelu", ["x"], ["y"], name="g")]
    src = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], {}, "ge",
                opset=20)
    rc, stdout, _ = _atc(capsys, *_base(src, tmp_path / "ge"))
    assert rc == 0 and "tanh approximation" in stdout


def _mlp_onnx(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    inits = {"W1": _w(rng, 16, 8), "b1": _w(rng, 8), "W2": _w(rng, 8, 3), "b2": _w(rng, 3)}
    n = helper.make_node
    nodes = [n("MatMul", ["x", "W1"], ["h"], name="mm1"), n("Add", ["h", "b1"], ["hb"],
                                                             name="add1"),
             n("Relu", ["hb"], ["r"], name="relu"),
             n("Gemm", ["r", "W2", "b2"], ["y"], name="fc2")]
    return _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 ["N", 16])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], inits,
                 "mlp")


def test_dynamic_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _mlp_onnx(tmp_path)
    rc, _, stderr = _atc(capsys, *_base(src, tmp_path / "mlp"), "--input_shape=x:-1,16",
                         "--dynamic_batch_size=1,4", "--input_format=ND")
    assert rc == 0, stderr
    m = load_om(tmp_path / "mlp.om")
    assert m.dynamic_batch == [1, 4]
    assert m.inputs[0].shape == (-1, 16) and m.outputs[0].shape == (-1, 3)
    assert m.input_size(0) == 4 * 16 * 4
    x = np.random.default_rng(8).standard_normal((4, 16)).astype(np.float32)
    (y,) = m.run([x], batch=4)
    assert y.shape == (4, 3)
    np.testing.assert_allclose(y, _reference(src, {"x": x})[0], rtol=1e-4, atol=1e-6)
    (y1,) = m.run([x[:1]], batch=1)
    np.testing.assert_allclose(y1, y[:1], rtol=1e-6)


def test_output_type_fp16(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    rc, _, stderr = _atc(capsys, *_base(src, tmp_path / "h"), "--output_type=FP16",
                         "--precision_mode=allow_fp32_to_fp16", "--log=error")
    assert rc == 0, stderr
    m = load_om(tmp_path / "h.om")
    assert m.nodes[-1].op == "Cast" and m.outputs[0].name == "y"
    assert m.outputs[0].dtype == "float16" and m.output_size(0) == 20
    assert m.meta["precision_mode"] == "allow_fp32_to_fp16"


# ------------------------------------------------------------------------- failures
def _failed(rc: int, stdout: str, stderr: str) -> None:
    assert rc == 255
    assert stdout.splitlines()[0] == START
    assert SUCCESS not in stdout
    assert stderr.splitlines()[0] == FAILED


def test_unsupported_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(9)
    nodes = [helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="my_lstm", hidden_size=4)]
    src = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [2, 1, 3])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 1, 4])],
                {"W": _w(rng, 1, 16, 3), "R": _w(rng, 1, 16, 4)}, "lstm")
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "lstm"))
    _failed(rc, stdout, stderr)
    assert "'LSTM'" in stderr and "'my_lstm'" in stderr
    assert not (tmp_path / "lstm.om").exists()


def test_missing_soc_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    rc, stdout, stderr = _atc(capsys, f"--model={src}", "--framework=5",
                              f"--output={tmp_path / 'x'}")
    _failed(rc, stdout, stderr)
    assert ("E10054: The required parameter --soc_version for ATC is empty. Another possible "
            "reason is that the values of some parameters are not enclosed by quotation marks "
            '("").') in stderr


def test_missing_model_and_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc, stdout, stderr = _atc(capsys, "--framework=5", "--soc_version=Ascend310")
    _failed(rc, stdout, stderr)
    assert "--model for ATC is empty" in stderr and "--output for ATC is empty" in stderr


def test_framework(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    args = [f"--model={src}", f"--output={tmp_path / 'x'}", "--soc_version=Ascend310"]
    rc, stdout, stderr = _atc(capsys, *args)
    _failed(rc, stdout, stderr)
    assert "E10007" in stderr and "5(Onnx)" in stderr
    rc, stdout, stderr = _atc(capsys, *args, "--framework=3")
    _failed(rc, stdout, stderr)
    assert "E10007" in stderr and "TensorFlow" in stderr and "not emulated" in stderr


def test_wrong_input_shape_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "x"),
                              "--input_shape=actual_input_1:1,3,8,7")
    _failed(rc, stdout, stderr)
    assert "actual_input_1" in stderr and "its inputs are: x" in stderr


def test_flag_value_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _cnn(tmp_path)
    base = _base(src, tmp_path / "x")
    cases = {
        "--input_shape=x:1,3,8": "3 were given",
        "--input_shape=x:1~4,3,8,7": "not emulated",
        "--input_shape=x:-1,3,8,7": "--dynamic_batch_size is not set",
        "--dynamic_batch_size=1,2": "E10004",  # GE: a dynamic model needs --input_shape
        "--output_type=FP64": "--output_type",
        "--input_format=NHWC": "NCHW, NCDHW or ND",
        "--log=verbose": "--log",
        "--mode=1": "only --mode=0",
        "--singleop=ops.json": "cannot read it",
        "--no_such_flag=1": "unknown command line flag 'no_such_flag'",
    }
    for flag, text in cases.items():
        rc, stdout, stderr = _atc(capsys, *base, flag)
        _failed(rc, stdout, stderr)
        assert text in stderr, (flag, stderr)
    rc, stdout, stderr = _atc(capsys, *_base(tmp_path / "missing.onnx", tmp_path / "x"))
    _failed(rc, stdout, stderr)
    assert "E10001" in stderr and "missing.onnx" in stderr
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf")
    rc, stdout, stderr = _atc(capsys, *_base(bad, tmp_path / "x"))
    _failed(rc, stdout, stderr)
    assert "not a readable ONNX model" in stderr


def test_unsupported_pool_padding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pads of 2 around a 3x3 window are neither VALID nor SAME (which would pad 1)
    nodes = [helper.make_node("AveragePool", ["x"], ["y"], name="avg_pad", kernel_shape=[3, 3],
                              pads=[2, 2, 2, 2])]
    src = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [1, 2, 5, 5])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 7, 7])], {}, "ap")
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "ap"))
    _failed(rc, stdout, stderr)
    assert "'avg_pad'" in stderr and "count_include_pad=0" in stderr


def test_op_rejecting_shapes_is_reported(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # the model's declared shapes are consistent, but --input_shape makes MatMul's K wrong
    src = _mlp_onnx(tmp_path)
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "x"), "--input_shape=x:2,15")
    _failed(rc, stdout, stderr)
    assert "'mm1' (MatMul)" in stderr and "float32[2, 15]" in stderr


def test_dynamic_input_without_input_shape(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    src = _mlp_onnx(tmp_path)
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "x"))
    _failed(rc, stdout, stderr)
    assert "--input_shape" in stderr and "'N'" in stderr


def _raw_save(tmp_path: Path, graph: Any, name: str) -> Path:
    """An ONNX file written without the checker (crafted models the checker would refuse)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def test_negative_initializer_dims_are_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A constant with dims [-5, 4] is refused at conversion, no .om written."""
    bad = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[-5, 4])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "neg",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [bad])
    src = _raw_save(tmp_path, graph, "neg")
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "neg"))
    _failed(rc, stdout, stderr)
    assert "initializer 'W' has dims [-5, 4]" in stderr
    assert not (tmp_path / "neg.om").exists()


def test_a_graph_without_inputs_is_refused(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Every graph input an initializer: refused at conversion (the loader would refuse
    the .om), no .om written."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["c"], ["y"], name="relu")], "noin", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.ones(2, np.float32), "c")])
    src = _raw_save(tmp_path, graph, "noin")
    rc, stdout, stderr = _atc(capsys, *_base(src, tmp_path / "noin"))
    _failed(rc, stdout, stderr)
    assert "the graph has no inputs" in stderr
    assert not (tmp_path / "noin.om").exists()
