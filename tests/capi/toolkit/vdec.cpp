// ops/acl_dvpp.h VDEC: a report thread loops on aclrtProcessReport, the channel's callback
// (aclvdecCallback) runs in it once per frame. The frames of an H.264 stream are read from
// FRAMES files DIR/frame<i>.h264. Usage: vdec DIR FRAMES WIDTH HEIGHT
#include <atomic>
#include <cstdlib>
#include <pthread.h>
#include <string>
#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "common.h"

static std::atomic<bool> g_exit(false);
static std::atomic<int> g_frames(0);
static std::atomic<int> g_inReportThread(0);
static pthread_t g_reportThread;
static aclrtContext g_context = nullptr;

static void *ReportThread(void *)
{
    aclrtSetCurrentContext(g_context);
    while (!g_exit) {
        aclrtProcessReport(100);
    }
    return nullptr;
}

static void Callback(acldvppStreamDesc *input, acldvppPicDesc *output, void *userData)
{
    if (pthread_equal(pthread_self(), g_reportThread)) {
        ++g_inReportThread;
    }
    if (output != nullptr && acldvppGetPicDescRetCode(output) == 0) {
        ++g_frames;
    }
    int *sent = static_cast<int *>(userData);
    (void)sent;
    void *in = acldvppGetStreamDescData(input);
    if (in != nullptr) {
        acldvppFree(in);
    }
    acldvppDestroyStreamDesc(input);
    if (output != nullptr) {
        acldvppFree(acldvppGetPicDescData(output));
        acldvppDestroyPicDesc(output);
    }
}

int main(int argc, char *argv[])
{
    if (argc != 5) {
        ERROR_LOG("usage: vdec DIR FRAMES WIDTH HEIGHT");
        return 1;
    }
    std::string dir = argv[1];
    int frames = atoi(argv[2]);
    uint32_t width = static_cast<uint32_t>(atoi(argv[3]));
    uint32_t height = static_cast<uint32_t>(atoi(argv[4]));
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateContext(&g_context, 0));
    pthread_create(&g_reportThread, nullptr, ReportThread, nullptr);

    aclvdecChannelDesc *desc = aclvdecCreateChannelDesc();
    CHECK(aclvdecSetChannelDescChannelId(desc, 0));
    CHECK(aclvdecSetChannelDescThreadId(desc, static_cast<uint64_t>(g_reportThread)));
    CHECK(aclvdecSetChannelDescCallback(desc, Callback));
    CHECK(aclvdecSetChannelDescEnType(desc, H264_MAIN_LEVEL));
    CHECK(aclvdecSetChannelDescOutPicFormat(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420));
    CHECK(aclvdecCreateChannel(desc));
    aclvdecFrameConfig *config = aclvdecCreateFrameConfig();
    uint32_t ws = (width + 15) / 16 * 16;
    uint32_t hs = (height + 1) / 2 * 2;
    uint32_t outSize = ws * hs * 3 / 2;
    int sent = 0;
    for (int i = 0; i < frames; ++i) {
        std::vector<char> data = ReadFile(dir + "/frame" + std::to_string(i) + ".h264");
        void *in = nullptr;
        CHECK(acldvppMalloc(&in, data.size()));
        CHECK(aclrtMemcpy(in, data.size(), data.data(), data.size(), ACL_MEMCPY_HOST_TO_DEVICE));
        acldvppStreamDesc *stream = acldvppCreateStreamDesc();
        acldvppSetStreamDescData(stream, in);
        acldvppSetStreamDescSize(stream, data.size());
        void *out = nullptr;
        CHECK(acldvppMalloc(&out, outSize));
        acldvppPicDesc *pic = acldvppCreatePicDesc();
        acldvppSetPicDescData(pic, out);
        acldvppSetPicDescSize(pic, outSize);
        acldvppSetPicDescFormat(pic, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
        CHECK(aclvdecSendFrame(desc, stream, pic, config, &sent));
        ++sent;
    }
    acldvppStreamDesc *eos = acldvppCreateStreamDesc();
    acldvppSetStreamDescEos(eos, 1);
    CHECK(aclvdecSendFrame(desc, eos, nullptr, config, &sent));
    CHECK(aclvdecDestroyChannel(desc));
    printf("frames %d of %d\n", g_frames.load(), sent);
    printf("callbacks_in_report_thread %d\n", g_inReportThread.load());
    CHECK(aclvdecDestroyFrameConfig(config));
    CHECK(aclvdecDestroyChannelDesc(desc));
    g_exit = true;
    pthread_join(g_reportThread, nullptr);
    CHECK(aclrtDestroyContext(g_context));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
