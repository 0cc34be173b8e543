"""``acl-lab atc`` with gears: ``--dynamic_image_size`` and ``--dynamic_dims`` beside
``--dynamic_batch_size``, with ATC's rules and E-codes.

The rules are GE's (compiler/api/aclgrph/option_utils.cc: CheckDynamicInputParamValid,
CheckDynamicImagesizeInputShapeValid, CheckDynamicDimsInputShapeValid, CheckAndParseDynamicDims;
graph/preprocess/multi_batch_options.cc: CheckDynamicBatchShape, CheckDynamicImageSizeShape,
CheckDynamicParams; the E-code texts from GE's error-code table). Converted models are checked
against onnx's reference evaluator at every gear.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from acl_lab import atc
from acl_lab.runtime.om import SHAPE_DATA_NAME, load_om

from .dynamic_models import classifier as _classifier
from .dynamic_models import feature_map as _feature_map
from .dynamic_models import save as _save
from .dynamic_models import two_inputs as _two_inputs


def _atc(capsys: pytest.CaptureFixture[str], model: Path, out: Path,
         *flags: str) -> tuple[int, str, str]:
    rc = atc.main([f"--model={model}", "--framework=5", f"--output={out}",
                   "--soc_version=Ascend310", *flags])
    o, e = capsys.readouterr()
    return rc, o, e


def _ok(capsys: pytest.CaptureFixture[str], model: Path, out: Path, *flags: str) -> None:
    rc, o, e = _atc(capsys, model, out, *flags)
    assert rc == 0, e
    assert atc.SUCCESS in o


def _fails(capsys: pytest.CaptureFixture[str], model: Path, out: Path, *flags: str) -> str:
    rc, o, e = _atc(capsys, model, out, *flags)
    assert rc == 255, o
    assert atc.FAILED in e
    assert not (out.parent / (out.name + ".om")).exists()
    return e


# ------------------------------------------------------------------------------ image size


def test_dynamic_image_size_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two image-size gears: -1 at H and W, the shape-data input is int64 [2], every gear
    computes what onnx computes, and a static output stays static."""
    src = _classifier(tmp_path)
    _ok(capsys, src, tmp_path / "m", "--input_shape=x:1,3,-1,-1",
        "--dynamic_image_size=8,8;12,16")
    om = load_om(tmp_path / "m.om")
    assert om.dynamic_kind == "hw" and om.gears == [(8, 8), (12, 16)]
    assert om.inputs[0].shape == (1, 3, -1, -1)
    names = [d.name for d in om.acl_inputs]
    assert names == ["x", SHAPE_DATA_NAME]
    assert om.acl_inputs[1].shape == (2,) and om.acl_inputs[1].spec().nbytes == 16
    assert om.outputs[0].shape == (1, 5)
    assert om.input_size(0) == 1 * 3 * 12 * 16 * 4  # the largest gear
    ref = ReferenceEvaluator(str(src))
    rng = np.random.default_rng(0)
    for h, w in om.gears:
        x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        want = np.asarray(next(iter(ref.run(None, {"x": x}))))
        (got,) = om.run([x], batch=(h, w))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        (again,) = om.run([x])  # the gear follows from the array's shape
        np.testing.assert_array_equal(again, got)


def test_image_size_outputs_follow_the_gear(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An output whose H and W follow the input's gets -1 there, and its shape per gear."""
    _ok(capsys, _feature_map(tmp_path), tmp_path / "f", "--input_shape=x:1,3,-1,-1",
        "--dynamic_image_size=4,6;10,10;7,5")
    om = load_om(tmp_path / "f.om")
    assert om.outputs[0].shape == (1, 4, -1, -1)
    assert [om.output_specs(g)[0].shape for g in om.gears] == [(1, 4, 4, 6), (1, 4, 10, 10),
                                                               (1, 4, 7, 5)]
    assert om.max_gear == (10, 10)
    assert om.output_size(0) == 4 * 10 * 10 * 4


@pytest.mark.parametrize(("flags", "text"), [
    (["--input_shape=x:1,-1,8,-1"], "E10019"),                      # -1 not at H and W
    (["--input_shape=x:1,3,8,8"], "E10019"),                        # no -1 at all
    (["--input_shape=x:1,3,-1,-1", "--input_format=ND"], "E10003"),  # NCHW/NHWC only
    (["--input_shape=x:1,3,-1,-1", "--dynamic_batch_size=1,2"], "E10009"),
    ([], "E10004"),                                                 # no --input_shape
])
def test_image_size_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          flags: list[str], text: str) -> None:
    err = _fails(capsys, _classifier(tmp_path), tmp_path / "m", *flags,
                 "--dynamic_image_size=8,8;16,16")
    assert text in err, err


