"""Every ACL return code and enum value, with the numbers the ACL headers give them.

The real ``acl`` module (pyACL) exports **no constants**: every pyACL program defines its own
(``ACL_SUCCESS = 0``, ``ACL_MEMCPY_HOST_TO_DEVICE = 1``, ...). This module is an acl_lab
convenience that collects them in one place, under the exact C header names, so programs,
notebooks and the rest of acl_lab can write ``constants.ACL_ERROR_RT_CONTEXT_NULL`` instead of
``107002``. ``import acl`` (real or emulated) will never have these names.

Contents:

* flat ``Final`` constants named exactly as in the headers: ACL common, runtime, GE and aclnn
  return codes (deprecated spellings included as aliases), runtime and base enums, event and
  stream flags, ``aclDataType``, ``aclFormat``, DVPP pixel formats, JPEG formats and channel
  modes, model limits, and the numpy type numbers pyACL samples pass to ``ptr_to_numpy``;
* ``IntEnum`` / ``IntFlag`` classes for the main enums, members named by the header suffix
  (``MemcpyKind.HOST_TO_DEVICE``), and :class:`ErrorCode`, one member per error value under its
  canonical name;
* :func:`explain` (a :class:`CodeInfo` with meaning and usual cause, in a learner's words),
  :func:`code_name`, :func:`header_name`, :data:`DATA_TYPE_SIZE` and :func:`data_type_size`.

Values are the HEAD values of the public headers listed in ``docs/sources.md`` §3
(``hicann/runtime`` 2025-26, cross-checked against an older ``graphengine`` copy). Where the
notes mark a value as version-dependent, the HEAD value is used and a comment says so.

Rules for this module: it imports nothing from the rest of acl_lab and only the standard
library, so every other layer (runtime, pyACL facade, tracer, notebooks) can import it freely.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import Enum, IntEnum, IntFlag, unique
from typing import Final, SupportsIndex

# =============================================================================================
# Return codes
# =============================================================================================

# --- ACL common codes (acl_base_rt.h HEAD, `static const int`; same values in older headers)
ACL_SUCCESS: Final = 0
ACL_ERROR_INVALID_PARAM: Final = 100000
ACL_ERROR_UNINITIALIZE: Final = 100001
ACL_ERROR_REPEAT_INITIALIZE: Final = 100002
ACL_ERROR_INVALID_FILE: Final = 100003
ACL_ERROR_WRITE_FILE: Final = 100004
ACL_ERROR_INVALID_FILE_SIZE: Final = 100005
ACL_ERROR_PARSE_FILE: Final = 100006
ACL_ERROR_FILE_MISSING_ATTR: Final = 100007
ACL_ERROR_FILE_ATTR_INVALID: Final = 100008
ACL_ERROR_INVALID_DUMP_CONFIG: Final = 100009
ACL_ERROR_INVALID_PROFILING_CONFIG: Final = 100010
ACL_ERROR_INVALID_MODEL_ID: Final = 100011
ACL_ERROR_DESERIALIZE_MODEL: Final = 100012
ACL_ERROR_PARSE_MODEL: Final = 100013
ACL_ERROR_READ_MODEL_FAILURE: Final = 100014
ACL_ERROR_MODEL_SIZE_INVALID: Final = 100015
ACL_ERROR_MODEL_MISSING_ATTR: Final = 100016
ACL_ERROR_MODEL_INPUT_NOT_MATCH: Final = 100017
ACL_ERROR_MODEL_OUTPUT_NOT_MATCH: Final = 100018
ACL_ERROR_MODEL_NOT_DYNAMIC: Final = 100019
ACL_ERROR_OP_TYPE_NOT_MATCH: Final = 100020
ACL_ERROR_OP_INPUT_NOT_MATCH: Final = 100021
ACL_ERROR_OP_OUTPUT_NOT_MATCH: Final = 100022
ACL_ERROR_OP_ATTR_NOT_MATCH: Final = 100023
ACL_ERROR_OP_NOT_FOUND: Final = 100024
ACL_ERROR_OP_LOAD_FAILED: Final = 100025
ACL_ERROR_UNSUPPORTED_DATA_TYPE: Final = 100026
ACL_ERROR_FORMAT_NOT_MATCH: Final = 100027
ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED: Final = 100028
ACL_ERROR_KERNEL_NOT_FOUND: Final = 100029
ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED: Final = 100030
ACL_ERROR_KERNEL_ALREADY_REGISTERED: Final = 100031
ACL_ERROR_INVALID_QUEUE_ID: Final = 100032
ACL_ERROR_REPEAT_SUBSCRIBE: Final = 100033
ACL_ERROR_STREAM_NOT_SUBSCRIBE: Final = 100034  # deprecated; use ACL_ERROR_RT_STREAM_NO_CB_REG
ACL_ERROR_THREAD_NOT_SUBSCRIBE: Final = 100035  # deprecated; use ACL_ERROR_RT_THREAD_SUBSCRIBE
ACL_ERROR_WAIT_CALLBACK_TIMEOUT: Final = 100036  # deprecated; use ACL_ERROR_RT_REPORT_TIMEOUT
ACL_ERROR_REPEAT_FINALIZE: Final = 100037
ACL_ERROR_NOT_STATIC_AIPP: Final = 100038  # deprecated; use ACL_ERROR_GE_AIPP_NOT_EXIST
ACL_ERROR_COMPILING_STUB_MODE: Final = 100039
ACL_ERROR_GROUP_NOT_SET: Final = 100040
ACL_ERROR_GROUP_NOT_CREATE: Final = 100041
ACL_ERROR_PROF_ALREADY_RUN: Final = 100042
ACL_ERROR_PROF_NOT_RUN: Final = 100043
ACL_ERROR_DUMP_ALREADY_RUN: Final = 100044
ACL_ERROR_DUMP_NOT_RUN: Final = 100045
ACL_ERROR_PROF_REPEAT_SUBSCRIBE: Final = 148046
ACL_ERROR_PROF_API_CONFLICT: Final = 148047
ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG: Final = 148048
ACL_ERROR_INVALID_OPP_PATH: Final = 148049
ACL_ERROR_OP_UNSUPPORTED_DYNAMIC: Final = 148050  # HEAD only
ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED: Final = 148051  # HEAD only
ACL_ERROR_UNSUPPORTED_JPEG: Final = 148052  # HEAD only
ACL_ERROR_INVALID_BUNDLE_MODEL_ID: Final = 148053  # HEAD only
ACL_ERROR_BAD_ALLOC: Final = 200000
ACL_ERROR_API_NOT_SUPPORT: Final = 200001
ACL_ERROR_INVALID_DEVICE: Final = 200002  # deprecated; use ACL_ERROR_RT_INVALID_DEVICEID
ACL_ERROR_MEMORY_ADDRESS_UNALIGNED: Final = 200003
ACL_ERROR_RESOURCE_NOT_MATCH: Final = 200004
ACL_ERROR_INVALID_RESOURCE_HANDLE: Final = 200005
ACL_ERROR_FEATURE_UNSUPPORTED: Final = 200006
ACL_ERROR_PROF_MODULES_UNSUPPORTED: Final = 200007
ACL_ERROR_STORAGE_OVER_LIMIT: Final = 300000
ACL_ERROR_INTERNAL_ERROR: Final = 500000
ACL_ERROR_FAILURE: Final = 500001
ACL_ERROR_GE_FAILURE: Final = 500002
ACL_ERROR_RT_FAILURE: Final = 500003
ACL_ERROR_DRV_FAILURE: Final = 500004
ACL_ERROR_PROFILING_FAILURE: Final = 500005

# --- Runtime codes (error_codes/rt_error_codes.h HEAD, `#define`)
ACL_ERROR_RT_PARAM_INVALID: Final = 107000
ACL_ERROR_RT_INVALID_DEVICEID: Final = 107001
ACL_ERROR_RT_CONTEXT_NULL: Final = 107002
ACL_ERROR_RT_STREAM_CONTEXT: Final = 107003
ACL_ERROR_RT_MODEL_CONTEXT: Final = 107004
ACL_ERROR_RT_STREAM_MODEL: Final = 107005
ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID: Final = 107006
ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: Final = 107007
ACL_ERROR_RT_ADDR_UNALIGNED: Final = 107008
ACL_ERROR_RT_FILE_OPEN: Final = 107009
ACL_ERROR_RT_FILE_WRITE: Final = 107010
ACL_ERROR_RT_STREAM_SUBSCRIBE: Final = 107011
ACL_ERROR_RT_THREAD_SUBSCRIBE: Final = 107012
ACL_ERROR_RT_GROUP_NOT_SET: Final = 107013
ACL_ERROR_RT_GROUP_NOT_CREATE: Final = 107014
ACL_ERROR_RT_STREAM_NO_CB_REG: Final = 107015
ACL_ERROR_RT_INVALID_MEMORY_TYPE: Final = 107016
ACL_ERROR_RT_INVALID_HANDLE: Final = 107017
ACL_ERROR_RT_INVALID_MALLOC_TYPE: Final = 107018
ACL_ERROR_RT_WAIT_TIMEOUT: Final = 107019
ACL_ERROR_RT_TASK_TIMEOUT: Final = 107020
ACL_ERROR_RT_SYSPARAMOPT_NOT_SET: Final = 107021
ACL_ERROR_RT_DEVICE_TASK_ABORT: Final = 107022
ACL_ERROR_RT_STREAM_ABORT: Final = 107023
ACL_ERROR_RT_CAPTURE_DEPENDENCY: Final = 107024
ACL_ERROR_RT_STREAM_UNJOINED: Final = 107025
ACL_ERROR_RT_MODEL_CAPTURED: Final = 107026
ACL_ERROR_RT_STREAM_CAPTURED: Final = 107027
ACL_ERROR_RT_EVENT_CAPTURED: Final = 107028
ACL_ERROR_RT_STREAM_NOT_CAPTURED: Final = 107029
ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT: Final = 107030
ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT: Final = 107031
ACL_ERROR_STREAM_CAPTURE_CONFLICT: Final = 107032
ACL_ERROR_STREAM_TASK_GROUP_STATUS: Final = 107033
ACL_ERROR_STREAM_TASK_GROUP_INTR: Final = 107034
ACL_ERROR_RT_TASK_ABORT_STOP: Final = 107035
ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED: Final = 107036
ACL_ERROR_RT_MODEL_RUNNING: Final = 107037
ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD: Final = 107038
ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY: Final = 107039
ACL_ERROR_RT_MODEL_UPDATE_FAILED: Final = 107040
ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC: Final = 107041
ACL_ERROR_RT_SYMBOL_NOT_FOUND: Final = 107042  # an intermediate header had this name at 507915
ACL_ERROR_RT_INVALID_SYMBOL: Final = 107043
ACL_ERROR_RT_INVALID_DEVICE_FUNCTION: Final = 107044
ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING: Final = 107045
ACL_ERROR_RT_FEATURE_NOT_SUPPORT: Final = 207000
ACL_ERROR_RT_MEMORY_ALLOCATION: Final = 207001
ACL_ERROR_RT_MEMORY_FREE: Final = 207002
ACL_ERROR_RT_AICORE_OVER_FLOW: Final = 207003
ACL_ERROR_RT_NO_DEVICE: Final = 207004
ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: Final = 207005
ACL_ERROR_RT_NO_PERMISSION: Final = 207006
ACL_ERROR_RT_NO_EVENT_RESOURCE: Final = 207007
ACL_ERROR_RT_NO_STREAM_RESOURCE: Final = 207008
ACL_ERROR_RT_NO_NOTIFY_RESOURCE: Final = 207009
ACL_ERROR_RT_NO_MODEL_RESOURCE: Final = 207010
ACL_ERROR_RT_NO_CDQ_RESOURCE: Final = 207011
ACL_ERROR_RT_OVER_LIMIT: Final = 207012
ACL_ERROR_RT_QUEUE_EMPTY: Final = 207013
ACL_ERROR_RT_QUEUE_FULL: Final = 207014
ACL_ERROR_RT_REPEATED_INIT: Final = 207015
ACL_ERROR_RT_AIVEC_OVER_FLOW: Final = 207016
ACL_ERROR_RT_OVER_FLOW: Final = 207017
ACL_ERROR_RT_DEVICE_OOM: Final = 207018  # docs and older headers spell it ACL_ERROR_RT_DEVIDE_OOM
ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP: Final = 207019  # HEAD (version-dependent)
ACL_ERROR_RT_TIMEOUT: Final = 207020
ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED: Final = 207021
ACL_ERROR_RT_INTERNAL_ERROR: Final = 507000
ACL_ERROR_RT_TS_ERROR: Final = 507001
ACL_ERROR_RT_STREAM_TASK_FULL: Final = 507002
ACL_ERROR_RT_STREAM_TASK_EMPTY: Final = 507003
ACL_ERROR_RT_STREAM_NOT_COMPLETE: Final = 507004
ACL_ERROR_RT_END_OF_SEQUENCE: Final = 507005
ACL_ERROR_RT_EVENT_NOT_COMPLETE: Final = 507006
ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: Final = 507007
ACL_ERROR_RT_SOC_VERSION: Final = 507008
ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT: Final = 507009
ACL_ERROR_RT_LOST_HEARTBEAT: Final = 507010
ACL_ERROR_RT_MODEL_EXECUTE: Final = 507011
ACL_ERROR_RT_REPORT_TIMEOUT: Final = 507012
ACL_ERROR_RT_SYS_DMA: Final = 507013
ACL_ERROR_RT_AICORE_TIMEOUT: Final = 507014
ACL_ERROR_RT_AICORE_EXCEPTION: Final = 507015
ACL_ERROR_RT_AICORE_TRAP_EXCEPTION: Final = 507016
ACL_ERROR_RT_AICPU_TIMEOUT: Final = 507017
ACL_ERROR_RT_AICPU_EXCEPTION: Final = 507018
ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR: Final = 507019
ACL_ERROR_RT_AICPU_MODEL_RSP_ERR: Final = 507020
ACL_ERROR_RT_PROFILING_ERROR: Final = 507021
ACL_ERROR_RT_IPC_ERROR: Final = 507022
ACL_ERROR_RT_MODEL_ABORT_NORMAL: Final = 507023
ACL_ERROR_RT_KERNEL_UNREGISTERING: Final = 507024
ACL_ERROR_RT_RINGBUFFER_NOT_INIT: Final = 507025
ACL_ERROR_RT_RINGBUFFER_NO_DATA: Final = 507026
ACL_ERROR_RT_KERNEL_LOOKUP: Final = 507027
ACL_ERROR_RT_KERNEL_DUPLICATE: Final = 507028
ACL_ERROR_RT_DEBUG_REGISTER_FAIL: Final = 507029
ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL: Final = 507030
ACL_ERROR_RT_LABEL_CONTEXT: Final = 507031
ACL_ERROR_RT_PROGRAM_USE_OUT: Final = 507032
ACL_ERROR_RT_DEV_SETUP_ERROR: Final = 507033
ACL_ERROR_RT_VECTOR_CORE_TIMEOUT: Final = 507034
ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: Final = 507035
ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION: Final = 507036
ACL_ERROR_RT_CDQ_BATCH_ABNORMAL: Final = 507037
ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR: Final = 507038
ACL_ERROR_RT_DIE_SET_ERROR: Final = 507039
ACL_ERROR_RT_INVALID_DIEID: Final = 507040
ACL_ERROR_RT_DIE_MODE_NOT_SET: Final = 507041
ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW: Final = 507042
ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW: Final = 507043
ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW: Final = 507044
ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW: Final = 507045
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: Final = 507046
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: Final = 507047
ACL_ERROR_RT_FFTS_PLUS_TIMEOUT: Final = 507048
ACL_ERROR_RT_FFTS_PLUS_EXCEPTION: Final = 507049
ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION: Final = 507050
ACL_ERROR_RT_SEND_MSG: Final = 507051  # 207019 in at least one older header
ACL_ERROR_RT_COPY_DATA: Final = 507052
ACL_ERROR_RT_DEVICE_MEM_ERROR: Final = 507053
ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR: Final = 507054
ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR: Final = 507055
ACL_ERROR_RT_LINK_ERROR: Final = 507056
ACL_ERROR_RT_SUSPECT_REMOTE_ERROR: Final = 507057
ACL_ERROR_RT_DRV_INTERNAL_ERROR: Final = 507899
ACL_ERROR_RT_AICPU_INTERNAL_ERROR: Final = 507900
ACL_ERROR_RT_SOCKET_CLOSE: Final = 507901
ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR: Final = 507902
ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: Final = 507903
ACL_ERROR_RT_COMM_OP_RETRY_FAIL: Final = 507904
ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT: Final = 507905
ACL_ERROR_SNAPSHOT_LOCK_FAILED: Final = 507906
ACL_ERROR_SNAPSHOT_UNLOCK_FAILED: Final = 507907
ACL_ERROR_SNAPSHOT_BACKUP_FAILED: Final = 507908
ACL_ERROR_SNAPSHOT_RESTORE_FAILED: Final = 507909
ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: Final = 507910
ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: Final = 507911
ACL_ERROR_SNAPSHOT_CALLBACK_FAILED: Final = 507912
ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED: Final = 507913
ACL_ERROR_RT_L3_PORT_ERROR: Final = 507914
ACL_ERROR_RT_CCU_TIMEOUT: Final = 507915  # HEAD; once SYMBOL_NOT_FOUND (version-dependent)
ACL_ERROR_RT_CCU_EXCEPTION: Final = 507916

# --- GE codes (error_codes/ge_error_codes.h HEAD, `static const uint32_t`)
ACL_ERROR_GE_PARAM_INVALID: Final = 145000
ACL_ERROR_GE_EXEC_NOT_INIT: Final = 145001
ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID: Final = 145002
ACL_ERROR_GE_EXEC_MODEL_ID_INVALID: Final = 145003
ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID: Final = 145006
ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID: Final = 145007
ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID: Final = 145008
ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED: Final = 145009
ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID: Final = 145011
ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID: Final = 145012
ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID: Final = 145013
ACL_ERROR_GE_AIPP_BATCH_EMPTY: Final = 145014
ACL_ERROR_GE_AIPP_NOT_EXIST: Final = 145015
ACL_ERROR_GE_AIPP_MODE_INVALID: Final = 145016
ACL_ERROR_GE_OP_TASK_TYPE_INVALID: Final = 145017
ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID: Final = 145018
ACL_ERROR_GE_PLGMGR_PATH_INVALID: Final = 145019
ACL_ERROR_GE_FORMAT_INVALID: Final = 145020
ACL_ERROR_GE_SHAPE_INVALID: Final = 145021
ACL_ERROR_GE_DATATYPE_INVALID: Final = 145022
ACL_ERROR_GE_MEMORY_ALLOCATION: Final = 245000
ACL_ERROR_GE_MEMORY_OPERATE_FAILED: Final = 245001
ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED: Final = 245002
ACL_ERROR_GE_SUBHEALTHY: Final = 345102
ACL_ERROR_GE_USER_RAISE_EXCEPTION: Final = 345103
ACL_ERROR_GE_DATA_NOT_ALIGNED: Final = 345104
ACL_ERROR_GE_INTERNAL_ERROR: Final = 545000
ACL_ERROR_GE_LOAD_MODEL: Final = 545001
ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED: Final = 545002
ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED: Final = 545003
ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED: Final = 545004
ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED: Final = 545005
ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA: Final = 545006
ACL_ERROR_GE_COMMAND_HANDLE: Final = 545007
ACL_ERROR_GE_GET_TENSOR_INFO: Final = 545008
ACL_ERROR_GE_UNLOAD_MODEL: Final = 545009
ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT: Final = 545601
ACL_ERROR_GE_REDEPLOYING: Final = 545602

# --- aclnn status codes (aclnn op_errno.h; the same table is in ops-test-kit acl_interface.py)
ACLNN_ERR_PARAM_NULLPTR: Final = 161001
ACLNN_ERR_PARAM_INVALID: Final = 161002
ACLNN_ERR_RUNTIME_ERROR: Final = 361001
ACLNN_ERR_INNER: Final = 561000
ACLNN_ERR_INNER_INFERSHAPE_ERROR: Final = 561001
ACLNN_ERR_INNER_TILING_ERROR: Final = 561002
ACLNN_ERR_INNER_FIND_KERNEL_ERROR: Final = 561003
ACLNN_ERR_INNER_CREATE_EXECUTOR: Final = 561101
ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR: Final = 561102
ACLNN_ERR_INNER_NULLPTR: Final = 561103
ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE: Final = 561104
ACLNN_ERR_INNER_KEY_CONFLICT: Final = 561105  # also misspelled ACLNN_ERR_INNER_KEY_CONFILICT
ACLNN_ERR_INNER_INVALID_IMPL_MODE: Final = 561106
ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND: Final = 561107
ACLNN_ERR_INNER_LOAD_JSON_FAILED: Final = 561108
ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND: Final = 561109
ACLNN_ERR_INNER_JSON_FORMAT_INVALID: Final = 561110
ACLNN_ERR_INNER_JSON_DTYPE_INVALID: Final = 561111
ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND: Final = 561112
ACLNN_ERR_INNER_OP_FILE_INVALID: Final = 561113
ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND: Final = 561114
ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH: Final = 561115
ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE: Final = 561116
ACLNN_ERR_INNER_INPUT_JSON_IS_NULL: Final = 561117
ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID: Final = 561118
ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID: Final = 561119

# --- Aliases: other header names for a value above (same value, not ErrorCode members)
ACL_ERROR_NONE: Final = 0  # deprecated name of ACL_SUCCESS
ACL_RT_SUCCESS: Final = 0  # rt_error_codes.h's name for success
ACLNN_SUCCESS: Final = 0  # aclnn's name for success
ACL_ERROR_RT_DEVIDE_OOM: Final = 207018  # (sic) spelling in the docs and older headers
ACLNN_ERR_INNER_KEY_CONFILICT: Final = 561105  # (sic) misspelled alias in op_errno.h

# =============================================================================================
# Enumerations and flags (C-hdr acl_rt.h / acl_base_rt.h HEAD unless noted)
# =============================================================================================

# --- Header version (acl_rt.h HEAD "Current version is 1.17.0"; version-dependent)
ACL_MAJOR_VERSION: Final = 1
ACL_MINOR_VERSION: Final = 17
ACL_PATCH_VERSION: Final = 0

# --- aclrtRunMode
ACL_DEVICE: Final = 0
ACL_HOST: Final = 1

# --- aclSysParamOpt (ctx_set_sys_param_opt / set_sys_param_opt)
ACL_OPT_DETERMINISTIC: Final = 0
ACL_OPT_ENABLE_DEBUG_KERNEL: Final = 1
ACL_OPT_STRONG_CONSISTENCY: Final = 2  # deprecated
ACL_OPT_ENABLE_KERNEL_EARLY_START: Final = 3

# --- aclrtMemcpyKind
ACL_MEMCPY_HOST_TO_HOST: Final = 0
ACL_MEMCPY_HOST_TO_DEVICE: Final = 1
ACL_MEMCPY_DEVICE_TO_HOST: Final = 2
ACL_MEMCPY_DEVICE_TO_DEVICE: Final = 3
ACL_MEMCPY_DEFAULT: Final = 4  # the system infers the direction from the addresses
ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: Final = 5
ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: Final = 6
ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: Final = 7

# --- aclrtMemMallocPolicy: page policies (0-7, never OR-ed with each other) ...
ACL_MEM_MALLOC_HUGE_FIRST: Final = 0
ACL_MEM_MALLOC_HUGE_ONLY: Final = 1
ACL_MEM_MALLOC_NORMAL_ONLY: Final = 2
ACL_MEM_MALLOC_HUGE_FIRST_P2P: Final = 3
ACL_MEM_MALLOC_HUGE_ONLY_P2P: Final = 4
ACL_MEM_MALLOC_NORMAL_ONLY_P2P: Final = 5
ACL_MEM_MALLOC_HUGE1G_ONLY: Final = 6
ACL_MEM_MALLOC_HUGE1G_ONLY_P2P: Final = 7
# ... and modifier bits in the same C enum (not MemMallocPolicy members)
ACL_MEM_TYPE_LOW_BAND_WIDTH: Final = 0x0100
ACL_MEM_TYPE_HIGH_BAND_WIDTH: Final = 0x1000
ACL_MEM_ACCESS_USER_SPACE_READONLY: Final = 0x100000

# --- aclrtMemAttr (get_mem_info); samples use ACL_DDR_MEM and ACL_HBM_MEM
ACL_DDR_MEM: Final = 0
ACL_HBM_MEM: Final = 1
ACL_DDR_MEM_HUGE: Final = 2
ACL_DDR_MEM_NORMAL: Final = 3
ACL_HBM_MEM_HUGE: Final = 4
ACL_HBM_MEM_NORMAL: Final = 5
ACL_DDR_MEM_P2P_HUGE: Final = 6
ACL_DDR_MEM_P2P_NORMAL: Final = 7
ACL_HBM_MEM_P2P_HUGE: Final = 8
ACL_HBM_MEM_P2P_NORMAL: Final = 9
ACL_HBM_MEM_HUGE1G: Final = 10
ACL_HBM_MEM_P2P_HUGE1G: Final = 11
ACL_MEM_NORMAL: Final = 12
ACL_MEM_HUGE: Final = 13
ACL_MEM_HUGE1G: Final = 14
ACL_MEM_P2P_NORMAL: Final = 15
ACL_MEM_P2P_HUGE: Final = 16
ACL_MEM_P2P_HUGE1G: Final = 17

# --- Three event-status enums. Mind the numbering: "complete" is 0 in two and 1 in one.
# aclrtEventStatus: the deprecated acl.rt.query_event
ACL_EVENT_STATUS_COMPLETE: Final = 0
ACL_EVENT_STATUS_NOT_READY: Final = 1
ACL_EVENT_STATUS_RESERVED: Final = 2
# aclrtEventRecordedStatus: acl.rt.query_event_status (the OPPOSITE numbering)
ACL_EVENT_RECORDED_STATUS_NOT_READY: Final = 0
ACL_EVENT_RECORDED_STATUS_COMPLETE: Final = 1
# aclrtEventWaitStatus: acl.rt.query_event_wait_status
ACL_EVENT_WAIT_STATUS_COMPLETE: Final = 0
ACL_EVENT_WAIT_STATUS_NOT_READY: Final = 1
ACL_EVENT_WAIT_STATUS_RESERVED: Final = 0xFFFF

# --- aclrtStreamStatus (acl.rt.stream_query)
ACL_STREAM_STATUS_COMPLETE: Final = 0
ACL_STREAM_STATUS_NOT_READY: Final = 1
ACL_STREAM_STATUS_RESERVED: Final = 0xFFFF

# --- aclrtCallbackBlockType (acl.rt.launch_callback)
ACL_CALLBACK_NO_BLOCK: Final = 0
ACL_CALLBACK_BLOCK: Final = 1

# --- Event flags (create_event_with_flag / create_event_ex_with_flag; may be OR-ed)
ACL_EVENT_SYNC: Final = 0x1  # needed for reset_event and stream_wait_event
ACL_EVENT_CAPTURE_STREAM_PROGRESS: Final = 0x2
ACL_EVENT_TIME_LINE: Final = 0x8  # enables timestamps
ACL_EVENT_DEVICE_USE_ONLY: Final = 0x10
ACL_EVENT_EXTERNAL: Final = 0x20  # must not be OR-ed with other flags
ACL_EVENT_IPC: Final = 0x40

# --- Event record / wait flags
ACL_EVENT_RECORD_DEFAULT: Final = 0
ACL_EVENT_RECORD_EXTERNAL: Final = 1
ACL_EVENT_WAIT_DEFAULT: Final = 0
ACL_EVENT_WAIT_EXTERNAL: Final = 1

# --- Stream flags (create_stream_with_config)
ACL_STREAM_FAST_LAUNCH: Final = 0x1
ACL_STREAM_FAST_SYNC: Final = 0x2
ACL_STREAM_PERSISTENT: Final = 0x4
ACL_STREAM_HUGE: Final = 0x8  # no effect in the current version
ACL_STREAM_CPU_SCHEDULE: Final = 0x10
ACL_STREAM_DEVICE_USE_ONLY: Final = 0x20

# --- Stream failure modes (set_stream_failure_mode, ACL_STREAM_ATTR_FAILURE_MODE)
ACL_CONTINUE_ON_FAILURE: Final = 0
ACL_STOP_ON_FAILURE: Final = 1

# --- aclrtTsId
ACL_TS_ID_AICORE: Final = 0
ACL_TS_ID_AIVECTOR: Final = 1
ACL_TS_ID_RESERVED: Final = 2

# --- aclrtFloatOverflowMode (the notes abbreviate these; full names from acl_rt.h)
ACL_RT_OVERFLOW_MODE_SATURATION: Final = 0
ACL_RT_OVERFLOW_MODE_INFNAN: Final = 1
ACL_RT_OVERFLOW_MODE_UNDEF: Final = 2

# --- aclrtStreamAttr (the notes abbreviate these; full names from acl_rt.h)
ACL_STREAM_ATTR_FAILURE_MODE: Final = 1
ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: Final = 2
ACL_STREAM_ATTR_USER_CUSTOM_TAG: Final = 3
ACL_STREAM_ATTR_CACHE_OP_INFO: Final = 4  # some older headers spell it ..._CACHE_OP_IFNO
ACL_STREAM_ATTR_PRIORITY: Final = 5

# --- aclrtLastErrLevel
ACL_RT_THREAD_LEVEL: Final = 0

# --- aclrtDeviceStatus (the notes abbreviate these; full names from acl_rt.h)
ACL_RT_DEVICE_STATUS_NORMAL: Final = 0
ACL_RT_DEVICE_STATUS_ABNORMAL: Final = 1
ACL_RT_DEVICE_STATUS_END: Final = 0xFFFF

# --- aclFormat (acl_base_rt.h)
ACL_FORMAT_UNDEFINED: Final = -1
ACL_FORMAT_NCHW: Final = 0
ACL_FORMAT_NHWC: Final = 1
ACL_FORMAT_ND: Final = 2
ACL_FORMAT_NC1HWC0: Final = 3
ACL_FORMAT_FRACTAL_Z: Final = 4
ACL_FORMAT_NC1HWC0_C04: Final = 12
ACL_FORMAT_HWCN: Final = 16
ACL_FORMAT_NDHWC: Final = 27
ACL_FORMAT_FRACTAL_NZ: Final = 29
ACL_FORMAT_NCDHW: Final = 30
ACL_FORMAT_NDC1HWC0: Final = 32
ACL_FRACTAL_Z_3D: Final = 33  # (sic) no FORMAT_ in the header name
ACL_FORMAT_NC: Final = 35
ACL_FORMAT_NCL: Final = 47
ACL_FORMAT_FRACTAL_NZ_C0_16: Final = 50
ACL_FORMAT_FRACTAL_NZ_C0_32: Final = 51
ACL_FORMAT_FRACTAL_NZ_C0_2: Final = 52
ACL_FORMAT_FRACTAL_NZ_C0_4: Final = 53
ACL_FORMAT_FRACTAL_NZ_C0_8: Final = 54

# --- aclDataType (acl_base_rt.h). There are no values 5, 14, 15 or 18-26.
ACL_DT_UNDEFINED: Final = -1
ACL_FLOAT: Final = 0
ACL_FLOAT16: Final = 1
ACL_INT8: Final = 2
ACL_INT32: Final = 3
ACL_UINT8: Final = 4
ACL_INT16: Final = 6
ACL_UINT16: Final = 7
ACL_UINT32: Final = 8
ACL_INT64: Final = 9
ACL_UINT64: Final = 10
ACL_DOUBLE: Final = 11
ACL_BOOL: Final = 12
ACL_STRING: Final = 13
ACL_COMPLEX64: Final = 16
ACL_COMPLEX128: Final = 17
ACL_BF16: Final = 27
ACL_INT4: Final = 29
ACL_UINT1: Final = 30
ACL_COMPLEX32: Final = 33
ACL_HIFLOAT8: Final = 34
ACL_FLOAT8_E5M2: Final = 35
ACL_FLOAT8_E4M3FN: Final = 36
ACL_FLOAT8_E8M0: Final = 37
ACL_FLOAT6_E3M2: Final = 38
ACL_FLOAT6_E2M3: Final = 39
ACL_FLOAT4_E2M1: Final = 40
ACL_FLOAT4_E1M2: Final = 41

# --- aclLogLevel (acl.app_log). ACL_ERROR here is a log level, not a return code.
ACL_DEBUG: Final = 0
ACL_INFO: Final = 1
ACL_WARNING: Final = 2
ACL_ERROR: Final = 3

# --- aclMemType (set_tensor_place_ment)
ACL_MEMTYPE_DEVICE: Final = 0
ACL_MEMTYPE_HOST: Final = 1
ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT: Final = 2

# --- aclopEngineType (GE acl_op.h)
ACL_ENGINE_SYS: Final = 0
ACL_ENGINE_AICORE: Final = 1
ACL_ENGINE_VECTOR: Final = 2

# --- aclopCompileType (GE acl_op_compiler.h)
ACL_COMPILE_SYS: Final = 0
ACL_COMPILE_UNREGISTERED: Final = 1

# --- Model limits (GE acl_mdl.h)
ACL_MAX_DIM_CNT: Final = 128
ACL_MAX_TENSOR_NAME_LEN: Final = 128
ACL_MAX_BATCH_NUM: Final = 128
ACL_MAX_HW_NUM: Final = 128
ACL_DYNAMIC_TENSOR_NAME: Final = "ascend_mbatch_shape_data"  # the dynamic-batch input's name

# =============================================================================================
# DVPP (acl.media; acl_dvpp.h)
# =============================================================================================

# --- acldvppPixelFormat. The header also defines 21-40 and 50-54 (bayer); the notes do not
# name them, so they are left out.
PIXEL_FORMAT_YUV_400: Final = 0
PIXEL_FORMAT_YUV_SEMIPLANAR_420: Final = 1  # NV12
PIXEL_FORMAT_YVU_SEMIPLANAR_420: Final = 2  # NV21
PIXEL_FORMAT_YUV_SEMIPLANAR_422: Final = 3
PIXEL_FORMAT_YVU_SEMIPLANAR_422: Final = 4
PIXEL_FORMAT_YUV_SEMIPLANAR_444: Final = 5
PIXEL_FORMAT_YVU_SEMIPLANAR_444: Final = 6
PIXEL_FORMAT_YUYV_PACKED_422: Final = 7
PIXEL_FORMAT_UYVY_PACKED_422: Final = 8
PIXEL_FORMAT_YVYU_PACKED_422: Final = 9
PIXEL_FORMAT_VYUY_PACKED_422: Final = 10
PIXEL_FORMAT_YUV_PACKED_444: Final = 11
PIXEL_FORMAT_RGB_888: Final = 12
PIXEL_FORMAT_BGR_888: Final = 13
PIXEL_FORMAT_ARGB_8888: Final = 14
PIXEL_FORMAT_ABGR_8888: Final = 15
PIXEL_FORMAT_RGBA_8888: Final = 16
PIXEL_FORMAT_BGRA_8888: Final = 17
PIXEL_FORMAT_YUV_SEMI_PLANNER_420_10BIT: Final = 18  # (sic) PLANNER
PIXEL_FORMAT_YVU_SEMI_PLANNER_420_10BIT: Final = 19  # (sic) PLANNER
PIXEL_FORMAT_YVU_PLANAR_420: Final = 20
PIXEL_FORMAT_BGR_888_PLANAR: Final = 70
PIXEL_FORMAT_YUV_SEMIPLANAR_440: Final = 1000
PIXEL_FORMAT_YVU_SEMIPLANAR_440: Final = 1001
PIXEL_FORMAT_FLOAT32: Final = 1002
PIXEL_FORMAT_UNKNOWN: Final = 10000

# --- acldvppJpegFormat (dvpp_jpeg_get_image_info_v2)
ACL_JPEG_CSS_444: Final = 0
ACL_JPEG_CSS_422: Final = 1
ACL_JPEG_CSS_420: Final = 2
ACL_JPEG_CSS_GRAY: Final = 3
ACL_JPEG_CSS_440: Final = 4
ACL_JPEG_CSS_411: Final = 5
ACL_JPEG_CSS_UNKNOWN: Final = 1000

# --- acldvppChannelMode (dvpp_set_channel_desc_mode)
DVPP_CHNMODE_VPC: Final = 1
DVPP_CHNMODE_JPEGD: Final = 2
DVPP_CHNMODE_JPEGE: Final = 4
DVPP_CHNMODE_PNGD: Final = 8

# --- acldvppStreamFormat (vdec/venc enType, dvpp_set_stream_desc_format)
H265_MAIN_LEVEL: Final = 0
H264_BASELINE_LEVEL: Final = 1
H264_MAIN_LEVEL: Final = 2
H264_HIGH_LEVEL: Final = 3

# --- aclTransType, aclComputeType (ops/acl_cblas.h: acl.blas.gemm_ex)
ACL_TRANS_N: Final = 0
ACL_TRANS_T: Final = 1
ACL_TRANS_NZ: Final = 2
ACL_TRANS_NZ_T: Final = 3
ACL_COMPUTE_HIGH_PRECISION: Final = 0
ACL_COMPUTE_LOW_PRECISION: Final = 1

# --- the data-type switches of aclprofCreateConfig (acl_prof.h ACL_PROF_*)
ACL_PROF_ACL_API: Final = 0x0001
ACL_PROF_TASK_TIME: Final = 0x0002
ACL_PROF_AICORE_METRICS: Final = 0x0004
ACL_PROF_AICPU: Final = 0x0008

# =============================================================================================
# numpy type numbers used by pyACL samples (numpy's numbers, np.dtype(x).num; not ACL's)
# =============================================================================================
NPY_BYTE: Final = 1  # int8
NPY_INT: Final = 5  # int32
NPY_FLOAT32: Final = 11  # float32 (ptr_to_numpy(ptr, shape, NPY_FLOAT32))

# =============================================================================================
# aclDataTypeSize
# =============================================================================================

#: Bytes per element, as real ``aclDataTypeSize`` returns them (RT-impl ``data_buffer.cpp``).
#: Quirks kept on purpose: ``ACL_INT4`` and ``ACL_UINT1`` are 1 (sic, not a fraction),
#: ``ACL_STRING`` and ``ACL_DT_UNDEFINED`` are 0, and the FLOAT6/FLOAT4 types have no case of
#: their own, so they fall into the C ``default:`` branch, which returns ``sizeof(int64_t)``.
DATA_TYPE_SIZE: Final[dict[int, int]] = {
    ACL_DT_UNDEFINED: 0,
    ACL_FLOAT: 4,
    ACL_FLOAT16: 2,
    ACL_INT8: 1,
    ACL_INT32: 4,
    ACL_UINT8: 1,
    ACL_INT16: 2,
    ACL_UINT16: 2,
    ACL_UINT32: 4,
    ACL_INT64: 8,
    ACL_UINT64: 8,
    ACL_DOUBLE: 8,
    ACL_BOOL: 1,
    ACL_STRING: 0,
    ACL_COMPLEX64: 8,
    ACL_COMPLEX128: 16,
    ACL_BF16: 2,
    ACL_INT4: 1,  # (sic)
    ACL_UINT1: 1,  # (sic)
    ACL_COMPLEX32: 4,
    ACL_HIFLOAT8: 1,
    ACL_FLOAT8_E5M2: 1,
    ACL_FLOAT8_E4M3FN: 1,
    ACL_FLOAT8_E8M0: 1,
    ACL_FLOAT6_E3M2: 8,  # default case
    ACL_FLOAT6_E2M3: 8,  # default case
    ACL_FLOAT4_E2M1: 8,  # default case
    ACL_FLOAT4_E1M2: 8,  # default case
}

#: What real ``aclDataTypeSize`` returns from its ``default:`` branch (``sizeof(int64_t)``),
#: i.e. for *any* value that has no case of its own, including values that are not an
#: ``aclDataType`` at all (5, 14, 28, 999, ...). :func:`data_type_size` returns 0 for those
#: instead; use ``DATA_TYPE_SIZE.get(dtype, DATA_TYPE_SIZE_DEFAULT_CASE)`` to imitate real ACL.
DATA_TYPE_SIZE_DEFAULT_CASE: Final = 8

# =============================================================================================
# Enum classes. Members are named by the header suffix and have the header values;
# header_name(member) gives the full C name back.
# =============================================================================================


@unique
class RunMode(IntEnum):
    """``aclrtRunMode``: where the program runs (``ACL_DEVICE`` = RC mode, ``ACL_HOST`` = EP)."""

    DEVICE = 0
    HOST = 1


@unique
class SysParamOpt(IntEnum):
    """``aclSysParamOpt``: options for ``acl.rt.(ctx_)set_sys_param_opt``."""

    DETERMINISTIC = 0
    ENABLE_DEBUG_KERNEL = 1
    STRONG_CONSISTENCY = 2  # deprecated
    ENABLE_KERNEL_EARLY_START = 3


@unique
class MemcpyKind(IntEnum):
    """``aclrtMemcpyKind``: the ``kind`` argument of ``memcpy`` / ``memcpy_async``."""

    HOST_TO_HOST = 0
    HOST_TO_DEVICE = 1
    DEVICE_TO_HOST = 2
    DEVICE_TO_DEVICE = 3
    DEFAULT = 4
    HOST_TO_BUF_TO_DEVICE = 5
    INNER_DEVICE_TO_DEVICE = 6
    INTER_DEVICE_TO_DEVICE = 7


@unique
class MemMallocPolicy(IntEnum):
    """``aclrtMemMallocPolicy`` page policies (the ``policy`` argument of ``acl.rt.malloc``).

    The C enum also holds the modifier bits ``ACL_MEM_TYPE_LOW_BAND_WIDTH``,
    ``ACL_MEM_TYPE_HIGH_BAND_WIDTH`` and ``ACL_MEM_ACCESS_USER_SPACE_READONLY``; they are OR-ed
    onto a policy and are flat constants only, so mask them off before ``MemMallocPolicy(p)``.
    """

    HUGE_FIRST = 0
    HUGE_ONLY = 1
    NORMAL_ONLY = 2
    HUGE_FIRST_P2P = 3
    HUGE_ONLY_P2P = 4
    NORMAL_ONLY_P2P = 5
    HUGE1G_ONLY = 6
    HUGE1G_ONLY_P2P = 7


@unique
class MemAttr(IntEnum):
    """``aclrtMemAttr``: which memory ``acl.rt.get_mem_info(attr)`` reports."""

    DDR_MEM = 0
    HBM_MEM = 1
    DDR_MEM_HUGE = 2
    DDR_MEM_NORMAL = 3
    HBM_MEM_HUGE = 4
    HBM_MEM_NORMAL = 5
    DDR_MEM_P2P_HUGE = 6
    DDR_MEM_P2P_NORMAL = 7
    HBM_MEM_P2P_HUGE = 8
    HBM_MEM_P2P_NORMAL = 9
    HBM_MEM_HUGE1G = 10
    HBM_MEM_P2P_HUGE1G = 11
    MEM_NORMAL = 12
    MEM_HUGE = 13
    MEM_HUGE1G = 14
    MEM_P2P_NORMAL = 15
    MEM_P2P_HUGE = 16
    MEM_P2P_HUGE1G = 17


@unique
class EventStatus(IntEnum):
    """``aclrtEventStatus``, returned by the deprecated ``acl.rt.query_event``.

    COMPLETE is **0** here but **1** in :class:`EventRecordedStatus`.
    """

    COMPLETE = 0
    NOT_READY = 1
    RESERVED = 2


@unique
class EventRecordedStatus(IntEnum):
    """``aclrtEventRecordedStatus``, returned by ``acl.rt.query_event_status``.

    COMPLETE is **1** here but **0** in :class:`EventStatus`. NOT_READY means "not recorded,
    or recorded but not yet executed, or failed".
    """

    NOT_READY = 0
    COMPLETE = 1


@unique
class EventWaitStatus(IntEnum):
    """``aclrtEventWaitStatus``, returned by ``acl.rt.query_event_wait_status``."""

    COMPLETE = 0
    NOT_READY = 1
    RESERVED = 0xFFFF


@unique
class StreamStatus(IntEnum):
    """``aclrtStreamStatus``, returned by ``acl.rt.stream_query``."""

    COMPLETE = 0
    NOT_READY = 1
    RESERVED = 0xFFFF


@unique
class CallbackBlockType(IntEnum):
    """``aclrtCallbackBlockType``: BLOCK holds later stream tasks until the callback returns."""

    NO_BLOCK = 0
    BLOCK = 1


class EventFlag(IntFlag):
    """Flags of ``acl.rt.create_event_with_flag`` (``ACL_EVENT_*``); they may be OR-ed."""

    SYNC = 0x1
    CAPTURE_STREAM_PROGRESS = 0x2
    TIME_LINE = 0x8
    DEVICE_USE_ONLY = 0x10
    EXTERNAL = 0x20
    IPC = 0x40


class StreamFlag(IntFlag):
    """Flags of ``acl.rt.create_stream_with_config`` (``ACL_STREAM_*``); they may be OR-ed."""

    FAST_LAUNCH = 0x1
    FAST_SYNC = 0x2
    PERSISTENT = 0x4
    HUGE = 0x8
    CPU_SCHEDULE = 0x10
    DEVICE_USE_ONLY = 0x20


@unique
class StreamFailureMode(IntEnum):
    """Stream failure modes (``ACL_CONTINUE_ON_FAILURE`` / ``ACL_STOP_ON_FAILURE``)."""

    CONTINUE_ON_FAILURE = 0
    STOP_ON_FAILURE = 1


@unique
class TsId(IntEnum):
    """``aclrtTsId``: task-scheduler IDs."""

    AICORE = 0
    AIVECTOR = 1
    RESERVED = 2


@unique
class FloatOverflowMode(IntEnum):
    """``aclrtFloatOverflowMode`` (``ACL_RT_OVERFLOW_MODE_*``)."""

    SATURATION = 0
    INFNAN = 1
    UNDEF = 2


@unique
class StreamAttr(IntEnum):
    """``aclrtStreamAttr`` (``ACL_STREAM_ATTR_*``)."""

    FAILURE_MODE = 1
    FLOAT_OVERFLOW_CHECK = 2
    USER_CUSTOM_TAG = 3
    CACHE_OP_INFO = 4
    PRIORITY = 5


@unique
class DeviceStatus(IntEnum):
    """``aclrtDeviceStatus`` (``ACL_RT_DEVICE_STATUS_*``)."""

    NORMAL = 0
    ABNORMAL = 1
    END = 0xFFFF


@unique
class Format(IntEnum):
    """``aclFormat``: tensor layouts. ``FRACTAL_Z_3D`` is ``ACL_FRACTAL_Z_3D`` in the header."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33
    NC = 35
    NCL = 47
    FRACTAL_NZ_C0_16 = 50
    FRACTAL_NZ_C0_32 = 51
    FRACTAL_NZ_C0_2 = 52
    FRACTAL_NZ_C0_4 = 53
    FRACTAL_NZ_C0_8 = 54


