"""The call-table view: one row per call, decoded, failed calls tinted, filters."""

from __future__ import annotations

from types import ModuleType

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer.views import PlotStyle, call_table
from acl_lab.tracer.views.call_table import (
    CELL_CHAR_PX,
    COLUMN_WIDTHS,
    COLUMNS,
    THREAD_NAME_MAX,
    column_widths,
)
from acl_lab.tracer.views.timeline import HEX_FROM, format_arg


def _program(session: Session, acl: ModuleType) -> None:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    ptr, ret = acl.rt.malloc(100, 0)
    assert ret == 0
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) != 0          # double free: a failed call
    _, ret = acl.rt.malloc(0, 0)          # size 0: 100000
    assert ret == 100000
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0


def _cells(fig) -> dict[str, list]:
    table = fig.data[0]
    return dict(zip(table.header.values, table.cells.values, strict=True))


def test_one_row_per_call_with_names_codes_and_sites(session: Session, acl: ModuleType) -> None:
    _program(session, acl)
    trace = session.trace()
    fig = call_table(trace)
    cells = _cells(fig)
    assert list(fig.data[0].header.values) == list(COLUMNS)
    assert cells["call"] == list(range(trace.calls.rows))
    apis = cells["API (C name)"]
    assert "acl.rt.malloc (aclrtMalloc)" in apis
    assert apis.count("acl.rt.free (aclrtFree)") == 2
    rets = cells["ret"]
    size0 = apis.index("acl.rt.malloc (aclrtMalloc)", apis.index("acl.rt.free (aclrtFree)"))
    assert rets[size0].startswith("100000 ")
    assert all(site.endswith(".py:" + site.rsplit(":", 1)[1]) for site in cells["file:line"])
    assert __file__.rsplit("/", 1)[1] in cells["file:line"][0]
    # The malloc(100, 0) row shows its arguments.
    assert cells["arguments"][apis.index("acl.rt.malloc (aclrtMalloc)")] == "100, 0"


def test_failed_rows_are_tinted_and_can_be_filtered(session: Session, acl: ModuleType) -> None:
    _program(session, acl)
    trace = session.trace()
    style = PlotStyle()
    fills = call_table(trace).data[0].cells.fill.color[0]
    rets = trace.calls["ret"]
    assert [f == style.error_row_color for f in fills] == [int(r) != 0 for r in rets]
    errors = call_table(trace, only_errors=True)
    cells = _cells(errors)
    assert len(cells["call"]) == int((rets != 0).sum()) == 2
    assert all(r != "0" for r in cells["ret"])
    frees = _cells(call_table(trace, name="acl.rt.free"))
    assert frees["API (C name)"] == ["acl.rt.free (aclrtFree)"] * 2


def test_max_rows_caps_the_table_and_says_so(session: Session, acl: ModuleType) -> None:
    _program(session, acl)
    trace = session.trace()
    fig = call_table(trace, max_rows=3)
    assert _cells(fig)["call"] == [0, 1, 2]
    assert f"API calls: {trace.calls.rows} (first 3 shown)" in fig.layout.title.text


def test_reachable_from_acl_lab() -> None:
    assert acl_lab.call_table is call_table


def test_thread_names_are_whole_and_the_column_fits_them(session: Session,
                                                         acl: ModuleType) -> None:
    """``MainThread`` and a worker's name appear whole, the thread column is wide enough for
    them (never ``MainThrea``); only a name past ``THREAD_NAME_MAX`` ends in an ellipsis."""
    import threading

    _program(session, acl)
    long_name = "decode-worker-" + "x" * THREAD_NAME_MAX
    worker = "ThreadPoolExecutor-0_3"

    def work() -> None:
        assert acl.rt.set_device(0) == 0
        assert acl.rt.reset_device(0) == 0

    for name in (worker, long_name):
        t = threading.Thread(target=work, name=name)
        t.start()
        t.join()
    fig = call_table(session.trace())
    names = set(_cells(fig)["thread"])
    shortened = long_name[:THREAD_NAME_MAX - 1] + "\u2026"
    assert names == {"MainThread", worker, shortened}
    assert len(shortened) == THREAD_NAME_MAX
    widths = list(fig.data[0].columnwidth)
    thread_width = widths[COLUMNS.index("thread")]
    assert thread_width >= THREAD_NAME_MAX * CELL_CHAR_PX
    # the other columns keep their widths, so the thread column's share grows
    assert widths[COLUMNS.index("arguments")] == COLUMN_WIDTHS["arguments"]
    assert column_widths(["MainThread"])[COLUMNS.index("thread")] == COLUMN_WIDTHS["thread"]
    assert len("MainThread") * CELL_CHAR_PX < COLUMN_WIDTHS["thread"]


def test_execute_v2_buffer_lists_print_in_hex_like_single_pointers(session: Session,
                                                                   acl: ModuleType) -> None:
    """``execute_v2``'s descriptor and buffer lists print their handles in hex, as the single
    pointer and handle arguments of every other row do; no large decimal is left."""
    import re

    import numpy as np

    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    n = 16
    data = np.arange(n, dtype=np.int32).tobytes()
    descs, bufs = [], []
    for _ in range(3):
        ptr, ret = acl.rt.malloc(len(data), 0)
        assert ret == 0
        assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == 0
        descs.append(acl.create_tensor_desc(3, [n], 2))
        bufs.append(acl.create_data_buffer(ptr, len(data)))
    attr = acl.op.create_attr()
    assert acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:], attr,
                             stream) == 0
    cells = _cells(call_table(session.trace(), name="acl.op.execute_v2"))
    (text,) = cells["arguments"]
    assert f"[{bufs[0]:#x}, {bufs[1]:#x}]" in text and f"[{bufs[2]:#x}]" in text
    assert f"[{descs[0]:#x}, {descs[1]:#x}]" in text
    assert f"{attr:#x}" in text
    big_decimals = [t for t in re.findall(r"(?<![\w.])\d+(?![\w.])", text)
                    if int(t) >= HEX_FROM]
    assert big_decimals == [], text


def test_format_arg_keeps_small_ints_and_hexes_truncated_lists() -> None:
    """Counts stay decimal inside a list; a list cut short by the recorder still hexes the
    ints it kept; plain text stays quoted."""
    trace = None  # only pointer tuples need the trace
    assert format_arg(trace, "[1, 2, 3]") == "[1, 2, 3]"
    big = 20203526160384
    assert format_arg(trace, f"[{big}, {big + 64}, 2023...") == f"[{big:#x}, {big + 64:#x}, 2023..."
    assert format_arg(trace, f"({big}, 1.5e10)") == f"({big:#x}, 1.5e10)"
    assert format_arg(trace, big) == f"{big:#x}" and format_arg(trace, 64) == "64"
    assert format_arg(trace, "Add") == "'Add'"
