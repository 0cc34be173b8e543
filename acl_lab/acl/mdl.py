"""``acl.mdl``: offline models (.om): load, describe, datasets and execution.

Models are acl_lab's emulated ``.om`` files (made by ``acl-lab atc`` from ONNX, or taken from
``acl_lab.zoo``). Executions are model tasks on the AI-core pool, timed by the sum of their
layers' costs on the device profile.

A dynamic model has gears, named as ATC named them: batch sizes (``atc --dynamic_batch_size``,
the zoo's ``mlp_dynamic``), image sizes (``--dynamic_image_size``) or dims (``--dynamic_dims``).
It has one more input than its graph, ``ascend_mbatch_shape_data`` (``ACL_DYNAMIC_TENSOR_NAME``),
last, as real ATC builds it: int64 ``[k]``, ND, ``8 k`` bytes (k = 1 for batch, 2 for an
image size, one per -1 dim for dims). The input dataset needs a buffer for it, and the gear
setters (``set_dynamic_batch_size``, ``set_dynamic_hw_size``, ``set_input_dynamic_dims``) take
its index (``get_input_index_by_name``); they share one runtime path (``models.set_gear``).

A model converted with ``atc --insert_op_conf`` (AIPP, ``acl_lab.runtime.aipp``) takes the raw
picture: static AIPP's input is uint8 NHWC of the picture's size (w*h*3/2 for YUV420SP_U8);
dynamic AIPP adds ``ascend_dynamic_aipp_data``, which ``set_input_aipp`` fills from an
``create_aipp`` parameter set. ``get_aipp_type`` and ``get_first_aipp_info`` describe them.
"""

from __future__ import annotations

from typing import Any

from ..constants import ErrorCode
from ..runtime import aipp as A
from ..runtime import buffers
from ..runtime import models as M
from ..runtime.errors import AclError
from ..runtime.kinds import ObjectKind
from ..runtime.objects import HostThread
from ..runtime.session import Session
from ._boundary import acl_api

S = Session


@acl_api("acl.mdl.load_from_file", "aclmdlLoadFromFile", "s", out=1)
def load_from_file(s: S, th: HostThread, cid: int, path: str) -> int:
    """``(model_id, ret)``: load an .om file; the runtime manages work and weight memory.

    Returns ret 145002 for a missing path and 145006 for a file that is not an OM (GE).
    Differs from real ACL: only acl_lab's emulated .om format loads.
    """
    return M.load_from_file(s, th, cid, path)


@acl_api("acl.mdl.load_from_mem", "aclmdlLoadFromMem", "pk", out=1)
def load_from_mem(s: S, th: HostThread, cid: int, ptr: int, size: int) -> int:
    """``(model_id, ret)``: load a model from bytes in host memory (EP mode).

    Differs from real ACL: as load_from_file.
    """
    return M.load_from_mem(s, th, cid, ptr, size)


@acl_api("acl.mdl.query_size", "aclmdlQuerySize", "s", out=2, default=(0, 0))
def query_size(s: S, th: HostThread, cid: int, path: str) -> tuple[int, int]:
    """``(work_size, weight_size, ret)`` a model needs for load_from_file_with_mem.

    Differs from real ACL: work size is the sum of the model's intermediate tensors.
    """
    return M.query_size(path)


@acl_api("acl.mdl.load_from_file_with_mem", "aclmdlLoadFromFileWithMem", "spkpk", out=1)
def load_from_file_with_mem(s: S, th: HostThread, cid: int, path: str, work: int, work_size: int,
                            weight: int, weight_size: int) -> int:
    """``(model_id, ret)`` with caller-provided device memory (sizes from query_size).

    Differs from real ACL: the memory is checked but the model's data is kept in Python.
    """
    return M.load_from_file_with_mem(s, th, cid, path, work, work_size, weight, weight_size)


@acl_api("acl.mdl.unload", "aclmdlUnload", "I")
def unload(s: S, th: HostThread, cid: int, model_id: int) -> None:
    """Unload a model (in the context that loaded it; 107004 otherwise).

    Differs from real ACL: the context code (107004) is the reference's unverified guess.
    """
    M.unload(s, th, cid, model_id)


@acl_api("acl.mdl.create_desc", "aclmdlCreateDesc", "", out="value")
def create_desc(s: S, th: HostThread, cid: int) -> int:
    """A new, empty model description.

    Differs from real ACL: no difference known.
    """
    return M.create_desc(s, cid)


