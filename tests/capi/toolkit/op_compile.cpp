// acl_op_compiler.h: compile and run an Add single op online (no atc), then create a handle
// for the op just compiled (found) and for a shape never compiled (100024).
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    const int n = 8;
    int64_t shape[1] = {n};
    aclTensorDesc *descs[3];
    for (int i = 0; i < 3; ++i) {
        descs[i] = aclCreateTensorDesc(ACL_FLOAT, 1, shape, ACL_FORMAT_ND);
    }
    float x[n];
    float y[n];
    for (int i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i);
        y[i] = 0.5f * static_cast<float>(i);
    }
    void *devs[3];
    aclDataBuffer *bufs[3];
    for (int i = 0; i < 3; ++i) {
        CHECK(aclrtMalloc(&devs[i], sizeof(x), ACL_MEM_MALLOC_HUGE_FIRST));
        bufs[i] = aclCreateDataBuffer(devs[i], sizeof(x));
    }
    CHECK(aclrtMemcpy(devs[0], sizeof(x), x, sizeof(x), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(devs[1], sizeof(y), y, sizeof(y), ACL_MEMCPY_HOST_TO_DEVICE));
    aclopAttr *attr = aclopCreateAttr();
    CHECK(aclopCompileAndExecute("Add", 2, descs, bufs, 1, descs + 2, bufs + 2, attr,
                                 ACL_ENGINE_SYS, ACL_COMPILE_SYS, nullptr, stream));
    CHECK(aclrtSynchronizeStream(stream));
    float z[n];
    CHECK(aclrtMemcpy(z, sizeof(z), devs[2], sizeof(z), ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < n; ++i) {
        printf("%.2f\n", z[i]);
    }
    aclopHandle *handle = nullptr;
    printf("handle_compiled %d\n", aclopCreateHandle("Add", 2, descs, 1, descs + 2, attr, &handle));
    if (handle != nullptr) {
        aclopDestroyHandle(handle);
    }
    int64_t other[1] = {n * 2};
    aclTensorDesc *big[3];
    for (int i = 0; i < 3; ++i) {
        big[i] = aclCreateTensorDesc(ACL_FLOAT, 1, other, ACL_FORMAT_ND);
    }
    aclopHandle *none = nullptr;
    printf("handle_not_compiled %d\n", aclopCreateHandle("Add", 2, big, 1, big + 2, attr, &none));
    for (int i = 0; i < 3; ++i) {
        aclDestroyTensorDesc(big[i]);
        aclDestroyTensorDesc(descs[i]);
        CHECK(aclDestroyDataBuffer(bufs[i]));
        CHECK(aclrtFree(devs[i]));
    }
    aclopDestroyAttr(attr);
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
