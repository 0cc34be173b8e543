"""Reference 7.3: host<->device copies, synchronous and asynchronous, with memory-info queries.

Follows Ascend/samples memcpy_host_device_async_python: pinned host memory set with
memset_async, DVPP device memory, copies both ways, free_host while another copy is in flight
(legal: it frees the source of a finished copy, not the target), and a context destroyed
without destroying its two streams (the sample's leak).
"""

import sys

import acl
import numpy as np

ACL_SUCCESS = 0
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_DDR_MEM = 0
ACL_HBM_MEM = 1
DEVICE_ID = 0
N = 4096
LOOPS = 2


def check(name, ret):
    if ret != ACL_SUCCESS:
        print(f"{name} failed: {ret}", file=sys.stderr)
        sys.exit(3)


def expect(name, data, value):
    arr = np.frombuffer(data, dtype=np.int8)
    if arr.shape != (N,) or not np.all(arr == value):
        print(f"{name}: wrong data {arr[:8]}", file=sys.stderr)
        sys.exit(4)


def main():
    check("init", acl.init())
    check("set_device", acl.rt.set_device(DEVICE_ID))
    ctx, ret = acl.rt.create_context(DEVICE_ID)
    check("create_context", ret)
    stream, ret = acl.rt.create_stream()  # STREAM_A
    check("create_stream", ret)
    _stream_b, ret = acl.rt.create_stream()  # STREAM_B, never used (as in the sample)
    check("create_stream", ret)
    free_ddr, total_ddr, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
    check("get_mem_info", ret)
    free_hbm, total_hbm, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
    check("get_mem_info", ret)
    if free_hbm > total_hbm or free_ddr > total_ddr:
        print("get_mem_info: free is larger than total", file=sys.stderr)
        sys.exit(5)
    dev_ptrs = []
    for i in range(LOOPS):
        value = 7 + i
        h, ret = acl.rt.malloc_host(N)
        check("malloc_host", ret)
        check("memset_async", acl.rt.memset_async(h, N, value, N, stream))
        d, ret = acl.media.dvpp_malloc(N)
        check("dvpp_malloc", ret)
        dev_ptrs.append(d)
        check("synchronize_stream", acl.rt.synchronize_stream(stream))
        out = np.ones(N, dtype=np.byte).tobytes()
        check("memcpy H2H", acl.rt.memcpy(acl.util.bytes_to_ptr(out), N, h, N,
                                          ACL_MEMCPY_HOST_TO_HOST))
        expect("pinned memory after memset_async", out, value)
        check("memcpy_async H2D", acl.rt.memcpy_async(d, N, h, N, ACL_MEMCPY_HOST_TO_DEVICE,
                                                      stream))
        h2, ret = acl.rt.malloc_host(N)
        check("malloc_host", ret)
        free_now, total_now, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
        check("get_mem_info", ret)
        if total_now != total_ddr or free_now >= free_ddr:
            print("get_mem_info did not count the DVPP memory", file=sys.stderr)
            sys.exit(5)
        check("synchronize_stream", acl.rt.synchronize_stream(stream))
        back = np.zeros(N, dtype=np.byte).tobytes()
        check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(back), N, d, N,
                                          ACL_MEMCPY_DEVICE_TO_HOST))
        expect("device memory after H2D", back, value)
        check("memcpy_async D2H", acl.rt.memcpy_async(h2, N, d, N, ACL_MEMCPY_DEVICE_TO_HOST,
                                                      stream))
        check("free_host", acl.rt.free_host(h))  # h is not the target of the D2H in flight
        check("synchronize_stream", acl.rt.synchronize_stream(stream))
        result = acl.util.ptr_to_bytes(h2, N)
        expect("pinned memory after D2H", result, value)
        check("free_host", acl.rt.free_host(h2))
    for d in dev_ptrs:
        check("dvpp_free", acl.media.dvpp_free(d))
    check("destroy_context", acl.rt.destroy_context(ctx))  # streams never destroyed
    check("reset_device", acl.rt.reset_device(DEVICE_ID))
    check("finalize", acl.finalize())
    print("memcpy_async_73: ok")


if __name__ == "__main__":
    main()
