// ops/acl_dvpp.h (libacl_dvpp): PNG decode (PNGD) into DVPP memory, as acllite's ReadPng and
// PngDHelper do it: the header from the host copy of the file, the predicted size, RGB888
// output with widthStride = align(width, 128) * 3 and heightStride = align(height, 16); then
// the same PNG decoded to RGBA8888. Usage: dvpp_png IN.png OUT_DIR
#include <string>
#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "common.h"

static uint32_t AlignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// Decode the PNG at pngDev into a new DVPP buffer in `format`; writes OUT_DIR/<name>.bin
static int Decode(acldvppChannelDesc *chan, aclrtStream stream, void *pngDev, uint32_t pngSize,
                  const std::vector<char> &png, acldvppPixelFormat format, uint32_t bytesPerPixel,
                  const std::string &path)
{
    uint32_t width = 0;
    uint32_t height = 0;
    CHECK(acldvppPngGetImageInfo(png.data(), png.size(), &width, &height, nullptr));
    uint32_t decSize = 0;
    CHECK(acldvppPngPredictDecSize(png.data(), png.size(), format, &decSize));
    uint32_t widthStride = AlignUp(width, 128) * bytesPerPixel;
    uint32_t heightStride = AlignUp(height, 16);
    void *decMem = nullptr;
    CHECK(acldvppMalloc(&decMem, decSize));
    acldvppPicDesc *decoded = acldvppCreatePicDesc();
    acldvppSetPicDescData(decoded, decMem);
    acldvppSetPicDescSize(decoded, decSize);
    acldvppSetPicDescFormat(decoded, format);
    acldvppSetPicDescWidth(decoded, width);
    acldvppSetPicDescHeight(decoded, height);
    acldvppSetPicDescWidthStride(decoded, widthStride);
    acldvppSetPicDescHeightStride(decoded, heightStride);
    CHECK(acldvppPngDecodeAsync(chan, pngDev, pngSize, decoded, stream));
    CHECK(aclrtSynchronizeStream(stream));
    printf("decoded%u %u %u %u %u %u ret %u\n", bytesPerPixel, decSize,
           acldvppGetPicDescWidth(decoded), acldvppGetPicDescHeight(decoded),
           acldvppGetPicDescWidthStride(decoded), acldvppGetPicDescHeightStride(decoded),
           acldvppGetPicDescRetCode(decoded));
    std::vector<char> out(decSize);
    CHECK(aclrtMemcpy(out.data(), decSize, decMem, decSize, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile(path, out.data(), out.size());
    CHECK(acldvppDestroyPicDesc(decoded));
    CHECK(acldvppFree(decMem));
    return 0;
}

int main(int argc, char *argv[])
{
    if (argc != 3) {
        ERROR_LOG("usage: dvpp_png IN.png OUT_DIR");
        return 1;
    }
    std::string outDir = argv[2];
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    acldvppChannelDesc *chan = acldvppCreateChannelDesc();
    CHECK(acldvppCreateChannel(chan));

    std::vector<char> png = ReadFile(argv[1]);
    uint32_t width = 0;
    uint32_t height = 0;
    int32_t components = 0;
    CHECK(acldvppPngGetImageInfo(png.data(), png.size(), &width, &height, &components));
    printf("image %u %u %d\n", width, height, components);
    void *pngDev = nullptr;
    CHECK(acldvppMalloc(&pngDev, png.size()));
    CHECK(aclrtMemcpy(pngDev, png.size(), png.data(), png.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    if (Decode(chan, stream, pngDev, png.size(), png, PIXEL_FORMAT_RGB_888, 3,
               outDir + "/rgb.bin") != 0 ||
        Decode(chan, stream, pngDev, png.size(), png, PIXEL_FORMAT_RGBA_8888, 4,
               outDir + "/rgba.bin") != 0) {
        return 1;
    }
    // the host copy is not device memory: the decoder refuses it
    acldvppPicDesc *unused = acldvppCreatePicDesc();
    printf("host_input %d\n",
           static_cast<int>(acldvppPngDecodeAsync(chan, png.data(), png.size(), unused, stream)));
    CHECK(acldvppDestroyPicDesc(unused));

    CHECK(acldvppFree(pngDev));
    CHECK(acldvppDestroyChannel(chan));
    CHECK(acldvppDestroyChannelDesc(chan));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
