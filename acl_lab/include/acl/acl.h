/* acl_lab: the umbrella AscendCL header (runtime, operators, models), as in CANN. */
#ifndef ACL_LAB_ACL_H_
#define ACL_LAB_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"

#endif /* ACL_LAB_ACL_H_ */
