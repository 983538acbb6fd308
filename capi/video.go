package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import "github.com/webtensor/webtensor/abi"

// Video models and their front end (abi/video.go): TimeSformer folders,
// VideoMAE's per-frame preprocessing and the frame samplers.

//export wt_timesformer_load
func wt_timesformer_load(dir, device *C.char, out *C.wt_timesformer) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_timesformer_load", dir, device, out, abi.TimesformerLoad)
}

//export wt_timesformer_free
func wt_timesformer_free(model C.wt_timesformer) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TimesformerFree(int64(model)))
}

//export wt_timesformer_info_json
func wt_timesformer_info_json(model C.wt_timesformer, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.TimesformerInfoJSON(int64(model))
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_timesformer_forward
func wt_timesformer_forward(model C.wt_timesformer, pixels C.wt_tensor, logits, hidden *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	l, h, err := abi.TimesformerForward(int64(model), int64(pixels), logits != nil, hidden != nil)
	if err != nil {
		return fail(err)
	}
	if logits != nil {
		*logits = C.wt_tensor(l)
	}
	if hidden != nil {
		*hidden = C.wt_tensor(h)
	}
	return statusOK
}

//export wt_image_processor_preprocess_video
func wt_image_processor_preprocess_video(proc C.wt_image_processor, videos *C.wt_tensor, n C.int32_t, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_image_processor_preprocess_video: out is NULL")
	}
	hs, err := handles(videos, n, "videos", "n_videos")
	if err != nil {
		return fail(abi.Prefix(err, "wt_image_processor_preprocess_video"))
	}
	d, _ := goString(device)
	h, err := abi.ImageProcessorPreprocessVideo(int64(proc), hs, d)
	return setHandle(h, err, out)
}

//export wt_video_sample_frame_indices
func wt_video_sample_frame_indices(clipLen, frameSampleRate, segLen C.int32_t, seed C.uint32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_video_sample_frame_indices: out is NULL")
	}
	h, err := abi.VideoSampleFrameIndices(int(clipLen), int(frameSampleRate), int(segLen), uint32(seed))
	return setHandle(h, err, out)
}

//export wt_video_uniform_frame_indices
func wt_video_uniform_frame_indices(total, numFrames C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_video_uniform_frame_indices: out is NULL")
	}
	h, err := abi.VideoUniformFrameIndices(int(total), int(numFrames))
	return setHandle(h, err, out)
}
