"""Host-side work on the virtual clock: an acl_lab extension (real ACL has nothing like it).

An emulated pyACL program runs in virtual time: every ACL call charges its host cost to the
calling thread's clock and device work is placed on the device's engines. The program's own
CPU work (decoding a JPEG, resizing and normalising it, touching fresh memory) takes no
virtual time unless the program says so. ``host_work(ns, what)`` says so: it charges ``ns``
nanoseconds to the calling thread's clock and records the interval in the trace as a
pseudo-call named ``acl_lab.host_work`` (like the ``acl_lab.exit`` pseudo-call of
``Session.finish``), so the timeline shows it on the thread's lane and device work that runs
meanwhile overlaps it.

The helpers ``jpeg_decode_ns``, ``preprocess_ns``, ``first_touch_ns`` and ``preprocess_ns_of``
turn work into nanoseconds from the rates of one ``HostProfile``: the formulas are the cost
model's (``runtime.costs``), the rates live with the device profiles (``runtime.profiles``),
each saying where such a number comes from. They are approximate, order-of-magnitude figures
for one core of an x86 server, not measurements of the machine running the emulator.

Example::

    acl_lab.host_work(acl_lab.hostwork.jpeg_decode_ns(1280, 720), "decode JPEG")

``host_work`` takes the program's word for the amount. ``preprocess_image`` does the work
itself (decode, resize, normalise) and charges what the pixels it processed cost, recorded
as ``acl_lab.host_preprocess``: that is the host work a grader can trust.
"""

from __future__ import annotations

import sys
from typing import Any

from .runtime.costs import (
    first_touch_ns,
    jpeg_decode_ns,
    non_negative,
    preprocess_ns,
    preprocess_ns_of,
)
from .runtime.profiles import DEFAULT_HOST, HostProfile

#: The pseudo-call name ``host_work`` records in the trace.
HOST_WORK_CALL = "acl_lab.host_work"
#: The pseudo-call name ``preprocess_image`` records (measured work: graders count it).
HOST_PREPROCESS_CALL = "acl_lab.host_preprocess"


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

    cost = round(non_negative(ns, "ns"))
    s = current_session()
    assert s is not None  # created on first use
    frame = sys._getframe(1)
    with s.lock:
        th, cid, _ = s.api_enter(HOST_WORK_CALL, cost, (cost, str(what)), "",
                                 frame.f_code.co_filename, frame.f_lineno)
        s.api_exit(th, cid, 0)


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
        th, cid, _ = s.api_enter(name, ns, args, "", frame.f_code.co_filename, frame.f_lineno)
        s.api_exit(th, cid, 0)


__all__ = ["DEFAULT_HOST", "HOST_PREPROCESS_CALL", "HOST_WORK_CALL", "HostProfile",
           "first_touch_ns", "host_work", "jpeg_decode_ns", "preprocess_image",
           "preprocess_ns", "preprocess_ns_of"]