@acl_api("acl.mdl.get_desc", "aclmdlGetDesc", "kI")
def get_desc(s: S, th: HostThread, cid: int, desc: int, model_id: int) -> None:
    """Fill ``desc`` from a loaded model (100011 for an unknown model id).

    Differs from real ACL: no difference known.
    """
    M.get_desc(s, desc, model_id)


@acl_api("acl.mdl.destroy_desc", "aclmdlDestroyDesc", "k")
def destroy_desc(s: S, th: HostThread, cid: int, desc: int) -> None:
    """Destroy a model description.

    Differs from real ACL: no difference known.
    """
    M.destroy_desc(s, cid, desc)


@acl_api("acl.mdl.get_num_inputs", "aclmdlGetNumInputs", "k", out="value")
def get_num_inputs(s: S, th: HostThread, cid: int, desc: int) -> int:
    """Number of model inputs (0 for a null desc); a dynamic-batch model counts its
    ``ascend_mbatch_shape_data`` input too.

    Differs from real ACL: no difference known.
    """
    return M.io_count(s, desc, False)


@acl_api("acl.mdl.get_num_outputs", "aclmdlGetNumOutputs", "k", out="value")
def get_num_outputs(s: S, th: HostThread, cid: int, desc: int) -> int:
    """Number of model outputs (0 for a null desc).

    Differs from real ACL: no difference known.
    """
    return M.io_count(s, desc, True)


@acl_api("acl.mdl.get_input_size_by_index", "aclmdlGetInputSizeByIndex", "kk", out="value")
def get_input_size_by_index(s: S, th: HostThread, cid: int, desc: int, index: int) -> int:
    """Bytes of input ``index``: for a dynamic model the most any gear needs (the largest
    gear); ``8 k`` for the ``ascend_mbatch_shape_data`` input (int64 ``[k]``).

    Differs from real ACL: no difference known.
    """
    return M.io_size(s, desc, index, False)


@acl_api("acl.mdl.get_output_size_by_index", "aclmdlGetOutputSizeByIndex", "kk", out="value")
def get_output_size_by_index(s: S, th: HostThread, cid: int, desc: int, index: int) -> int:
    """Bytes of output ``index``.

    Differs from real ACL: no difference known.
    """
    return M.io_size(s, desc, index, True)


def _dims_api(name: str, cname: str, output: bool, current: bool = False,
              image: bool = False) -> Any:
    @acl_api(name, cname, "kk", out=1, default={})
    def dims(s: S, th: HostThread, cid: int, desc: int, index: int) -> dict[str, Any]:
        """``({'name', 'dimCount', 'dims'}, ret)``; ``({}, ret)`` on failure.

        For a dynamic model the input dims keep their -1 dims and the
        ``ascend_mbatch_shape_data`` input is ``[k]``; the output dims are the largest
        gear's; the current output dims are those of the gear of the model's last gear
        setter (the largest before any). An input converted by static AIPP is
        [N, H, W, C] of the picture for get_input_dims and [N, H*3/2, W, 1] (YUV420SP_U8;
        the product is the input size) for get_input_dims_v2.
        Differs from real ACL: no difference known.
        """
        got = M.io_dims(s, desc, index, output, current)
        if image:
            return A.image_dims(M.desc(s, desc).model.om, index, got)  # type: ignore[union-attr]
        return got
    return dims


get_input_dims = _dims_api("acl.mdl.get_input_dims", "aclmdlGetInputDims", False, image=True)
get_input_dims_v2 = _dims_api("acl.mdl.get_input_dims_v2", "aclmdlGetInputDimsV2", False)
get_output_dims = _dims_api("acl.mdl.get_output_dims", "aclmdlGetOutputDims", True)
get_cur_output_dims = _dims_api("acl.mdl.get_cur_output_dims", "aclmdlGetCurOutputDims",
                                True, current=True)


def _value_api(name: str, cname: str, fn: Any, output: bool, default: Any = -1) -> Any:
    @acl_api(name, cname, "kk", out="value", default=default)
    def getter(s: S, th: HostThread, cid: int, desc: int, index: int) -> Any:
        """One property of an input or output.

        Differs from real ACL: no difference known.
        """
        return fn(s, desc, index, output)
    return getter


