"""Reference 7.2: asynchronous inference with host callbacks, following the public sample.

argv: MODEL.om INPUT.npy OUTPUT_PREFIX. A report thread loops on process_report; every
``CALLBACK_INTERVAL`` executions a blocking callback copies the outputs back. Like the sample,
the callback never frees its malloc_host buffer (the mistake the findings must name).
"""

import sys

import acl
import numpy as np

ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_BLOCK = 1
MEM_POOLS = 2
EXECUTIONS = 4
CALLBACK_INTERVAL = 2


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


model_path, input_path, output_prefix = sys.argv[1:4]
image = np.load(input_path).astype(np.float32)
check("init", acl.init())
check("set_device", acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check("create_context", ret)
stream, ret = acl.rt.create_stream()
check("create_stream", ret)
model_id, ret = acl.mdl.load_from_file(model_path)
check("load_from_file", ret)
model_desc = acl.mdl.create_desc()
check("get_desc", acl.mdl.get_desc(model_desc, model_id))

pools = []
for _ in range(MEM_POOLS):
    in_ds = acl.mdl.create_dataset()
    data = image.tobytes()
    size = len(data)
    dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
    check("malloc", ret)
    check("memcpy", acl.rt.memcpy(dev, size, acl.util.bytes_to_ptr(data), size,
                                  ACL_MEMCPY_HOST_TO_DEVICE))
    _, ret = acl.mdl.add_dataset_buffer(in_ds, acl.create_data_buffer(dev, size))
    check("add_dataset_buffer", ret)
    out_ds = acl.mdl.create_dataset()
    for i in range(acl.mdl.get_num_outputs(model_desc)):
        osize = acl.mdl.get_output_size_by_index(model_desc, i)
        odev, ret = acl.rt.malloc(osize, ACL_MEM_MALLOC_NORMAL_ONLY)
        check("malloc", ret)
        _, ret = acl.mdl.add_dataset_buffer(out_ds, acl.create_data_buffer(odev, osize))
        check("add_dataset_buffer", ret)
    pools.append((in_ds, out_ds))

results = []
state = {"exit": False}


def process_callback(args):
    ctx, timeout = args
    acl.rt.set_context(ctx)
    while True:
        acl.rt.process_report(timeout)
        if state["exit"]:
            break


def callback_func(datasets):
    for _, out_ds in datasets:
        buf = acl.mdl.get_dataset_buffer(out_ds, 0)
        addr = acl.get_data_buffer_addr(buf)
        size = acl.get_data_buffer_size_v2(buf)
        host, ret = acl.rt.malloc_host(size)  # never freed, as in the sample
        check("malloc_host", ret)
        check("memcpy D2H", acl.rt.memcpy(host, size, addr, size, ACL_MEMCPY_DEVICE_TO_HOST))
        dims, ret = acl.mdl.get_cur_output_dims(model_desc, 0)
        check("get_cur_output_dims", ret)
        out = np.frombuffer(acl.util.ptr_to_bytes(host, size), np.float32).reshape(dims["dims"])
        results.append(out.copy())


tid, ret = acl.util.start_thread(process_callback, [context, 50])
check("start_thread", ret)
check("subscribe_report", acl.rt.subscribe_report(tid, stream))
done = []
for n in range(EXECUTIONS):
    in_ds, out_ds = pools[n % MEM_POOLS]
    check("execute_async", acl.mdl.execute_async(model_id, in_ds, out_ds, stream))
    done.append((in_ds, out_ds))
    if (n + 1) % CALLBACK_INTERVAL == 0:
        check("launch_callback", acl.rt.launch_callback(callback_func, done, ACL_CALLBACK_BLOCK,
                                                        stream))
        done = []
check("synchronize_stream", acl.rt.synchronize_stream(stream))
check("unsubscribe_report", acl.rt.unsubscribe_report(tid, stream))
state["exit"] = True
check("stop_thread", acl.util.stop_thread(tid))

check("unload", acl.mdl.unload(model_id))
check("destroy_desc", acl.mdl.destroy_desc(model_desc))
for in_ds, out_ds in pools:
    for ds in (in_ds, out_ds):
        for i in range(acl.mdl.get_dataset_num_buffers(ds)):
            buf = acl.mdl.get_dataset_buffer(ds, i)
            check("free", acl.rt.free(acl.get_data_buffer_addr(buf)))
            acl.destroy_data_buffer(buf)
        check("destroy_dataset", acl.mdl.destroy_dataset(ds))
check("destroy_stream", acl.rt.destroy_stream(stream))
check("destroy_context", acl.rt.destroy_context(context))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
np.save(output_prefix + ".npy", np.stack(results))
print("callbacks", len(results))
