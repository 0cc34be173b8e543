"""The one table of acl_lab's C API: every C function, the header and library it belongs to,
and the pyACL function that runs it.

Each row is a C prototype (written for acl_lab from CANN's documented signatures: facts, not
copied text) plus, where the C and Python shapes differ, a hint saying how the C arguments
become the pyACL arguments. From this table come:

* the declarations in the headers under ``acl_lab/include/acl`` (the block between the
  ``acl_lab:generated`` markers of each header; ``python -m acl_lab.capi.api`` rewrites them,
  and ``tests/capi/test_api_table.py`` fails when a header is stale);
* the C definitions of every library of the toolkit (``libascendcl.so`` and the thin
  ``libacl_dvpp.so``, ``libacl_cblas.so``, ``libacl_op_compiler.so`` over it) and their cffi
  declarations (:mod:`.build`);
* the Python side of each C function (:mod:`.bridge`): a generic marshaller built from the
  row (inputs in C order become the pyACL arguments, non-const scalar and handle pointers
  receive the pyACL outputs in order), or the hand-written function of the bridge for the
  rows marked ``custom``.

The pyACL function of a row is the registered ``@acl_api`` function whose C name is the
row's name (``py=`` names it when several share one C name). Every registered function has a
row unless :data:`PYTHON_ONLY` gives the reason it has no C twin
(``tests/capi/test_api_table.py``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
INCLUDE_DIR = PACKAGE_DIR / "include"

#: header -> the library of the toolkit that defines its functions (CANN's split: the DVPP
#: media API in libacl_dvpp, the BLAS single ops in libacl_cblas, online compilation in
#: libacl_op_compiler, everything else in libascendcl)
LIBRARIES: dict[str, str] = {
    "acl/acl_base.h": "ascendcl", "acl/acl_rt.h": "ascendcl", "acl/acl_mdl.h": "ascendcl",
    "acl/acl_op.h": "ascendcl", "acl/acl_prof.h": "ascendcl",
    "acl/ops/acl_dvpp.h": "acl_dvpp", "acl/ops/acl_cblas.h": "acl_cblas",
    "acl/acl_op_compiler.h": "acl_op_compiler",
}
HEADERS: tuple[str, ...] = tuple(LIBRARIES)
#: headers that only include others (no functions of their own)
UMBRELLAS: tuple[str, ...] = ("acl/acl.h",)

#: C scalar types and enum typedefs -> the C type the embedded Python is passed
SCALARS: dict[str, str] = {
    "aclError": "int", "int": "int", "int8_t": "int8_t", "int16_t": "int16_t",
    "int32_t": "int32_t", "uint32_t": "uint32_t", "int64_t": "int64_t",
    "uint64_t": "uint64_t", "size_t": "size_t", "uint8_t": "uint8_t", "uint16_t": "uint16_t",
    "aclFloat16": "uint16_t", "float": "float", "double": "double", "void": "void",
}
#: enum typedefs of the headers (passed as int)
ENUMS: frozenset[str] = frozenset({
    "aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy",
    "aclrtCallbackBlockType", "aclrtRunMode", "aclrtMemAttr", "aclrtEventStatus",
    "aclrtEventRecordedStatus", "aclrtStreamStatus", "aclMemType", "aclLogLevel",
    "acldvppPixelFormat", "acldvppStreamFormat", "acldvppJpegFormat", "aclTransType",
    "aclComputeType", "aclopEngineType", "aclopCompileType", "aclAippInputFormat",
    "aclmdlInputAippType", "aclprofAicoreMetrics", "aclprofConfigType",
})
#: typedefs that are pointers already (handles passed by value)
POINTER_TYPES: frozenset[str] = frozenset({"aclrtStream", "aclrtEvent", "aclrtContext"})
#: function-pointer typedefs (only custom rows take them)
CALLBACK_TYPES: frozenset[str] = frozenset({"aclrtCallback", "aclvdecCallback",
                                            "aclvencCallback"})
#: structs a function fills or reads by pointer (declared in the headers, laid out for cffi)
STRUCTS: frozenset[str] = frozenset({"aclmdlIODims", "aclmdlBatch", "aclmdlHW"})


@dataclass(frozen=True)
class Hint:
    """How a row's C arguments differ from the pyACL arguments (all optional).

    ``arrays`` maps an array parameter to the parameter holding its length (the count is
    not passed to Python unless it is in ``keep``); ``ptrs`` are pointer parameters passed
    as addresses although their type looks like an output (an in/out ``uint32_t *size``);
    ``ignore`` are C parameters the pyACL function does not take (a string's length);
    ``optional`` are output pointers the caller may leave NULL (the public samples pass
    nullptr for the JPEG's components and format); ``threads`` are thread ids the emulator
    must already know (a C thread that has not
    called ACL yet, see ``bridge._wait_for_thread``); ``py`` names the pyACL function when
    several share the C name; ``custom`` says the bridge has a hand-written function for it.
    """

    arrays: dict[str, str] = field(default_factory=dict)
    keep: tuple[str, ...] = ()
    ptrs: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    threads: tuple[str, ...] = ()
    #: output pointers that may be NULL (the output is then not written)
    optional: tuple[str, ...] = ()
    py: str = ""
    custom: bool = False


@dataclass(frozen=True)
class Param:
    """One C parameter: its type as declared, its name, and the C type the embedded Python
    entry point takes for it (``void *`` for every pointer)."""

    ctype: str
    name: str
    ffi_type: str


@dataclass(frozen=True)
class CFunc:
    """One row: a C function of the API."""

    name: str
    ret: str
    ret_ffi: str
    params: tuple[Param, ...]
    header: str
    hint: Hint
    variadic: bool = False

    @property
    def library(self) -> str:
        """The toolkit library that defines it (``ascendcl``, ``acl_dvpp``, ...)."""
        return LIBRARIES[self.header]

    def declaration(self) -> str:
        """The prototype as the header declares it (without the visibility macro)."""
        params = ", ".join(f"{p.ctype} {p.name}".replace("* ", "*") for p in self.params)
        if self.variadic:
            params += ", ..."
        sep = "" if self.ret.endswith("*") else " "
        return f"{self.ret}{sep}{self.name}({params or 'void'})"


def ffi_type(ctype: str) -> str:
    """The C type the embedded Python entry point takes for ``ctype``."""
    t = ctype.replace("const ", "").strip()
    if t == "char *":
        return "char *"
    if "*" in t or "[]" in t or t in POINTER_TYPES or t in CALLBACK_TYPES:
        return "void *"
    if t in ENUMS:
        return "int"
    if t not in SCALARS:
        raise ValueError(f"acl_lab capi: no C type mapping for {ctype!r}")
    return SCALARS[t]


def _param(text: str) -> Param:
    text = " ".join(text.split())
    array = text.endswith("[]")
    if array:
        text = text[:-2].rstrip()
    m = re.match(r"(?P<type>.*?[\s\*])(?P<name>\w+)$", text)
    if m is None:
        raise ValueError(f"acl_lab capi: cannot parse parameter {text!r}")
    ctype = " ".join(m.group("type").replace("*", " * ").split()).replace("* *", "**")
    if array:
        ctype = (ctype + " *").replace("* *", "**")
    return Param(ctype, m.group("name"), ffi_type(ctype))


_DECL = re.compile(r"^(?P<ret>[\w\s\*]+?)\s*(?P<name>\b\w+)\s*\((?P<params>[^)]*)\)\s*;?$", re.S)


def parse(decl: str, header: str, hint: Hint | None = None) -> CFunc:
    """One row from its C prototype."""
    m = _DECL.match(" ".join(decl.split()))
    if m is None:
        raise ValueError(f"acl_lab capi: cannot parse {decl!r}")
    ret = " ".join(m.group("ret").replace("*", " * ").split()).replace("* *", "**")
    raw = m.group("params").strip()
    parts = [] if raw in ("", "void") else [p.strip() for p in raw.split(",")]
    variadic = bool(parts) and parts[-1] == "..."
    if variadic:
        parts = parts[:-1]
    return CFunc(m.group("name"), ret, ffi_type(ret), tuple(_param(p) for p in parts),
                 header, hint or Hint(), variadic)


# ------------------------------------------------------------------------------------------
# The rows, header by header. Signatures: CANN's acl_base.h, acl_rt.h, acl_mdl.h, acl_op.h,
# acl_prof.h, ops/acl_dvpp.h, ops/acl_cblas.h and acl_op_compiler.h as documented in the
# AscendCL API reference (hicann/ge docs/graph_engine_api, hicann/runtime docs).

_BASE = """
float aclFloat16ToFloat(aclFloat16 value);
aclFloat16 aclFloatToFloat16(float value);
aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);
void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);
uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer);
size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);
size_t aclDataTypeSize(aclDataType dataType);
aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims,
    aclFormat format);
