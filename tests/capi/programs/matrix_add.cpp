// Matrix add through an operator: aclopExecuteV2("Add") on two 2x3 float matrices.
// argv: OP_MODEL_DIR
#include "acl/acl.h"

#include <cstdio>

static const int64_t kDims[2] = {2, 3};

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    if (aclInit(nullptr) != ACL_SUCCESS) return 1;
    aclrtSetDevice(0);
    aclrtContext context = nullptr;
    aclrtCreateContext(&context, 0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclopAttr *attr = aclopCreateAttr();
    if (aclopSetModelDir(argv[1]) != ACL_SUCCESS) return 1;

    float a[6] = {1, 2, 3, 4, 5, 6};
    float b[6] = {10, 20, 30, 40, 50, 60};
    float *hostData[2] = {a, b};
    aclTensorDesc *inDesc[2];
    aclDataBuffer *inBuf[2];
    void *inDev[2];
    for (int i = 0; i < 2; ++i) {
        inDesc[i] = aclCreateTensorDesc(ACL_FLOAT, 2, kDims, ACL_FORMAT_ND);
        size_t size = aclGetTensorDescSize(inDesc[i]);
        aclrtMalloc(&inDev[i], size, ACL_MEM_MALLOC_NORMAL_ONLY);
        aclrtMemcpy(inDev[i], size, hostData[i], size, ACL_MEMCPY_HOST_TO_DEVICE);
        inBuf[i] = aclCreateDataBuffer(inDev[i], size);
    }
    aclTensorDesc *outDesc[1] = {aclCreateTensorDesc(ACL_FLOAT, 2, kDims, ACL_FORMAT_ND)};
    size_t outSize = aclGetTensorDescSize(outDesc[0]);
    void *outDev = nullptr;
    aclrtMalloc(&outDev, outSize, ACL_MEM_MALLOC_NORMAL_ONLY);
    aclDataBuffer *outBuf[1] = {aclCreateDataBuffer(outDev, outSize)};

    aclError ret = aclopExecuteV2("Add", 2, inDesc, inBuf, 1, outDesc, outBuf, attr, stream);
    if (ret != ACL_SUCCESS) {
        std::printf("aclopExecuteV2 failed: %d\n", ret);
        return 1;
    }
    aclrtSynchronizeStream(stream);
    float c[6] = {0};
    aclrtMemcpy(c, sizeof(c), outDev, outSize, ACL_MEMCPY_DEVICE_TO_HOST);
    for (float v : c) std::printf("%g\n", v);

    for (int i = 0; i < 2; ++i) {
        aclDestroyDataBuffer(inBuf[i]);
        aclrtFree(inDev[i]);
        aclDestroyTensorDesc(inDesc[i]);
    }
    aclDestroyDataBuffer(outBuf[0]);
    aclrtFree(outDev);
    aclDestroyTensorDesc(outDesc[0]);
    aclopDestroyAttr(attr);
    aclrtDestroyStream(stream);
    aclrtDestroyContext(context);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
