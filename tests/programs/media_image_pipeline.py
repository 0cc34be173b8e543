"""An image pipeline in the style of the DVPP samples and acllite's image processing.

argv: OUT_DIR. JPEG decode (JPEGD) -> crop-and-paste onto a canvas -> batch crop of two
areas -> VPC resize -> JPEG encode (JPEGE) of the resized picture. Every picture is copied
back and written to OUT_DIR (raw YUV420SP plus a JSON index of sizes and strides) for the
test to compare against Pillow. Everything created is released.
"""

import io
import json
import os
import sys

import acl
import numpy as np
from PIL import Image

H2D, D2H = 1, 2
NV12 = 1
W, H = 160, 120


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


def align(v, a):
    return (v + a - 1) // a * a


def make_jpeg():
    x = np.linspace(0, 255, W)[None, :].repeat(H, 0)
    y = np.linspace(0, 255, H)[:, None].repeat(W, 1)
    rgb = np.stack([x, y, (x + y) / 2], -1).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "JPEG", quality=95)
    return buf.getvalue()


def out_pic(w, h):
    ws, hs = align(w, 16), align(h, 2)
    size = ws * hs * 3 // 2
    mem, ret = acl.media.dvpp_malloc(size)
    check("dvpp_malloc", ret)
    check("memset", acl.rt.memset(mem, size, 0, size))
    desc = acl.media.dvpp_create_pic_desc()
    set_pic(desc, mem, size, w, h, ws, hs)
    return desc, mem, size


def set_pic(desc, mem, size, w, h, ws, hs):
    acl.media.dvpp_set_pic_desc_data(desc, mem)
    acl.media.dvpp_set_pic_desc_size(desc, size)
    acl.media.dvpp_set_pic_desc_format(desc, NV12)
    acl.media.dvpp_set_pic_desc_width(desc, w)
    acl.media.dvpp_set_pic_desc_height(desc, h)
    acl.media.dvpp_set_pic_desc_width_stride(desc, ws)
    acl.media.dvpp_set_pic_desc_height_stride(desc, hs)


def save(out_dir, name, desc, index):
    size = acl.media.dvpp_get_pic_desc_size(desc)
    host = bytes(size)
    check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(host), size,
                                      acl.media.dvpp_get_pic_desc_data(desc), size, D2H))
    with open(os.path.join(out_dir, name + ".yuv"), "wb") as f:
        f.write(host)
    index[name] = {k: getattr(acl.media, "dvpp_get_pic_desc_" + k)(desc)
                   for k in ("width", "height", "width_stride", "height_stride", "size")}


