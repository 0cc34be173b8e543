// A leak on an error path: upload() returns early when its copy fails and forgets the
// device buffer it allocated.
#include "acl/acl.h"

#include <cstdio>

static int upload(const float *data, size_t count, void **out) {
    void *dev = nullptr;
    size_t size = count * sizeof(float);
    if (aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 1;  // LEAK-SITE
    size_t bytes = count > 4 ? size * 2 : size;  // the bug: a wrong byte count for big inputs
    if (aclrtMemcpy(dev, size, data, bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        return 1;  // dev is never freed
    }
    *out = dev;
    return 0;
}

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtContext context = nullptr;
    aclrtCreateContext(&context, 0);
    float small[4] = {1, 2, 3, 4};
    float big[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    void *dev = nullptr;
    if (upload(small, 4, &dev) == 0) aclrtFree(dev);
    dev = nullptr;
    if (upload(big, 8, &dev) != 0) std::printf("upload failed: %s\n", aclGetRecentErrMsg() ? "see trace" : "");
    aclrtDestroyContext(context);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
