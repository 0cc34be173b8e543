"""Host-side work on the virtual clock: an acl_lab extension (real ACL has nothing like it).

An emulated pyACL program runs in virtual time: every ACL call charges its host cost to the
calling thread's clock and device work is placed on the device's engines. The program's own
CPU work (decoding a JPEG, resizing and normalising it, touching fresh memory) takes no
virtual time unless the program says so. ``host_work(ns, what)`` says so: it charges ``ns``
nanoseconds to the calling thread's clock and records the interval in the trace as a
pseudo-call named ``acl_lab.host_work`` (like the ``acl_lab.exit`` pseudo-call of
``Session.finish``), so the timeline shows it on the thread's lane and device work that runs
meanwhile overlaps it.

The helpers below turn work into nanoseconds from the rates of one ``HostProfile``, the one
place the host's figures live; each rate says where such a number comes from. They are
approximate, order-of-magnitude figures for one core of an x86 server, not measurements of the
machine running the emulator.

Example::

    acl_lab.host_work(acl_lab.hostwork.jpeg_decode_ns(1280, 720), "decode JPEG")

``host_work`` takes the program's word for the amount. ``preprocess_image`` does the work
itself (decode, resize, normalise) and charges what the pixels it processed cost, recorded
as ``acl_lab.host_preprocess``: that is the host work a grader can trust.
"""

from __future__ import annotations

import numbers
import sys
from dataclasses import dataclass
from typing import Any

#: The pseudo-call name ``host_work`` records in the trace.
HOST_WORK_CALL = "acl_lab.host_work"
#: The pseudo-call name ``preprocess_image`` records (measured work: graders count it).
HOST_PREPROCESS_CALL = "acl_lab.host_preprocess"


@dataclass(frozen=True)
class HostProfile:
    """The host CPU as data: rates of the work an inference program does on one core.

    Args:
        name: a label for the profile.
        jpeg_decode_pixels_per_ns: baseline (Huffman, 4:2:0) JPEG decoding with
            libjpeg-turbo, the decoder behind Pillow and OpenCV, on one core. libjpeg-turbo's
            published benchmarks put decompression of photographic images at the order of
            100-200 Mpixel/s on one x86 core; 150 Mpixel/s (0.15 pixel/ns) is the middle.
        stream_bytes_per_ns: bytes per ns one core moves through simple vectorised passes
            over memory (an OpenCV resize, NumPy casts, normalisation, a transpose copy),
            counting every pass's reads and writes. About 8 GB/s: a little below the
            10-12 GB/s a single core reaches in a STREAM copy, since each pass also computes.
        page_fault_ns: the first touch of a fresh anonymous 4 KiB page: a minor page fault
            (trap, page allocation, page-table update: about 0.5 µs of kernel time) plus
            clearing the page (4 KiB at about 16 GB/s: 0.25 µs).
        page_bytes: the page size of those faults (4 KiB, no transparent huge pages).
    """

    name: str = "x86 server core"
    jpeg_decode_pixels_per_ns: float = 0.15
    stream_bytes_per_ns: float = 8.0
    page_fault_ns: int = 750
    page_bytes: int = 4096


#: The host profile the helpers use by default.
DEFAULT_HOST = HostProfile()


