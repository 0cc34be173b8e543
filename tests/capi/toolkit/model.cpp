// acl_mdl.h: query a dynamic-batch model's memory, load it into memory the program owns,
// read its description (dims, names, formats, data types, batch gears), choose a gear through
// the dynamic tensor, execute, and print the outputs. Usage: model MODEL.om BATCH IN.bin
#include <cstdlib>
#include "acl/acl.h"
#include "common.h"

int main(int argc, char *argv[])
{
    if (argc != 4) {
        ERROR_LOG("usage: model MODEL.om BATCH IN.bin");
        return 1;
    }
    const char *path = argv[1];
    uint64_t batch = static_cast<uint64_t>(atoi(argv[2]));
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    size_t workSize = 0;
    size_t weightSize = 0;
    CHECK(aclmdlQuerySize(path, &workSize, &weightSize));
    void *work = nullptr;
    void *weight = nullptr;
    CHECK(aclrtMalloc(&work, workSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&weight, weightSize, ACL_MEM_MALLOC_HUGE_FIRST));
    uint32_t modelId = 0;
    CHECK(aclmdlLoadFromFileWithMem(path, &modelId, work, workSize, weight, weightSize));
    aclmdlDesc *desc = aclmdlCreateDesc();
    CHECK(aclmdlGetDesc(desc, modelId));

    aclmdlIODims dims;
    CHECK(aclmdlGetInputDims(desc, 0, &dims));
    printf("input0 %s", aclmdlGetInputNameByIndex(desc, 0));
    for (size_t i = 0; i < dims.dimCount; ++i) {
        printf(" %lld", static_cast<long long>(dims.dims[i]));
    }
    printf(" format %d type %d\n", static_cast<int>(aclmdlGetInputFormat(desc, 0)),
           static_cast<int>(aclmdlGetInputDataType(desc, 0)));
    aclmdlBatch gears;
    CHECK(aclmdlGetDynamicBatch(desc, &gears));
    printf("gears");
    for (size_t i = 0; i < gears.batchCount; ++i) {
        printf(" %llu", static_cast<unsigned long long>(gears.batch[i]));
    }
    printf("\n");
    size_t dynIndex = 0;
    CHECK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &dynIndex));
    printf("dynamic_index %zu of %zu\n", dynIndex, aclmdlGetNumInputs(desc));

    aclmdlDataset *input = aclmdlCreateDataset();
    aclmdlDataset *output = aclmdlCreateDataset();
    std::vector<void *> devs;
    for (size_t i = 0; i < aclmdlGetNumInputs(desc); ++i) {
        size_t size = aclmdlGetInputSizeByIndex(desc, i);
        void *dev = nullptr;
        CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
        devs.push_back(dev);
        if (i == 0) {
            std::vector<char> data = ReadFile(argv[3]);
            CHECK(aclrtMemcpy(dev, size, data.data(), data.size(), ACL_MEMCPY_HOST_TO_DEVICE));
        }
        CHECK(aclmdlAddDatasetBuffer(input, aclCreateDataBuffer(dev, size)));
    }
    size_t outSize = aclmdlGetOutputSizeByIndex(desc, 0);
    void *outDev = nullptr;
    CHECK(aclrtMalloc(&outDev, outSize, ACL_MEM_MALLOC_HUGE_FIRST));
    devs.push_back(outDev);
    CHECK(aclmdlAddDatasetBuffer(output, aclCreateDataBuffer(outDev, outSize)));
    CHECK(aclmdlSetDynamicBatchSize(modelId, input, dynIndex, batch));
    CHECK(aclmdlExecute(modelId, input, output));
    CHECK(aclmdlGetCurOutputDims(desc, 0, &dims));
    printf("output0");
    size_t count = 1;
    for (size_t i = 0; i < dims.dimCount; ++i) {
        printf(" %lld", static_cast<long long>(dims.dims[i]));
        count *= static_cast<size_t>(dims.dims[i]);
    }
    printf("\n");
    std::vector<float> result(count);
    CHECK(aclrtMemcpy(result.data(), count * sizeof(float), outDev, count * sizeof(float),
                      ACL_MEMCPY_DEVICE_TO_HOST));
    for (float v : result) {
        printf("%.6f\n", v);
    }

    for (aclmdlDataset *ds : {input, output}) {
        for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); ++i) {
            CHECK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i)));
        }
        CHECK(aclmdlDestroyDataset(ds));
    }
    for (void *dev : devs) {
        CHECK(aclrtFree(dev));
    }
    CHECK(aclmdlDestroyDesc(desc));
    CHECK(aclmdlUnload(modelId));
    CHECK(aclrtFree(work));
    CHECK(aclrtFree(weight));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