@unique
class DataType(IntEnum):
    """``aclDataType``. ``UNDEFINED`` is ``ACL_DT_UNDEFINED`` (-1) in the header.

    Byte sizes are in :data:`DATA_TYPE_SIZE`; see also :attr:`size`.
    """

    UNDEFINED = -1
    FLOAT = 0
    FLOAT16 = 1
    INT8 = 2
    INT32 = 3
    UINT8 = 4
    INT16 = 6
    UINT16 = 7
    UINT32 = 8
    INT64 = 9
    UINT64 = 10
    DOUBLE = 11
    BOOL = 12
    STRING = 13
    COMPLEX64 = 16
    COMPLEX128 = 17
    BF16 = 27
    INT4 = 29
    UINT1 = 30
    COMPLEX32 = 33
    HIFLOAT8 = 34
    FLOAT8_E5M2 = 35
    FLOAT8_E4M3FN = 36
    FLOAT8_E8M0 = 37
    FLOAT6_E3M2 = 38
    FLOAT6_E2M3 = 39
    FLOAT4_E2M1 = 40
    FLOAT4_E1M2 = 41

    @property
    def size(self) -> int:
        """Bytes per element as real ``aclDataTypeSize`` reports them."""
        return DATA_TYPE_SIZE[self.value]


@unique
class LogLevel(IntEnum):
    """``aclLogLevel`` (``acl.app_log(level, msg)``)."""

    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3


