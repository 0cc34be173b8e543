// ops/acl_cblas.h: C = alpha * A @ B + beta * C in float16 (the GEMM sample's call), the
// matrices read from a.bin, b.bin, c.bin (m x k, k x n, m x n) and the result written to
// out.bin. Usage: gemm M N K ALPHA BETA DIR
#include <cstdlib>
#include <string>
#include "acl/acl.h"
#include "acl/ops/acl_cblas.h"
#include "common.h"

static int CopyIn(const std::string &path, void **dev, size_t size)
{
    std::vector<char> data = ReadFile(path);
    if (data.size() != size) {
        ERROR_LOG("%s holds %zu bytes, not %zu", path.c_str(), data.size(), size);
        return 1;
    }
    CHECK(aclrtMalloc(dev, size, ACL_MEM_MALLOC_NORMAL_ONLY));
    CHECK(aclrtMemcpy(*dev, size, data.data(), size, ACL_MEMCPY_HOST_TO_DEVICE));
    return 0;
}

int main(int argc, char *argv[])
{
    if (argc != 7) {
        ERROR_LOG("usage: gemm M N K ALPHA BETA DIR");
        return 1;
    }
    int m = atoi(argv[1]);
    int n = atoi(argv[2]);
    int k = atoi(argv[3]);
    aclFloat16 alpha = aclFloatToFloat16(static_cast<float>(atof(argv[4])));
    aclFloat16 beta = aclFloatToFloat16(static_cast<float>(atof(argv[5])));
    std::string dir = argv[6];
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    void *a = nullptr;
    void *b = nullptr;
    void *c = nullptr;
    void *devAlpha = nullptr;
    void *devBeta = nullptr;
    size_t sizeC = static_cast<size_t>(m) * n * sizeof(aclFloat16);
    if (CopyIn(dir + "/a.bin", &a, static_cast<size_t>(m) * k * sizeof(aclFloat16)) != 0 ||
        CopyIn(dir + "/b.bin", &b, static_cast<size_t>(k) * n * sizeof(aclFloat16)) != 0 ||
        CopyIn(dir + "/c.bin", &c, sizeC) != 0) {
        return 1;
    }
    CHECK(aclrtMalloc(&devAlpha, sizeof(alpha), ACL_MEM_MALLOC_NORMAL_ONLY));
    CHECK(aclrtMalloc(&devBeta, sizeof(beta), ACL_MEM_MALLOC_NORMAL_ONLY));
    CHECK(aclrtMemcpy(devAlpha, sizeof(alpha), &alpha, sizeof(alpha), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(devBeta, sizeof(beta), &beta, sizeof(beta), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclblasGemmEx(ACL_TRANS_N, ACL_TRANS_N, ACL_TRANS_N, m, n, k, devAlpha, a, -1,
                        ACL_FLOAT16, b, -1, ACL_FLOAT16, devBeta, c, -1, ACL_FLOAT16,
                        ACL_COMPUTE_HIGH_PRECISION, stream));
    aclError bad = aclblasGemmEx(ACL_TRANS_N, ACL_TRANS_N, ACL_TRANS_N, m, n, k, devAlpha, a, m,
                                 ACL_FLOAT16, b, -1, ACL_FLOAT16, devBeta, c, -1, ACL_FLOAT16,
                                 ACL_COMPUTE_HIGH_PRECISION, stream);
    printf("lda_not_minus_one %d\n", bad);
    CHECK(aclrtSynchronizeStream(stream));
    std::vector<char> out(sizeC);
    CHECK(aclrtMemcpy(out.data(), sizeC, c, sizeC, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile(dir + "/out.bin", out.data(), sizeC);
    void *ptrs[] = {a, b, c, devAlpha, devBeta};
    for (void *p : ptrs) {
        CHECK(aclrtFree(p));
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
