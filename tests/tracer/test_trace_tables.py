"""The Trace declares its tables: one typed attribute per table of the schema."""

from __future__ import annotations

import copy
import pickle
import typing

import pytest

from acl_lab.runtime.session import Session
from acl_lab.tracer import schema
from acl_lab.tracer.trace import Table, Trace


def _trace() -> Trace:
    with Session(watchdog=5.0) as s:
        return s.finish()


def test_declared_tables_are_the_schemas() -> None:
    """Trace's annotations name exactly the schema's tables, in its order, each a Table."""
    hints = typing.get_type_hints(Trace, globals(), {"Table": Table})
    declared = [n for n, h in hints.items() if h is Table]
    assert declared == list(schema.TABLES)


def test_each_table_attribute_is_the_frozen_table_with_the_schemas_columns() -> None:
    """``trace.<name>`` is ``trace.tables[name]`` and holds the schema's columns."""
    trace = _trace()
    for name, cols in schema.TABLES.items():
        table = getattr(trace, name)
        assert table is trace.tables[name]
        assert list(table) == [c.name for c in cols]
    with pytest.raises(AttributeError):
        trace.task  # type: ignore[attr-defined]  # noqa: B018  (a misspelt table)


def test_a_trace_without_a_schema_table_is_refused() -> None:
    """Building a Trace from tables that miss one of the schema's is a ValueError."""
    trace = _trace()
    tables = dict(trace.tables)
    del tables["syncs"]
    with pytest.raises(ValueError, match="syncs"):
        Trace(list(trace.strings), tables, trace.meta)


def test_copies_keep_the_tables() -> None:
    """A copied or pickled trace has the same table attributes."""
    trace = _trace()
    for other in (copy.deepcopy(trace), pickle.loads(pickle.dumps(trace))):
        assert other.tasks.rows == trace.tasks.rows and list(other.calls) == list(trace.calls)
