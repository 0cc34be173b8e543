"""A video pipeline in the style of the VDEC/VENC samples (vdec_resnet50_classification,
venc_image, acllite's dvpp_vdec).

argv: OUT_DIR MODEL.om (a model taking [1, 3, 32, 32] fp32, e.g. the zoo's tiny_resnet).
An H.264 stream is made with PyAV; a report thread loops on process_report; VDEC decodes
every frame into DVPP memory (frame callbacks run in that thread); each frame is resized by
VPC to 32x32 and classified; VENC encodes the decoded frames again. Written to OUT_DIR:
the input stream, the decoded pictures, the logits and the re-encoded stream.
"""

import json
import os
import sys
import time
from fractions import Fraction

import acl
import av
import numpy as np

H2D, D2H = 1, 2
NV12 = 1
H264_BASELINE = 1
W, H, FRAMES = 128, 128, 6


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


def make_stream():
    """Annex-B H.264 packets of a moving gradient, one packet per frame."""
    enc = av.CodecContext.create("libx264", "w")
    enc.width, enc.height, enc.pix_fmt = W, H, "yuv420p"
    enc.time_base = Fraction(1, 25)
    enc.options = {"tune": "zerolatency", "preset": "ultrafast"}
    enc.profile = "Baseline"
    packets = []
    xs = np.arange(W)[None, :]
    ys = np.arange(H)[:, None]
    for i in range(FRAMES):
        rgb = np.stack([(xs * 2 + i * 20 + 0 * ys) % 256, (ys * 2 + 0 * xs) % 256,
                        np.full((H, W), 40 * i)], -1).astype(np.uint8)
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
        frame.pts = i
        packets += [bytes(p) for p in enc.encode(frame)]
    packets += [bytes(p) for p in enc.encode(None)]
    return packets


out_dir, model_path = sys.argv[1:3]
packets = make_stream()
with open(os.path.join(out_dir, "input.h264"), "wb") as f:
    f.write(b"".join(packets))

check("init", acl.init())
check("set_device", acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check("create_context", ret)
stream, ret = acl.rt.create_stream()
check("create_stream", ret)

running = True


def report_thread(args):
    acl.rt.set_context(context)
    while running:
        if acl.rt.process_report(100) == 107012:  # no channel subscribed this thread yet
            time.sleep(0.001)


tid, ret = acl.util.start_thread(report_thread, [])
check("start_thread", ret)

# ------------------------------------------------------------------ VDEC
decoded = {}


def vdec_callback(input_stream_desc, output_pic_desc, user_data):
    check("dvpp_destroy_stream_desc", acl.media.dvpp_destroy_stream_desc(input_stream_desc))
    decoded[user_data] = {
        "data": acl.media.dvpp_get_pic_desc_data(output_pic_desc),
        "size": acl.media.dvpp_get_pic_desc_size(output_pic_desc),
        "ret_code": acl.media.dvpp_get_pic_desc_ret_code(output_pic_desc),
        "width": acl.media.dvpp_get_pic_desc_width(output_pic_desc),
        "height": acl.media.dvpp_get_pic_desc_height(output_pic_desc),
        "width_stride": acl.media.dvpp_get_pic_desc_width_stride(output_pic_desc),
        "height_stride": acl.media.dvpp_get_pic_desc_height_stride(output_pic_desc),
    }
    check("dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(output_pic_desc))


vdec = acl.media.vdec_create_channel_desc()
check("vdec_set_channel_desc_channel_id", acl.media.vdec_set_channel_desc_channel_id(vdec, 0))
check("vdec_set_channel_desc_thread_id", acl.media.vdec_set_channel_desc_thread_id(vdec, tid))
check("vdec_set_channel_desc_callback",
      acl.media.vdec_set_channel_desc_callback(vdec, vdec_callback))
check("vdec_set_channel_desc_entype", acl.media.vdec_set_channel_desc_entype(vdec, H264_BASELINE))
check("vdec_set_channel_desc_out_pic_format",
      acl.media.vdec_set_channel_desc_out_pic_format(vdec, NV12))
check("vdec_create_channel", acl.media.vdec_create_channel(vdec))
vdec_cfg = acl.media.vdec_create_frame_config()

out_size = (W + 15) // 16 * 16 * ((H + 1) // 2 * 2) * 3 // 2
in_mems = []
for i, pkt in enumerate(packets):
    mem, ret = acl.media.dvpp_malloc(len(pkt))
    check("dvpp_malloc", ret)
    in_mems.append(mem)
    check("memcpy H2D", acl.rt.memcpy(mem, len(pkt), acl.util.bytes_to_ptr(pkt), len(pkt), H2D))
    sd = acl.media.dvpp_create_stream_desc()
    acl.media.dvpp_set_stream_desc_data(sd, mem)
    acl.media.dvpp_set_stream_desc_size(sd, len(pkt))
    out_mem, ret = acl.media.dvpp_malloc(out_size)
    check("dvpp_malloc", ret)
    pd = acl.media.dvpp_create_pic_desc()  # only data, size and format: VDEC fills the rest
    acl.media.dvpp_set_pic_desc_data(pd, out_mem)
    acl.media.dvpp_set_pic_desc_size(pd, out_size)
    acl.media.dvpp_set_pic_desc_format(pd, NV12)
    check("vdec_send_frame", acl.media.vdec_send_frame(vdec, sd, pd, vdec_cfg, i))
check("vdec_destroy_channel", acl.media.vdec_destroy_channel(vdec))  # waits for callbacks
assert sorted(decoded) == list(range(len(packets))), sorted(decoded)

frames = [decoded[i] for i in range(len(packets))]
for i, fr in enumerate(frames):
    check("frame ret code", fr["ret_code"])
    host = bytes(fr["size"])
    check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(host), fr["size"], fr["data"],
                                      fr["size"], D2H))
    with open(os.path.join(out_dir, f"frame{i}.yuv"), "wb") as f:
        f.write(host)

