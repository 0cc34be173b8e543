"""Reference 7.5: two streams ordered by an event (the pyACL dev-guide flow), cleaned up fully.

Stream s1 fills a device buffer; s2 waits for the event recorded after the fill and copies the
buffer back to pinned host memory. The program checks the copied data and releases every
resource in the documented order.
"""

import sys

import acl
import numpy as np

ACL_SUCCESS = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
DEVICE_ID = 0
N = 1 << 16


def check(name, ret):
    if ret != ACL_SUCCESS:
        print(f"{name} failed: {ret}", file=sys.stderr)
        sys.exit(3)


def main():
    check("init", acl.init())
    check("set_device", acl.rt.set_device(DEVICE_ID))
    ctx, ret = acl.rt.create_context(DEVICE_ID)
    check("create_context", ret)
    event, ret = acl.rt.create_event()
    check("create_event", ret)
    s1, ret = acl.rt.create_stream()
    check("create_stream", ret)
    s2, ret = acl.rt.create_stream()
    check("create_stream", ret)
    src = np.arange(N, dtype=np.uint8)
    host_in, ret = acl.rt.malloc_host(N)
    check("malloc_host", ret)
    check("memcpy H2H", acl.rt.memcpy(host_in, N, acl.util.bytes_to_ptr(src.tobytes()), N, 0))
    dev, ret = acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)
    check("malloc", ret)
    host_out, ret = acl.rt.malloc_host(N)
    check("malloc_host", ret)
    check("memcpy_async H2D", acl.rt.memcpy_async(dev, N, host_in, N,
                                                  ACL_MEMCPY_HOST_TO_DEVICE, s1))
    check("record_event", acl.rt.record_event(event, s1))
    check("stream_wait_event", acl.rt.stream_wait_event(s2, event))
    check("memcpy_async D2H", acl.rt.memcpy_async(host_out, N, dev, N,
                                                  ACL_MEMCPY_DEVICE_TO_HOST, s2))
    check("synchronize_stream", acl.rt.synchronize_stream(s1))
    check("synchronize_stream", acl.rt.synchronize_stream(s2))
    got = np.frombuffer(acl.util.ptr_to_bytes(host_out, N), dtype=np.uint8)
    if not np.array_equal(got, src):
        print("stream s2 read the buffer before s1 filled it", file=sys.stderr)
        sys.exit(4)
    check("free", acl.rt.free(dev))
    check("free_host", acl.rt.free_host(host_in))
    check("free_host", acl.rt.free_host(host_out))
    check("destroy_stream", acl.rt.destroy_stream(s2))
    check("destroy_stream", acl.rt.destroy_stream(s1))
    check("destroy_event", acl.rt.destroy_event(event))
    check("destroy_context", acl.rt.destroy_context(ctx))
    check("reset_device", acl.rt.reset_device(DEVICE_ID))
    check("finalize", acl.finalize())
    print("two_stream_event_75: ok")


if __name__ == "__main__":
    main()
