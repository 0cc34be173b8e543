"""Releases everything in ``__del__`` of module-level objects, the way the public samples and
their helper library do: nothing is released before the program's globals are collected."""

import _end_of_run_helper as helper
import acl

ACL_MEM_MALLOC_NORMAL_ONLY = 2


def report(name, ret):
    """One line per release call, checked by the test."""
    print(f"RET {name} {ret}", flush=True)


class Buffer:
    """Device memory registered with the helper's registry, freed once."""

    def __init__(self, size):
        self.ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0, ret
        helper.REGISTRY.add(self)

    def release(self):
        if self.ptr:
            report("acl.rt.free", acl.rt.free(self.ptr))
            self.ptr = 0

    def __del__(self):
        self.release()


class Resource:
    """Device, context and stream; ``__del__`` releases the registry first, then itself."""

    def __init__(self):
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        self.context, ret = acl.rt.create_context(0)
        assert ret == 0, ret
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0, ret
        self.host, ret = acl.rt.malloc_host(256)
        assert ret == 0, ret

    def __del__(self):
        helper.REGISTRY.release_all()
        report("acl.rt.free_host", acl.rt.free_host(self.host))
        report("acl.rt.destroy_stream", acl.rt.destroy_stream(self.stream))
        report("acl.rt.destroy_context", acl.rt.destroy_context(self.context))
        report("acl.rt.reset_device", acl.rt.reset_device(0))
        report("acl.finalize", acl.finalize())


RESOURCE = Resource()
BUFFER = Buffer(4096)
print("main done", flush=True)
