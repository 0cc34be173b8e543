"""Two threads that join each other, and the main thread joining one of them: a deadlock in
Python's own waits (the real process would hang at the main thread's join)."""

import threading

import acl

assert acl.init() == 0
threads = {}


def body(other):
    acl.rt.get_run_mode()
    threads[other].join()


a = threading.Thread(target=body, args=("b",), name="a")
b = threading.Thread(target=body, args=("a",), name="b")
threads.update(a=a, b=b)
a.start()
b.start()
a.join()  # MAIN-JOIN
acl.finalize()
