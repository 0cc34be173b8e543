"""The Python twin of leak_error_path.cpp."""

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1


def upload(data):
    size = data.nbytes
    dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    if ret != 0:
        return 1, 0
    nbytes = size * 2 if data.size > 4 else size
    if acl.rt.memcpy(dev, size, data.ctypes.data, nbytes, ACL_MEMCPY_HOST_TO_DEVICE) != 0:
        return 1, 0
    return 0, dev


acl.init()
acl.rt.set_device(0)
context, _ = acl.rt.create_context(0)
small = np.array([1, 2, 3, 4], dtype=np.float32)
big = np.arange(1, 9, dtype=np.float32)
ret, dev = upload(small)
if ret == 0:
    acl.rt.free(dev)
ret, dev = upload(big)
if ret != 0:
    print("upload failed: " + ("see trace" if acl.get_recent_err_msg() else ""))
acl.rt.destroy_context(context)
acl.rt.reset_device(0)
acl.finalize()
