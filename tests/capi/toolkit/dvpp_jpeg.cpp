// ops/acl_dvpp.h (libacl_dvpp): JPEG decode into DVPP memory, VPC resize, a batch crop of two
// areas, JPEG encode of the resized picture. Usage: dvpp_jpeg IN.jpg OUT_DIR
#include <string>
#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "common.h"

static uint32_t AlignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

static acldvppPicDesc *OutPic(uint32_t w, uint32_t h, void **mem)
{
    uint32_t ws = AlignUp(w, 16);
    uint32_t hs = AlignUp(h, 2);
    uint32_t size = ws * hs * 3 / 2;
    if (acldvppMalloc(mem, size) != ACL_SUCCESS) {
        return nullptr;
    }
    acldvppPicDesc *desc = acldvppCreatePicDesc();
    acldvppSetPicDescData(desc, *mem);
    acldvppSetPicDescSize(desc, size);
    acldvppSetPicDescFormat(desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescWidth(desc, w);
    acldvppSetPicDescHeight(desc, h);
    acldvppSetPicDescWidthStride(desc, ws);
    acldvppSetPicDescHeightStride(desc, hs);
    return desc;
}

int main(int argc, char *argv[])
{
    if (argc != 3) {
        ERROR_LOG("usage: dvpp_jpeg IN.jpg OUT_DIR");
        return 1;
    }
    std::string outDir = argv[2];
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    acldvppChannelDesc *chan = acldvppCreateChannelDesc();
    CHECK(acldvppCreateChannel(chan));

    std::vector<char> jpeg = ReadFile(argv[1]);
    uint32_t width = 0;
    uint32_t height = 0;
    int32_t components = 0;
    CHECK(acldvppJpegGetImageInfo(jpeg.data(), jpeg.size(), &width, &height, &components));
    printf("image %u %u %d\n", width, height, components);
    uint32_t decSize = 0;
    CHECK(acldvppJpegPredictDecSize(jpeg.data(), jpeg.size(), PIXEL_FORMAT_YUV_SEMIPLANAR_420,
                                    &decSize));
    void *jpegDev = nullptr;
    CHECK(acldvppMalloc(&jpegDev, jpeg.size()));
    CHECK(aclrtMemcpy(jpegDev, jpeg.size(), jpeg.data(), jpeg.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    void *decMem = nullptr;
    CHECK(acldvppMalloc(&decMem, decSize));
    acldvppPicDesc *decoded = acldvppCreatePicDesc();
    acldvppSetPicDescData(decoded, decMem);
    acldvppSetPicDescSize(decoded, decSize);
    acldvppSetPicDescFormat(decoded, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    CHECK(acldvppJpegDecodeAsync(chan, jpegDev, jpeg.size(), decoded, stream));
    CHECK(aclrtSynchronizeStream(stream));
    printf("decoded %u %u %u %u ret %u\n", acldvppGetPicDescWidth(decoded),
           acldvppGetPicDescHeight(decoded), acldvppGetPicDescWidthStride(decoded),
           acldvppGetPicDescHeightStride(decoded), acldvppGetPicDescRetCode(decoded));

    void *resizedMem = nullptr;
    acldvppPicDesc *resized = OutPic(64, 48, &resizedMem);
    acldvppResizeConfig *resizeConfig = acldvppCreateResizeConfig();
    CHECK(acldvppVpcResizeAsync(chan, decoded, resized, resizeConfig, stream));

    acldvppBatchPicDesc *src = acldvppCreateBatchPicDesc(1);
    acldvppPicDesc *src0 = acldvppGetPicDesc(src, 0);
    acldvppSetPicDescData(src0, resizedMem);
    acldvppSetPicDescSize(src0, acldvppGetPicDescSize(resized));
    acldvppSetPicDescFormat(src0, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescWidth(src0, 64);
    acldvppSetPicDescHeight(src0, 48);
    acldvppSetPicDescWidthStride(src0, 64);
    acldvppSetPicDescHeightStride(src0, 48);
    acldvppBatchPicDesc *dst = acldvppCreateBatchPicDesc(2);
    void *cropMem[2];
    for (uint32_t i = 0; i < 2; ++i) {
        CHECK(acldvppMalloc(&cropMem[i], 32 * 32 * 3 / 2));
        acldvppPicDesc *d = acldvppGetPicDesc(dst, i);
        acldvppSetPicDescData(d, cropMem[i]);
        acldvppSetPicDescSize(d, 32 * 32 * 3 / 2);
        acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
        acldvppSetPicDescWidth(d, 32);
        acldvppSetPicDescHeight(d, 32);
        acldvppSetPicDescWidthStride(d, 32);
        acldvppSetPicDescHeightStride(d, 32);
    }
    uint32_t roiNums[1] = {2};
    acldvppRoiConfig *crops[2] = {acldvppCreateRoiConfig(0, 31, 0, 31),
                                  acldvppCreateRoiConfig(32, 63, 16, 47)};
    CHECK(acldvppVpcBatchCropAsync(chan, src, roiNums, 1, dst, crops, stream));

    acldvppJpegeConfig *jpegeConfig = acldvppCreateJpegeConfig();
    CHECK(acldvppSetJpegeConfigLevel(jpegeConfig, 90));
    uint32_t encSize = 0;
    CHECK(acldvppJpegPredictEncSize(resized, jpegeConfig, &encSize));
    void *encMem = nullptr;
    CHECK(acldvppMalloc(&encMem, encSize));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(acldvppJpegEncodeAsync(chan, resized, encMem, &encSize, jpegeConfig, stream));
    CHECK(aclrtSynchronizeStream(stream));
    std::vector<char> out(encSize);
    CHECK(aclrtMemcpy(out.data(), encSize, encMem, encSize, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile(outDir + "/resized.jpg", out.data(), out.size());
    std::vector<char> crop1(32 * 32 * 3 / 2);
    CHECK(aclrtMemcpy(crop1.data(), crop1.size(), cropMem[1], crop1.size(),
                      ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile(outDir + "/crop1.yuv", crop1.data(), crop1.size());
    printf("jpeg_size %u\n", encSize);

    for (acldvppRoiConfig *c : crops) {
        CHECK(acldvppDestroyRoiConfig(c));
    }
    CHECK(acldvppDestroyBatchPicDesc(src));
    CHECK(acldvppDestroyBatchPicDesc(dst));
    for (void *mem : {jpegDev, decMem, resizedMem, encMem, cropMem[0], cropMem[1]}) {
        CHECK(acldvppFree(mem));
    }
    CHECK(acldvppDestroyPicDesc(decoded));
    CHECK(acldvppDestroyPicDesc(resized));
    CHECK(acldvppDestroyResizeConfig(resizeConfig));
    CHECK(acldvppDestroyJpegeConfig(jpegeConfig));
    CHECK(acldvppDestroyChannel(chan));
    CHECK(acldvppDestroyChannelDesc(chan));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
