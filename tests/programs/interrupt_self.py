"""Raises KeyboardInterrupt itself, as a Ctrl-C would land, at the point named by argv[1]:
``main`` (the program's own code between calls), ``callback`` (inside a host callback run by
process_report) or ``atexit`` (an atexit handler). Leaves its objects open."""

import atexit
import sys
import threading

import acl

ACL_MEM_MALLOC_NORMAL_ONLY = 2
where = sys.argv[1]

acl.init()
acl.rt.set_device(0)
context, _ = acl.rt.create_context(0)
stream, _ = acl.rt.create_stream()
ptr, _ = acl.rt.malloc(1024, ACL_MEM_MALLOC_NORMAL_ONLY)


def interrupt(_data=None):
    raise KeyboardInterrupt  # INTERRUPT


if where == "main":
    for _ in range(3):
        acl.rt.synchronize_stream(stream)
    interrupt()
elif where == "callback":
    acl.rt.subscribe_report(threading.get_ident(), stream)
    acl.rt.launch_callback(interrupt, None, 0, stream)
    acl.rt.process_report(1000)
elif where == "atexit":
    atexit.register(print, "the handler after the interrupted one ran", flush=True)
    atexit.register(interrupt)
print("unreachable" if where != "atexit" else "main done", flush=True)