@unique
class MemType(IntEnum):
    """``aclMemType`` (``ACL_MEMTYPE_*``, for ``acl.set_tensor_place_ment``)."""

    DEVICE = 0
    HOST = 1
    HOST_COMPILE_INDEPENDENT = 2


@unique
class PixelFormat(IntEnum):
    """``acldvppPixelFormat`` (``PIXEL_FORMAT_*``), the values the notes name."""

    YUV_400 = 0
    YUV_SEMIPLANAR_420 = 1
    YVU_SEMIPLANAR_420 = 2
    YUV_SEMIPLANAR_422 = 3
    YVU_SEMIPLANAR_422 = 4
    YUV_SEMIPLANAR_444 = 5
    YVU_SEMIPLANAR_444 = 6
    YUYV_PACKED_422 = 7
    UYVY_PACKED_422 = 8
    YVYU_PACKED_422 = 9
    VYUY_PACKED_422 = 10
    YUV_PACKED_444 = 11
    RGB_888 = 12
    BGR_888 = 13
    ARGB_8888 = 14
    ABGR_8888 = 15
    RGBA_8888 = 16
    BGRA_8888 = 17
    YUV_SEMI_PLANNER_420_10BIT = 18
    YVU_SEMI_PLANNER_420_10BIT = 19
    YVU_PLANAR_420 = 20
    BGR_888_PLANAR = 70
    YUV_SEMIPLANAR_440 = 1000
    YVU_SEMIPLANAR_440 = 1001
    FLOAT32 = 1002
    UNKNOWN = 10000


