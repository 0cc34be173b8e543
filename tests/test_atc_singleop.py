"""``acl-lab atc --singleop=JSON --output=DIR`` (issue 12 §2): the operator samples compile
their ops offline and point ``acl.op.set_model_dir`` at DIR. Each op of the list is checked
against the emulated registry (type, dtypes and, with its const inputs given, the output
desc its shape inference gives) and written as one ``.om`` named as ATC names it."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from acl_lab import atc
from tests.acl.test_op import run_op

ADD = [{"op": "Add",
        "input_desc": [{"format": "ND", "shape": [8, 16], "type": "int32"}] * 2,
        "output_desc": [{"format": "ND", "shape": [8, 16], "type": "int32"}]}]
ARGMAX = [{"op": "ArgMaxV2",
           "input_desc": [{"format": "ND", "shape": [1000], "type": "float16"},
                          {"format": "ND", "shape": [1], "type": "int32", "is_const": True,
                           "const_value": [0]}],
           "output_desc": [{"format": "ND", "shape": [1], "type": "int32"}]}]


def compile_ops(tmp_path: Path, ops: list, capsys: pytest.CaptureFixture[str]
                ) -> tuple[int, Path, str]:
    """Run atc --singleop on ``ops``; (exit code, output dir, stderr)."""
    spec = tmp_path / "ops.json"
    spec.write_text(json.dumps(ops), encoding="utf-8")
    out = tmp_path / "op_models"
    code = atc.main([f"--singleop={spec}", "--soc_version=Ascend310", f"--output={out}"])
    return code, out, capsys.readouterr().err


def test_add_compiles_to_one_om_named_as_atc_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Add sample's add_op.json: exit 0 and 0_Add_3_2_8_16_3_2_8_16_3_2_8_16.om
    (index, type, then data type 3 = int32, format 2 = ND and dims of every tensor)."""
    code, out, err = compile_ops(tmp_path, ADD, capsys)
    assert code == 0, err
    assert [p.name for p in out.iterdir()] == ["0_Add_3_2_8_16_3_2_8_16_3_2_8_16.om"]
    doc = json.loads(next(out.iterdir()).read_text(encoding="utf-8"))
    assert doc["op"] == "Add" and doc["outputs"] == [["int32", [8, 16], 2]]


def test_const_inputs_are_checked_against_the_output_desc(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ArgMaxV2 with its const dimension compiles; with an output desc of another shape it
    fails (exit 255) saying what the op computes."""
    code, _, err = compile_ops(tmp_path, ARGMAX, capsys)
    assert code == 0, err
    bad = json.loads(json.dumps(ARGMAX))
    bad[0]["output_desc"][0]["shape"] = [2]
    (tmp_path / "b").mkdir()
    code, _, err = compile_ops(tmp_path / "b", bad, capsys)
    assert code == 255 and "is not what it computes" in err


@pytest.mark.parametrize(("change", "text"), [
    (lambda o: o[0].update(op="NoSuchOp"), "NoSuchOp"),
    (lambda o: o[0]["input_desc"][0].update(type="complex64"), "type must be one of"),
    (lambda o: o[0]["input_desc"][0].update(format="NC1HWC0"), "format must be"),
    (lambda o: o[0]["input_desc"][0].update(shape=[8, -1]), "shape must be"),
])
def test_bad_op_lists_fail_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          change, text: str) -> None:
    """An unknown op type, dtype, format or shape: exit 255 and the reason; nothing written."""
    ops = json.loads(json.dumps(ADD))
    change(ops)
    code, out, err = compile_ops(tmp_path, ops, capsys)
    assert code == 255 and text in err
    assert not out.exists()


def test_a_missing_output_flag_is_e10054(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--singleop without --output fails with the required-flag error."""
    spec = tmp_path / "ops.json"
    spec.write_text(json.dumps(ADD), encoding="utf-8")
    assert atc.main([f"--singleop={spec}", "--soc_version=Ascend310"]) == 255
    assert "output" in capsys.readouterr().err


def test_set_model_dir_on_the_compiled_folder_then_execute(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], ready: ModuleType) -> None:
    """The sample flow: compile, acl.op.set_model_dir(DIR) returns 0, Add runs."""
    code, out, err = compile_ops(tmp_path, ADD, capsys)
    assert code == 0, err
    assert ready.op.set_model_dir(str(out)) == 0
    a = np.arange(128, dtype=np.int32).reshape(8, 16)
    [y] = run_op(ready, "Add", [a, a], [((8, 16), np.int32)])
    np.testing.assert_array_equal(y, a + a)


#: a Cast whose input names float32 "float", as the classification samples' op lists do
CAST_FLOAT = [{"op": "Cast",
               "input_desc": [{"format": "ND", "shape": [10], "type": "float"}],
               "output_desc": [{"format": "ND", "shape": [10], "type": "float16"}],
               "attr": [{"name": "truncate", "type": "bool", "value": False},
                        {"name": "dst_type", "type": "int", "value": 1}]}]


@pytest.mark.parametrize(("name", "number"), [
    ("float", 0), ("float32", 0), ("float16", 1), ("fp16", 1), ("half", 1), ("int8", 2),
    ("int32", 3), ("uint8", 4), ("int16", 6), ("uint16", 7), ("uint32", 8), ("int64", 9),
    ("uint64", 10), ("double", 11), ("bool", 12)])
