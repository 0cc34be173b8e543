/* acl_lab: the DVPP memory functions of acl/ops/acl_dvpp.h that acl_lab implements for C. */
#ifndef ACL_LAB_ACL_DVPP_H_
#define ACL_LAB_ACL_DVPP_H_

#include "../acl.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclError acldvppMalloc(void **devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError acldvppFree(void *devPtr);

#ifdef __cplusplus
}
#endif

#endif /* ACL_LAB_ACL_DVPP_H_ */
