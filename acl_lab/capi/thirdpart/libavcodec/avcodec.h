/*
 * acl_lab toolkit: a compatibility header in the toolkit's thirdpart/include (where
 * THIRDPART_PATH/include points), written for acl_lab.
 *
 * The acllite C++ library of the public samples (cplusplus/common/acllite, VideoCapture) is
 * written for FFmpeg 4, where <libavcodec/avcodec.h> also declared the bitstream-filter API
 * (AVBitStreamFilter, AVBSFContext, av_bsf_*). FFmpeg 5 (libavcodec 59) moved that API to
 * <libavcodec/bsf.h>, which avcodec.h no longer includes, so on Debian 12 (FFmpeg 5.1) the
 * library stops at "'AVBitStreamFilter' does not name a type". The sample stays unmodified:
 * this header, found first through -I$(THIRDPART_PATH)/include, includes the system's
 * avcodec.h and then bsf.h.
 */
#ifndef ACL_LAB_THIRDPART_LIBAVCODEC_AVCODEC_H
#define ACL_LAB_THIRDPART_LIBAVCODEC_AVCODEC_H

#include_next <libavcodec/avcodec.h>

#if LIBAVCODEC_VERSION_MAJOR >= 59
#include <libavcodec/bsf.h>
#endif

#endif
