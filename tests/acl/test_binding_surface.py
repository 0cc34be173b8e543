"""The binding's surface, machine-checked against its method table (``acl_lab.acl._binding``).

Every entry of the real binding's 739-entry method table is either emulated (registered at the
boundary, with the table's argument rule: count, optional part, ignored arguments and the
integer/str/object kind of each position) or an attribute that raises ``NotImplementedError``
naming it and saying why. The status of each entry is read from the live registration, so the
list stays right while functions are added (acl.media grows beside this work).
"""

from __future__ import annotations

from collections import Counter
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
import acl_lab.acl as emulated
from acl_lab.acl import _binding as B
from acl_lab.acl._boundary import _parse, registry
from acl_lab.constants import ACL_SUCCESS
from acl_lab.runtime.session import Session

#: letters that behave the same in CPython's getargs on the 64-bit Linux targets, and
#: acl_lab's refinements (p: a k that is a pointer, C: an O that must be callable)
_SAME = str.maketrans({"K": "k", "p": "k", "l": "L", "d": "f", "C": "O"})


def _norm(fmt: str | None) -> str | None:
    return None if fmt is None else fmt.translate(_SAME)


def _acl_registry() -> dict[str, dict[str, Any]]:
    return {n: e for n, e in registry().items() if n == "acl" or n.startswith("acl.")}


def _module(prefix: str) -> Any:
    return emulated if prefix == "acl" else getattr(emulated, prefix.split(".", 1)[1])


def _fresh(fn: Any, *args: Any) -> tuple[Any, BaseException | None, Any]:
    """Call ``fn(*args)`` in a new session: (result, exception, trace)."""
    s = Session(watchdog=2.0)
    with s:
        acl_lab.install()
        try:
            return fn(*args), None, s.trace()
        except Exception as e:  # the test looks at which one
            return None, e, s.trace()
        finally:
            acl_lab.uninstall()


# ------------------------------------------------------------------------------ the table


def test_table_is_the_reference_table() -> None:
    """739 entries with the reference's per-module counts, 53 that parse nothing, unique
    names, and the USE_MDL rows where the reference puts them."""
    assert len(B.TABLE) == 739
    counts = Counter(e.module for e in B.TABLE)
    assert counts == {"acl": 47, "acl.rt": 190, "acl.mdl": 86, "acl.op": 32, "acl.util": 7,
                      "acl.media": 177, "acl.prof": 36, "acl.blas": 12, "acl.fv": 22,
                      "acl.himpi": 130}
    assert len(B.BY_NAME) == 739
    assert sum(e.fmt is None for e in B.TABLE) == 53
    assert Counter(e.module for e in B.TABLE if e.mdl_only) == {"acl.rt": 8, "acl.mdl": 3,
                                                                 "acl.media": 13}
    assert set(B.SAMPLE_CALLED) <= set(B.BY_NAME)


def test_every_emulated_function_is_a_binding_entry() -> None:
    """acl_lab registers no pyACL name the real binding does not have."""
    extra = sorted(set(_acl_registry()) - set(B.BY_NAME))
    assert not extra, f"not in the binding's method table: {extra}"


def test_emulated_argument_rules_match_the_table() -> None:
    """Each emulated function parses like its table row: the same letters (count, optional
    part, what each position accepts), or nothing at all for a wrapper that parses nothing;
    and it names the same C function."""
    wrong = []
    for name, entry in sorted(_acl_registry().items()):
        row = B.BY_NAME[name]
        got = _norm(entry["fmt"] or None)
        if got != _norm(row.fmt):
            wrong.append(f"{name}: emulator {entry['fmt']!r}, binding {row.fmt!r}")
        if row.cname.startswith("acl") and row.cname.isidentifier() \
                and entry["cname"] != row.cname:
            wrong.append(f"{name}: C name {entry['cname']}, binding {row.cname}")
    assert not wrong, "\n".join(wrong)


