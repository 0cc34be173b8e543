"""The Python twin of two_streams.cpp."""

import ctypes

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3

acl.init()
acl.rt.set_device(0)
context, _ = acl.rt.create_context(0)
upload, _ = acl.rt.create_stream()
work, _ = acl.rt.create_stream()
ready, _ = acl.rt.create_event()
size = 16 * 4
host, _ = acl.rt.malloc_host(size)
h = np.ctypeslib.as_array((ctypes.c_int32 * 16).from_address(host))
h[:] = np.arange(16, dtype=np.int32) ** 2
a, _ = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
b, _ = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
acl.rt.memcpy_async(a, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE, upload)
acl.rt.record_event(ready, upload)
acl.rt.stream_wait_event(work, ready)
acl.rt.memcpy_async(b, size, a, size, ACL_MEMCPY_DEVICE_TO_DEVICE, work)
acl.rt.synchronize_stream(work)
out = np.zeros(16, dtype=np.int32)
acl.rt.memcpy(out.ctypes.data, out.nbytes, b, size, ACL_MEMCPY_DEVICE_TO_HOST)
for v in out:
    print(int(v))
acl.rt.free(a)
acl.rt.free(b)
acl.rt.free_host(host)
acl.rt.destroy_event(ready)
acl.rt.destroy_stream(upload)
acl.rt.destroy_stream(work)
acl.rt.destroy_context(context)
acl.rt.reset_device(0)
acl.finalize()
