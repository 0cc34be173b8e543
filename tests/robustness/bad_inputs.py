"""The bad-input table: for every public pyACL function, the bad calls to try and their outcome.

One row per function in ``acl_lab.acl._boundary.registry()`` (the pyACL surface ``acl.*``,
``acl.rt.*``, ``acl.util.*``, ``acl.op.*``, ``acl.mdl.*``, ``acl.media.*`` and the
``acl_lab.aclnn.*`` extension, which registers through the same boundary). A row holds a good
call (run last, in a fresh session, as a control: it must succeed there) and the bad calls.
Every row also gets the generic wrong-type calls its argument format implies (a str, a float,
None or a list where an int goes; an int or None where a str goes; int32/int64 overflow; one
argument too many or too few): each must raise ``TypeError("<name> args parse failed")``
without reaching the runtime (reference §1.4).

Outcomes: ``TYPE`` (that TypeError), ``VALUE`` (ValueError, where the reference or the
function's documented deviation says so), ``code(c)`` (the documented error code, with the
reference section in the case's ``why``) and ``NONZERO`` (the reference gives no code: the
call must fail with a nonzero code recorded in the trace). For functions that return a value
instead of ``ret`` the code is read from the trace and ``value=`` is the documented result.

Arguments may hold ``Ref`` placeholders: objects the test makes in the session under test (a
live stream, a freed pointer, a stream of another context, a handle from a finalized session).
A case's ``setup`` says where it runs: ``ready`` (init + set_device(0) in the calling thread),
``thread`` (the same, but the call runs in a new thread with no current context), ``bare``
(before acl.init) or ``finalized`` (after acl.finalize).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import acl_lab.acl  # registers the pyACL surface
import acl_lab.aclnn
import acl_lab.op_compiler  # noqa: F401  (registers the op compiler extension)
from acl_lab.acl._boundary import registry
from acl_lab.constants import (
    ACL_ERROR_API_NOT_SUPPORT,
    ACL_ERROR_GE_AIPP_NOT_EXIST,
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
    ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
    ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
    ACL_ERROR_GE_PARAM_INVALID,
    ACL_ERROR_INVALID_MODEL_ID,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_OP_NOT_FOUND,
    ACL_ERROR_PROF_ALREADY_RUN,
    ACL_ERROR_PROF_API_CONFLICT,
    ACL_ERROR_PROF_NOT_RUN,
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE,
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED,
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE,
    ACL_ERROR_RT_THREAD_SUBSCRIBE,
    ACL_ERROR_UNINITIALIZE,
    ACL_ERROR_UNSUPPORTED_JPEG,
    ACLNN_ERR_INNER_NULLPTR,
)

READY, THREAD, BARE, FINALIZED = "ready", "thread", "bare", "finalized"
SETUPS = (READY, THREAD, BARE, FINALIZED)
GARBAGE = 0xDEADBEEF
ACL_FLOAT, ACL_INT32, ACL_FORMAT_ND = 0, 3, 2
H2H, H2D = 0, 1


class _NoValue:
    def __repr__(self) -> str:
        return "-"


NO_VALUE: Any = _NoValue()


@dataclass(frozen=True)
class Ref:
    """A value made in the session under test; the test resolves it by name."""

    name: str

    def __repr__(self) -> str:
        return self.name.upper()


@dataclass(frozen=True)
class Expect:
    """What a bad call must do: ``kind`` is type_error, value_error, code or nonzero."""

    kind: str
    code: int = 0
    value: Any = NO_VALUE

    def __repr__(self) -> str:
        text = {"type_error": "TypeError", "value_error": "ValueError",
                "code": f"ret {self.code}", "nonzero": "ret != 0",
                "ignored": "extra arguments ignored"}[self.kind]
        return text if self.value is NO_VALUE else f"{text}, value {self.value!r}"


TYPE = Expect("type_error")
VALUE = Expect("value_error")
NONZERO = Expect("nonzero")
#: the call must succeed as the good call does: its extra arguments are ignored (the
#: binding's wrappers that parse nothing, reference §1.1)
IGNORED = Expect("ignored")


def code(c: int, value: Any = NO_VALUE) -> Expect:
    """The documented error code ``c`` (and, for value-shaped functions, the value)."""
    return Expect("code", c, value)


def nonzero(value: Any) -> Expect:
    """A nonzero code in the trace, and the documented failure value."""
    return Expect("nonzero", 0, value)


@dataclass(frozen=True)
class Bad:
    """One bad call: its arguments, the outcome, why it is bad and where it runs."""

    args: tuple[Any, ...]
    expect: Expect
    why: str
    setup: str = READY
    needs: tuple[Ref, ...] = ()
    #: snapshot keys the call may change by design (a repeat acl.init counts up)
    may_change: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    """Every bad call of one function, and a good call that must succeed as a control."""

    name: str
    good: tuple[Any, ...]
    bad: tuple[Bad, ...]
    setup: str = READY
    needs: tuple[Ref, ...] = ()
    #: the code of the good call: 0, except for a function no call can pass in acl_lab
    #: (said in its docstring), whose best call gives this code
    good_ret: int = 0


@dataclass(frozen=True)
class _At:
    """A bad call made by replacing argument ``index`` of the good call."""

    index: int
    value: Any
    expect: Expect
    why: str
    setup: str = READY
    needs: tuple[Ref, ...] = field(default=())


def at(index: int, value: Any, expect: Expect, why: str, setup: str = READY,
       needs: tuple[Ref, ...] = ()) -> _At:
    """Replace argument ``index`` of the good call by ``value``."""
    return _At(index, value, expect, why, setup, needs)


def call(args: tuple[Any, ...], expect: Expect, why: str, setup: str = READY,
         needs: tuple[Ref, ...] = (), may_change: tuple[str, ...] = ()) -> Bad:
    """A bad call with all its arguments given."""
    return Bad(tuple(args), expect, why, setup, needs, may_change)


# ------------------------------------------------------------------------------ refs
# Live objects of the session under test (made in the calling thread's default context).
STREAM, OTHER_STREAM, DEAD_STREAM, SUB_STREAM = (Ref("stream"), Ref("other_stream"),
                                                 Ref("dead_stream"), Ref("sub_stream"))
DEFAULT_CTX, OTHER_CTX, DEAD_CTX = Ref("default_ctx"), Ref("other_ctx"), Ref("dead_ctx")
EVENT, DONE_EVENT, DONE_EVENT2 = Ref("event"), Ref("done_event"), Ref("done_event2")
SYNC_EVENT, NOSYNC_EVENT, DEAD_EVENT = Ref("sync_event"), Ref("nosync_event"), Ref("dead_event")
PENDING_EVENT = Ref("pending_event")
DEV, DEV2, DEV3, DEV_MID, DEAD_DEV = (Ref("dev"), Ref("dev2"), Ref("dev3"), Ref("dev_mid"),
                                      Ref("dead_dev"))
HOST, DEAD_HOST, PAGEABLE = Ref("host"), Ref("dead_host"), Ref("pageable")
NDARRAY, BYTES = Ref("ndarray"), Ref("bytes")
DVPP_MEM, DEAD_DVPP = Ref("dvpp_mem"), Ref("dead_dvpp")
DESC, DESC_OUT, DESC_I32, DESC_33, DEAD_DESC = (Ref("desc"), Ref("desc_out"), Ref("desc_i32"),
                                                Ref("desc_33"), Ref("dead_desc"))
BUF, BUF2, OUT_BUF, SMALL_BUF, DEAD_BUF = (Ref("buf"), Ref("buf2"), Ref("out_buf"),
                                           Ref("small_buf"), Ref("dead_buf"))
ATTR, DEAD_ATTR, OP_HANDLE, DEAD_OP_HANDLE = (Ref("attr"), Ref("dead_attr"), Ref("op_handle"),
                                              Ref("dead_op_handle"))
MODEL, UNLOADED_MODEL, DYN_MODEL = Ref("model"), Ref("unloaded_model"), Ref("dyn_model")
MDESC, EMPTY_MDESC, DEAD_MDESC = Ref("mdesc"), Ref("empty_mdesc"), Ref("dead_mdesc")
IN_DS, OUT_DS, EMPTY_DS, SMALL_IN_DS, DEAD_DS = (Ref("in_ds"), Ref("out_ds"), Ref("empty_ds"),
                                                 Ref("small_in_ds"), Ref("dead_ds"))
#: DYN_MODEL's input dataset (data input, then ascend_mbatch_shape_data at DYN_SHAPE_INDEX)
DYN_IN_DS, DYN_SHAPE_INDEX = Ref("dyn_in_ds"), 1
MODEL_PATH, MISSING_PATH, NOT_OM_PATH = Ref("model_path"), Ref("missing_path"), Ref("not_om_path")
OP_DIR, OP_DIR_SET = Ref("op_dir"), Ref("op_dir_set")
#: a compiled Add single-op model for DESC, DESC -> DESC_OUT, its folder set as the model dir
OP_MODELS = Ref("op_models")
OM_PTR, OM_SIZE = Ref("om_ptr"), Ref("om_size")
WORK, WORK_SIZE, WEIGHT, WEIGHT_SIZE = (Ref("work"), Ref("work_size"), Ref("weight"),
                                        Ref("weight_size"))
CHAN_DESC, CHAN, DEAD_CHAN_DESC = Ref("chan_desc"), Ref("chan"), Ref("dead_chan_desc")
PIC, DEAD_PIC, CFG, DEAD_CFG = Ref("pic"), Ref("dead_pic"), Ref("cfg"), Ref("dead_cfg")
JPEG_HOST, JPEG_SIZE, JPEG_DEV = Ref("jpeg_host"), Ref("jpeg_size"), Ref("jpeg_dev")
PROG_DEV, PROG_SIZE = Ref("prog_dev"), Ref("prog_size")
#: a 64x64 RGB PNG in host and in DVPP memory, and an RGB888 output desc for it
PNG_HOST, PNG_SIZE, PNG_DEV, PNG_PIC = (Ref("png_host"), Ref("png_size"), Ref("png_dev"),
                                        Ref("png_pic"))
DEC_PIC, VPC_IN, VPC_OUT = Ref("dec_pic"), Ref("vpc_in"), Ref("vpc_out")
TID, DONE_TID, MAIN_TID = Ref("tid"), Ref("done_tid"), Ref("main_tid")
#: acl.prof: a result folder, configs, and profiling initialised / started with PROF_CFG
PROF_DIR, PROF_CFG, OTHER_PROF_CFG, DEAD_PROF_CFG = (Ref("prof_dir"), Ref("prof_cfg"),
                                                     Ref("other_prof_cfg"),
                                                     Ref("dead_prof_cfg"))
PROF_INITED, PROF_RUNNING = Ref("prof_inited"), Ref("prof_running")
#: op subscription: a pipe's write end, subscribe configs, MODEL subscribed, and a buffer of
#: two op records (bytes_to_ptr) with its length
PIPE_W, SUB_CFG, DEAD_SUB_CFG, SUBSCRIBED = (Ref("pipe_w"), Ref("sub_cfg"), Ref("dead_sub_cfg"),
                                             Ref("subscribed"))
OP_BUF, OP_LEN = Ref("op_buf"), Ref("op_len")
REPORT_READY = Ref("report_ready")
NT_A, NT_B, NT_OUT, NT_SCALAR = Ref("nt_a"), Ref("nt_b"), Ref("nt_out"), Ref("nt_scalar")
NT_EXEC, USED_EXEC, NT_MM_EXEC, NT_RELU_EXEC, NT_SM_EXEC = (
    Ref("nt_exec"), Ref("used_exec"), Ref("nt_mm_exec"), Ref("nt_relu_exec"), Ref("nt_sm_exec"))
WS, WS_SIZE, DEAD_NT, DEAD_SCALAR = Ref("ws"), Ref("ws_size"), Ref("dead_nt"), Ref("dead_scalar")
# Handles made in another Session that was finalized before this one started.
STALE = {k: Ref(f"stale_{k}") for k in (
    "stream", "event", "ctx", "dev", "host", "dvpp", "desc", "buf", "attr", "op_handle",
    "mdesc", "ds", "chan_desc", "pic", "cfg", "nt", "scalar", "exec")}


def noop(_data: Any = None) -> None:
    """A host callback that does nothing."""


# ------------------------------------------------------------------------------ families


def handle(i: int, dead: Ref | None, stale: str | None, wrong: Ref | None,
           null: Expect = NONZERO, garbage: Expect = NONZERO, what: str = "handle"
           ) -> list[_At]:
    """The usual bad handles at argument ``i``: null (0 and 2**64, which wraps to 0 as pyACL's
    ``k`` format does), garbage (0xDEADBEEF, and -1, which wraps to 2**64-1), destroyed, from
    a finalized session, and a live handle of another kind."""
    out = [at(i, 0, null, f"null {what}"),
           at(i, 1 << 64, null, f"2**64 wraps to the null {what}"),
           at(i, GARBAGE, garbage, f"garbage {what}"),
           at(i, -1, garbage, f"-1 wraps to 2**64-1 ({what})")]
    if dead is not None:
        out.append(at(i, dead, garbage, f"destroyed {what}"))
    if stale is not None:
        out.append(at(i, STALE[stale], garbage, f"{what} from a finalized session"))
    if wrong is not None:
        out.append(at(i, wrong, garbage, f"a live handle of another kind as the {what}"))
    return out


def bad_refs(i: int, stale: str, null: bool = False, expect: Expect = NONZERO,
             what: str = "handle") -> list[_At]:
    """Garbage (and null) at argument ``i``, and the same kind of object from a finalized
    session (for arguments after the first, whose full family the first one covers)."""
    out = [at(i, GARBAGE, expect, f"garbage {what}"),
           at(i, STALE[stale], expect, f"{what} of a finalized session")]
    if null:
        out.insert(0, at(i, 0, expect, f"null {what}"))
    return out


def valued(cases: list[_At], value: Any) -> list[_At]:
    """The same cases for a function that returns ``value`` (not ret) when it fails."""
    return [_At(c.index, c.value, Expect(c.expect.kind, c.expect.code, value), c.why,
                c.setup, c.needs) for c in cases]


def stream_arg(i: int, foreign: Expect = code(ACL_ERROR_RT_STREAM_CONTEXT)) -> list[_At]:
    """Bad streams. 0 is the default stream (valid). Garbage stream handles surface as
    507000 (reference §3.2: RT_ERROR_STREAM_INVALID); a stream of another context is 107003
    for the calls the reference lists in §5c."""
    bad = code(ACL_ERROR_RT_INTERNAL_ERROR)
    return [at(i, GARBAGE, bad, "garbage stream (§3.2)"),
            at(i, -1, bad, "-1 wraps to 2**64-1 (§3.2)"),
            at(i, DEAD_STREAM, bad, "destroyed stream (§3.2)"),
            at(i, STALE["stream"], bad, "stream of a finalized session (§3.2)"),
            at(i, EVENT, bad, "an event handle where a stream goes (§3.2)"),
            at(i, OTHER_STREAM, foreign, "stream of another context (§5c)")]


def event_arg(i: int) -> list[_At]:
    """Bad events: garbage event handles surface as 507000 (§3.2: RT_ERROR_EVENT_NULL/...)."""
    return handle(i, DEAD_EVENT, "event", STREAM, garbage=code(ACL_ERROR_RT_INTERNAL_ERROR),
                  what="event")


def no_ctx(args: tuple[Any, ...], expect: Expect = code(ACL_ERROR_RT_CONTEXT_NULL),
           why: str = "new thread with no current context (§5c)") -> Bad:
    """The good call made from a thread that never set a device or context."""
    return call(args, expect, why, THREAD)


# ------------------------------------------------------------------------------ helpers
_TYPE_VALUES: dict[str, tuple[Any, ...]] = {
    "i": ("1", 1.5, None, [1], 1 << 31, -(1 << 31) - 1),
    "I": ("1", 1.5, None, [1]),
    "L": ("1", 1.5, None, [1], 1 << 63, 1 << 64, -(1 << 63) - 1),
    "h": ("1", 1.5, None, [1], 1 << 15, -(1 << 15) - 1),
    "b": ("1", 1.5, None, [1], 256, -1),
    "B": ("1", 1.5, None, [1]),
    "H": ("1", 1.5, None, [1]),
    "l": ("1", 1.5, None, [1], 1 << 63, -(1 << 63) - 1),
    "k": ("1", 1.5, None, [1]),
    "K": ("1", 1.5, None, [1]),
    "p": ("1", 1.5, None, [1]),
    "d": ("x", None),
    "s": (1, None, b"x"),
    "z": (1, b"x"),
    "f": ("x", None),
    "C": (1, None),
    "O": (),
}


def type_cases(name: str, good: tuple[Any, ...], setup: str,
               needs: tuple[Ref, ...] = ()) -> list[Bad]:
    """The wrong-type calls a function's argument format implies (all TypeError, §1.4); for
    a wrapper that parses nothing, one call with extra arguments that must work as the good
    call does (in the good call's setup and with its ``needs``)."""
    fmt = registry()[name]["fmt"]
    if not fmt:  # the wrapper parses nothing: extra arguments are ignored, never refused
        return [Bad((*good, 0, "x", None), IGNORED,
                    "extra arguments are ignored (the wrapper parses nothing)", setup, needs)]
    letters = fmt.replace("|", "")
    nreq = fmt.index("|") if "|" in fmt else len(letters)
    out: list[Bad] = []
    for i, c in enumerate(letters[:len(good)]):
        for v in _TYPE_VALUES[c]:
            args = list(good)
            args[i] = v
            out.append(Bad(tuple(args), TYPE, f"argument {i + 1} ({c}) given {v!r}", setup))
    extra = tuple(good) + (0,) * (len(letters) - len(good) + 1)
    out.append(Bad(extra, TYPE, "one argument too many", setup))
    if nreq:
        out.append(Bad(tuple(good[:nreq - 1]), TYPE, "one argument too few", setup))
    return out


TABLE: dict[str, Row] = {}


def row(name: str, good: tuple[Any, ...], *cases: _At | Bad | list[_At] | list[Bad],
        setup: str = READY, needs: tuple[Ref, ...] = (), type_setup: str | None = None,
        good_ret: int = 0) -> None:
    """Declare the row of ``name``: explicit cases plus the generic wrong-type calls."""
    assert name not in TABLE, name
    bad: list[Bad] = []
    flat: list[_At | Bad] = []
    for c in cases:
        flat.extend(c if isinstance(c, list) else [c])
    for c in flat:
        if isinstance(c, _At):
            args = list(good)
            args[c.index] = c.value
            bad.append(Bad(tuple(args), c.expect, c.why, c.setup, c.needs))
        else:
            bad.append(c)
    bad.extend(type_cases(name, good, type_setup or setup, needs))
    TABLE[name] = Row(name, tuple(good), tuple(bad), setup, needs, good_ret)


E_PARAM = code(ACL_ERROR_INVALID_PARAM)
#: A synchronous device copy that runs past its allocation is refused when it runs: the
#: failed task is recorded (for the out-of-bounds finding), nothing is written.
SYNC_TASK = ("tasks",)
HUGE = (1 << 63) - 1
E_RT_PARAM = code(ACL_ERROR_RT_PARAM_INVALID)

# ============================================================================== acl.*
row("acl.init", (),
    call(("/no/such/dir/acl.json",), NONZERO, "config file that does not exist", BARE),
    call((), code(ACL_ERROR_REPEAT_INITIALIZE), "repeat init (§2.1: 100002, counted)",
         may_change=("init",)),
    setup=BARE)
row("acl.finalize", (),
    call((), code(ACL_ERROR_REPEAT_FINALIZE), "finalize after finalize (§2.1)", FINALIZED),
    call((), code(ACL_ERROR_REPEAT_FINALIZE), "finalize before init (§2.1)", BARE))
row("acl.finalize_reference", (),
    call((), code(ACL_ERROR_REPEAT_FINALIZE), "count below 1 (§2.1)", FINALIZED),
    call((), code(ACL_ERROR_REPEAT_FINALIZE), "count below 1, never initialised (§2.1)", BARE))
row("acl.get_version", ())
row("acl.get_soc_name", ())
row("acl.get_recent_err_msg", ())
row("acl.create_data_buffer", (DEV, 16))  # §2.7: no validation at all, only types
row("acl.destroy_data_buffer", (BUF,),
    handle(0, DEAD_BUF, "buf", DESC, null=E_PARAM, what="data buffer (§2.7: null is 100000)"))
for _n in ("acl.get_data_buffer_addr", "acl.get_data_buffer_size", "acl.get_data_buffer_size_v2"):
    row(_n, (BUF,), valued(handle(0, DEAD_BUF, "buf", DESC, what="data buffer"), 0))
row("acl.update_data_buffer", (BUF, DEV2, 16), handle(0, DEAD_BUF, "buf", DESC))
row("acl.data_type_size", (ACL_FLOAT,))  # every int is a valid lookup; only types
row("acl.create_tensor_desc", (ACL_FLOAT, [2, 2], ACL_FORMAT_ND),
    at(1, (2, 2), TYPE, "dims as a tuple (§1.4: argument 2 is not list)"),
    at(1, "2,2", TYPE, "dims as a str (§1.4)"),
    at(1, None, TYPE, "dims None (§1.4)"),
    at(1, [2.0, 2], TYPE, "a float in the dims list"))
_DESC_BAD = handle(0, DEAD_DESC, "desc", BUF, what="tensor desc")
row("acl.destroy_tensor_desc", (DESC,), valued(_DESC_BAD, None))
row("acl.get_tensor_desc_type", (DESC,), valued(_DESC_BAD, -1))
row("acl.get_tensor_desc_format", (DESC,), valued(_DESC_BAD, -1))
row("acl.get_tensor_desc_size", (DESC,), valued(_DESC_BAD, 0))
row("acl.get_tensor_desc_element_count", (DESC,), valued(_DESC_BAD, 0))
row("acl.get_tensor_desc_num_dims", (DESC,), valued(_DESC_BAD, 0))
row("acl.get_tensor_desc_name", (DESC,), valued(_DESC_BAD, ""))
row("acl.get_tensor_desc_dim", (DESC, 0), valued(_DESC_BAD, -1),
    at(1, 2, nonzero(-1), "index past the dims"), at(1, -1, nonzero(-1), "negative index"))
row("acl.get_tensor_desc_dim_v2", (DESC, 0), _DESC_BAD,
    at(1, 2, NONZERO, "index past the dims"), at(1, -1, NONZERO, "negative index"))
row("acl.set_tensor_shape", (DESC, [2, 2]), _DESC_BAD,
    at(1, (2, 2), TYPE, "dims as a tuple (§1.4)"), at(1, None, TYPE, "dims None (§1.4)"),
    at(1, ["2"], TYPE, "a str in the dims list"))
row("acl.set_tensor_format", (DESC, ACL_FORMAT_ND), _DESC_BAD)
row("acl.set_tensor_const", (DESC, PAGEABLE, 16), _DESC_BAD,
    at(1, 0, NONZERO, "null data pointer"),
    at(1, DEV, NONZERO, "device memory (const data is host memory, §9.4)"),
    at(1, DEAD_HOST, NONZERO, "freed host memory"),
    at(1, GARBAGE, NONZERO, "garbage pointer"),
    at(1, STALE["host"], NONZERO, "host memory of a finalized session"),
    at(2, 4096, NONZERO, "size past the end of the host buffer"),
    at(2, -1, NONZERO, "negative size"))
row("acl.set_tensor_place_ment", (DESC, 1), _DESC_BAD)
row("acl.set_tensor_desc_name", (DESC, "x"), valued(_DESC_BAD, None))

row("acl.app_log", (3, "x"))  # §1: "is"; any level is logged, nothing to refuse
row("acl.float16_to_float", (0x3C00,))  # "H": every int is 16 bits after the mask
row("acl.float_to_float16", (1.0,))

# ============================================================================== acl.rt devices
row("acl.rt.set_device", (0,),
    at(0, 1, code(ACL_ERROR_RT_INVALID_DEVICEID), "device 1 of a 1-device machine (§2.2)"),
    at(0, -1, code(ACL_ERROR_RT_INVALID_DEVICEID), "negative device id (§2.2)"),
    at(0, 64, code(ACL_ERROR_RT_INVALID_DEVICEID), "device 64 (§2.2)"),
    setup=THREAD)
for _n in ("acl.rt.reset_device", "acl.rt.reset_device_force"):
    row(_n, (0,),
        at(0, 1, NONZERO, "device 1 of a 1-device machine"),
        at(0, -1, NONZERO, "negative device id"),
        call((0,), NONZERO, "reset before set_device (§2.2: over-reset is an error)", BARE))
row("acl.rt.get_device", (), no_ctx((), code(ACL_ERROR_RT_CONTEXT_NULL, 0)))
row("acl.rt.get_device_count", ())
row("acl.rt.get_run_mode", ())
row("acl.rt.synchronize_device", (), no_ctx(()))
row("acl.rt.synchronize_device_with_timeout", (100,),
    at(0, -2, NONZERO, "timeout below -1 (§2.2)"), no_ctx((100,)))
row("acl.rt.create_context", (0,),
    at(0, 1, NONZERO, "device 1 of a 1-device machine"), at(0, -1, NONZERO, "device -1"))
row("acl.rt.destroy_context", (OTHER_CTX,),
    handle(0, DEAD_CTX, "ctx", STREAM, what="context"),
    at(0, DEFAULT_CTX, NONZERO, "the default context cannot be destroyed (§2.3)"))
row("acl.rt.set_context", (OTHER_CTX,), handle(0, DEAD_CTX, "ctx", STREAM, what="context"))
row("acl.rt.get_context", (), no_ctx((), code(ACL_ERROR_RT_CONTEXT_NULL, 0)))
row("acl.rt.ctx_get_current_default_stream", (), no_ctx(()))

# ============================================================================== acl.rt streams
row("acl.rt.create_stream", (), no_ctx(()))
row("acl.rt.create_stream_with_config", (0, 0), no_ctx((0, 0)))
for _n in ("acl.rt.destroy_stream", "acl.rt.destroy_stream_force"):
    row(_n, (STREAM,), stream_arg(0),
        at(0, 0, NONZERO, "the default stream (0) cannot be destroyed"),
        at(0, 1 << 64, NONZERO, "2**64 wraps to 0, the default stream"),
        no_ctx((STREAM,)))
row("acl.rt.synchronize_stream", (STREAM,), stream_arg(0)[:5], no_ctx((STREAM,)))
row("acl.rt.synchronize_stream_with_timeout", (STREAM, 100), stream_arg(0)[:5],
    at(1, -2, NONZERO, "timeout below -1 (§2.4)"), no_ctx((STREAM, 100)))
row("acl.rt.stream_query", (STREAM,), stream_arg(0, foreign=NONZERO), no_ctx((STREAM,)))
row("acl.rt.stream_wait_event", (STREAM, DONE_EVENT), stream_arg(0), event_arg(1),
    at(1, EVENT, E_RT_PARAM, "legacy event never recorded (§5d: 107000)"),
    at(1, NOSYNC_EVENT, NONZERO, "event made without ACL_EVENT_SYNC (§2.5)"),
    no_ctx((STREAM, DONE_EVENT)))

# ============================================================================== acl.rt events
row("acl.rt.create_event", (), no_ctx(()))
row("acl.rt.create_event_with_flag", (1,), no_ctx((1,)))
row("acl.rt.create_event_ex_with_flag", (1,), no_ctx((1,)))
row("acl.rt.record_event", (EVENT, STREAM), event_arg(0), stream_arg(1),
    no_ctx((EVENT, STREAM)))
row("acl.rt.reset_event", (SYNC_EVENT, STREAM), event_arg(0), stream_arg(1),
    at(0, NOSYNC_EVENT, NONZERO, "event made without ACL_EVENT_SYNC (§2.5)"),
    no_ctx((SYNC_EVENT, STREAM)))
row("acl.rt.query_event", (DONE_EVENT,), event_arg(0))
row("acl.rt.query_event_status", (DONE_EVENT,), event_arg(0))
row("acl.rt.synchronize_event", (DONE_EVENT,), event_arg(0))
row("acl.rt.synchronize_event_with_timeout", (DONE_EVENT, 100), event_arg(0),
    at(1, -2, NONZERO, "timeout below -1"))
row("acl.rt.event_elapsed_time", (DONE_EVENT, DONE_EVENT2), event_arg(0), event_arg(1),
    at(0, EVENT, code(ACL_ERROR_RT_INTERNAL_ERROR, 0.0), "start never recorded (§9.1: 507000)"),
    at(1, EVENT, code(ACL_ERROR_RT_INTERNAL_ERROR, 0.0), "end never recorded (§9.1: 507000)"),
    at(1, PENDING_EVENT, code(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, 0.0),
       "end recorded but not complete (§9.1: 107006)"))
row("acl.rt.destroy_event", (EVENT,), event_arg(0))

# ============================================================================== acl.rt memory
_MALLOC_SIZES = [
    at(0, 0, E_PARAM, "size 0 (§2.6: 100000)"),
    at(0, -1, E_PARAM, "-1 is size_t 2**64-1: its rounding overflows (§5a: 100000)"),
    at(0, (1 << 64) - 64, E_PARAM, "size whose rounding overflows size_t (§5a: 100000)"),
    at(0, (1 << 63) - 1, code(ACL_ERROR_RT_MEMORY_ALLOCATION),
       "2**63-1: no overflow, so the driver is tried: out of memory (RT-impl memory.cpp)"),
    at(0, 1 << 50, code(ACL_ERROR_RT_MEMORY_ALLOCATION), "1 PiB: more than the device"),
    at(0, 1 << 40, code(ACL_ERROR_RT_MEMORY_ALLOCATION), "1 TiB: more than the device (§2.6)"),
]
row("acl.rt.malloc", (256, 2), _MALLOC_SIZES,
    at(1, 6, NONZERO, "1 GiB pages on a SoC without them"), no_ctx((256, 2)))
for _n in ("acl.rt.malloc_align32", "acl.rt.malloc_cached"):
    row(_n, (256, 2), at(0, 0, NONZERO, "size 0"), at(0, -1, NONZERO, "negative size"),
        at(0, 1 << 40, NONZERO, "1 TiB"), no_ctx((256, 2)))
row("acl.rt.malloc_host", (256,),
    at(0, 0, E_PARAM, "size 0 (§2.6: 100000)"), at(0, -1, NONZERO, "negative size"),
    at(0, (1 << 63) - 1, NONZERO, "2**63-1 bytes"))
row("acl.rt.free", (DEV,),
    at(0, 0, E_PARAM, "null pointer (§2.6: 100000)"),
    at(0, 1 << 64, E_PARAM, "2**64 wraps to null (§2.6: 100000)"),
    at(0, GARBAGE, E_RT_PARAM, "pointer the allocator never gave out (§9.1(d): 107000)"),
    at(0, -1, E_RT_PARAM, "-1 wraps to 2**64-1 (§9.1(d): 107000)"),
    at(0, DEAD_DEV, E_RT_PARAM, "double free (§9.1(d): 107000)"),
    at(0, STALE["dev"], E_RT_PARAM, "pointer of a finalized session (§9.1(d): 107000)"),
    at(0, DEV_MID, E_RT_PARAM, "pointer into the middle of an allocation (§9.1(d))"),
    at(0, HOST, NONZERO, "malloc_host memory given to free (§2.6)"),
    at(0, PAGEABLE, NONZERO, "pageable host buffer given to free"))
row("acl.rt.free_host", (HOST,),
    at(0, 0, NONZERO, "null pointer"), at(0, GARBAGE, NONZERO, "garbage pointer"),
    at(0, -1, NONZERO, "-1 wraps to 2**64-1"),
    at(0, DEAD_HOST, NONZERO, "double free_host"),
    at(0, STALE["host"], NONZERO, "host memory of a finalized session"),
    at(0, DEV, NONZERO, "device memory given to free_host"),
    at(0, PAGEABLE, NONZERO, "pageable host buffer given to free_host"))


def _copy_cases() -> list[_At]:
    """Bad memcpy/memcpy_async arguments (good call: DEV <- HOST, 256 bytes)."""
    return [
        at(0, 0, E_PARAM, "null destination (§2.6: 100000)"),
        at(2, 0, E_PARAM, "null source (§2.6: 100000)"),
        at(1, 16, E_RT_PARAM, "count > dest_max (§2.6: 107000)"),
        at(4, 9, NONZERO, "kind outside aclrtMemcpyKind (§2.6)"),
        at(4, -1, NONZERO, "negative kind"),
        at(0, DEAD_DEV, NONZERO, "freed destination"),
        at(2, DEAD_HOST, NONZERO, "freed source"),
        at(2, STALE["host"], NONZERO, "source of a finalized session"),
        at(0, STALE["dev"], NONZERO, "destination of a finalized session"),
        at(0, GARBAGE, NONZERO, "garbage destination"),
        at(2, -1, NONZERO, "source -1 wraps to 2**64-1"),
        at(3, -1, NONZERO, "count -1 wraps to 2**64-1 (the binding's k)"),
        # dest_max -1 wraps to 2**64-1 (the binding parses it with k): a 256-byte copy fits,
        # so it is a good call in real pyACL, not a bad one
    ]


row("acl.rt.memcpy", (DEV, 256, HOST, 256, H2D), _copy_cases(),
    call((DEV, 4096, HOST, 4096, H2D), NONZERO, "count runs past both allocations",
         may_change=SYNC_TASK),
    call((DEV, HUGE, HOST, HUGE, H2D), NONZERO, "count 2**63-1: past both allocations",
         may_change=SYNC_TASK),
    no_ctx((DEV, 256, HOST, 256, H2D), NONZERO, "new thread with no current context"))
row("acl.rt.memcpy_async", (DEV, 256, HOST, 256, H2D, STREAM), _copy_cases(),
    stream_arg(5),
    call((PAGEABLE, 256, HOST, 256, H2H, STREAM), code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
         "host to host on a stream (§2.6: 207000 in EP mode)"),
    no_ctx((DEV, 256, HOST, 256, H2D, STREAM)))
_SET_CASES = [
    at(0, 0, NONZERO, "null pointer"),
    at(0, DEAD_DEV, NONZERO, "freed pointer"),
    at(0, GARBAGE, NONZERO, "garbage pointer"),
    at(0, STALE["dev"], NONZERO, "pointer of a finalized session"),
    at(3, -1, NONZERO, "negative count"),
]
row("acl.rt.memset", (DEV, 256, 7, 256), _SET_CASES,
    at(1, 16, NONZERO, "count > max_count"),
    call((DEV, 4096, 7, 4096), NONZERO, "count runs past the device allocation",
         may_change=SYNC_TASK),
    call((DEV, HUGE, 7, HUGE), NONZERO, "count 2**63-1 past the device allocation",
         may_change=SYNC_TASK),
    call((HOST, HUGE, 7, HUGE), NONZERO, "count 2**63-1 past the malloc_host block"),
    call((HOST, 4096, 7, 4096), NONZERO, "count runs past the malloc_host block"),
    call((PAGEABLE, 4096, 7, 4096), NONZERO, "count runs past the pageable buffer"),
    no_ctx((DEV, 256, 7, 256), NONZERO, "new thread with no current context"))
row("acl.rt.memset_async", (DEV, 256, 7, 256, STREAM), _SET_CASES,
    at(1, 16, E_RT_PARAM, "count > max_count (§2.6: 107000)"), stream_arg(4),
    call((HOST, 4096, 7, 4096, STREAM), NONZERO, "count runs past the malloc_host block"),
    no_ctx((DEV, 256, 7, 256, STREAM)))
row("acl.rt.get_mem_info", (0,),
    at(0, 99, NONZERO, "not an aclrtMemAttr"), at(0, -1, NONZERO, "negative attribute"),
    no_ctx((0,), code(ACL_ERROR_RT_CONTEXT_NULL, (0, 0))))

# ============================================================================== acl.rt callbacks
row("acl.rt.subscribe_report", (TID, STREAM), stream_arg(1)[:5],
    at(0, GARBAGE, NONZERO, "thread id of no thread"),
    at(0, 0, NONZERO, "thread id 0"),
    at(1, SUB_STREAM, code(ACL_ERROR_RT_STREAM_SUBSCRIBE), "stream already subscribed "
                                                           "(§9.1(e): 107011)"))
row("acl.rt.unsubscribe_report", (MAIN_TID, SUB_STREAM), stream_arg(1)[:5],
    at(1, STREAM, NONZERO, "stream that is not subscribed"),
    at(0, TID, NONZERO, "thread that did not subscribe the stream"),
    at(0, 0, NONZERO, "thread id 0"),
    at(0, GARBAGE, NONZERO, "thread id of no thread"))
row("acl.rt.launch_callback", (noop, None, 0, SUB_STREAM),
    at(2, 2, E_PARAM, "block type 2 (§9.1(e): 100000)"),
    at(2, -1, E_PARAM, "block type -1 (§9.1(e): 100000)"),
    at(3, STREAM, code(ACL_ERROR_RT_STREAM_NO_CB_REG), "stream without subscribe_report "
                                                       "(§9.1(e): 107015)"),
    stream_arg(3)[:5],
    at(3, 0, code(ACL_ERROR_RT_STREAM_NO_CB_REG), "default stream, not subscribed (§9.1(e))"),
    no_ctx((noop, None, 0, SUB_STREAM)))
row("acl.rt.process_report", (100,),
    at(0, 0, E_PARAM, "timeout 0 (§9.1(e): 100000)", needs=(REPORT_READY,)),
    at(0, -2, E_PARAM, "timeout below -1 (§9.1(e): 100000)", needs=(REPORT_READY,)),
    at(0, 100, code(ACL_ERROR_RT_THREAD_SUBSCRIBE),
       "thread with no subscription (§9.1(e): 107012)"),
    needs=(REPORT_READY,))

# ============================================================================== acl.util
for _n in ("acl.util.numpy_to_ptr", "acl.util.numpy_contiguous_to_ptr"):
    row(_n, (NDARRAY,),
        at(0, b"abcd", VALUE, "bytes, not an ndarray (§1.4: ValueError)"),
        at(0, [1, 2], VALUE, "a list, not an ndarray (§1.4)"),
        at(0, None, VALUE, "None, not an ndarray (§1.4)"),
        at(0, 1, VALUE, "an int, not an ndarray (§1.4)"))
row("acl.util.ptr_to_numpy", (PAGEABLE, (4,), 11),
    at(1, [4], TYPE, "shape as a list (§1.6: must be a tuple)"),
    at(1, 4, TYPE, "shape as an int (§1.6)"),
    at(1, ("4",), TYPE, "a str in the shape tuple"),
    at(2, 999, VALUE, "no numpy type has number 999"),
    at(1, (-1,), VALUE, "negative dimension"),
    at(1, (4096,), VALUE, "shape past the end of the buffer (documented deviation)"),
    at(0, 0, VALUE, "null pointer (documented deviation)"),
    at(0, DEV, VALUE, "device pointer (documented deviation)"),
    at(0, GARBAGE, VALUE, "garbage pointer (documented deviation)"),
    at(0, DEAD_HOST, VALUE, "freed host pointer (documented deviation)"),
    at(0, STALE["host"], VALUE, "host memory of a finalized session"))
row("acl.util.bytes_to_ptr", (BYTES,),
    at(0, bytearray(b"ab"), VALUE, "a bytearray (§1.4: needs bytes)"),
    at(0, "ab", VALUE, "a str (§1.4)"), at(0, None, VALUE, "None (§1.4)"),
    at(0, NDARRAY, VALUE, "an ndarray (§1.4)"))
row("acl.util.ptr_to_bytes", (PAGEABLE, 16),
    at(0, 0, VALUE, "null pointer (documented deviation)"),
    at(0, DEV, VALUE, "device pointer (documented deviation)"),
    at(0, GARBAGE, VALUE, "garbage pointer (documented deviation)"),
    at(0, DEAD_HOST, VALUE, "freed host pointer (documented deviation)"),
    at(0, STALE["host"], VALUE, "host memory of a finalized session"),
    at(1, -1, VALUE, "negative size"),
    at(1, 4096, VALUE, "size past the end of the buffer"))
row("acl.util.start_thread", (noop, None))
row("acl.util.stop_thread", (DONE_TID,),
    at(0, 0, NONZERO, "thread id 0"), at(0, GARBAGE, NONZERO, "garbage thread id"),
    at(0, MAIN_TID, NONZERO, "a thread start_thread did not start"))

# ============================================================================== acl.op
row("acl.op.set_model_dir", (OP_DIR,),
    at(0, MISSING_PATH, NONZERO, "directory that does not exist"),
    at(0, OP_DIR, NONZERO, "second call", needs=(OP_DIR_SET,)))
row("acl.op.create_attr", ())
_ATTR_BAD = handle(0, DEAD_ATTR, "attr", DESC, what="op attr")
row("acl.op.destroy_attr", (ATTR,), valued(_ATTR_BAD, None))
row("acl.op.set_attr_bool", (ATTR, "x", True), _ATTR_BAD)
row("acl.op.set_attr_int", (ATTR, "x", 1), _ATTR_BAD)
row("acl.op.set_attr_float", (ATTR, "x", 1.0), _ATTR_BAD)
row("acl.op.set_attr_string", (ATTR, "x", "v"), _ATTR_BAD)
row("acl.op.set_attr_data_type", (ATTR, "x", ACL_FLOAT), _ATTR_BAD)
for _n, _good, _elem in (("list_int", [1, 2], "a"), ("list_float", [1.0], "a"),
                         ("list_bool", [True], None), ("list_string", ["a"], None),
                         ("list_list_int", [[1, 2]], ["a"])):
    row(f"acl.op.set_attr_{_n}", (ATTR, "x", _good), _ATTR_BAD,
        at(2, 5, NONZERO, "an int where the list goes"),
        *([at(2, [_elem], TYPE, f"list element {_elem!r} of the wrong type")]
          if _elem is not None else []),
        *([at(2, [object()], TYPE, "list element of no convertible type")]
          if _n in ("list_int", "list_float") else []))
_EXEC_GOOD = ("Add", [DESC, DESC], [BUF, BUF2], [DESC_OUT], [OUT_BUF], ATTR, STREAM)


def _exec_cases(deprecated: bool) -> list[_At | Bad]:
    """Bad execute_v2 / execute calls (good call: Add of two float32 [2, 2] tensors)."""
    ok = _EXEC_GOOD
    return [
        at(0, "NoSuchOp", code(ACL_ERROR_OP_NOT_FOUND), "unknown op type (§9.1: 100024)"),
        call(("Add", [DESC], [BUF], [DESC_OUT], [OUT_BUF], ATTR, STREAM),
             code(ACL_ERROR_OP_NOT_FOUND), "Add with one input (§9.1(h): 100024)"),
        at(3, [DESC_33], code(ACL_ERROR_OP_NOT_FOUND),
           "output desc of the wrong shape (§9.1(h): no compiled op matches)"),
        at(1, [0, DESC], E_PARAM, "null input desc (§9.1(h): 100000)"),
        at(3, [0], E_PARAM, "null output desc (§9.1(h): 100000)"),
        at(1, (DESC, DESC), TYPE, "input descs as a tuple (§1.4: not list)"),
        at(2, None, TYPE, "input buffers None (§1.4)"),
        at(4, OUT_BUF, TYPE, "output buffers not a list (§1.4)"),
        at(1, ["a", "b"], TYPE, "strs in the desc list"),
        at(2, [BUF, 0], NONZERO, "null input buffer"),
        at(2, [BUF, SMALL_BUF], NONZERO, "input buffer smaller than its desc"),
        at(2, [BUF, DEAD_BUF], NONZERO, "destroyed input buffer"),
        at(1, [DESC, DEAD_DESC], NONZERO, "destroyed input desc"),
        at(1, [DESC, STALE["desc"]], NONZERO, "input desc of a finalized session"),
        at(5, GARBAGE, NONZERO, "garbage attr"),
        at(5, DEAD_ATTR, NONZERO, "destroyed attr"),
        at(5, STALE["attr"], NONZERO, "attr of a finalized session"),
        *stream_arg(6),
        no_ctx(ok),
    ] if not deprecated else [
        at(0, "NoSuchOp", code(ACL_ERROR_OP_NOT_FOUND), "unknown op type (§9.1: 100024)"),
        at(1, [0, DESC], E_PARAM, "null input desc (§9.1(h): 100000)"),
        at(1, (DESC, DESC), TYPE, "input descs as a tuple (§1.4)"),
        at(2, [BUF, SMALL_BUF], NONZERO, "input buffer smaller than its desc"),
        *bad_refs(5, "attr", what="attr"),
        *stream_arg(6), no_ctx(ok),
    ]


row("acl.op.execute_v2", _EXEC_GOOD, _exec_cases(False))
row("acl.op.execute", _EXEC_GOOD, _exec_cases(True))
row("acl.op.create_handle", ("Add", [DESC, DESC], [DESC_OUT], ATTR),
    at(0, "NoSuchOp", NONZERO, "unknown op type"),
    at(1, [DESC_33, DESC_33], code(ACL_ERROR_OP_NOT_FOUND),
       "no compiled single-op model has these descs (hicann/ge OpExecutor::CreateOpHandle "
       "-> MatchOpModel: 100024)"),
    at(1, [0, DESC], NONZERO, "null input desc"),
    at(1, [DESC, DEAD_DESC], NONZERO, "destroyed input desc"),
    at(2, (DESC_OUT,), TYPE, "output descs as a tuple (§1.4)"),
    at(1, None, TYPE, "input descs None (§1.4)"),
    bad_refs(3, "attr", what="attr"), needs=(OP_MODELS,))

# acl.blas.gemm_ex: C = alpha * A @ B + beta * C, 2x2 float32, alpha and beta at DEV + 32
_GEMM_GOOD = (0, 0, 0, 2, 2, 2, DEV_MID, DEV2, -1, ACL_FLOAT, DEV3, -1, ACL_FLOAT, DEV_MID, DEV,
              -1, ACL_FLOAT, 0, STREAM)
_GEMM = "hicann/ge acl_cblas/single_op/blas/gemm_ops.cpp aclblasGemmEx: "
row("acl.blas.gemm_ex", _GEMM_GOOD,
    at(3, 0, E_PARAM, _GEMM + "m, n, k must be > 0"),
    at(5, -2, E_PARAM, _GEMM + "m, n, k must be > 0"),
    at(0, 3, E_PARAM, _GEMM + "transA ACL_TRANS_NZ_T is refused"),
    at(2, 1, E_PARAM, _GEMM + "transC must be ACL_TRANS_N or ACL_TRANS_NZ"),
    at(8, 2, E_PARAM, _GEMM + "lda, ldb, ldc must be -1"),
    at(17, 1, E_PARAM, _GEMM + "only ACL_COMPUTE_HIGH_PRECISION"),
    at(6, 0, E_PARAM, _GEMM + "null alpha"),
    at(14, 0, E_PARAM, _GEMM + "null matrixC"),
    *stream_arg(18), no_ctx(_GEMM_GOOD))

# acl_lab.op_compiler (aclopCompile / aclopCompileAndExecute, CANN acl_op_compiler.h)
row("acl_lab.op_compiler.compile_op", ("Add", [DESC, DESC], [DESC_OUT], ATTR, 0, 0, None),
    at(0, "NoSuchOp", code(ACL_ERROR_OP_NOT_FOUND), "no such operator"),
    at(4, 7, E_PARAM, "an engine type outside aclopEngineType"),
    at(5, 1, code(ACL_ERROR_API_NOT_SUPPORT),
       "ACL_COMPILE_UNREGISTERED (a custom op from opPath) is not emulated"),
    at(2, [DESC_33], code(ACL_ERROR_OP_NOT_FOUND), "output descs Add does not compute"),
    at(1, (DESC, DESC), TYPE, "input descs as a tuple (§1.4)"))
_COMPILE_EXEC = ("Add", [DESC, DESC], [BUF, BUF2], [DESC_OUT], [OUT_BUF], ATTR, 0, 0, None, STREAM)
row("acl_lab.op_compiler.compile_and_execute", _COMPILE_EXEC,
    at(0, "NoSuchOp", code(ACL_ERROR_OP_NOT_FOUND), "no such operator"),
    at(7, 5, E_PARAM, "a compile flag outside aclopCompileType"),
    at(2, [BUF, SMALL_BUF], NONZERO, "input buffer smaller than its desc"),
    *stream_arg(9), no_ctx(_COMPILE_EXEC))

row("acl.op.execute_with_handle", (OP_HANDLE, [BUF, BUF2], [OUT_BUF], STREAM),
    handle(0, DEAD_OP_HANDLE, "op_handle", DESC, what="op handle"),
    at(1, [BUF], NONZERO, "one input buffer for a two-input handle"),
    at(1, (BUF, BUF2), TYPE, "input buffers as a tuple (§1.4)"),
    at(2, None, TYPE, "output buffers None (§1.4)"),
    at(1, [BUF, SMALL_BUF], NONZERO, "input buffer smaller than its desc"),
    stream_arg(3), no_ctx((OP_HANDLE, [BUF, BUF2], [OUT_BUF], STREAM)))
row("acl.op.destroy_handle", (OP_HANDLE,),
    valued(handle(0, DEAD_OP_HANDLE, "op_handle", DESC, what="op handle"), None))
row("acl.op.cast", (DESC, BUF, DESC_I32, OUT_BUF, 0, STREAM),
    handle(0, DEAD_DESC, "desc", BUF, what="source desc"),
    at(1, 0, NONZERO, "null source buffer"), at(1, DEAD_BUF, NONZERO, "destroyed buffer"),
    bad_refs(1, "buf", what="source buffer"),
    bad_refs(2, "desc", null=True, what="destination desc"),
    bad_refs(3, "buf", null=True, what="destination buffer"),
    at(3, SMALL_BUF, NONZERO, "destination buffer too small"),
    stream_arg(5), no_ctx((DESC, BUF, DESC_I32, OUT_BUF, 0, STREAM)))
row("acl.op.infer_shape", ("Add", [DESC, DESC], [BUF, BUF2], 1, [DESC_OUT], ATTR),
    at(0, "NoSuchOp", NONZERO, "unknown op type"),
    at(3, 2, NONZERO, "Add has one output, not two"),
    at(1, [0, DESC], NONZERO, "null input desc"),
    at(4, [GARBAGE], NONZERO, "garbage output desc"),
    at(1, (DESC, DESC), TYPE, "input descs as a tuple (§1.4)"),
    at(4, None, TYPE, "output descs None (§1.4)"),
    bad_refs(5, "attr", what="attr"))

# ============================================================================== acl.mdl
row("acl.mdl.load_from_file", (MODEL_PATH,),
    at(0, MISSING_PATH, code(ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, 0),
       "file that does not exist (§9.1(a): 145002)"),
    at(0, NOT_OM_PATH, code(ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID, 0),
       "file that is not an OM (§9.1(a): 145006)"),
    at(0, "", NONZERO, "empty path"),
    at(0, OP_DIR, NONZERO, "a directory"),
    no_ctx((MODEL_PATH,), NONZERO, "new thread with no current context"))
row("acl.mdl.load_from_mem", (OM_PTR, OM_SIZE),
    at(0, 0, NONZERO, "null pointer"), at(0, GARBAGE, NONZERO, "garbage pointer"),
    at(0, DEV, NONZERO, "device memory in EP mode (§2.8: host memory)"),
    at(0, PAGEABLE, NONZERO, "bytes that are not a model"),
    at(0, STALE["host"], NONZERO, "host memory of a finalized session"),
    at(1, 3, NONZERO, "3 bytes: shorter than a header"),
    at(1, 0, NONZERO, "size 0"), at(1, -1, NONZERO, "negative size"),
    at(1, 1 << 40, NONZERO, "size past the end of the buffer"),
    no_ctx((OM_PTR, OM_SIZE), NONZERO, "new thread with no current context"))
row("acl.mdl.query_size", (MODEL_PATH,),
    at(0, MISSING_PATH, NONZERO, "file that does not exist"),
    at(0, NOT_OM_PATH, NONZERO, "file that is not an OM"))
row("acl.mdl.load_from_file_with_mem", (MODEL_PATH, WORK, WORK_SIZE, WEIGHT, WEIGHT_SIZE),
    at(0, MISSING_PATH, NONZERO, "file that does not exist"),
    at(2, 1, NONZERO, "work memory smaller than query_size reports"),
    at(4, 1, NONZERO, "weight memory smaller than query_size reports"),
    at(1, 0, NONZERO, "null work memory"),
    bad_refs(1, "dev", what="work memory"),
    bad_refs(3, "dev", null=True, what="weight memory"),
    at(3, HOST, NONZERO, "weight memory on the host"),
    at(3, DEAD_DEV, NONZERO, "freed weight memory"))
# (a work size of -1 wraps to 2**64-1 with the binding's k: "enough" memory as far as the size
# check goes; acl_lab does not compare it with the work buffer's allocation)
row("acl.mdl.unload", (MODEL,),
    at(0, UNLOADED_MODEL, NONZERO, "model already unloaded"),
    at(0, 0, NONZERO, "model id 0"), at(0, -1, NONZERO, "-1 wraps to 2**32-1"),
    at(0, 1 << 32, NONZERO, "2**32 wraps to model id 0"),
    no_ctx((MODEL,), NONZERO, "new thread with no current context"))
row("acl.mdl.create_desc", ())
_MDESC_BAD = handle(0, DEAD_MDESC, "mdesc", DESC, what="model desc")
row("acl.mdl.get_desc", (EMPTY_MDESC, MODEL), _MDESC_BAD,
    at(1, 999, NONZERO, "model id never loaded"),
    at(1, UNLOADED_MODEL, NONZERO, "unloaded model"))
row("acl.mdl.destroy_desc", (MDESC,), _MDESC_BAD)
for _n in ("acl.mdl.get_num_inputs", "acl.mdl.get_num_outputs"):
    row(_n, (MDESC,), valued(_MDESC_BAD, 0),
        at(0, EMPTY_MDESC, nonzero(0), "desc never filled by get_desc"))
for _n in ("acl.mdl.get_input_size_by_index", "acl.mdl.get_output_size_by_index"):
    row(_n, (MDESC, 0), valued(_MDESC_BAD, 0),
        at(1, 1, nonzero(0), "index past the model's I/O"),
        at(1, -1, nonzero(0), "negative index"),
        at(0, EMPTY_MDESC, nonzero(0), "desc never filled by get_desc"))
for _n in ("acl.mdl.get_input_dims", "acl.mdl.get_input_dims_v2", "acl.mdl.get_output_dims",
           "acl.mdl.get_cur_output_dims"):
    row(_n, (MDESC, 0), valued(_MDESC_BAD, {}),
        at(1, 5, nonzero({}), "index past the model's I/O (§1.2: empty dict on failure)"),
        at(0, EMPTY_MDESC, nonzero({}), "desc never filled (§1.2)"))
for _n in ("acl.mdl.get_input_data_type", "acl.mdl.get_output_data_type",
           "acl.mdl.get_input_format", "acl.mdl.get_output_format"):
    row(_n, (MDESC, 0), _MDESC_BAD, at(1, 5, NONZERO, "index past the model's I/O"))
for _n in ("acl.mdl.get_input_name_by_index", "acl.mdl.get_output_name_by_index"):
    row(_n, (MDESC, 0), valued(_MDESC_BAD, None),
        at(1, 5, nonzero(None), "index past the model's I/O (§1.2: None for NULL)"))
row("acl.mdl.get_input_index_by_name", (MDESC, "input"), _MDESC_BAD,
    at(1, "nope", NONZERO, "no input has that name"))
row("acl.mdl.get_output_index_by_name", (MDESC, "output"), _MDESC_BAD,
    at(1, "nope", NONZERO, "no output has that name"))
row("acl.mdl.get_dynamic_batch", (MDESC,), valued(_MDESC_BAD, {}))
row("acl.mdl.get_dynamic_hw", (MDESC, 0), valued(_MDESC_BAD, {}))
# MODEL (lenet) is static, it has no image-size gears: the best call gives 145013 (GE
# SetDynamicImageSize); the bad calls fail earlier, with their own codes
row("acl.mdl.set_dynamic_hw_size", (MODEL, IN_DS, 0, 224, 224),
    at(1, 0, E_PARAM, "null dataset"),
    at(1, DEAD_DS, E_PARAM, "destroyed dataset"),
    at(1, EMPTY_DS, E_PARAM, "a dataset with no buffer at the index"),
    at(3, 0, E_PARAM, "height 0"),
    at(4, 0, E_PARAM, "width 0"),
    at(0, UNLOADED_MODEL, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID), "unloaded model"),
    good_ret=ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)
