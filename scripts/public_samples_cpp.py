"""Build the public C++ AscendCL samples with their own CMake files against acl_lab's toolkit,
run them under ``acl-lab run`` and tabulate the results (the C++ twin of
``public_samples.py``).

A developer tool, not part of the package or of ``make test``: it needs a checkout of the
public Ascend samples repository (a bare git directory is enough)::

    python scripts/public_samples_cpp.py --repo PATH/TO/samples.git          # every sample
    python scripts/public_samples_cpp.py --repo ... \
        --only cplusplus/level2_simple_inference/0_data_process/jpegd

(``--repo`` defaults to ``$ACL_LAB_SAMPLES_REPO``.) For each sample it extracts the sample
folder (and ``cplusplus/common`` for the acllite library) blob by blob with ``git cat-file``,
sets the environment the sample's README asks for from ``acl-lab config --toolkit``
(``DDK_PATH``, ``NPU_HOST_LIB``, ``INSTALL_DIR``, ``CPU_ARCH``, ``THIRDPART_PATH``), builds it
unmodified as its README does (``cmake ../../../src`` in ``build/intermediates/host``, then
``make``; no ``-g``, as the READMEs build), writes substitute inputs where the code expects
them (the models, pictures, bitstreams and single-op models of ``public_samples.py``'s
kinds), runs the binary with the README's arguments under ``acl-lab run --summary`` with a
timeout, and records whether it compiled, how it ended, and its findings (kind, site).
Results are kept per sample in ``docs/samples_cpp.json`` (``--only`` re-runs one and keeps
the others) and the table is rewritten in ``docs/samples_cpp.md``.

Whether a finding is true (real hardware would have that bug) is a judgement made by reading
the sample's code at the cited function or line; the judgements live in ``VERDICTS`` below,
keyed by sample and finding kind and site.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from public_samples import (  # noqa: E402
    _RESNET_AIPP,
    Model,
    _jpeg,
    build_model,
    first_error,
    h265_stream,
)

RESULTS = ROOT / "docs" / "samples_cpp.json"
TABLE = ROOT / "docs" / "samples_cpp.md"
TIMEOUT = 300
L1 = "cplusplus/level1_single_api/1_acl/"
L2 = "cplusplus/level2_simple_inference/"
DP = L2 + "0_data_process/"
C = L2 + "1_classification/"


@dataclass
class Sample:
    """One public C++ sample: where it is, how its README runs it, what it needs."""

    path: str
    args: list[str] = field(default_factory=list)
    binary: str = "main"
    cwd: str = "out"                  # where the README runs the binary (sample-relative)
    models: list[Model] = field(default_factory=list)
    singleop: list[tuple[str, str, str]] = field(default_factory=list)  # (cwd, json, out)
    images: list[tuple[str, int, int]] = field(default_factory=list)
    #: contents, a zero-filled size, or a function making the contents at preparation
    files: Mapping[str, bytes | int | Callable[[], bytes]] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)  # folders the program writes into
    library: bool = False             # a library built by its Makefile (acllite): no run
    #: the sample links the acllite library: it is built and installed (make install) into
    #: the run's THIRDPART_PATH first, as its README asks
    acllite: bool = False
    out_of_scope: str = ""
    note: str = ""

    @property
    def name(self) -> str:
        """The sample's folder name."""
        return self.path.rsplit("/", 1)[1]


def _floats(n: int, seed: int) -> Callable[[], bytes]:
    return lambda: np.random.default_rng(seed).random(n, dtype=np.float32).tobytes()


def _halves(n: int, seed: int) -> Callable[[], bytes]:
    return lambda: np.random.default_rng(seed).random(n).astype(np.float16).tobytes()


def _gemm_inputs() -> dict[str, Callable[[], bytes]]:
    base = "run/out/test_data/data/"
    return {base + f"matrix_{k}.bin": _halves(16 * 16, i) for i, k in enumerate("abc")}


