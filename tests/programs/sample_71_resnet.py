"""Reference 7.1: synchronous ResNet-50 classification, following the public sample's flow.

argv: MODEL.om INPUT.npy OUTPUT.npy. Like the sample it never frees its device I/O buffers
and never destroys the stream it created (the two mistakes the findings must name).
"""

import sys

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_FLOAT32 = 11


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


model_path, input_path, output_path = sys.argv[1:4]
check("init", acl.init())
check("set_device", acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check("create_context", ret)
stream, ret = acl.rt.create_stream()  # created but never used, never destroyed
check("create_stream", ret)

model_id, ret = acl.mdl.load_from_file(model_path)
check("load_from_file", ret)
model_desc = acl.mdl.create_desc()
check("get_desc", acl.mdl.get_desc(model_desc, model_id))


def gen_dataset(kind):
    dataset = acl.mdl.create_dataset()
    n = acl.mdl.get_num_inputs(model_desc) if kind == "in" else acl.mdl.get_num_outputs(
        model_desc)
    for i in range(n):
        if kind == "in":
            size = acl.mdl.get_input_size_by_index(model_desc, i)
        else:
            size = acl.mdl.get_output_size_by_index(model_desc, i)
        buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)  # never freed
        check("malloc", ret)
        data_buffer = acl.create_data_buffer(buf, size)
        _, ret = acl.mdl.add_dataset_buffer(dataset, data_buffer)
        check("add_dataset_buffer", ret)
    return dataset


input_dataset = gen_dataset("in")
output_dataset = gen_dataset("out")

image = np.load(input_path).astype(np.float32)
bytes_data = image.tobytes()
ptr = acl.util.bytes_to_ptr(bytes_data)
data_buffer = acl.mdl.get_dataset_buffer(input_dataset, 0)
addr = acl.get_data_buffer_addr(data_buffer)
size = acl.get_data_buffer_size(data_buffer)
check("memcpy H2D", acl.rt.memcpy(addr, size, ptr, size, ACL_MEMCPY_HOST_TO_DEVICE))

check("execute", acl.mdl.execute(model_id, input_dataset, output_dataset))

data_buffer = acl.mdl.get_dataset_buffer(output_dataset, 0)
addr = acl.get_data_buffer_addr(data_buffer)
size = acl.get_data_buffer_size(data_buffer)
host, ret = acl.rt.malloc_host(size)
check("malloc_host", ret)
check("memcpy D2H", acl.rt.memcpy(host, size, addr, size, ACL_MEMCPY_DEVICE_TO_HOST))
dims, ret = acl.mdl.get_cur_output_dims(model_desc, 0)
check("get_cur_output_dims", ret)
out = np.frombuffer(acl.util.ptr_to_bytes(host, size), dtype=np.float32).reshape(dims["dims"])
np.save(output_path, out)
acl.rt.free_host(host)

for dataset in (input_dataset, output_dataset):
    for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
        acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
    check("destroy_dataset", acl.mdl.destroy_dataset(dataset))
check("unload", acl.mdl.unload(model_id))
check("destroy_desc", acl.mdl.destroy_desc(model_desc))
check("destroy_context", acl.rt.destroy_context(context))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
print("top5", np.argsort(out.ravel())[::-1][:5].tolist())