void aclDestroyTensorDesc(const aclTensorDesc *desc);
aclDataType aclGetTensorDescType(const aclTensorDesc *desc);
aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc);
size_t aclGetTensorDescSize(const aclTensorDesc *desc);
size_t aclGetTensorDescElementCount(const aclTensorDesc *desc);
size_t aclGetTensorDescNumDims(const aclTensorDesc *desc);
int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index);
aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize);
const char *aclGetTensorDescName(aclTensorDesc *desc);
void aclSetTensorDescName(aclTensorDesc *desc, const char *name);
aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format);
aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims);
aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType);
aclError aclSetTensorConst(aclTensorDesc *desc, void *dataBuffer, size_t length);
const char *aclGetRecentErrMsg(void);
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
    const char *fmt, ...);
"""

_RT = """
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclFinalizeReference(uint64_t *refCount);
aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);
const char *aclrtGetSocName(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtResetDeviceForce(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
aclError aclrtGetRunMode(aclrtRunMode *runMode);
aclError aclrtSynchronizeDevice(void);
aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);
aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtDestroyStreamForce(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
    aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
    aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
    aclrtStream stream);
aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
    aclrtStream stream);
aclError aclrtProcessReport(int32_t timeout);
aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);
"""

_MDL = """
aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId, void *workPtr,
    size_t workSize, void *weightPtr, size_t weightSize);
aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);
aclError aclmdlUnload(uint32_t modelId);
aclmdlDesc *aclmdlCreateDesc(void);
aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);
aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);
aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index);
aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index);
aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch);
aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw);
aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index,
    size_t *gearCount);
aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims,
    size_t gearCount);
aclmdlDataset *aclmdlCreateDataset(void);
aclError aclmdlDestroyDataset(const aclmdlDataset *dataset);
aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);
aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
    uint64_t batchSize);
aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
    uint64_t height, uint64_t width);
aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
    const aclmdlIODims *dims);
aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output);
aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
    aclrtStream stream);
aclmdlAIPP *aclmdlCreateAIPP(uint64_t batchSize);
aclError aclmdlDestroyAIPP(const aclmdlAIPP *aippParmsSet);
aclError aclmdlGetAippDataSize(uint64_t batchSize, size_t *size);
aclError aclmdlGetAippType(uint32_t modelId, size_t index, aclmdlInputAippType *type,
    size_t *dynamicAttachedDataIndex);
aclError aclmdlSetAIPPInputFormat(aclmdlAIPP *aippParmsSet, aclAippInputFormat inputFormat);
aclError aclmdlSetAIPPCscParams(aclmdlAIPP *aippParmsSet, int8_t csc_switch, int16_t cscMatrixR0C0,
    int16_t cscMatrixR0C1, int16_t cscMatrixR0C2, int16_t cscMatrixR1C0, int16_t cscMatrixR1C1,
    int16_t cscMatrixR1C2, int16_t cscMatrixR2C0, int16_t cscMatrixR2C1, int16_t cscMatrixR2C2,
    uint8_t cscOutputBiasR0, uint8_t cscOutputBiasR1, uint8_t cscOutputBiasR2,
    uint8_t cscInputBiasR0, uint8_t cscInputBiasR1, uint8_t cscInputBiasR2);
aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t rbuvSwapSwitch);
aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t axSwapSwitch);
aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP *aippParmsSet, int32_t srcImageSizeW,
    int32_t srcImageSizeH);
aclError aclmdlSetAIPPScfParams(aclmdlAIPP *aippParmsSet, int8_t scfSwitch, int32_t scfInputSizeW,
    int32_t scfInputSizeH, int32_t scfOutputSizeW, int32_t scfOutputSizeH, uint64_t batchIndex);
aclError aclmdlSetAIPPCropParams(aclmdlAIPP *aippParmsSet, int8_t cropSwitch, int32_t cropStartPosW,
    int32_t cropStartPosH, int32_t cropSizeW, int32_t cropSizeH, uint64_t batchIndex);
aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP *aippParmsSet, int8_t paddingSwitch,
    int32_t paddingSizeTop, int32_t paddingSizeBottom, int32_t paddingSizeLeft,
    int32_t paddingSizeRight, uint64_t batchIndex);
aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP *aippParmsSet, int16_t dtcPixelMeanChn0,
    int16_t dtcPixelMeanChn1, int16_t dtcPixelMeanChn2, int16_t dtcPixelMeanChn3,
    uint64_t batchIndex);
aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP *aippParmsSet, float dtcPixelMinChn0,
    float dtcPixelMinChn1, float dtcPixelMinChn2, float dtcPixelMinChn3, uint64_t batchIndex);
aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP *aippParmsSet, float dtcPixelVarReciChn0,
    float dtcPixelVarReciChn1, float dtcPixelVarReciChn2, float dtcPixelVarReciChn3,
    uint64_t batchIndex);
aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset *dataset, size_t index,
    const aclmdlAIPP *aippParmsSet);
aclError aclmdlSetAIPPByInputIndex(uint32_t modelId, aclmdlDataset *dataset, size_t index,
    const aclmdlAIPP *aippParmsSet);
"""

_OP = """
aclError aclopSetModelDir(const char *modelDir);
aclopAttr *aclopCreateAttr(void);
void aclopDestroyAttr(const aclopAttr *attr);
aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue);
aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue);
aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType values);
aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
    const uint8_t *values);
aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
    const int64_t *values);
aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
    const float *values);
aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues,
    const char **values);
aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists,
    const int *numValues, const int64_t *const values[]);
aclError aclopExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
    const aclDataBuffer *const inputs[], int numOutputs, const aclTensorDesc *const outputDesc[],
    aclDataBuffer *const outputs[], const aclopAttr *attr, aclrtStream stream);
aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
    aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
    aclopAttr *attr, aclrtStream stream);
aclError aclopCreateHandle(const char *opType, int numInputs,
    const aclTensorDesc *const inputDesc[], int numOutputs, const aclTensorDesc *const outputDesc[],
    const aclopAttr *opAttr, aclopHandle **handle);
void aclopDestroyHandle(aclopHandle *handle);
aclError aclopExecWithHandle(aclopHandle *handle, int numInputs,
    const aclDataBuffer *const inputs[], int numOutputs, aclDataBuffer *const outputs[],
    aclrtStream stream);
