"""VPC 8K resize: acl.media.dvpp_vpc_resize_async takes a YUV420SP input up to 8192 wide or
high (acldvppVpcResizeAsync restrictions, Atlas inference products), while its output and
the other VPC calls stay within 4096x4096. The public vpc_jpeg sample's dvpp_type=4 run
resizes an 8192x8192 NV12 picture to 4000x4000 this way."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from acl_lab.runtime.session import Session

from .test_media import read_back
from .test_media_image import last_diag, picture, planes, roi


@pytest.fixture
def vpc(ready: ModuleType) -> tuple[ModuleType, int, int, int]:
    acl = ready
    chan = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(chan) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    cfg = acl.media.dvpp_create_resize_config()
    return acl, int(chan), int(stream), int(cfg)


def _bands(w: int, h: int) -> np.ndarray:
    """An NV12 picture whose luma is 40 in the left half and 200 in the right, chroma 128."""
    y = np.full((h, w), 40, np.uint8)
    y[:, w // 2:] = 200
    return np.concatenate([y.ravel(), np.full(w * h // 2, 128, np.uint8)])


def test_resize_accepts_an_8k_wide_input(vpc: tuple[ModuleType, int, int, int]) -> None:
    """A 6144x32 input (wider than 4096) resizes to 1536x32: ret 0, and the output keeps the
    two luma bands left and right of its middle."""
    acl, chan, stream, cfg = vpc
    din, _ = picture(acl, 6144, 32, _bands(6144, 32))
    dout, pout = picture(acl, 1536, 32)
    assert acl.media.dvpp_vpc_resize_async(chan, din, dout, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    y, uv = planes(read_back(acl, pout, 1536 * 32 * 3 // 2), 1536, 32)
    assert (y[:, :700] == 40).all() and (y[:, 836:] == 200).all()
    assert (uv == 128).all()


def test_resize_accepts_an_8k_high_input(vpc: tuple[ModuleType, int, int, int]) -> None:
    """A 32x8192 input (height stride 8192, above the old 4096 limit) resizes to 32x4096."""
    acl, chan, stream, cfg = vpc
    din, _ = picture(acl, 32, 8192, np.full(32 * 8192 * 3 // 2, 77, np.uint8))
    dout, pout = picture(acl, 32, 4096)
    assert acl.media.dvpp_vpc_resize_async(chan, din, dout, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert (read_back(acl, pout, 32 * 4096 * 3 // 2) == 77).all()


@pytest.mark.parametrize("src,dst,why", [
    ((8194, 16), (64, 16), "input is 8194x16"),      # past 8K
    ((64, 16), (4112, 16), "output is 4112x16"),     # the output stays within 4096
])
def test_resize_limits(vpc: tuple[ModuleType, int, int, int], session: Session,
                       src: tuple[int, int], dst: tuple[int, int], why: str) -> None:
    """Past 8192 on the input, or past 4096 on the output: 100000, the rule in the trace,
    and no task queued."""
    acl, chan, stream, cfg = vpc
    din, _ = picture(acl, *src)
    dout, _ = picture(acl, *dst)
    tasks = session.task_count
    assert acl.media.dvpp_vpc_resize_async(chan, din, dout, cfg, stream) == 100000
    assert session.task_count == tasks
    assert why in last_diag(session)


def test_crop_keeps_the_4096_input_limit(vpc: tuple[ModuleType, int, int, int],
                                         session: Session) -> None:
    """The 8K range is the resize call's: a crop from a 6144-wide input is still refused."""
    acl, chan, stream, _ = vpc
    din, _ = picture(acl, 6144, 16)
    dout, _ = picture(acl, 64, 16)
    assert acl.media.dvpp_vpc_crop_async(chan, din, dout, roi(acl, 0, 63, 0, 15), stream) \
        == 100000
    assert "6144x16" in last_diag(session)
