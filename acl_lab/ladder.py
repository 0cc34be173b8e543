"""The optimisation ladder: single-image ResNet-50, end to end, four ways, in virtual time.

A public article on ACL reports single-image ResNet-50 end-to-end latency on an Ascend
inference card: sync + pageable memory 12.5 ms; + pinned memory 9.8 ms (1.27x); + async
streams 6.2 ms (2.01x); + DVPP decode 3.5 ms (3.57x); pinned memory raising copy bandwidth
by about 30%, and multi-stream execution raising device utilisation from about 45% to 85%
(``PUBLISHED``). This module runs the four programs on the emulator and sets the emulated
figures beside the published ones; ``python -m benchmarks --only ladder`` prints the table.

The programs are ordinary pyACL code (``import acl`` after ``acl_lab.install()``), each
processing the same N pictures: 1280x720 baseline JPEGs from ``make_jpeg``.

A ``SyncPageable``: numpy buffers allocated per image, ``acl.util.numpy_to_ptr``,
  ``acl.rt.memcpy``, ``acl.mdl.execute`` of the zoo ``resnet50``, the JPEG decoded and
  preprocessed on the host (resize to 224x224, ImageNet normalisation, HWC -> CHW);
B ``Pinned``: the same with buffers allocated once: ``acl.rt.malloc_host`` for the model's
  input and output, reused decoder and scratch buffers;
C ``AsyncStreams``: two streams and two copies of the model (one per stream: a model must
  not run on two streams at once), double-buffered pinned memory, ``memcpy_async`` and
  ``execute_async``: the host decodes image i+1 while the device runs image i;
D ``Dvpp``: the JPEG bytes are copied to DVPP memory and decoded there
  (``dvpp_jpeg_decode_async`` -> NV12, ``dvpp_vpc_resize_async`` -> 224x224 NV12), and the
  zoo ``resnet50_aipp`` (AIPP converts NV12 to normalised RGB on the AI core) classifies it;
  two streams as in C.

What costs virtual time: ACL calls and device tasks as everywhere in the emulator (device
profile ``acl_lab.runtime.profiles``), plus the programs' own CPU work, declared with
``acl_lab.host_work`` at the rates of ``acl_lab.hostwork.HostProfile``: JPEG decoding,
preprocessing passes, reading the file, and (variant A only) the first touch of the pageable
buffers it allocates afresh for every image. Every model execution books the AI cores its
batch-1 layers can fill (``acl_lab.runtime.costs.execution_cost``), so two streams can run
two inferences at once.

How the figures are measured. An image is done when its logits have reached host memory (the
end of its device-to-host copy). A variant's latency is the steady-state time per image, the
mean interval between images done, over whole double-buffering cycles (for the synchronous
variants, exactly the time one image takes); ``first_image_ms`` is the time from the start of
the loop to the first image done. AI-core utilisation is the AI-core time the executions
really use (each layer's time x the cores it fills) over cores x the loop's wall time. The
utilisation case runs the inference loop alone (copy in, execute, copy out; the input
already preprocessed in pinned memory) on one stream, then on two.

Differs from real ACL: the figures come from the emulator's cost model, not from hardware;
see ``LadderResult.table`` for how far each ratio lands from the published one.
"""

from __future__ import annotations

import functools
import io
import itertools
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from . import zoo
from .hostwork import (
    DEFAULT_HOST,
    HostProfile,
    first_touch_ns,
    host_work,
    jpeg_decode_ns,
    preprocess_ns,
)
from .runtime.costs import execution_cost
from .runtime.dvpp import INTERP_BILINEAR, resize_plane
from .runtime.hooks import TaskLog
from .runtime.kinds import Engine, TaskKind
from .runtime.models import shared_memo
from .runtime.session import Session

# pyACL exports no constants (reference 1.7): programs define the ones they use.
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1  # NV12
NPY_FLOAT32 = 11

#: the picture the programs classify
JPEG_WIDTH, JPEG_HEIGHT = 1280, 720
SIZE = zoo.RESNET50_SIZE
#: bytes of one class-logit vector (1 x 1000 float32)
LOGITS = 1000
#: JPEGD output strides on 310P-class SoCs: width aligned to 64, height to 16 (reference 9.2)
JPEGD_WIDTH_ALIGN, JPEGD_HEIGHT_ALIGN = 64, 16
#: how far an emulated ratio may land from the published one and count as reproduced
RATIO_TOLERANCE = 0.15


# =============================================================================== published
@dataclass(frozen=True)
class Published:
    """The figures of the public article (single-image ResNet-50 on an Ascend inference card).

    Args:
        latency_ms: per variant (``"A"`` .. ``"D"``), the end-to-end time per image.
        ratio: per variant B .. D, the speed-up over A as the article prints it.
        util_one_stream / util_two_streams: device utilisation with one and two streams.
        pinned_bw_gain: how much faster pinned memory makes host-device copies (0.30 = 30%).
    """

    latency_ms: dict[str, float]
    ratio: dict[str, float]
    util_one_stream: float
    util_two_streams: float
    pinned_bw_gain: float


