/* acl_lab: the AscendCL single-operator subset acl_lab implements (attributes, aclopExecuteV2).
 * Signatures follow CANN's acl_op.h (facts; written for acl_lab). */
#ifndef ACL_LAB_ACL_OP_H_
#define ACL_LAB_ACL_OP_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclopAttr aclopAttr;

ACL_FUNC_VISIBILITY aclError aclopSetModelDir(const char *modelDir);
ACL_FUNC_VISIBILITY aclopAttr *aclopCreateAttr();
ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr *attr);
ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
ACL_FUNC_VISIBILITY aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                            aclDataBuffer *inputs[], int numOutputs,
                                            aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
                                            aclopAttr *attr, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACL_LAB_ACL_OP_H_ */