def _table_shape(returns: str) -> int | str:
    """The boundary's ``out`` for a table row's return text: 0 for ``ret``, n for a tuple of n
    values and the code (errno counts as the code), "none" for None, "value" otherwise (a bare
    value, or a tuple that is all value such as ``(ptr, contiguous_array)``)."""
    r = returns.split(";")[0].split(" / ")[0].strip()
    if r in ("ret", "errno int"):
        return 0
    if r.startswith("None"):
        return "none"
    if not r.startswith("("):
        return "value"
    depth, items, cur = 0, [], ""
    for ch in r[1:]:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    items.append(cur.strip())
    if items[-1] in ("ret", "errno"):
        return len(items) - 1
    return "value"


def test_return_shapes_match_the_table() -> None:
    """Each emulated function returns what its row builds: ret, (v..., ret), a bare value or
    None."""
    wrong = []
    for name, entry in sorted(_acl_registry().items()):
        want = _table_shape(B.BY_NAME[name].returns)
        if entry["out"] != want:
            wrong.append(f"{name}: out={entry['out']!r}, the binding returns "
                         f"{B.BY_NAME[name].returns!r}")
    assert not wrong, "\n".join(wrong)


def test_every_entry_exists_and_the_rest_raise_not_implemented() -> None:
    """No AttributeError anywhere on the surface: an entry acl_lab does not emulate raises
    NotImplementedError("acl.x.y is not emulated by acl_lab: <why>") and records nothing."""
    reg = _acl_registry()
    stubs = 0
    for e in B.TABLE:
        fn = getattr(_module(e.module), e.name)  # AttributeError fails the test
        if e.full in reg:
            continue
        stubs += 1
        with pytest.raises(NotImplementedError) as info:
            fn(0, 0)
        text = str(info.value)
        assert text.startswith(f"{e.full} is not emulated by acl_lab: "), text
        assert text == f"{e.full} is not emulated by acl_lab: {B.reason(e.full)}"
    assert stubs == 739 - len(reg)


def test_status_list_covers_every_entry() -> None:
    """The status list: every entry is emulated or has a reason; sample-called entries are
    emulated (acl.media's may still be in progress, and then say so)."""
    reg = _acl_registry()
    statuses = {e.full: B.status(e.full, reg) for e in B.TABLE}
    assert all(v == "emulated" or v.startswith("not emulated: ") for v in statuses.values())
    missing = sorted(n for n in B.SAMPLE_CALLED
                     if statuses[n] != "emulated" and not n.startswith("acl.media."))
    assert not missing, f"a public sample calls these and they are not emulated: {missing}"
    for n in B.SAMPLE_CALLED:
        if n.startswith("acl.media.") and statuses[n] != "emulated":
            assert "media work in progress" in statuses[n]
    assert sum(v == "emulated" for v in statuses.values()) == len(reg)


def test_submodules_import_like_the_binding(acl: ModuleType) -> None:
    """``import acl.prof`` (and the other submodules) works once acl is installed."""
    import importlib

    for sub in ("rt", "mdl", "op", "util", "media", "prof", "blas", "fv", "himpi"):
        mod = importlib.import_module(f"acl.{sub}")
        assert mod is getattr(acl, sub)


# ------------------------------------------------------------------------------ arguments


@pytest.mark.parametrize("name", sorted(n for n, e in _acl_registry().items() if not e["fmt"]))
def test_wrappers_that_parse_nothing_ignore_extra_arguments(name: str) -> None:
    """The 53 wrappers that parse nothing accept and ignore any positional arguments: the
    call with junk arguments gives what the call without arguments gives."""
    fn = emulated_fn(name)
    plain, err0, t0 = _fresh(fn)
    junk, err1, t1 = _fresh(fn, 0, "x", None, [1])
    assert not isinstance(err1, TypeError), f"{name}(0, 'x', None, [1]) raised {err1!r}"
    assert type(err0) is type(err1)
    assert type(plain) is type(junk)
    assert t1.call_name(t1.calls.rows - 1) == name
    assert int(t0.calls["ret"][-1]) == int(t1.calls["ret"][-1])