out_dir = sys.argv[1]
index = {}
check("init", acl.init())
check("set_device", acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check("create_context", ret)
stream, ret = acl.rt.create_stream()
check("create_stream", ret)
chan = acl.media.dvpp_create_channel_desc()
check("dvpp_create_channel", acl.media.dvpp_create_channel(chan))
resize_cfg = acl.media.dvpp_create_resize_config()
jpege_cfg = acl.media.dvpp_create_jpege_config()
check("dvpp_set_jpege_config_level", acl.media.dvpp_set_jpege_config_level(jpege_cfg, 90))

# 1. JPEG decode (strides left 0: JPEGD fills them in)
jpeg = make_jpeg()
with open(os.path.join(out_dir, "source.jpg"), "wb") as f:
    f.write(jpeg)
jpeg_host = np.frombuffer(jpeg, dtype=np.uint8).copy()
jpeg_ptr = acl.util.bytes_to_ptr(jpeg_host.tobytes())
w, h, _, ret = acl.media.dvpp_jpeg_get_image_info(jpeg_ptr, len(jpeg))
check("dvpp_jpeg_get_image_info", ret)
jpeg_dev, ret = acl.media.dvpp_malloc(len(jpeg))
check("dvpp_malloc", ret)
check("memcpy H2D", acl.rt.memcpy(jpeg_dev, len(jpeg), jpeg_ptr, len(jpeg), H2D))
dec_size, ret = acl.media.dvpp_jpeg_predict_dec_size(jpeg_ptr, len(jpeg), NV12)
check("dvpp_jpeg_predict_dec_size", ret)
dec_mem, ret = acl.media.dvpp_malloc(dec_size)
check("dvpp_malloc", ret)
decoded = acl.media.dvpp_create_pic_desc()
acl.media.dvpp_set_pic_desc_data(decoded, dec_mem)
acl.media.dvpp_set_pic_desc_size(decoded, dec_size)
acl.media.dvpp_set_pic_desc_format(decoded, NV12)
check("dvpp_jpeg_decode_async", acl.media.dvpp_jpeg_decode_async(
    chan, jpeg_dev, len(jpeg), decoded, stream))
check("synchronize_stream", acl.rt.synchronize_stream(stream))
check("decode ret code", acl.media.dvpp_get_pic_desc_ret_code(decoded))
save(out_dir, "decoded", decoded, index)

# 2. crop-and-paste: a 64x64 area at (32, 16) onto (16, 8) of a 96x80 canvas
canvas, canvas_mem, _ = out_pic(96, 80)
crop = acl.media.dvpp_create_roi_config(32, 95, 16, 79)
paste = acl.media.dvpp_create_roi_config(16, 79, 8, 71)
check("dvpp_vpc_crop_and_paste_async", acl.media.dvpp_vpc_crop_and_paste_async(
    chan, decoded, canvas, crop, paste, stream))
check("synchronize_stream", acl.rt.synchronize_stream(stream))
save(out_dir, "paste", canvas, index)

# 3. batch crop: two 48x32 areas of the decoded picture into a batch of two
src_batch = acl.media.dvpp_create_batch_pic_desc(1)
src0 = acl.media.dvpp_get_pic_desc(src_batch, 0)
set_pic(src0, dec_mem, dec_size, w, h, acl.media.dvpp_get_pic_desc_width_stride(decoded),
        acl.media.dvpp_get_pic_desc_height_stride(decoded))
dst_batch = acl.media.dvpp_create_batch_pic_desc(2)
batch_mem = []
for i in range(2):
    size = 48 * 32 * 3 // 2
    mem, ret = acl.media.dvpp_malloc(size)
    check("dvpp_malloc", ret)
    batch_mem.append(mem)
    set_pic(acl.media.dvpp_get_pic_desc(dst_batch, i), mem, size, 48, 32, 48, 32)
rois = [acl.media.dvpp_create_roi_config(0, 47, 0, 31),
        acl.media.dvpp_create_roi_config(96, 143, 64, 95)]
_, ret = acl.media.dvpp_vpc_batch_crop_async(chan, src_batch, [2], dst_batch, rois, stream)
check("dvpp_vpc_batch_crop_async", ret)
check("synchronize_stream", acl.rt.synchronize_stream(stream))
for i in range(2):
    save(out_dir, f"batch{i}", acl.media.dvpp_get_pic_desc(dst_batch, i), index)

# 4. resize the decoded picture to 64x64
resized, resized_mem, resized_size = out_pic(64, 64)
check("dvpp_vpc_resize_async", acl.media.dvpp_vpc_resize_async(
    chan, decoded, resized, resize_cfg, stream))
check("synchronize_stream", acl.rt.synchronize_stream(stream))
save(out_dir, "resized", resized, index)

# 5. JPEG encode the resized picture (acllite's jpege flow: size through a host pointer)
enc_size, ret = acl.media.dvpp_jpeg_predict_enc_size(resized, jpege_cfg)
check("dvpp_jpeg_predict_enc_size", ret)
enc_mem, ret = acl.media.dvpp_malloc(enc_size)
check("dvpp_malloc", ret)
size_array = np.array([enc_size], dtype=np.uint32)
size_ptr = acl.util.numpy_to_ptr(size_array)
check("dvpp_jpeg_encode_async", acl.media.dvpp_jpeg_encode_async(
    chan, resized, enc_mem, size_ptr, jpege_cfg, stream))
check("synchronize_stream", acl.rt.synchronize_stream(stream))
jpg_size = int(size_array[0])
jpg = bytes(jpg_size)
check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(jpg), jpg_size, enc_mem, jpg_size, D2H))
with open(os.path.join(out_dir, "encoded.jpg"), "wb") as f:
    f.write(jpg)
index["encoded"] = {"size": jpg_size, "predicted": enc_size}
with open(os.path.join(out_dir, "index.json"), "w") as f:
    json.dump(index, f)

# tear-down: everything created is released
for r in [*rois, crop, paste]:
    check("dvpp_destroy_roi_config", acl.media.dvpp_destroy_roi_config(r))
check("dvpp_destroy_batch_pic_desc", acl.media.dvpp_destroy_batch_pic_desc(src_batch))
check("dvpp_destroy_batch_pic_desc", acl.media.dvpp_destroy_batch_pic_desc(dst_batch))
for d in (decoded, canvas, resized):
    check("dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(d))
for m in [jpeg_dev, dec_mem, canvas_mem, resized_mem, enc_mem, *batch_mem]:
    check("dvpp_free", acl.media.dvpp_free(m))
check("dvpp_destroy_jpege_config", acl.media.dvpp_destroy_jpege_config(jpege_cfg))
check("dvpp_destroy_resize_config", acl.media.dvpp_destroy_resize_config(resize_cfg))
check("dvpp_destroy_channel", acl.media.dvpp_destroy_channel(chan))
check("dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(chan))
check("destroy_stream", acl.rt.destroy_stream(stream))
check("destroy_context", acl.rt.destroy_context(context))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
print("image pipeline done")
