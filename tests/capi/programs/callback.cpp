// Host callbacks: a report thread subscribed to the stream runs aclrtProcessReport; the
// callback launched on the stream is called there with its user data.
#include "acl/acl.h"

#include <atomic>
#include <cstdio>
#include <pthread.h>
#include <thread>

static std::atomic<bool> g_stop{false};
static std::atomic<bool> g_ready{false};
static std::atomic<pthread_t> g_reporter{};

static void on_done(void *userData) {
    int *count = static_cast<int *>(userData);
    *count += 1;
    std::printf("callback in reporter %d\n", pthread_equal(pthread_self(), g_reporter.load()));
}

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtContext context = nullptr;
    aclrtCreateContext(&context, 0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);

    std::thread reporter([context] {
        aclrtSetCurrentContext(context);
        g_reporter = pthread_self();
        g_ready = true;
        while (!g_stop) aclrtProcessReport(10);
    });
    while (!g_ready) std::this_thread::yield();
    int count = 0;
    std::printf("subscribe %d\n", aclrtSubscribeReport(static_cast<uint64_t>(g_reporter.load()), stream));
    std::printf("launch %d\n", aclrtLaunchCallback(on_done, &count, ACL_CALLBACK_BLOCK, stream));
    std::printf("sync %d\n", aclrtSynchronizeStream(stream));
    std::printf("count %d\n", count);
    aclrtUnSubscribeReport(static_cast<uint64_t>(g_reporter.load()), stream);
    g_stop = true;
    reporter.join();
    aclrtDestroyStream(stream);
    aclrtDestroyContext(context);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
