"""A single-threaded program that exercises most of the runtime, for determinism checks.

Streams, an event record/wait pair, async copies H2D / D2D / D2H from malloc_host memory and
from bytes_to_ptr buffers, memset (sync and async), stream and device syncs, and one
deliberate error (a double free). ``main()`` returns the data it read back; run as a script
it prints that data as JSON on one line after "RESULT=".
"""

import json

import acl
import numpy as np

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
N = 4096


def main():
    rets = []
    rets.append(acl.init())
    rets.append(acl.rt.set_device(0))
    ctx, ret = acl.rt.create_context(0)
    rets.append(ret)
    s1, ret = acl.rt.create_stream()
    rets.append(ret)
    s2, ret = acl.rt.create_stream()
    rets.append(ret)
    event, ret = acl.rt.create_event()
    rets.append(ret)

    pinned, ret = acl.rt.malloc_host(N)
    rets.append(ret)
    rets.append(acl.rt.memset(pinned, N, 3, N))
    pageable = (np.arange(N, dtype=np.uint32) * 2654435761 % 251).astype(np.uint8).tobytes()
    page_ptr = acl.util.bytes_to_ptr(pageable)
    d1, ret = acl.rt.malloc(N, ACL_MEM_MALLOC_HUGE_FIRST)
    rets.append(ret)
    d2, ret = acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)
    rets.append(ret)
    d3, ret = acl.rt.malloc(2 * N, ACL_MEM_MALLOC_NORMAL_ONLY)
    rets.append(ret)

    rets.append(acl.rt.memcpy_async(d1, N, pinned, N, ACL_MEMCPY_HOST_TO_DEVICE, s1))
    rets.append(acl.rt.memcpy_async(d2, N, page_ptr, N, ACL_MEMCPY_HOST_TO_DEVICE, s1))
    rets.append(acl.rt.memset_async(d3, 2 * N, 9, 2 * N, s2))
    rets.append(acl.rt.record_event(event, s1))
    rets.append(acl.rt.stream_wait_event(s2, event))
    rets.append(acl.rt.memcpy_async(d3, 2 * N, d1, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s2))
    out_pinned, ret = acl.rt.malloc_host(2 * N)
    rets.append(ret)
    rets.append(acl.rt.memcpy_async(out_pinned, 2 * N, d3, 2 * N, ACL_MEMCPY_DEVICE_TO_HOST,
                                    s2))
    out_page = bytes(N)
    rets.append(acl.rt.memcpy_async(acl.util.bytes_to_ptr(out_page), N, d2, N,
                                    ACL_MEMCPY_DEVICE_TO_HOST, s1))
    rets.append(acl.rt.synchronize_stream(s2))
    rets.append(acl.rt.synchronize_device())
    done, ret = acl.rt.query_event_status(event)
    rets.append(ret)

    back = bytes(2 * N)
    rets.append(acl.rt.memcpy(acl.util.bytes_to_ptr(back), 2 * N, out_pinned, 2 * N,
                              ACL_MEMCPY_HOST_TO_HOST))
    rets.append(acl.rt.free(d1))
    double_free = acl.rt.free(d1)  # the deliberate error: 107000
    free_before, total, ret = acl.rt.get_mem_info(0)
    rets.append(ret)
    for p in (d2, d3):
        rets.append(acl.rt.free(p))
    free_after, _, ret = acl.rt.get_mem_info(0)
    rets.append(ret)
    rets.append(acl.rt.free_host(pinned))
    rets.append(acl.rt.free_host(out_pinned))
    rets.append(acl.rt.destroy_event(event))
    rets.append(acl.rt.destroy_stream(s1))
    rets.append(acl.rt.destroy_stream(s2))
    rets.append(acl.rt.destroy_context(ctx))
    rets.append(acl.rt.reset_device(0))
    rets.append(acl.finalize())
    return {
        "rets": rets,
        "double_free": double_free,
        "event_status": done,
        "freed_bytes": free_after - free_before,
        "total": total,
        "d2h_pageable": np.frombuffer(out_page, dtype=np.uint8).tolist(),
        "pageable_round_trip": out_page == pageable,
        "d2h_pinned_sum": int(np.frombuffer(back, dtype=np.uint8).astype(np.int64).sum()),
        "d2h_pinned_head": np.frombuffer(back, dtype=np.uint8)[:16].tolist(),
        "d2h_pinned_tail": np.frombuffer(back, dtype=np.uint8)[-16:].tolist(),
    }


if __name__ == "__main__":
    print("RESULT=" + json.dumps(main()))
