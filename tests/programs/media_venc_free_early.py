"""The public VENC sample's order: the input picture is freed right after the last
venc_send_frame, before the callbacks came (the VENC docs say to free it only after its
callback). argv: none. The early free is the one mistake the findings must name."""

import threading

import acl

NV12, H264_BASELINE, W, H = 1, 1, 128, 128


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


check("init", acl.init())
check("set_device", acl.rt.set_device(0))
sizes = []
venc = acl.media.venc_create_channel_desc()
acl.media.venc_set_channel_desc_thread_id(venc, threading.get_ident())
acl.media.venc_set_channel_desc_callback(
    venc, lambda pic, out, ud: sizes.append(acl.media.dvpp_get_stream_desc_size(out)))
acl.media.venc_set_channel_desc_entype(venc, H264_BASELINE)
acl.media.venc_set_channel_desc_pic_format(venc, NV12)
acl.media.venc_set_channel_desc_pic_width(venc, W)
acl.media.venc_set_channel_desc_pic_height(venc, H)
check("venc_create_channel", acl.media.venc_create_channel(venc))
cfg = acl.media.venc_create_frame_config()
size = W * H * 3 // 2
mem, ret = acl.media.dvpp_malloc(size)
check("dvpp_malloc", ret)
check("memset", acl.rt.memset(mem, size, 16, size))
pic = acl.media.dvpp_create_pic_desc()
acl.media.dvpp_set_pic_desc_data(pic, mem)
acl.media.dvpp_set_pic_desc_size(pic, size)
for i in range(3):
    check("venc_send_frame", acl.media.venc_send_frame(venc, pic, 0, cfg, i))
check("dvpp_free", acl.media.dvpp_free(mem))  # EARLY-FREE: the callbacks have not come yet
acl.rt.process_report(1000)
check("venc_destroy_channel", acl.media.venc_destroy_channel(venc))
check("dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(pic))
check("venc_destroy_frame_config", acl.media.venc_destroy_frame_config(cfg))
check("venc_destroy_channel_desc", acl.media.venc_destroy_channel_desc(venc))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
print("sizes", sizes)
