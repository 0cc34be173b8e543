"""Tests for acl_lab.constants: header values, enums, aliases, data-type sizes and explain()."""

from __future__ import annotations

import ast
import inspect
import sys
from enum import Enum
from pathlib import Path

import pytest

import acl_lab.constants as C

# (name, value) pairs copied from the public headers (docs/sources.md §3).
SPOT_VALUES: list[tuple[str, int | str]] = [
    ("ACL_SUCCESS", 0),
    ("ACL_ERROR_NONE", 0),
    ("ACL_RT_SUCCESS", 0),
    ("ACLNN_SUCCESS", 0),
    ("ACL_ERROR_INVALID_PARAM", 100000),
    ("ACL_ERROR_REPEAT_INITIALIZE", 100002),
    ("ACL_ERROR_OP_NOT_FOUND", 100024),
    ("ACL_ERROR_REPEAT_FINALIZE", 100037),
    ("ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED", 148051),
    ("ACL_ERROR_UNSUPPORTED_JPEG", 148052),
    ("ACL_ERROR_INVALID_DEVICE", 200002),
    ("ACL_ERROR_GE_FAILURE", 500002),
    ("ACL_ERROR_RT_PARAM_INVALID", 107000),
    ("ACL_ERROR_RT_CONTEXT_NULL", 107002),
    ("ACL_ERROR_RT_STREAM_CONTEXT", 107003),
    ("ACL_ERROR_RT_STREAM_NO_CB_REG", 107015),
    ("ACL_ERROR_STREAM_CAPTURE_CONFLICT", 107032),
    ("ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING", 107045),
    ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT", 207000),
    ("ACL_ERROR_RT_MEMORY_ALLOCATION", 207001),
    ("ACL_ERROR_RT_DEVICE_OOM", 207018),
    ("ACL_ERROR_RT_DEVIDE_OOM", 207018),
    ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP", 207019),
    ("ACL_ERROR_RT_INTERNAL_ERROR", 507000),
    ("ACL_ERROR_RT_MODEL_EXECUTE", 507011),
    ("ACL_ERROR_RT_REPORT_TIMEOUT", 507012),
    ("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", 507046),
    ("ACL_ERROR_RT_EVENT_SYNC_TIMEOUT", 507047),
    ("ACL_ERROR_RT_SEND_MSG", 507051),
    ("ACL_ERROR_RT_DRV_INTERNAL_ERROR", 507899),
    ("ACL_ERROR_SNAPSHOT_RESTORE_FAILED", 507909),
    ("ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 507910),
    ("ACL_ERROR_RT_CCU_EXCEPTION", 507916),
    ("ACL_ERROR_GE_PARAM_INVALID", 145000),
    ("ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID", 145002),
    ("ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID", 145006),
    ("ACL_ERROR_GE_REDEPLOYING", 545602),
    ("ACLNN_ERR_PARAM_NULLPTR", 161001),
    ("ACLNN_ERR_PARAM_INVALID", 161002),
    ("ACLNN_ERR_INNER_NULLPTR", 561103),
    ("ACLNN_ERR_INNER_KEY_CONFLICT", 561105),
    ("ACLNN_ERR_INNER_KEY_CONFILICT", 561105),
    ("ACL_MEMCPY_HOST_TO_HOST", 0),
    ("ACL_MEMCPY_HOST_TO_DEVICE", 1),
    ("ACL_MEMCPY_DEVICE_TO_HOST", 2),
    ("ACL_MEMCPY_INTER_DEVICE_TO_DEVICE", 7),
    ("ACL_MEM_MALLOC_HUGE_FIRST", 0),
    ("ACL_MEM_MALLOC_NORMAL_ONLY", 2),
    ("ACL_MEM_MALLOC_HUGE1G_ONLY_P2P", 7),
    ("ACL_MEM_TYPE_HIGH_BAND_WIDTH", 0x1000),
    ("ACL_MEM_ACCESS_USER_SPACE_READONLY", 0x100000),
    ("ACL_HBM_MEM", 1),
    ("ACL_MEM_P2P_HUGE1G", 17),
    # query_event (legacy) vs query_event_status: opposite numbering
    ("ACL_EVENT_STATUS_COMPLETE", 0),
    ("ACL_EVENT_STATUS_NOT_READY", 1),
    ("ACL_EVENT_RECORDED_STATUS_NOT_READY", 0),
    ("ACL_EVENT_RECORDED_STATUS_COMPLETE", 1),
    ("ACL_EVENT_WAIT_STATUS_RESERVED", 0xFFFF),
    ("ACL_STREAM_STATUS_NOT_READY", 1),
    ("ACL_CALLBACK_BLOCK", 1),
    ("ACL_EVENT_SYNC", 0x1),
    ("ACL_EVENT_TIME_LINE", 0x8),
    ("ACL_EVENT_EXTERNAL", 0x20),
    ("ACL_EVENT_IPC", 0x40),
    ("ACL_EVENT_WAIT_EXTERNAL", 1),
    ("ACL_STREAM_DEVICE_USE_ONLY", 0x20),
    ("ACL_STOP_ON_FAILURE", 1),
    ("ACL_OPT_ENABLE_KERNEL_EARLY_START", 3),
    ("ACL_STREAM_ATTR_PRIORITY", 5),
    ("ACL_RT_DEVICE_STATUS_END", 0xFFFF),
    ("ACL_FORMAT_UNDEFINED", -1),
    ("ACL_FORMAT_ND", 2),
    ("ACL_FORMAT_FRACTAL_NZ", 29),
    ("ACL_FRACTAL_Z_3D", 33),
    ("ACL_FORMAT_FRACTAL_NZ_C0_8", 54),
    ("ACL_DT_UNDEFINED", -1),
    ("ACL_FLOAT16", 1),
    ("ACL_INT32", 3),
    ("ACL_BF16", 27),
    ("ACL_FLOAT4_E1M2", 41),
    ("ACL_ERROR", 3),  # log level, not a return code
    ("ACL_MEMTYPE_HOST", 1),
    ("ACL_MAX_DIM_CNT", 128),
    ("ACL_DYNAMIC_TENSOR_NAME", "ascend_mbatch_shape_data"),
    ("PIXEL_FORMAT_YUV_SEMIPLANAR_420", 1),
    ("PIXEL_FORMAT_BGR_888_PLANAR", 70),
    ("PIXEL_FORMAT_UNKNOWN", 10000),
    ("ACL_JPEG_CSS_UNKNOWN", 1000),
    ("DVPP_CHNMODE_PNGD", 8),
    ("NPY_FLOAT32", 11),
    ("NPY_BYTE", 1),
    ("NPY_INT", 5),
]

# Return-code ranges the reference lists without gaps.
CONTIGUOUS_RANGES: list[tuple[int, int]] = [
    (100000, 100045),
    (148046, 148053),
    (200000, 200007),
    (500000, 500005),
    (107000, 107045),
    (207000, 207021),
    (507000, 507057),
    (507899, 507916),
    (145000, 145003),
    (145011, 145022),
    (545000, 545009),
    (561101, 561119),
]

ENUM_CLASSES: list[type[Enum]] = [
    obj
    for obj in vars(C).values()
    if inspect.isclass(obj) and issubclass(obj, Enum) and obj.__module__ == C.__name__
]


def _is_error_code_name(name: str) -> bool:
    """True for module names that denote return codes (ACL_ERROR alone is a log level)."""
    return (
        name.startswith(("ACL_ERROR_", "ACLNN_ERR_"))
        or name in {"ACL_SUCCESS", "ACL_RT_SUCCESS", "ACLNN_SUCCESS"}
    )


@pytest.mark.parametrize(("name", "value"), SPOT_VALUES)
def test_spot_values(name: str, value: int | str) -> None:
    assert getattr(C, name) == value
    assert type(getattr(C, name)) is type(value)  # flat constants are plain int / str


def test_event_status_enums_use_opposite_numbering() -> None:
    assert C.EventStatus.COMPLETE == 0
    assert C.EventRecordedStatus.COMPLETE == 1
    assert C.EventWaitStatus.COMPLETE == 0
    assert C.EventStatus.NOT_READY == C.EventRecordedStatus.COMPLETE
    assert C.EventStatus.RESERVED == 2
    assert C.EventWaitStatus.RESERVED == 0xFFFF


@pytest.mark.parametrize(("low", "high"), CONTIGUOUS_RANGES)
def test_code_ranges_have_no_gaps(low: int, high: int) -> None:
    missing = [v for v in range(low, high + 1) if C.code_name(v).startswith("UNKNOWN")]
    assert missing == []


def test_error_code_counts() -> None:
    assert len(C.ErrorCode) == 278
    assert C.code_name(145004) == "UNKNOWN(145004)"  # GE skips 145004/145005 and 145010
    assert C.code_name(100046) == "UNKNOWN(100046)"


def test_every_error_global_is_an_enum_member_or_documented_alias() -> None:
    names = {n for n in vars(C) if _is_error_code_name(n)}
    canonical = {m.name for m in C.ErrorCode}
    assert names == canonical | set(C.ERROR_CODE_ALIASES)
    assert canonical.isdisjoint(C.ERROR_CODE_ALIASES)


def test_no_two_canonical_names_share_a_value() -> None:
    by_value: dict[int, list[str]] = {}
    for name in vars(C):
        if _is_error_code_name(name) and name not in C.ERROR_CODE_ALIASES:
            by_value.setdefault(getattr(C, name), []).append(name)
    shared = {v: ns for v, ns in by_value.items() if len(ns) > 1}
    assert shared == {}


@pytest.mark.parametrize(("alias", "canonical"), sorted(C.ERROR_CODE_ALIASES.items()))
def test_aliases_have_the_canonical_value(alias: str, canonical: str) -> None:
    assert getattr(C, alias) == getattr(C, canonical) == C.ErrorCode[canonical]
    assert C.code_name(getattr(C, alias)) == canonical
    assert alias in C.explain(getattr(C, alias)).deprecated_names


def test_error_code_name_is_canonical_head_name() -> None:
    assert C.ErrorCode(207018).name == "ACL_ERROR_RT_DEVICE_OOM"
    assert C.ErrorCode(0).name == "ACL_SUCCESS"
    assert C.ErrorCode(561105).name == "ACLNN_ERR_INNER_KEY_CONFLICT"
    assert C.code_name(C.ACL_ERROR_RT_DEVIDE_OOM) == "ACL_ERROR_RT_DEVICE_OOM"


@pytest.mark.parametrize("member", list(C.ErrorCode), ids=lambda m: m.name)
def test_explain_every_error_code(member: C.ErrorCode) -> None:
    info = C.explain(member)
    assert info.code == member.value
    assert info.name == member.name == C.code_name(member.value)
    assert getattr(C, info.name) == member.value
    assert info.meaning.strip() and info.meaning.endswith((".", ")"))
    assert info.cause.strip()
    assert str(info).startswith(f"{member.value} {member.name}: {info.meaning} Usual cause: ")


def test_explain_context_null() -> None:
    info = C.explain(107002)
    assert info.name == "ACL_ERROR_RT_CONTEXT_NULL"
    assert "set_context" in info.cause
    assert "set_context" in str(info)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (107003, ["synchronize_stream", "set_context"]),
        (100002, ["ignore"]),
        (100037, ["finalize"]),
        (107000, ["dest_max", "stream_wait_event", "twice"]),
        (207001, ["get_mem_info", "2 MiB"]),
        (107015, ["subscribe_report"]),
        (507000, ["never recorded"]),
        (107006, ["synchronize"]),
        (145002, ["load_from_file"]),
        (145006, ["OM"]),
        (100024, ["set_model_dir"]),
        (561103, ["executor"]),
        (207000, ["HOST_TO_HOST"]),
    ],
)
def test_explain_specific_causes(code: int, words: list[str]) -> None:
    cause = C.explain(code).cause
    for word in words:
        assert word in cause


