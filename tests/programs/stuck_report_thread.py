"""Leaves a non-daemon thread blocked forever in process_report(-1) and returns from main.

On real hardware the process would never exit; `acl-lab run` must not hang. With
`--stubborn` the thread swallows every error and waits again, forever.
"""

import sys
import threading

import acl

stubborn = "--stubborn" in sys.argv[1:]
ready = threading.Event()


def report_loop():
    ready.wait()
    while True:
        try:
            acl.rt.process_report(-1)
        except BaseException:
            if not stubborn:
                raise


acl.init()
acl.rt.set_device(0)
stream, ret = acl.rt.create_stream()
worker = threading.Thread(target=report_loop, name="report-thread")
worker.start()
acl.rt.subscribe_report(worker.ident, stream)
ready.set()
print("main done")