row("acl.mdl.create_dataset", ())
_DS_BAD = handle(0, DEAD_DS, "ds", DESC, what="dataset")
row("acl.mdl.add_dataset_buffer", (EMPTY_DS, BUF), _DS_BAD,
    handle(1, DEAD_BUF, "buf", DESC, what="data buffer"))
row("acl.mdl.get_dataset_buffer", (IN_DS, 0), valued(_DS_BAD, 0),
    at(1, 1, nonzero(0), "index past the buffers (§5h: returns 0)"),
    at(1, -1, nonzero(0), "negative index (§5h: returns 0)"))
row("acl.mdl.get_dataset_num_buffers", (IN_DS,), valued(_DS_BAD, 0))
row("acl.mdl.destroy_dataset", (EMPTY_DS,), _DS_BAD)

# AIPP (acl_aipp.cpp): a live 1-batch parameter set; the setters' ranges give 100000
AIPP, DEAD_AIPP = Ref("aipp"), Ref("dead_aipp")
_AIPP_BAD = handle(0, DEAD_AIPP, None, DESC, what="aclmdlAIPP parameter set")
row("acl.mdl.create_aipp", (1,),
    at(0, 0, nonzero(0), "batch 0: the C call returns NULL"),
    at(0, 1 << 40, nonzero(0), "a batch count no memory holds: NULL"))
