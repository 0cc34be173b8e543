"""Small ONNX models with dynamic dims for the gear tests (tests/test_atc_dynamic.py,
tests/acl/test_mdl_dynamic_shapes.py, the sample-style dynamic image size program), and their
conversion with acl_lab's ATC."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from acl_lab import atc


def save(tmp_path: Path, name: str, nodes: list, inputs: list, outputs: list,
          inits: dict[str, np.ndarray]) -> Path:
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def classifier(tmp_path: Path) -> Path:
    """Conv 3x3 (pad 1) + Relu + GlobalAveragePool + Flatten + Gemm: any H, W gives [1, 5]."""
    rng = np.random.default_rng(3)
    inits = {"W": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
             "B": rng.standard_normal(4).astype(np.float32),
             "FC": rng.standard_normal((5, 4)).astype(np.float32),
             "FB": rng.standard_normal(5).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "FC", "FB"], ["y"], name="fc", transB=1)]
    return save(tmp_path, "classifier", nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)


def feature_map(tmp_path: Path) -> Path:
    """Conv 3x3 (pad 1) + Relu: the output is [1, 4, H, W], so it follows the gear."""
    rng = np.random.default_rng(4)
    inits = {"W": rng.standard_normal((4, 3, 3, 3)).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return save(tmp_path, "features", nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, "h", "w"])],
                 inits)


def two_inputs(tmp_path: Path) -> Path:
    """y = x @ W + b with x [n, 6] and b [m, 4] (ND): dims gears give n and m."""
    rng = np.random.default_rng(5)
    inits = {"W": rng.standard_normal((6, 4)).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "b"], ["y"], name="add")]
    return save(tmp_path, "two", nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6]),
                  helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m", 4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], inits)


def convert(src: Path, out: Path, *flags: str) -> Path:
    """``acl-lab atc`` on ``src`` with ``flags``; returns the .om path (AssertionError with
    ATC's messages when it fails)."""
    rc = atc.main([f"--model={src}", "--framework=5", f"--output={out}",
                   "--soc_version=Ascend310", *flags])
    assert rc == 0, f"atc failed for {src.name} {flags}"
    return out.parent / (out.name + ".om")


def hw_classifier(folder: Path, sizes: str = "8,8;12,16") -> Path:
    """The classifier converted with image-size gears ``sizes``."""
    return convert(classifier(folder), folder / "hw_classifier", "--input_shape=x:1,3,-1,-1",
                   f"--dynamic_image_size={sizes}")


def hw_features(folder: Path, sizes: str = "4,6;10,10") -> Path:
    """The feature map (output [1, 4, H, W]) with image-size gears ``sizes``."""
    return convert(feature_map(folder), folder / "hw_features", "--input_shape=x:1,3,-1,-1",
                   f"--dynamic_image_size={sizes}")


def dims_model(folder: Path, dims: str = "1,1;3,3;3,1") -> Path:
    """The two-input model with dims gears ``dims`` (x [n, 6], b [m, 4])."""
    return convert(two_inputs(folder), folder / "dims_model", "--input_shape=x:-1,6;b:-1,4",
                   f"--dynamic_dims={dims}", "--input_format=ND")