get_input_data_type = _value_api("acl.mdl.get_input_data_type", "aclmdlGetInputDataType",
                                 M.io_dtype, False)
get_output_data_type = _value_api("acl.mdl.get_output_data_type", "aclmdlGetOutputDataType",
                                  M.io_dtype, True)
get_input_format = _value_api("acl.mdl.get_input_format", "aclmdlGetInputFormat",
                              lambda s, d, i, o: int(M.io_spec(s, d, i, o)["format"]), False)
get_output_format = _value_api("acl.mdl.get_output_format", "aclmdlGetOutputFormat",
                               lambda s, d, i, o: int(M.io_spec(s, d, i, o)["format"]), True)
get_input_name_by_index = _value_api(
    "acl.mdl.get_input_name_by_index", "aclmdlGetInputNameByIndex",
    lambda s, d, i, o: str(M.io_spec(s, d, i, o)["name"]), False, default=None)
get_output_name_by_index = _value_api(
    "acl.mdl.get_output_name_by_index", "aclmdlGetOutputNameByIndex",
    lambda s, d, i, o: str(M.io_spec(s, d, i, o)["name"]), True, default=None)


@acl_api("acl.mdl.get_input_index_by_name", "aclmdlGetInputIndexByName", "ks", out=1)
def get_input_index_by_name(s: S, th: HostThread, cid: int, desc: int, name: str) -> int:
    """``(index, ret)`` of the input called ``name``; ret 100000 when there is none (how
    samples tell a static model from a dynamic one with ``"ascend_mbatch_shape_data"``).

    Differs from real ACL: no difference known.
    """
    return M.io_index(s, desc, name, False)


@acl_api("acl.mdl.get_output_index_by_name", "aclmdlGetOutputIndexByName", "ks", out=1)
def get_output_index_by_name(s: S, th: HostThread, cid: int, desc: int, name: str) -> int:
    """``(index, ret)`` of the output called ``name``.

    Differs from real ACL: no difference known.
    """
    return M.io_index(s, desc, name, True)


@acl_api("acl.mdl.create_dataset", "aclmdlCreateDataset", "", out="value")
def create_dataset(s: S, th: HostThread, cid: int) -> int:
    """A new, empty dataset.

    Differs from real ACL: no difference known.
    """
    return M.create_dataset(s, cid)


@acl_api("acl.mdl.add_dataset_buffer", "aclmdlAddDatasetBuffer", "kk", out=1)
def add_dataset_buffer(s: S, th: HostThread, cid: int, dataset: int, buf: int) -> int:
    """``(dataset, ret)``: append a data buffer (this odd return shape is pyACL's).

    Differs from real ACL: no difference known.
    """
    ds = M.dataset(s, dataset)
    if buf == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "data buffer is null")
    buffers.lookup(s, buf)
    ds.buffers.append(buf)
    return dataset


@acl_api("acl.mdl.get_dataset_buffer", "aclmdlGetDatasetBuffer", "kk", out="value")
def get_dataset_buffer(s: S, th: HostThread, cid: int, dataset: int, index: int) -> int:
    """The data buffer at ``index``; 0 when out of range (GE model_om2.cpp).

    Differs from real ACL: no difference known.
    """
    ds = M.dataset(s, dataset)
    if not 0 <= index < len(ds.buffers):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"dataset index {index} is out of range ({len(ds.buffers)})")
    return ds.buffers[index]


@acl_api("acl.mdl.get_dataset_num_buffers", "aclmdlGetDatasetNumBuffers", "k", out="value")
def get_dataset_num_buffers(s: S, th: HostThread, cid: int, dataset: int) -> int:
    """Number of buffers in the dataset.

    Differs from real ACL: no difference known.
    """
    return len(M.dataset(s, dataset).buffers)


@acl_api("acl.mdl.destroy_dataset", "aclmdlDestroyDataset", "k")
def destroy_dataset(s: S, th: HostThread, cid: int, dataset: int) -> None:
    """Destroy a dataset: its data buffers and their memory are NOT released.

    Differs from real ACL: no difference known.
    """
    M.destroy_dataset(s, cid, dataset)