aclError aclopCast(const aclTensorDesc *srcDesc, const aclDataBuffer *srcBuffer,
    const aclTensorDesc *dstDesc, aclDataBuffer *dstBuffer, uint8_t truncate, aclrtStream stream);
aclError aclopInferShape(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
    aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[], aclopAttr *attr);
"""

_PROF = """
aclError aclprofInit(const char *profilerResultPath, size_t length);
aclError aclprofFinalize(void);
aclError aclprofStart(const aclprofConfig *profilerConfig);
aclError aclprofStop(const aclprofConfig *profilerConfig);
aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
    aclprofAicoreMetrics aicoreMetrics, const aclprofAicoreEvents *aicoreEvents,
    uint64_t dataTypeConfig);
aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
aclError aclprofSetConfig(aclprofConfigType configType, const char *config, size_t configLength);
aclError aclprofModelSubscribe(uint32_t modelId,
    const aclprofSubscribeConfig *profSubscribeConfig);
aclError aclprofModelUnSubscribe(uint32_t modelId);
aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
    aclprofAicoreMetrics aicoreMetrics, void *fd);
aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig);
aclError aclprofGetOpDescSize(size_t *opDescSize);
aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber);
aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index,
    size_t *opTypeLen);
aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
    size_t opTypeLen);
aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index,
    size_t *opNameLen);
aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
    size_t opNameLen);
uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index);
uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index);
uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index);
size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index);
"""

_DVPP = """
aclError acldvppMalloc(void **devPtr, size_t size);
aclError acldvppFree(void *devPtr);
acldvppChannelDesc *acldvppCreateChannelDesc(void);
aclError acldvppDestroyChannelDesc(acldvppChannelDesc *channelDesc);
uint64_t acldvppGetChannelDescChannelId(const acldvppChannelDesc *channelDesc);
aclError acldvppSetChannelDescMode(acldvppChannelDesc *channelDesc, uint32_t mode);
aclError acldvppCreateChannel(acldvppChannelDesc *channelDesc);
aclError acldvppDestroyChannel(acldvppChannelDesc *channelDesc);
acldvppPicDesc *acldvppCreatePicDesc(void);
aclError acldvppDestroyPicDesc(acldvppPicDesc *picDesc);
aclError acldvppSetPicDescData(acldvppPicDesc *picDesc, void *dataDev);
aclError acldvppSetPicDescSize(acldvppPicDesc *picDesc, uint32_t size);
aclError acldvppSetPicDescFormat(acldvppPicDesc *picDesc, acldvppPixelFormat format);
aclError acldvppSetPicDescWidth(acldvppPicDesc *picDesc, uint32_t width);
aclError acldvppSetPicDescHeight(acldvppPicDesc *picDesc, uint32_t height);
aclError acldvppSetPicDescWidthStride(acldvppPicDesc *picDesc, uint32_t widthStride);
aclError acldvppSetPicDescHeightStride(acldvppPicDesc *picDesc, uint32_t heightStride);
aclError acldvppSetPicDescRetCode(acldvppPicDesc *picDesc, uint32_t retCode);
void *acldvppGetPicDescData(const acldvppPicDesc *picDesc);
uint32_t acldvppGetPicDescSize(const acldvppPicDesc *picDesc);
acldvppPixelFormat acldvppGetPicDescFormat(const acldvppPicDesc *picDesc);
uint32_t acldvppGetPicDescWidth(const acldvppPicDesc *picDesc);
uint32_t acldvppGetPicDescHeight(const acldvppPicDesc *picDesc);
uint32_t acldvppGetPicDescWidthStride(const acldvppPicDesc *picDesc);
uint32_t acldvppGetPicDescHeightStride(const acldvppPicDesc *picDesc);
uint32_t acldvppGetPicDescRetCode(const acldvppPicDesc *picDesc);
acldvppBatchPicDesc *acldvppCreateBatchPicDesc(uint32_t batchSize);
acldvppPicDesc *acldvppGetPicDesc(acldvppBatchPicDesc *batchPicDesc, uint32_t index);
aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc *batchPicDesc);
acldvppRoiConfig *acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top,
    uint32_t bottom);
aclError acldvppDestroyRoiConfig(acldvppRoiConfig *roiConfig);
aclError acldvppSetRoiConfig(acldvppRoiConfig *config, uint32_t left, uint32_t right, uint32_t top,
    uint32_t bottom);
aclError acldvppSetRoiConfigLeft(acldvppRoiConfig *config, uint32_t left);
aclError acldvppSetRoiConfigRight(acldvppRoiConfig *config, uint32_t right);
aclError acldvppSetRoiConfigTop(acldvppRoiConfig *config, uint32_t top);
aclError acldvppSetRoiConfigBottom(acldvppRoiConfig *config, uint32_t bottom);
acldvppResizeConfig *acldvppCreateResizeConfig(void);
aclError acldvppDestroyResizeConfig(acldvppResizeConfig *resizeConfig);
aclError acldvppSetResizeConfigInterpolation(acldvppResizeConfig *resizeConfig,
    uint32_t interpolation);
