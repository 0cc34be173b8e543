"""The one table of the C API (``acl_lab/capi/api.py``): the headers are generated from it,
every pyACL function has a C twin (or a reason to be Python-only), and the generic bridge of
each row passes the pyACL function exactly the arguments its format asks for."""

from __future__ import annotations

import shutil
from pathlib import Path

import acl_lab.aclnn  # registers the aclnn extension
import acl_lab.op_compiler  # registers the op compiler extension
from acl_lab.acl._boundary import registry
from acl_lab.capi import api, bridge

#: the C names of the issue's missing functions, which the public C++ samples call
SAMPLE_NAMES = (
    "aclmdlQuerySize", "aclmdlLoadFromFileWithMem", "aclmdlGetInputDims",
    "aclmdlGetDynamicBatch", "aclmdlSetDynamicBatchSize", "aclmdlSetInputDynamicDims",
    "aclmdlGetInputNameByIndex", "aclmdlGetOutputDataType", "aclGetDataBufferSize",
    "aclAppLog", "aclGetTensorDescNumDims", "aclGetTensorDescDimV2", "aclGetTensorDescType",
    "aclSetTensorConst", "aclrtGetMemInfo", "aclrtGetSocName", "aclrtMemsetAsync",
    "aclblasGemmEx", "aclopCompileAndExecute", "acldvppJpegDecodeAsync",
    "acldvppVpcBatchCropAsync", "aclvdecSetChannelDescCallback", "aclvencSendFrame")


def test_the_headers_are_generated_from_the_table() -> None:
    assert api.stale_headers() == []
    text = (api.INCLUDE_DIR / "acl" / "ops" / "acl_dvpp.h").read_text()
    assert "ACL_FUNC_VISIBILITY aclError aclvdecSendFrame(aclvdecChannelDesc *channelDesc," \
        in text


def test_a_changed_row_makes_its_header_stale(tmp_path: Path) -> None:
    shutil.copytree(api.INCLUDE_DIR, tmp_path / "include")
    path = tmp_path / "include" / "acl" / "acl_rt.h"
    path.write_text(path.read_text().replace("aclrtMemsetAsync", "aclrtMemsetAsyncOld"))
    assert api.stale_headers(tmp_path / "include") == ["acl/acl_rt.h"]
    assert api.write_headers(tmp_path / "include") == ["acl/acl_rt.h"]
    assert api.stale_headers(tmp_path / "include") == []


def test_every_pyacl_function_has_a_c_twin_or_a_reason() -> None:
    rows = api.functions()
    twins = {f.hint.py or bridge._PYACL_NAME.get(f.name) for f in rows}
    names = set(registry())
    missing = sorted(n for n in names if n not in twins and api.python_only(n) is None)
    assert missing == []
    # a Python-only entry names a function that exists, and has a reason
    assert set(api.PYTHON_ONLY) <= names
    assert all(len(why) > 20 for why in api.PYTHON_ONLY.values())
    assert not set(api.PYTHON_ONLY) & twins
    assert {f.name for f in rows} >= set(SAMPLE_NAMES)


def test_a_function_without_a_c_twin_is_caught() -> None:
    assert acl_lab.aclnn and acl_lab.op_compiler  # both registered their functions
    names = set(registry())
    twins = {f.hint.py or bridge._PYACL_NAME.get(f.name) for f in api.functions()
             if f.name != "aclrtMemsetAsync"}
    missing = sorted(n for n in names if n not in twins and api.python_only(n) is None)
    assert missing == ["acl.rt.memset_async"]


def test_every_generic_row_matches_the_pyacl_format() -> None:
    reg = registry()
    for f in api.functions():
        name = f.hint.py or bridge._PYACL_NAME.get(f.name)
        assert name is not None, f.name
        assert reg[name]["cname"] == f.name
        if f.hint.custom:
            continue
        roles = [bridge._role(f, p) for p in f.params]
        inputs = sum(r in ("in", "str", "array", "struct_in") for r in roles)
        outputs = sum(r in ("out", "struct_out") for r in roles)
        letters = (reg[name]["fmt"] or "").replace("|", "")
        assert inputs == len(letters), (f.name, roles, reg[name]["fmt"])
        out = reg[name]["out"]
        if isinstance(out, int) and out > 0 and outputs:
            assert outputs == out, (f.name, roles, out)
        elif not isinstance(out, int) or out == 0:
            assert outputs == 0, (f.name, roles, out)


def test_libraries_split_as_in_cann() -> None:
    libs = {f.name: f.library for f in api.functions()}
    assert libs["aclrtMalloc"] == libs["aclmdlExecute"] == libs["aclopExecuteV2"] == \
        "ascendcl"
    assert libs["acldvppMalloc"] == libs["aclvdecSendFrame"] == "acl_dvpp"
    assert libs["aclblasGemmEx"] == "acl_cblas"
    assert libs["aclopCompileAndExecute"] == "acl_op_compiler"