@acl_api("acl.mdl.execute", "aclmdlExecute", "Ikk", launch=True)
def execute(s: S, th: HostThread, cid: int, model_id: int, inputs: int, outputs: int) -> None:
    """Run the model synchronously; inputs and outputs must be device memory.

    Returns ret: 0; 100000 for null datasets/buffers, too few buffers (a dynamic model
    needs one for ``ascend_mbatch_shape_data`` too) or host memory; 145003 for an unknown
    model id; 145000 when an input is more than 64 bytes smaller than the model input
    (CANN 5-8; newest GE returns 500002); a larger input only warns. A dynamic model runs at
    the gear set on the input dataset (145013 if none was set) and its outputs have that
    gear's shapes; its data buffers may be anything up to the largest gear's size without a
    warning; more than 64 bytes short of the current gear is 145000; if its shape-data
    buffer no longer holds that gear when the model starts, the model task fails with 507015.
    Differs from real ACL: the model runs as numpy kernels, timed by the cost model. For a
    dynamic model GE skips the input size check and runs without a set gear reading
    whatever the shape-data buffer holds; the emulator's 145000, 145013 and 507015 there are
    its own choices (unverified).
    """
    M.execute(s, th, cid, model_id, inputs, outputs, None)


@acl_api("acl.mdl.execute_async", "aclmdlExecuteAsync", "Ikkk", launch=True)
def execute_async(s: S, th: HostThread, cid: int, model_id: int, inputs: int, outputs: int,
                  stream: int) -> None:
    """Queue the model on ``stream``; synchronize before reading outputs.

    The same model must not run on two streams at once (reported in the trace).
    Differs from real ACL: as execute.
    """
    M.execute(s, th, cid, model_id, inputs, outputs, stream)


@acl_api("acl.mdl.set_dynamic_batch_size", "aclmdlSetDynamicBatchSize", "IkkK")
def set_dynamic_batch_size(s: S, th: HostThread, cid: int, model_id: int, dataset: int, index: int,
                           batch: int) -> None:
    """Choose the batch gear for executions with this input dataset.

    ``index`` is the ``ascend_mbatch_shape_data`` input's, from
    ``get_input_index_by_name(desc, "ascend_mbatch_shape_data")``. The gear is written into
    that buffer (8 bytes, a synchronous host-to-device copy), kept on the dataset and becomes
    the model's current gear (``get_cur_output_dims``). Returns ret, in ACL's order: 100000
    for a null dataset, batch 0 or an index with no buffer; 145012 for a buffer under 4
    bytes; 145003 for an unknown model id; 145013 for a static model, a model with image-size
    or dims gears, or a batch that is not a gear; then 100000 when ``index`` is not the
    shape-data input.
    Differs from real ACL: real ACL does not check which input ``index`` is: it writes the
    batch into that buffer (corrupting a data input) and returns 0; the emulator refuses with
    100000. The unknown-model code is unverified (one GE version gives 500002).
    """
    M.set_dynamic_batch(s, th, cid, model_id, dataset, index, batch)


@acl_api("acl.mdl.get_dynamic_batch", "aclmdlGetDynamicBatch", "k", out=1, default={})
def get_dynamic_batch(s: S, th: HostThread, cid: int, desc: int) -> dict[str, Any]:
    """``({'batchCount', 'batch'}, ret)``: the model's batch gears.

    Differs from real ACL: no difference known.
    """
    return M.dynamic_batch(s, desc)


# ----------------------------------------------------------------------------- dynamic HW


@acl_api("acl.mdl.get_dynamic_hw", "aclmdlGetDynamicHW", "kk", out=1, default={})
def get_dynamic_hw(s: S, th: HostThread, cid: int, desc: int, index: int) -> dict[str, Any]:
    """``({'hwCount', 'hw'}, ret)``: the model's image-size gears (``atc
    --dynamic_image_size``), ``hw`` a list of ``[height, width]`` pairs;
    ``{'hwCount': 0, 'hw': []}`` for any other model (what ``aclmdlGetDynamicHW`` fills in).
    ``index`` is accepted and unused, as in the C API (model.cpp reads only the desc).
    ``({}, ret)`` for an unknown desc.

    Differs from real ACL: no difference known.
    """
    return M.dynamic_hw(s, desc)


