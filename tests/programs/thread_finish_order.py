"""Two threads do the same ACL work; which finishes first decides the printed order (a
result that depends on the schedule: what acl-lab run --explore reports)."""

import threading

import acl

assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.get_context()
order = []


def work(name):
    assert acl.rt.set_context(ctx) == 0
    for _ in range(3):
        acl.rt.get_run_mode()
    order.append(name)


threads = [threading.Thread(target=work, args=(n,), name=n) for n in "ab"]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("order", "".join(order))
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
