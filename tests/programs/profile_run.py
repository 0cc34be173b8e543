"""A pyACL program in the style of the public samples: it logs with acl.app_log at import
(as acllite does), profiles a model run with acl.prof, and reports per-layer op records of a
subscribed model read from a pipe by a reader thread. Usage: profile_run.py MODEL RESULT_DIR"""

import os
import sys
import threading

import acl

ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_INFO = 1

acl.app_log(ACL_INFO, "profile_run imported")


def check(what, ret):
    if ret != 0:
        raise SystemExit(f"{what} failed: {ret}")


def dataset(desc, count, size_of):
    ds = acl.mdl.create_dataset()
    keep = []
    for i in range(count(desc)):
        n = size_of(desc, i)
        ptr, ret = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
        check("malloc", ret)
        check("memset", acl.rt.memset(ptr, n, 0, n))
        buf = acl.create_data_buffer(ptr, n)
        _, ret = acl.mdl.add_dataset_buffer(ds, buf)
        check("add_dataset_buffer", ret)
        keep.append((ptr, buf))
    return ds, keep


def main(model_path, result_dir):
    check("init", acl.init())
    check("set_device", acl.rt.set_device(0))
    check("prof.init", acl.prof.init(result_dir))
    cfg = acl.prof.create_config([0], 0, 0, 0)
    model_id, ret = acl.mdl.load_from_file(model_path)
    check("load", ret)
    desc = acl.mdl.create_desc()
    check("get_desc", acl.mdl.get_desc(desc, model_id))
    inputs, in_keep = dataset(desc, acl.mdl.get_num_inputs, acl.mdl.get_input_size_by_index)
    outputs, out_keep = dataset(desc, acl.mdl.get_num_outputs, acl.mdl.get_output_size_by_index)
    check("prof.start", acl.prof.start(cfg))
    check("execute", acl.mdl.execute(model_id, inputs, outputs))
    check("prof.stop", acl.prof.stop(cfg))
    check("destroy_config", acl.prof.destroy_config(cfg))
    check("prof.finalize", acl.prof.finalize())

    # op subscription: a reader thread drains the pipe while the model runs
    r, w = os.pipe()
    size, ret = acl.prof.get_op_desc_size()
    check("get_op_desc_size", ret)
    chunks = []

    def reader():
        while True:
            data = os.read(r, size * 64)
            if not data:
                return
            chunks.append(data)

    t = threading.Thread(target=reader)
    t.start()
    sub = acl.prof.create_subscribe_config(1, 0, w)
    check("model_subscribe", acl.prof.model_subscribe(model_id, sub))
    check("execute", acl.mdl.execute(model_id, inputs, outputs))
    # unsubscribe closes the write end once the records are sent (CANN's documentation of
    # aclprofModelUnSubscribe): the reader sees end of file
    check("model_unsubscribe", acl.prof.model_unsubscribe(model_id))
    t.join()
    os.close(r)
    data = b"".join(chunks)
    ptr = acl.util.bytes_to_ptr(data)
    num, ret = acl.prof.get_op_num(ptr, len(data))
    check("get_op_num", ret)
    for i in range(num):
        name, ret = acl.prof.get_op_name_v2(ptr, len(data), i)
        print(f"op {name} {acl.prof.get_op_duration(ptr, len(data), i)} ns")
    check("destroy_subscribe_config", acl.prof.destroy_subscribe_config(sub))
    for ptr_, buf in in_keep + out_keep:
        check("destroy_data_buffer", acl.destroy_data_buffer(buf))
        check("free", acl.rt.free(ptr_))
    check("destroy_dataset", acl.mdl.destroy_dataset(inputs))
    check("destroy_dataset", acl.mdl.destroy_dataset(outputs))
    check("destroy_desc", acl.mdl.destroy_desc(desc))
    check("unload", acl.mdl.unload(model_id))
    check("reset_device", acl.rt.reset_device(0))
    check("finalize", acl.finalize())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
