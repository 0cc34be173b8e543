"""Releases everything from ``atexit`` handlers (last registered runs first), and registers
one handler it unregisters again (which must not run)."""

import atexit

import acl

ACL_MEM_MALLOC_NORMAL_ONLY = 2


def report(name, ret):
    """One line per release call, checked by the test."""
    print(f"RET {name} {ret}", flush=True)


assert acl.init() == 0
assert acl.rt.set_device(0) == 0
context, _ = acl.rt.create_context(0)
stream, _ = acl.rt.create_stream()
ptr, _ = acl.rt.malloc(1024, ACL_MEM_MALLOC_NORMAL_ONLY)


def release_device():
    """Registered first, so it runs last: the device goes after its objects."""
    report("acl.rt.destroy_context", acl.rt.destroy_context(context))
    report("acl.rt.reset_device", acl.rt.reset_device(0))
    report("acl.finalize", acl.finalize())


def release_objects(what):
    """Registered last (with an argument), so it runs first."""
    report("acl.rt.free", acl.rt.free(ptr))
    report("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    print(f"released {what}", flush=True)


def never():
    print("UNREGISTERED HANDLER RAN", flush=True)


atexit.register(release_device)
atexit.register(never)
atexit.register(release_objects, "objects")
atexit.unregister(never)
print("main done", flush=True)