def h264_mp4(w: int, h: int, frames: int) -> bytes:
    """An MP4 of ``frames`` H.264 frames (PyAV's libx264): moving colour ramps."""
    import io
    from fractions import Fraction

    import av

    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        st = out.add_stream("libx264", rate=Fraction(25, 1))
        st.width, st.height, st.pix_fmt = w, h, "yuv420p"
        st.options = {"preset": "ultrafast"}
        xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
        for i in range(frames):
            rgb = np.stack([(xs * 2 + i * 20 + 0 * ys) % 256, (ys * 2 + 0 * xs) % 256,
                            np.full((h, w), 30 * i)], -1).astype(np.uint8)
            for packet in st.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in st.encode(None):
            out.mux(packet)
    return buf.getvalue()


_NCHW224 = 3 * 224 * 224
#: the resnet50 samples' model: float input (the README converts with --input_fp16_nodes,
#: and the program copies its .bin of float32 pixels into the model's input)
_RESNET = Model("model/resnet50.om", [("data", "float32", (1, 3, 224, 224))],
                [("float32", (1, 1000))])
_RESNET_BINS = {"data/dog1_1024_683.bin": _floats(_NCHW224, 1),
                "data/dog2_1024_683.bin": _floats(_NCHW224, 2)}

SAMPLES: list[Sample] = [
    # ---- level1: memory
    Sample(L1 + "2_memory_management/memcpy_host_device_cpp", cwd="build/out",
           args=["--release_cycle", "2", "--number_of_cycles", "2", "--device_id", "0",
                 "--memory_size", "10485760", "--write_back_host", "1", "--memory_reuse", "1"]),
    Sample(L1 + "2_memory_management/memcpy_host_device_async_cpp", cwd="build/out",
           args=["--release_cycle", "2", "--number_of_cycles", "2", "--device_id", "0",
                 "--memory_size", "10485760", "--write_back_host", "1", "--memory_reuse", "1"]),
    Sample(L1 + "2_memory_management/memcpy_host_DVPP_cpp", cwd="build/out",
           args=["--release_cycle", "2", "--number_of_cycles", "2", "--device_id", "0",
                 "--memory_size", "10485760", "--write_back_host", "1", "--memory_reuse", "1"],
           note="the README's 10 cycles cut to 2"),
    # ---- level1: BLAS
    Sample(L1 + "4_blas/gemm", binary="execute_gemm_op", cwd="run/out",
           singleop=[("run/out", "test_data/config/gemm.json", "op_models")],
           files=_gemm_inputs(), dirs=["run/out/result_files"]),
    # ---- level2: data processing
    Sample(DP + "jpegd", args=["../data/dog1_1024_683.jpg"],
           images=[("data/dog1_1024_683.jpg", 1024, 683)], dirs=["out/output"]),
    Sample(DP + "jpege", args=["../data/dvpp_output.yuv", "1024", "688"], dirs=["out/output"],
           files={"data/dvpp_output.yuv": 1024 * 688 * 3 // 2}),
    Sample(DP + "resize", dirs=["out/output"],
           args=["../data/wood_rabbit_1024_1068_nv12.yuv", "1920", "1080",
                 "./output/output.yuv", "224", "224"],
           files={"data/wood_rabbit_1024_1068_nv12.yuv": 1920 * 1080 * 3 // 2},
           note="the README's input is named 1024x1068 but passed as 1920x1080; the "
           "substitute has the 1920x1080 size"),
    Sample(DP + "crop", dirs=["out/output"],
           args=["../data/wood_rabbit_1024_1068_nv12.yuv", "1024", "1068",
                 "./output/output.yuv", "350", "280", "224", "224"],
           files={"data/wood_rabbit_1024_1068_nv12.yuv": 1024 * 1068 * 3 // 2}),
    Sample(DP + "cropandpaste", dirs=["out/output"],
           args=["../data/wood_rabbit_1024_1068_nv12.yuv", "1024", "1068",
                 "./output/output.yuv", "224", "224"],
           files={"data/wood_rabbit_1024_1068_nv12.yuv": 1024 * 1068 * 3 // 2}),
    Sample(DP + "batchcrop", dirs=["out/output"],
           files={"data/dvpp_vpc_1920x1080_nv12.yuv": 1920 * 1080 * 3 // 2}),
    Sample(DP + "smallResolution_cropandpaste", dirs=["out/output"],
           args=["--inImgName", "../data/dvpp_vpc_1920x1080_nv12.yuv", "--inFormat", "1",
                 "--inWidth", "1920", "--inHeight", "1080", "--cLeftOffset", "0",
                 "--cRightOffset", "5", "--cTopOffset", "0", "--cBottomOffset", "5",
                 "--outImgName", "output_224_224.yuv", "--outFormat", "1", "--outWidth", "224",
                 "--outHeight", "224", "--pLeftOffset", "0", "--pRightOffset", "223",
                 "--pTopOffset", "0", "--pBottomOffset", "223"],
           files={"data/dvpp_vpc_1920x1080_nv12.yuv": 1920 * 1080 * 3 // 2}),
    Sample(DP + "vdec", dirs=["out/output"],
           files={"data/vdec_h265_1frame_rabbit_1280x720.h265":
                  partial(h265_stream, 1280, 720, 1)}),
    Sample(DP + "venc_image", args=["1"], dirs=["out/output"],
           files={"data/dvpp_venc_128x128_nv12.yuv": 128 * 128 * 3 // 2}),
    # ---- level2: classification
    Sample(C + "resnet50_firstapp", models=[_RESNET], files=_RESNET_BINS),
    Sample(C + "resnet50_imagenet_classification", models=[_RESNET], files=_RESNET_BINS,
           dirs=["out/result"]),
    Sample(C + "resnet50_async_imagenet_classification", models=[_RESNET],
           files=_RESNET_BINS, dirs=["out/result"]),
    Sample(C + "googlenet_imagenet_dynamic_batch",
           models=[Model("model/googlenet_dynamicbatch.om",
                         [("data", "float32", (1, 3, 224, 224))], [("float32", (1, 1000))],
                         gears=(1, 2))],
           files={f"data/dog{i}_1024_683.bin": _floats(_NCHW224, i) for i in (1, 2)},
           dirs=["out/result"]),
    Sample(C + "googlenet_imagenet_multi_batch",
           models=[Model("model/googlenet_multibatch.om",
                         [("data", "float32", (2, 3, 224, 224))], [("float32", (2, 1000))])],
           files={f"data/dog{i}_1024_683.bin": _floats(_NCHW224, i) for i in (1, 2)},
           dirs=["out/result"]),
    Sample(C + "vpc_resnet50_imagenet_classification", models=[_RESNET_AIPP],
           images=[("data/dog1_1024_683.jpg", 1024, 683), ("data/dog2_1024_683.jpg", 1024, 683)],
           singleop=[(".", "out/op_models/op_list.json", "out/op_models")],
           dirs=["out/result"]),
    Sample(C + "vpc_jpeg_resnet50_imagenet_classification", models=[_RESNET_AIPP],
           args=["0"], images=[("data/persian_cat_1024_1536_283.jpg", 1024, 1536),
                               ("data/wood_rabbit_1024_1061_330.jpg", 1024, 1061)],
           files={"data/wood_rabbit_1024_1068_nv12.yuv": 1024 * 1068 * 3 // 2},
           dirs=["out/result"]),
    Sample(C + "vdec_resnet50_classification", models=[_RESNET_AIPP], dirs=["out/result"],
           files={"data/vdec_h265_1frame_rabbit_1280x720.h265":
                  partial(h265_stream, 1280, 720, 1)}),
    # ---- level2: detection
    Sample(L2 + "2_object_detection/YOLOV3_dynamic_batch_detection_picture",
           args=["2"],
           models=[Model("model/yolov3_dynamic_batch.om",
                         [("data", "float32", (1, 3, 416, 416)), ("img_info", "float32", (1, 4))],
                         [("float32", (1, 6144)), ("int32", (1, 8))], gears=(1, 2, 4, 8),
                         fill=0.0)],
           files={f"data/input_float32_{b}x3x416x416.bin.in": _floats(b * 3 * 416 * 416, b)
                  for b in (1, 2, 4, 8)}, dirs=["out/result"]),
    # ---- level2: single operators
    Sample(L2 + "6_other/acl_execute_conv2d", cwd="out",
           args=["../data/fmap.bin", "../data/weight.bin", "../data/output.bin"],
           singleop=[("model", "op_list.json", ".")],
           note="the README makes the input files with a script; the substitutes are random"),
    Sample(L2 + "6_other/acl_compile_and_execute_conv2d", cwd="out",
           args=["../data/fmap.bin", "../data/weight.bin", "../data/output.bin"],
           note="the README makes the input files with a script; the substitutes are random"),
    # ---- the acllite C++ library (its Makefile reads INSTALL_DIR and THIRDPART_PATH)
    Sample("cplusplus/common/acllite", library=True,
           note="needs FFmpeg's development files (Debian's libavcodec-dev and friends); "
           "VideoCapture is written for FFmpeg 4: the toolkit's thirdpart/include "
           "(THIRDPART_PATH) has a libavcodec/avcodec.h that adds libavcodec/bsf.h, where "
           "FFmpeg 5 moved AVBitStreamFilter"),
    # an acllite sample that needs no camera, display, RTSP or presenter server (the
    # picture ones read their pictures with OpenCV): FFmpeg demuxes a local MP4 (acllite's
    # VideoCapture), VDEC decodes it, VENC encodes the frames
    Sample(DP + "vdecandvenc", acllite=True, args=["../data/person.mp4"], dirs=["out/output"],
           files={"data/person.mp4": partial(h264_mp4, 320, 240, 8)},
           note="the README's person.mp4 is a substitute: 8 frames of H.264 at 320x240"),
    Sample(C + "resnet50_imagenet_dynamic_dims",
           out_of_scope="the program reads its pictures with OpenCV (opencv2/opencv.hpp): "
           "needs libopencv-dev, which the toolkit does not provide"),
]

#: judgements of findings: (sample name, kind, site substring) -> verdict text
_PRINT_DATA = ("true: print_data mallocs a pinned host buffer (aclrtMallocHost) for every "
               "print and never frees it")
_CONV = "true: main destroys and frees these only on its error paths"
VERDICTS: dict[tuple[str, str, str], str] = {
    ("memcpy_host_device_cpp", "leak", "print_data"): _PRINT_DATA,
    ("memcpy_host_device_async_cpp", "leak", "print_data"): _PRINT_DATA,
    ("memcpy_host_DVPP_cpp", "leak", "print_data"): _PRINT_DATA,
    ("memcpy_host_device_async_cpp", "leak", "setup_acl_device"):
        "true (warning): the stream is destroyed only on setup's error path; "
        "aclrtDestroyContext releases it",
    ("crop", "leak", "main+0x172"): "true: inBufferDev (acldvppMalloc) is never freed",
    ("crop", "leak", "main+0xb1"): "true: the DVPP channel desc is never destroyed",
    ("crop", "leak", "main+0xc7"): "true: acldvppDestroyChannel is never called",
    ("cropandpaste", "leak", "main+0x135"): "true: inBufferDev (acldvppMalloc) is never freed",
    ("jpegd", "leak", "main+0x350"): "true: decodeOutDevBuffer_ is never freed",
    ("jpegd", "leak", "main+0x243"): "true: the DVPP channel desc is never destroyed",
    ("jpegd", "leak", "main+0x259"): "true: acldvppDestroyChannel is never called",
    ("jpege", "leak", "main+0x63e"): "true: g_encodeOutBufferDev is never freed",
    ("jpege", "leak", "main+0x331"): "true: the DVPP channel desc is never destroyed",
    ("jpege", "leak", "main+0x36a"): "true: acldvppDestroyChannel is never called",
    ("googlenet_imagenet_dynamic_batch", "leak", "CreateModelInput+0xb4"):
        "true: the dynamic-batch tensor's device buffer is never freed",
    ("googlenet_imagenet_dynamic_batch", "leak", "CreateModelInput+0xca"):
        "true: the dynamic-batch tensor's data buffer is never destroyed",
    ("googlenet_imagenet_dynamic_batch", "leak", "ReadPicture"):
        "true: a pinned buffer per picture, only the last one freed",
    ("googlenet_imagenet_multi_batch", "leak", "ReadPicture"):
        "true: a pinned buffer per picture, only the last one freed",
    ("vpc_resnet50_imagenet_classification", "leak", "RunSigleOpArgMaxV2"):
        "true: the ArgMaxV2 input data buffers are created per picture and never destroyed",
    ("YOLOV3_dynamic_batch_detection_picture", "uninitialized_read", "DumpModelOutputResult"):
        "true, harmless (info): the whole max-batch output is copied, the program uses the "
        "rows of its batch",
    ("acl_compile_and_execute_conv2d", "leak", "PrintResult"):
        "true: PrintResult's pinned buffer is freed only when the copy fails",
    ("acl_compile_and_execute_conv2d", "leak", "GetDeviceBufferOfFile"): _CONV,
    ("acl_compile_and_execute_conv2d", "leak", "main+"): _CONV,
    # acl_execute_conv2d's main.cpp is acl_compile_and_execute_conv2d's with aclopExecuteV2:
    # the same PrintResult (aclrtMallocHost, aclrtFreeHost only in the copy's error branch)
    # and the same success path (stream, context, device and acl released; the descs, the
    # attr, the data buffers and the aclrtMalloc'd tensors only in the error branches)
    ("acl_execute_conv2d", "leak", "PrintResult"):
        "true: PrintResult's pinned buffer is freed only when the copy fails",
    ("acl_execute_conv2d", "leak", "GetDeviceBufferOfFile"): _CONV,
    ("acl_execute_conv2d", "leak", "main+"): _CONV,
}


# ----------------------------------------------------------------------------- running
def extract(repo: str, paths: list[str], work: Path) -> None:
    """The files under ``paths`` at HEAD, blob by blob (blobs a mirror lacks are skipped)."""
    ls = subprocess.run(["git", "--git-dir", repo, "ls-tree", "-r", "HEAD", *paths],
                        capture_output=True, text=True, check=True).stdout
    entries = []
    for line in ls.splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((sha, path, mode))
    with subprocess.Popen(["git", "--git-dir", repo, "cat-file", "--batch"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as cat:
        assert cat.stdin is not None and cat.stdout is not None
        for sha, path, mode in entries:
            cat.stdin.write(sha.encode() + b"\n")
            cat.stdin.flush()
            head = cat.stdout.readline().split()
            if head[1] == b"missing":
                continue
            data = cat.stdout.read(int(head[2]))
            cat.stdout.read(1)
            out = work / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            if mode == "100755":
                out.chmod(0o755)
        cat.stdin.close()


def toolkit_env(kit: Path, work: Path) -> dict[str, str]:
    """The environment the samples' READMEs ask for, pointing at the toolkit; THIRDPART_PATH
    is a copy of the toolkit's ``thirdpart`` in ``work`` (acllite's ``make install`` writes
    into it), whose ``lib`` the run's library path gets."""
    env = dict(os.environ)
    third = work / "thirdpart"
    if not third.exists():
        shutil.copytree(kit / "thirdpart", third)
    env.update(DDK_PATH=str(kit), NPU_HOST_LIB=str(kit / "runtime" / "lib64" / "stub"),
               INSTALL_DIR=str(kit), CPU_ARCH="x86_64", THIRDPART_PATH=str(third),
               LD_LIBRARY_PATH=os.pathsep.join(
                   x for x in (str(third / "lib"), os.environ.get("LD_LIBRARY_PATH")) if x))
    return env


def install_acllite(repo: str, work: Path, env: dict[str, str]) -> str:
    """Build the acllite library as its README does (``make`` then ``make install`` into
    THIRDPART_PATH); the first compiler error, or "" when it is installed."""
    lib = "cplusplus/common/acllite"
    extract(repo, [lib], work)
    proc = subprocess.run(["make", "-j2", "install"], cwd=work / lib, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return "acllite: " + first_error(proc.stdout + proc.stderr)
    return ""


def build(folder: Path, env: dict[str, str]) -> tuple[bool, str]:
    """cmake + make as the README does; (built, the first compiler error)."""
    src = folder / "src" if (folder / "src" / "CMakeLists.txt").exists() else folder
    host = folder / "build" / "intermediates" / "host"
    if host.exists():
        shutil.rmtree(host)
    host.mkdir(parents=True)
    rel = os.path.relpath(src, host)
    for cmd in (["cmake", rel, "-DCMAKE_CXX_COMPILER=g++", "-DCMAKE_SKIP_RPATH=TRUE"],
                ["make", "-j2"]):
        proc = subprocess.run(cmd, cwd=host, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "error" in ln]
            return False, (errors[0] if errors else (proc.stdout + proc.stderr)[-300:])
    return True, ""


def prepare(sample: Sample, folder: Path, env: dict[str, str]) -> None:
    """Write the substitute models, single-op models, pictures and files."""
    for rel, data in sample.files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, int):
            with open(p, "wb") as f:
                f.truncate(data)
        else:
            p.write_bytes(data if isinstance(data, bytes) else data())
    for i, m in enumerate(sample.models):
        build_model(m, folder / m.path, 1000 + i, folder)
    for n, (rel, w, h) in enumerate(sample.images):
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(_jpeg(w, h, n))
    for cwd, json_file, out in sample.singleop:
        proc = subprocess.run([sys.executable, "-m", "acl_lab", "atc",
                               f"--singleop={json_file}", "--soc_version=Ascend310P3",
                               f"--output={out}"], cwd=folder / cwd, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("acl-lab atc --singleop: " + first_error(proc.stdout +
                                                                       proc.stderr))
    for d in sample.dirs:
        (folder / d).mkdir(parents=True, exist_ok=True)


def _conv2d_inputs(folder: Path) -> None:
    """The conv2d samples' fmap/weight files, shaped as their op_list.json says."""
    # the shapes of main.cpp (and of the README's op_list.json): x NHWC, filter NCHW, float16
    shapes = [[2, 1024, 1024, 3], [6, 3, 3, 3]]
    data = folder / "data"
    data.mkdir(exist_ok=True)
    for name, shape, seed in (("fmap.bin", shapes[0], 1), ("weight.bin", shapes[1], 2)):
        n = int(np.prod(shape))
        (data / name).write_bytes(np.random.default_rng(seed).random(n).astype(np.float16)
                                  .tobytes())


def run_sample(repo: str, sample: Sample, workroot: Path, kit: Path) -> dict[str, Any]:
    """Extract, build, prepare and run one sample; the result record."""
    rec: dict[str, Any] = {"path": sample.path, "args": sample.args}
    if sample.out_of_scope:
        rec.update(result="out of scope", reason=sample.out_of_scope)
        return rec
    work = workroot / sample.name
    if work.exists():
        shutil.rmtree(work)
    extract(repo, [sample.path], work)
    folder = work / sample.path
    env = toolkit_env(kit, work)
    if sample.library:
        return _build_library(rec, folder, env)
    if sample.acllite:
        error = install_acllite(repo, work, env)
        if error:
            rec.update(compiles=False, result="does not compile", error=error)
            return rec
    built, error = build(folder, env)
    rec["compiles"] = built
    if not built:
        rec.update(result="does not compile", error=error)
        return rec
    try:
        prepare(sample, folder, env)
    except RuntimeError as e:
        rec.update(result="inputs not made", error=str(e))
        return rec
    if "conv2d" in sample.name:
        _conv2d_inputs(folder)
    binary = next((p for p in folder.rglob(sample.binary)
                   if p.is_file() and os.access(p, os.X_OK) and "intermediates" not in str(p)),
                  None)
    if binary is None:
        rec.update(result="no binary", error=f"no {sample.binary} after the build")
        return rec
    cwd = folder / sample.cwd
    cwd.mkdir(parents=True, exist_ok=True)
    summary = cwd / "acl_lab.summary.json"
    cmd = [sys.executable, "-m", "acl_lab", "run", "--summary", str(summary),
           "--trace", str(cwd / "acl_lab.acltrace"), str(binary), *sample.args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        rec.update(result=f"timeout ({TIMEOUT} s)")
        return rec
    rec["exit"] = proc.returncode
    rec["result"] = "finished" if proc.returncode == 0 else f"exit {proc.returncode}"
    rec["error"] = "" if proc.returncode == 0 else first_error(proc.stdout + proc.stderr)
    rec["no_debug_info_line"] = "build it with -g" in proc.stderr
    if summary.exists():
        found = json.loads(summary.read_text())["findings"]
        rec["findings"] = [{"kind": f["kind"], "severity": f["severity"],
                            "site": _site(f["file"], f["line"], folder)} for f in found]
    return rec


def _build_library(rec: dict[str, Any], folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """``make -k`` a library as its README does; which sources do not compile, and why."""
    (Path(env["THIRDPART_PATH"]) / "include").mkdir(parents=True, exist_ok=True)
    (Path(env["THIRDPART_PATH"]) / "lib").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["make", "-k", "-j2"], cwd=folder, env=env, capture_output=True,
                          text=True)
    out = proc.stdout + proc.stderr
    errors: dict[str, str] = {}
    for ln in out.splitlines():
        m = re.match(r"^(\S+?\.(?:cpp|h)):\d+:\d+: error: (.*)$", ln)
        if m and m.group(1) not in errors:
            errors[m.group(1)] = m.group(2)
    rec["compiles"] = proc.returncode == 0
    rec["result"] = "built" if proc.returncode == 0 else "does not compile"
    rec["error"] = "; ".join(f"{f}: {e}" for f, e in errors.items())
    return rec


def _site(file: str, line: int, folder: Path) -> str:
    shown = file.replace(str(folder) + "/", "")
    shown = re.sub(r"^.*/(out|build/out|run/out)/", r"\1/", shown)
    return f"{shown}:{line}" if line else shown


def verdict(name: str, f: dict[str, Any]) -> str:
    """The recorded judgement of a finding (or "not judged")."""
    for (sample, kind, where), text in VERDICTS.items():
        if sample == name and kind == f["kind"] and where in f["site"]:
            return text
    return "not judged"


def write_table(results: dict[str, Any]) -> None:
    """docs/samples_cpp.md from the results."""
    recs = [results[s.path] for s in SAMPLES if s.path in results]
    tried = [r for r in recs if r["result"] != "out of scope"]
    compiled = [r for r in tried if r.get("compiles")]
    finished = [r for r in compiled if r["result"] == "finished"]
    lines = ["# The public C++ samples under acl-lab run", "",
             "Generated by `scripts/public_samples_cpp.py` (do not edit by hand: the verdicts "
             "live in the script). Each sample was built unmodified with its own CMake file "
             "against `acl-lab config --toolkit` (`DDK_PATH`, `NPU_HOST_LIB`, `INSTALL_DIR`) "
             "and run with substitute models and inputs (see the script's docstring).", "",
             f"Tried {len(tried)} samples: {len(compiled)} compile, {len(finished)} run to "
             "the end.", "",
             "| sample | compiles | result | findings (kind, site: verdict) | notes |",
             "| --- | --- | --- | --- | --- |"]
    name_of = {s.path: s for s in SAMPLES}
    for r in tried:
        s = name_of[r["path"]]
        finds = "<br>".join(f"{f['kind']} ({f['severity']}) {f['site']}: {verdict(s.name, f)}"
                            for f in r.get("findings", [])) or "none"
        note = "; ".join(x for x in (r.get("error", ""), s.note) if x)
        lines.append(f"| {r['path']} | {'yes' if r.get('compiles') else 'no'} | "
                     f"{r['result']} | {finds} | {note} |")
    out = [r for r in recs if r["result"] == "out of scope"]
    if out:
        lines += ["", "## Out of scope", "", "| sample | why |", "| --- | --- |"]
        lines += [f"| {r['path']} | {r['reason']} |" for r in out]
    TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the samples (or ``--only`` some), update the results and the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", default=os.environ.get("ACL_LAB_SAMPLES_REPO", ""))
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--work", default="/tmp/acl_lab_samples_cpp")
    p.add_argument("--table-only", action="store_true", help="rewrite the table only")
    opts = p.parse_args(argv)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not opts.table_only:
        if not opts.repo:
            p.error("--repo (or ACL_LAB_SAMPLES_REPO) is needed")
        kit = Path(subprocess.run([sys.executable, "-m", "acl_lab", "config", "--toolkit"],
                                  capture_output=True, text=True, check=True).stdout.strip())
        for s in SAMPLES:
            if opts.only and s.path not in opts.only and s.name not in opts.only:
                continue
            rec = run_sample(opts.repo, s, Path(opts.work), kit)
            results[s.path] = rec
            print(f"{s.path}: {rec['result']} {len(rec.get('findings', []))} finding(s) "
                  f"{rec.get('error', '')}", file=sys.stderr)
            RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    write_table(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