@pytest.mark.parametrize(("value", "text"), [
    ("8,8", "E10035"),              # one gear: the minimum is 2
    ("8,8;8,8", "E10039"),          # repeated
    ("8,8,8;16,16,16", "E10020"),   # three values per gear
    ("8,8;0,16", "E10038"),         # a zero size
    ("8,8;a,16", "E10003"),         # not digits
    (";".join(f"{h},8" for h in range(1, 102)), "E10036"),  # 101 gears: the maximum is 100
])
def test_image_size_values(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str,
                           text: str) -> None:
    err = _fails(capsys, _classifier(tmp_path), tmp_path / "m", "--input_shape=x:1,3,-1,-1",
                 f"--dynamic_image_size={value}")
    assert text in err, err


def test_hundred_gears_are_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    value = ";".join(f"{h},8" for h in range(1, 101))
    _ok(capsys, _classifier(tmp_path), tmp_path / "m", "--input_shape=x:1,3,-1,-1",
        f"--dynamic_image_size={value}")
    assert len(load_om(tmp_path / "m.om").gears) == 100


def test_size_dependent_attributes_are_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """SAME padding with a stride depends on H and W: refused with a dynamic image size."""
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Conv", ["x", "W"], ["y"], name="strided", strides=[2, 2],
                              auto_pad="SAME_UPPER")]
    src = _save(tmp_path, "strided", nodes,
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, "a", "b"])],
                {"W": rng.standard_normal((2, 3, 3, 3)).astype(np.float32)})
    err = _fails(capsys, src, tmp_path / "m", "--input_shape=x:1,3,-1,-1",
                 "--dynamic_image_size=8,8;9,9")
    assert "strided" in err and "depends on the input size" in err


# ------------------------------------------------------------------------------ dims