def test_explain_deprecated_code_points_to_replacement() -> None:
    for old, new in C.DEPRECATED_CODE_REPLACEMENTS.items():
        info = C.explain(old)
        assert str(new) in info.cause
        assert C.ErrorCode(new).name in info.cause
    assert C.DEPRECATED_CODE_REPLACEMENTS[100034] == 107015


@pytest.mark.parametrize("code", [1, 12345, -1, 99_999_999, 0x7F0012345678])
def test_explain_unknown_code(code: int) -> None:
    info = C.explain(code)
    assert info.name == "UNKNOWN"
    assert info.code == code
    assert "not in the ACL headers" in info.meaning
    assert info.cause
    assert info.deprecated_names == ()
    assert C.code_name(code) == f"UNKNOWN({code})"


@pytest.mark.parametrize("bad", ["107002", 107002.0, None, True, [107002]])
def test_explain_rejects_non_ints(bad: object) -> None:
    with pytest.raises(TypeError):
        C.explain(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        C.code_name(bad)  # type: ignore[arg-type]


def test_explain_accepts_int_like_values() -> None:
    assert C.explain(C.ErrorCode.ACL_ERROR_RT_CONTEXT_NULL).code == 107002
    assert type(C.explain(C.ErrorCode.ACL_ERROR_RT_CONTEXT_NULL).code) is int


def test_code_info_is_frozen() -> None:
    info = C.explain(0)
    with pytest.raises(AttributeError):
        info.code = 1  # type: ignore[misc]


@pytest.mark.parametrize("cls", ENUM_CLASSES, ids=lambda c: c.__name__)
def test_enum_members_equal_flat_constants(cls: type[Enum]) -> None:
    for member in cls:
        name = C.header_name(member)
        assert getattr(C, name) == member.value, name


@pytest.mark.parametrize(
    ("cls", "prefix"),
    [
        (C.MemcpyKind, "ACL_MEMCPY_"),
        (C.MemMallocPolicy, "ACL_MEM_MALLOC_"),
        (C.EventStatus, "ACL_EVENT_STATUS_"),
        (C.EventRecordedStatus, "ACL_EVENT_RECORDED_STATUS_"),
        (C.EventWaitStatus, "ACL_EVENT_WAIT_STATUS_"),
        (C.StreamStatus, "ACL_STREAM_STATUS_"),
        (C.StreamAttr, "ACL_STREAM_ATTR_"),
        (C.Format, "ACL_FORMAT_"),
        (C.PixelFormat, "PIXEL_FORMAT_"),
        (C.SysParamOpt, "ACL_OPT_"),
        (C.TsId, "ACL_TS_ID_"),
    ],
)
def test_enum_covers_every_flat_constant_with_its_prefix(cls: type[Enum], prefix: str) -> None:
    flat = {n for n in vars(C) if n.startswith(prefix)}
    assert flat == {C.header_name(m) for m in cls} - {"ACL_FRACTAL_Z_3D"}


def test_header_name_special_cases() -> None:
    assert C.header_name(C.Format.FRACTAL_Z_3D) == "ACL_FRACTAL_Z_3D"
    assert C.header_name(C.DataType.UNDEFINED) == "ACL_DT_UNDEFINED"
    assert C.header_name(C.ErrorCode.ACL_ERROR_RT_DEVICE_OOM) == "ACL_ERROR_RT_DEVICE_OOM"
    assert C.header_name(C.EventFlag.EXTERNAL) == "ACL_EVENT_EXTERNAL"
    with pytest.raises(ValueError):
        C.header_name(C.EventFlag.SYNC | C.EventFlag.TIME_LINE)
    with pytest.raises(TypeError):
        C.header_name(C.EventFlag)  # type: ignore[arg-type]


def test_flags_combine() -> None:
    flags = C.ACL_EVENT_SYNC | C.ACL_EVENT_TIME_LINE
    assert C.EventFlag(flags) == C.EventFlag.SYNC | C.EventFlag.TIME_LINE
    assert C.EventFlag.SYNC in C.EventFlag(flags)


@pytest.mark.parametrize(
    ("dtype", "size"),
    [
        (C.ACL_FLOAT, 4),
        (C.ACL_FLOAT16, 2),
        (C.ACL_BF16, 2),
        (C.ACL_INT4, 1),
        (C.ACL_UINT1, 1),
        (C.ACL_STRING, 0),
        (C.ACL_DT_UNDEFINED, 0),
        (C.ACL_BOOL, 1),
        (C.ACL_COMPLEX32, 4),
        (C.ACL_COMPLEX64, 8),
        (C.ACL_COMPLEX128, 16),
        (C.ACL_DOUBLE, 8),
        (C.ACL_HIFLOAT8, 1),
        (C.ACL_FLOAT6_E3M2, 8),
        (C.ACL_FLOAT4_E1M2, 8),
    ],
)
def test_data_type_size(dtype: int, size: int) -> None:
    assert C.data_type_size(dtype) == size
    assert C.DATA_TYPE_SIZE[dtype] == size
    assert C.DataType(dtype).size == size


def test_data_type_size_table_covers_exactly_the_data_types() -> None:
    assert set(C.DATA_TYPE_SIZE) == {m.value for m in C.DataType}


@pytest.mark.parametrize("dtype", [5, 14, 15, 18, 26, 28, 42, -2, 1000])
def test_data_type_size_unknown_is_zero(dtype: int) -> None:
    assert C.data_type_size(dtype) == 0
    # what real aclDataTypeSize gives from its default case
    assert C.DATA_TYPE_SIZE.get(dtype, C.DATA_TYPE_SIZE_DEFAULT_CASE) == 8


def test_data_type_size_rejects_non_ints() -> None:
    with pytest.raises(TypeError):
        C.data_type_size("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        C.data_type_size(1.0)  # type: ignore[arg-type]


def test_all_lists_public_names() -> None:
    assert len(C.__all__) == len(set(C.__all__))
    for name in C.__all__:
        assert hasattr(C, name), name
    for cls in ENUM_CLASSES:
        assert cls.__name__ in C.__all__
    for name in ("explain", "code_name", "header_name", "data_type_size", "CodeInfo",
                 "DATA_TYPE_SIZE", "ACL_SUCCESS", "ACL_ERROR_RT_DEVIDE_OOM", "NPY_FLOAT32"):
        assert name in C.__all__
    assert not any(name.startswith("_") for name in C.__all__)


def test_flat_constants_are_int_or_str() -> None:
    for name in C.__all__:
        value = getattr(C, name)
        if name.isupper() and not isinstance(value, dict):
            assert type(value) in (int, str), name


def test_module_imports_only_the_standard_library() -> None:
    source = Path(C.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            assert node.module is not None
            imported.add(node.module.split(".")[0])
    assert imported
    assert "acl_lab" not in imported
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)
