"""The Python twin of worker_no_context.cpp."""

import threading

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0

acl.init()
print(f"set_device(-1) {acl.rt.set_device(-1)}")
acl.rt.set_device(0)
context, _ = acl.rt.create_context(0)


def lost():
    _, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_HUGE_FIRST)
    print(f"worker without context {ret}")


def good():
    acl.rt.set_context(context)
    p, ret = acl.rt.malloc(256, ACL_MEM_MALLOC_HUGE_FIRST)
    print(f"worker with context {ret}")
    acl.rt.free(p)


for fn in (lost, good):
    t = threading.Thread(target=fn)
    t.start()
    t.join()
acl.rt.destroy_context(context)
acl.rt.reset_device(0)
acl.finalize()
