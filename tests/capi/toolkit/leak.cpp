// A device buffer allocated in a helper and never freed, built without -g.
#include "acl/acl.h"
#include "common.h"

static void *AllocateScratch(size_t size)
{
    void *dev = nullptr;
    if (aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        return nullptr;
    }
    return dev;
}

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    void *scratch = AllocateScratch(1024);
    printf("scratch %d\n", scratch != nullptr ? 1 : 0);
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