@acl_api("acl.mdl.set_dynamic_hw_size", "aclmdlSetDynamicHWSize", "IkkKK")
def set_dynamic_hw_size(s: S, th: HostThread, cid: int, model_id: int, dataset: int, index: int,
                        height: int, width: int) -> None:
    """Choose the image-size gear ``(height, width)`` for executions with this dataset.

    ``index`` is the ``ascend_mbatch_shape_data`` input's. Height and width go into that
    buffer (8 bytes each, 4 each if it holds under 16; a synchronous host-to-device copy),
    on the dataset and become the model's current gear. Returns ret, in ACL's order
    (model.cpp, GE SetDynamicImageSize): 100000 for a null dataset, a zero height or width,
    an index with no buffer or a null address; 145012 for a buffer under 8 bytes; 145003
    for an unknown model id; 145013 for a static model, a model with batch or dims gears, or
    a size that is not a gear; then 100000 when ``index`` is not the shape-data input.
    Differs from real ACL: as set_dynamic_batch_size (the index check is the emulator's).
    """
    M.set_dynamic_hw(s, th, cid, model_id, dataset, index, height, width)


# ----------------------------------------------------------------------------- dynamic dims


@acl_api("acl.mdl.get_input_dynamic_gear_count", "aclmdlGetInputDynamicGearCount", "kk",
         out=1, default=0)
def get_input_dynamic_gear_count(s: S, th: HostThread, cid: int, desc: int, index: int) -> int:
    """``(gear_count, ret)``: the number of dims gears (``atc --dynamic_dims``), 0 for any
    other model. ``index`` must be -1 (all inputs; 100000 otherwise, model.cpp).

    Differs from real ACL: no difference known.
    """
    return M.dynamic_gear_count(s, desc, index)


#: the most gears the binding accepts for get_input_dynamic_dims (mdl_wrap.cpp: larger
#: counts give (None, 100000) without calling C)
MAX_GEAR_COUNT = 4096


@acl_api("acl.mdl.get_input_dynamic_dims", "aclmdlGetInputDynamicDims", "kkk", out=1,
         default=None)
def get_input_dynamic_dims(s: S, th: HostThread, cid: int, desc: int, index: int,
                           gear_count: int) -> list[dict[str, Any]]:
    """``(gears, ret)``: one ``{'name', 'dimCount', 'dims'}`` per dims gear, ``dims`` every
    data input's dims concatenated in input order with that gear's values in the -1 dims
    (model.cpp aclmdlGetInputDynamicDims; ``name`` is empty). ``index`` must be -1 and
    ``gear_count`` at least the model's gear count (100000 otherwise); over 4096 gives
    ``(None, 100000)`` (the binding's own limit, mdl_wrap.cpp).

    Differs from real ACL: the real binding returns a list of ``gear_count`` entries (the
    ones past the model's gears uninitialised, and ``gear_count`` None placeholders when the
    C call fails); the emulator returns the model's gears, and None on any failure.
    """
    if gear_count > MAX_GEAR_COUNT:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"gear_count {gear_count} is over the binding's limit "
                       f"{MAX_GEAR_COUNT}")
    return M.input_dynamic_dims(s, desc, index, gear_count)


def _dims_arg(dims: Any) -> list[int]:
    """The binding's dims-dict conversion (mdl_wrap.cpp WrapAclMdlSetInputDynamicDims): not a
    dict -> TypeError "argument 4 is not dict"; no "dims" list -> "The dims of parameter 4 is
    not a list."; an item that is not an int -> "the dims of fourth parameter is not list of
    int". ``name`` and ``dimCount`` are not used: the list's length is the count (the binding
    table lists no check on them; unverified)."""
    if not isinstance(dims, dict):
        raise TypeError("argument 4 is not dict")
    values = dims.get("dims")
    if not isinstance(values, list):
        raise TypeError("The dims of parameter 4 is not a list.")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise TypeError("the dims of fourth parameter is not list of int")
    return [int(v) for v in values]


