"""``acl_lab.aclnn``: the two-phase aclnn-style extension (numerics, codes, executors, trace)."""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab import aclnn
from acl_lab.acl import _boundary
from acl_lab.runtime.session import Session

H2D, D2H = 1, 2
F32, F16, I32, I8 = 0, 1, 3, 2
DT = {np.dtype("float32"): F32, np.dtype("float16"): F16, np.dtype("int32"): I32,
      np.dtype("int8"): I8}


class Lab:
    """A stream plus helpers that put numpy arrays on the device as aclnn tensors."""

    def __init__(self, acl: ModuleType) -> None:
        self.acl = acl
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0

    def put(self, a: np.ndarray) -> int:
        p, ret = self.acl.rt.malloc(max(a.nbytes, 1), 0)
        assert ret == 0
        if a.nbytes:
            data = np.ascontiguousarray(a).tobytes()
            assert self.acl.rt.memcpy(p, a.nbytes, self.acl.util.bytes_to_ptr(data), a.nbytes,
                                      H2D) == 0
        return int(p)

    def tensor(self, a: np.ndarray) -> tuple[int, int]:
        """(tensor handle, device pointer) holding ``a``."""
        p = self.put(a)
        t = aclnn.create_tensor(list(a.shape), DT[a.dtype], p)
        assert t != 0
        return t, p

    def empty(self, shape: tuple[int, ...], dtype: Any = np.float32) -> tuple[int, int]:
        return self.tensor(np.zeros(shape, dtype=dtype))

    def get(self, p: int, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        out = bytes(n)
        assert self.acl.rt.memcpy(self.acl.util.bytes_to_ptr(out), n, p, n, D2H) == 0
        return np.frombuffer(out, dtype=dtype).reshape(shape)

    def run(self, phase2: Any, ws: int, ex: int) -> int:
        """Allocate the workspace (if any), run phase 2, synchronize; returns phase 2's ret."""
        wp = 0
        if ws:
            wp, ret = self.acl.rt.malloc(ws, 0)
            assert ret == 0
        ret = phase2(wp, ws, ex, self.stream)
        assert self.acl.rt.synchronize_stream(self.stream) == 0
        if wp:
            assert self.acl.rt.free(wp) == 0
        return int(ret)


@pytest.fixture
def lab(ready: ModuleType) -> Lab:
    return Lab(ready)


RNG = np.random.default_rng(7)


def rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------ numerics


@pytest.mark.parametrize(("xs", "ys", "alpha"), [((3, 4), (3, 4), 2.5), ((2, 3, 4), (4,), -1.0),
                                                 ((5, 1), (1, 6), 1.0)])
def test_add_with_alpha(lab: Lab, xs: tuple[int, ...], ys: tuple[int, ...],
                        alpha: float) -> None:
    x, y = rand(*xs), rand(*ys)
    shape = np.broadcast_shapes(xs, ys)
    tx, _ = lab.tensor(x)
    ty, _ = lab.tensor(y)
    to, po = lab.empty(shape)
    a = aclnn.create_scalar(alpha, F32)
    ws, ex, ret = aclnn.add_get_workspace_size(tx, ty, a, to)
    assert (ws, ret) == (0, 0) and ex != 0
    assert lab.run(aclnn.add, ws, ex) == 0
    np.testing.assert_allclose(lab.get(po, shape), x + alpha * y, rtol=1e-6, atol=1e-6)


def test_add_int32_and_float16(lab: Lab) -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    tx, _ = lab.tensor(x)
    ty, _ = lab.tensor(x * 10)
    to, po = lab.empty((3, 4), np.int32)
    ws, ex, ret = aclnn.add_get_workspace_size(tx, ty, aclnn.create_scalar(3, I32), to)
    assert ret == 0
    assert lab.run(aclnn.add, ws, ex) == 0
    assert np.array_equal(lab.get(po, (3, 4), np.int32), x + 3 * (x * 10))

    h = rand(4, 4, dtype=np.float16)
    th, _ = lab.tensor(h)
    to16, po16 = lab.empty((4, 4), np.float16)
    ws, ex, ret = aclnn.add_get_workspace_size(th, th, aclnn.create_scalar(0.5, F32), to16)
    assert ret == 0
    assert lab.run(aclnn.add, ws, ex) == 0
    want = (h.astype(np.float32) * 1.5).astype(np.float16)
    assert np.array_equal(lab.get(po16, (4, 4), np.float16), want)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((4, 5), (5, 3)), ((2, 3, 4), (2, 4, 6)),
                                                  ((2, 3, 4), (4, 2))])