def emulated_fn(name: str) -> Any:
    """The emulated function object of a dotted pyACL name."""
    prefix, _, short = name.rpartition(".")
    return getattr(_module(prefix), short)


@pytest.mark.parametrize("name", sorted(n for n, e in _acl_registry().items() if e["fmt"]))
def test_parse_failures_carry_the_binding_text(name: str) -> None:
    """One argument too many is a TypeError with the binding's own text for that function
    ("args parse failed", "args parse failed!", "parse failed", "acl.prof.Init ...", or
    CPython's own count message where the binding lets it through), and reaches nothing."""
    fmt = registry()[name]["fmt"]
    n = len(fmt.replace("|", "")) + 1
    _, err, trace = _fresh(emulated_fn(name), *([0] * n))
    assert isinstance(err, TypeError), f"{name} with {n} arguments: {err!r}"
    want = B.BY_NAME[name].message()
    if want is None:
        assert str(err).startswith("function takes"), str(err)
    else:
        assert str(err) == want
    assert int(trace.calls["ret"][-1]) == -1 if trace.calls.rows else True


def test_the_three_found_ignore_their_argument(ready: ModuleType) -> None:
    """synchronize_device(device_id), create_stream(x) and get_device(0) are accepted."""
    assert ready.rt.synchronize_device(0) == ACL_SUCCESS
    stream, ret = ready.rt.create_stream("x")
    assert ret == ACL_SUCCESS and stream
    assert ready.rt.get_device(0) == (0, ACL_SUCCESS)
    assert ready.rt.destroy_stream(stream) == ACL_SUCCESS


def test_handles_must_be_real_ints(ready: ModuleType) -> None:
    """``k`` accepts only int (numpy scalars are refused, negatives wrap); ``i`` takes
    anything with ``__index__``."""
    ptr, ret = ready.rt.malloc(64, 0)
    assert ret == ACL_SUCCESS
    with pytest.raises(TypeError, match=r"^acl\.rt\.free args parse failed$"):
        ready.rt.free(np.uint64(ptr))
    assert ready.rt.set_device(np.int32(0)) == ACL_SUCCESS
    assert ready.rt.free(ptr) == ACL_SUCCESS
    assert ready.rt.free(-1) != ACL_SUCCESS  # wrapped to 2**64-1: a bad pointer, no TypeError


@pytest.mark.parametrize(("fmt", "good", "bad"), [
    ("h", [(-32768,), (32767,), (np.int16(3),)], [(32768,), (-32769,), (1.0,)]),
    ("b", [(0,), (255,)], [(256,), (-1,)]),
    ("B", [(255,), (256,), (-1,)], [("1",), (None,)]),
    ("H", [(65536,), (np.uint16(2),)], [(1.5,)]),
    ("I", [(1 << 40,), (-1,)], [(None,)]),
    ("k", [(-1,), (True,), (1 << 70,)], [(np.int64(1),), (1.0,)]),
    ("s", [("ab",)], [("a\0b",), (b"ab",), (None,)]),
    ("z", [("a",), (None,)], [(1,)]),
    ("f", [(1,), (2.5,), (np.float32(1),)], [("1",), (None,)]),
    ("|s", [(), ("p",)], [("p", "q")]),
])
def test_format_letters_follow_cpython(fmt: str, good: list[tuple[Any, ...]],
                                       bad: list[tuple[Any, ...]]) -> None:
    """Each letter accepts and converts what CPython's PyArg_ParseTuple does."""
    masks = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF, "k": (1 << 64) - 1}
    for args in good:
        out = _parse("acl.init", fmt, args)
        if fmt in masks:
            assert out == (int(args[0]) & masks[fmt],)
    for args in bad:
        with pytest.raises(TypeError):
            _parse("acl.init", fmt, args)


