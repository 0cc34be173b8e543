/* acl_lab: the base types, return codes, data types and formats of AscendCL for C and C++
 * programs run under the emulator (the toolkit of `acl-lab config --toolkit`). Written for
 * acl_lab from the facts of CANN's acl_base.h (type names, enum values, return codes); the
 * function declarations and the return codes are generated from acl_lab/capi/api.py and
 * acl_lab/constants.py. */
#ifndef ACL_LAB_ACL_BASE_H_
#define ACL_LAB_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))

typedef int aclError;
typedef uint16_t aclFloat16;
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclTensorDesc aclTensorDesc;

static const int ACL_SUCCESS = 0;

typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27
} aclDataType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47
} aclFormat;

typedef enum {
    ACL_DEBUG = 0,
    ACL_INFO = 1,
    ACL_WARNING = 2,
    ACL_ERROR = 3
} aclLogLevel;

typedef enum {
    ACL_MEMTYPE_DEVICE = 0,
    ACL_MEMTYPE_HOST = 1,
    ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2
} aclMemType;

/* aclAppLog prints under the emulator as "[LEVEL] func file:line: message" on stderr and
 * records the call; ACL_APP_LOG passes the caller's function, file and line. */
#define ACL_APP_LOG(level, fmt, ...) \
    aclAppLog(level, __FUNCTION__, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

/* acl_lab:generated begin (python -m acl_lab.capi.api; the table in capi/api.py) */
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030;
static const int ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028;
static const int ACL_ERROR_COMPILING_STUB_MODE = 100039;
static const int ACL_ERROR_DESERIALIZE_MODEL = 100012;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_DUMP_ALREADY_RUN = 100044;
static const int ACL_ERROR_DUMP_NOT_RUN = 100045;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_FILE_ATTR_INVALID = 100008;
static const int ACL_ERROR_FILE_MISSING_ATTR = 100007;
static const int ACL_ERROR_FORMAT_NOT_MATCH = 100027;
static const int ACL_ERROR_GE_AIPP_BATCH_EMPTY = 145014;
static const int ACL_ERROR_GE_AIPP_MODE_INVALID = 145016;
static const int ACL_ERROR_GE_AIPP_NOT_EXIST = 145015;
static const int ACL_ERROR_GE_COMMAND_HANDLE = 545007;
static const int ACL_ERROR_GE_DATATYPE_INVALID = 145022;
static const int ACL_ERROR_GE_DATA_NOT_ALIGNED = 345104;
static const int ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002;
static const int ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID = 145013;
static const int ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID = 145011;
static const int ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID = 145012;
static const int ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED = 545005;
static const int ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED = 545002;
static const int ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED = 145009;
static const int ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED = 545004;
static const int ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED = 545003;
static const int ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID = 145007;
static const int ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID = 145006;
static const int ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003;
static const int ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID = 145002;
static const int ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID = 145008;
static const int ACL_ERROR_GE_EXEC_NOT_INIT = 145001;
static const int ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA = 545006;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_GE_FORMAT_INVALID = 145020;
static const int ACL_ERROR_GE_GET_TENSOR_INFO = 545008;
static const int ACL_ERROR_GE_INTERNAL_ERROR = 545000;
static const int ACL_ERROR_GE_LOAD_MODEL = 545001;
static const int ACL_ERROR_GE_MEMORY_ALLOCATION = 245000;
static const int ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001;
static const int ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT = 545601;
static const int ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID = 145018;
static const int ACL_ERROR_GE_OP_TASK_TYPE_INVALID = 145017;
static const int ACL_ERROR_GE_PARAM_INVALID = 145000;
static const int ACL_ERROR_GE_PLGMGR_PATH_INVALID = 145019;
static const int ACL_ERROR_GE_REDEPLOYING = 545602;
static const int ACL_ERROR_GE_SHAPE_INVALID = 145021;
static const int ACL_ERROR_GE_SUBHEALTHY = 345102;
static const int ACL_ERROR_GE_UNLOAD_MODEL = 545009;
static const int ACL_ERROR_GE_USER_RAISE_EXCEPTION = 345103;
static const int ACL_ERROR_GROUP_NOT_CREATE = 100041;
static const int ACL_ERROR_GROUP_NOT_SET = 100040;
static const int ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 507910;
static const int ACL_ERROR_HOST_MEMORY_NOT_REGISTERED = 507911;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_INVALID_DUMP_CONFIG = 100009;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_INVALID_FILE_SIZE = 100005;
static const int ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048;
static const int ACL_ERROR_INVALID_MODEL_ID = 100011;
static const int ACL_ERROR_INVALID_OPP_PATH = 148049;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
static const int ACL_ERROR_INVALID_QUEUE_ID = 100032;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031;
static const int ACL_ERROR_KERNEL_NOT_FOUND = 100029;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017;
static const int ACL_ERROR_MODEL_MISSING_ATTR = 100016;
static const int ACL_ERROR_MODEL_NOT_DYNAMIC = 100019;
static const int ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018;
static const int ACL_ERROR_MODEL_SIZE_INVALID = 100015;
static const int ACL_ERROR_NONE = 0;
static const int ACL_ERROR_NOT_STATIC_AIPP = 100038;
static const int ACL_ERROR_OP_ATTR_NOT_MATCH = 100023;
static const int ACL_ERROR_OP_INPUT_NOT_MATCH = 100021;
static const int ACL_ERROR_OP_LOAD_FAILED = 100025;
static const int ACL_ERROR_OP_NOT_FOUND = 100024;
static const int ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022;
static const int ACL_ERROR_OP_TYPE_NOT_MATCH = 100020;
static const int ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_PARSE_MODEL = 100013;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;
static const int ACL_ERROR_PROF_ALREADY_RUN = 100042;
static const int ACL_ERROR_PROF_API_CONFLICT = 148047;
static const int ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007;
static const int ACL_ERROR_PROF_NOT_RUN = 100043;
static const int ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046;
static const int ACL_ERROR_READ_MODEL_FAILURE = 100014;
static const int ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_REPEAT_SUBSCRIBE = 100033;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_RT_ADDR_UNALIGNED = 107008;
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
static const int ACL_ERROR_RT_AICORE_OVER_FLOW = 207003;
static const int ACL_ERROR_RT_AICORE_TIMEOUT = 507014;
static const int ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016;
static const int ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042;
static const int ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043;
static const int ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR = 507019;
static const int ACL_ERROR_RT_AICPU_EXCEPTION = 507018;
static const int ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR = 507902;
static const int ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900;
static const int ACL_ERROR_RT_AICPU_MODEL_RSP_ERR = 507020;
static const int ACL_ERROR_RT_AICPU_TIMEOUT = 507017;
static const int ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016;
static const int ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024;
static const int ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC = 107041;
static const int ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030;
static const int ACL_ERROR_RT_CCU_EXCEPTION = 507916;
static const int ACL_ERROR_RT_CCU_TIMEOUT = 507915;
static const int ACL_ERROR_RT_CDQ_BATCH_ABNORMAL = 507037;
static const int ACL_ERROR_RT_COMM_OP_RETRY_FAIL = 507904;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007;
static const int ACL_ERROR_RT_COPY_DATA = 507052;
static const int ACL_ERROR_RT_DEBUG_REGISTER_FAIL = 507029;
static const int ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL = 507030;
static const int ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053;
static const int ACL_ERROR_RT_DEVICE_OOM = 207018;
static const int ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022;
static const int ACL_ERROR_RT_DEVIDE_OOM = 207018;
static const int ACL_ERROR_RT_DEV_SETUP_ERROR = 507033;
static const int ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR = 507038;
static const int ACL_ERROR_RT_DIE_MODE_NOT_SET = 507041;
static const int ACL_ERROR_RT_DIE_SET_ERROR = 507039;
static const int ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899;
static const int ACL_ERROR_RT_END_OF_SEQUENCE = 507005;
static const int ACL_ERROR_RT_EVENT_CAPTURED = 107028;
static const int ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006;
static const int ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019;
static const int ACL_ERROR_RT_FFTS_PLUS_EXCEPTION = 507049;
static const int ACL_ERROR_RT_FFTS_PLUS_TIMEOUT = 507048;
static const int ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION = 507050;
static const int ACL_ERROR_RT_FILE_OPEN = 107009;
static const int ACL_ERROR_RT_FILE_WRITE = 107010;
static const int ACL_ERROR_RT_GROUP_NOT_CREATE = 107014;
static const int ACL_ERROR_RT_GROUP_NOT_SET = 107013;
static const int ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054;
static const int ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY = 107039;
static const int ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_INVALID_DEVICE_FUNCTION = 107044;
static const int ACL_ERROR_RT_INVALID_DIEID = 507040;
static const int ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018;
static const int ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
static const int ACL_ERROR_RT_INVALID_SYMBOL = 107043;
static const int ACL_ERROR_RT_IPC_ERROR = 507022;
static const int ACL_ERROR_RT_KERNEL_DUPLICATE = 507028;
static const int ACL_ERROR_RT_KERNEL_LOOKUP = 507027;
static const int ACL_ERROR_RT_KERNEL_UNREGISTERING = 507024;
static const int ACL_ERROR_RT_L3_PORT_ERROR = 507914;
static const int ACL_ERROR_RT_LABEL_CONTEXT = 507031;
static const int ACL_ERROR_RT_LINK_ERROR = 507056;
static const int ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED = 207021;
static const int ACL_ERROR_RT_LOST_HEARTBEAT = 507010;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_MEMORY_FREE = 207002;
static const int ACL_ERROR_RT_MODEL_ABORT_NORMAL = 507023;
static const int ACL_ERROR_RT_MODEL_CAPTURED = 107026;
static const int ACL_ERROR_RT_MODEL_CONTEXT = 107004;
static const int ACL_ERROR_RT_MODEL_EXECUTE = 507011;
static const int ACL_ERROR_RT_MODEL_RUNNING = 107037;
static const int ACL_ERROR_RT_MODEL_UPDATE_FAILED = 107040;
static const int ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011;
static const int ACL_ERROR_RT_NO_DEVICE = 207004;
static const int ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007;
static const int ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010;
static const int ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009;
static const int ACL_ERROR_RT_NO_PERMISSION = 207006;
static const int ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008;
static const int ACL_ERROR_RT_OVER_FLOW = 207017;
static const int ACL_ERROR_RT_OVER_LIMIT = 207012;
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_PROFILING_ERROR = 507021;
static const int ACL_ERROR_RT_PROGRAM_USE_OUT = 507032;
static const int ACL_ERROR_RT_QUEUE_EMPTY = 207013;
static const int ACL_ERROR_RT_QUEUE_FULL = 207014;
static const int ACL_ERROR_RT_REPEATED_INIT = 207015;
static const int ACL_ERROR_RT_REPORT_TIMEOUT = 507012;
static const int ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005;
static const int ACL_ERROR_RT_RINGBUFFER_NOT_INIT = 507025;
static const int ACL_ERROR_RT_RINGBUFFER_NO_DATA = 507026;
static const int ACL_ERROR_RT_SEND_MSG = 507051;
static const int ACL_ERROR_RT_SOCKET_CLOSE = 507901;
static const int ACL_ERROR_RT_SOC_VERSION = 507008;
static const int ACL_ERROR_RT_STREAM_ABORT = 107023;
static const int ACL_ERROR_RT_STREAM_CAPTURED = 107027;
static const int ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031;
static const int ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903;
static const int ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036;
static const int ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038;
static const int ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int ACL_ERROR_RT_STREAM_MODEL = 107005;
static const int ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029;
static const int ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004;
static const int ACL_ERROR_RT_STREAM_NO_CB_REG = 107015;
static const int ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011;
static const int ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046;
static const int ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003;
static const int ACL_ERROR_RT_STREAM_TASK_FULL = 507002;
static const int ACL_ERROR_RT_STREAM_UNJOINED = 107025;
static const int ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING = 107045;
static const int ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR = 507055;
static const int ACL_ERROR_RT_SUSPECT_REMOTE_ERROR = 507057;
static const int ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042;
static const int ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021;
static const int ACL_ERROR_RT_SYS_DMA = 507013;
static const int ACL_ERROR_RT_TASK_ABORT_STOP = 107035;
static const int ACL_ERROR_RT_TASK_TIMEOUT = 107020;
static const int ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009;
static const int ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012;
static const int ACL_ERROR_RT_TIMEOUT = 207020;
static const int ACL_ERROR_RT_TS_ERROR = 507001;
static const int ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035;
static const int ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034;
static const int ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036;
static const int ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW = 507044;
static const int ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW = 507045;
static const int ACL_ERROR_RT_WAIT_TIMEOUT = 107019;
static const int ACL_ERROR_SNAPSHOT_BACKUP_FAILED = 507908;
static const int ACL_ERROR_SNAPSHOT_CALLBACK_FAILED = 507912;
static const int ACL_ERROR_SNAPSHOT_LOCK_FAILED = 507906;
static const int ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT = 507905;
static const int ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED = 507913;
static const int ACL_ERROR_SNAPSHOT_RESTORE_FAILED = 507909;
static const int ACL_ERROR_SNAPSHOT_UNLOCK_FAILED = 507907;
static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;
static const int ACL_ERROR_STREAM_CAPTURE_CONFLICT = 107032;
static const int ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034;
static const int ACL_ERROR_STREAM_TASK_GROUP_INTR = 107034;
static const int ACL_ERROR_STREAM_TASK_GROUP_STATUS = 107033;
static const int ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
static const int ACL_ERROR_UNSUPPORTED_JPEG = 148052;
static const int ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036;
static const int ACL_ERROR_WRITE_FILE = 100004;
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);
ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);
ACL_FUNC_VISIBILITY void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);
ACL_FUNC_VISIBILITY aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format);
ACL_FUNC_VISIBILITY void aclDestroyTensorDesc(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY aclDataType aclGetTensorDescType(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY size_t aclGetTensorDescSize(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY size_t aclGetTensorDescElementCount(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY size_t aclGetTensorDescNumDims(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index);
ACL_FUNC_VISIBILITY aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize);
ACL_FUNC_VISIBILITY const char *aclGetTensorDescName(aclTensorDesc *desc);
ACL_FUNC_VISIBILITY void aclSetTensorDescName(aclTensorDesc *desc, const char *name);
ACL_FUNC_VISIBILITY aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format);
ACL_FUNC_VISIBILITY aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims);
ACL_FUNC_VISIBILITY aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType);
ACL_FUNC_VISIBILITY aclError aclSetTensorConst(aclTensorDesc *desc, void *dataBuffer, size_t length);
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);
ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...);
/* acl_lab:generated end */

#ifdef __cplusplus
}
#endif

#endif /* ACL_LAB_ACL_BASE_H_ */
