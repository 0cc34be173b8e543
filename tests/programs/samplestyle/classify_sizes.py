"""Classify pictures of several sizes with a dynamic-image-size model, the way the samples'
dynamic-resolution classification does it: buffers sized for the largest gear, the gear input
found by name, the size checked against acl.mdl.get_dynamic_hw and set with
acl.mdl.set_dynamic_hw_size before each execution, the output shaped with
acl.mdl.get_cur_output_dims. A size the model has no gear for is skipped.
Usage: classify_sizes.py MODEL OUT_DIR. Prints one line per picture; the pictures and the
outputs go to OUT_DIR/pictures.npz for the test to check."""

import sys

import acl
import numpy as np

HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2
SIZES = ((12, 16), (8, 8), (10, 10), (12, 16))


def check(what, ret):
    if ret != 0:
        raise RuntimeError(f"{what} failed ret={ret}")


class Classifier:
    def __init__(self, model_path, device=0):
        self.device = device
        check("init", acl.init())
        check("set_device", acl.rt.set_device(device))
        self.context, ret = acl.rt.create_context(device)
        check("create_context", ret)
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check("load_from_file", ret)
        self.desc = acl.mdl.create_desc()
        check("get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        self.inputs = self._buffers(acl.mdl.get_num_inputs(self.desc),
                                    acl.mdl.get_input_size_by_index)
        self.outputs = self._buffers(acl.mdl.get_num_outputs(self.desc),
                                     acl.mdl.get_output_size_by_index)
        self.gear_index, ret = acl.mdl.get_input_index_by_name(self.desc,
                                                               "ascend_mbatch_shape_data")
        check("get_input_index_by_name", ret)

    def _buffers(self, count, size_of):
        out = []
        for i in range(count):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, 0)
            check("malloc", ret)
            out.append((ptr, size))
        return out

    def _dataset(self, buffers):
        ds = acl.mdl.create_dataset()
        for ptr, size in buffers:
            _, ret = acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))
            check("add_dataset_buffer", ret)
        return ds

    def _destroy(self, ds):
        for i in range(acl.mdl.get_dataset_num_buffers(ds)):
            check("destroy_data_buffer",
                  acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(ds, i)))
        check("destroy_dataset", acl.mdl.destroy_dataset(ds))

    def classify(self, picture):
        height, width = picture.shape[2], picture.shape[3]
        hw, ret = acl.mdl.get_dynamic_hw(self.desc, self.gear_index)
        check("get_dynamic_hw", ret)
        if [height, width] not in hw["hw"]:
            return None
        data = np.ascontiguousarray(picture, dtype=np.float32)
        ptr, size = self.inputs[0]
        check("memcpy in", acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data.tobytes()),
                                         data.nbytes, HOST_TO_DEVICE))
        ins, outs = self._dataset(self.inputs), self._dataset(self.outputs)
        check("set_dynamic_hw_size", acl.mdl.set_dynamic_hw_size(
            self.model_id, ins, self.gear_index, height, width))
        check("execute", acl.mdl.execute(self.model_id, ins, outs))
        dims, ret = acl.mdl.get_cur_output_dims(self.desc, 0)
        check("get_cur_output_dims", ret)
        nbytes = int(np.prod(dims["dims"])) * 4
        host, ret = acl.rt.malloc_host(nbytes)
        check("malloc_host", ret)
        check("memcpy out", acl.rt.memcpy(host, nbytes, self.outputs[0][0], nbytes,
                                          DEVICE_TO_HOST))
        logits = np.frombuffer(acl.util.ptr_to_bytes(host, nbytes),
                               np.float32).reshape(dims["dims"]).copy()
        check("free_host", acl.rt.free_host(host))
        self._destroy(ins)
        self._destroy(outs)
        return logits

    def release(self):
        for ptr, _ in self.inputs + self.outputs:
            check("free", acl.rt.free(ptr))
        check("destroy_desc", acl.mdl.destroy_desc(self.desc))
        check("unload", acl.mdl.unload(self.model_id))
        check("destroy_context", acl.rt.destroy_context(self.context))
        check("reset_device", acl.rt.reset_device(self.device))
        check("finalize", acl.finalize())


def main(model_path, out_dir):
    net = Classifier(model_path)
    rng = np.random.default_rng(11)
    saved = {}
    for n, (h, w) in enumerate(SIZES):
        picture = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        logits = net.classify(picture)
        if logits is None:
            print(f"picture {n} {h}x{w} skipped")
            continue
        saved[f"picture{n}"], saved[f"logits{n}"] = picture, logits
        print(f"picture {n} {h}x{w} class {int(logits.argmax())}")
    net.release()
    np.savez(out_dir + "/pictures.npz", **saved)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
