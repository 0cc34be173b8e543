"""A small helper layer in the style of the samples' common library, written for acl_lab's
tests: a device resource, a model with dynamic batch and a callback thread. Programs in this
folder import it the way sample programs import their helper library."""

import threading

import acl
import numpy as np

ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_HOST = 1
ACL_INFO = 1
ACL_CALLBACK_BLOCK = 1
SHAPE_DATA = "ascend_mbatch_shape_data"

acl.app_log(ACL_INFO, "litekit imported")


def check(what, ret):
    """Stop the program with a message when an ACL call failed."""
    if ret != 0:
        raise RuntimeError(f"{what} failed with {ret}")


class Resource:
    """Device, context and stream of one program; remembers the run mode."""

    def __init__(self, device_id=0):
        self.device_id = device_id
        check("acl.init", acl.init())
        check("set_device", acl.rt.set_device(device_id))
        self.context, ret = acl.rt.create_context(device_id)
        check("create_context", ret)
        self.stream, ret = acl.rt.create_stream()
        check("create_stream", ret)
        self.run_mode, ret = acl.rt.get_run_mode()
        check("get_run_mode", ret)

    def to_host_kind(self):
        """The copy kind that brings device results to the program."""
        return ACL_MEMCPY_DEVICE_TO_HOST if self.run_mode == ACL_HOST \
            else ACL_MEMCPY_DEVICE_TO_DEVICE

    def release(self):
        """Destroy the stream and context, reset the device, finalize."""
        check("destroy_stream", acl.rt.destroy_stream(self.stream))
        check("destroy_context", acl.rt.destroy_context(self.context))
        check("reset_device", acl.rt.reset_device(self.device_id))
        check("finalize", acl.finalize())


class CallbackThread:
    """A thread that serves the stream's callbacks (subscribe_report + process_report)."""

    def __init__(self, stream):
        self.stream = stream
        self.stop = False
        self.done = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        check("subscribe_report", acl.rt.subscribe_report(self.thread.ident, stream))

    def _loop(self):
        check("set_context", acl.rt.set_context(CONTEXT[0]))
        while not self.stop:
            acl.rt.process_report(100)

    def after(self, tag):
        """Queue a callback that records ``tag`` when the stream reaches it."""
        check("launch_callback", acl.rt.launch_callback(self.done.append, tag,
                                                        ACL_CALLBACK_BLOCK, self.stream))

    def close(self):
        """Unsubscribe and stop the thread."""
        check("unsubscribe_report", acl.rt.unsubscribe_report(self.thread.ident, self.stream))
        self.stop = True
        self.thread.join()


#: the context the callback thread must use (set by the program)
CONTEXT = [None]


class Model:
    """A loaded model with device buffers for every input and output at the largest gear.

    Like the samples' helper, it copies the whole output buffer back after each run and
    keeps the rows of the current batch.
    """

    def __init__(self, resource, path):
        self.res = resource
        self.model_id, ret = acl.mdl.load_from_file(path)
        check("load_from_file", ret)
        self.desc = acl.mdl.create_desc()
        check("get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        gears, ret = acl.mdl.get_dynamic_batch(self.desc)
        check("get_dynamic_batch", ret)
        self.gears = list(gears["batch"])
        self.inputs, self.in_bufs = self._dataset(acl.mdl.get_num_inputs,
                                                  acl.mdl.get_input_size_by_index)
        self.outputs, self.out_bufs = self._dataset(acl.mdl.get_num_outputs,
                                                    acl.mdl.get_output_size_by_index)
        self.shape_index = -1
        if self.gears:
            self.shape_index, ret = acl.mdl.get_input_index_by_name(self.desc, SHAPE_DATA)
            check("get_input_index_by_name", ret)
        self.host_out = []
        for _, size in self.out_bufs:
            ptr, ret = acl.rt.malloc_host(size)
            check("malloc_host", ret)
            self.host_out.append((ptr, size))

    def _dataset(self, count, size_of):
        ds = acl.mdl.create_dataset()
        bufs = []
        for i in range(count(self.desc)):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
            check("malloc", ret)
            buf = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(ds, buf)
            check("add_dataset_buffer", ret)
            bufs.append((ptr, size))
        return ds, bufs

    def gear_for(self, n):
        """The smallest gear holding ``n`` rows."""
        return min(g for g in self.gears if g >= n)

    def run(self, batch, rows_per_item):
        """Copy ``batch`` (float32 rows) in, execute at the gear that holds it (async, then
        synchronize), copy every output back whole and return output 0's rows of the batch."""
        n = len(batch)
        gear = self.gear_for(n) if self.gears else n
        if self.gears:
            check("set_dynamic_batch_size", acl.mdl.set_dynamic_batch_size(
                self.model_id, self.inputs, self.shape_index, gear))
        data = np.ascontiguousarray(batch, dtype=np.float32)
        dev, size = self.in_bufs[0]
        check("memcpy in", acl.rt.memcpy(dev, size, data.ctypes.data, data.nbytes,
                                         ACL_MEMCPY_HOST_TO_DEVICE))
        check("execute_async", acl.mdl.execute_async(self.model_id, self.inputs, self.outputs,
                                                     self.res.stream))
        check("synchronize_stream", acl.rt.synchronize_stream(self.res.stream))
        for (host, size), (dev, _) in zip(self.host_out, self.out_bufs, strict=True):
            check("memcpy out", acl.rt.memcpy(host, size, dev, size, self.res.to_host_kind()))
        host, size = self.host_out[0]
        out = np.frombuffer(acl.util.ptr_to_bytes(host, size), dtype=np.float32)
        return out.reshape(-1, rows_per_item)[:n]

    def release(self):
        """Free every buffer, destroy the datasets and desc, unload."""
        for ptr, _ in self.host_out:
            check("free_host", acl.rt.free_host(ptr))
        for ds in (self.inputs, self.outputs):
            for i in range(acl.mdl.get_dataset_num_buffers(ds)):
                buf = acl.mdl.get_dataset_buffer(ds, i)
                check("destroy_data_buffer", acl.destroy_data_buffer(buf))
            check("destroy_dataset", acl.mdl.destroy_dataset(ds))
        for ptr, _ in self.in_bufs + self.out_bufs:
            check("free", acl.rt.free(ptr))
        check("destroy_desc", acl.mdl.destroy_desc(self.desc))
        check("unload", acl.mdl.unload(self.model_id))
