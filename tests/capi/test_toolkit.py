"""The CANN-shaped toolkit: our own programs in the public samples' style (one per header
and library), built with CMake against ``acl-lab config --toolkit`` as the samples' READMEs
build theirs (``DDK_PATH``, ``NPU_HOST_LIB``), then run under ``acl-lab run``: their results,
their traces and their findings."""

from __future__ import annotations

import io
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

from acl_lab.capi import build

from .conftest import acl_lab, run_traced

SOURCES = Path(__file__).parent / "toolkit"


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The programs of ``toolkit/``, configured and built once (Debug, as the samples'
    build scripts do for a development run; ``leak_nodebug`` without -g)."""
    kit = acl_lab("config", "--toolkit", cwd=Path.cwd())
    assert kit.returncode == 0, kit.stderr
    root = Path(kit.stdout.strip())
    work = tmp_path_factory.mktemp("toolkit")
    env = {**os.environ, "DDK_PATH": str(root),
           "NPU_HOST_LIB": str(root / "runtime" / "lib64" / "stub")}
    cmake = subprocess.run(["cmake", str(SOURCES), "-DCMAKE_BUILD_TYPE=Debug",
                            "-DCMAKE_SKIP_RPATH=TRUE"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300)
    assert cmake.returncode == 0, cmake.stdout + cmake.stderr
    make = subprocess.run(["make", "-j2"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert make.returncode == 0, make.stdout + make.stderr
    yield work


def test_toolkit_folder_has_cann_layout() -> None:
    root = build.toolkit()
    assert (root / "runtime" / "include" / "acl" / "acl.h").is_file()
    assert (root / "runtime" / "include" / "acl" / "ops" / "acl_dvpp.h").is_file()
    stub = root / "runtime" / "lib64" / "stub"
    libs = {p.name for p in stub.iterdir()}
    assert libs == {"libascendcl.so", "libacl_dvpp.so", "libacl_cblas.so",
                    "libacl_op_compiler.so"}
    # each library defines the functions of its own header, the runtime the rest
    dvpp = subprocess.run(["nm", "-D", "--defined-only", str(stub / "libacl_dvpp.so")],
                          capture_output=True, text=True, check=True).stdout
    assert " T acldvppJpegDecodeAsync" in dvpp and " T aclvdecSendFrame" in dvpp
    assert " T aclrtMalloc" not in dvpp
    runtime = subprocess.run(["nm", "-D", "--defined-only", str(stub / "libascendcl.so")],
                             capture_output=True, text=True, check=True).stdout
    assert " T aclrtMalloc" in runtime and " T acldvppJpegDecodeAsync" not in runtime


def test_thirdpart_avcodec_gives_ffmpeg4_code_the_bitstream_filters(tmp_path: Path) -> None:
    """acllite's VideoCapture (FFmpeg 4 code) names AVBitStreamFilter after including only
    libavcodec/avcodec.h; with THIRDPART_PATH at the toolkit's thirdpart folder it compiles
    against FFmpeg 5+, where the declaration moved to libavcodec/bsf.h."""
    root = build.toolkit()
    header = root / "thirdpart" / "include" / "libavcodec" / "avcodec.h"
    assert header.is_file()
    system = subprocess.run(["g++", "-E", "-x", "c++", "-"], input="#include "
                            "<libavcodec/avcodec.h>\n", capture_output=True, text=True)
    assert system.returncode == 0, "make test installs libavcodec-dev: " + system.stderr
    src = tmp_path / "bsf.cpp"
    src.write_text("extern \"C\" {\n#include <libavcodec/avcodec.h>\n}\n"
                   "int main() { const AVBitStreamFilter *f = av_bsf_get_by_name(\"null\");"
                   " AVBSFContext *ctx = nullptr; (void)ctx; return f == nullptr; }\n")
    cmd = ["g++", "-c", str(src), "-o", str(tmp_path / "bsf.o")]
    with_kit = subprocess.run([*cmd, f"-I{root / 'thirdpart' / 'include'}"],
                              capture_output=True, text=True)
    assert with_kit.returncode == 0, with_kit.stderr
    version = subprocess.run(["g++", "-dM", "-E", "-x", "c++", "-"], input="#include "
                             "<libavcodec/version.h>\n", capture_output=True, text=True)
    if "LIBAVCODEC_VERSION_MAJOR 58" not in version.stdout:  # FFmpeg 5+: bsf.h is needed
        alone = subprocess.run(cmd, capture_output=True, text=True)
        assert alone.returncode != 0 and "AVBitStreamFilter" in alone.stderr


def test_a_dvpp_program_without_acl_dvpp_does_not_link(tmp_path: Path) -> None:
    root = build.toolkit()
    src = tmp_path / "p.cpp"
    src.write_text('#include "acl/ops/acl_dvpp.h"\nint main() { void *p = 0; '
                   "return acldvppMalloc(&p, 64); }\n")
    inc, lib = root / "runtime" / "include", root / "runtime" / "lib64" / "stub"
    base = ["g++", str(src), f"-I{inc}", f"-L{lib}", "-o", str(tmp_path / "p")]
    alone = subprocess.run([*base, "-lascendcl"], capture_output=True, text=True)
    assert alone.returncode != 0 and "acldvppMalloc" in alone.stderr
    both = subprocess.run([*base, "-lascendcl", "-lacl_dvpp"], capture_output=True, text=True)
    assert both.returncode == 0, both.stderr


def _values(stdout: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in stdout.splitlines() if line.strip()}


def test_runtime_basics(programs: Path, tmp_path: Path) -> None:
    proc, trace, summary = run_traced(programs / "rt_basics", cwd=tmp_path, tag="rt")
    assert proc.returncode == 0, proc.stderr
    got = _values(proc.stdout)
    assert got["run_mode"] == ["1"]  # ACL_HOST: acl-lab run's default
    assert got["soc"] != ["null"]
    assert got["mem_le"] == ["1"]
    assert got["memset_byte"] == [str(0x5A)]
    assert got["buffer_size"] == ["256"]
    assert got["desc"] == ["3", "4", "1", str(2 * 3 * 4 * 2)]
    assert got["set_const"] == ["0"]
    assert summary["findings"] == []
    notes = [trace.string(int(m)) for m in trace.diags["message"]]
    assert any("freed 256 bytes of device memory" in n and "rt_basics.cpp" in n for n in notes)
    names = {trace.call_name(c) for c in range(trace.calls.rows)}
    assert {"acl.rt.memset_async", "acl.rt.get_mem_info", "acl.get_soc_name",
            "acl.app_log", "acl.set_tensor_const"} <= names


def _dynamic_batch_model(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"]),
             helper.make_node("Add", ["m", "B"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "dyn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])],
                              [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "dyn.onnx"))
    proc = acl_lab("atc", f"--model={tmp_path / 'dyn.onnx'}", "--framework=5",
                   f"--output={tmp_path / 'dyn'}", "--soc_version=Ascend310P3",
                   "--input_shape=x:-1,4", "--dynamic_batch_size=1,2,4", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp_path / "dyn.om", w, b


def test_model_with_its_own_memory_and_a_dynamic_batch(programs: Path, tmp_path: Path) -> None:
    om, w, b = _dynamic_batch_model(tmp_path)
    x = np.random.default_rng(5).standard_normal((2, 4)).astype(np.float32)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    proc, trace, summary = run_traced(programs / "model", str(om), "2", str(tmp_path / "x.bin"),
                                      cwd=tmp_path, tag="model")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "input0 x -1 4 format 2 type 0"
    assert lines[1] == "gears 1 2 4"
    assert lines[2] == "dynamic_index 1 of 2"
    assert lines[3] == "output0 2 3"
    got = np.array([float(v) for v in lines[4:]], dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(got, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    assert summary["findings"] == []
    assert trace.calls_named("acl.mdl.load_from_file_with_mem").size == 1


def _jpeg(w: int, h: int) -> bytes:
    x = np.linspace(0, 255, w)[None, :].repeat(h, 0)
    y = np.linspace(0, 255, h)[:, None].repeat(w, 1)
    rgb = np.stack([x, y, (x + y) / 2], -1).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "JPEG", quality=95)
    return buf.getvalue()


def test_dvpp_jpeg_decode_resize_crop_encode(programs: Path, tmp_path: Path) -> None:
    (tmp_path / "in.jpg").write_bytes(_jpeg(160, 120))
    proc, trace, summary = run_traced(programs / "dvpp_jpeg", str(tmp_path / "in.jpg"),
                                      str(tmp_path), cwd=tmp_path, tag="dvpp")
    assert proc.returncode == 0, proc.stderr
    got = _values(proc.stdout)
    assert got["image"] == ["160", "120", "3"]
    assert got["decoded"][:2] == ["160", "120"] and got["decoded"][-1] == "0"
    out = Image.open(tmp_path / "resized.jpg")
    assert out.size == (64, 48)
    assert int(got["jpeg_size"][0]) == (tmp_path / "resized.jpg").stat().st_size
    # the second crop (x 32..63, y 16..47 of the resized picture) is not the first
    crop = np.frombuffer((tmp_path / "crop1.yuv").read_bytes(), np.uint8)[:32 * 32]
    resized = np.asarray(out.convert("L"), dtype=np.float64)
    assert abs(float(crop.mean()) - float(resized[16:48, 32:64].mean())) < 12
    assert summary["findings"] == []
    assert trace.calls_named("acl.media.dvpp_vpc_batch_crop_async").size == 1


def test_dvpp_png_decode_rgb_and_rgba(programs: Path, tmp_path: Path) -> None:
    w, h = 150, 70
    x = np.linspace(0, 255, w)[None, :].repeat(h, 0)
    y = np.linspace(0, 255, h)[:, None].repeat(w, 1)
    alpha = (np.arange(w * h).reshape(h, w) % 251)
    rgba = np.stack([x, y, (x + y) / 2, alpha], -1).astype(np.uint8)
    Image.fromarray(rgba, "RGBA").save(tmp_path / "in.png")
    proc, trace, summary = run_traced(programs / "dvpp_png", str(tmp_path / "in.png"),
                                      str(tmp_path), cwd=tmp_path, tag="png")
    assert proc.returncode == 0, proc.stderr
    got = _values(proc.stdout)
    assert got["image"] == [str(w), str(h), "4"]
    ws3, ws4, hs = 256 * 3, 256 * 4, 80
    assert got["decoded3"] == [str(ws3 * hs), str(w), str(h), str(ws3), str(hs), "ret", "0"]
    assert got["decoded4"] == [str(ws4 * hs), str(w), str(h), str(ws4), str(hs), "ret", "0"]
    assert got["host_input"] == ["100000"]
    rgb = np.frombuffer((tmp_path / "rgb.bin").read_bytes(), np.uint8).reshape(hs, ws3)
    assert np.array_equal(rgb[:h, :w * 3].reshape(h, w, 3), rgba[:, :, :3])
    out = np.frombuffer((tmp_path / "rgba.bin").read_bytes(), np.uint8).reshape(hs, ws4)
    assert np.array_equal(out[:h, :w * 4].reshape(h, w, 4), rgba)
    assert summary["findings"] == []
    assert trace.calls_named("acl.media.dvpp_png_decode_async").size == 3


def _h264_frames(w: int, h: int, n: int) -> list[bytes]:
    from fractions import Fraction

    import av

    enc = av.CodecContext.create("libx264", "w")
    enc.width, enc.height, enc.pix_fmt = w, h, "yuv420p"
    enc.time_base = Fraction(1, 25)
    enc.options = {"tune": "zerolatency", "preset": "ultrafast"}
    packets: list[bytes] = []
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    for i in range(n):
        rgb = np.stack([(xs * 2 + i * 20 + 0 * ys) % 256, (ys * 2 + 0 * xs) % 256,
                        np.full((h, w), 40 * i)], -1).astype(np.uint8)
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
        frame.pts = i
        packets += [bytes(p) for p in enc.encode(frame)]
    packets += [bytes(p) for p in enc.encode(None)]
    return packets


def test_vdec_callbacks_run_in_the_report_thread(programs: Path, tmp_path: Path) -> None:
    frames = _h264_frames(128, 128, 5)
    for i, data in enumerate(frames):
        (tmp_path / f"frame{i}.h264").write_bytes(data)
    proc, trace, summary = run_traced(programs / "vdec", str(tmp_path), str(len(frames)), "128",
                                      "128", cwd=tmp_path, tag="vdec")
    assert proc.returncode == 0, proc.stderr
    got = _values(proc.stdout)
    assert got["frames"] == [str(len(frames)), "of", str(len(frames))]
    # every frame's callback and the EOS one ran in the thread that called aclrtProcessReport
    assert got["callbacks_in_report_thread"] == [str(len(frames) + 1)]
    assert summary["findings"] == []
    assert trace.calls_named("acl.media.vdec_send_frame").size == len(frames) + 1


def test_gemm_through_acl_cblas(programs: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    m, n, k = 4, 5, 3
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float16)
    for name, arr in (("a", a), ("b", b), ("c", c)):
        (tmp_path / f"{name}.bin").write_bytes(arr.tobytes())
    proc, trace, summary = run_traced(programs / "gemm", str(m), str(n), str(k), "1.5", "0.5",
                                      str(tmp_path), cwd=tmp_path, tag="gemm")
    assert proc.returncode == 0, proc.stderr
    assert _values(proc.stdout)["lda_not_minus_one"] == ["100000"]
    out = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float16).reshape(m, n)
    want = 1.5 * a.astype(np.float32) @ b.astype(np.float32) + 0.5 * c.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=1e-2, atol=1e-2)
    assert summary["findings"] == []
    gemms = trace.calls_named("acl.blas.gemm_ex")
    assert [int(trace.calls["ret"][g]) for g in gemms] == [0, 100000]


def test_op_compile_and_execute_then_handles(programs: Path, tmp_path: Path) -> None:
    proc, trace, summary = run_traced(programs / "op_compile", cwd=tmp_path, tag="op")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [float(v) for v in lines[:8]] == [1.5 * i for i in range(8)]
    got = _values("\n".join(lines[8:]))
    assert got["handle_compiled"] == ["0"]
    assert got["handle_not_compiled"] == ["100024"]
    assert trace.calls_named("acl_lab.op_compiler.compile_and_execute").size == 1
    assert summary["findings"] == []


def test_a_program_without_debug_info_names_functions(programs: Path, tmp_path: Path) -> None:
    proc, trace, summary = run_traced(programs / "leak_nodebug", cwd=tmp_path, tag="nodebug")
    assert proc.returncode == 0, proc.stderr
    leaks = [f for f in summary["findings"] if f["kind"] == "leak"]
    assert len(leaks) == 1
    site = leaks[0]["file"]
    assert re.search(r"leak_nodebug\(AllocateScratch\+0x[0-9a-f]+\)$", site), site
    assert leaks[0]["line"] == 0
    malloc = int(trace.calls_named("acl.rt.malloc")[0])
    assert trace.call_site(malloc) == (site, 0)
    assert "build it with -g" in proc.stderr
    assert proc.stderr.count("build it with -g") == 1
    # the Debug programs are resolved to file:line and get no such advice
    debug, _, _ = run_traced(programs / "rt_basics", cwd=tmp_path, tag="debug")
    assert "build it with -g" not in debug.stderr
