// A host dereference of a device pointer: the classic first mistake of the articles.
#include "acl/acl.h"

#include <cstdio>

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtContext context = nullptr;
    aclrtCreateContext(&context, 0);
    void *dev = nullptr;
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    float *values = static_cast<float *>(dev);
    values[3] = 1.5f;  // DEVICE-WRITE
    std::printf("not reached\n");
    return 0;
}
