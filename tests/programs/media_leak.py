"""Media resources a program forgets: a picture desc and a VDEC channel (with its desc).

argv: none. The pic desc at the line marked LEAK-PIC and the channel at LEAK-CHANNEL are never
destroyed; everything else is released. The report thread is stopped cleanly.
"""

import time

import acl

NV12, H264_BASELINE = 1, 1


def check(name, ret):
    if ret != 0:
        raise RuntimeError(f"{name} failed ret={ret}")


def on_frame(input_stream_desc, output_pic_desc, user_data):
    pass


check("init", acl.init())
check("set_device", acl.rt.set_device(0))
context, ret = acl.rt.create_context(0)
check("create_context", ret)
running = True


def report_thread(args):
    acl.rt.set_context(context)
    while running:
        if acl.rt.process_report(50) == 107012:
            time.sleep(0.001)


tid, ret = acl.util.start_thread(report_thread, [])
check("start_thread", ret)
pic = acl.media.dvpp_create_pic_desc()  # LEAK-PIC
vdec = acl.media.vdec_create_channel_desc()
acl.media.vdec_set_channel_desc_thread_id(vdec, tid)
acl.media.vdec_set_channel_desc_callback(vdec, on_frame)
acl.media.vdec_set_channel_desc_entype(vdec, H264_BASELINE)
acl.media.vdec_set_channel_desc_out_pic_format(vdec, NV12)
check("vdec_create_channel", acl.media.vdec_create_channel(vdec))  # LEAK-CHANNEL
running = False
check("stop_thread", acl.util.stop_thread(tid))
check("destroy_context", acl.rt.destroy_context(context))
check("reset_device", acl.rt.reset_device(0))
check("finalize", acl.finalize())