row("acl.mdl.destroy_aipp", (AIPP,), _AIPP_BAD)
row("acl.mdl.set_aipp_input_format", (AIPP, 1), _AIPP_BAD,
    at(1, 99, E_PARAM, "not an aclAippInputFormat"))
row("acl.mdl.set_aipp_csc_params",
    (AIPP, 1, 298, 516, 0, 298, -100, -208, 298, 0, 409, 0, 0, 0, 16, 128, 128), _AIPP_BAD,
    at(1, 2, E_PARAM, "switch 2"), at(2, 32700, E_PARAM, "matrix value past 32676"))
for _n in ("acl.mdl.set_aipp_rbuv_swap_switch", "acl.mdl.set_aipp_ax_swap_switch"):
    row(_n, (AIPP, 1), _AIPP_BAD, at(1, 2, E_PARAM, "switch 2"))
row("acl.mdl.set_aipp_src_image_size", (AIPP, 224, 224), _AIPP_BAD,
    at(1, 1, E_PARAM, "width 1 (the minimum is 2)"), at(2, 4097, E_PARAM, "height past 4096"))
row("acl.mdl.set_aipp_crop_params", (AIPP, 1, 0, 0, 224, 224, 0), _AIPP_BAD,
    at(6, 1, E_PARAM, "batch index 1 of a 1-batch set"), at(1, 2, E_PARAM, "switch 2"),
    at(2, 4096, E_PARAM, "crop start past 4095"))