# ---------------------------------------------------------------------------------------------
# ErrorCode: one member per return-code value, under its canonical (HEAD, non-deprecated) name.
# Codes whose only name is deprecated (100034-100036, 100038, 200002) are members too, since
# older CANN versions return them. Same-value aliases (ACL_ERROR_NONE, ...) are not members.
# ---------------------------------------------------------------------------------------------


@unique
class ErrorCode(IntEnum):
    """Every ACL common, runtime, GE and aclnn return code, named as in the headers.

    ``ErrorCode(207018).name == "ACL_ERROR_RT_DEVICE_OOM"``. Use :func:`explain` for a
    meaning and the usual cause.
    """

    ACL_SUCCESS = 0
    ACL_ERROR_INVALID_PARAM = 100000
    ACL_ERROR_UNINITIALIZE = 100001
    ACL_ERROR_REPEAT_INITIALIZE = 100002
    ACL_ERROR_INVALID_FILE = 100003
    ACL_ERROR_WRITE_FILE = 100004
    ACL_ERROR_INVALID_FILE_SIZE = 100005
    ACL_ERROR_PARSE_FILE = 100006
    ACL_ERROR_FILE_MISSING_ATTR = 100007
    ACL_ERROR_FILE_ATTR_INVALID = 100008
    ACL_ERROR_INVALID_DUMP_CONFIG = 100009
    ACL_ERROR_INVALID_PROFILING_CONFIG = 100010
    ACL_ERROR_INVALID_MODEL_ID = 100011
    ACL_ERROR_DESERIALIZE_MODEL = 100012
    ACL_ERROR_PARSE_MODEL = 100013
    ACL_ERROR_READ_MODEL_FAILURE = 100014
    ACL_ERROR_MODEL_SIZE_INVALID = 100015
    ACL_ERROR_MODEL_MISSING_ATTR = 100016
    ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017
    ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018
    ACL_ERROR_MODEL_NOT_DYNAMIC = 100019
    ACL_ERROR_OP_TYPE_NOT_MATCH = 100020
    ACL_ERROR_OP_INPUT_NOT_MATCH = 100021
    ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022
    ACL_ERROR_OP_ATTR_NOT_MATCH = 100023
    ACL_ERROR_OP_NOT_FOUND = 100024
    ACL_ERROR_OP_LOAD_FAILED = 100025
    ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026
    ACL_ERROR_FORMAT_NOT_MATCH = 100027
    ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028
    ACL_ERROR_KERNEL_NOT_FOUND = 100029
    ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030
    ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031
    ACL_ERROR_INVALID_QUEUE_ID = 100032
    ACL_ERROR_REPEAT_SUBSCRIBE = 100033
    ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034
    ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036
    ACL_ERROR_REPEAT_FINALIZE = 100037
    ACL_ERROR_NOT_STATIC_AIPP = 100038
    ACL_ERROR_COMPILING_STUB_MODE = 100039
    ACL_ERROR_GROUP_NOT_SET = 100040
    ACL_ERROR_GROUP_NOT_CREATE = 100041
    ACL_ERROR_PROF_ALREADY_RUN = 100042
    ACL_ERROR_PROF_NOT_RUN = 100043
    ACL_ERROR_DUMP_ALREADY_RUN = 100044
    ACL_ERROR_DUMP_NOT_RUN = 100045
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046
    ACL_ERROR_PROF_API_CONFLICT = 148047
    ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048
    ACL_ERROR_INVALID_OPP_PATH = 148049
    ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051
    ACL_ERROR_UNSUPPORTED_JPEG = 148052
    ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053
    ACL_ERROR_BAD_ALLOC = 200000
    ACL_ERROR_API_NOT_SUPPORT = 200001
    ACL_ERROR_INVALID_DEVICE = 200002
    ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003
    ACL_ERROR_RESOURCE_NOT_MATCH = 200004
    ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005
    ACL_ERROR_FEATURE_UNSUPPORTED = 200006
    ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007
    ACL_ERROR_STORAGE_OVER_LIMIT = 300000
    ACL_ERROR_INTERNAL_ERROR = 500000
    ACL_ERROR_FAILURE = 500001
    ACL_ERROR_GE_FAILURE = 500002
    ACL_ERROR_RT_FAILURE = 500003
    ACL_ERROR_DRV_FAILURE = 500004
    ACL_ERROR_PROFILING_FAILURE = 500005
    ACL_ERROR_RT_PARAM_INVALID = 107000
    ACL_ERROR_RT_INVALID_DEVICEID = 107001
    ACL_ERROR_RT_CONTEXT_NULL = 107002
    ACL_ERROR_RT_STREAM_CONTEXT = 107003
    ACL_ERROR_RT_MODEL_CONTEXT = 107004
    ACL_ERROR_RT_STREAM_MODEL = 107005
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006
    ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007
    ACL_ERROR_RT_ADDR_UNALIGNED = 107008
    ACL_ERROR_RT_FILE_OPEN = 107009
    ACL_ERROR_RT_FILE_WRITE = 107010
    ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011
    ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012
    ACL_ERROR_RT_GROUP_NOT_SET = 107013
    ACL_ERROR_RT_GROUP_NOT_CREATE = 107014
    ACL_ERROR_RT_STREAM_NO_CB_REG = 107015
    ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016
    ACL_ERROR_RT_INVALID_HANDLE = 107017
    ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018
    ACL_ERROR_RT_WAIT_TIMEOUT = 107019
    ACL_ERROR_RT_TASK_TIMEOUT = 107020
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021
    ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022
    ACL_ERROR_RT_STREAM_ABORT = 107023
    ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024
    ACL_ERROR_RT_STREAM_UNJOINED = 107025
    ACL_ERROR_RT_MODEL_CAPTURED = 107026
    ACL_ERROR_RT_STREAM_CAPTURED = 107027
    ACL_ERROR_RT_EVENT_CAPTURED = 107028
    ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031
    ACL_ERROR_STREAM_CAPTURE_CONFLICT = 107032
    ACL_ERROR_STREAM_TASK_GROUP_STATUS = 107033
    ACL_ERROR_STREAM_TASK_GROUP_INTR = 107034
    ACL_ERROR_RT_TASK_ABORT_STOP = 107035
    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036
    ACL_ERROR_RT_MODEL_RUNNING = 107037
    ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY = 107039
    ACL_ERROR_RT_MODEL_UPDATE_FAILED = 107040
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC = 107041
    ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042
    ACL_ERROR_RT_INVALID_SYMBOL = 107043
    ACL_ERROR_RT_INVALID_DEVICE_FUNCTION = 107044
    ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING = 107045
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
    ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
    ACL_ERROR_RT_MEMORY_FREE = 207002
    ACL_ERROR_RT_AICORE_OVER_FLOW = 207003
    ACL_ERROR_RT_NO_DEVICE = 207004
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005
    ACL_ERROR_RT_NO_PERMISSION = 207006
    ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007
    ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
    ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009
    ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010
    ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011
    ACL_ERROR_RT_OVER_LIMIT = 207012
    ACL_ERROR_RT_QUEUE_EMPTY = 207013
    ACL_ERROR_RT_QUEUE_FULL = 207014
    ACL_ERROR_RT_REPEATED_INIT = 207015
    ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016
    ACL_ERROR_RT_OVER_FLOW = 207017
    ACL_ERROR_RT_DEVICE_OOM = 207018
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019
    ACL_ERROR_RT_TIMEOUT = 207020
    ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED = 207021
    ACL_ERROR_RT_INTERNAL_ERROR = 507000
    ACL_ERROR_RT_TS_ERROR = 507001
    ACL_ERROR_RT_STREAM_TASK_FULL = 507002
    ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003
    ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004
    ACL_ERROR_RT_END_OF_SEQUENCE = 507005
    ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007
    ACL_ERROR_RT_SOC_VERSION = 507008
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009
    ACL_ERROR_RT_LOST_HEARTBEAT = 507010
    ACL_ERROR_RT_MODEL_EXECUTE = 507011
    ACL_ERROR_RT_REPORT_TIMEOUT = 507012
    ACL_ERROR_RT_SYS_DMA = 507013
    ACL_ERROR_RT_AICORE_TIMEOUT = 507014
    ACL_ERROR_RT_AICORE_EXCEPTION = 507015
    ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016
    ACL_ERROR_RT_AICPU_TIMEOUT = 507017
    ACL_ERROR_RT_AICPU_EXCEPTION = 507018
    ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR = 507019
    ACL_ERROR_RT_AICPU_MODEL_RSP_ERR = 507020
    ACL_ERROR_RT_PROFILING_ERROR = 507021
    ACL_ERROR_RT_IPC_ERROR = 507022
    ACL_ERROR_RT_MODEL_ABORT_NORMAL = 507023
    ACL_ERROR_RT_KERNEL_UNREGISTERING = 507024
    ACL_ERROR_RT_RINGBUFFER_NOT_INIT = 507025
    ACL_ERROR_RT_RINGBUFFER_NO_DATA = 507026
    ACL_ERROR_RT_KERNEL_LOOKUP = 507027
    ACL_ERROR_RT_KERNEL_DUPLICATE = 507028
    ACL_ERROR_RT_DEBUG_REGISTER_FAIL = 507029
    ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL = 507030
    ACL_ERROR_RT_LABEL_CONTEXT = 507031
    ACL_ERROR_RT_PROGRAM_USE_OUT = 507032
    ACL_ERROR_RT_DEV_SETUP_ERROR = 507033
    ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035
    ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036
    ACL_ERROR_RT_CDQ_BATCH_ABNORMAL = 507037
    ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR = 507038
    ACL_ERROR_RT_DIE_SET_ERROR = 507039
    ACL_ERROR_RT_INVALID_DIEID = 507040
    ACL_ERROR_RT_DIE_MODE_NOT_SET = 507041
    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042
    ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043
    ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW = 507044
    ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW = 507045
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047
    ACL_ERROR_RT_FFTS_PLUS_TIMEOUT = 507048
    ACL_ERROR_RT_FFTS_PLUS_EXCEPTION = 507049
    ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION = 507050
    ACL_ERROR_RT_SEND_MSG = 507051
    ACL_ERROR_RT_COPY_DATA = 507052
    ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053
    ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054
    ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR = 507055
    ACL_ERROR_RT_LINK_ERROR = 507056
    ACL_ERROR_RT_SUSPECT_REMOTE_ERROR = 507057
    ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899
    ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900
    ACL_ERROR_RT_SOCKET_CLOSE = 507901
    ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR = 507902
    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903
    ACL_ERROR_RT_COMM_OP_RETRY_FAIL = 507904
    ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT = 507905
    ACL_ERROR_SNAPSHOT_LOCK_FAILED = 507906
    ACL_ERROR_SNAPSHOT_UNLOCK_FAILED = 507907
    ACL_ERROR_SNAPSHOT_BACKUP_FAILED = 507908
    ACL_ERROR_SNAPSHOT_RESTORE_FAILED = 507909
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 507910
    ACL_ERROR_HOST_MEMORY_NOT_REGISTERED = 507911
    ACL_ERROR_SNAPSHOT_CALLBACK_FAILED = 507912
    ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED = 507913
    ACL_ERROR_RT_L3_PORT_ERROR = 507914
    ACL_ERROR_RT_CCU_TIMEOUT = 507915
    ACL_ERROR_RT_CCU_EXCEPTION = 507916
    ACL_ERROR_GE_PARAM_INVALID = 145000
    ACL_ERROR_GE_EXEC_NOT_INIT = 145001
    ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID = 145002
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003
    ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID = 145006
    ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID = 145007
    ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID = 145008
    ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED = 145009
    ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID = 145011
    ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID = 145012
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID = 145013
    ACL_ERROR_GE_AIPP_BATCH_EMPTY = 145014
    ACL_ERROR_GE_AIPP_NOT_EXIST = 145015
    ACL_ERROR_GE_AIPP_MODE_INVALID = 145016
    ACL_ERROR_GE_OP_TASK_TYPE_INVALID = 145017
    ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID = 145018
    ACL_ERROR_GE_PLGMGR_PATH_INVALID = 145019
    ACL_ERROR_GE_FORMAT_INVALID = 145020
    ACL_ERROR_GE_SHAPE_INVALID = 145021
    ACL_ERROR_GE_DATATYPE_INVALID = 145022
    ACL_ERROR_GE_MEMORY_ALLOCATION = 245000
    ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001
    ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002
    ACL_ERROR_GE_SUBHEALTHY = 345102
    ACL_ERROR_GE_USER_RAISE_EXCEPTION = 345103
    ACL_ERROR_GE_DATA_NOT_ALIGNED = 345104
    ACL_ERROR_GE_INTERNAL_ERROR = 545000
    ACL_ERROR_GE_LOAD_MODEL = 545001
    ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED = 545002
    ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED = 545003
    ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED = 545004
    ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED = 545005
    ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA = 545006
    ACL_ERROR_GE_COMMAND_HANDLE = 545007
    ACL_ERROR_GE_GET_TENSOR_INFO = 545008
    ACL_ERROR_GE_UNLOAD_MODEL = 545009
    ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT = 545601
    ACL_ERROR_GE_REDEPLOYING = 545602
    ACLNN_ERR_PARAM_NULLPTR = 161001
    ACLNN_ERR_PARAM_INVALID = 161002
    ACLNN_ERR_RUNTIME_ERROR = 361001
    ACLNN_ERR_INNER = 561000
    ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001
    ACLNN_ERR_INNER_TILING_ERROR = 561002
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003
    ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102
    ACLNN_ERR_INNER_NULLPTR = 561103
    ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104
    ACLNN_ERR_INNER_KEY_CONFLICT = 561105
    ACLNN_ERR_INNER_INVALID_IMPL_MODE = 561106
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND = 561107
    ACLNN_ERR_INNER_LOAD_JSON_FAILED = 561108
    ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND = 561109
    ACLNN_ERR_INNER_JSON_FORMAT_INVALID = 561110
    ACLNN_ERR_INNER_JSON_DTYPE_INVALID = 561111
    ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112
    ACLNN_ERR_INNER_OP_FILE_INVALID = 561113
    ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND = 561114
    ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH = 561115
    ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE = 561116
    ACLNN_ERR_INNER_INPUT_JSON_IS_NULL = 561117
    ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID = 561118
    ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID = 561119