uint32_t acldvppGetResizeConfigInterpolation(const acldvppResizeConfig *resizeConfig);
acldvppJpegeConfig *acldvppCreateJpegeConfig(void);
aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig *jpegeConfig);
aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig *jpegeConfig, uint32_t level);
uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig *jpegeConfig);
acldvppStreamDesc *acldvppCreateStreamDesc(void);
aclError acldvppDestroyStreamDesc(acldvppStreamDesc *streamDesc);
aclError acldvppSetStreamDescData(acldvppStreamDesc *streamDesc, void *dataDev);
aclError acldvppSetStreamDescSize(acldvppStreamDesc *streamDesc, uint32_t size);
aclError acldvppSetStreamDescFormat(acldvppStreamDesc *streamDesc, acldvppStreamFormat format);
aclError acldvppSetStreamDescTimestamp(acldvppStreamDesc *streamDesc, uint64_t timestamp);
aclError acldvppSetStreamDescRetCode(acldvppStreamDesc *streamDesc, uint32_t retCode);
aclError acldvppSetStreamDescEos(acldvppStreamDesc *streamDesc, uint8_t eos);
void *acldvppGetStreamDescData(const acldvppStreamDesc *streamDesc);
uint32_t acldvppGetStreamDescSize(const acldvppStreamDesc *streamDesc);
acldvppStreamFormat acldvppGetStreamDescFormat(const acldvppStreamDesc *streamDesc);
uint64_t acldvppGetStreamDescTimestamp(const acldvppStreamDesc *streamDesc);
uint32_t acldvppGetStreamDescRetCode(const acldvppStreamDesc *streamDesc);
uint8_t acldvppGetStreamDescEos(const acldvppStreamDesc *streamDesc);
aclError acldvppVpcResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
    acldvppPicDesc *outputDesc, acldvppResizeConfig *resizeConfig, aclrtStream stream);
aclError acldvppVpcCropAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
    acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea, aclrtStream stream);
aclError acldvppVpcCropResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
    acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea, acldvppResizeConfig *resizeConfig,
    aclrtStream stream);
aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
    acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea, acldvppRoiConfig *pasteArea,
    aclrtStream stream);
aclError acldvppVpcCropResizePasteAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
    acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea, acldvppRoiConfig *pasteArea,
    acldvppResizeConfig *resizeConfig, aclrtStream stream);
aclError acldvppVpcBatchCropAsync(acldvppChannelDesc *channelDesc,
    acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums, uint32_t size,
    acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[], aclrtStream stream);
aclError acldvppVpcBatchCropAndPasteAsync(acldvppChannelDesc *channelDesc,
    acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums, uint32_t size,
    acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[],
    acldvppRoiConfig *pasteAreas[], aclrtStream stream);
aclError acldvppVpcBatchCropResizeAsync(acldvppChannelDesc *channelDesc,
    acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums, uint32_t size,
    acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[],
    acldvppResizeConfig *resizeConfig, aclrtStream stream);
aclError acldvppVpcBatchCropResizePasteAsync(acldvppChannelDesc *channelDesc,
    acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums, uint32_t size,
    acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[],
    acldvppRoiConfig *pasteAreas[], acldvppResizeConfig *resizeConfig, aclrtStream stream);
aclError acldvppJpegDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
    acldvppPicDesc *outputDesc, aclrtStream stream);
aclError acldvppJpegEncodeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
    const void *data, uint32_t *size, acldvppJpegeConfig *config, aclrtStream stream);
aclError acldvppJpegGetImageInfo(const void *data, uint32_t size, uint32_t *width, uint32_t *height,
    int32_t *components);
aclError acldvppJpegGetImageInfoV2(const void *data, uint32_t size, uint32_t *width,
    uint32_t *height, int32_t *components, acldvppJpegFormat *format);
aclError acldvppJpegPredictDecSize(const void *data, uint32_t dataSize,
    acldvppPixelFormat outputPixelFormat, uint32_t *decSize);
aclError acldvppJpegPredictEncSize(const acldvppPicDesc *inputDesc,
    const acldvppJpegeConfig *config, uint32_t *size);
aclError acldvppPngDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
    acldvppPicDesc *outputDesc, aclrtStream stream);
aclError acldvppPngGetImageInfo(const void *data, uint32_t dataSize, uint32_t *width,
    uint32_t *height, int32_t *components);
aclError acldvppPngPredictDecSize(const void *data, uint32_t dataSize,
    acldvppPixelFormat outputPixelFormat, uint32_t *decSize);
aclvdecChannelDesc *aclvdecCreateChannelDesc(void);
aclError aclvdecDestroyChannelDesc(aclvdecChannelDesc *channelDesc);
aclError aclvdecSetChannelDescChannelId(aclvdecChannelDesc *channelDesc, uint32_t channelId);
aclError aclvdecSetChannelDescThreadId(aclvdecChannelDesc *channelDesc, uint64_t threadId);
aclError aclvdecSetChannelDescCallback(aclvdecChannelDesc *channelDesc, aclvdecCallback callback);
aclError aclvdecSetChannelDescEnType(aclvdecChannelDesc *channelDesc, acldvppStreamFormat enType);
aclError aclvdecSetChannelDescOutPicFormat(aclvdecChannelDesc *channelDesc,
    acldvppPixelFormat outPicFormat);