row("acl.mdl.set_aipp_padding_params", (AIPP, 1, 0, 0, 32, 32, 0), _AIPP_BAD,
    at(6, 1, E_PARAM, "batch index 1 of a 1-batch set"), at(2, 33, E_PARAM, "padding past 32"))
row("acl.mdl.set_aipp_scf_params", (AIPP, 1, 16, 16, 1920, 16, 0), _AIPP_BAD,
    at(6, 1, E_PARAM, "batch index 1 of a 1-batch set"),
    at(4, 1921, E_PARAM, "output width past 1920"))
row("acl.mdl.set_aipp_dtc_pixel_mean", (AIPP, 104, 117, 123, 0, 0), _AIPP_BAD,
    at(1, 256, E_PARAM, "mean past 255"), at(5, 1, E_PARAM, "batch index 1 of a 1-batch set"))
row("acl.mdl.set_aipp_dtc_pixel_min", (AIPP, 0.0, 0.0, 0.0, 0.0, 0), _AIPP_BAD,
    at(1, -1.0, E_PARAM, "min below 0"), at(5, 1, E_PARAM, "batch index 1 of a 1-batch set"))
row("acl.mdl.set_aipp_pixel_var_reci", (AIPP, 1.0, 1.0, 1.0, 1.0, 0), _AIPP_BAD,
    at(1, 70000.0, E_PARAM, "var_reci past 65504"),
    at(5, 1, E_PARAM, "batch index 1 of a 1-batch set"))
