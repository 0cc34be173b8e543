"""A sample-style mistake: the result is "copied back" with DEVICE_TO_HOST from a host
buffer instead of the device output, so the program prints its own input. The runtime
copies by the addresses and says nothing; acl_lab reports memcpy_kind_mismatch at the copy.
Prints the bytes it got."""

import acl
import litekit
import numpy as np

SIZE = 16

res = litekit.Resource()
host_in, ret = acl.rt.malloc_host(SIZE)
litekit.check("malloc_host", ret)
host_out, ret = acl.rt.malloc_host(SIZE)
litekit.check("malloc_host", ret)
dev, ret = acl.rt.malloc(SIZE, litekit.ACL_MEM_MALLOC_NORMAL_ONLY)
litekit.check("malloc", ret)
data = np.arange(SIZE, dtype=np.uint8)
litekit.check("fill", acl.rt.memcpy(host_in, SIZE, data.ctypes.data, SIZE, 0))
litekit.check("to device", acl.rt.memcpy(dev, SIZE, host_in, SIZE,
                                         litekit.ACL_MEMCPY_HOST_TO_DEVICE))
litekit.check("negate", acl.rt.memset(dev, SIZE, 0xFF, SIZE))
# the bug: the source should be dev
litekit.check("back", acl.rt.memcpy(host_out, SIZE, host_in, SIZE,
                                    litekit.ACL_MEMCPY_DEVICE_TO_HOST))
print("got", acl.util.ptr_to_bytes(host_out, SIZE)[:4].hex())
for ptr in (host_in, host_out):
    acl.rt.free_host(ptr)
acl.rt.free(dev)
res.release()
