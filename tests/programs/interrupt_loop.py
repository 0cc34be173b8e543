"""Prints READY, then makes ACL calls in a loop until it is interrupted (SIGINT)."""

import acl

ACL_MEM_MALLOC_NORMAL_ONLY = 2

acl.init()
acl.rt.set_device(0)
context, _ = acl.rt.create_context(0)
stream, _ = acl.rt.create_stream()
print("READY", flush=True)
while True:
    ptr, _ = acl.rt.malloc(1024, ACL_MEM_MALLOC_NORMAL_ONLY)
    host, _ = acl.rt.malloc_host(1024)
    acl.rt.memset_async(ptr, 1024, 0, 1024, stream)
    acl.rt.synchronize_stream(stream)
    acl.rt.free(ptr)
    acl.rt.free_host(host)
