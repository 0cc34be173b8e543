"""Reference 7.4: single-operator Add with acl.op.execute_v2, following the public sample.

argv: OP_MODEL_DIR. Like the sample it never frees its malloc_host output buffer.
"""

import sys

import acl
import numpy as np

ACL_INT32 = 3
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


check("init", acl.init())
check("set_device", acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check("create_context", ret)
stream, ret = acl.rt.create_stream()
check("create_stream", ret)
op_attr = acl.op.create_attr()
check("set_model_dir", acl.op.set_model_dir(sys.argv[1]))

a = np.arange(128, dtype=np.int32).reshape(8, 16)
b = (np.arange(128, dtype=np.int32) * 3 - 50).reshape(8, 16)
descs, buffers, device_ptrs = [], [], []
for data in (a, b):
    desc = acl.create_tensor_desc(ACL_INT32, [8, 16], ACL_FORMAT_ND)
    size = acl.get_tensor_desc_size(desc)
    dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
    check("malloc", ret)
    check("memcpy", acl.rt.memcpy(dev, size, acl.util.bytes_to_ptr(data.tobytes()), size,
                                  ACL_MEMCPY_HOST_TO_DEVICE))
    descs.append(desc)
    buffers.append(acl.create_data_buffer(dev, size))
    device_ptrs.append(dev)

out_desc = acl.create_tensor_desc(ACL_INT32, [8, 16], ACL_FORMAT_ND)
out_size = acl.get_tensor_desc_size(out_desc)
out_dev, ret = acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY)
check("malloc", ret)
out_buffer = acl.create_data_buffer(out_dev, out_size)
host = acl.rt.malloc_host(out_size)[0]  # never freed, as in the sample

check("execute_v2", acl.op.execute_v2("Add", descs, buffers, [out_desc], [out_buffer], op_attr,
                                      stream))
check("synchronize_stream", acl.rt.synchronize_stream(stream))
check("memcpy D2H", acl.rt.memcpy(host, out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST))
result = np.frombuffer(acl.util.ptr_to_bytes(host, out_size), dtype=np.int32).reshape(8, 16)
assert (result == a + b).all(), "Add gave a wrong result"

descs.append(out_desc)
buffers.append(out_buffer)
device_ptrs.append(out_dev)
for desc, buf, dev in zip(descs, buffers, device_ptrs, strict=True):
    acl.destroy_data_buffer(buf)
    check("free", acl.rt.free(dev))
    acl.destroy_tensor_desc(desc)
acl.op.destroy_attr(op_attr)
check("destroy_stream", acl.rt.destroy_stream(stream))
check("destroy_context", acl.rt.destroy_context(context))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
print("add ok")
