"""A decoder-style program whose setup fails after it started its callback thread.

The thread polls acl.rt.process_report(100) in a loop until a flag clears (the way the
public video-decoding samples run their callback thread); the main thread then fails to
open its input and exits with the exception, never clearing the flag. On real hardware the
process exits with the traceback and the native thread dies with it: a timed poll is not a
deadlock, so the run must end with exit code 1 and no deadlock finding.
"""

import sys

import acl

DEVICE = 0


class Decoder:
    """Owns a context and a polling callback thread."""

    def __init__(self) -> None:
        self.polling = True
        self.context, ret = acl.rt.create_context(DEVICE)
        assert ret == 0, ret
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0, ret
        self.thread_id, ret = acl.util.start_thread(self._poll, [100])
        assert ret == 0, ret
        # the decoder channel's callbacks run in this thread
        assert acl.rt.subscribe_report(self.thread_id, self.stream) == 0

    def _poll(self, args: list) -> None:
        timeout = args[0]
        acl.rt.set_context(self.context)
        while self.polling:
            acl.rt.process_report(timeout)

    def open(self, path: str) -> bytes:
        with open(path, "rb") as f:  # the input is missing: raises FileNotFoundError
            return f.read()


acl.init()
acl.rt.set_device(DEVICE)
decoder = Decoder()
stream = decoder.open(sys.argv[1])
print("decoded", len(stream))