row("acl.mdl.get_aipp_data_size", (1,),
    at(0, 0, nonzero(0), "batch 0"), at(0, 1 << 62, nonzero(0), "the size overflows size_t"))
row("acl.mdl.get_aipp_type", (MODEL, 0),
    at(1, 5, code(ACL_ERROR_GE_PARAM_INVALID, (0, 0xFFFFFFFF)), "index past the inputs"),
    at(0, UNLOADED_MODEL, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, (0, 0xFFFFFFFF)),
       "unloaded model"))
# MODEL has no AIPP: the best get_first_aipp_info is (None, 145015), set_input_aipp's is
# 100000 (no dynamic AIPP input) and set_aipp_by_input_index's 500000 (none linked)
row("acl.mdl.get_first_aipp_info", (MODEL, 0),
    at(1, 5, code(ACL_ERROR_GE_PARAM_INVALID, None), "index past the inputs"),
    at(0, UNLOADED_MODEL, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, None), "unloaded model"),
    good_ret=ACL_ERROR_GE_AIPP_NOT_EXIST)
row("acl.mdl.set_input_aipp", (MODEL, IN_DS, 0, AIPP),
    at(1, 0, E_PARAM, "null dataset"), at(3, 0, E_PARAM, "null parameter set"),
    at(3, DEAD_AIPP, E_PARAM, "destroyed parameter set"),
    at(0, UNLOADED_MODEL, code(ACL_ERROR_INVALID_MODEL_ID), "unloaded model"),
    at(2, 5, code(ACL_ERROR_GE_PARAM_INVALID), "index past the inputs"),
    good_ret=ACL_ERROR_INVALID_PARAM)
