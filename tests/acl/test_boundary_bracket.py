"""The generated in-process call writes out Session.api_enter / api_exit (the bracket of
hostwork, the transport server and the C bridge): both must record a call the same way."""

from __future__ import annotations

import acl_lab
from acl_lab import Session


def test_the_inlined_bracket_records_like_api_enter_and_api_exit() -> None:
    with Session() as s:
        acl = acl_lab.install(s)
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        assert acl.rt.get_device() == (0, 0)                      # the generated call
        th, cid, _ = s.api_enter("acl.rt.get_device", s.profile.api_call_ns, (), "",
                                 __file__, 1)
        s.api_exit(th, cid, 0)                                    # the Session's bracket
        assert acl.rt.get_mem_info(0)[-1] == 0                    # one argument row
        th, cid, _ = s.api_enter("acl.rt.get_mem_info", s.profile.api_call_ns, (0,), "i",
                                 __file__, 1)
        s.api_exit(th, cid, 0)
        acl.rt.reset_device(0)
        acl.finalize()
        trace = s.finish()
    calls = trace.calls
    dev, mem = trace.calls_named("acl.rt.get_device"), trace.calls_named("acl.rt.get_mem_info")
    assert len(dev) == len(mem) == 2
    for a, b in (dev, mem):
        for col in ("thread", "ctx", "ret", "arg_count"):
            assert int(calls[col][a]) == int(calls[col][b]), col
        assert (int(calls["end_ns"][a]) - int(calls["start_ns"][a])
                == int(calls["end_ns"][b]) - int(calls["start_ns"][b]))
        assert int(calls["start_ns"][b]) == int(calls["end_ns"][a])  # clocks charged alike


def test_unsigned_64_bit_arguments_wrap_alike_on_both_paths() -> None:
    """A ``k``/``p`` argument is masked to 64 bits by the wrapper's fast path exactly as
    ``_parse`` masks it (a negative handle wraps like ``PyLong_AsUnsignedLongMask``): the
    same return code and the same recorded argument for -64 and 2**64 - 64."""
    from acl_lab.acl._boundary import _parse

    wrapped = (1 << 64) - 64
    assert _parse("acl.rt.free", "p", (-64,)) == (wrapped,)
    with Session() as s:
        acl = acl_lab.install(s)
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        rets = [acl.rt.free(-64), acl.rt.free(wrapped), acl.rt.destroy_stream(-64),
                acl.rt.destroy_stream(wrapped)]
        acl.rt.reset_device(0)
        acl.finalize()
        trace = s.finish()
    assert rets[0] == rets[1] != 0 and rets[2] == rets[3] != 0
    for name in ("acl.rt.free", "acl.rt.destroy_stream"):
        a, b = (trace.call_args(int(c)) for c in trace.calls_named(name))
        assert a == b
