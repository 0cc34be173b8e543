"""A module-level object hands its own bound method to launch_callback and releases
everything in ``__del__``: once the callback has run, nothing may keep the object alive."""

import threading

import acl


def report(name, ret):
    """One line per release call, checked by the test."""
    print(f"RET {name} {ret}", flush=True)


class Worker:
    """Device, context, a stream with a report subscription and one callback."""

    def __init__(self):
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        self.context, _ = acl.rt.create_context(0)
        self.stream, _ = acl.rt.create_stream()
        self.tid = threading.get_ident()
        assert acl.rt.subscribe_report(self.tid, self.stream) == 0
        self.done = False
        assert acl.rt.launch_callback(self.on_done, [1, 2, 3], 0, self.stream) == 0
        assert acl.rt.process_report(1000) == 0
        assert self.done

    def on_done(self, data):
        self.done = data == [1, 2, 3]

    def __del__(self):
        report("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(self.tid, self.stream))
        report("acl.rt.destroy_stream", acl.rt.destroy_stream(self.stream))
        report("acl.rt.destroy_context", acl.rt.destroy_context(self.context))
        report("acl.rt.reset_device", acl.rt.reset_device(0))
        report("acl.finalize", acl.finalize())


WORKER = Worker()
print("main done", flush=True)
