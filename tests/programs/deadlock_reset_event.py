"""Hangs on real hardware: s2 waits for an event that s3 already reset (C-doc 07's figure).

The record completes, s3 resets the event, then s2 waits on it: no record will ever set the
event again, so synchronize_stream(s2) never returns.
"""

import acl

ACL_EVENT_SYNC = 0x1

acl.init()
acl.rt.set_device(0)
event, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
s1, ret = acl.rt.create_stream()
s2, ret = acl.rt.create_stream()
s3, ret = acl.rt.create_stream()
acl.rt.record_event(event, s1)
acl.rt.synchronize_stream(s1)
acl.rt.reset_event(event, s3)
acl.rt.synchronize_stream(s3)
acl.rt.stream_wait_event(s2, event)
acl.rt.synchronize_stream(s2)  # DEADLOCK
print("unreachable")