def _non_negative(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a number, got {value!r}")
    if not value >= 0:  # also rejects NaN
        raise ValueError(f"{what} must be >= 0, got {value!r}")
    return float(value)


def jpeg_decode_ns(width: int, height: int, host: HostProfile = DEFAULT_HOST) -> int:
    """CPU time to decode a ``width`` x ``height`` baseline JPEG on one core.

    >>> jpeg_decode_ns(1280, 720)  # 921,600 pixels at 150 Mpixel/s
    6144000
    """
    pixels = _non_negative(width, "width") * _non_negative(height, "height")
    return round(pixels / host.jpeg_decode_pixels_per_ns)


def preprocess_ns(nbytes: int, host: HostProfile = DEFAULT_HOST) -> int:
    """CPU time of preprocessing passes that read and write ``nbytes`` in total.

    Count every pass: a resize reads its source and writes its result, a cast reads and
    writes, and so on (``acl_lab.ladder.preprocess_bytes`` counts the usual ResNet-50 ones).

    >>> preprocess_ns(8_000_000)  # 8 MB at 8 GB/s
    1000000
    """
    return round(_non_negative(nbytes, "nbytes") / host.stream_bytes_per_ns)


def first_touch_ns(nbytes: int, host: HostProfile = DEFAULT_HOST) -> int:
    """Page-fault cost of writing ``nbytes`` of freshly allocated pageable memory.

    A buffer the program allocates anew (a new NumPy array, ``bytes`` object, decoder
    output) is backed by pages the kernel maps and zeroes on first touch; a buffer reused
    from the previous image is not. Counts whole pages.

    >>> first_touch_ns(602_112)  # one 224x224x3 float32 image: 147 pages
    110250
    """
    pages = -(-int(_non_negative(nbytes, "nbytes")) // host.page_bytes)
    return pages * host.page_fault_ns


def host_work(ns: int, what: str = "host work") -> None:
    """Charge ``ns`` nanoseconds of CPU work to the calling thread's virtual clock.

    The work is recorded in the current session's trace as one call named
    ``acl_lab.host_work`` with arguments ``(ns, what)``, lasting ``ns``: the timeline draws it
    on the thread's lane, and device tasks queued before it run meanwhile. Use the helpers of
    this module (``jpeg_decode_ns``, ``preprocess_ns``, ``first_touch_ns``) for the amount.

    Differs from real ACL: real ACL has no such call; on real hardware the CPU time simply
    passes. The emulator cannot see a program's own computation, so the program declares it.

    Raises:
        TypeError: ``ns`` is not a number.
        ValueError: ``ns`` is negative.
    """
    from .runtime.session import current_session

    cost = round(_non_negative(ns, "ns"))
    s = current_session()
    assert s is not None  # created on first use
    frame = sys._getframe(1)
    with s.lock:
        th, cid, _ = s.api_enter(HOST_WORK_CALL, cost, (cost, str(what)), 0,
                                 frame.f_code.co_filename, frame.f_lineno)
        s.api_exit(th, cid, 0)


def preprocess_ns_of(width: int, height: int, size: int, fresh: bool,
                     host: HostProfile = DEFAULT_HOST) -> int:
    """What ``preprocess_image`` charges for a ``width`` x ``height`` JPEG made into a
    ``3 x size x size`` float32 input: decoding, the passes over memory (resize, cast,
    subtract, divide, CHW copy: bytes read and written) and, when ``fresh``, the first touch
    of every new buffer."""
    n = size * size * 3
    rgb = width * height * 3
    ns = jpeg_decode_ns(width, height, host) + preprocess_ns(rgb + 30 * n, host)
    if fresh:
        ns += first_touch_ns(rgb + 17 * n, host)
    return ns


def preprocess_image(jpeg: bytes, size: int, mean: Any, std: Any, out: Any = None,
                     host: HostProfile = DEFAULT_HOST) -> Any:
    """Decode a JPEG into a normalised ``(1, 3, size, size)`` float32 model input, charging
    the CPU time from the pixels it processed.

    Decodes with Pillow, resizes bilinearly to ``size`` x ``size``, computes
    ``(pixel - mean) / std`` per channel and reorders HWC -> CHW, into ``out`` when given (a
    numpy view of pinned memory, say) or a new array. The virtual time charged is
    ``preprocess_ns_of`` of the decoded picture's own width and height, recorded as the
    pseudo-call ``acl_lab.host_preprocess`` with arguments ``(width, height, size, crc32 of
    the JPEG, ns, fresh)``: no number the caller passes changes it, so a grader can count it
    as measured host work.

    Differs from real ACL: real ACL has no such call (on a real machine the CPU time passes
    as the work runs).

    Returns:
        The array written (``out``, or the new one).

    Raises:
        ValueError: ``jpeg`` is not a picture Pillow can decode, or ``out`` has the wrong
            shape.
    """
    import io
    import zlib

    import numpy as np
    from PIL import Image

    try:
        with Image.open(io.BytesIO(bytes(jpeg))) as im:
            width, height = im.size
            small = np.asarray(im.convert("RGB").resize(
                (int(size), int(size)), Image.Resampling.BILINEAR), dtype=np.uint8)
    except OSError as e:
        raise ValueError(f"preprocess_image: not a decodable picture: {e}") from None
    x = (small.astype(np.float32) - np.asarray(mean, dtype=np.float32)) \
        / np.asarray(std, dtype=np.float32)
    fresh = out is None
    if fresh:
        out = np.empty((1, 3, size, size), dtype=np.float32)
    if tuple(np.shape(out)) != (1, 3, size, size):
        raise ValueError(f"preprocess_image: out has shape {np.shape(out)}, expected "
                         f"(1, 3, {size}, {size})")
    out[...] = x.transpose(2, 0, 1)[None]
    ns = preprocess_ns_of(width, height, int(size), fresh, host)
    _record(HOST_PREPROCESS_CALL, ns, (width, height, int(size),
                                       zlib.crc32(bytes(jpeg)), ns, int(fresh)))
    return out


def _record(name: str, ns: int, args: tuple[Any, ...]) -> None:
    """Charge ``ns`` to the calling thread as the pseudo-call ``name`` (two frames up)."""
    from .runtime.session import current_session

    s = current_session()
    assert s is not None  # created on first use
    frame = sys._getframe(2)
    with s.lock:
        th, cid, _ = s.api_enter(name, ns, args, 0, frame.f_code.co_filename, frame.f_lineno)
        s.api_exit(th, cid, 0)


__all__ = ["DEFAULT_HOST", "HOST_PREPROCESS_CALL", "HOST_WORK_CALL", "HostProfile",
           "first_touch_ns", "host_work", "jpeg_decode_ns", "preprocess_image",
           "preprocess_ns", "preprocess_ns_of"]
