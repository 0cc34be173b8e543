"""Dies of an uncaught exception after a few calls."""

import acl


class SampleFailure(Exception):
    """The program's own error type."""


acl.init()
acl.rt.set_device(0)
stream, ret = acl.rt.create_stream()
raise SampleFailure(f"model output check failed (ret={ret})")