def test_callable_check_comes_after_parsing(ready: ModuleType) -> None:
    """launch_callback with a non-callable: the binding's "parameter must be callable"."""
    stream, _ = ready.rt.create_stream()
    with pytest.raises(TypeError, match=r"^parameter must be callable$"):
        ready.rt.launch_callback(1, None, 0, stream)


# ------------------------------------------------------------------------------ new entries


def test_app_log_goes_to_the_trace_not_stdout(ready: ModuleType, session: Session,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """acl.app_log(level, message) returns None and logs into the trace (real ACL: plog)."""
    assert ready.app_log(3, "100% done") is None
    assert capsys.readouterr() == ("", "")
    t = session.trace()
    dg = t.diags
    notes = [t.string(int(dg["message"][j])) for j in range(dg.rows)
             if t.string(int(dg["kind"][j])) == "app_log"]
    assert notes == ["[ERROR] 100% done"]
    with pytest.raises(TypeError, match=r"^acl\.app_log args parse failed$"):
        ready.app_log("3", "x")


def test_app_log_works_before_init(acl: ModuleType) -> None:
    """acllite logs at import, before acl.init."""
    assert acl.app_log(1, "start") is None


def test_float16_conversions(acl: ModuleType) -> None:
    """float_to_float16 / float16_to_float: IEEE half bits, round to nearest even."""
    assert acl.float_to_float16(1.0) == 0x3C00
    assert acl.float_to_float16(-2) == 0xC000
    assert acl.float_to_float16(1e6) == 0x7C00  # overflow: +inf
    assert acl.float16_to_float(0x3555) == pytest.approx(0.333251953125)
    assert acl.float16_to_float(0x10000 + 0x3C00) == 1.0  # H masks to 16 bits
    assert acl.float_to_float16(1 + 2**-11) == 0x3C00  # a tie rounds to even


def test_dynamic_hw_on_a_static_model(ready: ModuleType) -> None:
    """get_dynamic_hw reports no gears; set_dynamic_hw_size refuses like a static model."""
    from acl_lab import zoo

    mid, ret = ready.mdl.load_from_file(zoo.path("lenet5"))
    assert ret == ACL_SUCCESS
    desc = ready.mdl.create_desc()
    assert ready.mdl.get_desc(desc, mid) == ACL_SUCCESS
    assert ready.mdl.get_dynamic_hw(desc, 0) == ({"hwCount": 0, "hw": []}, ACL_SUCCESS)
    ds = ready.mdl.create_dataset()
    assert ready.mdl.set_dynamic_hw_size(mid, ds, 0, 224, 224) == 100000  # no buffer at 0
    ptr, _ = ready.rt.malloc(64, 0)
    buf = ready.create_data_buffer(ptr, 64)
    _, ret = ready.mdl.add_dataset_buffer(ds, buf)
    assert ret == ACL_SUCCESS
    assert ready.mdl.set_dynamic_hw_size(mid, ds, 0, 0, 224) == 100000
    assert ready.mdl.set_dynamic_hw_size(mid + 99, ds, 0, 224, 224) == 145003
    assert ready.mdl.set_dynamic_hw_size(mid, ds, 0, 224, 224) == 145013


@pytest.mark.parametrize("call", [
    lambda acl: acl.rt.malloc(size=64, policy=0),   # a parsing wrapper
    lambda acl: acl.rt.malloc(64, a1=0),
    lambda acl: acl.init(config_path="x"),          # optional arguments
    lambda acl: acl.rt.get_device(device=0),        # a wrapper that parses nothing
])
def test_keyword_arguments_are_refused(ready: ModuleType, session: Session, call: Any) -> None:
    """Every entry is METH_VARARGS: CPython refuses keywords before the wrapper runs."""
    before = session.trace().calls.rows
    with pytest.raises(TypeError, match=r"^\w+\(\) takes no keyword arguments$"):
        call(ready)
    assert session.trace().calls.rows == before
