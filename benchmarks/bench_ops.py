"""Operator speed: a ResNet-50 3x3 convolution against a numpy GEMM of the same FLOPs.

The convolution is the one ``tests/runtime/test_kernels.py`` checks for correctness (1x64x56x56
input, 64 filters 3x3, pad 1: 231 MFLOP). Its baseline is the matrix product an im2col
convolution reduces to, (64 x 576) @ (576 x 3136) in float32: the same multiply-adds done by
numpy's BLAS, timed back to back with the convolution in each repeat, so a busy phase of the
machine slows both sides. The ratio says how far the operator is from a plain GEMM; a
convolution written as Python loops would be thousands of times slower.
"""

from __future__ import annotations

import time

import numpy as np

from acl_lab.runtime.opdefs import get_op

from .common import REPEATS, Row, median, quiet_gc

NAME = "ops"
#: Upper bound of conv time / GEMM time. The vectorised convolution measured about 14x a
#: multi-threaded BLAS GEMM of the same FLOPs (it also pays for its copies); one written as
#: Python loops over output positions would be thousands of times slower.
CONV_VS_GEMM_TARGET = 40.0


def run(quick: bool) -> list[Row]:
    """Time the convolution and its GEMM baseline (REPEATS repeats, 3 with ``quick``)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    attrs = {"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1]}
    a = w.reshape(64, 576).copy()
    b = rng.standard_normal((576, 56 * 56)).astype(np.float32)
    conv = get_op("Conv2D")
    conv.compute([x, w], dict(attrs))  # warm-up (imports, caches, BLAS threads)
    a @ b
    conv_s, gemm_s, ratios = [], [], []
    for _ in range(3 if quick else REPEATS):
        with quiet_gc():
            t0 = time.perf_counter()
            conv.compute([x, w], dict(attrs))
            t1 = time.perf_counter()
            a @ b
            t2 = time.perf_counter()
        conv_s.append(t1 - t0)
        gemm_s.append(t2 - t1)
        ratios.append((t1 - t0) / max(t2 - t1, 1e-9))
    return [
        Row(NAME, "conv2d_resnet50_3x3_s", median(conv_s), "s"),
        Row(NAME, "conv2d_same_flops_gemm_s", median(gemm_s), "s"),
        Row(NAME, "conv2d_resnet50_3x3_vs_gemm", median(ratios), "x", CONV_VS_GEMM_TARGET),
    ]