row("acl.mdl.set_aipp_by_input_index", (MODEL, IN_DS, 0, AIPP),
    at(3, 0, E_PARAM, "null parameter set"), at(1, 0, E_PARAM, "null dataset"),
    at(2, 1, E_PARAM, "no buffer at index 1"),
    at(0, UNLOADED_MODEL, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID), "unloaded model"),
    good_ret=500000)


def _execute_cases(stream: bool) -> list[_At | Bad]:
    """Bad execute / execute_async calls (good call: the zoo MLP with fitting datasets)."""
    return [
        at(1, 0, E_PARAM, "null input dataset (§5f: 100000)"),
        at(2, 0, E_PARAM, "null output dataset (§5f: 100000)"),
        at(0, 999, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID), "unknown model id (§5f: 145003)"),
        at(0, UNLOADED_MODEL, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID),
           "unloaded model id (§5f: 145003)"),
        at(1, EMPTY_DS, E_PARAM, "fewer input buffers than inputs (§5f: 100000)"),
        at(1, SMALL_IN_DS, code(ACL_ERROR_GE_PARAM_INVALID),
           "input buffer more than 64 bytes short (§5f: 145000)"),
        at(1, GARBAGE, NONZERO, "garbage input dataset"),
        at(2, DEAD_DS, NONZERO, "destroyed output dataset"),
        at(1, STALE["ds"], NONZERO, "dataset of a finalized session"),
        *bad_refs(2, "ds", what="output dataset"),
        *(stream_arg(3, foreign=NONZERO) if stream else []),
    ]


row("acl.mdl.execute", (MODEL, IN_DS, OUT_DS), _execute_cases(False),
    no_ctx((MODEL, IN_DS, OUT_DS), NONZERO, "new thread with no current context"))