def test_dynamic_dims_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Dims gears fill the -1 dims in input order; the shape-data input has one value per
    -1; outputs follow the gear."""
    src = _two_inputs(tmp_path)
    _ok(capsys, src, tmp_path / "d", "--input_shape=x:-1,6;b:-1,4",
        "--dynamic_dims=1,1;3,3;3,1", "--input_format=ND")
    om = load_om(tmp_path / "d.om")
    assert om.dynamic_kind == "dims" and om.gears == [(1, 1), (3, 3), (3, 1)]
    assert om.fill((3, 1)) == (3, 1)
    assert om.acl_inputs[2].name == SHAPE_DATA_NAME and om.acl_inputs[2].shape == (2,)
    assert om.outputs[0].shape == (-1, 4)
    ref = ReferenceEvaluator(str(src))
    rng = np.random.default_rng(2)
    for n, m in om.gears:
        x = rng.standard_normal((n, 6)).astype(np.float32)
        b = rng.standard_normal((m, 4)).astype(np.float32)
        want = np.asarray(next(iter(ref.run(None, {"x": x, "b": b}))))
        (got,) = om.run([x, b], batch=(n, m))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("flags", "text"), [
    (["--input_shape=x:-1,6;b:-1,4", "--dynamic_dims=1,1;2,2"], "must be ND"),  # NCHW default
    (["--input_shape=x:-1,6;b:-1,4", "--input_format=ND", "--dynamic_dims=1;2"],
     "consistent with the number of -1"),
    (["--input_shape=x:2,6;b:2,4", "--input_format=ND", "--dynamic_dims=1,1;2,2"],
     "At least one dim should be -1"),
    (["--input_shape=x:-1,6;b:-1,4", "--input_format=ND", "--dynamic_dims=1,1;2,x"],
     "positive integer"),
    (["--input_shape=x:-1,6;b:-1,4", "--input_format=ND", "--dynamic_dims=1,1;2"], "E10037"),
    (["--input_shape=x:-1,6;b:-1,4", "--input_format=ND", "--dynamic_dims=1,1",
      "--dynamic_batch_size=1,2"], "E10009"),
])
def test_dims_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
                    text: str) -> None:
    err = _fails(capsys, _two_inputs(tmp_path), tmp_path / "d", *flags)
    assert text in err, err


def test_a_gear_the_graph_cannot_take_fails(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """x [n, 6] + b [m, 4] with n=2, m=3 does not broadcast: the conversion, which infers at
    the largest gear (3, 3), fails on that gear by name."""
    err = _fails(capsys, _two_inputs(tmp_path), tmp_path / "d", "--input_shape=x:-1,6;b:-1,4",
                 "--input_format=ND", "--dynamic_dims=3,3;2,3")
    assert "does not fit gear [2, 3]" in err, err


# ------------------------------------------------------------------------------ batch


@pytest.mark.parametrize(("flags", "text"), [
    (["--input_shape=x:1,3,-1,8", "--dynamic_batch_size=1,2"], "E10018"),
    (["--input_shape=x:-1,3,8,8", "--dynamic_batch_size=4"], "E10035"),
    (["--input_shape=x:-1,3,8,8", "--dynamic_batch_size=1,2,2"], "E10039"),
    (["--input_shape=x:-1,3,8,8", "--dynamic_batch_size=1,0"], "E10038"),
    (["--input_shape=x:-1,3,8,8", "--dynamic_batch_size=1;2"], "E10003"),
    (["--input_shape=x:1,3,8,8", "--dynamic_batch_size=1,2"], "E10031"),
])
def test_batch_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
                     text: str) -> None:
    err = _fails(capsys, _classifier(tmp_path), tmp_path / "m", *flags)
    assert text in err, err


# ------------------------------------------------------------------------------ more refusals


def test_ceil_mode_pooling_is_refused_with_image_size_gears(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ceil-mode MaxPool's output size depends on H and W: refused for image-size gears
    (the emulator fixes pooling attributes at conversion), by the node's name."""
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="ceilpool", kernel_shape=[3, 3],
                              strides=[2, 2], ceil_mode=1)]
    src = _save(tmp_path, "ceil", nodes,
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, "a", "b"])], {})
    err = _fails(capsys, src, tmp_path / "m", "--input_shape=x:1,3,-1,-1",
                 "--dynamic_image_size=8,8;9,9")
    assert "ceilpool" in err and "ceil_mode=1" in err, err


def test_an_input_named_like_the_gear_input_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A dynamic model gets an input named ascend_mbatch_shape_data: a source input of that
    name is refused (E10001) rather than giving the model two inputs of one name."""
    nodes = [helper.make_node("Relu", [SHAPE_DATA_NAME], ["y"], name="relu")]
    src = _save(tmp_path, "clash", nodes,
                [helper.make_tensor_value_info(SHAPE_DATA_NAME, TensorProto.FLOAT, ["n", 4])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], {})
    err = _fails(capsys, src, tmp_path / "m", f"--input_shape={SHAPE_DATA_NAME}:-1,4",
                 "--dynamic_batch_size=1,2")
    assert "E10001" in err and "rename that input" in err, err


def test_dims_gears_need_a_gear_list(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """--dynamic_dims with no gear at all (only separators) is E10058."""
    err = _fails(capsys, _two_inputs(tmp_path), tmp_path / "d", "--input_shape=x:-1,6;b:-1,4",
                 "--input_format=ND", "--dynamic_dims=;")
    assert "E10058" in err, err


def test_dims_gears_take_inputs_of_at_most_four_dims(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --dynamic_dims every input with -1 dims has 1 to 4 dims (E10001 for five)."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    src = _save(tmp_path, "five", nodes,
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1, 1, 1, 6])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1, 1, 1, 6])], {})
    err = _fails(capsys, src, tmp_path / "d", "--input_shape=x:-1,1,1,1,6",
                 "--input_format=ND", "--dynamic_dims=1;2")
    assert "E10001" in err and "1 to 4 dims" in err, err
