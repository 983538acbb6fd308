//go:build js && wasm

package main

import (
	"math"

	"github.com/webtensor/webtensor/abi"
)

// The video front end (abi/video.go) as the page can use it: VideoMAE's
// per-frame preprocessing and the frame samplers. The TimeSformer models
// load from folders, which the page has not (table.go's omitted says so).

// imageProcessorPreprocessVideo(proc, videos: handles, device) -> pixel values handle
func imageProcessorPreprocessVideo(a args) (any, error) {
	r := a.reader()
	p := r.int(0, "image processor handle")
	videos := r.ints(1, "videos")
	d := r.optStr(2, "device")
	return r.then(func() (any, error) { return abi.ImageProcessorPreprocessVideo(p, videos, d) })
}

// int32Arg is argument i as an int32 of the header's signature.
func (a args) int32Arg(i int, what string) (int, error) {
	v, err := a.int(i, what)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, abi.Invalidf("%s %d is outside int32", what, v)
	}
	return int(v), nil
}

// videoSampleFrameIndices(clipLen, frameSampleRate, segLen, seed) -> indices handle
func videoSampleFrameIndices(a args) (any, error) {
	var n [3]int
	for i, what := range []string{"clip_len", "frame_sample_rate", "seg_len"} {
		v, err := a.int32Arg(i, what)
		if err != nil {
			return nil, err
		}
		n[i] = v
	}
	seed, err := a.int(3, "seed")
	if err != nil {
		return nil, err
	}
	if seed < 0 || seed > math.MaxUint32 {
		return nil, abi.Invalidf("seed %d is outside uint32 (numpy's seeds are 0..2^32-1)", seed)
	}
	return abi.VideoSampleFrameIndices(n[0], n[1], n[2], uint32(seed))
}

// videoUniformFrameIndices(total, numFrames) -> indices handle
func videoUniformFrameIndices(a args) (any, error) {
	r := a.reader()
	total := r.int32Arg(0, "total")
	n := r.int32Arg(1, "num_frames")
	return r.then(func() (any, error) { return abi.VideoUniformFrameIndices(total, n) })
}