#: Same-value alias name -> canonical name. ``ACL_ERROR_NONE`` and the two misspellings are
#: deprecated; ``ACL_RT_SUCCESS`` and ``ACLNN_SUCCESS`` are other headers' names for success.
ERROR_CODE_ALIASES: Final[dict[str, str]] = {
    "ACL_ERROR_NONE": "ACL_SUCCESS",
    "ACL_RT_SUCCESS": "ACL_SUCCESS",
    "ACLNN_SUCCESS": "ACL_SUCCESS",
    "ACL_ERROR_RT_DEVIDE_OOM": "ACL_ERROR_RT_DEVICE_OOM",
    "ACLNN_ERR_INNER_KEY_CONFILICT": "ACLNN_ERR_INNER_KEY_CONFLICT",
}

#: Deprecated return code -> the code current CANN returns in its place (pyACL-doc overview).
DEPRECATED_CODE_REPLACEMENTS: Final[dict[int, int]] = {
    ACL_ERROR_STREAM_NOT_SUBSCRIBE: ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_THREAD_NOT_SUBSCRIBE: ACL_ERROR_RT_THREAD_SUBSCRIBE,
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT: ACL_ERROR_RT_REPORT_TIMEOUT,
    ACL_ERROR_NOT_STATIC_AIPP: ACL_ERROR_GE_AIPP_NOT_EXIST,
    ACL_ERROR_INVALID_DEVICE: ACL_ERROR_RT_INVALID_DEVICEID,
}

