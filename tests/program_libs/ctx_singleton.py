"""A wrapper library in the style of the public samples' helpers: one module-level
``Context`` made on first use, whose ``__del__`` destroys the context, resets the device and
finalizes ACL. It lives outside the program's folder (the program puts this folder on
``sys.path``), so only the interpreter's exit collects it."""

import acl


class Context:
    """ACL initialised, device 0 set, one context: released when collected."""

    def __init__(self):
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        self.ctx, ret = acl.rt.create_context(0)
        assert ret == 0

    def __del__(self):
        print("RET acl.rt.destroy_context", acl.rt.destroy_context(self.ctx))
        print("RET acl.rt.reset_device", acl.rt.reset_device(0))
        print("RET acl.finalize", acl.finalize())


_CONTEXT = None


def context():
    """The one Context, made on first use."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = Context()
    return _CONTEXT
