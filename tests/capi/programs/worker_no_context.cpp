// Contexts are per thread: a worker std::thread that never sets one gets 107002
// (ACL_ERROR_RT_CONTEXT_NULL); one that sets the main thread's context works. Also the
// articles' aclrtSetDevice(-1) misuse.
#include "acl/acl.h"

#include <cstdio>
#include <thread>

int main() {
    aclInit(nullptr);
    std::printf("set_device(-1) %d\n", aclrtSetDevice(-1));  // MISUSE
    aclrtSetDevice(0);
    aclrtContext context = nullptr;
    aclrtCreateContext(&context, 0);

    std::thread lost([] {
        void *p = nullptr;
        aclError ret = aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST);  // NO-CONTEXT
        std::printf("worker without context %d\n", ret);
    });
    lost.join();

    std::thread good([context] {
        aclrtSetCurrentContext(context);
        void *p = nullptr;
        aclError ret = aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST);
        std::printf("worker with context %d\n", ret);
        aclrtFree(p);
    });
    good.join();

    aclrtDestroyContext(context);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
