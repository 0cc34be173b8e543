"""Builders of the media objects the bad-input table refers to (mixed into ``World``).

Each ``_name`` method makes the object of the ``Ref("name")`` rows in ``media_rows`` use. The
VDEC/VENC channels subscribe a thread that never calls the emulator (the ``tid`` ref), so no
background call lands in the trace between a bad call and its check.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

NV12, H264_BASELINE = 1, 1


def _noop3(a: Any, b: Any, c: Any) -> None:
    """A VDEC/VENC callback that does nothing."""


def h264_frame(w: int = 128, h: int = 128) -> bytes:
    """One Annex-B H.264 baseline frame (an IDR with its SPS/PPS) made with PyAV."""
    import av

    enc = av.CodecContext.create("libx264", "w")
    enc.width, enc.height, enc.pix_fmt = w, h, "yuv420p"
    enc.time_base = Fraction(1, 25)
    enc.options = {"tune": "zerolatency", "preset": "ultrafast"}
    frame = av.VideoFrame.from_ndarray(np.full((h * 3 // 2, w), 100, np.uint8),
                                       format="yuv420p")
    frame.pts = 0
    data = b"".join(bytes(p) for p in enc.encode(frame))
    return data + b"".join(bytes(p) for p in enc.encode(None))


class MediaWorld:
    """Media builders; ``World`` supplies ``acl``, ``get``, ``cache`` and ``_host_bytes``."""

    acl: Any
    cache: dict[str, Any]

    def get(self, ref: Any) -> Any:  # pragma: no cover - provided by World
        raise NotImplementedError

    def _host_bytes(self, data: bytes) -> int:  # pragma: no cover - provided by World
        raise NotImplementedError

    def _ref(self, name: str) -> Any:
        from .bad_inputs import Ref

        return self.get(Ref(name))

    def _dvpp_zeros(self, n: int) -> int:
        acl = self.acl
        p, ret = acl.media.dvpp_malloc(n)
        assert ret == 0
        assert acl.rt.memset(p, n, 0, n) == 0
        return int(p)

    def _nv12_pic(self, w: int, h: int) -> int:
        m = self.acl.media
        d = int(m.dvpp_create_pic_desc())
        self._fill_pic(d, w, h)
        return d

    def _fill_pic(self, d: int, w: int, h: int) -> None:
        m = self.acl.media
        ws, hs = (w + 15) // 16 * 16, (h + 1) // 2 * 2
        size = ws * hs * 3 // 2
        for fn, v in (("data", self._dvpp_zeros(size)), ("size", size), ("format", NV12),
                      ("width", w), ("height", h), ("width_stride", ws),
                      ("height_stride", hs)):
            assert getattr(m, "dvpp_set_pic_desc_" + fn)(d, v) == 0

    # ------------------------------------------------------------------ DVPP objects
    def _roi(self) -> int:
        return int(self.acl.media.dvpp_create_roi_config(0, 31, 0, 31))

    def _dead_roi(self) -> int:
        r = self._roi()
        assert self.acl.media.dvpp_destroy_roi_config(r) == 0
        return r

    def _odd_roi(self) -> int:
        return int(self.acl.media.dvpp_create_roi_config(1, 31, 0, 31))

    def _batch(self) -> int:
        return int(self.acl.media.dvpp_create_batch_pic_desc(2))

    def _dead_batch(self) -> int:
        b = self._batch()
        assert self.acl.media.dvpp_destroy_batch_pic_desc(b) == 0
        return b

    def _sdesc(self) -> int:
        return int(self.acl.media.dvpp_create_stream_desc())

    def _dead_sdesc(self) -> int:
        d = self._sdesc()
        assert self.acl.media.dvpp_destroy_stream_desc(d) == 0
        return d

    def _jcfg(self) -> int:
        return int(self.acl.media.dvpp_create_jpege_config())

    def _dead_jcfg(self) -> int:
        c = self._jcfg()
        assert self.acl.media.dvpp_destroy_jpege_config(c) == 0
        return c

    def _crop_in(self) -> int:
        return self._nv12_pic(64, 64)

    def _crop_out(self) -> int:
        return self._nv12_pic(32, 32)

    def _in_batch(self) -> int:
        b = int(self.acl.media.dvpp_create_batch_pic_desc(1))
        self._fill_pic(int(self.acl.media.dvpp_get_pic_desc(b, 0)), 64, 64)
        return b

    def _out_batch(self) -> int:
        b = self._batch()
        for i in range(2):
            self._fill_pic(int(self.acl.media.dvpp_get_pic_desc(b, i)), 32, 32)
        return b

    def _enc_size(self) -> int:
        return 64 * 64 * 3 // 2 + 4096

    def _size_ptr(self) -> int:
        return self._host_bytes(np.array([self._enc_size()], np.uint32).tobytes())

    def _zero_size_ptr(self) -> int:
        return self._host_bytes(bytes(4))

    def _enc_out(self) -> int:
        return self._dvpp_zeros(self._enc_size())

    # ------------------------------------------------------------------ VDEC / VENC
    def _vdec_desc(self) -> int:
        return int(self.acl.media.vdec_create_channel_desc())

    def _dead_vdec_desc(self) -> int:
        d = self._vdec_desc()
        assert self.acl.media.vdec_destroy_channel_desc(d) == 0
        return d

    def _vdec_ready(self) -> int:
        m = self.acl.media
        d = self._vdec_desc()
        assert m.vdec_set_channel_desc_thread_id(d, self._ref("tid")) == 0
        assert m.vdec_set_channel_desc_callback(d, _noop3) == 0
        assert m.vdec_set_channel_desc_entype(d, H264_BASELINE) == 0
        assert m.vdec_set_channel_desc_out_pic_format(d, NV12) == 0
        return d

    def _vdec_chan(self) -> int:
        d = self._vdec_ready()
        assert self.acl.media.vdec_create_channel(d) == 0
        return d

    def _vdec_cfg(self) -> int:
        return int(self.acl.media.vdec_create_frame_config())

    def _dead_vdec_cfg(self) -> int:
        c = self._vdec_cfg()
        assert self.acl.media.vdec_destroy_frame_config(c) == 0
        return c

    def _h264(self) -> int:
        m = self.acl.media
        data = h264_frame()
        dev, ret = m.dvpp_malloc(len(data))
        assert ret == 0
        assert self.acl.rt.memcpy(dev, len(data), self._host_bytes(data), len(data), 1) == 0
        d = int(m.dvpp_create_stream_desc())
        assert m.dvpp_set_stream_desc_data(d, dev) == 0
        assert m.dvpp_set_stream_desc_size(d, len(data)) == 0
        return d

    def _vdec_out(self) -> int:
        m = self.acl.media
        d = int(m.dvpp_create_pic_desc())
        size = 128 * 128 * 3 // 2
        assert m.dvpp_set_pic_desc_data(d, self._dvpp_zeros(size)) == 0
        assert m.dvpp_set_pic_desc_size(d, size) == 0
        assert m.dvpp_set_pic_desc_format(d, NV12) == 0
        return d

    def _venc_desc(self) -> int:
        return int(self.acl.media.venc_create_channel_desc())

    def _dead_venc_desc(self) -> int:
        d = self._venc_desc()
        assert self.acl.media.venc_destroy_channel_desc(d) == 0
        return d

    def _venc_ready(self) -> int:
        m = self.acl.media
        d = self._venc_desc()
        assert m.venc_set_channel_desc_thread_id(d, self._ref("tid")) == 0
        assert m.venc_set_channel_desc_callback(d, _noop3) == 0
        assert m.venc_set_channel_desc_entype(d, H264_BASELINE) == 0
        assert m.venc_set_channel_desc_pic_format(d, NV12) == 0
        assert m.venc_set_channel_desc_pic_width(d, 128) == 0
        assert m.venc_set_channel_desc_pic_height(d, 128) == 0
        return d

    def _venc_chan(self) -> int:
        d = self._venc_ready()
        assert self.acl.media.venc_create_channel(d) == 0
        return d

    def _venc_cfg(self) -> int:
        return int(self.acl.media.venc_create_frame_config())

    def _dead_venc_cfg(self) -> int:
        c = self._venc_cfg()
        assert self.acl.media.venc_destroy_frame_config(c) == 0
        return c

    def _venc_in(self) -> int:
        return self._nv12_pic(128, 128)
