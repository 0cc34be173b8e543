"""Classify 11 items in batches of 4 with a dynamic-batch model through litekit, the way the
samples do: the whole max-batch output is copied back every time and the last batch is
partial (3 rows at gear 4). A callback thread records each finished batch; the run is
profiled with acl.prof. Usage: classify_batches.py MODEL PROF_DIR. Prints one class per item
and the callback tags; the items go to PROF_DIR/items.npy for the test to check the classes."""

import sys

import acl
import litekit
import numpy as np

ITEMS, BATCH, WIDTH, CLASSES = 11, 4, 784, 10


def main(model_path, prof_dir):
    res = litekit.Resource()
    litekit.CONTEXT[0] = res.context
    litekit.check("prof.init", acl.prof.init(prof_dir))
    cfg = acl.prof.create_config([0], 0, 0, 0)
    litekit.check("prof.start", acl.prof.start(cfg))
    callbacks = litekit.CallbackThread(res.stream)
    model = litekit.Model(res, model_path)
    items = np.random.default_rng(7).standard_normal((ITEMS, WIDTH)).astype(np.float32)
    classes = []
    for start in range(0, ITEMS, BATCH):
        batch = items[start:start + BATCH]
        out = model.run(batch, CLASSES)
        callbacks.after(start)
        classes.extend(int(c) for c in out.argmax(axis=1))
    litekit.check("synchronize_stream", acl.rt.synchronize_stream(res.stream))
    callbacks.close()
    litekit.check("prof.stop", acl.prof.stop(cfg))
    litekit.check("destroy_config", acl.prof.destroy_config(cfg))
    litekit.check("prof.finalize", acl.prof.finalize())
    model.release()
    res.release()
    print("classes", " ".join(map(str, classes)))
    print("callbacks", " ".join(map(str, callbacks.done)))
    np.save(prof_dir + "/items.npy", items)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
