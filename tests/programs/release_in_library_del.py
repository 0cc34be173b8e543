"""A program whose ACL set-up lives in a wrapper library's module-level singleton (outside
this folder, on sys.path): its __del__ runs at the interpreter's exit and must find ACL
still there."""

import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                             "program_libs"))

import acl
import ctx_singleton

ctx_singleton.context()
ptr, ret = acl.rt.malloc(1024, 2)
assert ret == 0
print("RET acl.rt.free", acl.rt.free(ptr))