# One-line meanings: header comments, the C docs' aclError page, or the name in plain English.
_MEANINGS: Final[dict[int, str]] = {
    ACL_SUCCESS: "Success.",
    ACL_ERROR_INVALID_PARAM: "Parameter check failed.",
    ACL_ERROR_UNINITIALIZE: (
        "Not initialised: acl.init, or a feature-specific init (dump, profiling), was not "
        "called."
    ),
    ACL_ERROR_REPEAT_INITIALIZE: "Repeated initialisation or repeated load.",
    ACL_ERROR_INVALID_FILE: "Invalid file.",
    ACL_ERROR_WRITE_FILE: "Failed to write a file.",
    ACL_ERROR_INVALID_FILE_SIZE: "Invalid file size.",
    ACL_ERROR_PARSE_FILE: "Failed to parse a file.",
    ACL_ERROR_FILE_MISSING_ATTR: "The file lacks a required attribute.",
    ACL_ERROR_FILE_ATTR_INVALID: "A file attribute is invalid.",
    ACL_ERROR_INVALID_DUMP_CONFIG: "Invalid dump configuration.",
    ACL_ERROR_INVALID_PROFILING_CONFIG: "Invalid profiling configuration.",
    ACL_ERROR_INVALID_MODEL_ID: "Invalid model ID.",
    ACL_ERROR_DESERIALIZE_MODEL: "Failed to deserialise the model.",
    ACL_ERROR_PARSE_MODEL: "Failed to parse the model.",
    ACL_ERROR_READ_MODEL_FAILURE: "Failed to read the model.",
    ACL_ERROR_MODEL_SIZE_INVALID: "Invalid model size.",
    ACL_ERROR_MODEL_MISSING_ATTR: "The model lacks a required attribute.",
    ACL_ERROR_MODEL_INPUT_NOT_MATCH: "The model inputs do not match.",
    ACL_ERROR_MODEL_OUTPUT_NOT_MATCH: "The model outputs do not match.",
    ACL_ERROR_MODEL_NOT_DYNAMIC: "The model is not a dynamic-shape model.",
    ACL_ERROR_OP_TYPE_NOT_MATCH: "The single-operator type does not match.",
    ACL_ERROR_OP_INPUT_NOT_MATCH: "The single-operator inputs do not match.",
    ACL_ERROR_OP_OUTPUT_NOT_MATCH: "The single-operator outputs do not match.",
    ACL_ERROR_OP_ATTR_NOT_MATCH: "The single-operator attributes do not match.",
    ACL_ERROR_OP_NOT_FOUND: "Single operator not found: no loaded operator model matches the call.",
    ACL_ERROR_OP_LOAD_FAILED: "Failed to load a single operator.",
    ACL_ERROR_UNSUPPORTED_DATA_TYPE: "Unsupported data type.",
    ACL_ERROR_FORMAT_NOT_MATCH: "The format does not match.",
    ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED: "No operator binary selector is registered.",
    ACL_ERROR_KERNEL_NOT_FOUND: "Operator kernel not found.",
    ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED: "An operator binary selector is already registered.",
    ACL_ERROR_KERNEL_ALREADY_REGISTERED: "The operator kernel is already registered.",
    ACL_ERROR_INVALID_QUEUE_ID: "Invalid queue ID.",
    ACL_ERROR_REPEAT_SUBSCRIBE: "Repeated subscription.",
    ACL_ERROR_STREAM_NOT_SUBSCRIBE: (
        "The stream is not subscribed. Deprecated code: current CANN returns "
        "ACL_ERROR_RT_STREAM_NO_CB_REG (107015) instead."
    ),
    ACL_ERROR_THREAD_NOT_SUBSCRIBE: (
        "The thread is not subscribed. Deprecated code: current CANN returns "
        "ACL_ERROR_RT_THREAD_SUBSCRIBE (107012) instead."
    ),
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT: (
        "Waiting for a callback timed out. Deprecated code: current CANN returns "
        "ACL_ERROR_RT_REPORT_TIMEOUT (507012) instead."
    ),
    ACL_ERROR_REPEAT_FINALIZE: "Repeated finalisation.",
    ACL_ERROR_NOT_STATIC_AIPP: (
        "The model has no static AIPP configuration. Deprecated code: current CANN returns "
        "ACL_ERROR_GE_AIPP_NOT_EXIST (145015) instead."
    ),
    ACL_ERROR_COMPILING_STUB_MODE: (
        "The process is linked against the compile-time stub library, not the real runtime."
    ),
    ACL_ERROR_GROUP_NOT_SET: "Group not set.",
    ACL_ERROR_GROUP_NOT_CREATE: "Group not created.",
    ACL_ERROR_PROF_ALREADY_RUN: "Profiling is already running.",
    ACL_ERROR_PROF_NOT_RUN: "Profiling is not running.",
    ACL_ERROR_DUMP_ALREADY_RUN: "Data dump is already running.",
    ACL_ERROR_DUMP_NOT_RUN: "Data dump is not running.",
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE: "Repeated profiling subscription.",
    ACL_ERROR_PROF_API_CONFLICT: "Conflicting profiling APIs were used together.",
    ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG: "Invalid maximum operator-queue size configuration.",
    ACL_ERROR_INVALID_OPP_PATH: "Invalid operator package (OPP) path.",
    ACL_ERROR_OP_UNSUPPORTED_DYNAMIC: "The operator does not support dynamic shapes.",
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED: "A related resource has not been released yet.",
    ACL_ERROR_UNSUPPORTED_JPEG: "Unsupported JPEG image.",
    ACL_ERROR_INVALID_BUNDLE_MODEL_ID: "Invalid bundle model ID.",
    ACL_ERROR_BAD_ALLOC: "Memory allocation failed (ACL layer).",
    ACL_ERROR_API_NOT_SUPPORT: "API not supported.",
    ACL_ERROR_INVALID_DEVICE: (
        "Invalid device. Deprecated code: current CANN returns ACL_ERROR_RT_INVALID_DEVICEID "
        "(107001) instead."
    ),
    ACL_ERROR_MEMORY_ADDRESS_UNALIGNED: "Memory address unaligned.",
    ACL_ERROR_RESOURCE_NOT_MATCH: "Resources do not match.",
    ACL_ERROR_INVALID_RESOURCE_HANDLE: "Invalid resource handle.",
    ACL_ERROR_FEATURE_UNSUPPORTED: "Feature not supported.",
    ACL_ERROR_PROF_MODULES_UNSUPPORTED: "Unsupported profiling modules requested.",
    ACL_ERROR_STORAGE_OVER_LIMIT: "Storage over limit.",
    ACL_ERROR_INTERNAL_ERROR: "ACL internal error.",
    ACL_ERROR_FAILURE: "ACL failure.",
    ACL_ERROR_GE_FAILURE: "Graph engine (GE) failure.",
    ACL_ERROR_RT_FAILURE: "Runtime failure.",
    ACL_ERROR_DRV_FAILURE: "Driver failure.",
    ACL_ERROR_PROFILING_FAILURE: "Profiling failure.",
    ACL_ERROR_RT_PARAM_INVALID: "Parameter invalid: the runtime rejected an argument.",
    ACL_ERROR_RT_INVALID_DEVICEID: "Invalid device ID.",
    ACL_ERROR_RT_CONTEXT_NULL: "Current context is null.",
    ACL_ERROR_RT_STREAM_CONTEXT: "The stream is not in the current context.",
    ACL_ERROR_RT_MODEL_CONTEXT: "The model is not in the current context.",
    ACL_ERROR_RT_STREAM_MODEL: "The stream is not in the model.",
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID: (
        "Event timestamp invalid: the event has no completed record yet."
    ),
    ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: "Event timestamp reversal.",
    ACL_ERROR_RT_ADDR_UNALIGNED: "Memory address unaligned.",
    ACL_ERROR_RT_FILE_OPEN: "Failed to open a file.",
    ACL_ERROR_RT_FILE_WRITE: "Failed to write a file.",
    ACL_ERROR_RT_STREAM_SUBSCRIBE: "Stream subscription error: the stream is already subscribed.",
    ACL_ERROR_RT_THREAD_SUBSCRIBE: (
        "Thread subscription error: the thread has no (or a conflicting) subscription."
    ),
    ACL_ERROR_RT_GROUP_NOT_SET: "Group not set.",
    ACL_ERROR_RT_GROUP_NOT_CREATE: "Group not created.",
    ACL_ERROR_RT_STREAM_NO_CB_REG: "No callback thread is registered to the stream.",
    ACL_ERROR_RT_INVALID_MEMORY_TYPE: "Invalid memory type.",
    ACL_ERROR_RT_INVALID_HANDLE: "Invalid handle.",
    ACL_ERROR_RT_INVALID_MALLOC_TYPE: "Invalid memory allocation type.",
    ACL_ERROR_RT_WAIT_TIMEOUT: "Wait timed out.",
    ACL_ERROR_RT_TASK_TIMEOUT: "Task timed out.",
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET: "The system parameter option has not been set.",
    ACL_ERROR_RT_DEVICE_TASK_ABORT: "Device tasks are being aborted.",
    ACL_ERROR_RT_STREAM_ABORT: "The stream is being aborted.",
    ACL_ERROR_RT_CAPTURE_DEPENDENCY: "Graph-capture dependency failure.",
    ACL_ERROR_RT_STREAM_UNJOINED: "Invalid capture model: a forked stream was not joined back.",
    ACL_ERROR_RT_MODEL_CAPTURED: "The model is being captured.",
    ACL_ERROR_RT_STREAM_CAPTURED: "The stream is being captured.",
    ACL_ERROR_RT_EVENT_CAPTURED: "The event is being captured.",
    ACL_ERROR_RT_STREAM_NOT_CAPTURED: "The stream is not in capture status.",
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT: (
        "The stream is being captured and does not support this operation."
    ),
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT: (
        "A disallowed implicit dependency on the default stream during capture."
    ),
    ACL_ERROR_STREAM_CAPTURE_CONFLICT: "Interdependent streams cannot begin capture together.",
    ACL_ERROR_STREAM_TASK_GROUP_STATUS: "Task group status error.",
    ACL_ERROR_STREAM_TASK_GROUP_INTR: "Task group interrupted.",
    ACL_ERROR_RT_TASK_ABORT_STOP: "Device task abort stopped before post-processing.",
    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED: "The capture was not begun on this stream.",
    ACL_ERROR_RT_MODEL_RUNNING: "The model is still running.",
    ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD: (
        "Capture ended in a different thread from the one that began it."
    ),
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY: "The input array is too small.",
    ACL_ERROR_RT_MODEL_UPDATE_FAILED: "Model update failed.",
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC: (
        "An asynchronous operation would turn synchronous, which a captured stream does not "
        "support."
    ),
    ACL_ERROR_RT_SYMBOL_NOT_FOUND: "Symbol not found.",
    ACL_ERROR_RT_INVALID_SYMBOL: "Invalid symbol.",
    ACL_ERROR_RT_INVALID_DEVICE_FUNCTION: "Invalid device function.",
    ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING: "A sub-graph (aclGraph) is being captured.",
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT: "Feature not supported.",
    ACL_ERROR_RT_MEMORY_ALLOCATION: "Memory allocation failed: out of memory.",
    ACL_ERROR_RT_MEMORY_FREE: "Memory free error.",
    ACL_ERROR_RT_AICORE_OVER_FLOW: "AI Core overflow.",
    ACL_ERROR_RT_NO_DEVICE: "No device.",
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: "Resource allocation failed.",
    ACL_ERROR_RT_NO_PERMISSION: "No permission.",
    ACL_ERROR_RT_NO_EVENT_RESOURCE: "No event resources left.",
    ACL_ERROR_RT_NO_STREAM_RESOURCE: "No stream resources left.",
    ACL_ERROR_RT_NO_NOTIFY_RESOURCE: "No notify resources left.",
    ACL_ERROR_RT_NO_MODEL_RESOURCE: "No model resources left.",
    ACL_ERROR_RT_NO_CDQ_RESOURCE: "No CDQ resources left.",
    ACL_ERROR_RT_OVER_LIMIT: "Over limit.",
    ACL_ERROR_RT_QUEUE_EMPTY: "The queue is empty.",
    ACL_ERROR_RT_QUEUE_FULL: "The queue is full.",
    ACL_ERROR_RT_REPEATED_INIT: "Repeated initialisation.",
    ACL_ERROR_RT_AIVEC_OVER_FLOW: "AI Vector overflow.",
    ACL_ERROR_RT_OVER_FLOW: "Overflow.",
    ACL_ERROR_RT_DEVICE_OOM: "Device out of memory (OOM).",
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP: (
        "Updating this operator is not supported. (Version-dependent: at least one older header"
        " used 207019 for ACL_ERROR_RT_SEND_MSG, which is 507051 at HEAD.)"
    ),
    ACL_ERROR_RT_TIMEOUT: "Driver timeout.",
    ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED: "Link type not supported.",
    ACL_ERROR_RT_INTERNAL_ERROR: "Runtime internal error.",
    ACL_ERROR_RT_TS_ERROR: "Task scheduler (TS) internal error.",
    ACL_ERROR_RT_STREAM_TASK_FULL: "The stream's task queue is full.",
    ACL_ERROR_RT_STREAM_TASK_EMPTY: "The stream's task queue is empty.",
    ACL_ERROR_RT_STREAM_NOT_COMPLETE: "The stream has not completed.",
    ACL_ERROR_RT_END_OF_SEQUENCE: "End of sequence.",
    ACL_ERROR_RT_EVENT_NOT_COMPLETE: "The event has not completed.",
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: "Context release error.",
    ACL_ERROR_RT_SOC_VERSION: "SoC version error.",
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT: "Task type not supported.",
    ACL_ERROR_RT_LOST_HEARTBEAT: "The task scheduler lost its heartbeat.",
    ACL_ERROR_RT_MODEL_EXECUTE: "Model execution failed.",
    ACL_ERROR_RT_REPORT_TIMEOUT: "Waiting for a callback report timed out.",
    ACL_ERROR_RT_SYS_DMA: "System DMA error.",
    ACL_ERROR_RT_AICORE_TIMEOUT: "AI Core timeout.",
    ACL_ERROR_RT_AICORE_EXCEPTION: "AI Core exception.",
    ACL_ERROR_RT_AICORE_TRAP_EXCEPTION: "AI Core trap exception.",
    ACL_ERROR_RT_AICPU_TIMEOUT: "AI CPU timeout.",
    ACL_ERROR_RT_AICPU_EXCEPTION: "AI CPU exception.",
    ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR: "AI CPU data-dump response error.",
    ACL_ERROR_RT_AICPU_MODEL_RSP_ERR: "AI CPU model-operation response error.",
    ACL_ERROR_RT_PROFILING_ERROR: "Profiling error.",
    ACL_ERROR_RT_IPC_ERROR: "IPC error.",
    ACL_ERROR_RT_MODEL_ABORT_NORMAL: "Model aborted normally.",
    ACL_ERROR_RT_KERNEL_UNREGISTERING: "The kernel is being unregistered.",
    ACL_ERROR_RT_RINGBUFFER_NOT_INIT: "Ring buffer not initialised.",
    ACL_ERROR_RT_RINGBUFFER_NO_DATA: "Ring buffer has no data.",
    ACL_ERROR_RT_KERNEL_LOOKUP: "Kernel lookup error.",
    ACL_ERROR_RT_KERNEL_DUPLICATE: "Kernel registered twice.",
    ACL_ERROR_RT_DEBUG_REGISTER_FAIL: "Debug register failed.",
    ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL: "Debug unregister failed.",
    ACL_ERROR_RT_LABEL_CONTEXT: "The label is not in the current context.",
    ACL_ERROR_RT_PROGRAM_USE_OUT: "The number of registered programs is used up.",
    ACL_ERROR_RT_DEV_SETUP_ERROR: "Device setup error.",
    ACL_ERROR_RT_VECTOR_CORE_TIMEOUT: "Vector core timeout.",
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: "Vector core exception.",
    ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION: "Vector core trap exception.",
    ACL_ERROR_RT_CDQ_BATCH_ABNORMAL: "CDQ batch allocation abnormal.",
    ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR: "The die mode cannot be changed.",
    ACL_ERROR_RT_DIE_SET_ERROR: "A die cannot be set in single-die mode.",
    ACL_ERROR_RT_INVALID_DIEID: "Invalid die ID.",
    ACL_ERROR_RT_DIE_MODE_NOT_SET: "Die mode not set.",
    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW: "AI Core trap: read out of bounds.",
    ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW: "AI Core trap: write out of bounds.",
    ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW: "Vector core trap: read out of bounds.",
    ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW: "Vector core trap: write out of bounds.",
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: "Stream synchronisation timed out.",
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: "Event synchronisation timed out.",
    ACL_ERROR_RT_FFTS_PLUS_TIMEOUT: "FFTS+ timeout.",
    ACL_ERROR_RT_FFTS_PLUS_EXCEPTION: "FFTS+ exception.",
    ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION: "FFTS+ trap exception.",
    ACL_ERROR_RT_SEND_MSG: "Sending an HDC (host-device) message failed.",
    ACL_ERROR_RT_COPY_DATA: "Data copy failed.",
    ACL_ERROR_RT_DEVICE_MEM_ERROR: "Device memory error.",
    ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR: "HBM multi-bit ECC error.",
    ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR: "Suspected device memory error.",
    ACL_ERROR_RT_LINK_ERROR: "Link error.",
    ACL_ERROR_RT_SUSPECT_REMOTE_ERROR: "Suspected error on a remote device.",
    ACL_ERROR_RT_DRV_INTERNAL_ERROR: "Driver internal error.",
    ACL_ERROR_RT_AICPU_INTERNAL_ERROR: "AI CPU internal error.",
    ACL_ERROR_RT_SOCKET_CLOSE: "HDC disconnected (socket closed).",
    ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR: "AI CPU info-load response error.",
    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: "The capture status is invalidated.",
    ACL_ERROR_RT_COMM_OP_RETRY_FAIL: "Retrying an HCCL communication operation failed.",
    ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT: "Snapshot lock timed out.",
    ACL_ERROR_SNAPSHOT_LOCK_FAILED: "Snapshot lock failed.",
    ACL_ERROR_SNAPSHOT_UNLOCK_FAILED: "Snapshot unlock failed.",
    ACL_ERROR_SNAPSHOT_BACKUP_FAILED: "Snapshot backup failed.",
    ACL_ERROR_SNAPSHOT_RESTORE_FAILED: "Snapshot restore failed.",
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: "The host memory range is already registered.",
    ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: "The host memory has not been registered.",
    ACL_ERROR_SNAPSHOT_CALLBACK_FAILED: "A snapshot callback function failed.",
    ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED: "Registering a snapshot callback function failed.",
    ACL_ERROR_RT_L3_PORT_ERROR: "L3 port (UB memory) error.",
    ACL_ERROR_RT_CCU_TIMEOUT: "CCU timeout.",
    ACL_ERROR_RT_CCU_EXCEPTION: "CCU exception.",
    ACL_ERROR_GE_PARAM_INVALID: "GE parameter check failed.",
    ACL_ERROR_GE_EXEC_NOT_INIT: "The GE executor is not initialised.",
    ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID: (
        "Invalid model path: the file is missing or cannot be opened."
    ),
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID: "Invalid model ID.",
    ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID: (
        "Invalid model data size: the data is too short or its header is wrong."
    ),
    ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID: "Invalid model memory address.",
    ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID: "Invalid model queue ID.",
    ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED: "The model was loaded repeatedly.",
    ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID: "Invalid address of the dynamic-shape input.",
    ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID: "Invalid length of the dynamic-shape input.",
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID: "Invalid dynamic batch size.",
    ACL_ERROR_GE_AIPP_BATCH_EMPTY: "AIPP batch parameters are empty.",
    ACL_ERROR_GE_AIPP_NOT_EXIST: "The AIPP configuration does not exist.",
    ACL_ERROR_GE_AIPP_MODE_INVALID: "Invalid AIPP mode.",
    ACL_ERROR_GE_OP_TASK_TYPE_INVALID: "Invalid operator task type.",
    ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID: "Invalid operator kernel type.",
    ACL_ERROR_GE_PLGMGR_PATH_INVALID: "Invalid plug-in manager path.",
    ACL_ERROR_GE_FORMAT_INVALID: "Invalid format.",
    ACL_ERROR_GE_SHAPE_INVALID: "Invalid shape.",
    ACL_ERROR_GE_DATATYPE_INVALID: "Invalid data type.",
    ACL_ERROR_GE_MEMORY_ALLOCATION: "GE memory allocation failed.",
    ACL_ERROR_GE_MEMORY_OPERATE_FAILED: "A GE memory operation failed.",
    ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED: "A GE device-memory operation failed.",
    ACL_ERROR_GE_SUBHEALTHY: "The device is sub-healthy.",
    ACL_ERROR_GE_USER_RAISE_EXCEPTION: "An exception raised by the user.",
    ACL_ERROR_GE_DATA_NOT_ALIGNED: "Data not aligned.",
    ACL_ERROR_GE_INTERNAL_ERROR: "GE internal error.",
    ACL_ERROR_GE_LOAD_MODEL: "GE failed to load the model.",
    ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED: "Loading the model partition failed.",
    ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED: "Loading the weight partition failed.",
    ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED: "Loading the task partition failed.",
    ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED: "Loading the kernel partition failed.",
    ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA: "Releasing the model data failed.",
    ACL_ERROR_GE_COMMAND_HANDLE: "GE command handling failed.",
    ACL_ERROR_GE_GET_TENSOR_INFO: "Getting tensor information failed.",
    ACL_ERROR_GE_UNLOAD_MODEL: "Unloading the model failed.",
    ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT: "Model execution timed out.",
    ACL_ERROR_GE_REDEPLOYING: "The model is being redeployed.",
    ACLNN_ERR_PARAM_NULLPTR: "An aclnn parameter is a null pointer.",
    ACLNN_ERR_PARAM_INVALID: "An aclnn parameter is invalid.",
    ACLNN_ERR_RUNTIME_ERROR: "A runtime call made by aclnn failed.",
    ACLNN_ERR_INNER: "aclnn internal error.",
    ACLNN_ERR_INNER_INFERSHAPE_ERROR: "Shape inference failed inside the operator.",
    ACLNN_ERR_INNER_TILING_ERROR: "Tiling failed inside the operator.",
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR: "No operator kernel was found.",
    ACLNN_ERR_INNER_CREATE_EXECUTOR: "Creating the aclOpExecutor failed.",
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR: "The executor was not handed over (internal).",
    ACLNN_ERR_INNER_NULLPTR: "A null pointer inside aclnn, e.g. a null aclOpExecutor.",
    ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE: "Wrong attribute-information size.",
    ACLNN_ERR_INNER_KEY_CONFLICT: "Key conflict in an internal table.",
    ACLNN_ERR_INNER_INVALID_IMPL_MODE: "Invalid implementation mode.",
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND: "The operator package (OPP) path was not found.",
    ACLNN_ERR_INNER_LOAD_JSON_FAILED: "Loading an operator JSON file failed.",
    ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND: "A value was not found in an operator JSON file.",
    ACLNN_ERR_INNER_JSON_FORMAT_INVALID: "Invalid format in an operator JSON file.",
    ACLNN_ERR_INNER_JSON_DTYPE_INVALID: "Invalid data type in an operator JSON file.",
    ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND: "The operator kernel package was not found.",
    ACLNN_ERR_INNER_OP_FILE_INVALID: "Invalid operator file.",
    ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND: "Attribute count out of bounds.",
    ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH: "Attribute length not enough.",
    ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE: "Too many inputs in the operator JSON.",
    ACLNN_ERR_INNER_INPUT_JSON_IS_NULL: "The input JSON is null.",
    ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID: "Invalid static workspace.",
    ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID: "Invalid static block dimension.",
}