def test_matmul(lab: Lab, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = rand(*a_shape), rand(*b_shape)
    want = a @ b
    ta, _ = lab.tensor(a)
    tb, _ = lab.tensor(b)
    to, po = lab.empty(want.shape)
    ws, ex, ret = aclnn.matmul_get_workspace_size(ta, tb, to, 1)
    assert ret == 0
    assert ws == want.nbytes                         # emulator choice: one output's size
    assert lab.run(aclnn.matmul, ws, ex) == 0
    np.testing.assert_allclose(lab.get(po, want.shape), want, rtol=1e-5, atol=1e-5)


def test_relu(lab: Lab) -> None:
    x = rand(3, 7)
    tx, _ = lab.tensor(x)
    to, po = lab.empty((3, 7))
    ws, ex, ret = aclnn.relu_get_workspace_size(tx, to)
    assert (ws, ret) == (0, 0)
    assert lab.run(aclnn.relu, ws, ex) == 0
    assert np.array_equal(lab.get(po, (3, 7)), np.maximum(x, 0))


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax(lab: Lab, dim: int) -> None:
    x = rand(4, 6) * 3
    tx, _ = lab.tensor(x)
    to, po = lab.empty((4, 6))
    ws, ex, ret = aclnn.softmax_get_workspace_size(tx, dim, to)
    assert ret == 0 and ws == x.nbytes
    assert lab.run(aclnn.softmax, ws, ex) == 0
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    np.testing.assert_allclose(lab.get(po, (4, 6)), e / e.sum(axis=dim, keepdims=True),
                               rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ phase 1 errors


def test_phase1_null_handles_give_161001(lab: Lab) -> None:
    tx, _ = lab.tensor(rand(2, 2))
    to, _ = lab.empty((2, 2))
    a = aclnn.create_scalar(1.0, F32)
    assert aclnn.add_get_workspace_size(0, tx, a, to) == (0, 0, 161001)
    assert aclnn.add_get_workspace_size(tx, tx, 0, to) == (0, 0, 161001)
    assert aclnn.add_get_workspace_size(tx, tx, a, 0) == (0, 0, 161001)
    assert aclnn.matmul_get_workspace_size(tx, 0, to) == (0, 0, 161001)
    assert aclnn.relu_get_workspace_size(0, to) == (0, 0, 161001)
    assert aclnn.softmax_get_workspace_size(tx, -1, 0) == (0, 0, 161001)


def test_phase1_mismatches_give_161002(lab: Lab) -> None:
    acl = lab.acl
    x34, _ = lab.tensor(rand(3, 4))
    x43, _ = lab.tensor(rand(4, 3))
    o34, _ = lab.empty((3, 4))
    o33, _ = lab.empty((3, 3))
    oi, _ = lab.empty((3, 4), np.int32)
    i34, _ = lab.tensor(np.ones((3, 4), np.int32))
    f = aclnn.create_scalar(1.5, F32)
    cases = [
        aclnn.add_get_workspace_size(x34, x43, f, o34),      # do not broadcast
        aclnn.add_get_workspace_size(x34, x34, f, o33),      # out shape
        aclnn.add_get_workspace_size(x34, x34, f, oi),       # float result into int32 out
        aclnn.add_get_workspace_size(i34, i34, f, oi),       # float alpha, int tensors
        aclnn.add_get_workspace_size(x34, x34, x34, o34),    # a tensor where alpha goes
        aclnn.matmul_get_workspace_size(x34, x34, o33),      # K mismatch
        aclnn.matmul_get_workspace_size(x34, x43, o34),      # out shape
        aclnn.matmul_get_workspace_size(x34, x43, o33, 7),   # cube_math_type
        aclnn.relu_get_workspace_size(x34, o33),             # out shape
        aclnn.relu_get_workspace_size(x34, oi),              # out dtype
        aclnn.softmax_get_workspace_size(x34, 2, o34),       # dim out of range
        aclnn.softmax_get_workspace_size(x34, -3, o34),
        aclnn.softmax_get_workspace_size(i34, -1, oi),       # int softmax
    ]
    assert cases == [(0, 0, 161002)] * len(cases)
    v, _ = lab.tensor(rand(4))
    assert aclnn.matmul_get_workspace_size(v, x43, o33)[2] == 161002   # 1-D
    assert "at least 2-D" in acl.get_recent_err_msg()
    assert aclnn.destroy_tensor(o33) == 0
    assert aclnn.relu_get_workspace_size(x34, o33)[2] == 161002        # destroyed tensor


def test_create_tensor_checks(lab: Lab, session: Session) -> None:
    acl = lab.acl
    p = lab.put(np.zeros(16, np.float32))
    assert aclnn.create_tensor([4, 4], F32, 0) == 0                   # null
    assert aclnn.create_tensor([5, 5], F32, p) == 0                   # past the allocation
    assert "needs 100 bytes" in acl.get_recent_err_msg()              # malloc(64) holds 96
    assert aclnn.create_tensor([4, 4], 99, p) == 0                    # unknown dtype
    assert aclnn.create_tensor([4, -1], F32, p) == 0                  # negative dim
    host, _ = acl.rt.malloc_host(64)
    assert aclnn.create_tensor([4], F32, host) == 0                   # host memory
    assert "device memory" in acl.get_recent_err_msg()
    with pytest.raises(TypeError, match="args parse failed"):
        aclnn.create_tensor("4x4", F32, p)
    t = aclnn.create_tensor([3], F32, p + 4, 2)                        # misaligned: a warning
    assert t != 0
    tr = session.trace()
    kinds = [tr.string(int(k)) for k in tr.diags["kind"]]
    assert "misaligned_tensor" in kinds
    assert aclnn.create_tensor((2, 2), F32, p + 32) != 0               # tuples are fine
    assert aclnn.destroy_tensor(t) == 0
    assert aclnn.destroy_tensor(t) == 161002
    assert aclnn.destroy_tensor(0) == 161001


def test_create_scalar_checks(ready: ModuleType) -> None:
    assert aclnn.create_scalar(2.5, I32) == 0
    assert aclnn.create_scalar(2, 99) == 0
    with pytest.raises(TypeError):
        aclnn.create_scalar("2", F32)
    s = aclnn.create_scalar(np.float32(2.0), F32)
    assert s != 0
    assert aclnn.destroy_scalar(s) == 0
    assert aclnn.destroy_scalar(s) == 161002
    assert aclnn.destroy_scalar(0) == 161001


# ------------------------------------------------------------------ phase 2 and executors


def _matmul_executor(lab: Lab) -> tuple[int, int, np.ndarray, int]:
    a, b = rand(4, 5), rand(5, 3)
    ta, _ = lab.tensor(a)
    tb, _ = lab.tensor(b)
    to, po = lab.empty((4, 3))
    ws, ex, ret = aclnn.matmul_get_workspace_size(ta, tb, to)
    assert ret == 0
    return ws, ex, a @ b, po


def test_phase2_workspace_checks(lab: Lab) -> None:
    acl = lab.acl
    ws, ex, want, po = _matmul_executor(lab)
    assert ws > 0
    wp, _ = acl.rt.malloc(ws, 0)
    st = lab.stream
    assert aclnn.matmul(wp, ws - 1, ex, st) == 161002                 # too small a size
    assert aclnn.matmul(0, ws, ex, st) == 161002                      # null workspace
    host, _ = acl.rt.malloc_host(ws)
    assert aclnn.matmul(host, ws, ex, st) == 161002                   # host workspace
    small, _ = acl.rt.malloc(8, 0)                                    # 64 bytes after rounding
    assert aclnn.matmul(small + 32, ws, ex, st) == 161002             # 32 left, 48 needed
    assert aclnn.matmul(wp, ws, 0, st) == 161001                      # null executor
    assert aclnn.relu(wp, ws, ex, st) == 161002                       # another op's executor
    assert aclnn.matmul(wp, ws + 100, ex, st) == 0                    # larger is fine
    assert acl.rt.synchronize_stream(st) == 0
    np.testing.assert_allclose(lab.get(po, (4, 3)), want, rtol=1e-5, atol=1e-5)


def test_single_use_executor_is_consumed(lab: Lab) -> None:
    acl = lab.acl
    ws, ex, _, _ = _matmul_executor(lab)
    wp, _ = acl.rt.malloc(ws, 0)
    assert aclnn.matmul(wp, ws, ex, lab.stream) == 0
    assert aclnn.matmul(wp, ws, ex, lab.stream) == 561103             # approximate code
    assert "single-use" in acl.get_recent_err_msg()
    assert aclnn.set_executor_repeatable(ex) == 561103
    assert aclnn.destroy_executor(ex) == 561103
    assert acl.rt.synchronize_stream(lab.stream) == 0
    assert acl.rt.free(wp) == 0


def test_repeatable_executor_runs_many_times(lab: Lab) -> None:
    acl = lab.acl
    x = rand(2, 8)
    tx, px = lab.tensor(x)
    to, po = lab.empty((2, 8))
    _, ex, ret = aclnn.relu_get_workspace_size(tx, to)
    assert ret == 0
    assert aclnn.set_executor_repeatable(ex) == 0
    for k in range(3):
        data = (x - k).astype(np.float32)
        assert acl.rt.memcpy(px, data.nbytes, acl.util.bytes_to_ptr(data.tobytes()),
                             data.nbytes, H2D) == 0
        assert aclnn.relu(0, 0, ex, lab.stream) == 0
        assert acl.rt.synchronize_stream(lab.stream) == 0
        assert np.array_equal(lab.get(po, (2, 8)), np.maximum(data, 0))
    assert aclnn.destroy_executor(ex) == 0
    assert aclnn.relu(0, 0, ex, lab.stream) == 561103
    assert aclnn.destroy_executor(ex) == 561103
    assert aclnn.destroy_executor(0) == 161001
    assert aclnn.set_executor_repeatable(0) == 561103
    assert aclnn.set_executor_repeatable(tx) == 161002


def test_unused_single_use_executor_can_be_destroyed(lab: Lab) -> None:
    ws, ex, _, _ = _matmul_executor(lab)
    assert aclnn.destroy_executor(ex) == 0
    assert aclnn.matmul(0, ws, ex, lab.stream) == 561103


def test_freeing_the_workspace_before_sync_fails_the_op(lab: Lab) -> None:
    acl = lab.acl
    ws, ex, _, _ = _matmul_executor(lab)
    wp, _ = acl.rt.malloc(ws, 0)
    assert aclnn.matmul(wp, ws, ex, lab.stream) == 0
    assert acl.rt.free(wp) == 0                                       # too early
    assert acl.rt.synchronize_stream(lab.stream) == 507053


def test_phase2_needs_a_context(acl: ModuleType) -> None:
    assert acl.init() == 0
    assert aclnn.relu(0, 0, 0, 0) == 161001


# ------------------------------------------------------------------ trace


def test_calls_are_traced_and_a_leaked_workspace_is_found(lab: Lab, session: Session) -> None:
    acl = lab.acl
    ws, ex, _, _ = _matmul_executor(lab)
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    wp, ret = acl.rt.malloc(ws, 0)
    assert ret == 0
    assert aclnn.matmul(wp, ws, ex, lab.stream) == 0
    assert acl.rt.synchronize_stream(lab.stream) == 0
    t = session.trace()
    names = {t.call_name(i) for i in range(t.calls.rows)}
    assert {"acl_lab.aclnn.create_tensor", "acl_lab.aclnn.matmul_get_workspace_size",
            "acl_lab.aclnn.matmul"} <= names
    assert _boundary.c_name("acl_lab.aclnn.matmul") == "aclnnMatmul"
    assert _boundary.c_name("acl_lab.aclnn.add_get_workspace_size") == "aclnnAddGetWorkspaceSize"
    leaks = [f for f in t.findings() if f.kind == "leak" and f.line == line
             and Path(f.file) == Path(__file__)]
    assert len(leaks) == 1
    assert "acl.rt.malloc" in leaks[0].message
    kernels = [i for i in range(t.tasks.rows) if int(t.tasks["call"][i]) >= 0
               and t.call_name(int(t.tasks["call"][i])) == "acl_lab.aclnn.matmul"]
    assert len(kernels) == 1


def test_every_aclnn_function_documents_itself() -> None:
    entries = {k: v for k, v in _boundary.registry().items() if k.startswith("acl_lab.aclnn.")}
    assert len(entries) == 14
    for name, entry in entries.items():
        doc = inspect.getdoc(entry["impl"]) or ""
        assert "Differs from real ACL" in doc, name
    assert "no aclnn binding" in (aclnn.__doc__ or "")
