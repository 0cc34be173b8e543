/* acl_lab: the AscendCL BLAS single operators (libacl_cblas in the toolkit), run by the
 * emulator's GEMM operator. Enum values follow CANN's ops/acl_cblas.h (facts; written for
 * acl_lab); the declarations are generated from acl_lab/capi/api.py. */
#ifndef ACL_LAB_ACL_CBLAS_H_
#define ACL_LAB_ACL_CBLAS_H_

#include "../acl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclTransType {
    ACL_TRANS_N,
    ACL_TRANS_T,
    ACL_TRANS_NZ,
    ACL_TRANS_NZ_T
} aclTransType;

typedef enum aclComputeType {
    ACL_COMPUTE_HIGH_PRECISION,
    ACL_COMPUTE_LOW_PRECISION
} aclComputeType;

/* acl_lab:generated begin (python -m acl_lab.capi.api; the table in capi/api.py) */
ACL_FUNC_VISIBILITY aclError aclblasGemmEx(aclTransType transA, aclTransType transB, aclTransType transC, int m, int n, int k, const void *alpha, const void *matrixA, int lda, aclDataType dataTypeA, const void *matrixB, int ldb, aclDataType dataTypeB, const void *beta, void *matrixC, int ldc, aclDataType dataTypeC, aclComputeType type, aclrtStream stream);
/* acl_lab:generated end */

#ifdef __cplusplus
}
#endif

#endif /* ACL_LAB_ACL_CBLAS_H_ */