aclError aclvdecSetChannelDescOutPicWidth(aclvdecChannelDesc *channelDesc, uint32_t outPicWidth);
aclError aclvdecSetChannelDescOutPicHeight(aclvdecChannelDesc *channelDesc, uint32_t outPicHeight);
aclError aclvdecSetChannelDescRefFrameNum(aclvdecChannelDesc *channelDesc, uint32_t refFrameNum);
aclError aclvdecSetChannelDescOutMode(aclvdecChannelDesc *channelDesc, uint32_t outMode);
aclError aclvdecSetChannelDescBitDepth(aclvdecChannelDesc *channelDesc, uint32_t bitDepth);
uint32_t aclvdecGetChannelDescChannelId(const aclvdecChannelDesc *channelDesc);
uint64_t aclvdecGetChannelDescThreadId(const aclvdecChannelDesc *channelDesc);
aclvdecCallback aclvdecGetChannelDescCallback(const aclvdecChannelDesc *channelDesc);
acldvppStreamFormat aclvdecGetChannelDescEnType(const aclvdecChannelDesc *channelDesc);
acldvppPixelFormat aclvdecGetChannelDescOutPicFormat(const aclvdecChannelDesc *channelDesc);
uint32_t aclvdecGetChannelDescOutPicWidth(const aclvdecChannelDesc *channelDesc);
uint32_t aclvdecGetChannelDescOutPicHeight(const aclvdecChannelDesc *channelDesc);
uint32_t aclvdecGetChannelDescRefFrameNum(const aclvdecChannelDesc *channelDesc);
uint32_t aclvdecGetChannelDescOutMode(const aclvdecChannelDesc *channelDesc);
uint32_t aclvdecGetChannelDescBitDepth(const aclvdecChannelDesc *channelDesc);
aclError aclvdecCreateChannel(aclvdecChannelDesc *channelDesc);
aclError aclvdecDestroyChannel(aclvdecChannelDesc *channelDesc);
aclvdecFrameConfig *aclvdecCreateFrameConfig(void);
aclError aclvdecDestroyFrameConfig(aclvdecFrameConfig *vdecFrameConfig);
aclError aclvdecSendFrame(aclvdecChannelDesc *channelDesc, acldvppStreamDesc *input,
    acldvppPicDesc *output, aclvdecFrameConfig *config, void *userData);
aclError aclvdecSendSkippedFrame(aclvdecChannelDesc *channelDesc, acldvppStreamDesc *input,
    aclvdecFrameConfig *config, void *userData);
aclvencChannelDesc *aclvencCreateChannelDesc(void);
aclError aclvencDestroyChannelDesc(aclvencChannelDesc *channelDesc);
aclError aclvencSetChannelDescThreadId(aclvencChannelDesc *channelDesc, uint64_t threadId);
aclError aclvencSetChannelDescCallback(aclvencChannelDesc *channelDesc, aclvencCallback callback);
aclError aclvencSetChannelDescEnType(aclvencChannelDesc *channelDesc, acldvppStreamFormat enType);
aclError aclvencSetChannelDescPicFormat(aclvencChannelDesc *channelDesc,
    acldvppPixelFormat picFormat);
aclError aclvencSetChannelDescPicWidth(aclvencChannelDesc *channelDesc, uint32_t picWidth);
aclError aclvencSetChannelDescPicHeight(aclvencChannelDesc *channelDesc, uint32_t picHeight);
aclError aclvencSetChannelDescKeyFrameInterval(aclvencChannelDesc *channelDesc,
    uint32_t keyFrameInterval);
