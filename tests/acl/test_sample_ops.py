"""The operators the public samples' single-op models name and acl_lab lacked (issue 12 §2):
``Slice`` (4_op_dev/2_verify_op/acl_execute_slice) and ``ArgMaxV2`` (the classification
sample's op_list.json), through acl.op with const inputs as the samples pass them; results
against numpy, and GE's argument checks as codes."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np

from acl_lab.constants import ACL_SUCCESS
from acl_lab.runtime.opdefs import get_op
from tests.acl.test_op import execute, prepare, run_op
from tests.helpers import compile_singleop


def test_slice_takes_offsets_and_size_consts(ready: ModuleType) -> None:
    """Slice(x [6, 8], offsets [1, 2], size [3, -1]) is x[1:4, 2:]."""
    x = np.arange(48, dtype=np.float16).reshape(6, 8)
    off, size = np.array([1, 2], np.int32), np.array([3, -1], np.int32)
    [y] = run_op(ready, "Slice", [x, off, size], [((3, 6), np.float16)],
                 consts={1: off, 2: size})
    np.testing.assert_array_equal(y, x[1:4, 2:])


def test_slice_of_the_whole_input_like_the_sample(ready: ModuleType) -> None:
    """The sample's call: ones [600, 3000] float16, offsets 0, size = the shape: a copy."""
    x = np.ones((600, 3000), np.float16)
    off, size = np.zeros(2, np.int32), np.array([600, 3000], np.int32)
    [y] = run_op(ready, "Slice", [x, off, size], [((600, 3000), np.float16)],
                 consts={1: off, 2: size})
    assert y.shape == (600, 3000) and bool((y == 1).all())


def test_slice_out_of_range_is_invalid_param(ready: ModuleType) -> None:
    """offset + size past the dimension: 100000 and nothing runs."""
    x = np.zeros((4, 4), np.float32)
    off, size = np.array([2, 0], np.int32), np.array([3, 4], np.int32)
    args = prepare(ready, [x, off, size], [((3, 4), np.float32)], consts={1: off, 2: size})
    assert execute(ready, "Slice", args) == 100000


def test_slice_output_desc_that_does_not_match_is_op_not_found(ready: ModuleType) -> None:
    """An output desc of another shape than the slice: no compiled op matches (100024)."""
    x = np.zeros((4, 4), np.float32)
    off, size = np.array([0, 0], np.int32), np.array([2, 2], np.int32)
    args = prepare(ready, [x, off, size], [((4, 4), np.float32)], consts={1: off, 2: size})
    assert execute(ready, "Slice", args) == 100024


def test_argmax_v2_of_the_sample_gives_int32_shape_1(ready: ModuleType) -> None:
    """ArgMaxV2(x float16 [1000], dimension const [0]) -> int32 [1], the largest's index;
    the first index on ties."""
    x = np.zeros(1000, np.float16)
    x[[417, 900]] = 5
    dim = np.array([0], np.int32)
    [y] = run_op(ready, "ArgMaxV2", [x, dim], [((1,), np.int32)], consts={1: dim})
    assert y.tolist() == [417]


def test_argmax_v2_along_an_axis_with_int64_output(ready: ModuleType) -> None:
    """x [3, 5] along dimension 1 with attr dtype int64 (9): shape [3] int64."""
    x = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
    dim = np.array([1], np.int32)

    def attrs(acl: ModuleType, attr: int) -> None:
        assert acl.op.set_attr_data_type(attr, "dtype", 9)[-1] == ACL_SUCCESS

    [y] = run_op(ready, "ArgMaxV2", [x, dim], [((3,), np.int64)], attrs, consts={1: dim})
    np.testing.assert_array_equal(y, x.argmax(axis=1))


def test_argmax_v2_bad_dimension_is_refused(ready: ModuleType) -> None:
    """A dimension past the rank is refused before anything runs."""
    x = np.zeros((2, 3), np.float32)
    dim = np.array([2], np.int32)
    args = prepare(ready, [x, dim], [((2,), np.int32)], consts={1: dim})
    assert execute(ready, "ArgMaxV2", args) != ACL_SUCCESS


def test_costs_count_the_bytes_moved() -> None:
    """Slice moves bytes only (0 FLOPs); ArgMaxV2 one compare per input element."""
    from acl_lab.runtime.opdefs import TensorSpec
    sl = get_op("Slice")
    ins = [TensorSpec("float32", (4, 4)), TensorSpec("int32", (2,)), TensorSpec("int32", (2,))]
    outs = [TensorSpec("float32", (2, 2))]
    assert sl.cost(ins, outs, {}) == (0, 64 + 8 + 8 + 16)
    am = get_op("ArgMaxV2")
    ins2 = [TensorSpec("float16", (1000,)), TensorSpec("int32", (1,))]
    flops, nbytes = am.cost(ins2, [TensorSpec("int32", (1,))], {})
    assert flops == 1000 and nbytes == 2000 + 4 + 4


def test_slice_on_the_board_takes_host_buffers_as_the_sample_does(tmp_path: Path) -> None:
    """In the device run mode (RC), the Slice sample's way works: every input in host memory
    (bytes_to_ptr), the output read straight from device memory with ptr_to_bytes."""
    import acl_lab
    from acl_lab.runtime.session import Session
    with Session(watchdog=2.0, run_mode="device"):
        acl = acl_lab.install()
        try:
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            stream, _ = acl.rt.create_stream()
            descs = [acl.create_tensor_desc(1, [6, 8], 2), acl.create_tensor_desc(3, [2], 2),
                     acl.create_tensor_desc(3, [2], 2)]
            out_desc = acl.create_tensor_desc(1, [2, 8], 2)
            size = acl.get_tensor_desc_size(out_desc)
            dev, _ = acl.rt.malloc(size, 0)
            x = np.arange(48, dtype=np.float16).reshape(6, 8)
            keep = [x.tobytes(), np.array([3, 0], np.int32).tobytes(),
                    np.array([2, 8], np.int32).tobytes()]
            bufs = [acl.create_data_buffer(acl.util.bytes_to_ptr(b), len(b)) for b in keep]
            attr = acl.op.create_attr()
            ops = compile_singleop(tmp_path, "Slice", [([6, 8], "float16"), ([2], "int32"),
                                                       ([2], "int32")], [([2, 8], "float16")])
            assert acl.op.set_model_dir(str(ops)) == 0
            handle, ret = acl.op.create_handle("Slice", descs, [out_desc], attr)
            assert ret == 0
            out = acl.create_data_buffer(dev, size)
            assert acl.op.execute_with_handle(handle, bufs, [out], stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            got = np.frombuffer(acl.util.ptr_to_bytes(dev, size), np.float16).reshape(2, 8)
            np.testing.assert_array_equal(got, x[3:5])
        finally:
            acl_lab.uninstall()