# Usual causes in a learner's words, where the sources (docs/sources.md §3) give one.
_CAUSES: Final[dict[int, str]] = {
    ACL_SUCCESS: "Nothing went wrong: the call did what was asked.",
    ACL_ERROR_INVALID_PARAM: (
        "A null pointer or handle (0), a size of 0, or a value out of range, e.g. "
        "acl.rt.malloc(0, policy), acl.rt.free(0), memcpy with dst or src 0, "
        "process_report(0), a launch_callback block type other than 0/1, or a dataset "
        "holding a null data buffer passed to acl.mdl.execute."
    ),
    ACL_ERROR_UNINITIALIZE: (
        "acl.init() was not called first, or a feature-specific init (dump, profiling) was "
        "missing. Current CANN returns it only from the dump and profiling APIs."
    ),
    ACL_ERROR_REPEAT_INITIALIZE: (
        "acl.init() (or a one-time load such as acl.op.set_model_dir) was called again in the "
        "same process. Harmless: the init reference count goes up, and many programs simply "
        "ignore this code."
    ),
    ACL_ERROR_REPEAT_FINALIZE: (
        "acl.finalize() was called again after a successful finalize (or finalize_reference "
        "with the count already at 0). Finalize once, at the very end of the program."
    ),
    ACL_ERROR_INVALID_MODEL_ID: (
        "The model id was never returned by acl.mdl.load_from_file (or a sibling), or the "
        "model was already unloaded."
    ),
    ACL_ERROR_OP_NOT_FOUND: (
        "No compiled single operator matches the call: the op type is unknown, or it is known "
        "but the input/output count, dtype, format, shape or attrs differ from every model in "
        "the acl.op.set_model_dir directory. Compile a matching .om with atc --singleop."
    ),
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED: (
        "A resource was destroyed while one that depends on it still exists, e.g. "
        "dvpp_destroy_channel_desc before dvpp_destroy_channel. Destroy in the reverse order "
        "of creation."
    ),
    ACL_ERROR_UNSUPPORTED_JPEG: (
        "The image is not a Huffman baseline JPEG (arithmetic coding, progressive JPEG or "
        "JPEG2000). The JPEG decoder only accepts baseline JPEGs: re-encode the file."
    ),
    ACL_ERROR_GE_FAILURE: (
        "A graph-engine error that has no code of its own in ACL's ranges was folded into "
        "this generic code. Newer CANN returns it where older versions gave a specific GE "
        "code, e.g. for a model input buffer more than 64 bytes smaller than the model input "
        "(older CANN: 145000)."
    ),
    ACL_ERROR_RT_PARAM_INVALID: (
        "The runtime rejected an argument: count > dest_max in memcpy or memset_async (were "
        "the two size arguments swapped?), stream_wait_event before any record_event on a "
        "legacy event (create_event / create_event_with_flag), or freeing memory twice or "
        "freeing a pointer acl.rt.malloc did not return (dvpp_free of a host pointer too)."
    ),
    ACL_ERROR_RT_INVALID_DEVICEID: (
        "The device id is out of range: ids run from 0 to acl.rt.get_device_count() - 1."
    ),
    ACL_ERROR_RT_CONTEXT_NULL: (
        "This thread has no current context. A new thread (threading.Thread or "
        "acl.util.start_thread) starts with none: call acl.rt.set_context(ctx) (or "
        "acl.rt.set_device) in that thread first."
    ),
    ACL_ERROR_RT_STREAM_CONTEXT: (
        "The stream was created under another context than the one current in this thread "
        "(memcpy_async, record_event, stream_wait_event, launch_callback, destroy_stream and "
        "other stream calls check this). Call acl.rt.set_context(<the stream's context>) "
        "first. synchronize_stream is the exception: it accepts a stream from another context."
    ),
    ACL_ERROR_RT_MODEL_CONTEXT: (
        "The model was loaded under another context: load, execute and unload must happen in "
        "the same context."
    ),
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID: (
        "event_elapsed_time on an event that was recorded but whose record has not completed "
        "yet: synchronize the stream (or the end event) before asking for the elapsed time."
    ),
    ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: (
        "Rarely seen: current CANN does not return it for start and end recorded in the wrong "
        "order (event_elapsed_time then simply gives a negative number)."
    ),
    ACL_ERROR_RT_ADDR_UNALIGNED: (
        "An address is not aligned as the operation needs. Current CANN raises it only for "
        "reduce tasks; a misaligned memcpy_async is not checked when it is called."
    ),
    ACL_ERROR_RT_STREAM_SUBSCRIBE: (
        "acl.rt.subscribe_report was called twice for the same stream. Subscribe each stream "
        "once, and unsubscribe_report before subscribing it again."
    ),
    ACL_ERROR_RT_THREAD_SUBSCRIBE: (
        "acl.rt.process_report was called in a thread that no stream is subscribed to (call "
        "acl.rt.subscribe_report(tid, stream) with this thread's id first), or the thread "
        "mapping conflicts with an existing subscription."
    ),
    ACL_ERROR_RT_STREAM_NO_CB_REG: (
        "acl.rt.launch_callback on a stream with no subscribe_report: start a thread that "
        "loops on acl.rt.process_report, then call acl.rt.subscribe_report(tid, stream) "
        "before launching callbacks on that stream."
    ),
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT: (
        "The feature is not available in this mode or on this hardware, e.g. memcpy_async "
        "with ACL_MEMCPY_HOST_TO_HOST in EP mode (a host CPU plus an accelerator card), or "
        "event_elapsed_time on external or IPC events."
    ),
    ACL_ERROR_RT_MEMORY_ALLOCATION: (
        "Out of device memory. Check acl.rt.get_mem_info, free what you no longer need "
        "(buffers allocated in a loop and never freed are the usual culprit), and remember "
        "that huge-page allocations round up to 2 MiB (HUGE_FIRST above 1 MiB, HUGE_ONLY "
        "always)."
    ),
    ACL_ERROR_RT_NO_DEVICE: (
        "No NPU is visible to this process: the driver is not loaded, or the device is not "
        "exposed to the container."
    ),
    ACL_ERROR_RT_NO_EVENT_RESOURCE: (
        "Too many events alive at once (65536 per device on recent hardware, 1023 on Atlas "
        "inference cards): destroy events you no longer need, e.g. ones created in a loop."
    ),
    ACL_ERROR_RT_NO_STREAM_RESOURCE: (
        "Too many streams alive at once (1984 per device on recent hardware, 1024 on Atlas "
        "inference cards, counting default streams): destroy streams you no longer need."
    ),
    ACL_ERROR_RT_DEVICE_OOM: (
        "The device ran out of memory. Same remedies as 207001: check acl.rt.get_mem_info, "
        "free what you no longer need, and remember that huge-page allocations round up to "
        "2 MiB."
    ),
    ACL_ERROR_RT_INTERNAL_ERROR: (
        "Often a garbage or null stream or event handle (e.g. a destroyed stream, or 0 where "
        "a real event is needed), or event_elapsed_time on an event that was never recorded."
    ),
    ACL_ERROR_RT_MODEL_EXECUTE: (
        "A model task failed on the device. It is usually reported by the next synchronize "
        "call; the first error in the device log (plog) names the failing operator."
    ),
    ACL_ERROR_RT_REPORT_TIMEOUT: (
        "acl.rt.process_report(timeout) returned because no callback arrived in time. Normal "
        "in a polling loop: samples ignore it and call process_report again."
    ),
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: (
        "synchronize_stream_with_timeout gave up before the stream's tasks finished: they "
        "take longer than the timeout, or a task waits for an event that nobody records."
    ),
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: (
        "synchronize_event_with_timeout gave up before the tasks captured by the event's "
        "record finished: they take longer than the timeout, or they are stuck waiting."
    ),
    ACL_ERROR_GE_PARAM_INVALID: (
        "The graph engine rejected a parameter. Classic case in acl.mdl.execute: an input "
        "buffer more than 64 bytes smaller than get_input_size_by_index (newer CANN reports "
        "that case as 500002)."
    ),
    ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID: (
        "The path given to acl.mdl.load_from_file does not exist or cannot be opened: check "
        "it relative to the current working directory and the file permissions."
    ),
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID: (
        "execute or unload with a model id that was never loaded or was already unloaded."
    ),
    ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID: (
        "The file exists but is not an OM model (too short, or a wrong header or magic "
        "number): e.g. the .onnx passed instead of the .om atc produced, or an empty or "
        "truncated file."
    ),
    ACLNN_ERR_PARAM_NULLPTR: (
        "A required tensor, scalar or array argument of aclnnXxxGetWorkspaceSize (phase 1) "
        "is null, e.g. an aclCreateTensor that failed and returned null."
    ),
    ACLNN_ERR_PARAM_INVALID: (
        "Phase 1 (aclnnXxxGetWorkspaceSize) rejected an argument: a dtype, shape (not "
        "broadcastable), format or value the operator does not support."
    ),
    ACLNN_ERR_RUNTIME_ERROR: (
        "A runtime call made inside the aclnn operator failed (a copy or a launch on the "
        "stream); the runtime's own error is in the log."
    ),
    ACLNN_ERR_INNER_INFERSHAPE_ERROR: (
        "The inputs passed the phase-1 checks but the operator could not infer the output "
        "shape from them: check the input shapes and the output tensor's shape."
    ),
    ACLNN_ERR_INNER_TILING_ERROR: (
        "The operator could not split the work across cores for these shapes and dtypes: "
        "often an unusual or very large shape."
    ),
    ACLNN_ERR_INNER_NULLPTR: (
        "A null pointer inside aclnn, typically a null executor passed to phase 2 "
        "(aclnnXxx) or to aclSetAclOpExecutorRepeatable. acl_lab also returns it for a "
        "single-use executor that phase 2 already consumed: call "
        "aclSetAclOpExecutorRepeatable right after phase 1 to reuse one."
    ),
}

