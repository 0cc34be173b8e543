// acl_base.h and acl_rt.h: device, run mode, SoC name, memory info, an async memset on a
// stream, data buffers, tensor descriptions and the application log. Prints "key value" lines.
#include <cstdint>
#include <cstring>
#include "acl/acl.h"
#include "common.h"

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtRunMode mode;
    CHECK(aclrtGetRunMode(&mode));
    printf("run_mode %d\n", static_cast<int>(mode));
    const char *soc = aclrtGetSocName();
    printf("soc %s\n", soc == nullptr ? "null" : soc);
    size_t freeMem = 0;
    size_t totalMem = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &freeMem, &totalMem));
    printf("mem_le %d\n", freeMem <= totalMem && totalMem > 0 ? 1 : 0);

    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    const size_t size = 256;
    void *dev = nullptr;
    CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemsetAsync(dev, size, 0x5a, size, stream));
    CHECK(aclrtSynchronizeStream(stream));
    unsigned char host[256];
    CHECK(aclrtMemcpy(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST));
    printf("memset_byte %d\n", host[size - 1]);

    aclDataBuffer *buf = aclCreateDataBuffer(dev, size);
    printf("buffer_size %u\n", aclGetDataBufferSize(buf));
    CHECK(aclDestroyDataBuffer(buf));

    int64_t dims[3] = {2, 3, 4};
    aclTensorDesc *desc = aclCreateTensorDesc(ACL_FLOAT16, 3, dims, ACL_FORMAT_ND);
    int64_t dim = 0;
    CHECK(aclGetTensorDescDimV2(desc, 2, &dim));
    printf("desc %zu %lld %d %zu\n", aclGetTensorDescNumDims(desc), static_cast<long long>(dim),
           static_cast<int>(aclGetTensorDescType(desc)), aclGetTensorDescSize(desc));
    int64_t value = 7;
    aclError ret = aclSetTensorConst(desc, &value, sizeof(value));
    printf("set_const %d\n", ret);
    aclDestroyTensorDesc(desc);
    ACL_APP_LOG(ACL_INFO, "freed %d bytes of %s", static_cast<int>(size), "device memory");

    CHECK(aclrtFree(dev));
    CHECK(aclrtDestroyStream(stream));
    ret = aclrtResetDevice(0);
    if (ret != ACL_ERROR_NONE) {
        ERROR_LOG("reset device failed, errorCode = %d", static_cast<int32_t>(ret));
    }
    CHECK(aclFinalize());
    return 0;
}
