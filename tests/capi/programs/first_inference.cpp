// The first inference demo: load an .om (from acl-lab atc), run it once, print the outputs.
// argv: MODEL.om X0 X1 X2 X3 (the four input floats)
#include "acl/acl.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                   \
    do {                                                              \
        aclError r_ = (call);                                         \
        if (r_ != ACL_SUCCESS) {                                      \
            std::printf("%s failed: %d\n", #call, r_);               \
            return 1;                                                 \
        }                                                             \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 6) return 2;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtContext context = nullptr;
    CHECK(aclrtCreateContext(&context, 0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));

    uint32_t modelId = 0;
    CHECK(aclmdlLoadFromFile(argv[1], &modelId));
    aclmdlDesc *desc = aclmdlCreateDesc();
    CHECK(aclmdlGetDesc(desc, modelId));
    size_t inSize = aclmdlGetInputSizeByIndex(desc, 0);
    size_t outSize = aclmdlGetOutputSizeByIndex(desc, 0);

    std::vector<float> x(inSize / sizeof(float));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::atof(argv[2 + i]));
    void *inDev = nullptr;
    void *outDev = nullptr;
    CHECK(aclrtMalloc(&inDev, inSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&outDev, outSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(inDev, inSize, x.data(), inSize, ACL_MEMCPY_HOST_TO_DEVICE));

    aclmdlDataset *input = aclmdlCreateDataset();
    aclDataBuffer *inBuf = aclCreateDataBuffer(inDev, inSize);
    CHECK(aclmdlAddDatasetBuffer(input, inBuf));
    aclmdlDataset *output = aclmdlCreateDataset();
    aclDataBuffer *outBuf = aclCreateDataBuffer(outDev, outSize);
    CHECK(aclmdlAddDatasetBuffer(output, outBuf));

    CHECK(aclmdlExecute(modelId, input, output));

    std::vector<float> y(outSize / sizeof(float));
    CHECK(aclrtMemcpy(y.data(), outSize, outDev, outSize, ACL_MEMCPY_DEVICE_TO_HOST));
    for (float v : y) std::printf("%.6f\n", v);

    CHECK(aclDestroyDataBuffer(inBuf));
    CHECK(aclDestroyDataBuffer(outBuf));
    CHECK(aclmdlDestroyDataset(input));
    CHECK(aclmdlDestroyDataset(output));
    CHECK(aclrtFree(inDev));
    CHECK(aclrtFree(outDev));
    CHECK(aclmdlDestroyDesc(desc));
    CHECK(aclmdlUnload(modelId));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtDestroyContext(context));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
