"""``acl-lab run`` of the media programs: an image pipeline (JPEGD, crop-and-paste, batch crop,
resize, JPEGE) and a video pipeline (VDEC with a report thread, VPC + model, VENC), checked
against Pillow and PyAV; the DVPP engine on the timeline; leaked media objects at their line."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from acl_lab import zoo
from acl_lab.tracer.schema import ENGINES, TASK_KINDS
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.timeline import timeline

from .test_cli_run import CliRun, acl_lab_run, lines_containing

av = pytest.importorskip("av")  # the media extra; make test installs it

DVPP = ENGINES.index("dvpp")


def y_plane(out: Path, name: str, index: dict[str, Any]) -> np.ndarray:
    """The Y plane (width x height, strides removed) of a saved YUV420SP picture."""
    m = index[name]
    raw = np.fromfile(out / f"{name}.yuv", dtype=np.uint8)
    ws, hs = m["width_stride"], m["height_stride"]
    return raw[:ws * hs].reshape(hs, ws)[:m["height"], :m["width"]].astype(int)


def dvpp_calls(trace: Trace) -> list[str]:
    """The API call that queued each DVPP-engine task, in task order."""
    t = trace.tasks
    rows = np.nonzero(t["engine"] == DVPP)[0].tolist()
    assert all(int(t["kind"][i]) == TASK_KINDS.index("dvpp") for i in rows)
    return [trace.call_name(int(t["call"][i])) for i in rows]


def dvpp_lane(trace: Trace) -> int:
    """How many tasks the timeline's DVPP engine lane draws (its busy segments count them)."""
    fig = timeline(trace, engines=True)
    names = list(fig.layout.yaxis.ticktext)
    lane = [i for i, n in enumerate(names) if n.endswith("DVPP engine")]
    assert len(lane) == 1, names
    drawn = [d for d in fig.data if (d.meta or {}).get("role") == "engine"
             and d.meta.get("kind") == "dvpp"]
    assert drawn, "no DVPP engine segments"
    assert {int(y) for d in drawn for y in d.y} == set(lane)
    return sum(int(c) for d in drawn for c in np.ravel(d.customdata))


def finished(run: CliRun) -> None:
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    assert run.summary["exit_code"] == 0
    assert run.summary["findings"] == [], run.summary["findings"]


@pytest.fixture(scope="module")
def image_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    tmp = tmp_path_factory.mktemp("image")
    out = tmp / "out"
    out.mkdir()
    return acl_lab_run(tmp, "media_image_pipeline.py", str(out)), out


def test_image_pipeline_finishes_clean(image_run: tuple[CliRun, Path]) -> None:
    """The image pipeline finishes with exit 0 and no findings (everything released)."""
    run, _ = image_run
    finished(run)
    assert "image pipeline done" in run.proc.stdout


def test_image_pipeline_pictures_match_pillow(image_run: tuple[CliRun, Path]) -> None:
    """Decode matches Pillow's YCbCr; crop-and-paste, batch crop copy exact pixels (scale 1)
    and leave the rest of the canvas alone; resize is close to Pillow's bilinear; the
    JPEGE output is a JPEG of the resized picture."""
    _, out = image_run
    ix = json.loads((out / "index.json").read_text())
    src = np.asarray(Image.open(out / "source.jpg").convert("YCbCr"))[:, :, 0].astype(int)
    dec = y_plane(out, "decoded", ix)
    assert dec.shape == (120, 160)
    assert ix["decoded"]["width_stride"] % 64 == 0 and ix["decoded"]["height_stride"] % 16 == 0
    assert np.abs(dec - src).max() <= 2
    paste = y_plane(out, "paste", ix)
    assert np.array_equal(paste[8:72, 16:80], dec[16:80, 32:96])
    assert not paste[:8].any() and not paste[:, :16].any() and not paste[72:].any()
    assert np.array_equal(y_plane(out, "batch0", ix), dec[0:32, 0:48])
    assert np.array_equal(y_plane(out, "batch1", ix), dec[64:96, 96:144])
    resized = y_plane(out, "resized", ix)
    ref = np.asarray(Image.fromarray(dec.astype(np.uint8)).resize((64, 64), Image.BILINEAR))
    assert np.abs(resized - ref.astype(int)).mean() < 1.5
    jpg = (out / "encoded.jpg").read_bytes()
    assert len(jpg) == ix["encoded"]["size"] <= ix["encoded"]["predicted"]
    im = Image.open(io.BytesIO(jpg))
    assert im.format == "JPEG" and im.size == (64, 64)
    back = np.asarray(im.convert("YCbCr"))[:, :, 0].astype(int)
    assert np.abs(back - resized).mean() < 2.0


def test_image_pipeline_runs_on_the_dvpp_engine(image_run: tuple[CliRun, Path]) -> None:
    """Every DVPP call is a task on the DVPP engine, and the timeline draws them on its lane."""
    run, _ = image_run
    trace = Trace.load(run.trace_path)
    calls = dvpp_calls(trace)
    assert calls == ["acl.media.dvpp_jpeg_decode_async", "acl.media.dvpp_vpc_crop_and_paste_async",
                     "acl.media.dvpp_vpc_batch_crop_async", "acl.media.dvpp_vpc_resize_async",
                     "acl.media.dvpp_jpeg_encode_async"]
    assert dvpp_lane(trace) == int((trace.tasks["engine"] == DVPP).sum())


