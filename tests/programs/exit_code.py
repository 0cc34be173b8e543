"""Exits with status 7 after a few calls, leaving the device set (sys.exit must be kept)."""

import sys

import acl

ACL_MEM_MALLOC_NORMAL_ONLY = 2

acl.init()
acl.rt.set_device(0)
ptr, ret = acl.rt.malloc(1024, ACL_MEM_MALLOC_NORMAL_ONLY)
sys.exit(7)