@acl_api("acl.mdl.set_input_dynamic_dims", "aclmdlSetInputDynamicDims", "IkkO")
def set_input_dynamic_dims(s: S, th: HostThread, cid: int, model_id: int, dataset: int, index: int,
                           dims: Any) -> None:
    """Choose the dims gear for executions with this dataset.

    ``dims`` is a dict like ``get_input_dynamic_dims`` gives: ``{'dimCount': n, 'dims':
    [...]}`` with every data input's dims concatenated in input order, one gear's values in
    the -1 dims (``name`` unused). ``index`` is the ``ascend_mbatch_shape_data`` input's.
    The -1 values go into that buffer (8 bytes each, 4 each if it is smaller), on the
    dataset and become the model's current gear. Returns ret, in ACL's order (model.cpp, GE
    SetDynamicDims): 100000 for a null dataset, empty dims, a dim under 1, an index with no
    buffer or a null address; 145003 for an unknown model id; 145012 when the dims are not
    the inputs' (another count, or a static dim changed); 145013 for a static model, a model
    with batch or image-size gears, or values that are not a gear; 145012 for a buffer under
    4 bytes per -1 dim; then 100000 when ``index`` is not the shape-data input. A dims
    argument of the wrong type raises TypeError as the binding does.
    Differs from real ACL: real ACL passes a zero or negative dim on to GE (145013 when no
    gear has it); the emulator gives 100000. The index check is the emulator's, as for
    set_dynamic_batch_size.
    """
    values = _dims_arg(dims)
    M.set_dynamic_dims(s, th, cid, model_id, dataset, index, values)


# ----------------------------------------------------------------------------- AIPP
# Static and dynamic AIPP come from ``atc --insert_op_conf`` (acl_lab.runtime.aipp); the
# dynamic AIPP parameter set (aclmdlAIPP) is checked as ACL's acl_aipp.cpp checks it, and
# set_input_aipp / set_aipp_by_input_index write it into the model's
# ``ascend_dynamic_aipp_data`` input.


def _aipp(s: S, handle: int) -> A.DynamicAipp:
    p: A.DynamicAipp = s.lookup(handle, A.DynamicAipp, "aclmdlAIPP parameter set")
    return p


@acl_api("acl.mdl.create_aipp", "aclmdlCreateAIPP", "K", out="value")
def create_aipp(s: S, th: HostThread, cid: int, batch_size: int) -> int:
    """A dynamic AIPP parameter set for ``batch_size`` batches (0 for batch 0, as the C call
    returns NULL); every batch starts with var_reci 1.0 and everything else 0.

    Differs from real ACL: more than 65536 batches give 0 (real ACL tries to allocate them).
    """
    if batch_size == 0:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM, "the batchSize can't be zero")
    if batch_size > A.MAX_AIPP_BATCH:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"batchSize {batch_size} is more than acl_lab's limit of "
                       f"{A.MAX_AIPP_BATCH} (real ACL runs out of memory: NULL)")
    return s.register(A.DynamicAipp(batch_size), ObjectKind.MDL_AIPP, cid, "mdl aipp")


@acl_api("acl.mdl.destroy_aipp", "aclmdlDestroyAIPP", "k")
def destroy_aipp(s: S, th: HostThread, cid: int, aipp: int) -> None:
    """Destroy a dynamic AIPP parameter set (100000 for null or an unknown handle).

    Differs from real ACL: an unknown or already destroyed handle gives 100000 where real
    ACL frees whatever the pointer points at.
    """
    s.retire(s.lookup(aipp, A.DynamicAipp, "aclmdlAIPP parameter set"), cid)


@acl_api("acl.mdl.set_aipp_input_format", "aclmdlSetAIPPInputFormat", "kI")
def set_aipp_input_format(s: S, th: HostThread, cid: int, aipp: int, input_format: int) -> None:
    """The picture format (aclAippInputFormat, 1..14); 100000 for another value.

    Differs from real ACL: no difference known.
    """
    A.set_input_format(_aipp(s, aipp), input_format)


@acl_api("acl.mdl.set_aipp_csc_params", "aclmdlSetAIPPCscParams", "kbhhhhhhhhhBBBBBB")
def set_aipp_csc_params(s: S, th: HostThread, cid: int,
                        aipp: int, switch: int, *values: int) -> None:
    """Colour-space conversion: switch (0/1), the 9 matrix values (-32677..32676), 3 output
    and 3 input biases (0..255); with the switch off the values are not checked.

    Differs from real ACL: no difference known.
    """
    A.set_csc(_aipp(s, aipp), switch, tuple(values))


@acl_api("acl.mdl.set_aipp_rbuv_swap_switch", "aclmdlSetAIPPRbuvSwapSwitch", "kb")
def set_aipp_rbuv_swap_switch(s: S, th: HostThread, cid: int, aipp: int, switch: int) -> None:
    """R/B (or U/V) channel swap: 0 or 1 (100000 otherwise).

    Differs from real ACL: no difference known.
    """
    A.set_swap(_aipp(s, aipp), "rbuvSwapSwitch", switch)


