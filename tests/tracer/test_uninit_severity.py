"""What a read of never-written bytes means, at the right severity (issue 12 §4(a)).

- A copy is not itself a bug: copying a dynamic-batch model's whole max-batch output after a
  smaller batch (acllite does) moves never-written rows beside written ones: info.
  A copy of nothing but never-written bytes: a warning (the destination is garbage).
- A model whose input's never-written part is whole trailing batch rows (the partial last
  batch of a loop, on a fresh buffer): a warning saying those rows' outputs are garbage.
- A model or op computing with any other never-written bytes (half a row, holes): an error.
The trace's ``uninit.first`` column (first never-written offset) tells a trailing run from
holes; the ``model_loaded`` note gives the bytes per batch row.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from acl_lab import zoo
from acl_lab.constants import ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.runtime.memory import first_unwritten
from acl_lab.runtime.models import SHAPE_DATA_NAME
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import run_checks
from acl_lab.tracer.checks.memory import batch_rows
from tests.acl.test_mdl import from_device, load, ok, to_device

ROW = 784 * 4  # bytes of one mlp input row (float32 [., 784])


def uninit(session: Session) -> list:
    """The uninitialized_read findings so far."""
    return [f for f in run_checks(session.trace()) if f.kind == "uninitialized_read"]


def test_first_unwritten_skips_written_ranges() -> None:
    """The first offset at or after start outside the sorted written ranges."""
    assert first_unwritten([], 5) == 5
    assert first_unwritten([[0, 10]], 0) == 10
    assert first_unwritten([[0, 10], [10, 20]], 3) == 20
    assert first_unwritten([[0, 10], [15, 20]], 12) == 12
    assert first_unwritten([[4, 8]], 0) == 0


def test_uninit_table_records_the_first_unwritten_offset(ready: ModuleType,
                                                         session: Session) -> None:
    """A copy of [16, 64) after memset of [0, 40): uninit.first is 40, bytes 24."""
    dev = ok(ready.rt.malloc(64, 0))
    assert ready.rt.memset(dev, 64, 1, 40) == 0
    host = ok(ready.rt.malloc_host(48))
    assert ready.rt.memcpy(host, 48, dev + 16, 48, 2) == 0
    un = session.trace().uninit
    assert un.rows == 1 and int(un["first"][0]) == 40 and int(un["bytes"][0]) == 24


def test_model_load_note_gives_bytes_per_batch_row(ready: ModuleType,
                                                   session: Session) -> None:
    """The static mlp (batch 8) has rows of 784 float32; lenet5 (batch 1) none."""
    m = load(ready, "mlp")
    ln = load(ready, "lenet5")
    rows = batch_rows(session.trace())
    assert rows[m.mid] == {0: ROW} and rows[ln.mid] == {}


def test_partial_last_batch_on_a_fresh_buffer_is_a_warning(ready: ModuleType,
                                                           session: Session) -> None:
    """Three of the static mlp's eight rows copied in, then execute: the five trailing rows
    were never written: a warning naming the rows and that their outputs are garbage."""
    m = load(ready, "mlp")
    to_device(ready, m.in_ptrs[0], np.ones((3, 784), np.float32))
    assert m.execute() == 0
    (f,) = uninit(session)
    assert f.severity == "warning"
    assert f"rows of {ROW} bytes" in f.message and "the last 5 were never filled" in f.message
    assert "must not be used" in f.message


def test_half_a_row_missing_is_an_error(ready: ModuleType, session: Session) -> None:
    """2.5 rows copied in: the never-written part is not whole rows: an error."""
    m = load(ready, "mlp")
    to_device(ready, m.in_ptrs[0], np.ones(784 * 2 + 392, np.float32))
    assert m.execute() == 0
    (f,) = uninit(session)
    assert f.severity == "error" and "computing with it" in f.message


def test_a_hole_in_the_input_is_an_error(ready: ModuleType, session: Session) -> None:
    """Rows 0 and 2..7 written, row 1 not: holes, not a trailing run: an error."""
    m = load(ready, "mlp")
    to_device(ready, m.in_ptrs[0], np.ones((1, 784), np.float32))
    rest = np.ones((6, 784), np.float32).tobytes()
    assert ready.rt.memcpy(m.in_ptrs[0] + 2 * ROW, 6 * ROW, ready.util.bytes_to_ptr(rest),
                           6 * ROW, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert m.execute() == 0
    (f,) = uninit(session)
    assert f.severity == "error"


def test_copying_the_whole_max_batch_output_is_info(ready: ModuleType,
                                                    session: Session) -> None:
    """mlp_dynamic at batch 2 writes 2 of the 8 output rows; copying the whole max-batch
    output back (as acllite does) is info, and the rows used are right."""
    m = load(ready, "mlp_dynamic")
    idx = ok(ready.mdl.get_input_index_by_name(m.desc, SHAPE_DATA_NAME))
    assert ready.mdl.set_dynamic_batch_size(m.mid, m.in_ds, idx, 2) == 0
    x = np.random.default_rng(0).standard_normal((2, 784)).astype(np.float32)
    to_device(ready, m.in_ptrs[0], x)
    assert m.execute() == 0
    out = from_device(ready, m.out_ptrs[0], m.out_size()).reshape(8, 10)
    want = zoo.build("mlp_dynamic").run([x], batch=2)[0]
    np.testing.assert_allclose(out[:2], want, rtol=1e-5, atol=1e-5)
    (f,) = uninit(session)
    assert f.severity == "info" and "not itself a bug" in f.message
    assert f"{6 * 10 * 4} bytes" in f.message
    # (the test frees nothing: leaks aside, nothing is an error)
    assert not [g for g in run_checks(session.trace())
                if g.severity == "error" and g.kind != "leak"]


def size_mismatches(session: Session) -> list:
    """The size_mismatch findings so far."""
    return [f for f in run_checks(session.trace()) if f.kind == "size_mismatch"]


def test_partial_last_batch_of_a_loop_is_a_warning_not_an_error(ready: ModuleType,
                                                                 session: Session) -> None:
    """A loop of 8, 8, then 3 rows into the static mlp's one input buffer: the last copy
    fills whole rows and the rest is the previous batch: one size_mismatch warning (no
    error) saying to use only the first 3 output rows; no uninitialized_read at all."""
    m = load(ready, "mlp")
    for n in (8, 8, 3):
        to_device(ready, m.in_ptrs[0], np.ones((n, 784), np.float32))
        assert m.execute() == 0
    (f,) = size_mismatches(session)
    assert f.severity == "warning" and "partial last batch" in f.message
    assert "use only the first 3 output rows" in f.message
    assert uninit(session) == []


def test_a_short_copy_that_is_not_whole_rows_stays_an_error(ready: ModuleType,
                                                            session: Session) -> None:
    """The same loop ending with 2.5 rows: size_mismatch error (stale half row)."""
    m = load(ready, "mlp")
    for n in (8 * 784, 2 * 784 + 392):
        to_device(ready, m.in_ptrs[0], np.ones(n, np.float32))
        assert m.execute() == 0
    (f,) = size_mismatches(session)
    assert f.severity == "error" and "partial last batch" not in f.message