aclError aclvencSetChannelDescBufAddr(aclvencChannelDesc *channelDesc, void *bufAddr);
aclError aclvencSetChannelDescBufSize(aclvencChannelDesc *channelDesc, uint32_t bufSize);
aclError aclvencSetChannelDescRcMode(aclvencChannelDesc *channelDesc, uint32_t rcMode);
aclError aclvencSetChannelDescSrcRate(aclvencChannelDesc *channelDesc, uint32_t srcRate);
aclError aclvencSetChannelDescMaxBitRate(aclvencChannelDesc *channelDesc, uint32_t maxBitRate);
uint32_t aclvencGetChannelDescChannelId(const aclvencChannelDesc *channelDesc);
uint64_t aclvencGetChannelDescThreadId(const aclvencChannelDesc *channelDesc);
aclvencCallback aclvencGetChannelDescCallback(const aclvencChannelDesc *channelDesc);
acldvppStreamFormat aclvencGetChannelDescEnType(const aclvencChannelDesc *channelDesc);
acldvppPixelFormat aclvencGetChannelDescPicFormat(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescPicWidth(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescPicHeight(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescKeyFrameInterval(const aclvencChannelDesc *channelDesc);
void *aclvencGetChannelDescBufAddr(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescBufSize(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescRcMode(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescSrcRate(const aclvencChannelDesc *channelDesc);
uint32_t aclvencGetChannelDescMaxBitRate(const aclvencChannelDesc *channelDesc);
aclvencFrameConfig *aclvencCreateFrameConfig(void);
aclError aclvencDestroyFrameConfig(aclvencFrameConfig *config);
aclError aclvencSetFrameConfigForceIFrame(aclvencFrameConfig *config, uint8_t forceIFrame);
aclError aclvencSetFrameConfigEos(aclvencFrameConfig *config, uint8_t eos);
uint8_t aclvencGetFrameConfigForceIFrame(const aclvencFrameConfig *config);
uint8_t aclvencGetFrameConfigEos(const aclvencFrameConfig *config);
aclError aclvencCreateChannel(aclvencChannelDesc *channelDesc);
aclError aclvencDestroyChannel(aclvencChannelDesc *channelDesc);
aclError aclvencSendFrame(aclvencChannelDesc *channelDesc, acldvppPicDesc *input, void *reserve,
    aclvencFrameConfig *config, void *userdata);
"""

_CBLAS = """
aclError aclblasGemmEx(aclTransType transA, aclTransType transB, aclTransType transC, int m, int n,
    int k, const void *alpha, const void *matrixA, int lda, aclDataType dataTypeA,
    const void *matrixB, int ldb, aclDataType dataTypeB, const void *beta, void *matrixC, int ldc,
    aclDataType dataTypeC, aclComputeType type, aclrtStream stream);
"""

_OP_COMPILER = """
aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
    int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath);
aclError aclopCompileAndExecute(const char *opType, int numInputs,
    const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[], int numOutputs,
    const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath,
    aclrtStream stream);
"""

_OPS_ARRAYS = {"inputDesc": "numInputs", "inputs": "numInputs", "outputDesc": "numOutputs",
               "outputs": "numOutputs"}
_CUSTOM = Hint(custom=True)
_THREAD = Hint(threads=("threadId",))

#: hints by C name (rows without one take the generic rule)
HINTS: dict[str, Hint] = {
    "aclAppLog": _CUSTOM,
    "aclGetRecentErrMsg": _CUSTOM,
    "aclInit": _CUSTOM,
    "aclCreateTensorDesc": Hint(arrays={"dims": "numDims"}),
    "aclSetTensorShape": Hint(arrays={"dims": "numDims"}),
    "aclrtSubscribeReport": _THREAD,
    "aclrtUnSubscribeReport": _THREAD,
    "aclrtLaunchCallback": _CUSTOM,
    "aclopSetAttrListBool": Hint(arrays={"values": "numValues"}),
    "aclopSetAttrListInt": Hint(arrays={"values": "numValues"}),
    "aclopSetAttrListFloat": Hint(arrays={"values": "numValues"}),
    "aclopSetAttrListString": Hint(arrays={"values": "numValues"}),
    "aclopSetAttrListListInt": _CUSTOM,
    "aclopExecute": Hint(arrays=_OPS_ARRAYS),
    "aclopExecuteV2": Hint(arrays=_OPS_ARRAYS),
    "aclopCreateHandle": Hint(arrays=_OPS_ARRAYS),
    "aclopExecWithHandle": Hint(arrays=_OPS_ARRAYS),
    "aclopInferShape": Hint(arrays=_OPS_ARRAYS, keep=("numOutputs",)),
    "aclopCompile": Hint(arrays=_OPS_ARRAYS),
    "aclopCompileAndExecute": Hint(arrays=_OPS_ARRAYS),
    "aclprofInit": Hint(ignore=("length",)),
    "aclprofSetConfig": Hint(ignore=("configLength",)),
    "aclprofCreateConfig": Hint(arrays={"deviceIdList": "deviceNums"}),
    "aclprofCreateSubscribeConfig": _CUSTOM,
    "aclprofModelUnSubscribe": Hint(py="acl.prof.model_unsubscribe"),
    "aclprofGetOpType": Hint(custom=True, py="acl.prof.get_op_type"),
    "aclprofGetOpName": Hint(custom=True, py="acl.prof.get_op_name"),
    "acldvppVpcBatchCropAsync": _CUSTOM,
    "acldvppVpcBatchCropAndPasteAsync": _CUSTOM,
    "acldvppVpcBatchCropResizeAsync": _CUSTOM,
    "acldvppVpcBatchCropResizePasteAsync": _CUSTOM,
    "acldvppJpegEncodeAsync": Hint(ptrs=("size",)),
    "acldvppJpegGetImageInfo": Hint(optional=("components",)),
    "acldvppJpegGetImageInfoV2": Hint(optional=("components", "format")),
    "acldvppPngGetImageInfo": Hint(optional=("components",)),
    "aclvdecSetChannelDescThreadId": _THREAD,
    "aclvencSetChannelDescThreadId": _THREAD,
    "aclvdecSetChannelDescCallback": _CUSTOM,
    "aclvencSetChannelDescCallback": _CUSTOM,
    "aclvdecGetChannelDescCallback": _CUSTOM,
    "aclvencGetChannelDescCallback": _CUSTOM,
}

#: (header, declarations) in header order
_SOURCES: tuple[tuple[str, str], ...] = (
    ("acl/acl_base.h", _BASE), ("acl/acl_rt.h", _RT), ("acl/acl_mdl.h", _MDL),
    ("acl/acl_op.h", _OP), ("acl/acl_prof.h", _PROF), ("acl/ops/acl_dvpp.h", _DVPP),
    ("acl/ops/acl_cblas.h", _CBLAS), ("acl/acl_op_compiler.h", _OP_COMPILER),
)

#: pyACL (and acl_lab extension) functions with no C twin, each with the reason
PYTHON_ONLY: dict[str, str] = {
    "acl.util.numpy_to_ptr": "a numpy helper of the Python binding; C has the pointer",
    "acl.util.numpy_contiguous_to_ptr": "a numpy helper of the Python binding",
    "acl.util.ptr_to_numpy": "a numpy helper of the Python binding",
    "acl.util.bytes_to_ptr": "a bytes helper of the Python binding",
    "acl.util.ptr_to_bytes": "a bytes helper of the Python binding",
    "acl.util.start_thread": "the Python binding's pthread_create; C calls pthread_create",
    "acl.util.stop_thread": "the Python binding's pthread_join; C calls pthread_join",
    "acl.prof.model_un_subscribe": "an alias of acl.prof.model_unsubscribe "
                                   "(aclprofModelUnSubscribe)",
    "acl.prof.get_op_type_v2": "the binding's length query and aclprofGetOpType in one call; "
                               "C calls aclprofGetOpTypeLen and aclprofGetOpType",
    "acl.prof.get_op_name_v2": "the binding's length query and aclprofGetOpName in one call; "
                               "C calls aclprofGetOpNameLen and aclprofGetOpName",
    "acl.mdl.get_first_aipp_info": "aclAippInfo's C layout (a nested struct of AIPP "
                                   "parameters per batch) is not declared by acl_lab",
}
#: name prefixes of functions with no C twin, each with the reason
PYTHON_ONLY_PREFIXES: dict[str, str] = {
    "acl_lab.aclnn.": "the aclnn extension has Python signatures for teaching the two-phase "
                      "pattern; CANN's C aclnn API (aclCreateTensor with strides and storage "
                      "dims, libopapi) is not declared",
}


def python_only(name: str) -> str | None:
    """Why the pyACL (or extension) function ``name`` has no C twin; None when it has one."""
    if name in PYTHON_ONLY:
        return PYTHON_ONLY[name]
    for prefix, why in PYTHON_ONLY_PREFIXES.items():
        if name.startswith(prefix):
            return why
    return None


def functions() -> list[CFunc]:
    """Every row of the table, in header order."""
    out = []
    for header, text in _SOURCES:
        for decl in text.split(";"):
            if not decl.strip():
                continue
            f = parse(decl, header)
            out.append(CFunc(f.name, f.ret, f.ret_ffi, f.params, header,
                             HINTS.get(f.name, Hint()), f.variadic))
    return out


def by_library() -> dict[str, list[CFunc]]:
    """The rows grouped by the library that defines them."""
    out: dict[str, list[CFunc]] = {lib: [] for lib in dict.fromkeys(LIBRARIES.values())}
    for f in functions():
        out[f.library].append(f)
    return out


# ------------------------------------------------------------------------------ headers
BEGIN = "/* acl_lab:generated begin (python -m acl_lab.capi.api; the table in capi/api.py) */"
END = "/* acl_lab:generated end */"


def error_codes() -> list[tuple[str, int]]:
    """Every ``ACL_ERROR_*`` return code of :mod:`acl_lab.constants` (the CANN headers'
    values, deprecated aliases such as ``ACL_ERROR_NONE`` included), by name."""
    from .. import constants

    return sorted((n, int(getattr(constants, n))) for n in dir(constants)
                  if n.startswith("ACL_ERROR_") and isinstance(getattr(constants, n), int))


def declarations(header: str) -> str:
    """The generated block of ``header``: the return codes (``acl_base.h``), then one
    declaration per row."""
    lines = [BEGIN]
    if header == "acl/acl_base.h":
        lines += [f"static const int {n} = {v};" for n, v in error_codes()]
    lines += [f"ACL_FUNC_VISIBILITY {f.declaration()};" for f in functions()
              if f.header == header]
    lines.append(END)
    return "\n".join(lines)


def render(header: str, text: str) -> str:
    """``text`` (a header's contents) with its generated block replaced."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        raise ValueError(f"acl_lab capi: {header} has no generated block")
    return text[:start] + declarations(header) + text[end + len(END):]


def stale_headers(include_dir: Path = INCLUDE_DIR) -> list[str]:
    """Headers whose generated block differs from the table."""
    out = []
    for h in HEADERS:
        text = (include_dir / h).read_text(encoding="utf-8")
        if render(h, text) != text:
            out.append(h)
    return out


def write_headers(include_dir: Path = INCLUDE_DIR) -> list[str]:
    """Rewrite the generated blocks of the headers; the headers changed."""
    changed = []
    for h in HEADERS:
        path = include_dir / h
        text = path.read_text(encoding="utf-8")
        new = render(h, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(h)
    return changed


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    done = write_headers()
    print("rewrote " + (", ".join(done) if done else "nothing"), file=sys.stderr)