row("acl.mdl.execute_async", (MODEL, IN_DS, OUT_DS, STREAM), _execute_cases(True),
    no_ctx((MODEL, IN_DS, OUT_DS, STREAM), NONZERO, "new thread with no current context"))
row("acl.mdl.set_dynamic_batch_size", (DYN_MODEL, DYN_IN_DS, DYN_SHAPE_INDEX, 2),
    at(3, 3, code(ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID), "batch 3 is not a gear (1, 2, 4, 8)"),
    at(3, 0, E_PARAM, "batch 0"),
    at(3, -1, NONZERO, "negative batch"),
    at(2, 0, E_PARAM, "the data input's index, not ascend_mbatch_shape_data's"),
    at(2, 2, E_PARAM, "an index with no buffer in the dataset"),
    at(1, EMPTY_DS, E_PARAM, "a dataset with no buffers"),
    at(0, 999, NONZERO, "unknown model id"),
    at(0, MODEL, code(ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID), "a static model (no gears)"),
    handle(1, DEAD_DS, "ds", DESC, what="dataset"))
# the dims getters require index -1 (model.cpp); on the static model there are no gears
row("acl.mdl.get_input_dynamic_gear_count", (MDESC, -1), valued(_MDESC_BAD, 0),
    at(1, 0, E_PARAM, "index 0: it must be -1 (all inputs)"))
row("acl.mdl.get_input_dynamic_dims", (MDESC, -1, 0), valued(_MDESC_BAD, None),
    at(1, 0, code(ACL_ERROR_INVALID_PARAM, None), "index 0: it must be -1 (all inputs)"),
    at(2, 4097, code(ACL_ERROR_INVALID_PARAM, None), "gear count over the binding's 4096"))
# lenet's input is [1, 1, 28, 28]: naming its dims passes the argument checks, and a static
# model has no gear to match (145013), as for set_dynamic_hw_size
_LENET_DIMS = {"name": "", "dimCount": 4, "dims": [1, 1, 28, 28]}
row("acl.mdl.set_input_dynamic_dims", (MODEL, IN_DS, 0, _LENET_DIMS),
    at(3, [1, 1, 28, 28], TYPE, "dims not a dict"),
    at(3, {"dimCount": 4}, TYPE, "no dims list in the dict"),
    at(3, {"dimCount": 2, "dims": [1, "x"]}, TYPE, "a dim that is not an int"),
    at(3, {"dimCount": 0, "dims": []}, E_PARAM, "dimCount 0"),
    at(1, 0, E_PARAM, "null dataset"),
    at(1, EMPTY_DS, E_PARAM, "a dataset with no buffer at the index"),
    at(0, UNLOADED_MODEL, code(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID), "unloaded model"),
    at(3, {"dimCount": 3, "dims": [1, 28, 28]}, code(ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID),
       "dims that are not the inputs' (GE GetCurDynamicDims)"),
    Bad((DYN_MODEL, DYN_IN_DS, DYN_SHAPE_INDEX, {"dimCount": 2, "dims": [2, 784]}),
        code(ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID),
        "a dynamic-batch model at a batch gear: its gears are not dims gears"),
    good_ret=ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID)

# ============================================================================== acl.media
row("acl.media.dvpp_malloc", (4096,),
    at(0, 0, NONZERO, "size 0"), at(0, -1, NONZERO, "negative size"),
    at(0, 1 << 40, NONZERO, "1 TiB"), no_ctx((4096,), NONZERO, "no current context"))
row("acl.media.dvpp_free", (DVPP_MEM,),
    at(0, 0, NONZERO, "null pointer"),
    at(0, HOST, E_RT_PARAM, "host memory (§9.1(d): 107000)"),
    at(0, GARBAGE, E_RT_PARAM, "unknown pointer (§9.1(d): 107000)"),
    at(0, DEAD_DVPP, E_RT_PARAM, "double dvpp_free (§9.1(d): 107000)"),
    at(0, STALE["dvpp"], E_RT_PARAM, "DVPP memory of a finalized session (§9.1(d))"))
# acl.rt.malloc memory given to dvpp_free is freed (the runtime's DevDvppFree checks only that
# it is device memory): tests/tracer/test_memory_findings.py covers it, with its warning
for _n in ("acl.media.dvpp_create_channel_desc", "acl.media.dvpp_create_pic_desc",
           "acl.media.dvpp_create_resize_config"):
    row(_n, ())
_CHAN_BAD = handle(0, DEAD_CHAN_DESC, "chan_desc", PIC, what="channel desc")
row("acl.media.dvpp_set_channel_desc_mode", (CHAN_DESC, 1), _CHAN_BAD)
row("acl.media.dvpp_create_channel", (CHAN_DESC,), _CHAN_BAD,
    at(0, CHAN, NONZERO, "desc that already has a channel"),
    no_ctx((CHAN_DESC,), NONZERO, "new thread with no current context"))
row("acl.media.dvpp_destroy_channel", (CHAN,), _CHAN_BAD,
    at(0, CHAN_DESC, NONZERO, "desc without a channel"))
row("acl.media.dvpp_destroy_channel_desc", (CHAN_DESC,), _CHAN_BAD,
    at(0, CHAN, code(ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED),
       "its channel still exists (§9.2: 148051)"))
_PIC_BAD = handle(0, DEAD_PIC, "pic", CFG, what="pic desc")
row("acl.media.dvpp_destroy_pic_desc", (PIC,), _PIC_BAD)
for _f, _v in (("data", DVPP_MEM), ("size", 64), ("format", 1), ("width", 16), ("height", 16),
               ("width_stride", 16), ("height_stride", 16)):
    row(f"acl.media.dvpp_set_pic_desc_{_f}", (PIC, _v), _PIC_BAD)
    row(f"acl.media.dvpp_get_pic_desc_{_f}", (PIC,), valued(_PIC_BAD, 0))
row("acl.media.dvpp_get_pic_desc_ret_code", (PIC,), valued(_PIC_BAD, 0))
_CFG_BAD = handle(0, DEAD_CFG, "cfg", PIC, what="resize config")
row("acl.media.dvpp_destroy_resize_config", (CFG,), _CFG_BAD)
row("acl.media.dvpp_set_resize_config_interpolation", (CFG, 1), _CFG_BAD,
    at(1, 6, NONZERO, "interpolation 6 (§9.2: 0-5)"),
    at(1, -1, NONZERO, "-1 wraps to 2**32-1"))
row("acl.media.dvpp_get_resize_config_interpolation", (CFG,), valued(_CFG_BAD, 0))
def _image_info(codec: str, dev: Ref) -> list[_At]:
    """The bad calls of a picture header reader (get_image_info, predict_dec_size): the
    header is read from host memory; ``dev`` holds the same picture in device memory."""
    return [
        at(0, 0, NONZERO, f"null {codec} pointer"),
        at(1, 0, NONZERO, "size 0"),
        at(0, PAGEABLE, NONZERO, f"host bytes that are not a {codec}"),
        at(0, dev, NONZERO, f"{codec} in device memory (§9.2: host memory)"),
        at(0, GARBAGE, NONZERO, "garbage pointer"),
        at(0, DEAD_HOST, NONZERO, "freed host pointer"),
        at(0, STALE["host"], NONZERO, "host memory of a finalized session"),
        at(1, 3, NONZERO, f"3 bytes: shorter than a {codec} header"),
        at(1, -1, NONZERO, "-1 wraps to 2**32-1 bytes: past the buffer"),
    ]


def _decode(good: tuple[Ref, ...], host: Ref) -> list[_At | Bad | list[_At] | list[Bad]]:
    """The bad calls of a picture decode ``(chan, input, size, out desc, stream)``; ``host``
    holds the same picture in host memory."""
    return [
        _CHAN_BAD,
        at(0, CHAN_DESC, NONZERO, "channel desc without a channel"),
        at(1, 0, NONZERO, "null input"),
        at(2, 0, NONZERO, "input size 0"),
        at(1, host, NONZERO, "input in host memory (§9.2: dvpp_malloc memory)"),
        at(1, DEAD_DVPP, NONZERO, "freed input"),
        bad_refs(1, "dvpp", what="input"),
        at(3, PIC, NONZERO, "output desc with no buffer"),
        bad_refs(3, "pic", null=True, what="output desc"),
        stream_arg(4, foreign=NONZERO),
        no_ctx(good, NONZERO, "no current context"),
    ]


_JPEG_INFO = _image_info("JPEG", JPEG_DEV)
row("acl.media.dvpp_jpeg_get_image_info", (JPEG_HOST, JPEG_SIZE), _JPEG_INFO)
row("acl.media.dvpp_jpeg_get_image_info_v2", (JPEG_HOST, JPEG_SIZE), _JPEG_INFO)
row("acl.media.dvpp_jpeg_predict_dec_size", (JPEG_HOST, JPEG_SIZE, 1), _JPEG_INFO,
    at(2, 999, NONZERO, "output pixel format 999"))
_JPEG_DECODE = (CHAN, JPEG_DEV, JPEG_SIZE, DEC_PIC, STREAM)
row("acl.media.dvpp_jpeg_decode_async", _JPEG_DECODE, *_decode(_JPEG_DECODE, JPEG_HOST),
    call((CHAN, PROG_DEV, PROG_SIZE, DEC_PIC, STREAM), code(ACL_ERROR_UNSUPPORTED_JPEG),
         "progressive JPEG (§9.2: 148052)"))
_PNG_INFO = _image_info("PNG", PNG_DEV)
row("acl.media.dvpp_png_get_image_info", (PNG_HOST, PNG_SIZE), _PNG_INFO)
row("acl.media.dvpp_png_predict_dec_size", (PNG_HOST, PNG_SIZE, 12), _PNG_INFO,
    at(2, 999, NONZERO, "output pixel format 999"))
_PNG_DECODE = (CHAN, PNG_DEV, PNG_SIZE, PNG_PIC, STREAM)
row("acl.media.dvpp_png_decode_async", _PNG_DECODE, *_decode(_PNG_DECODE, PNG_HOST))
row("acl.media.dvpp_vpc_resize_async", (CHAN, VPC_IN, VPC_OUT, CFG, STREAM), _CHAN_BAD,
    at(0, CHAN_DESC, NONZERO, "channel desc without a channel"),
    at(1, PIC, NONZERO, "input desc with no buffer"),
    at(2, PIC, NONZERO, "output desc with no buffer"),
    at(1, 0, NONZERO, "null input desc"),
    bad_refs(1, "pic", what="input desc"),
    bad_refs(2, "pic", null=True, what="output desc"),
    bad_refs(3, "cfg", null=True, what="resize config"),
    at(3, DEAD_CFG, NONZERO, "destroyed resize config"),
    stream_arg(4, foreign=NONZERO),
    no_ctx((CHAN, VPC_IN, VPC_OUT, CFG, STREAM), NONZERO, "no current context"))

