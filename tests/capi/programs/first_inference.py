"""The Python twin of first_inference.cpp (the same calls in the same order)."""

import sys

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


def check(ret):
    if ret != 0:
        print("failed", ret)
        sys.exit(1)


check(acl.init())
check(acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check(ret)
stream, ret = acl.rt.create_stream()
check(ret)
model_id, ret = acl.mdl.load_from_file(sys.argv[1])
check(ret)
desc = acl.mdl.create_desc()
check(acl.mdl.get_desc(desc, model_id))
in_size = acl.mdl.get_input_size_by_index(desc, 0)
out_size = acl.mdl.get_output_size_by_index(desc, 0)
x = np.array([float(v) for v in sys.argv[2:6]], dtype=np.float32)
in_dev, ret = acl.rt.malloc(in_size, ACL_MEM_MALLOC_HUGE_FIRST)
check(ret)
out_dev, ret = acl.rt.malloc(out_size, ACL_MEM_MALLOC_HUGE_FIRST)
check(ret)
check(acl.rt.memcpy(in_dev, in_size, x.ctypes.data, in_size, ACL_MEMCPY_HOST_TO_DEVICE))
inp = acl.mdl.create_dataset()
in_buf = acl.create_data_buffer(in_dev, in_size)
check(acl.mdl.add_dataset_buffer(inp, in_buf)[1])
out = acl.mdl.create_dataset()
out_buf = acl.create_data_buffer(out_dev, out_size)
check(acl.mdl.add_dataset_buffer(out, out_buf)[1])
check(acl.mdl.execute(model_id, inp, out))
y = np.zeros(out_size // 4, dtype=np.float32)
check(acl.rt.memcpy(y.ctypes.data, out_size, out_dev, out_size, ACL_MEMCPY_DEVICE_TO_HOST))
for v in y:
    print(f"{v:.6f}")
check(acl.destroy_data_buffer(in_buf))
check(acl.destroy_data_buffer(out_buf))
check(acl.mdl.destroy_dataset(inp))
check(acl.mdl.destroy_dataset(out))
check(acl.rt.free(in_dev))
check(acl.rt.free(out_dev))
check(acl.mdl.destroy_desc(desc))
check(acl.mdl.unload(model_id))
check(acl.rt.destroy_stream(stream))
check(acl.rt.destroy_context(context))
check(acl.rt.reset_device(0))
check(acl.finalize())