# ------------------------------------------------------------------ VPC + model
chan = acl.media.dvpp_create_channel_desc()
check("dvpp_create_channel", acl.media.dvpp_create_channel(chan))
resize_cfg = acl.media.dvpp_create_resize_config()
model_id, ret = acl.mdl.load_from_file(model_path)
check("load_from_file", ret)
in_bytes = 3 * 32 * 32 * 4
model_in, ret = acl.rt.malloc(in_bytes, 0)
check("malloc", ret)
model_out, ret = acl.rt.malloc(40, 0)
check("malloc", ret)
in_ds, out_ds = acl.mdl.create_dataset(), acl.mdl.create_dataset()
in_buf = acl.create_data_buffer(model_in, in_bytes)
out_buf = acl.create_data_buffer(model_out, 40)
acl.mdl.add_dataset_buffer(in_ds, in_buf)
acl.mdl.add_dataset_buffer(out_ds, out_buf)
small_size = 32 * 32 * 3 // 2
small_mem, ret = acl.media.dvpp_malloc(small_size)
check("dvpp_malloc", ret)
small = acl.media.dvpp_create_pic_desc()
for fn, v in (("data", small_mem), ("size", small_size), ("format", NV12), ("width", 32),
              ("height", 32), ("width_stride", 32), ("height_stride", 32)):
    getattr(acl.media, "dvpp_set_pic_desc_" + fn)(small, v)
logits = []
for fr in frames:
    src = acl.media.dvpp_create_pic_desc()
    for fn in ("data", "size", "width", "height", "width_stride", "height_stride"):
        getattr(acl.media, "dvpp_set_pic_desc_" + fn)(src, fr[fn])
    acl.media.dvpp_set_pic_desc_format(src, NV12)
    check("dvpp_vpc_resize_async", acl.media.dvpp_vpc_resize_async(chan, src, small,
                                                                   resize_cfg, stream))
    check("synchronize_stream", acl.rt.synchronize_stream(stream))
    check("dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(src))
    yuv = bytes(small_size)
    check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(yuv), small_size, small_mem,
                                      small_size, D2H))
    a = np.frombuffer(yuv, dtype=np.uint8)
    y = a[:1024].reshape(32, 32)
    uv = a[1024:].reshape(16, 16, 2).repeat(2, 0).repeat(2, 1)
    x = np.stack([y, uv[:, :, 0], uv[:, :, 1]]).astype(np.float32)[None] / 255.0
    xb = x.tobytes()
    check("memcpy H2D", acl.rt.memcpy(model_in, in_bytes, acl.util.bytes_to_ptr(xb), in_bytes,
                                      H2D))
    check("execute", acl.mdl.execute(model_id, in_ds, out_ds))
    res = bytes(40)
    check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(res), 40, model_out, 40, D2H))
    logits.append(np.frombuffer(res, dtype=np.float32).tolist())