@acl_api("acl.mdl.set_aipp_ax_swap_switch", "aclmdlSetAIPPAxSwapSwitch", "kb")
def set_aipp_ax_swap_switch(s: S, th: HostThread, cid: int, aipp: int, switch: int) -> None:
    """RGBA -> ARGB (YUVA -> AYUV) swap: 0 or 1 (100000 otherwise).

    Differs from real ACL: no difference known.
    """
    A.set_swap(_aipp(s, aipp), "axSwapSwitch", switch)


@acl_api("acl.mdl.set_aipp_src_image_size", "aclmdlSetAIPPSrcImageSize", "kii")
def set_aipp_src_image_size(s: S, th: HostThread, cid: int, aipp: int, width: int,
                            height: int) -> None:
    """The source picture size: width 2..4096, height 1..4096 (100000 otherwise).

    Differs from real ACL: no difference known.
    """
    A.set_src_size(_aipp(s, aipp), width, height)


def _window_api(name: str, cname: str, kind: str, fmt: str = "kbiiiiK") -> Any:
    @acl_api(name, cname, fmt)
    def window(s: S, th: HostThread, cid: int, aipp: int, switch: int, a: int, b: int, c: int,
               d: int, batch_index: int) -> None:
        """Crop (start w, start h, size w, size h), padding (top, bottom, left, right) or
        resize (input w, h, output w, h) of batch ``batch_index``: 100000 for an index not
        below the batch count, a switch other than 0/1 or a value out of range (with the
        switch on).

        Differs from real ACL: no difference known.
        """
        A.set_window(_aipp(s, aipp), kind, switch, a, b, c, d, batch_index)
    return window


set_aipp_crop_params = _window_api("acl.mdl.set_aipp_crop_params", "aclmdlSetAIPPCropParams",
                                   "crop")
set_aipp_padding_params = _window_api("acl.mdl.set_aipp_padding_params",
                                      "aclmdlSetAIPPPaddingParams", "padding")
set_aipp_scf_params = _window_api("acl.mdl.set_aipp_scf_params", "aclmdlSetAIPPScfParams",
                                  "scf")


def _dtc_api(name: str, cname: str, kind: str, fmt: str) -> Any:
    @acl_api(name, cname, fmt)
    def dtc(s: S, th: HostThread, cid: int, aipp: int, c0: float, c1: float, c2: float, c3: float,
            batch_index: int) -> None:
        """Per-channel mean (0..255), min (0..255) or variance reciprocal (-65504..65504)
        of batch ``batch_index``; 100000 for a bad index or a value out of range.

        Differs from real ACL: no difference known.
        """
        A.set_dtc(_aipp(s, aipp), kind, (c0, c1, c2, c3), batch_index)
    return dtc


set_aipp_dtc_pixel_mean = _dtc_api("acl.mdl.set_aipp_dtc_pixel_mean",
                                   "aclmdlSetAIPPDtcPixelMean", "mean", "khhhhK")
set_aipp_dtc_pixel_min = _dtc_api("acl.mdl.set_aipp_dtc_pixel_min",
                                  "aclmdlSetAIPPDtcPixelMin", "min", "kffffK")
set_aipp_pixel_var_reci = _dtc_api("acl.mdl.set_aipp_pixel_var_reci",
                                   "aclmdlSetAIPPPixelVarReci", "var_reci", "kffffK")


@acl_api("acl.mdl.get_aipp_data_size", "aclmdlGetAippDataSize", "K", out=1)
def get_aipp_data_size(s: S, th: HostThread, cid: int, batch_size: int) -> int:
    """``(size, ret)``: bytes of the dynamic AIPP input for ``batch_size`` batches,
    64 + 96 x batch (100000 for batch 0).

    Differs from real ACL: no difference known.
    """
    return A.data_size(batch_size)


def _aipp_model(s: S, model_id: int) -> Any:
    return M.model(s, model_id, M.MODEL_ID_CODE).om


@acl_api("acl.mdl.get_aipp_type", "aclmdlGetAippType", "Ik", out=2,
         default=(0, A.INVALID_NODE_INDEX))
