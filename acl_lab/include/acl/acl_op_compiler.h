/* acl_lab: online compilation of single operators (libacl_op_compiler in the toolkit). The
 * emulator's operators need no compilation: aclopCompile checks that acl_lab computes the op
 * and aclopCompileAndExecute runs it. Types follow CANN's acl_op_compiler.h (facts; written
 * for acl_lab); the declarations are generated from acl_lab/capi/api.py. */
#ifndef ACL_LAB_ACL_OP_COMPILER_H_
#define ACL_LAB_ACL_OP_COMPILER_H_

#include "acl_base.h"
#include "acl_op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclCompileType {
    ACL_COMPILE_SYS,
    ACL_COMPILE_UNREGISTERED
} aclopCompileType;

/* acl_lab:generated begin (python -m acl_lab.capi.api; the table in capi/api.py) */
ACL_FUNC_VISIBILITY aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const *inputDesc, int numOutputs, const aclTensorDesc *const *outputDesc, const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const *inputDesc, const aclDataBuffer *const *inputs, int numOutputs, const aclTensorDesc *const *outputDesc, aclDataBuffer *const *outputs, const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath, aclrtStream stream);
/* acl_lab:generated end */

#ifdef __cplusplus
}
#endif

#endif /* ACL_LAB_ACL_OP_COMPILER_H_ */
