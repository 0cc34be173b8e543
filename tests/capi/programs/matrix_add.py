"""The Python twin of matrix_add.cpp."""

import sys

import acl
import numpy as np

ACL_FLOAT = 0
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

if acl.init() != 0:
    sys.exit(1)
acl.rt.set_device(0)
context, _ = acl.rt.create_context(0)
stream, _ = acl.rt.create_stream()
attr = acl.op.create_attr()
if acl.op.set_model_dir(sys.argv[1]) != 0:
    sys.exit(1)
a = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)
b = np.array([10, 20, 30, 40, 50, 60], dtype=np.float32)
in_desc, in_buf, in_dev = [], [], []
for host in (a, b):
    desc = acl.create_tensor_desc(ACL_FLOAT, [2, 3], ACL_FORMAT_ND)
    size = acl.get_tensor_desc_size(desc)
    dev, _ = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
    acl.rt.memcpy(dev, size, host.ctypes.data, size, ACL_MEMCPY_HOST_TO_DEVICE)
    in_desc.append(desc)
    in_dev.append(dev)
    in_buf.append(acl.create_data_buffer(dev, size))
out_desc = acl.create_tensor_desc(ACL_FLOAT, [2, 3], ACL_FORMAT_ND)
out_size = acl.get_tensor_desc_size(out_desc)
out_dev, _ = acl.rt.malloc(out_size, ACL_MEM_MALLOC_NORMAL_ONLY)
out_buf = acl.create_data_buffer(out_dev, out_size)
ret = acl.op.execute_v2("Add", in_desc, in_buf, [out_desc], [out_buf], attr, stream)
if ret != 0:
    print(f"aclopExecuteV2 failed: {ret}")
    sys.exit(1)
acl.rt.synchronize_stream(stream)
c = np.zeros(6, dtype=np.float32)
acl.rt.memcpy(c.ctypes.data, c.nbytes, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST)
for v in c:
    print(f"{v:g}")
for i in range(2):
    acl.destroy_data_buffer(in_buf[i])
    acl.rt.free(in_dev[i])
    acl.destroy_tensor_desc(in_desc[i])
acl.destroy_data_buffer(out_buf)
acl.rt.free(out_dev)
acl.destroy_tensor_desc(out_desc)
acl.op.destroy_attr(attr)
acl.rt.destroy_stream(stream)
acl.rt.destroy_context(context)
acl.rt.reset_device(0)
acl.finalize()
