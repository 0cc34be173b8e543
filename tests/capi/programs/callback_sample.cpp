// The public samples' callback pattern: pthread_create a report thread and subscribe it at
// once (before it has made any call); it loops on aclrtProcessReport until told to stop.
#include "acl/acl.h"

#include <atomic>
#include <cstdio>
#include <pthread.h>
#include <unistd.h>

static std::atomic<bool> g_exit{false};

static void *process_callback(void *) {
    usleep(200 * 1000);  // a thread slow to start: subscribed long before its first call
    while (!g_exit) aclrtProcessReport(20);
    return nullptr;
}

static void on_done(void *userData) { *static_cast<int *>(userData) += 1; }

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    pthread_t tid;
    pthread_create(&tid, nullptr, process_callback, nullptr);
    std::printf("subscribe %d\n", aclrtSubscribeReport(static_cast<uint64_t>(tid), stream));
    int count = 0;
    for (int i = 0; i < 3; ++i) aclrtLaunchCallback(on_done, &count, ACL_CALLBACK_BLOCK, stream);
    std::printf("sync %d\n", aclrtSynchronizeStream(stream));
    std::printf("count %d\n", count);
    aclrtUnSubscribeReport(static_cast<uint64_t>(tid), stream);
    g_exit = true;
    pthread_join(tid, nullptr);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