PUBLISHED = Published(
    latency_ms={"A": 12.5, "B": 9.8, "C": 6.2, "D": 3.5},
    ratio={"B": 1.27, "C": 2.01, "D": 3.57},
    util_one_stream=0.45, util_two_streams=0.85, pinned_bw_gain=0.30,
)

#: variant key -> (program class name, what the step adds)
VARIANT_NAMES = {"A": "sync + pageable memory", "B": "+ pinned memory",
                 "C": "+ async streams", "D": "+ DVPP decode"}


# =============================================================================== pictures
def make_jpeg(seed: int = 0, width: int = JPEG_WIDTH, height: int = JPEG_HEIGHT,
              quality: int = 90) -> bytes:
    """A deterministic baseline JPEG (4:2:0, Huffman): a smooth gradient with soft blobs.

    The picture is smooth on purpose: DVPP decodes to YUV420SP and the host path to RGB,
    and smooth colour survives both chroma subsamplings nearly alike.
    """
    from ._extras import require
    require("PIL", "media", "the ladder's test pictures")
    from PIL import Image

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    yy /= height
    xx /= width
    img = np.empty((height, width, 3), dtype=np.float32)
    for c in range(3):
        a, b, d = rng.uniform(40, 200), rng.uniform(-60, 60), rng.uniform(-60, 60)
        img[:, :, c] = a + b * xx + d * yy
    for _ in range(6):
        cy, cx = rng.uniform(0.1, 0.9, 2)
        sigma = rng.uniform(0.05, 0.15)
        colour = rng.uniform(-90, 90, 3).astype(np.float32)
        blob = np.exp(-((xx - cx) ** 2 * (width / height) ** 2 + (yy - cy) ** 2)
                      / (2 * sigma * sigma))
        img += blob[:, :, None] * colour
    pixels = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(buf, "JPEG", quality=quality, subsampling=2,
                                        optimize=False, progressive=False)
    return buf.getvalue()


def decode_rgb(jpeg: bytes) -> np.ndarray:
    """The picture as an (H, W, 3) uint8 RGB array (libjpeg through Pillow)."""
    from ._extras import require
    require("PIL", "media", "decoding pictures on the host")
    from PIL import Image

    with Image.open(io.BytesIO(jpeg)) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def host_preprocess(rgb: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """ResNet-50 preprocessing on the host: (H, W, 3) uint8 RGB -> (1, 3, 224, 224) float32.

    Passes (``preprocess_bytes`` counts their traffic): bilinear resize to 224x224 (the
    half-pixel-centre bilinear of OpenCV's INTER_LINEAR, the same filter the emulated VPC
    uses), cast to float32, subtract the ImageNet mean, divide by its standard deviation,
    HWC -> CHW copy (into ``out`` when given, e.g. a pinned buffer).
    """
    small = np.stack([resize_plane(rgb[:, :, c], SIZE, SIZE, INTERP_BILINEAR)
                      for c in range(3)], axis=2)
    mean = np.asarray(zoo.RESNET50_MEAN, dtype=np.float32)
    std = np.asarray(zoo.RESNET50_STD, dtype=np.float32)
    x: np.ndarray = small.astype(np.float32)
    x = x - mean
    x = x / std
    chw = x.transpose(2, 0, 1)[None]
    if out is None:
        return np.ascontiguousarray(chw)
    out[...] = chw
    return out


def preprocess_bytes(width: int, height: int, size: int = SIZE) -> int:
    """Bytes read and written by ``host_preprocess`` on a ``width`` x ``height`` picture.

    Resize: reads the RGB picture, writes size*size*3 bytes; cast: reads those, writes 4x as
    many; subtract, divide and the CHW copy each read and write the float32 image.
    """
    n = size * size * 3
    return width * height * 3 + n + (n + 4 * n) + 3 * (8 * n)


def fresh_bytes(width: int, height: int, size: int = SIZE) -> int:
    """Pageable bytes a program that allocates per image writes for the first time: the
    decoder's RGB output, the resized picture, three float32 temporaries (cast, subtract,
    divide) and the CHW copy."""
    n = size * size * 3
    return width * height * 3 + n + 4 * (4 * n)


# =============================================================================== programs
def _check(ret: int, what: str) -> None:
    if ret != 0:
        from .constants import explain
        raise RuntimeError(f"{what} failed, ret={ret}: {explain(ret)}")


class _Model:
    """A loaded model with device input/output buffers and their datasets (one set)."""

    def __init__(self, acl: Any, path: str, input_dev: int | None = None) -> None:
        self.acl = acl
        mid, ret = acl.mdl.load_from_file(path)
        _check(ret, "acl.mdl.load_from_file")
        self.id = mid
        self.desc = acl.mdl.create_desc()
        _check(acl.mdl.get_desc(self.desc, mid), "acl.mdl.get_desc")
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.out_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.owned: list[int] = []
        if input_dev is None:
            input_dev = self._malloc(self.in_size)
        self.input = input_dev
        self.output = self._malloc(self.out_size)
        self.in_ds = self._dataset(self.input, self.in_size)
        self.out_ds = self._dataset(self.output, self.out_size)

    def _malloc(self, size: int) -> int:
        ptr, ret = self.acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        _check(ret, "acl.rt.malloc")
        self.owned.append(ptr)
        return int(ptr)

    def _dataset(self, ptr: int, size: int) -> int:
        ds = self.acl.mdl.create_dataset()
        _, ret = self.acl.mdl.add_dataset_buffer(ds, self.acl.create_data_buffer(ptr, size))
        _check(ret, "acl.mdl.add_dataset_buffer")
        return int(ds)

    def release(self) -> None:
        """Destroy the datasets and their buffers, free the device memory, unload."""
        acl = self.acl
        for ds in (self.in_ds, self.out_ds):
            for i in range(acl.mdl.get_dataset_num_buffers(ds)):
                _check(acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(ds, i)),
                       "acl.destroy_data_buffer")
            _check(acl.mdl.destroy_dataset(ds), "acl.mdl.destroy_dataset")
        for ptr in self.owned:
            _check(acl.rt.free(ptr), "acl.rt.free")
        _check(acl.mdl.unload(self.id), "acl.mdl.unload")
        _check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")


