"""A small model zoo, generated deterministically on first use (no downloads).

``zoo.path("resnet50")`` returns the path of an emulated ``.om`` in a cache folder
(``$ACL_LAB_CACHE`` if set, else ``~/.cache/acl_lab/zoo``), ready for
``acl.mdl.load_from_file``. The weights are seeded random numbers (He initialisation, batch
norm folded into the convolution biases), so the networks compute nothing meaningful but
have the real layer shapes, sizes and costs. A file is regenerated when it is missing, its
zoo version differs or it is damaged; it is written to a temporary file and renamed, so
concurrent users never see a half-written model.

Models (``names()``; ``describe(name)`` gives the details):

* ``mlp``: 784-256-10 perceptron, fp32, static batch 8 (one input, one output).
* ``mlp_dynamic``: the same network and weights converted with ``--dynamic_batch_size=1,2,4,8``:
  input ``input`` [-1, 784] plus the ``ascend_mbatch_shape_data`` input real ATC adds
  (``acl.mdl.set_dynamic_batch_size`` takes its index).
* ``lenet5``: 1x1x28x28 -> 10 class probabilities (Conv/MaxPool/MatMul/SoftmaxV2).
* ``tiny_resnet``: 1x3x32x32 -> 10 logits, three residual blocks.
* ``resnet50``: ResNet-50 v1.5 layer shapes, input ``actual_input_1`` 1x3x224x224 fp32,
  output ``output1`` 1x1000 logits (as in the ``sampleResnetQuickStart`` sample).
* ``resnet50_aipp``: the same network and weights behind a static AIPP layer (what ATC's
  ``--insert_op_conf`` adds): input ``actual_input_1`` is the 224x224 YUV420SP (NV12) picture
  DVPP's VPC produces, as uint8 [1, 336, 224]; AIPP converts it to RGB (BT.601) and
  normalises it with the ImageNet mean and standard deviation of ``RESNET50_MEAN`` /
  ``RESNET50_STD``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .runtime.om import (
    GraphBuilder,
    ModelFileError,
    OmModel,
    dump_om_bytes,
    read_header,
)

#: bump when any generator changes: cached files with another version are regenerated
ZOO_VERSION = 2
_SOC = "Ascend310P3"
_BN_EPS = 1e-5
#: ImageNet normalisation of the ResNet-50 input, per RGB channel in 0..255 units: the host
#: preprocessing computes (pixel - mean) / std, ``resnet50_aipp``'s AIPP layer the same as
#: (pixel - min_chn) * var_reci_chn with min_chn = mean and var_reci_chn = 1 / std.
RESNET50_MEAN = (123.675, 116.28, 103.53)
RESNET50_STD = (58.395, 57.12, 57.375)
#: the picture size ResNet-50 takes
RESNET50_SIZE = 224


# ------------------------------------------------------------------------- layer helpers
class _Net:
    """A GraphBuilder with a seeded generator and NCHW layer helpers (fp32)."""

    def __init__(self, name: str, seed: int) -> None:
        self.g = GraphBuilder(name, _SOC)
        self.rng = np.random.default_rng(seed)

    def he(self, shape: tuple[int, ...], fan_in: int, scale: float = 1.0) -> np.ndarray:
        """He-normal weights: N(0, 2/fan_in) * scale, float32."""
        std = np.float32(scale * np.sqrt(2.0 / fan_in))
        w = self.rng.standard_normal(shape, dtype=np.float32)
        w *= std
        return w

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0,
                name: str = "conv", gamma_scale: float = 1.0) -> str:
        """Conv2D whose bias is a folded batch norm (gamma, beta, mean, var drawn seeded)."""
        w = self.he((cout, cin, k, k), cin * k * k)
        gamma = (gamma_scale * (1.0 + 0.1 * self.rng.standard_normal(cout))).astype(np.float32)
        beta = (0.05 * self.rng.standard_normal(cout)).astype(np.float32)
        mean = (0.05 * self.rng.standard_normal(cout)).astype(np.float32)
        var = self.rng.uniform(0.8, 1.2, cout).astype(np.float32)
        inv = (gamma / np.sqrt(var + np.float32(_BN_EPS))).astype(np.float32)
        w *= inv[:, None, None, None]
        b = (beta - mean * inv).astype(np.float32)
        wn = self.g.add_weight(f"{name}.weight", w)
        bn = self.g.add_weight(f"{name}.bias", b)
        attrs = {"strides": [1, 1, stride, stride], "pads": [pad, pad, pad, pad],
                 "dilations": [1, 1, 1, 1], "groups": 1, "data_format": "NCHW"}
        return self.g.add_node("Conv2D", [x, wn, bn], attrs, name=name)[0]

    def relu(self, x: str, name: str = "relu") -> str:
        """Relu."""
        return self.g.add_node("Relu", [x], name=name)[0]

    def add(self, a: str, b: str, name: str = "add") -> str:
        """Elementwise Add."""
        return self.g.add_node("Add", [a, b], name=name)[0]

    def pool(self, op: str, x: str, k: int, s: int, padding: str, name: str) -> str:
        """MaxPool / AvgPool on NCHW with a ``padding`` mode (SAME or VALID)."""
        attrs = {"ksize": [1, 1, k, k], "strides": [1, 1, s, s], "padding": padding,
                 "data_format": "NCHW"}
        return self.g.add_node(op, [x], attrs, name=name)[0]

    def fc(self, x: str, fin: int, fout: int, name: str, transposed: bool = False,
           output: str | None = None) -> str:
        """MatMul with bias; ``transposed`` stores the weight as [out, in] (ONNX Gemm
        transB=1, as PyTorch exports Linear)."""
        shape = (fout, fin) if transposed else (fin, fout)
        w = self.g.add_weight(f"{name}.weight", self.he(shape, fin))
        bound = 1.0 / np.sqrt(fin)
        b = self.g.add_weight(f"{name}.bias",
                              self.rng.uniform(-bound, bound, fout).astype(np.float32))
        attrs = {"transpose_x1": False, "transpose_x2": transposed}
        outs = [output] if output else None
        return self.g.add_node("MatMul", [x, w, b], attrs, name=name, outputs=outs)[0]


# ------------------------------------------------------------------------- the models
#: the batch of the static ``mlp``, and the gears of ``mlp_dynamic``
MLP_BATCH = 8
MLP_GEARS = (1, 2, 4, 8)


def _mlp(dynamic: bool = False) -> OmModel:
    name = "mlp_dynamic" if dynamic else "mlp"
    n = _Net(name, 1001)  # one seed: both variants have the same weights
    batch = -1 if dynamic else MLP_BATCH
    x = n.g.add_input("input", "float32", (batch, 784))
    h = n.relu(n.fc(x, 784, 256, "fc1"), "relu1")
    y = n.fc(h, 256, 10, "fc2", output="output")
    n.g.add_output(y, "float32", (batch, 10))
    if dynamic:
        n.g.dynamic_batch = list(MLP_GEARS)
    return _finish(n, name)


def _mlp_dynamic() -> OmModel:
    return _mlp(dynamic=True)


def _lenet5() -> OmModel:
    n = _Net("lenet5", 1002)
    x = n.g.add_input("input", "float32", (1, 1, 28, 28))
    h = n.relu(n.conv_bn(x, 1, 6, 5, pad=2, name="conv1"), "relu1")       # 6x28x28
    h = n.pool("MaxPool", h, 2, 2, "VALID", "pool1")                       # 6x14x14
    h = n.relu(n.conv_bn(h, 6, 16, 5, name="conv2"), "relu2")             # 16x10x10
    h = n.pool("MaxPool", h, 2, 2, "VALID", "pool2")                       # 16x5x5
    h = n.g.add_node("Flatten", [h], {"axis": 1}, name="flatten")[0]       # 400
    h = n.relu(n.fc(h, 400, 120, "fc1"), "relu3")
    h = n.relu(n.fc(h, 120, 84, "fc2"), "relu4")
    h = n.fc(h, 84, 10, "fc3")
    y = n.g.add_node("SoftmaxV2", [h], {"axes": [-1]}, name="softmax",
                     outputs=["output"])[0]
    n.g.add_output(y, "float32", (1, 10))
    return _finish(n, "lenet5")


def _basic_block(n: _Net, x: str, cin: int, cout: int, stride: int, name: str) -> str:
    h = n.relu(n.conv_bn(x, cin, cout, 3, stride, 1, f"{name}.conv1"), f"{name}.relu1")
    h = n.conv_bn(h, cout, cout, 3, 1, 1, f"{name}.conv2", gamma_scale=0.5)
    sc = x if (stride == 1 and cin == cout) else n.conv_bn(x, cin, cout, 1, stride, 0,
                                                          f"{name}.downsample")
    return n.relu(n.add(h, sc, f"{name}.add"), f"{name}.relu2")


def _tiny_resnet() -> OmModel:
    n = _Net("tiny_resnet", 1003)
    x = n.g.add_input("input", "float32", (1, 3, 32, 32))
    h = n.relu(n.conv_bn(x, 3, 16, 3, 1, 1, "conv1"), "relu")
    h = _basic_block(n, h, 16, 16, 1, "layer1")
    h = _basic_block(n, h, 16, 32, 2, "layer2")
    h = _basic_block(n, h, 32, 64, 2, "layer3")
    h = n.g.add_node("GlobalAveragePool", [h], name="avgpool")[0]
    h = n.g.add_node("Flatten", [h], {"axis": 1}, name="flatten")[0]
    y = n.fc(h, 64, 10, "fc", transposed=True, output="output")
    n.g.add_output(y, "float32", (1, 10))
    return _finish(n, "tiny_resnet")


def _bottleneck(n: _Net, x: str, cin: int, width: int, stride: int, name: str) -> str:
    cout = width * 4
    h = n.relu(n.conv_bn(x, cin, width, 1, 1, 0, f"{name}.conv1"), f"{name}.relu1")
    h = n.relu(n.conv_bn(h, width, width, 3, stride, 1, f"{name}.conv2"), f"{name}.relu2")
    # a small last gamma keeps the residual sum bounded over 16 blocks (zero-init-residual
    # style), so the logits stay in a sensible range
    h = n.conv_bn(h, width, cout, 1, 1, 0, f"{name}.conv3", gamma_scale=0.2)
    sc = x if (stride == 1 and cin == cout) else n.conv_bn(x, cin, cout, 1, stride, 0,
                                                          f"{name}.downsample")
    return n.relu(n.add(h, sc, f"{name}.add"), f"{name}.relu3")


def _resnet50(aipp: bool = False) -> OmModel:
    name = "resnet50_aipp" if aipp else "resnet50"
    n = _Net(name, 1004)  # one seed: resnet50_aipp has exactly resnet50's weights
    if aipp:
        size = RESNET50_SIZE
        x = n.g.add_input("actual_input_1", "uint8", (1, size * 3 // 2, size))
        attrs = {"input_format": "YUV420SP_U8", "src_image_size_w": size,
                 "src_image_size_h": size, "csc_switch": True, "rbuv_swap_switch": False,
                 "mean_chn": [0, 0, 0], "min_chn": list(RESNET50_MEAN),
                 "var_reci_chn": [1.0 / s for s in RESNET50_STD]}
        x = n.g.add_node("Aipp", [x], attrs, name="aipp")[0]             # 3x224x224 fp32
    else:
        x = n.g.add_input("actual_input_1", "float32", (1, 3, 224, 224))
    h = n.relu(n.conv_bn(x, 3, 64, 7, 2, 3, "conv1"), "relu")             # 64x112x112
    h = n.pool("MaxPool", h, 3, 2, "SAME", "maxpool")                      # 64x56x56
    cin = 64
    for li, (width, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                  (512, 3, 2)), start=1):
        for bi in range(blocks):
            h = _bottleneck(n, h, cin, width, stride if bi == 0 else 1, f"layer{li}.{bi}")
            cin = width * 4
    h = n.g.add_node("GlobalAveragePool", [h], name="avgpool")[0]         # 2048x1x1
    h = n.g.add_node("Flatten", [h], {"axis": 1}, name="flatten")[0]      # 2048
    y = n.fc(h, 2048, 1000, "fc", transposed=True, output="output1")
    n.g.add_output(y, "float32", (1, 1000))
    return _finish(n, name)


def _resnet50_aipp() -> OmModel:
    return _resnet50(aipp=True)


def _finish(n: _Net, name: str) -> OmModel:
    n.g.meta = {"producer": "acl_lab.zoo", "zoo_model": name, "zoo_version": ZOO_VERSION}
    return n.g.build()


@dataclass(frozen=True)
class _Entry:
    build: Callable[[], OmModel]
    summary: str


_MODELS: dict[str, _Entry] = {
    "mlp": _Entry(_mlp, "multilayer perceptron 784-256-10 (MatMul+bias, Relu), fp32; input "
                  "'input' [8,784], output 'output' [8,10] logits"),
    "mlp_dynamic": _Entry(_mlp_dynamic, "mlp with dynamic batch gears 1/2/4/8 (same "
                          "weights): input 'input' [-1,784] and input 'ascend_mbatch_shape_data' "
                          "int64 [1] (the batch size; acl.mdl.set_dynamic_batch_size fills "
                          "it), output 'output' [-1,10] logits"),
    "lenet5": _Entry(_lenet5, "LeNet-5: input 'input' [1,1,28,28] fp32 NCHW, Conv2D 5x5 (6, "
                     "16) + Relu + MaxPool 2x2, MatMul 400-120-84-10, SoftmaxV2; output "
                     "'output' [1,10] class probabilities"),
    "tiny_resnet": _Entry(_tiny_resnet, "a tiny ResNet: input 'input' [1,3,32,32] fp32 "
                          "NCHW, 3x3 stem (16) and three basic residual blocks (16, 32/2, "
                          "64/2), GlobalAveragePool, MatMul 64-10; output 'output' [1,10] "
                          "logits"),
    "resnet50": _Entry(_resnet50, "ResNet-50 v1.5 layer shapes: input 'actual_input_1' "
                       "[1,3,224,224] fp32 NCHW, 7x7/2 conv 64, 3x3/2 MaxPool, bottleneck "
                       "stages [3,4,6,3] of widths 64/128/256/512 (x4), GlobalAveragePool, "
                       "MatMul 2048-1000; output 'output1' [1,1000] logits; ~25.6M seeded "
                       "He-initialised weights with batch norm folded into conv biases"),
    "resnet50_aipp": _Entry(_resnet50_aipp, "resnet50 (same weights) behind a static AIPP "
                            "layer: input 'actual_input_1' [1,336,224] uint8, a 224x224 "
                            "YUV420SP (NV12) picture as DVPP's VPC writes it; AIPP converts "
                            "it to RGB (BT.601 JPEG matrix) and normalises it with the "
                            "ImageNet mean/std; output 'output1' [1,1000] logits"),
}


# ------------------------------------------------------------------------- public API
def names() -> list[str]:
    """The zoo's model names."""
    return list(_MODELS)


