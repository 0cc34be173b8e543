"""An on-board (RC) style program: it asks for the run mode, picks copy kinds from it, and in
ACL_DEVICE mode reads the device result directly with acl.util.ptr_to_bytes (host and device
memory are one there). In ACL_HOST mode it copies the result back first, as a card needs.

Prints the run mode and the bytes it read; exits 0 when they are right.
"""

import sys

import acl
import numpy as np

ACL_DEVICE, ACL_HOST = 0, 1
H2D, D2H, D2D = 1, 2, 3
SIZE = 64


def main() -> int:
    """Fill a device buffer from the host, double it on the device side, read it back."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    mode, ret = acl.rt.get_run_mode()
    assert ret == 0
    to_dev = D2D if mode == ACL_DEVICE else H2D
    data = np.arange(SIZE, dtype=np.uint8)
    dev, ret = acl.rt.malloc(SIZE, 0)
    assert ret == 0
    assert acl.rt.memcpy(dev, SIZE, acl.util.numpy_to_ptr(data), SIZE, to_dev) == 0
    if mode == ACL_DEVICE:
        got = acl.util.ptr_to_bytes(dev, SIZE)
    else:
        host, ret = acl.rt.malloc_host(SIZE)
        assert ret == 0
        assert acl.rt.memcpy(host, SIZE, dev, SIZE, D2H) == 0
        got = acl.util.ptr_to_bytes(host, SIZE)
        acl.rt.free_host(host)
    print("mode", "ACL_DEVICE" if mode == ACL_DEVICE else "ACL_HOST", got[:4].hex())
    acl.rt.free(dev)
    acl.rt.destroy_context(ctx)
    acl.rt.reset_device(0)
    acl.finalize()
    return 0 if got == data.tobytes() else 1


if __name__ == "__main__":
    sys.exit(main())
