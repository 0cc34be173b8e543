"""Leaves a daemon thread running that reads the program's globals; a module-level object
releases ACL in ``__del__``. The thread must not see its globals cleared under it."""

import threading
import time

import acl

TICK = 0.005
running = True


def spin():
    while running:
        time.sleep(TICK)


class Resource:
    """The device, reset in ``__del__``."""

    def __init__(self):
        assert acl.init() == 0 and acl.rt.set_device(0) == 0

    def __del__(self):
        print(f"RET acl.rt.reset_device {acl.rt.reset_device(0)}", flush=True)


RESOURCE = Resource()
threading.Thread(target=spin, daemon=True).start()
print("main done", flush=True)
