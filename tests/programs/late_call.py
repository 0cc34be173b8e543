"""Calls ACL from ``__del__`` at interpreter shutdown, after the run is over.

The object is kept by a module that is not the program's (made here, in ``sys.modules``),
so it outlives the program and ``acl-lab run``'s clean-up; the interpreter releases it when
it drops its modules at exit (``sys.meta_path`` is None by then). ``late_call.py plain`` (run
with plain ``python`` after ``acl_lab.install()``): its ``__del__`` makes the first ACL call
of the process. Without an argument (under ``acl-lab run``): the object made ACL calls during
the run, and the late ones come after the run's session finished.
"""

import sys
import types

PLAIN = sys.argv[1:] == ["plain"]
if PLAIN:
    import acl_lab

    acl_lab.install()

import acl  # noqa: E402


class Late:
    """Holds a stream (under acl-lab run) and releases it, resets and finalizes in __del__."""

    def __init__(self, module, touch):
        self.acl = module  # its own reference: the program's globals are gone by then
        self.stream = 0
        if touch:
            module.init()
            module.rt.set_device(0)
            self.stream, _ = module.rt.create_stream()

    def __del__(self):
        a = self.acl
        print(f"RET acl.rt.destroy_stream {a.rt.destroy_stream(self.stream)}", flush=True)
        print(f"RET acl.rt.reset_device {a.rt.reset_device(0)}", flush=True)
        print(f"RET acl.finalize {a.finalize()}", flush=True)


holder = types.ModuleType("_late_call_holder")
holder.late = Late(acl, touch=not PLAIN)
sys.modules[holder.__name__] = holder
del holder
print("main done", flush=True)