# ============================================================================== acl_lab.aclnn
_NT_BAD = handle(0, DEAD_NT, "nt", DESC, what="aclTensor")
row("acl_lab.aclnn.create_tensor", ([2, 2], ACL_FLOAT, DEV),
    at(0, "2,2", TYPE, "shape as a str"), at(0, None, TYPE, "shape None"),
    at(0, [2.0], TYPE, "a float in the shape"),
    at(0, [-1], nonzero(0), "negative dim"),
    at(2, 0, nonzero(0), "null data pointer"),
    at(2, HOST, nonzero(0), "host memory"),
    at(2, DEAD_DEV, nonzero(0), "freed device memory"),
    bad_refs(2, "dev", expect=nonzero(0), what="device memory"),
    at(0, [1024, 1024], nonzero(0), "tensor larger than its memory"),
    at(1, 999, nonzero(0), "data type 999"))
row("acl_lab.aclnn.destroy_tensor", (NT_A,), _NT_BAD)
row("acl_lab.aclnn.create_scalar", (1.0, ACL_FLOAT),
    at(0, "x", TYPE, "a str value"), at(0, None, TYPE, "None value"),
    at(1, 999, nonzero(0), "data type 999"))
row("acl_lab.aclnn.destroy_scalar", (NT_SCALAR,),
    handle(0, DEAD_SCALAR, "scalar", DESC, what="aclScalar"))
row("acl_lab.aclnn.set_executor_repeatable", (NT_EXEC,),
    handle(0, USED_EXEC, "exec", DESC, null=code(ACLNN_ERR_INNER_NULLPTR),
           what="executor (§6: null is 561103)"))
row("acl_lab.aclnn.destroy_executor", (NT_EXEC,),
    handle(0, USED_EXEC, "exec", DESC, what="executor"))
row("acl_lab.aclnn.add_get_workspace_size", (NT_A, NT_B, NT_SCALAR, NT_OUT), _NT_BAD,
    at(1, 0, NONZERO, "null other"), at(2, 0, NONZERO, "null alpha"),
    at(2, NT_A, NONZERO, "a tensor as alpha"), at(3, DEAD_NT, NONZERO, "destroyed out"),
    bad_refs(1, "nt", what="other"), bad_refs(2, "scalar", what="alpha"),
    bad_refs(3, "nt", null=True, what="out"))
row("acl_lab.aclnn.matmul_get_workspace_size", (NT_A, NT_B, NT_OUT), _NT_BAD,
    at(1, 0, NONZERO, "null mat2"), bad_refs(1, "nt", what="mat2"),
    bad_refs(2, "nt", null=True, what="out"),
    call((NT_A, NT_B, NT_OUT, 7), NONZERO, "cube_math_type 7"))
row("acl_lab.aclnn.relu_get_workspace_size", (NT_A, NT_OUT), _NT_BAD,
    bad_refs(1, "nt", null=True, what="out"))
row("acl_lab.aclnn.softmax_get_workspace_size", (NT_A, -1, NT_OUT), _NT_BAD,
    at(1, 2, NONZERO, "dim 2 of a 2-D tensor"), bad_refs(2, "nt", null=True, what="out"))
for _n, _ex, _ws in (("add", NT_EXEC, False), ("matmul", NT_MM_EXEC, True),
                     ("relu", NT_RELU_EXEC, False), ("softmax", NT_SM_EXEC, True)):
    _good = (WS, WS_SIZE, _ex, STREAM) if _ws else (0, 0, _ex, STREAM)
    row(f"acl_lab.aclnn.{_n}", _good,
        handle(2, USED_EXEC, "exec", DESC, what="executor"),
        *([at(0, 0, NONZERO, "null workspace"), at(1, 1, NONZERO, "workspace too small"),
           at(0, HOST, NONZERO, "workspace in host memory"),
           at(0, DEAD_DEV, NONZERO, "freed workspace"),
           *bad_refs(0, "dev", what="workspace")] if _ws else []),
        stream_arg(3, foreign=NONZERO),
        no_ctx(_good, NONZERO, "new thread with no current context"))
del _n, _good, _ex, _ws, _f, _v, _elem


def declared_counts() -> tuple[int, int]:
    """(functions covered, bad calls declared) by the table."""
    return len(TABLE), sum(len(r.bad) for r in TABLE.values())

# ============================================================================== acl.prof
_PROF_CFG_BAD = [call((0,), E_PARAM, "null config"),
                 call((GARBAGE,), E_PARAM, "garbage config"),
                 call((DEAD_PROF_CFG,), E_PARAM, "destroyed config"),
                 call((STREAM,), E_PARAM, "a stream handle as the config")]
row("acl.prof.init", (PROF_DIR,),
    call(("",), E_PARAM, "empty path (C-doc 19-01)"),
    call(("x" * 4097,), E_PARAM, "a path over 4096 bytes (C-doc 19-01)"),
    call((PROF_DIR,), code(ACL_ERROR_REPEAT_INITIALIZE), "repeat init (ProfInitPrecheck)",
         needs=(PROF_INITED,)),
    call((PROF_DIR,), code(ACL_ERROR_UNINITIALIZE), "before acl.init", BARE))
row("acl.prof.create_config", ([0], 0, 0, 0),
    at(0, [], code(ACL_ERROR_INVALID_PARAM, 0), "empty device list"),
    at(0, [1], code(ACL_ERROR_INVALID_PARAM, 0), "device 1 of a 1-device machine"),
    at(0, [0, 0], code(ACL_ERROR_INVALID_PARAM, 0), "a device twice"),
    at(0, (0,), TYPE, "a tuple, not a list (argument 1 is not list)"),
    at(0, [0.0], TYPE, "a float in the device list"))
row("acl.prof.destroy_config", (PROF_CFG,), *_PROF_CFG_BAD)
row("acl.prof.start", (PROF_CFG,), *[
        Bad(b.args, b.expect, b.why, b.setup, (PROF_INITED,)) for b in _PROF_CFG_BAD],
    call((PROF_CFG,), code(ACL_ERROR_PROF_NOT_RUN), "before acl.prof.init (C-doc 19-01)"),
    call((PROF_CFG,), code(ACL_ERROR_PROF_ALREADY_RUN), "a second start before stop",
         needs=(PROF_RUNNING,)),
    needs=(PROF_INITED,))
row("acl.prof.stop", (PROF_CFG,), *[
        Bad(b.args, b.expect, b.why, b.setup, (PROF_RUNNING,)) for b in _PROF_CFG_BAD],
    call((PROF_CFG,), code(ACL_ERROR_PROF_NOT_RUN), "stop without start",
         needs=(PROF_INITED,)),
    call((OTHER_PROF_CFG,), E_PARAM, "another config than start's",
         needs=(PROF_RUNNING, OTHER_PROF_CFG)),
    needs=(PROF_RUNNING,))
row("acl.prof.set_config", (1, "on"),
    at(1, "", E_PARAM, "empty value", needs=(PROF_INITED,)),
    at(1, "x" * 257, E_PARAM, "a value over 256 bytes (C-doc 19-01)", needs=(PROF_INITED,)),
    call((1, "on"), code(ACL_ERROR_PROF_NOT_RUN), "before acl.prof.init (ProfSetConfigPrecheck)"),
    needs=(PROF_INITED,))
row("acl.prof.finalize", (),
    call((), code(ACL_ERROR_PROF_NOT_RUN), "before acl.prof.init (ProfFinalizePrecheck)"),
    needs=(PROF_INITED,))

_SUB_CFG_BAD = [call((0,), E_PARAM, "null subscribe config"),
                call((GARBAGE,), E_PARAM, "garbage subscribe config"),
                call((DEAD_SUB_CFG,), E_PARAM, "destroyed subscribe config"),
                call((PROF_CFG,), E_PARAM, "a profiling config, not a subscribe config")]
row("acl.prof.create_subscribe_config", (1, 0, PIPE_W),
    at(0, 2, code(ACL_ERROR_INVALID_PARAM, 0), "time_info_switch 2"))
row("acl.prof.destroy_subscribe_config", (SUB_CFG,), *_SUB_CFG_BAD)
row("acl.prof.model_subscribe", (MODEL, SUB_CFG),
    *[Bad((MODEL, *b.args), b.expect, b.why, b.setup, b.needs) for b in _SUB_CFG_BAD],
    at(0, UNLOADED_MODEL, code(ACL_ERROR_INVALID_MODEL_ID), "unloaded model"),
    at(0, 0, code(ACL_ERROR_INVALID_MODEL_ID), "model id 0"),
    call((MODEL, SUB_CFG), code(ACL_ERROR_PROF_REPEAT_SUBSCRIBE), "subscribed twice",
         needs=(SUBSCRIBED,)),
    call((MODEL, SUB_CFG), code(ACL_ERROR_PROF_API_CONFLICT), "inside prof init..finalize",
         needs=(PROF_INITED,)))
for _n in ("acl.prof.model_unsubscribe", "acl.prof.model_un_subscribe"):
    row(_n, (MODEL,),
        call((MODEL,), code(ACL_ERROR_INVALID_MODEL_ID), "a model that is not subscribed"),
        call((UNLOADED_MODEL,), code(ACL_ERROR_INVALID_MODEL_ID), "an unloaded model",
             needs=(SUBSCRIBED,)),
        needs=(SUBSCRIBED,))
row("acl.prof.get_op_desc_size", ())
_OP_BAD = [at(0, 0, NONZERO, "null buffer"),
           at(1, 1, E_PARAM, "a length that is not whole records"),
           at(1, 0, NONZERO, "zero bytes")]
row("acl.prof.get_op_num", (OP_BUF, OP_LEN), _OP_BAD)
for _n in ("acl.prof.get_op_type", "acl.prof.get_op_name"):
    row(_n, (OP_BUF, OP_LEN, 0, 64), _OP_BAD,
        at(2, 2, E_PARAM, "index past the two records"),
        at(3, 4097, E_PARAM, "a length over the binding's 4096"),
        at(3, 1, E_PARAM, "a length with no room for the text"))
for _n in ("acl.prof.get_op_type_v2", "acl.prof.get_op_name_v2", "acl.prof.get_op_type_len",
           "acl.prof.get_op_name_len"):
    row(_n, (OP_BUF, OP_LEN, 0), _OP_BAD, at(2, 2, E_PARAM, "index past the two records"))
for _n in ("acl.prof.get_model_id", "acl.prof.get_op_start", "acl.prof.get_op_end",
           "acl.prof.get_op_duration"):
    row(_n, (OP_BUF, OP_LEN, 0),
        at(2, 2, code(ACL_ERROR_INVALID_PARAM, 0), "index past the two records"),
        at(1, 1, code(ACL_ERROR_INVALID_PARAM, 0), "a length that is not whole records"))


# ============================================================================== acl.media (more)
from . import media_rows  # noqa: E402,F401  (ROI, batch, stream descs, JPEGE, crop, VDEC, VENC)
