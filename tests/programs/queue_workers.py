"""Three worker threads share one context and take items from a queue.Queue, with a Lock, a
stream sync and time.sleep between ACL calls; prints who got which item. Usage:
queue_workers.py [ITEMS] (default 9). Used by the host-schedule tests and benchmarks."""

import queue
import sys
import threading
import time

import acl

items = int(sys.argv[1]) if len(sys.argv) > 1 else 9
acl.init()
acl.rt.set_device(0)
ctx, _ = acl.rt.get_context()
q, out, lock = queue.Queue(), [], threading.Lock()


def work(k):
    acl.rt.set_context(ctx)
    s, _ = acl.rt.create_stream()
    while (i := q.get()) is not None:
        acl.rt.synchronize_stream(s)
        with lock:
            out.append((k, i))
        time.sleep(0.0001 * (i % 3))
    acl.rt.destroy_stream(s)


ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
for t in ts:
    t.start()
for i in range(items):
    q.put(i)
for _ in ts:
    q.put(None)
for t in ts:
    t.join()
print(out)
acl.rt.reset_device(0)
acl.finalize()
