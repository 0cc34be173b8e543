"""Classify pictures with a model converted with ``atc --insert_op_conf`` (static AIPP), the
way the level2 classification samples feed DVPP output: the model's input is the raw
YUV420SP_U8 (NV12) picture, sized by acl.mdl.get_input_size_by_index (w*h*3/2 bytes, not the
float tensor's), in DVPP memory; the model converts colours and subtracts the means itself.
The pictures come from a file of NV12 frames (the test writes it) instead of a decoder.
Usage: classify_aipp.py MODEL FRAMES. Prints the AIPP input it found and one class per
picture."""

import sys

import acl
import litekit
import numpy as np

ACL_DATA_WITH_STATIC_AIPP = 1


class AippClassifier:
    """A loaded AIPP model with one input buffer in DVPP memory and one output buffer."""

    def __init__(self, res, path):
        self.res = res
        self.model_id, ret = acl.mdl.load_from_file(path)
        litekit.check("load_from_file", ret)
        self.desc = acl.mdl.create_desc()
        litekit.check("get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        aipp_type, _, ret = acl.mdl.get_aipp_type(self.model_id, 0)
        litekit.check("get_aipp_type", ret)
        if aipp_type != ACL_DATA_WITH_STATIC_AIPP:
            raise RuntimeError("the model was not converted with --insert_op_conf")
        info, ret = acl.mdl.get_first_aipp_info(self.model_id, 0)
        litekit.check("get_first_aipp_info", ret)
        self.width, self.height = info["srcImageSizeW"], info["srcImageSizeH"]
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.out_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.in_dev, ret = acl.media.dvpp_malloc(self.in_size)
        litekit.check("dvpp_malloc", ret)
        self.out_dev, ret = acl.rt.malloc(self.out_size, litekit.ACL_MEM_MALLOC_NORMAL_ONLY)
        litekit.check("malloc", ret)
        self.inputs = self._dataset(self.in_dev, self.in_size)
        self.outputs = self._dataset(self.out_dev, self.out_size)
        self.host_out, ret = acl.rt.malloc_host(self.out_size)
        litekit.check("malloc_host", ret)

    @staticmethod
    def _dataset(ptr, size):
        dataset = acl.mdl.create_dataset()
        buf = acl.create_data_buffer(ptr, size)
        _, ret = acl.mdl.add_dataset_buffer(dataset, buf)
        litekit.check("add_dataset_buffer", ret)
        return dataset

    def classify(self, picture):
        """The class of one NV12 picture (bytes of in_size)."""
        litekit.check("memcpy in", acl.rt.memcpy(self.in_dev, self.in_size,
                                                 acl.util.bytes_to_ptr(picture), len(picture),
                                                 litekit.ACL_MEMCPY_HOST_TO_DEVICE))
        litekit.check("execute_async", acl.mdl.execute_async(
            self.model_id, self.inputs, self.outputs, self.res.stream))
        litekit.check("synchronize", acl.rt.synchronize_stream(self.res.stream))
        litekit.check("memcpy out", acl.rt.memcpy(self.host_out, self.out_size, self.out_dev,
                                                  self.out_size, self.res.to_host_kind()))
        scores = np.frombuffer(acl.util.ptr_to_bytes(self.host_out, self.out_size),
                               dtype=np.float32)
        return int(scores.argmax())

    def release(self):
        """Free the buffers, datasets and desc; unload the model."""
        for dataset in (self.inputs, self.outputs):
            for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                litekit.check("destroy_data_buffer", acl.destroy_data_buffer(
                    acl.mdl.get_dataset_buffer(dataset, i)))
            litekit.check("destroy_dataset", acl.mdl.destroy_dataset(dataset))
        litekit.check("dvpp_free", acl.media.dvpp_free(self.in_dev))
        litekit.check("free", acl.rt.free(self.out_dev))
        litekit.check("free_host", acl.rt.free_host(self.host_out))
        litekit.check("destroy_desc", acl.mdl.destroy_desc(self.desc))
        litekit.check("unload", acl.mdl.unload(self.model_id))


def main(model_path, frames_path):
    res = litekit.Resource()
    net = AippClassifier(res, model_path)
    print("aipp", f"{net.width}x{net.height}", net.in_size)
    with open(frames_path, "rb") as f:
        frames = f.read()
    classes = [net.classify(frames[i:i + net.in_size])
               for i in range(0, len(frames), net.in_size)]
    print("classes", " ".join(map(str, classes)))
    net.release()
    res.release()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