def get_aipp_type(s: S, th: HostThread, cid: int, model_id: int, index: int) -> tuple[int, int]:
    """``(type, dynamic_attached_data_index, ret)`` of input ``index``: 1
    (ACL_DATA_WITH_STATIC_AIPP) for an input converted with a static ``--insert_op_conf``,
    2 (ACL_DATA_WITH_DYNAMIC_AIPP, with the index of its ``ascend_dynamic_aipp_data``
    input) for a dynamic one, 3 (ACL_DYNAMIC_AIPP_NODE) for that input itself, else 0
    (ACL_DATA_WITHOUT_AIPP); the index is 0xFFFFFFFF without dynamic AIPP. 145003 for an
    unknown model, 145000 for an index that names no input (GE GetAippType).

    Differs from real ACL: no difference known.
    """
    return A.aipp_type(_aipp_model(s, model_id), index)


@acl_api("acl.mdl.get_first_aipp_info", "aclmdlGetFirstAippInfo", "Ik", out=1, default=None)
def get_first_aipp_info(s: S, th: HostThread, cid: int,
                        model_id: int, index: int) -> dict[str, Any]:
    """``(aclAippInfo dict, ret)`` of the static AIPP of input ``index``: the configuration
    with camelCase keys (inputFormat, srcImageSizeW, cropSwitch, matrixR0C0, meanChn0, ...),
    the source tensor (srcFormat, srcDatatype, srcDimNum), shapeCount and outDims;
    ``(None, 145015)`` for an input without AIPP, 145003 for an unknown model.

    Differs from real ACL: the keys of the ``outDims`` entries (srcDims, srcSize,
    aippOutdims, aippOutSize) follow the C struct; the binding's spelling is unverified.
    """
    om = _aipp_model(s, model_id)
    return A.first_aipp_info(om, index, len(om.dynamic_batch))


@acl_api("acl.mdl.set_input_aipp", "aclmdlSetInputAIPP", "Ikkk")
def set_input_aipp(s: S, th: HostThread, cid: int, model_id: int, dataset: int, index: int,
                   aipp: int) -> None:
    """Set the dynamic AIPP parameters of the next executions with ``dataset``; ``index``
    is the ``ascend_dynamic_aipp_data`` input (``get_input_index_by_name``). Checks in ACL's
    order (acl_aipp.cpp): 100000 for a null dataset or parameter set; 100011 for an unknown
    model; 145000 for an index that names no input; 100000 when it is not the dynamic AIPP
    input, when the parameters do not fit the model (batch count, max_src_image_size, an
    output size other than the network input's, source size not set) or the dataset has no
    buffer there; 145012 for a buffer smaller than get_aipp_data_size. The parameters are
    written into that buffer (a synchronous host-to-device copy).

    Differs from real ACL: the buffer's byte layout follows kAippDynamicPara but is acl_lab's
    own (the program never reads it); resize (scf) is refused with 100000.
    """
    M.dataset(s, dataset)
    p = _aipp(s, aipp)
    M.model(s, model_id)
    A.set_input(s, th, cid, model_id, dataset, index, p)


@acl_api("acl.mdl.set_aipp_by_input_index", "aclmdlSetAIPPByInputIndex", "Ikkk")
def set_aipp_by_input_index(s: S, th: HostThread, cid: int, model_id: int, dataset: int,
                            index: int, aipp: int) -> None:
    """Set dynamic AIPP parameters through the data input ``index`` (the one a dynamic AIPP
    is linked to): 100000 for a null parameter set, a null dataset or an index with no
    buffer; 145003/145000 from the type lookup; 500000 (ACL_ERROR_FAILURE) when the input has
    no dynamic AIPP linked; then set_input_aipp on the linked ``ascend_dynamic_aipp_data``
    input.

    Differs from real ACL: as set_input_aipp.
    """
    p = _aipp(s, aipp)
    ds = M.dataset(s, dataset)
    if not 0 <= index < len(ds.buffers):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"input param is invalid: the dataset has no buffer at index "
                       f"{index} (it has {len(ds.buffers)})")
    kind, attached = A.aipp_type(_aipp_model(s, model_id), index)
    if kind != A.DATA_WITH_DYNAMIC_AIPP:
        raise AclError(ErrorCode.ACL_ERROR_INTERNAL_ERROR,
                       f"input {index} of model {model_id} has no dynamic AIPP linked")
    A.set_input(s, th, cid, model_id, dataset, attached, p)
