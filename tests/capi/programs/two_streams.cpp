// Two streams and an event: stream 1 uploads, records an event; stream 2 waits for it and
// copies device to device; the host reads the copy back.
#include "acl/acl.h"

#include <cstdio>

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtContext context = nullptr;
    aclrtCreateContext(&context, 0);
    aclrtStream upload = nullptr;
    aclrtStream work = nullptr;
    aclrtCreateStream(&upload);
    aclrtCreateStream(&work);
    aclrtEvent ready = nullptr;
    aclrtCreateEvent(&ready);

    const size_t size = 16 * sizeof(int32_t);
    void *host = nullptr;
    aclrtMallocHost(&host, size);
    int32_t *h = static_cast<int32_t *>(host);
    for (int i = 0; i < 16; ++i) h[i] = i * i;
    void *a = nullptr;
    void *b = nullptr;
    aclrtMalloc(&a, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&b, size, ACL_MEM_MALLOC_HUGE_FIRST);

    aclrtMemcpyAsync(a, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE, upload);
    aclrtRecordEvent(ready, upload);
    aclrtStreamWaitEvent(work, ready);
    aclrtMemcpyAsync(b, size, a, size, ACL_MEMCPY_DEVICE_TO_DEVICE, work);
    aclrtSynchronizeStream(work);

    int32_t out[16] = {0};
    aclrtMemcpy(out, sizeof(out), b, size, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int v : out) std::printf("%d\n", v);

    aclrtFree(a);
    aclrtFree(b);
    aclrtFreeHost(host);
    aclrtDestroyEvent(ready);
    aclrtDestroyStream(upload);
    aclrtDestroyStream(work);
    aclrtDestroyContext(context);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