@pytest.fixture(scope="module")
def video_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    tmp = tmp_path_factory.mktemp("video")
    out = tmp / "out"
    out.mkdir()
    return acl_lab_run(tmp, "media_video_pipeline.py", str(out), zoo.path("tiny_resnet")), out


def test_video_pipeline_finishes_clean(video_run: tuple[CliRun, Path]) -> None:
    """The video pipeline finishes: every frame's callback arrived before vdec_destroy_channel
    returned, and nothing raced or leaked."""
    run, _ = video_run
    finished(run)
    assert "6 frames decoded" in run.proc.stdout


def test_vdec_frames_equal_pyav_decode(video_run: tuple[CliRun, Path]) -> None:
    """The VDEC pictures (NV12, strides filled in by VDEC) are PyAV's decode of the stream."""
    _, out = video_run
    ix = json.loads((out / "index.json").read_text())
    ref = [f.to_ndarray(format="yuv420p") for f in av.open(str(out / "input.h264")).decode(
        video=0)]
    assert len(ref) == len(ix["frames"]) == 6
    for i, (fr, r) in enumerate(zip(ix["frames"], ref, strict=True)):
        assert (fr["width"], fr["height"], fr["width_stride"], fr["height_stride"]) == (
            128, 128, 128, 128)
        raw = np.fromfile(out / f"frame{i}.yuv", dtype=np.uint8)
        y = raw[:128 * 128].reshape(128, 128)
        uv = raw[128 * 128:128 * 128 * 3 // 2].reshape(64, 64, 2)
        assert np.array_equal(y, r[:128])
        assert np.array_equal(uv[:, :, 0], r[128:160].reshape(64, 64))
        assert np.array_equal(uv[:, :, 1], r[160:].reshape(64, 64))
    assert not np.array_equal(ref[0], ref[-1])


def test_model_sees_each_frame(video_run: tuple[CliRun, Path]) -> None:
    """Each decoded frame went through VPC and the model: one logit row per frame, and
    different frames give different logits."""
    _, out = video_run
    logits = np.array(json.loads((out / "index.json").read_text())["logits"])
    assert logits.shape == (6, 10) and np.isfinite(logits).all()
    assert len({tuple(np.round(r, 6)) for r in logits}) == 6


def test_venc_stream_decodes_to_the_frames(video_run: tuple[CliRun, Path]) -> None:
    """VENC's bitstream (one callback per frame, then the EOS one) decodes with PyAV to
    pictures close to the frames that were encoded."""
    _, out = video_run
    ix = json.loads((out / "index.json").read_text())
    assert ix["encoded"] == [0, 1, 2, 3, 4, 5, None]
    ref = [f.to_ndarray(format="yuv420p") for f in av.open(str(out / "input.h264")).decode(
        video=0)]
    back = [f.to_ndarray(format="yuv420p") for f in av.open(str(out / "output.h264")).decode(
        video=0)]
    assert len(back) == 6
    for b, r in zip(back, ref, strict=True):
        assert np.abs(b[:128].astype(int) - r[:128].astype(int)).mean() < 2.0


def test_video_pipeline_tasks_and_callbacks(video_run: tuple[CliRun, Path]) -> None:
    """VDEC, VPC and VENC tasks are on the DVPP engine (and its timeline lane); the 13 frame
    callbacks ran in the report thread, not the main thread."""
    run, _ = video_run
    trace = Trace.load(run.trace_path)
    calls = dvpp_calls(trace)
    assert calls.count("acl.media.vdec_send_frame") == 6
    assert calls.count("acl.media.dvpp_vpc_resize_async") == 6
    assert calls.count("acl.media.venc_send_frame") == 7
    assert dvpp_lane(trace) == int((trace.tasks["engine"] == DVPP).sum())
    cb = trace.callbacks
    assert cb.rows == 13
    assert set(cb["thread"].tolist()) == {1}


def test_leaked_pic_desc_and_channel_found_at_their_lines(tmp_path: Path) -> None:
    """A pic desc and a VDEC channel never destroyed are leaks at their create lines (the
    channel's internal stream is not reported separately)."""
    run = acl_lab_run(tmp_path, "media_leak.py")
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    leaks = {(f["line"], f["message"].split(" created")[0]) for f in run.summary["findings"]
             if f["kind"] == "leak"}
    (pic_line,) = lines_containing("media_leak.py", "# LEAK-PIC")
    (chan_line,) = lines_containing("media_leak.py", "# LEAK-CHANNEL")
    assert (pic_line, "a DVPP pic desc") in leaks
    assert (chan_line, "a VDEC channel") in leaks
    assert not any("stream" in m for line, m in leaks if line == chan_line)


def test_venc_input_freed_early_is_the_only_finding(tmp_path: Path) -> None:
    """The VENC sample's early dvpp_free of the input is one free_in_flight at that line; the
    channel's own buffer, freed with its desc after every frame, is not blamed for it."""
    run = acl_lab_run(tmp_path, "media_venc_free_early.py")
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    sizes = json.loads(run.proc.stdout.split("sizes ", 1)[1].splitlines()[0])
    # the first frame was encoded before the free (virtual time); the others lost their input
    assert sizes[0] > 0 and sizes[1:] == [0, 0]
    (line,) = lines_containing("media_venc_free_early.py", "# EARLY-FREE")
    found = [(f["kind"], f["line"]) for f in run.summary["findings"]]
    assert found == [("free_in_flight", line)], run.summary["findings"]