# Generic causes chosen from words in the canonical name, in order; first match wins.
_NAME_HINTS: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    (
        ("CAPTURE", "TASK_GROUP", "ACLGRAPH", "MODEL_RUNNING", "MODEL_UPDATE",
         "INSUFFICIENT_INPUT_ARRAY", "STREAM_UNJOINED"),
        "Graph capture (recording stream work into a model with aclmdlRI capture) was "
        "misused: a call that is not allowed while a stream is being captured, mismatched "
        "begin/end capture calls, or a dependency on a stream outside the capture. Teaching "
        "programs rarely capture.",
    ),
    (
        ("SNAPSHOT",),
        "The process snapshot (backup/restore) feature failed. Ordinary inference programs do "
        "not use it.",
    ),
    (
        ("HOST_MEMORY",),
        "Host memory registration was misused: a range registered twice, or unregistering "
        "(or using as registered) memory that was never registered.",
    ),
    (
        ("ACLNN_ERR_INNER",),
        "An internal failure of the operator library, usually because the installed operator "
        "package (OPP) is missing, damaged or from another CANN version: check the CANN "
        "installation and ASCEND_OPP_PATH. Rarely caused by the program's arguments.",
    ),
    (
        ("INVALID_HANDLE", "RESOURCE_HANDLE", "RESOURCE_NOT_MATCH"),
        "A handle is invalid or does not belong with the others in the call: already "
        "destroyed, never created, or created in another context or on another device.",
    ),
    (
        ("ABORT",),
        "The stream or device is being aborted (stream_abort, or a device task abort after "
        "a fatal error), so new work is rejected until that finishes.",
    ),
    (
        ("OVER_FLOW",),
        "A floating-point overflow was detected in a kernel (overflow detection is on): "
        "inputs or intermediate values exceeded the representable range, e.g. of float16.",
    ),
    (
        ("AICORE", "VECTOR_CORE", "AICPU", "FFTS", "CCU"),
        "An operator kernel failed or hung on the device: typically an out-of-bounds memory "
        "access, wrong tiling or bad input data. It is reported by the next synchronize call, "
        "not by the launch; the device log (plog) names the failing operator.",
    ),
    (
        ("TIMEOUT",),
        "The operation did not finish in its time limit: the device work takes too long, is "
        "stuck waiting for something that never happens (an event nobody records), or the "
        "device is unhealthy.",
    ),
    (
        ("NO_NOTIFY_RESOURCE", "NO_MODEL_RESOURCE", "NO_CDQ_RESOURCE", "RESOURCE_ALLOC_FAIL",
         "OVER_LIMIT", "PROGRAM_USE_OUT", "CDQ_BATCH", "BAD_ALLOC", "MEMORY_ALLOCATION"),
        "A per-device resource or memory limit was reached: release what you no longer need "
        "(streams, events, models and buffers created in a loop are the usual culprits).",
    ),
    (
        ("MEMORY_FREE",),
        "Freeing memory failed: a pointer freed twice, or freed with the wrong call (free for "
        "malloc, free_host for malloc_host, dvpp_free for dvpp_malloc).",
    ),
    (
        ("UNALIGNED", "NOT_ALIGNED"),
        "An address or size is not aligned as required. acl.rt.malloc returns 64-byte "
        "aligned memory; offsets into it, numpy arrays and bytes objects may not be.",
    ),
    (
        ("NO_PERMISSION",),
        "The process may not use the device or the operation: e.g. the user is not allowed "
        "to open the device, or a container does not expose it.",
    ),
    (
        ("SOC_VERSION",),
        "The model or operator was built for another SoC: rebuild it with atc --soc_version "
        "matching acl.get_soc_name().",
    ),
    (
        ("SUPPORT",),
        "The API or feature is not available on this device, SoC, run mode (host or device) "
        "or CANN version.",
    ),
    (
        ("REGISTERED", "UNREGISTERING", "KERNEL_DUPLICATE"),
        "An operator kernel or selector was registered twice, or used before it was "
        "registered or while it was being unregistered: register each once, before use.",
    ),
    (
        ("REPEAT",),
        "The same thing was done twice (init, load or subscribe): do it once, or undo it "
        "before doing it again.",
    ),
    (
        ("UNLOAD_MODEL", "RELEASE_MODEL_DATA"),
        "Unloading the model or releasing its memory failed: the model may still be "
        "executing, or it was already unloaded.",
    ),
    (
        ("MEM_ERROR", "ECC", "L3_PORT", "SYS_DMA", "SUBHEALTHY"),
        "A hardware fault on the device (memory ECC, DMA or similar), not a bug in the "
        "program. On real hardware the device may need a reset.",
    ),
    (
        ("LINK", "SOCKET", "SEND_MSG", "REMOTE", "COMM_OP", "HEARTBEAT", "IPC", "COPY_DATA"),
        "Communication between host and device, or between devices, failed at the driver, "
        "link or network level. Not caused by the program's arguments.",
    ),
    (
        ("PROF",),
        "Profiling was started, stopped or configured in the wrong order or with options this "
        "version does not support: check the acl.prof calls and the acl.init config.",
    ),
    (
        ("DUMP",),
        "Data dump was started, stopped or configured in the wrong order or with a bad "
        "config: check the dump section of the acl.init JSON config.",
    ),
    (
        ("AIPP",),
        "The call does not fit the model's AIPP (image pre-processing) configuration: the "
        "model was converted without AIPP, with static AIPP, or with other AIPP settings.",
    ),
    (
        ("DYNAMIC",),
        "The dynamic batch/shape settings do not fit the model: it was converted without "
        "dynamic gears, or the value is not one of the gears given to atc.",
    ),
    (
        ("GROUP",),
        "Device core groups were used without setting or creating the group first.",
    ),
    (
        ("_DIE",),
        "A die-mode setting was used on hardware or in a mode that does not allow it.",
    ),
    (
        ("FILE", "PARSE", "DESERIALIZE", "READ_MODEL", "MODEL_SIZE", "MISSING_ATTR",
         "PARTITION", "LOAD_MODEL", "OPP_PATH", "PLGMGR"),
        "A model, config or operator file could not be read, written or parsed, or is not "
        "what the call expects: check the path, the permissions, that the file is complete, "
        "and that it was built for this CANN version and SoC (atc --soc_version).",
    ),
    (
        ("OP_", "KERNEL", "BIN_SELECTOR", "FORMAT", "DATA_TYPE", "DATATYPE", "SHAPE",
         "MODEL_INPUT", "MODEL_OUTPUT"),
        "The call does not match what was compiled or loaded: operator type, input or output "
        "count, dtype, format, shape or attributes differ from the model or operator.",
    ),
    (
        ("CONFIG",),
        "A configuration value (in the acl.init JSON config or a set call) is invalid.",
    ),
    (
        ("QUEUE",),
        "A queue was used in the wrong state (full, empty, or a bad queue id).",
    ),
    (
        ("MODEL_ID", "MODEL_ADDR", "MODEL_CONTEXT", "STREAM_MODEL", "LABEL_CONTEXT"),
        "A model or stream handle does not belong where it is used: check the ids returned "
        "by the load call and the context that is current.",
    ),
)

# Fallback by the leading digit of the code (1: parameter/usage, 2: resource/support,
# 3: storage/health, 5: internal).
_FAMILY_CAUSES: Final[dict[int, str]] = {
    1: "The arguments or the call order are wrong: check the values passed and what must be "
    "called first.",
    2: "A resource limit was reached, or the feature is not available on this device, SoC or "
    "CANN version.",
    3: "A storage limit or a device-health problem, not a direct consequence of the "
    "arguments.",
    5: "An internal error in CANN or a failure on the device. On real hardware the device log "
    "(plog) has details; an earlier failed task often surfaces at the next synchronize call.",
}

# =============================================================================================
# Helpers
# =============================================================================================

_HEADER_PREFIXES: Final[dict[type[Enum], str]] = {
    RunMode: "ACL_",
    SysParamOpt: "ACL_OPT_",
    MemcpyKind: "ACL_MEMCPY_",
    MemMallocPolicy: "ACL_MEM_MALLOC_",
    MemAttr: "ACL_",
    EventStatus: "ACL_EVENT_STATUS_",
    EventRecordedStatus: "ACL_EVENT_RECORDED_STATUS_",
    EventWaitStatus: "ACL_EVENT_WAIT_STATUS_",
    StreamStatus: "ACL_STREAM_STATUS_",
    CallbackBlockType: "ACL_CALLBACK_",
    EventFlag: "ACL_EVENT_",
    StreamFlag: "ACL_STREAM_",
    StreamFailureMode: "ACL_",
    TsId: "ACL_TS_ID_",
    FloatOverflowMode: "ACL_RT_OVERFLOW_MODE_",
    StreamAttr: "ACL_STREAM_ATTR_",
    DeviceStatus: "ACL_RT_DEVICE_STATUS_",
    Format: "ACL_FORMAT_",
    DataType: "ACL_",
    LogLevel: "ACL_",
    MemType: "ACL_MEMTYPE_",
    PixelFormat: "PIXEL_FORMAT_",
    ErrorCode: "",
}

_HEADER_NAME_EXCEPTIONS: Final[dict[tuple[type[Enum], str], str]] = {
    (Format, "FRACTAL_Z_3D"): "ACL_FRACTAL_Z_3D",
    (DataType, "UNDEFINED"): "ACL_DT_UNDEFINED",
}


def header_name(member: Enum) -> str:
    """Return the full C header name of a member of one of this module's enums.

    >>> header_name(MemcpyKind.HOST_TO_DEVICE)
    'ACL_MEMCPY_HOST_TO_DEVICE'
    >>> header_name(Format.FRACTAL_Z_3D)
    'ACL_FRACTAL_Z_3D'

    Raises:
        TypeError: ``member`` is not a member of an enum defined in this module.
        ValueError: ``member`` is a combination of several flags (it has no single name).
    """
    cls = type(member)
    if cls not in _HEADER_PREFIXES:
        raise TypeError(f"header_name() needs a member of an acl_lab.constants enum, not {cls!r}")
    name = member.name
    if not name or "|" in name:
        raise ValueError(f"{member!r} combines several flags and has no single header name")
    return _HEADER_NAME_EXCEPTIONS.get((cls, name), _HEADER_PREFIXES[cls] + name)


def _as_int(value: object, func: str) -> int:
    """Return ``value`` as an int; raise TypeError for bools and non-integers."""
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        raise TypeError(f"{func}() needs an int, not {type(value).__name__}")
    return operator.index(value)


def data_type_size(dtype: int) -> int:
    """Bytes per element of ``aclDataType`` ``dtype``, as ``aclDataTypeSize`` reports them.

    Returns 0 for a value that is not an ``aclDataType`` (an acl_lab choice, so callers can
    tell "unknown" from a real size). Real ``aclDataTypeSize`` returns 8 for those instead: its
    C ``switch`` has ``default: return sizeof(int64_t)`` (see :data:`DATA_TYPE_SIZE_DEFAULT_CASE`).
    Defined types without a case of their own (FLOAT6_*, FLOAT4_*) are 8, as in real ACL.

    Raises:
        TypeError: ``dtype`` is not an int.
    """
    return DATA_TYPE_SIZE.get(_as_int(dtype, "data_type_size"), 0)


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """What an ACL return code means, as :func:`explain` returns it.

    Attributes:
        code: the integer code.
        name: the canonical header name, or ``"UNKNOWN"``.
        meaning: one line: what the code says happened.
        cause: the usual cause, in a learner's words, and what to do about it.
        deprecated_names: other header names with the same value (deprecated or misspelled
            names, and other headers' names for success), e.g. ``ACL_ERROR_RT_DEVIDE_OOM``.
    """

    code: int
    name: str
    meaning: str
    cause: str
    deprecated_names: tuple[str, ...] = ()

    def __str__(self) -> str:
        """One readable paragraph: ``"<code> <name>: <meaning> Usual cause: <cause>"``."""
        text = f"{self.code} {self.name}: {self.meaning} Usual cause: {self.cause}"
        if self.deprecated_names:
            text += f" Also named {', '.join(self.deprecated_names)}."
        return text


def _build_alias_names() -> dict[int, tuple[str, ...]]:
    """Group :data:`ERROR_CODE_ALIASES` by the value of their canonical name."""
    grouped: dict[int, tuple[str, ...]] = {}
    for alias, canonical in ERROR_CODE_ALIASES.items():
        value = ErrorCode[canonical].value
        grouped[value] = (*grouped.get(value, ()), alias)
    return grouped


_ALIAS_NAMES: Final[dict[int, tuple[str, ...]]] = _build_alias_names()


def _cause_for(member: ErrorCode) -> str:
    """The usual cause of ``member``: specific text, deprecation note, name hint or family."""
    specific = _CAUSES.get(member.value)
    if specific is not None:
        return specific
    replacement = DEPRECATED_CODE_REPLACEMENTS.get(member.value)
    if replacement is not None:
        new = ErrorCode(replacement)
        return (
            f"Only older CANN versions return this code; current ones return {new.value} "
            f"({new.name}) for the same situation. {_cause_for(new)}"
        )
    for words, text in _NAME_HINTS:
        if any(word in member.name for word in words):
            return text
    return _FAMILY_CAUSES[member.value // 100_000]


def explain(code: int) -> CodeInfo:
    """Explain an ACL return code: canonical name, meaning and usual cause.

    Never raises for an int: a code acl_lab does not know gives a :class:`CodeInfo` named
    ``"UNKNOWN"``. ``print(explain(ret))`` gives one readable paragraph.

    >>> explain(107002).name
    'ACL_ERROR_RT_CONTEXT_NULL'

    Raises:
        TypeError: ``code`` is not an int (a bool counts as not an int here).
    """
    value = _as_int(code, "explain")
    try:
        member = ErrorCode(value)
    except ValueError:
        return CodeInfo(
            code=value,
            name="UNKNOWN",
            meaning=(
                f"Code {value} is not in the ACL headers acl_lab knows (ACL common, runtime, "
                "GE and aclnn return codes)."
            ),
            cause=(
                "It may come from another CANN version or another library. If it looks like an "
                "address or a size, the program may be reading the wrong element of a "
                "(value, ret) tuple: pyACL always puts ret last."
            ),
        )
    return CodeInfo(
        code=value,
        name=member.name,
        meaning=_MEANINGS[value],
        cause=_cause_for(member),
        deprecated_names=_ALIAS_NAMES.get(value, ()),
    )


def code_name(code: int) -> str:
    """Canonical header name of return code ``code``, or ``"UNKNOWN(<code>)"``.

    >>> code_name(207018)
    'ACL_ERROR_RT_DEVICE_OOM'
    >>> code_name(12345)
    'UNKNOWN(12345)'

    Raises:
        TypeError: ``code`` is not an int.
    """
    value = _as_int(code, "code_name")
    try:
        return ErrorCode(value).name
    except ValueError:
        return f"UNKNOWN({value})"


__all__ = sorted(
    [_name for _name in globals() if _name.isupper() and not _name.startswith("_")]
    + [
        "CallbackBlockType",
        "CodeInfo",
        "DataType",
        "DeviceStatus",
        "ErrorCode",
        "EventFlag",
        "EventRecordedStatus",
        "EventStatus",
        "EventWaitStatus",
        "FloatOverflowMode",
        "Format",
        "LogLevel",
        "MemAttr",
        "MemMallocPolicy",
        "MemType",
        "MemcpyKind",
        "PixelFormat",
        "RunMode",
        "StreamAttr",
        "StreamFailureMode",
        "StreamFlag",
        "StreamStatus",
        "SysParamOpt",
        "TsId",
        "code_name",
        "data_type_size",
        "explain",
        "header_name",
    ]
)
