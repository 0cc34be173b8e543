"""Hangs on real hardware: a blocking callback whose report thread is the waiting thread.

The main thread subscribes itself to the stream, launches an ACL_CALLBACK_BLOCK callback and
then synchronizes the stream: only its own process_report could run the callback.
"""

import threading

import acl

ACL_CALLBACK_BLOCK = 1


def on_done(user_data):
    print("callback", user_data)


acl.init()
acl.rt.set_device(0)
stream, ret = acl.rt.create_stream()
acl.rt.subscribe_report(threading.get_ident(), stream)
acl.rt.launch_callback(on_done, "x", ACL_CALLBACK_BLOCK, stream)
acl.rt.synchronize_stream(stream)  # DEADLOCK
print("unreachable")