def _entry(name: str) -> _Entry:
    try:
        return _MODELS[name]
    except KeyError:
        raise KeyError(f"no zoo model {name!r}; the zoo has {', '.join(_MODELS)}") from None


def describe(name: str) -> str:
    """A one-paragraph description of a zoo model (inputs, layers, outputs)."""
    return f"{name}: {_entry(name).summary}"


def build(name: str) -> OmModel:
    """Generate the model in memory (deterministic; no file is written)."""
    return _entry(name).build()


def cache_dir() -> str:
    """The cache folder: ``$ACL_LAB_CACHE`` if set, else ``~/.cache/acl_lab/zoo``."""
    env = os.environ.get("ACL_LAB_CACHE")
    if env:
        return env
    return os.path.join(os.path.expanduser("~"), ".cache", "acl_lab", "zoo")


def _is_current(file: str, name: str) -> bool:
    """True when ``file`` holds this zoo version of ``name`` and has its full length."""
    try:
        with open(file, "rb") as f:
            head = f.read(1 << 16)
            size = os.fstat(f.fileno()).st_size
            header: dict[str, Any] | None = None
            try:
                header = read_header(head)
            except ModelFileError:
                hlen = int.from_bytes(head[13:21], "little") if len(head) >= 21 else 0
                if 0 < hlen < size:  # a large header: read all of it
                    f.seek(0)
                    header = read_header(f.read(21 + hlen))
        if header is None:
            return False
        meta = header.get("meta", {})
        return (isinstance(meta, dict) and meta.get("zoo_version") == ZOO_VERSION
                and meta.get("zoo_model") == name
                and size == header["_header_end"] + header.get("weights_size", -1))
    except (OSError, ModelFileError, KeyError, TypeError):
        return False


def path(name: str) -> str:
    """The path of zoo model ``name`` as an ``.om`` file, generated on first use.

    The file lives in :func:`cache_dir`; it is (re)generated when missing, damaged or from
    another zoo version, written to a temporary file and renamed atomically.
    """
    entry = _entry(name)
    folder = cache_dir()
    file = os.path.join(folder, f"{name}.om")
    if _is_current(file, name):
        return file
    os.makedirs(folder, exist_ok=True)
    data = dump_om_bytes(entry.build())
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return file