class _Program:
    """The skeleton every variant shares: init, device, context; then ``run``; then release."""

    #: the zoo model the variant runs
    model_name = "resnet50"

    def __init__(self, acl: Any, host: HostProfile = DEFAULT_HOST) -> None:
        self.acl = acl
        self.host = host
        self.context = 0

    def setup(self) -> None:
        """acl.init, set_device(0), create_context, then the variant's own resources."""
        acl = self.acl
        _check(acl.init(), "acl.init")
        _check(acl.rt.set_device(0), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(0)
        _check(ret, "acl.rt.create_context")
        self.prepare()

    def prepare(self) -> None:
        """The variant's models and buffers (after the context exists)."""

    def run(self, jpegs: Sequence[bytes]) -> list[np.ndarray]:
        """Classify every picture; returns one (1000,) float32 logit vector per picture."""
        raise NotImplementedError

    def release(self) -> None:
        """Free the variant's models and buffers."""

    def teardown(self) -> None:
        """Release, then destroy the context, reset the device and finalize."""
        self.release()
        acl = self.acl
        _check(acl.rt.destroy_context(self.context), "acl.rt.destroy_context")
        _check(acl.rt.reset_device(0), "acl.rt.reset_device")
        _check(acl.finalize(), "acl.finalize")

    # ---- host work, declared at the host profile's rates
    def read_file(self, jpeg: bytes, fresh: bool) -> None:
        """Reading the JPEG file from the page cache: one copy of its bytes (into a fresh
        ``bytes`` object when ``fresh``, else into a reused buffer)."""
        ns = preprocess_ns(2 * len(jpeg), self.host)
        host_work(ns + (first_touch_ns(len(jpeg), self.host) if fresh else 0), "read JPEG")

    def decode(self, jpeg: bytes, fresh: bool) -> np.ndarray:
        """Decode on the host (``fresh``: into a newly allocated array)."""
        rgb = decode_rgb(jpeg)
        h, w = rgb.shape[:2]
        ns = jpeg_decode_ns(w, h, self.host)
        host_work(ns + (first_touch_ns(rgb.nbytes, self.host) if fresh else 0),
                  "decode JPEG (libjpeg)")
        return rgb

    def preprocess(self, rgb: np.ndarray, out: np.ndarray | None, fresh: bool) -> np.ndarray:
        """Resize + normalise + CHW on the host (``fresh``: every temporary is new memory)."""
        h, w = rgb.shape[:2]
        x = host_preprocess(rgb, out)
        ns = preprocess_ns(preprocess_bytes(w, h), self.host)
        extra = first_touch_ns(fresh_bytes(w, h) - w * h * 3, self.host) if fresh else 0
        host_work(ns + extra, "resize + normalise (numpy)")
        return x


class SyncPageable(_Program):
    """A: everything synchronous, fresh pageable numpy buffers for every image."""

    def prepare(self) -> None:
        """Load the model with its device buffers."""
        self.model = _Model(self.acl, zoo.path(self.model_name))

    def run(self, jpegs: Sequence[bytes]) -> list[np.ndarray]:
        """Read, decode and preprocess into fresh arrays; copy, execute, copy back."""
        acl, m = self.acl, self.model
        results = []
        for jpeg in jpegs:
            self.read_file(jpeg, fresh=True)
            rgb = self.decode(jpeg, fresh=True)
            x = self.preprocess(rgb, None, fresh=True)
            ptr = acl.util.numpy_to_ptr(x)
            _check(acl.rt.memcpy(m.input, m.in_size, ptr, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE),
                   "acl.rt.memcpy H2D")
            _check(acl.mdl.execute(m.id, m.in_ds, m.out_ds), "acl.mdl.execute")
            out = np.empty(LOGITS, dtype=np.float32)
            host_work(first_touch_ns(out.nbytes, self.host), "allocate the output array")
            out_ptr = acl.util.numpy_to_ptr(out)
            _check(acl.rt.memcpy(out_ptr, out.nbytes, m.output, m.out_size,
                                 ACL_MEMCPY_DEVICE_TO_HOST), "acl.rt.memcpy D2H")
            results.append(out)
        return results

    def release(self) -> None:
        """Unload the model and free its buffers."""
        self.model.release()


class Pinned(_Program):
    """B: synchronous, but page-locked input/output buffers and scratch allocated once."""

    def prepare(self) -> None:
        """The model, pinned input/output buffers and a reused decoder buffer."""
        acl = self.acl
        self.model = m = _Model(acl, zoo.path(self.model_name))
        self.host_in, ret = acl.rt.malloc_host(m.in_size)
        _check(ret, "acl.rt.malloc_host")
        self.host_out, ret = acl.rt.malloc_host(m.out_size)
        _check(ret, "acl.rt.malloc_host")
        self.x = acl.util.ptr_to_numpy(self.host_in, (1, 3, SIZE, SIZE), NPY_FLOAT32)
        self.logits = acl.util.ptr_to_numpy(self.host_out, (LOGITS,), NPY_FLOAT32)
        # decoder output reused for every image (a decoder that writes into a given buffer,
        # e.g. PyTurboJPEG's decompress(dst=...)); first touched here, once
        self.rgb = np.zeros((JPEG_HEIGHT, JPEG_WIDTH, 3), dtype=np.uint8)
        host_work(first_touch_ns(self.rgb.nbytes + fresh_bytes(0, 0), self.host),
                  "allocate reused buffers")

    def run(self, jpegs: Sequence[bytes]) -> list[np.ndarray]:
        """Decode and preprocess into the reused and pinned buffers; copy, execute, copy."""
        acl, m = self.acl, self.model
        results = []
        for jpeg in jpegs:
            self.read_file(jpeg, fresh=False)
            self.rgb[...] = self.decode(jpeg, fresh=False)
            self.preprocess(self.rgb, self.x, fresh=False)
            _check(acl.rt.memcpy(m.input, m.in_size, self.host_in, m.in_size,
                                 ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy H2D")
            _check(acl.mdl.execute(m.id, m.in_ds, m.out_ds), "acl.mdl.execute")
            _check(acl.rt.memcpy(self.host_out, m.out_size, m.output, m.out_size,
                                 ACL_MEMCPY_DEVICE_TO_HOST), "acl.rt.memcpy D2H")
            results.append(self.logits.copy())
        return results

    def release(self) -> None:
        """Free the pinned buffers, unload the model."""
        _check(self.acl.rt.free_host(self.host_in), "acl.rt.free_host")
        _check(self.acl.rt.free_host(self.host_out), "acl.rt.free_host")
        self.model.release()


class AsyncStreams(_Program):
    """C: two streams, one model copy and one pinned buffer pair per stream (double
    buffering); the host prepares image i+1 while the device runs image i."""

    streams_count = 2
    #: whether the host decodes and preprocesses each picture (False: DVPP does, or the
    #: input is preprocessed once before the loop, as in the utilisation case)
    host_decode = True

    def prepare(self) -> None:
        """Per stream: the stream, a model copy, pinned output and the slot's input."""
        acl = self.acl
        self.streams: list[int] = []
        self.models: list[_Model] = []
        self.host_in: list[int] = []
        self.host_out: list[int] = []
        self.xs: list[np.ndarray] = []
        self.logits: list[np.ndarray] = []
        for _ in range(self.streams_count):
            stream, ret = acl.rt.create_stream()
            _check(ret, "acl.rt.create_stream")
            self.streams.append(stream)
            m = self.load_model()
            self.models.append(m)
            hout, ret = acl.rt.malloc_host(m.out_size)
            _check(ret, "acl.rt.malloc_host")
            self.host_out.append(hout)
            self.logits.append(acl.util.ptr_to_numpy(hout, (LOGITS,), NPY_FLOAT32))
            self.prepare_slot(m)
        if self.host_decode:
            self.rgb = np.zeros((JPEG_HEIGHT, JPEG_WIDTH, 3), dtype=np.uint8)
            host_work(first_touch_ns(self.rgb.nbytes + fresh_bytes(0, 0), self.host),
                      "allocate reused buffers")

    def load_model(self) -> _Model:
        """One model copy per stream."""
        return _Model(self.acl, zoo.path(self.model_name))

    def prepare_slot(self, m: _Model) -> None:
        """The slot's pinned input, and a view of it for the preprocessing to write into."""
        host_in, ret = self.acl.rt.malloc_host(m.in_size)
        _check(ret, "acl.rt.malloc_host")
        self.host_in.append(host_in)
        self.xs.append(self.acl.util.ptr_to_numpy(host_in, (1, 3, SIZE, SIZE), NPY_FLOAT32))

    def fill_input(self, k: int, jpeg: bytes) -> None:
        """Host work for the picture of slot ``k``: decode and preprocess into its buffer."""
        if self.host_decode:
            self.read_file(jpeg, fresh=False)
            self.rgb[...] = self.decode(jpeg, fresh=False)
            self.preprocess(self.rgb, self.xs[k], fresh=False)

    def enqueue(self, k: int) -> None:
        """Queue copy-in, execute, copy-out of slot ``k`` on its stream."""
        acl, m, stream = self.acl, self.models[k], self.streams[k]
        _check(acl.rt.memcpy_async(m.input, m.in_size, self.host_in[k], m.in_size,
                                   ACL_MEMCPY_HOST_TO_DEVICE, stream), "acl.rt.memcpy_async")
        _check(acl.mdl.execute_async(m.id, m.in_ds, m.out_ds, stream),
               "acl.mdl.execute_async")
        _check(acl.rt.memcpy_async(self.host_out[k], m.out_size, m.output, m.out_size,
                                   ACL_MEMCPY_DEVICE_TO_HOST, stream), "acl.rt.memcpy_async")

    def run(self, jpegs: Sequence[bytes]) -> list[np.ndarray]:
        """Round-robin over the slots; collect each picture when its slot comes round."""
        acl, n = self.acl, self.streams_count
        results: list[np.ndarray] = []
        pending: list[int] = []  # slot of each image not collected yet, in order
        for i, jpeg in enumerate(jpegs):
            k = i % n
            if i >= n:  # the slot's previous image must be done before its buffers are reused
                _check(acl.rt.synchronize_stream(self.streams[k]), "synchronize_stream")
                results.append(self.logits[pending.pop(0)].copy())
            self.fill_input(k, jpeg)
            self.enqueue(k)
            pending.append(k)
        for k in pending:
            _check(acl.rt.synchronize_stream(self.streams[k]), "synchronize_stream")
            results.append(self.logits[k].copy())
        return results

    def release(self) -> None:
        """Destroy the streams, free the pinned buffers, unload the models."""
        acl = self.acl
        for stream in self.streams:
            _check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
        for ptr in self.host_in + self.host_out:
            _check(acl.rt.free_host(ptr), "acl.rt.free_host")
        for m in self.models:
            m.release()


class Dvpp(AsyncStreams):
    """D: the JPEG bytes go to the device; DVPP decodes (JPEGD) and resizes (VPC) them to
    224x224 NV12, which ``resnet50_aipp`` takes directly; two streams as in C."""

    model_name = "resnet50_aipp"
    host_decode = False

    def prepare(self) -> None:
        """The DVPP channel and resize configuration, then the slots (see ``prepare_slot``)."""
        acl = self.acl
        self.channel = acl.media.dvpp_create_channel_desc()
        _check(acl.media.dvpp_create_channel(self.channel), "dvpp_create_channel")
        self.resize_cfg = acl.media.dvpp_create_resize_config()
        self.staging: list[int] = []   # pinned host copy of the JPEG file
        self.jpeg_dev: list[int] = []  # the JPEG bytes in DVPP memory
        self.decoded: list[tuple[int, int]] = []  # (pic desc, DVPP buffer) of JPEGD output
        self.resized: list[tuple[int, int]] = []  # (pic desc, DVPP buffer) = model input
        self.dvpp_bufs: list[int] = []
        self.max_jpeg = 1 << 20
        super().prepare()

    def _dvpp_malloc(self, size: int) -> int:
        ptr, ret = self.acl.media.dvpp_malloc(size)
        _check(ret, "acl.media.dvpp_malloc")
        self.dvpp_bufs.append(ptr)
        return int(ptr)

    def _pic(self, ptr: int, size: int, w: int, h: int, ws: int, hs: int) -> int:
        m = self.acl.media
        desc = m.dvpp_create_pic_desc()
        for setter, value in ((m.dvpp_set_pic_desc_data, ptr), (m.dvpp_set_pic_desc_size, size),
                              (m.dvpp_set_pic_desc_format, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                              (m.dvpp_set_pic_desc_width, w), (m.dvpp_set_pic_desc_height, h),
                              (m.dvpp_set_pic_desc_width_stride, ws),
                              (m.dvpp_set_pic_desc_height_stride, hs)):
            _check(setter(desc, value), "acl.media.dvpp_set_pic_desc_*")
        return int(desc)

    def load_model(self) -> _Model:
        """The AIPP model reads its input straight from the VPC output (DVPP memory)."""
        size = SIZE * SIZE * 3 // 2  # 224x224 NV12: strides 224 (16-aligned) x 224 (even)
        out = self._dvpp_malloc(size)
        self.resized.append((self._pic(out, size, SIZE, SIZE, SIZE, SIZE), out))
        return _Model(self.acl, zoo.path(self.model_name), input_dev=out)

    def prepare_slot(self, m: _Model) -> None:
        """The slot's pinned JPEG staging buffer, DVPP input and JPEGD output."""
        acl = self.acl
        staging, ret = acl.rt.malloc_host(self.max_jpeg)
        _check(ret, "acl.rt.malloc_host")
        self.staging.append(staging)
        self.jpeg_dev.append(self._dvpp_malloc(self.max_jpeg))
        ws = -(-JPEG_WIDTH // JPEGD_WIDTH_ALIGN) * JPEGD_WIDTH_ALIGN
        hs = -(-JPEG_HEIGHT // JPEGD_HEIGHT_ALIGN) * JPEGD_HEIGHT_ALIGN
        size = ws * hs * 3 // 2
        buf = self._dvpp_malloc(size)
        self.decoded.append((self._pic(buf, size, JPEG_WIDTH, JPEG_HEIGHT, ws, hs), buf))

    def fill_input(self, k: int, jpeg: bytes) -> None:
        """Read the file into the pinned staging buffer; nothing else runs on the host."""
        if len(jpeg) > self.max_jpeg:
            raise ValueError(f"a {len(jpeg)}-byte JPEG does not fit the {self.max_jpeg}-byte "
                             "staging buffer")
        view = self.acl.util.ptr_to_numpy(self.staging[k], (len(jpeg),), 2)  # NPY_UBYTE
        view[...] = np.frombuffer(jpeg, dtype=np.uint8)
        self.read_file(jpeg, fresh=False)
        self.jpeg_size = len(jpeg)

    def enqueue(self, k: int) -> None:
        """Queue copy of the JPEG, JPEGD, VPC, execute, copy-out of slot ``k``."""
        acl, m, stream = self.acl, self.models[k], self.streams[k]
        media = acl.media
        size = self.jpeg_size
        w, h, _, ret = media.dvpp_jpeg_get_image_info(self.staging[k], size)
        _check(ret, "dvpp_jpeg_get_image_info")
        if (w, h) != (JPEG_WIDTH, JPEG_HEIGHT):
            raise ValueError(f"the buffers are sized for {JPEG_WIDTH}x{JPEG_HEIGHT}, this "
                             f"JPEG is {w}x{h}")
        dec_desc, _ = self.decoded[k]
        out_desc, _ = self.resized[k]
        _check(acl.rt.memcpy_async(self.jpeg_dev[k], self.max_jpeg, self.staging[k], size,
                                   ACL_MEMCPY_HOST_TO_DEVICE, stream), "acl.rt.memcpy_async")
        _check(media.dvpp_jpeg_decode_async(self.channel, self.jpeg_dev[k], size, dec_desc,
                                            stream), "dvpp_jpeg_decode_async")
        _check(media.dvpp_vpc_resize_async(self.channel, dec_desc, out_desc, self.resize_cfg,
                                           stream), "dvpp_vpc_resize_async")
        _check(acl.mdl.execute_async(m.id, m.in_ds, m.out_ds, stream),
               "acl.mdl.execute_async")
        _check(acl.rt.memcpy_async(self.host_out[k], m.out_size, m.output, m.out_size,
                                   ACL_MEMCPY_DEVICE_TO_HOST, stream), "acl.rt.memcpy_async")

    def release(self) -> None:
        """The slots, then the pictures, DVPP buffers, staging, resize config and channel."""
        acl = self.acl
        super().release()
        media = acl.media
        for desc, _ in self.decoded + self.resized:
            _check(media.dvpp_destroy_pic_desc(desc), "dvpp_destroy_pic_desc")
        for ptr in self.dvpp_bufs:
            _check(media.dvpp_free(ptr), "acl.media.dvpp_free")
        for ptr in self.staging:
            _check(acl.rt.free_host(ptr), "acl.rt.free_host")
        _check(media.dvpp_destroy_resize_config(self.resize_cfg), "destroy_resize_config")
        _check(media.dvpp_destroy_channel(self.channel), "dvpp_destroy_channel")
        _check(media.dvpp_destroy_channel_desc(self.channel), "dvpp_destroy_channel_desc")


class InferenceLoop(AsyncStreams):
    """The utilisation case: copy in, execute, copy out on ``streams_count`` streams; the
    input is preprocessed once, before the loop, so only the device's work is measured."""

    host_decode = False

    def __init__(self, acl: Any, host: HostProfile = DEFAULT_HOST, streams: int = 1,
                 jpeg: bytes | None = None) -> None:
        super().__init__(acl, host)
        self.streams_count = streams
        self.picture = jpeg if jpeg is not None else make_jpeg(0)

    def prepare(self) -> None:
        """The slots, then the one preprocessed picture in every slot's pinned input."""
        super().prepare()
        x = host_preprocess(decode_rgb(self.picture))
        for view in self.xs:
            view[...] = x


PROGRAMS: dict[str, type[_Program]] = {
    "A": SyncPageable, "B": Pinned, "C": AsyncStreams, "D": Dvpp}


# =============================================================================== running
@dataclass(frozen=True)
class RunResult:
    """One program's run over the pictures.

    Args:
        name: what the program is (``"A: sync + pageable memory"``, ``"1 stream"``, ...).
        done_ns: per picture, the virtual time its logits reached host memory.
        start_ns: the virtual time the loop started (after set-up).
        end_ns: the virtual time the loop returned.
        logits: per picture, its (1000,) float32 logits.
        aicore_ns: AI-core time the loop's tasks used (layer time x cores filled).
        aicore_count: the device's AI cores.
        h2d_bytes_per_ns: bytes per ns of the loop's host-to-device copies (their
            duration includes the fixed set-up cost of each transfer).
        trace: the recorded trace of the whole program.
    """

    name: str
    done_ns: list[int]
    start_ns: int
    end_ns: int
    logits: list[np.ndarray]
    aicore_ns: int
    aicore_count: int
    h2d_bytes_per_ns: float
    trace: Any = field(repr=False)

    @property
    def per_image_ns(self) -> list[int]:
        """Time to the first picture, then the interval between successive pictures."""
        times = [self.start_ns, *self.done_ns]
        return [b - a for a, b in itertools.pairwise(times)]

    @property
    def latency_ms(self) -> float:
        """Steady-state time per picture, in ms: the mean interval between pictures done,
        over the largest even number of intervals that ends at the last picture (whole
        double-buffering cycles; for a synchronous program every interval is the same)."""
        d = self.done_ns
        if len(d) < 2:
            return (d[0] - self.start_ns) / 1e6 if d else 0.0
        m = len(d) - 1 if len(d) % 2 or len(d) == 2 else len(d) - 2
        return (d[-1] - d[-1 - m]) / m / 1e6

    @property
    def first_image_ms(self) -> float:
        """From the start of the loop to the first picture done, in ms."""
        return (self.done_ns[0] - self.start_ns) / 1e6 if self.done_ns else 0.0

    @property
    def utilisation(self) -> float:
        """AI-core time used / (cores x the loop's wall time), between 0 and 1."""
        wall = self.end_ns - self.start_ns
        return self.aicore_ns / (self.aicore_count * wall) if wall > 0 else 0.0

    @property
    def top1(self) -> list[int]:
        """Per picture, the index of its largest logit."""
        return [int(np.argmax(v)) for v in self.logits]


@contextmanager
def _bound(profile: str) -> Iterator[tuple[Session, ModuleType]]:
    """A fresh Session bound with ``import acl`` pointing at it; restores the previous
    binding (and any previous ``acl`` module) afterwards."""
    import acl_lab

    saved = {k: v for k, v in sys.modules.items() if k == "acl" or k.startswith("acl.")}
    with Session(profile=profile) as s:
        try:
            yield s, acl_lab.install()
        finally:
            acl_lab.uninstall()
            sys.modules.update(saved)


def run_program(make: Callable[[Any], _Program], jpegs: Sequence[bytes],
                profile: str = "Ascend310P3", name: str = "") -> RunResult:
    """Run one program: set-up, the timed loop over ``jpegs``, tear-down; measure the loop.

    ``make(acl)`` builds the program for the bound ``acl`` module.
    """
    with _bound(profile) as (s, acl), warnings.catch_warnings():
        # numpy_to_ptr warns that pyACL deprecates it (variant A uses it as old samples do)
        warnings.simplefilter("ignore", Warning)
        prog = make(acl)
        prog.setup()
        th = s.thread()
        log = TaskLog()
        s.hooks.subscribe(log)
        start = th.clock
        logits = prog.run(jpegs)
        end = th.clock
        prog.teardown()
        trace = s.finish()
        s.hooks.unsubscribe(log)
        tasks = log.tasks
        done = [t.end for t in tasks if t.kind == TaskKind.D2H and t.status == 0]
        if len(done) != len(jpegs):
            raise RuntimeError(f"{name or type(prog).__name__}: {len(done)} device-to-host "
                               f"copies for {len(jpegs)} pictures")
        aicore = 0
        for t in tasks:
            if t.engine != Engine.AICORE or t.end < 0:
                continue
            if t.kind == TaskKind.MODEL:
                lm = s.models[int(t.label.split()[-1])]
                cost = lm.costs.get(()) or execution_cost(s.profile, lm.om)  # () = static gear
                aicore += cost.core_ns
            else:
                aicore += t.units * (t.end - t.start)
        h2d = [t for t in tasks if t.kind == TaskKind.H2D and t.end > t.start]
        moved = sum(t.nbytes for t in h2d)
        busy = sum(t.end - t.start for t in h2d)
        return RunResult(name or type(prog).__name__, done, start, end, logits, aicore,
                         s.profile.aicore_count, moved / busy if busy else 0.0, trace)


@dataclass(frozen=True)
class LadderResult:
    """The four variants and the utilisation case on one profile, with the published figures.

    Args:
        profile: the device profile name.
        images: pictures per variant.
        variants: ``"A"`` .. ``"D"`` -> the run.
        streams: 1 and 2 -> the inference loop on that many streams.
        published: the article's figures.
    """

    profile: str
    images: int
    variants: dict[str, RunResult]
    streams: dict[int, RunResult]
    published: Published = PUBLISHED

    def latency_ms(self, key: str) -> float:
        """Emulated time per image of variant ``key``, in ms."""
        return self.variants[key].latency_ms

    def ratio(self, key: str) -> float:
        """Emulated speed-up of variant ``key`` over A."""
        return self.latency_ms("A") / self.latency_ms(key)

    def ratio_error(self, key: str) -> float:
        """Emulated ratio / published ratio - 1 (0.10 = 10% above the article)."""
        return self.ratio(key) / self.published.ratio[key] - 1.0

    def within(self, key: str, tolerance: float = RATIO_TOLERANCE) -> bool:
        """True when variant ``key``'s ratio is within ``tolerance`` of the published one."""
        return abs(self.ratio_error(key)) <= tolerance

    @property
    def pinned_bw_gain(self) -> float:
        """How much faster the pinned copies of B moved bytes than the pageable ones of A."""
        a, b = self.variants["A"].h2d_bytes_per_ns, self.variants["B"].h2d_bytes_per_ns
        return b / a - 1.0 if a else 0.0

    def correctness(self) -> list[str]:
        """Problems with the outputs (empty when all is well): per picture, the same top-1
        class from every variant, and A, B and C's logits equal to each other."""
        problems = []
        ref = self.variants["A"]
        for key, run in self.variants.items():
            if run.top1 != ref.top1:
                problems.append(f"{key}: top-1 classes {run.top1} differ from A's {ref.top1}")
            if key in ("B", "C"):
                for i, (x, y) in enumerate(zip(run.logits, ref.logits, strict=True)):
                    if not np.allclose(x, y, rtol=1e-5, atol=1e-5):
                        problems.append(f"{key}: the logits of picture {i} differ from A's "
                                        f"(max |diff| {float(np.abs(x - y).max()):.3g})")
        return problems

    def table(self) -> str:
        """The emulated figures beside the published ones, as plain text."""
        pub = self.published
        lines = [f"optimisation ladder on {self.profile}: ResNet-50, {self.images} x "
                 f"{JPEG_WIDTH}x{JPEG_HEIGHT} JPEG (virtual time per image)",
                 f"{'variant':<28}{'emulated':>10}{'published':>11}{'ratio':>8}"
                 f"{'published':>11}{'error':>8}  status"]
        for key in ("A", "B", "C", "D"):
            name = f"{key}  {VARIANT_NAMES[key]}"
            emu, ref = self.latency_ms(key), pub.latency_ms[key]
            if key == "A":
                lines.append(f"{name:<28}{emu:>8.2f}ms{ref:>9.1f}ms{1.0:>7.2f}x{1.0:>10.2f}x")
                continue
            r, err = self.ratio(key), self.ratio_error(key)
            status = "ok" if self.within(key) else "MISS"
            lines.append(f"{name:<28}{emu:>8.2f}ms{ref:>9.1f}ms{r:>7.2f}x"
                         f"{pub.ratio[key]:>10.2f}x{err:>+8.0%}  {status}")
        one, two = self.streams[1].utilisation, self.streams[2].utilisation
        lines.append(f"AI-core utilisation, inference loop: 1 stream {one:.0%} -> 2 streams "
                     f"{two:.0%} (published {pub.util_one_stream:.0%} -> "
                     f"{pub.util_two_streams:.0%})")
        lines.append(f"pinned vs pageable host-to-device copy bandwidth: "
                     f"{self.pinned_bw_gain:+.0%} (published {pub.pinned_bw_gain:+.0%})")
        return "\n".join(lines)


def run_ladder(profile: str = "Ascend310P3", images: int = 6, distinct: int = 2,
               host: HostProfile = DEFAULT_HOST, check: bool = True) -> LadderResult:
    """Run the four variants and the one/two-stream inference loop; compare with the article.

    Args:
        profile: the device profile.
        images: pictures per variant (at least 2: the latency is measured between pictures).
        distinct: how many different pictures cycle through the ``images`` (``make_jpeg``
            seeds 0 .. distinct-1); identical pictures give identical model inputs, which the
            emulator does not recompute.
        host: the host CPU's rates.
        check: raise RuntimeError when the variants' outputs disagree.
    """
    if images < 2:
        raise ValueError("images must be at least 2")
    if distinct < 1:
        raise ValueError("distinct must be at least 1")
    pictures = [make_jpeg(seed) for seed in range(distinct)]
    jpegs = [pictures[i % distinct] for i in range(images)]
    variants = {}
    streams = {}
    # the inference loop runs an even number of pictures (at least 4), so that with two
    # streams both finish together and the utilisation is not diluted by a lone last image
    loop = [pictures[0]] * max(4, images + images % 2)
    with shared_memo():  # each distinct model input is computed once, not once per variant
        for key, cls in PROGRAMS.items():
            variants[key] = run_program(functools.partial(cls, host=host), jpegs, profile,
                                        f"{key}: {VARIANT_NAMES[key]}")
        for n in (1, 2):
            streams[n] = run_program(
                functools.partial(InferenceLoop, host=host, streams=n, jpeg=pictures[0]),
                loop, profile, f"inference loop, {n} stream{'s' if n > 1 else ''}")
    result = LadderResult(profile, images, variants, streams)
    if check:
        problems = result.correctness()
        if problems:
            raise RuntimeError("the ladder's variants disagree: " + "; ".join(problems))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m acl_lab.ladder [PROFILE] [IMAGES]``: print the ladder table."""
    args = list(sys.argv[1:] if argv is None else argv)
    profile = args[0] if args else "Ascend310P3"
    images = int(args[1]) if len(args) > 1 else 6
    print(run_ladder(profile, images).table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