# ------------------------------------------------------------------ VENC
encoded = []


def venc_callback(input_pic_desc, output_stream_desc, user_data):
    if output_stream_desc == 0:
        return
    if acl.media.dvpp_get_stream_desc_ret_code(output_stream_desc) != 0:
        return
    size = acl.media.dvpp_get_stream_desc_size(output_stream_desc)
    data = bytes(size)
    check("memcpy D2H", acl.rt.memcpy(acl.util.bytes_to_ptr(data), size,
                                      acl.media.dvpp_get_stream_desc_data(output_stream_desc),
                                      size, D2H))
    encoded.append((user_data, data))


venc = acl.media.venc_create_channel_desc()
acl.media.venc_set_channel_desc_thread_id(venc, tid)
acl.media.venc_set_channel_desc_callback(venc, venc_callback)
acl.media.venc_set_channel_desc_entype(venc, H264_BASELINE)
acl.media.venc_set_channel_desc_pic_format(venc, NV12)
acl.media.venc_set_channel_desc_key_frame_interval(venc, 16)
acl.media.venc_set_channel_desc_pic_width(venc, W)
acl.media.venc_set_channel_desc_pic_height(venc, H)
check("venc_create_channel", acl.media.venc_create_channel(venc))
venc_cfg = acl.media.venc_create_frame_config()
acl.media.venc_set_frame_config_eos(venc_cfg, 0)
acl.media.venc_set_frame_config_force_i_frame(venc_cfg, 0)
venc_pic = acl.media.dvpp_create_pic_desc()
for i, fr in enumerate(frames):
    acl.media.dvpp_set_pic_desc_data(venc_pic, fr["data"])
    acl.media.dvpp_set_pic_desc_size(venc_pic, fr["size"])
    check("venc_send_frame", acl.media.venc_send_frame(venc, venc_pic, 0, venc_cfg, i))
acl.media.venc_set_frame_config_eos(venc_cfg, 1)
check("venc_send_frame eos", acl.media.venc_send_frame(venc, 0, 0, venc_cfg, None))
check("venc_destroy_channel", acl.media.venc_destroy_channel(venc))
with open(os.path.join(out_dir, "output.h264"), "wb") as f:
    f.write(b"".join(d for _, d in sorted(encoded, key=lambda e: (e[0] is None, e[0] or 0))))

running = False
check("stop_thread", acl.util.stop_thread(tid))
with open(os.path.join(out_dir, "index.json"), "w") as f:
    json.dump({"frames": frames, "logits": logits, "encoded": [u for u, _ in encoded]}, f)

# tear-down
check("dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(venc_pic))
check("dvpp_destroy_pic_desc", acl.media.dvpp_destroy_pic_desc(small))
check("venc_destroy_frame_config", acl.media.venc_destroy_frame_config(venc_cfg))
check("venc_destroy_channel_desc", acl.media.venc_destroy_channel_desc(venc))
check("vdec_destroy_frame_config", acl.media.vdec_destroy_frame_config(vdec_cfg))
check("vdec_destroy_channel_desc", acl.media.vdec_destroy_channel_desc(vdec))
for m in in_mems + [fr["data"] for fr in frames] + [small_mem]:
    check("dvpp_free", acl.media.dvpp_free(m))
check("destroy_data_buffer", acl.destroy_data_buffer(in_buf))
check("destroy_data_buffer", acl.destroy_data_buffer(out_buf))
check("destroy_dataset", acl.mdl.destroy_dataset(in_ds))
check("destroy_dataset", acl.mdl.destroy_dataset(out_ds))
check("free", acl.rt.free(model_in))
check("free", acl.rt.free(model_out))
check("unload", acl.mdl.unload(model_id))
check("dvpp_destroy_resize_config", acl.media.dvpp_destroy_resize_config(resize_cfg))
check("dvpp_destroy_channel", acl.media.dvpp_destroy_channel(chan))
check("dvpp_destroy_channel_desc", acl.media.dvpp_destroy_channel_desc(chan))
check("destroy_stream", acl.rt.destroy_stream(stream))
check("destroy_context", acl.rt.destroy_context(context))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
print(f"video pipeline done: {len(frames)} frames decoded, {len(encoded)} packets encoded")