def test_every_atc_type_name_compiles_with_its_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, number: int) -> None:
    """ATC's single-op JSON names float32 "float" or "float32" and float16 "float16", "fp16"
    or "half" (singleop_desc_intro.md): each name compiles and the file name carries the
    aclDataType number of the type it names."""
    ops = [{"op": "Cast",
            "input_desc": [{"format": "ND", "shape": [4], "type": name}],
            "output_desc": [{"format": "ND", "shape": [4], "type": name}],
            "attr": [{"name": "dst_type", "type": "int", "value": number}]}]
    code, out, err = compile_ops(tmp_path, ops, capsys)
    assert code == 0, err
    assert [p.name for p in out.iterdir()] == [f"0_Cast_{number}_2_4_{number}_2_4.om"]


def test_cast_from_float_named_float_compiles_and_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], ready: ModuleType) -> None:
    """The classification samples' Cast (type "float" to "float16"): compiles, is named
    with 0 (float32) then 1 (float16), and casts once the folder is set as model dir."""
    code, out, err = compile_ops(tmp_path, CAST_FLOAT, capsys)
    assert code == 0, err
    assert [p.name for p in out.iterdir()] == ["0_Cast_0_2_10_1_2_10.om"]
    assert ready.op.set_model_dir(str(out)) == 0
    x = np.linspace(-2, 2, 10, dtype=np.float32)

    def cast_attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_bool(attr, "truncate", 0) == 0
        assert acl.op.set_attr_int(attr, "dst_type", 1) == 0

    [y] = run_op(ready, "Cast", [x], [((10,), np.float16)], cast_attrs)
    np.testing.assert_array_equal(y, x.astype(np.float16))


@pytest.mark.parametrize(("field", "value", "text"), [
    ("type", "bfloat16", "real ATC accepts type 'bfloat16'"),
    ("type", "float64", "type must be one of"),
    ("format", "FRACTAL_NZ", "real ATC accepts format 'FRACTAL_NZ'"),
])
def test_names_atc_accepts_but_numpy_cannot_hold_say_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str,
        text: str) -> None:
    """A type ATC accepts that no emulated op computes (bfloat16) and a device layout
    (FRACTAL_NZ) fail saying real ATC accepts them; a numpy-only name (float64, not an ATC
    name) fails as unknown."""
    ops = json.loads(json.dumps(CAST_FLOAT))
    ops[0]["input_desc"][0][field] = value
    code, out, err = compile_ops(tmp_path, ops, capsys)
    assert code == 255 and text in err, err
    assert not out.exists()


#: the acl_execute_conv2d sample's op list, smaller: x NHWC, filter NCHW, y NHWC, strides and
#: dilations [1, 1, 1, 1], pads [1, 1, 1, 1], data_format left at its default
CONV_NHWC = [{"op": "Conv2D",
              "input_desc": [{"format": "NHWC", "shape": [2, 6, 5, 3], "type": "float16"},
                             {"format": "NCHW", "shape": [4, 3, 3, 3], "type": "float16"}],
              "output_desc": [{"format": "NHWC", "shape": [2, 6, 5, 4], "type": "float16"}],
              "attr": [{"name": "strides", "type": "list_int", "value": [1, 1, 1, 1]},
                       {"name": "pads", "type": "list_int", "value": [1, 1, 1, 1]},
                       {"name": "dilations", "type": "list_int", "value": [1, 1, 1, 1]}]}]


def test_nhwc_conv2d_compiles_and_executes_as_the_conv2d_sample_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], ready: ModuleType) -> None:
    """The NHWC Conv2D of the acl_execute_conv2d sample compiles (its output desc is what
    the op computes) and runs with the program's NHWC/NCHW descs: the numbers are the NCHW
    convolution's, transposed; an NCHW-shaped output desc fails to compile."""
    from tests.acl.test_op import desc_of, from_device, make_attr, to_device

    code, out, err = compile_ops(tmp_path, CONV_NHWC, capsys)
    assert code == 0, err
    assert ready.op.set_model_dir(str(out)) == 0
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float16)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float16)
    acl = ready
    descs = [desc_of(acl, x.shape, np.float16, 1), desc_of(acl, w.shape, np.float16, 0)]
    bufs = [acl.create_data_buffer(*to_device(acl, a)) for a in (x, w)]
    y_desc = desc_of(acl, (2, 6, 5, 4), np.float16, 1)
    y_ptr, _ = to_device(acl, np.zeros((2, 6, 5, 4), np.float16))
    y_buf = acl.create_data_buffer(y_ptr, 2 * 6 * 5 * 4 * 2)

    def attrs(acl: ModuleType, attr: int) -> None:
        for name in ("strides", "dilations"):
            assert acl.op.set_attr_list_int(attr, name, [1, 1, 1, 1]) == 0
        assert acl.op.set_attr_list_int(attr, "pads", [1, 1, 1, 1]) == 0

    stream, _ = acl.rt.create_stream()
    assert acl.op.execute_v2("Conv2D", descs, bufs, [y_desc], [y_buf], make_attr(acl, attrs),
                             stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    got = from_device(acl, y_ptr, (2, 6, 5, 4), np.float16).astype(np.float32)
    [want] = run_op(ready, "Conv2D", [np.ascontiguousarray(x.transpose(0, 3, 1, 2)), w],
                    [((2, 4, 6, 5), np.float16)], attrs, fmt=0)
    np.testing.assert_allclose(got, want.astype(np.float32).transpose(0, 2, 3, 1), rtol=1e-2,
                               atol=1e-2)
    bad = json.loads(json.dumps(CONV_NHWC))
    bad[0]["output_desc"][0]["shape"] = [2, 4, 6, 5]
    (tmp_path / "b").mkdir()
    code, _, err = compile_ops(tmp_path / "b", bad, capsys)
    assert code == 255 and "is not what it computes" in err
