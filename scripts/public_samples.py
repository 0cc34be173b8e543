"""Run the public pyACL samples one by one under ``acl-lab run`` and tabulate the results.

A developer tool, not part of the package or of ``make test``: it needs a checkout of the
public Ascend samples repository (a bare git directory is enough)::

    python scripts/public_samples.py --repo PATH/TO/samples.git            # every sample
    python scripts/public_samples.py --repo ... \
        --only python/level2_simple_inference/1_classification/googlenet_imagenet_picture

(``--repo`` defaults to ``$ACL_LAB_SAMPLES_REPO``; the samples' own imports come with
``pip install -e .[samples]``, and the video super-resolution sample needs the ``ffmpeg``
programs.) For each sample it extracts the sample
and ``python/common`` (acllite) with ``git archive HEAD``, writes substitute inputs where
the sample's code and README expect them (an emulated ``.om`` with the input and output
shapes the README's ``atc`` line and the code use, built from a small graph of our own;
single-operator models built with ``acl-lab atc --singleop`` from the sample's own JSON;
generated JPEG pictures and ``.bin`` files), runs the sample's program unmodified with
``acl-lab run --summary`` under a timeout, and records the exit code, the findings (kind,
file:line) and the first error line. Results are kept per sample in ``docs/samples.json``
(``--only`` re-runs one and keeps the others) and the table is rewritten in
``docs/samples.md`` together with the binding functions that are still not emulated.

Whether a finding is true (real hardware would have that bug) is a judgement made by
reading the sample's code at the cited line; the judgements live in ``VERDICTS`` below,
keyed by sample, kind and the code at that line, so a re-run keeps them while the code is
the same.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acl_lab.runtime.om import GraphBuilder, save_om  # noqa: E402

RESULTS = ROOT / "docs" / "samples.json"
TABLE = ROOT / "docs" / "samples.md"
TIMEOUT = 120
DT_FLOAT, DT_FLOAT16, DT_INT32, DT_UINT8, DT_INT64 = 0, 1, 3, 4, 9
_ACL_DTYPE = {"float32": DT_FLOAT, "float16": DT_FLOAT16, "int32": DT_INT32,
              "uint8": DT_UINT8, "int64": DT_INT64}


# ----------------------------------------------------------------------------- specs
@dataclass
class Model:
    """A substitute offline model: the file the sample loads, with its I/O signature.

    ``inputs`` are (name, dtype, shape); a model whose real version has an AIPP layer gets
    the input AIPP takes (uint8, the picture's bytes), since that is what the program feeds.
    ``outputs`` are (dtype, shape); their values are ``fill`` (a constant) or, with
    ``fill=None``, seeded uniform numbers in [0, 1).
    """

    path: str
    inputs: list[tuple[str, str, tuple[int, ...]]]
    outputs: list[tuple[str, tuple[int, ...]]]
    gears: tuple[int, ...] = ()
    fill: float | None = None
    #: the AIPP configuration (relative to the sample folder) the README converts with
    #: (``atc --insert_op_conf``); ``net`` is then the float NCHW tensor the network behind
    #: it takes, and input 0's (uint8) shape is what AIPP makes of it
    aipp: str = ""
    net: tuple[int, ...] = ()
    #: image-size gears (``atc --dynamic_image_size``, height and width); ``net`` has -1 at
    #: H and W
    hw: tuple[tuple[int, int], ...] = ()


@dataclass
class Sample:
    """One public sample: where it is, how its README runs it, and what it needs."""

    path: str
    main: str = ""                    # the program, relative to the sample folder
    cwd: str = ""                     # run folder, relative to the sample (default: main's)
    args: list[str] = field(default_factory=list)
    models: list[Model] = field(default_factory=list)
    singleop: list[tuple[str, str]] = field(default_factory=list)  # (json, output dir)
    images: list[tuple[str, int, int]] = field(default_factory=list)  # (path, width, height)
    #: contents, a zero-filled size, or a function making the contents at preparation
    files: Mapping[str, bytes | int | Callable[[], bytes]] = field(default_factory=dict)
    videos: list[tuple[str, int, int, int]] = field(default_factory=list)  # (path, w, h, n)
    out_of_scope: str = ""
    note: str = ""
    tag: str = ""                     # tells apart several README runs of one sample
    run_mode: str = ""                # acl-lab run --run-mode (samples written on-board)

    @property
    def key(self) -> str:
        """The results key: the path, with the run's tag when the README runs it twice."""
        return f"{self.path} [{self.tag}]" if self.tag else self.path


def _jpeg(width: int, height: int, seed: int, fmt: str = "JPEG") -> bytes:
    """A seeded colour-gradient picture of this size (JPEG or PNG bytes)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    rgb = np.stack([(x * 255 // max(width - 1, 1)), (y * 255 // max(height - 1, 1)),
                    rng.integers(0, 256, (height, width))], axis=-1).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format=fmt)
    return buf.getvalue()


def write_video(path: Path, width: int, height: int, frames: int) -> None:
    """A short MPEG-4 video of moving gradients (OpenCV's mp4v writer)."""
    import cv2

    path.parent.mkdir(parents=True, exist_ok=True)
    fourcc = cv2.VideoWriter_fourcc(*"mp4v")  # type: ignore[attr-defined]
    out = cv2.VideoWriter(str(path), fourcc, 25, (width, height))
    y, x = np.mgrid[0:height, 0:width]
    for n in range(frames):
        frame = np.stack([(x + 8 * n) % 256, (y + 4 * n) % 256, (x + y) % 256],
                         axis=-1).astype(np.uint8)
        out.write(frame)
    out.release()


def h265_stream(width: int, height: int, frames: int) -> bytes:
    """An H.265 Annex-B elementary stream of ``frames`` gradient pictures (PyAV's libx265)."""
    import av

    codec = av.CodecContext.create("libx265", "w")
    codec.width, codec.height, codec.pix_fmt = width, height, "yuv420p"
    # no B-frames: the stream has no reordering delay, every frame decodes as it is sent
    codec.options = {"x265-params": "log-level=error:bframes=0"}
    y, x = np.mgrid[0:height, 0:width]
    packets = []
    for n in range(frames):
        rgb = np.stack([(x + 8 * n) % 256, y % 256, (x + y) % 256], axis=-1).astype(np.uint8)
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
        packets += codec.encode(frame)
    packets += codec.encode(None)
    return b"".join(bytes(p) for p in packets)


L1 = "python/level1_single_api/"
L2 = "python/level2_simple_inference/"
C = L2 + "1_classification/"
D = L2 + "2_object_detection/"


def _nv12(w: int, h: int) -> tuple[int, ...]:
    """The uint8 input an AIPP model with an NV12 (YUV420SP) picture of w x h takes."""
    return (1, h * 3 // 2, w)


#: the resnet50 AIPP samples' model: the README converts it with the folder's own
#: caffe_model/aipp.cfg (YUV420SP_U8 224x224 in front of a 1x3x224x224 network)
_RESNET_AIPP = Model("model/resnet50_aipp.om", [("data", "uint8", _nv12(224, 224))],
                     [("float32", (1, 1000))], aipp="caffe_model/aipp.cfg",
                     net=(1, 3, 224, 224))
#: the YOLOv4 samples' model (608x608 float input, the three detection heads)
_YOLOV4 = Model("model/yolov4_bs1.om", [("input", "float32", (1, 3, 608, 608))],
                [("float32", (1, 255, 19, 19)), ("float32", (1, 255, 38, 38)),
                 ("float32", (1, 255, 76, 76))], fill=-10.0)
#: the dynamic-hw sample's AIPP (its README downloads aipp_resnet50.aippconfig): a static
#: RGB888_U8 AIPP, src_image_size 0 as ATC requires with --dynamic_image_size (the picture
#: follows the gear); the sample feeds RGB bytes (acl_net.py: img.astype("uint8"))
_DYNAMIC_HW_AIPP = (b"aipp_op {\n    aipp_mode : static\n    input_format : RGB888_U8\n"
                    b"    src_image_size_w : 0\n    src_image_size_h : 0\n"
                    b"    min_chn_0 : 124\n    min_chn_1 : 117\n    min_chn_2 : 104\n}\n")

#: the README's flags with fewer cycles (the programs sleep a second per copy; without flags
#: they loop until device memory runs out, as their README says)
_CYCLES = ["--release_cycle", "3", "--number_of_cycles", "2", "--device_id", "0",
           "--memory_size", "10485760"]

SAMPLES: list[Sample] = [
    # ---- level1: memory management
    Sample(L1 + "1_acl/2_memory_management/memcpy_host_device_python",
           main="src/memcpy_host_device.py",
           note="the README's flags loop forever on the program's own use-after-free (see the "
           "finding); interrupted after the timeout",
           args=[*_CYCLES, "--write_back_host", "--memory_reuse"]),
    Sample(L1 + "1_acl/2_memory_management/memcpy_host_device_async_python",
           main="src/memcpy_host_device_async_python.py", args=_CYCLES),
    Sample(L1 + "1_acl/2_memory_management/memcpy_host_DVPP_python",
           main="src/memcpy_host_dvpp.py", args=[*_CYCLES, "--memory_reuse"]),
    # ---- level1: operators
    Sample(L1 + "1_acl/4_blas/acl_operator_add", main="src/acl_execute_add.py",
           cwd="test_data", singleop=[("config/add_op.json", "op_models")]),
    Sample(L1 + "4_op_dev/2_verify_op/acl_execute_slice", main="src/slice_test.py",
           singleop=[("slice.json", "../op_models_fp16")], run_mode="device",
           note="written for the on-board (RC) run mode (host buffers go straight into the "
           "op, the output is read with ptr_to_bytes), run with --run-mode device; every ACL "
           "call succeeds, then numpy 2's np.unique(return_inverse=True) returns a 2-D "
           "inverse that np.bincount refuses (the sample predates numpy 2: environment)"),
    # ---- level2: classification (acllite and hand-written)
    Sample(C + "googlenet_imagenet_picture", main="src/classify.py", args=["../data"],
           models=[Model("model/googlenet_yuv.om", [("data", "uint8", _nv12(224, 224))],
                         [("float32", (1, 1000))])],
           images=[("data/dog1_1024_683.jpg", 1024, 683), ("data/dog2_1024_683.jpg", 640, 480)]),
    Sample(C + "googlenet_imagenet_dynamic_batch", main="src/classify.py", args=["../data"],
           models=[Model("model/googlenet_dynamic_batch.om",
                         [("data", "uint8", _nv12(224, 224))], [("float32", (1, 1000))],
                         gears=(1, 2, 4, 8))],
           images=[(f"data/pic{i}.jpg", 640, 480) for i in range(3)]),
    Sample(C + "googlenet_imagenet_multi_batch", main="src/classify.py", args=["../data"],
           models=[Model("model/googlenet_yuv.om", [("data", "uint8", (10, 336, 224))],
                         [("float32", (10, 1000))])],
           images=[(f"data/pic{i}.jpg", 640, 480) for i in range(12)]),
    Sample(C + "googlenet_mindspore_picture", main="src/classify.py", args=["../data"],
           models=[Model("model/googlenet.om", [("x", "float32", (1, 3, 224, 224))],
                         [("float32", (1, 10))])],
           images=[("data/airplane.jpg", 320, 240)]),
    Sample(C + "googlenet_onnx_picture", main="src/classify.py", args=["../data"],
           models=[Model("model/googlenet_yuv.om",
                         [("actual_input_1", "uint8", _nv12(224, 224))],
                         [("float32", (1, 1000))])],
           images=[("data/dog1_1024_683.jpg", 1024, 683)]),
    Sample(C + "inceptionv3_picture", main="src/classify.py", args=["../data"],
           models=[Model("model/InceptionV3.om",
                         [("actual_input_1", "uint8", _nv12(336, 336))],
                         [("float32", (1, 1000))])],
           images=[("data/dog1_1024_683.jpg", 1024, 683)]),
    Sample(C + "lenet_mindspore_picture", main="src/classify.py",
           models=[Model("model/mnist.om", [("x", "float32", (1, 1, 32, 32))],
                         [("float32", (1, 10))])],
           images=[("data/test_image_0.jpg", 28, 28), ("data/test_image_1.png", 28, 28)]),
    Sample(C + "resnet50_mindspore_picture", main="src/classify.py", args=["../data"],
           models=[Model("model/resnet50.om", [("x", "float32", (1, 3, 224, 224))],
                         [("float32", (1, 10))])],
           images=[("data/airplane.jpg", 320, 240)]),
    Sample(C + "vgg16_cat_dog_picture", main="src/main.py",
           models=[Model("model/vgg16_cat_dog.om", [("input_1", "uint8", _nv12(224, 256))],
                         [("float32", (1, 2))])],
           images=[("data/cat.jpg", 500, 375)]),
    Sample(C + "resnet50_imagenet_classification", main="src/acl_net.py", cwd=".",
           models=[Model("model/resnet50.om", [("data", "float16", (1, 3, 224, 224))],
                         [("float32", (1, 1000))])],
           images=[("data/dog1_1024_683.jpg", 1024, 683), ("data/dog2_1024_683.jpg", 1024, 683)]),
    Sample(C + "resnet50_async_imagenet_classification", main="src/acl_net.py", cwd=".",
           models=[Model("model/resnet50.om", [("data", "float16", (1, 3, 224, 224))],
                         [("float32", (1, 1000))])],
           images=[("data/dog1_1024_683.jpg", 1024, 683), ("data/dog2_1024_683.jpg", 1024, 683)]),
    Sample(C + "vpc_resnet50_imagenet_classification", main="src/acl_sample.py", cwd=".",
           singleop=[("op_models/op_list.json", "op_models/")],
           models=[_RESNET_AIPP],
           images=[("data/dog1_1024_683.jpg", 1024, 683), ("data/dog2_1024_683.jpg", 1024, 683)]),
    *[Sample(C + "vpc_jpeg_resnet50_imagenet_classification", main="src/main.py", cwd=".",
             tag=f"dvpp_type={t}", args=[f"--images_path={img}", f"--dvpp_type={t}",
                                         f"--image_type={kind}", *extra],
             models=[_RESNET_AIPP],
             images=[("data/wood_rabbit_1024_1061_330.jpg", 1024, 1061)],
             files={"data/wood_rabbit_1024_1068_nv12.yuv": 1024 * 1068 * 3 // 2}
             | ({"data/dvpp_vpc_8192_8192_nv12.yuv": 8192 * 8192 * 3 // 2} if t == 4 else {}))
      for t, img, kind, extra in (
          (0, "./data/wood_rabbit_1024_1061_330.jpg", "jpg", []),
          (1, "./data/wood_rabbit_1024_1068_nv12.yuv", "yuv", []),
          (2, "./data/wood_rabbit_1024_1068_nv12.yuv", "yuv", []),
          (3, "./data/wood_rabbit_1024_1068_nv12.yuv", "yuv", []),
          (4, "./data/dvpp_vpc_8192_8192_nv12.yuv", "yuv", []),
          (5, "./data/wood_rabbit_1024_1068_nv12.yuv", "yuv",
           ["--in_batch_size=1", "--out_batch_size=8"]))],
    Sample(C + "resnet50_imagenet_dynamic_hw", main="src/acl_net.py", cwd="src",
           models=[Model("model/tf_resnet50.om", [("Placeholder", "uint8", (1, -1, -1, 3))],
                         [("float32", (1, 1001))], aipp="model/aipp_resnet50.aippconfig",
                         net=(1, 3, -1, -1), hw=((112, 112), (224, 224), (448, 448)))],
           files={"model/aipp_resnet50.aippconfig": _DYNAMIC_HW_AIPP},
           images=[("data/dog1_1024_683.jpg", 1024, 683)],
           note="the README's aipp_resnet50.aippconfig is downloaded; the substitute is a "
           "static RGB888_U8 AIPP with src_image_size 0 (ATC's rule for --dynamic_image_size), "
           "over the README's gears 112, 224 and 448"),
    Sample(C + "vdec_resnet50_classification", main="src/acl_sample.py", cwd=".",
           models=[_RESNET_AIPP],
           files={"data/vdec_h265_1frame_rabbit_1280x720.h265":
                  partial(h265_stream, 1280, 720, 1)}),
    # ---- level2: object detection
    Sample(D + "YOLOV3_coco_detection_picture", main="src/object_detect.py", args=["../data"],
           models=[Model("model/yolov3_yuv.om", [("data", "uint8", _nv12(416, 416)),
                                                  ("img_info", "float32", (1, 4))],
                         [("float32", (1, 6144)), ("int32", (1, 8))], fill=0.0)],
           images=[("data/dog1_1024_683.jpg", 1024, 683)]),
    Sample(D + "YOLOV3_coco_detection_picture_with_postprocess_op", main="src/object_detect.py",
           args=["../data"],
           models=[Model("model/yolov3_tf_aipp.om", [("input", "uint8", _nv12(416, 416))],
                         [("float32", (1, 13, 13, 255)), ("float32", (1, 26, 26, 255)),
                          ("float32", (1, 52, 52, 255))]),
                   Model("model/yolov3_output_op.om",
                         [("conv0", "float32", (1, 255, 13, 13)),
                          ("conv1", "float32", (1, 255, 26, 26)),
                          ("conv2", "float32", (1, 255, 52, 52)), ("img_info", "float32", (4,))],
                         [("float32", (1, 6144)), ("int32", (1, 8))], fill=0.0)],
           images=[("data/dog1_1024_683.jpg", 1024, 683)]),
    Sample(D + "YOLOV3_mask_detection_picture", main="src/mask_detect.py", args=["../data/"],
           models=[Model("model/mask_detection.om", [("images", "float32", (1, 352, 640, 3))],
                         [("float32", (1, 11, 20, 24)), ("float32", (1, 22, 40, 24)),
                          ("float32", (1, 44, 80, 24))], fill=-10.0)],
           images=[("data/mask.jpg", 640, 480)]),
    Sample(D + "YOLOV4_coco_detection_picture", main="src/yolov4.py",
           models=[_YOLOV4],
           images=[("data/test.jpg", 640, 480)]),
    Sample(D + "YOLOV4_coco_detection_car_picture", main="src/yolov4.py",
           models=[_YOLOV4],
           images=[("data/test.jpg", 1280, 720)]),
    Sample(D + "YOLOV4_coco_detection_car_video", main="src/yolov4.py", args=["../data/test.mp4"],
           models=[_YOLOV4],
           videos=[("data/test.mp4", 640, 360, 3)]),
    Sample(D + "YOLOV3_mask_detection_video", out_of_scope="video from a camera or RTSP URL, "
           "results shown through the presenter server (network display)"),
    Sample(D + "coco_detection_rtsp", out_of_scope="RTSP video stream (network)"),
    Sample(D + "object_detection_camera", out_of_scope="Atlas 200 DK camera and the presenter "
           "server display"),
    # ---- level2: segmentation, NLP, other
    Sample(L2 + "3_segmentation/deeplabv3_pascal_pic", main="src/deeplabv3.py", args=["../data"],
           models=[Model("model/deeplabv3_plus.om", [("ImageTensor", "int8", (1, 513, 513, 3))],
                         [("float32", (1, 513, 513))], fill=0.0)],
           images=[("data/person.jpg", 640, 480)]),
    Sample(L2 + "3_segmentation/deeplabv3_postprocess_optimization",
           main="src/deeplab_dvpp_aipp_quant.py",
           note="the substitute's AIPP input is the 528x514-stride NV12 picture the program "
           "feeds (the README's aipp.cfg is downloaded)",
           models=[Model("model/deeplab_quant.om", [("x", "uint8", _nv12(528, 514))],
                         [("float32", (1, 21, 513, 513))], fill=0.0)],
           images=[("data/person.jpg", 640, 480)]),
    Sample(L2 + "3_segmentation/unet++", out_of_scope="runs on the MindX SDK (StreamManagerApi "
           "pipelines), not pyACL"),
    Sample(L2 + "5_nlp/bert_text_classification", main="src/bert_text_classification.py",
           models=[Model("model/bert_text_classification.om",
                         [("input_1", "float32", (1, 300)), ("input_2", "float32", (1, 300))],
                         [("float32", (1, 5))])],
           files={"data/sample.txt": "体育比赛今天开始，运动员入场。".encode()}),
    Sample(L2 + "6_other/animeGAN_picture", main="src/AnimeGAN.py", args=["../data/", "256"],
           models=[Model("model/AnimeGANv2_256.om", [("test", "uint8", _nv12(256, 256))],
                         [("float32", (1, 256, 256, 3))])],
           images=[("data/scenery.jpg", 640, 480)]),
    Sample(L2 + "6_other/colorization_picture", main="src/colorize.py", args=["../data/"],
           models=[Model("model/colorization_yuv.om", [("data_l", "float32", (1, 1, 224, 224))],
                         [("float32", (1, 2, 56, 56))])],
           images=[("data/dog.png", 320, 240)]),
    Sample(L2 + "6_other/style_transfer_picture", main="src/main.py", args=["../data", "xingkong"],
           models=[Model("model/xingkong1_fp32_nchw_no_aipp.om",
                         [("input", "float32", (1, 3, 720, 1080))],
                         [("float32", (1, 3, 360, 540))])],
           images=[("data/building.jpg", 640, 480)]),
    Sample(L2 + "6_other/imageinpainting_hifill", main="src/main.py",
           singleop=[("../model/matmul_27648.json", "../model")],
           files={"model/matmul_27648.json": json.dumps([{
               "op": "BatchMatMul",
               "input_desc": [{"format": "NCHW", "shape": [1, 1, 1024, 1024],
                               "type": "float32"},
                              {"format": "NCHW", "shape": [1, 1, 1024, 27648],
                               "type": "float32"}],
               "output_desc": [{"format": "NCHW", "shape": [1, 1, 1024, 27648],
                                "type": "float32"}],
               "attr": [{"name": "adj_x1", "type": "bool", "value": False},
                        {"name": "adj_x2", "type": "bool", "value": False}]}]).encode()},
           models=[Model("model/hifill.om", [("img", "float32", (1, 512, 512, 3)),
                                            ("mask", "float32", (1, 512, 512, 1))],
                         [("float32", (1, 512, 512, 3)), ("float32", (1, 1024, 1024)),
                          ("float32", (1, 512, 512, 1))])],
           images=[("data/test.jpg", 640, 480), ("mask/test.png", 640, 480)],
           note="the single-op JSON is ours (the README downloads it): BatchMatMul "
           "[1,1,1024,1024] x [1,1,1024,27648] as the program's descs say"),
    Sample(L2 + "6_other/video_super_resolution", main="src/video_super_resolution.py",
           note="needs imageio, ffmpeg-python and the ffmpeg programs (installed for the run)",
           models=[Model("model/EDVR_180_320.om", [("L_input", "float32", (1, 5, 180, 320, 3))],
                         [("float32", (1, 720, 1280, 3))])],
           videos=[("data/low_resolution.mp4", 320, 180, 6)]),
    Sample(L2 + "6_other/colorization_video", out_of_scope="video from a camera or RTSP URL, "
           "results shown through the presenter server (network display)"),
    Sample(L2 + "0_data_process/venc_image", main="src/acl_venc.py", cwd="src",
           files={"data/dvpp_venc_128x128_nv12.yuv": 128 * 128 * 3 // 2}),
    Sample(L2 + "n_e2e/ssd_mobilenetv2_picture", main="src/main.py",
           note="needs easydict (installed for the run)",
           models=[Model("model/ssd_500.om", [("x", "float32", (1, 3, 320, 320))],
                         [("float32", (1, 2034, 4)), ("float32", (1, 2034, 81))], fill=0.0)],
           images=[("data/test.jpg", 640, 480)]),
    Sample(L1 + "5_200dk_peripheral/gpio", out_of_scope="Atlas 200 DK GPIO pins"),
    Sample(L1 + "5_200dk_peripheral/i2c", out_of_scope="Atlas 200 DK I2C bus"),
    Sample(L1 + "5_200dk_peripheral/uart", out_of_scope="Atlas 200 DK UART"),
    Sample(L1 + "9_amct", out_of_scope="AMCT quantisation with Caffe/TensorFlow/PyTorch/"
           "MindSpore/ONNX Runtime training frameworks, model downloads"),
]


# ----------------------------------------------------------------------------- models
def build_model(m: Model, dest: Path, seed: int, folder: Path | None = None) -> None:
    """Write a substitute ``.om``: every output is ``mean(input 0) * 0 + C`` (C a constant
    of the output's shape), so it depends on the input and has the declared signature.
    With ``m.aipp`` the network takes the float ``m.net`` and the sample's own AIPP
    configuration (read from ``folder``) is inserted in front of it, as ``atc
    --insert_op_conf`` does; ``m.hw`` gives it image-size gears (``--dynamic_image_size``)."""
    from acl_lab.runtime import aipp

    g = GraphBuilder(dest.stem, "Ascend310P3")
    rng = np.random.default_rng(seed)
    names = []
    for i, (name, dtype, shape) in enumerate(m.inputs):
        if i == 0 and m.aipp:
            names.append(g.add_input(name, "float32", m.net))
            continue
        names.append(g.add_input(name, dtype, (-1, *shape[1:]) if m.gears else shape))
    if m.gears:
        g.dynamic_batch = list(m.gears)
    if m.hw:
        g.dynamic_hw = [list(x) for x in m.hw]
    first, first_dtype = names[0], "float32" if m.aipp else m.inputs[0][1]
    if first_dtype not in ("float32", "float16"):  # ReduceMeanD takes no uint8
        first = g.add_node("Cast", [first], {"dst_type": DT_FLOAT}, name="tofloat")[0]
        first_dtype = "float32"
    rank = len(m.net) if m.aipp else len(m.inputs[0][2])
    axes = list(range(1, rank)) if m.gears else []
    mean = g.add_node("ReduceMeanD", [first], {"axes": axes, "keep_dims": False},
                      name="mean")[0]
    for i, (dtype, shape) in enumerate(m.outputs):
        src = mean
        if m.gears:  # (batch,) -> (batch, 1, ..., 1): the output keeps the batch's rows
            dims = g.add_weight(f"dims{i}", np.array([-1] + [1] * (len(shape) - 1), np.int64))
            src = g.add_node("Reshape", [src, dims], name=f"rows{i}")[0]
        if dtype != first_dtype:
            src = g.add_node("Cast", [src], {"dst_type": _ACL_DTYPE[dtype]},
                             name=f"cast{i}")[0]
        zero = g.add_weight(f"zero{i}", np.zeros((), dtype))
        scaled = g.add_node("Mul", [src, zero], name=f"scale{i}")[0]
        const_shape = (1, *shape[1:]) if m.gears else shape
        if m.fill is None:
            value = rng.random(const_shape).astype(dtype)
        else:
            value = np.full(const_shape, m.fill, dtype)
        c = g.add_weight(f"const{i}", value)
        out = g.add_node("Add", [scaled, c], name=f"out{i}")[0]
        g.add_output(out, dtype, (-1, *shape[1:]) if m.gears else shape)
    om = g.build()
    if m.aipp:
        om = aipp.insert_static(om, aipp.read_config(str((folder or dest.parent) / m.aipp)))
        want = m.inputs[0][2]
        got = om.inputs[0].shape
        if -1 not in want and int(np.prod(got)) != int(np.prod(want)):
            raise ValueError(f"{m.path}: AIPP makes input 0 {list(got)}, the sample feeds "
                             f"{list(want)}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    save_om(om, dest)


# ----------------------------------------------------------------------------- running
def extract(repo: str, sample: Sample, work: Path) -> Path:
    """``git archive HEAD <sample> python/common`` into ``work``; returns the sample folder."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    tar = subprocess.run(["git", "-C", repo, "archive", "HEAD", sample.path, "python/common"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(work, filter="data")
    return work / sample.path


def prepare(sample: Sample, folder: Path) -> None:
    """Write the substitute models, single-op models, pictures and files."""
    for rel, data in sample.files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, int):
            with open(p, "wb") as f:
                f.truncate(data)  # a YUV picture of zeros (black luma, grey-free chroma)
        else:
            p.write_bytes(data if isinstance(data, bytes) else data())
    for i, m in enumerate(sample.models):
        build_model(m, folder / m.path, 1000 + i, folder)
    for json_file, out in sample.singleop:
        base = folder / (sample.cwd or Path(sample.main).parent)
        cmd = [sys.executable, "-m", "acl_lab.cli", "atc", f"--singleop={json_file}",
               "--soc_version=Ascend310P3", f"--output={out}"]
        subprocess.run(cmd, cwd=base, check=True, capture_output=True, text=True)
    for n, (rel, w, h) in enumerate(sample.images):
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(_jpeg(w, h, n, "PNG" if rel.lower().endswith(".png") else "JPEG"))
    for rel, w, h, frames in sample.videos:
        write_video(folder / rel, w, h, frames)


_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*)?(?:Error|Exception|Interrupt|Exit)"
                       r"(?::|$)")


def first_error(stderr: str) -> str:
    """The first exception line of the output (the program's first failure, not what its
    destructors raised after it), else the first line that says error or fail."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if _EXC_LINE.match(ln):
            return ln[:300]
    for ln in lines:
        if "error" in ln.lower() or "fail" in ln.lower():
            return ln[:300]
    return ""


def run_sample(repo: str, sample: Sample, workroot: Path) -> dict[str, Any]:
    """Extract, prepare and run one sample; the result record."""
    rec: dict[str, Any] = {"path": sample.path, "key": sample.key, "main": sample.main,
                           "args": sample.args}
    if sample.out_of_scope:
        rec.update(result="out of scope", reason=sample.out_of_scope)
        return rec
    work = workroot / sample.key.replace("/", "+").replace(" ", "").replace("[", "+")\
        .replace("]", "")
    folder = extract(repo, sample, work)
    try:
        prepare(sample, folder)
    except subprocess.CalledProcessError as e:
        text = (e.stderr or "") + (e.stdout or "")
        coded = [ln for ln in text.splitlines() if re.match(r"E\d{5}", ln)]
        rec.update(result="setup failed", error=(coded[0] if coded else text[-300:]))
        return rec
    cwd = folder / (sample.cwd or Path(sample.main).parent)
    cwd.mkdir(parents=True, exist_ok=True)
    summary = work / "summary.json"
    program = os.path.relpath(folder / sample.main, cwd)
    mode = ["--run-mode", sample.run_mode] if sample.run_mode else []
    cmd = [sys.executable, "-m", "acl_lab.cli", "run", "--quiet", "--summary", str(summary),
           *mode, program, *sample.args]
    # the samples' environment guide installs acllite on PYTHONPATH (python/environment/
    # README_CN.md: export PYTHONPATH=${THIRDPART_PATH}/acllite:$PYTHONPATH)
    acllite = str(work / "python" / "common" / "acllite")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(x for x in (acllite, os.environ.get("PYTHONPATH"))
                                          if x))
    start = time.monotonic()
    timed_out = False
    with open(work / "stdout.txt", "w") as out, open(work / "stderr.txt", "w") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True, env=env)
        try:
            proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            # Ctrl-C: acl-lab run stops the program and still writes its summary
            timed_out = True
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    stderr = (work / "stderr.txt").read_text(errors="replace")
    rec["seconds"] = round(time.monotonic() - start, 1)
    rec["exit_code"] = proc.returncode
    findings = []
    if summary.exists():
        data = json.loads(summary.read_text())
        for f in data["findings"]:
            file = f.get("file") or ""
            if file and not file.startswith("<"):
                file = os.path.normpath(os.path.join(cwd, file))
            inside = file.startswith(str(work))
            rel = os.path.relpath(file, work / "python") if inside else file
            line = int(f.get("line") or 0)
            code = ""
            if inside and line > 0 and os.path.exists(file):
                src = Path(file).read_text(errors="replace").splitlines()
                code = src[line - 1].strip() if line <= len(src) else ""
            findings.append({"kind": f["kind"], "severity": f["severity"], "file": rel,
                             "line": line, "code": code,
                             "message": f["message"].replace(str(work) + os.sep, "")
                             .split(". ")[0][:240]})
        rec["error"] = data.get("error") or ""
    rec["findings"] = findings
    rec["first_error"] = (first_error(stderr).replace(str(work) + os.sep, "")
                          if proc.returncode or timed_out else "")
    if timed_out:
        rec["result"] = f"timeout ({TIMEOUT} s, interrupted)"
    else:
        rec["result"] = "finished" if proc.returncode == 0 else f"exit {proc.returncode}"
    return rec


def main(argv: list[str] | None = None) -> int:
    """Run the samples (all or ``--only``), merge into docs/samples.json, write the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.environ.get("ACL_LAB_SAMPLES_REPO", ""),
                    help="the samples repository (a bare git dir is enough)")
    ap.add_argument("--only", action="append", default=[], help="a sample path (repeatable)")
    ap.add_argument("--workdir", default=os.path.join(
        os.environ.get("TMPDIR", "/tmp"), "acl_lab_samples"))
    ap.add_argument("--table-only", action="store_true",
                    help="rewrite docs/samples.md from docs/samples.json without running")
    a = ap.parse_args(argv)
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not a.table_only:
        if not a.repo:
            ap.error("--repo (or $ACL_LAB_SAMPLES_REPO) is required")
        commit = subprocess.run(["git", "-C", a.repo, "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        only = {o.rstrip("/") for o in a.only}
        chosen = [s for s in SAMPLES if not only or s.path in only or s.key in only]
        unknown = only - {s.path for s in chosen} - {s.key for s in chosen}
        if unknown:
            ap.error(f"unknown sample {sorted(unknown)}")
        for s in chosen:
            rec = run_sample(a.repo, s, Path(a.workdir))
            rec["commit"] = commit
            results[s.key] = rec
            print(f"{s.key}: {rec['result']} "
                  f"{len(rec.get('findings', []))} findings {rec.get('first_error', '')}",
                  flush=True)
        RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    write_table(results)
    return 0


# ----------------------------------------------------------------------------- the table
#: Judgements of findings, read at the cited line of the sample's code: (sample path or ""
#: for any sample, kind, file name, start of the code at the line, verdict). The first rule
#: that matches wins. "true" = real hardware has that bug; "false" = the emulator is wrong.
_LEAK_EXIT = "true: a consequence of the failure above (the program exits before its frees)"
VERDICTS: tuple[tuple[str, str, str, str, str], ...] = (
    # acllite (python/common/acllite), shared by most level-2 samples
    ("", "leak", "acllite_imageproc.py", "pic_desc = acl.media.dvpp_create_pic_desc()",
     "true: jpegd's output pic desc (_gen_jpegd_out_pic_desc) is never destroyed"),
    ("", "leak", "acllite_imageproc.py", "self._crop_config = acl.media.dvpp_create_roi_config(",
     "true: crop_and_paste's ROI configs are created per call and never destroyed"),
    ("", "leak", "acllite_imageproc.py", "self._paste_config = acl.media.dvpp_create_roi_config(",
     "true: crop_and_paste's ROI configs are created per call and never destroyed"),
    ("", "leak", "acllite_imageproc.py", "self._stream, ret = acl.rt.create_stream()",
     "true: AclLiteImageProc(None) creates a stream that destroy() never destroys (warning: "
     "destroy_context releases it)"),
    ("", "leak", "acllite_utils.py", "device_buffer, ret = acl.rt.malloc(data_size,",
     "true: AclLiteModel caches the device copy of a numpy input in _input_buffer and "
     "destroy() never frees it"),
    ("", "leak", "acllite_model.py", "buf, ret = acl.rt.malloc(dataLen,",
     "true: the dynamic-batch index buffer is allocated per execute and never freed"),
    ("", "destroy_order", "acllite_image.py", "acl.media.dvpp_free(self._data)",
     "true (warning): AclLiteImage objects are freed by the garbage collector after "
     "AclLiteResource.__del__ reset the device"),
    ("", "uninitialized_read", "acllite_model.py", "ret = acl.rt.memcpy(output_ptr,",
     "true, harmless (info): acllite copies the whole max-batch output, the program uses the "
     "rows of its batch"),
    (C + "googlenet_imagenet_multi_batch", "uninitialized_read", "acllite_model.py",
     "ret = acl.mdl.execute(", "true, harmless here (warning): the partial last batch leaves "
     "8 rows unfilled and post_process reads only the first `left` rows"),
    (C + "googlenet_imagenet_multi_batch", "size_mismatch", "acllite_model.py",
     "ret = acl.mdl.execute(", "true, harmless here (warning): same partial last batch"),
    # the samples' own code
    ("", "destroy_order", "classify.py", "acl.rt.free(self.total_buffer)",
     "true (warning): Classify.__del__ frees the batch buffer after the device was reset"),
    (C + "googlenet_imagenet_multi_batch", "leak", "classify.py", "self.total_buffer, ret =",
     "true: batch_process allocates a new batch buffer per batch, __del__ frees only the last"),
    ("", "memcpy_kind_mismatch", "", "ret = acl.rt.memcpy(np_data_ptr, size, data, size, policy)",
     "true: copy_data_as_numpy is called with host_buffer and ACL_MEMCPY_DEVICE_TO_HOST (it "
     "prints the host buffer, not the device data it says)"),
    (L1 + "1_acl/2_memory_management/memcpy_host_device_async_python", "leak", "",
     "stream", "true (warning): both streams are never destroyed (destroy_context releases "
     "them)"),
    (L1 + "1_acl/2_memory_management/memcpy_host_device_python", "use_after_free", "",
     "ret = acl.rt.memset(host_buffer", "true: with the README's --write_back_host "
     "--memory_reuse, host_buffer is rebound to the write-back buffer, freed, then memset in the "
     "next cycle; the failure makes the loop `continue` without counting, forever"),
    (L1 + "1_acl/2_memory_management/memcpy_host_device_python", "leak", "", "",
     "true: a consequence of the endless retry loop (the run was interrupted before the frees)"),
    (L1 + "1_acl/4_blas/acl_operator_add", "leak", "acl_execute_add.py", "",
     "true: host_outputs (malloc_host) are never freed in release_resource"),
    (L1 + "4_op_dev/2_verify_op/acl_execute_slice", "leak", "slice_test.py", "",
     "true: the program exits on the numpy error before its destroy calls"),
    (C + "resnet50_async_imagenet_classification", "leak", "acl_net.py", "",
     "true: the per-callback malloc_host output copies are never freed"),
    (C + "vpc_jpeg_resnet50_imagenet_classification", "out_of_bounds", "acl_dvpp_process.py",
     "", "true: the whole JPEGD output (128x16-aligned, 1024x1072) is copied into a resize "
     "input sized for 16x2 alignment (1024x1062); real hardware overruns the DVPP buffer "
     "silently"),
    (C + "vpc_jpeg_resnet50_imagenet_classification", "size_mismatch", "acl_model_process.py",
     "", "true (warning): the crop path hands the model a buffer bigger than its input"),
    (C + "vpc_jpeg_resnet50_imagenet_classification", "uninitialized_read",
     "acl_dvpp_process.py", "", "true, harmless (info): the JPEGE output buffer is copied "
     "whole, its tail past the encoded size was never written"),
    (C + "vpc_jpeg_resnet50_imagenet_classification", "leak", "main.py", "", _LEAK_EXIT),
    (C + "resnet50_imagenet_dynamic_hw", "out_of_bounds", "acl_net.py",
     "ret = acl.rt.memcpy(item[\"buffer\"],", "true: the input is copied with "
     "get_input_size_by_index, the largest gear's 448x448x3 bytes, from the 224x224x3 bytes "
     "of the picture: a host over-read of 441 KiB (the model reads only its gear's bytes, so "
     "the result is right, but the program crashes if the pages after the buffer are not "
     "mapped)"),
    (C + "vpc_resnet50_imagenet_classification", "invalid_free", "acl_model.py",
     "ret = acl.rt.free(data)", "true (warning): Model.__del__ frees the input dataset's "
     "buffer, the DVPP resize output, with acl.rt.free; the runtime frees it (aclrtFreeImpl "
     "-> rtFree -> DevMemFree, the same driver free as acldvppFree), but the documented pair "
     "is acl.media.dvpp_free"),
    (C + "vpc_resnet50_imagenet_classification", "double_free", "acl_dvpp.py",
     "acl.media.dvpp_free(self._resize_out_dev)", "true: Dvpp.__del__ dvpp_frees the resize "
     "output that Model.__del__ already freed with acl.rt.free at acl_model.py:149"),
    (C + "vpc_resnet50_imagenet_classification", "leak", "acl_model.py", "",
     "true: _gen_input_dataset makes a new input dataset and data buffer per picture and only "
     "the last is destroyed"),
    (C + "vpc_resnet50_imagenet_classification", "leak", "acl_dvpp.py", "",
     "true: gen_tensor_desc allocates a new decode and resize output (and their pic descs) per "
     "picture; only the last picture's are released"),
    (C + "vdec_resnet50_classification", "leak", "acl_vdec.py", "",
     "true: Vdec frees these only in __del__ (which does not run while acl.util.start_thread "
     "holds its bound method) or in _destroy_resource, which nothing calls"),
    (C + "vdec_resnet50_classification", "leak", "", "",
     "true: each frame gets a new resize output, pic desc, dataset and data buffer; only the "
     "last is released"),
    (C + "vdec_resnet50_classification", "double_free", "acl_dvpp.py", "",
     "true: Dvpp keeps the VDEC output (need_malloc=False) as _decode_out_buffer, which "
     "acl_sample.py frees after each frame and Dvpp.__del__ frees again"),
    (L2 + "6_other/imageinpainting_hifill", "leak", "main.py", "",
     "true: forward_op_batch_matmul and its helpers never destroy or free anything"),
    (L2 + "0_data_process/venc_image", "free_in_flight", "acl_venc.py", "",
     "true: the input picture is dvpp_free'd right after the frames are sent, before "
     "venc_destroy_channel waits for the encoder"),
)


def verdict(path: str, f: dict[str, Any]) -> str:
    """The recorded judgement of one finding ('true: why' / 'false: why'), or 'unjudged'."""
    name = os.path.basename(f["file"])
    for where, kind, file, code, why in VERDICTS:
        if (where in ("", path) and kind == f["kind"] and file in ("", name)
                and f["code"].startswith(code)):
            return why
    return "unjudged"


def write_table(results: dict[str, Any]) -> None:
    """docs/samples.md from the result records."""
    order = {s.key: i for i, s in enumerate(SAMPLES)}
    recs = sorted(results.values(), key=lambda r: order.get(r.get("key", r["path"]), 1 << 30))
    ran = [r for r in recs if r["result"] != "out of scope"]
    finished = [r for r in ran if r["result"] == "finished"]
    clean = [r for r in finished if not r.get("findings")]
    true_only = [r for r in finished if r.get("findings") and all(
        verdict(r["path"], f).startswith("true") for f in r["findings"])]
    oos = [r for r in recs if r["result"] == "out of scope"]
    out = ["# The public pyACL samples under acl-lab run", "",
           "Generated by `scripts/public_samples.py` (do not edit by hand: the verdicts live "
           "in the script). Each sample ran unmodified with substitute models and inputs "
           "(see the script's docstring).", "",
           f"Ran {len(ran)} runs of {len({r['path'] for r in ran})} samples (a sample whose "
           "README runs it several ways has a row per run), "
           f"finished {len(finished)}, finished clean {len(clean)}, "
           f"finished with only true findings {len(true_only)}, "
           f"out of scope {len(oos)}.", "",
           "| sample | commit | result | findings (kind, file:line: verdict) | cause of failure |",
           "| --- | --- | --- | --- | --- |"]
    by = {s.key: s for s in SAMPLES}
    for r in recs:
        if r["result"] == "out of scope":
            continue
        short = r["path"].removeprefix("python/") + "/"
        fs = "<br>".join(f"{f['kind']} ({f['severity']}) {f['file'].removeprefix(short)}:"
                         f"{f['line']}: "
                         f"{verdict(r['path'], f)}" for f in r.get("findings", [])) or "none"
        cause = r.get("first_error", "") or r.get("error", "")
        key = r.get("key", r["path"])
        note = by[key].note if key in by else ""
        cause = "; ".join(x for x in (cause, note) if x)
        out.append(f"| {key} | {r.get('commit', '')[:10]} | {r['result']} | "
                   f"{fs} | {cause.replace('|', '/')} |")
    out += ["", "## Out of scope", "", "| sample | why |", "| --- | --- |"]
    out += [f"| {r['path']} | {r['reason']} |" for r in oos]
    out += ["", *binding_section()]
    TABLE.write_text("\n".join(out) + "\n")


def binding_section() -> list[str]:
    """The binding functions still not emulated, grouped by reason, from the status data of
    acl_lab/acl/_binding.py (the same data the binding-surface test checks)."""
    import acl_lab.acl  # noqa: F401  (registers every emulated function)
    from acl_lab.acl import _binding
    from acl_lab.acl._boundary import registry

    reg = {n for n in registry() if n == "acl" or n.startswith("acl.")}
    by_reason: dict[str, list[str]] = {}
    for e in _binding.TABLE:
        st = _binding.status(e.full, reg)
        if st != "emulated":
            by_reason.setdefault(st.removeprefix("not emulated: "), []).append(e.full)
    missing = sorted(n for n in _binding.SAMPLE_CALLED if n not in reg)
    total = len(_binding.TABLE)
    out = ["## Binding functions not emulated", "",
           f"Of the {total} entries of the real binding's method table, {len(reg)} are "
           f"emulated and {total - len(reg)} are not; calling one of those raises "
           "`NotImplementedError` naming it and the reason. Public samples call "
           f"{len(_binding.SAMPLE_CALLED)} entries; not emulated among them: "
           f"{', '.join(missing) if missing else 'none'}.", "",
           "| why | count | functions |", "| --- | --- | --- |"]
    for why, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        out.append(f"| {why} | {len(names)} | {', '.join(f'`{n}`' for n in names)} |")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
