package multimodal

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// The video front end of TimeSformer and VideoMAE: which frames of a
// decoded clip to keep (the samplers of transformers' docs and video
// processors, index for index) and the per-frame image processor.

// PreprocessVideos turns videos, each a list of frames, into pixel values
// (videos, frames, 3, H, W), float32 on dev, as VideoMAEImageProcessor
// gives them for a batch of videos: every frame resized, cropped,
// rescaled and normalised on its own. Every video needs the same number
// of frames, and every frame must come out the same size (a centre crop
// sees to it).
func (p *ImageProcessor) PreprocessVideos(videos [][]Image, dev core.Device) (*core.Tensor, error) {
	const op = "multimodal: ImageProcessor.PreprocessVideos"
	if len(videos) == 0 {
		return nil, fmt.Errorf("%s: no videos", op)
	}
	var out []float32
	var t, h, w int
	for v, frames := range videos {
		if len(frames) == 0 {
			return nil, fmt.Errorf("%s: video %d has no frames", op, v)
		}
		if v > 0 && len(frames) != t {
			return nil, fmt.Errorf("%s: video %d has %d frames, video 0 %d: they cannot share a batch", op, v, len(frames), t)
		}
		t = len(frames)
		for f, img := range frames {
			px, ih, iw, err := p.preprocessOne(img)
			if err != nil {
				return nil, fmt.Errorf("%s: video %d frame %d: %w", op, v, f, err)
			}
			if len(out) > 0 && (ih != h || iw != w) {
				return nil, fmt.Errorf("%s: video %d frame %d comes out %dx%d, the first frame %dx%d: they cannot share a batch",
					op, v, f, ih, iw, h, w)
			}
			h, w = ih, iw
			out = append(out, px...)
		}
	}
	return core.FromSlice(out, core.Shape{len(videos), t, 3, h, w}, dev), nil
}

// UniformFrameIndices are numFrames indices spread evenly over a clip of
// total frames, i·total/numFrames (integer division), as transformers'
// video processors sample (default_sample_indices_fn with num_frames).
func UniformFrameIndices(total, numFrames int) ([]int, error) {
	if numFrames < 1 || total < 1 {
		return nil, fmt.Errorf("multimodal: UniformFrameIndices: num_frames %d and total frames %d must be >= 1", numFrames, total)
	}
	if numFrames > total {
		return nil, fmt.Errorf("multimodal: UniformFrameIndices: num_frames %d exceeds the clip's %d frames", numFrames, total)
	}
	out := make([]int, numFrames)
	for i := range out {
		out[i] = i * total / numFrames
	}
	return out, nil
}

// FPSFrameIndices samples fps frames per second of a clip of total frames
// recorded at videoFPS: max(1, int(total/videoFPS·fps)) frames spread as
// UniformFrameIndices spreads them (default_sample_indices_fn with fps).
func FPSFrameIndices(total int, videoFPS, fps float64) ([]int, error) {
	if !(videoFPS > 0) || !(fps > 0) || math.IsInf(videoFPS, 0) || math.IsInf(fps, 0) {
		return nil, fmt.Errorf("multimodal: FPSFrameIndices: the video's fps %g and the wanted fps %g must be positive and finite", videoFPS, fps)
	}
	n := max(1, int(float64(total)/videoFPS*fps))
	idx, err := UniformFrameIndices(total, n)
	if err != nil {
		return nil, fmt.Errorf("multimodal: FPSFrameIndices: %g fps of %d frames at %g fps: %w", fps, total, videoFPS, err)
	}
	return idx, nil
}

// SampleFrameIndices is the sample_frame_indices of transformers'
// TimeSformer and VideoMAE docs: a window of clipLen·frameSampleRate
// frames that ends at rng.RandInt(clipLen·frameSampleRate, segLen), and
// clipLen indices spread over it by numpy's linspace, clipped into the
// window. With NewNumpyRandom(seed) it gives what the docs give after
// np.random.seed(seed), call for call.
func SampleFrameIndices(clipLen, frameSampleRate, segLen int, rng *NumpyRandom) ([]int, error) {
	const op = "multimodal: SampleFrameIndices"
	if clipLen < 1 || frameSampleRate < 1 {
		return nil, fmt.Errorf("%s: clip_len %d and frame_sample_rate %d must be >= 1", op, clipLen, frameSampleRate)
	}
	span := clipLen * frameSampleRate
	if segLen <= span {
		return nil, fmt.Errorf("%s: the clip's %d frames are not more than clip_len %d x frame_sample_rate %d = %d (numpy's randint(%d, %d) has no value)",
			op, segLen, clipLen, frameSampleRate, span, span, segLen)
	}
	end, err := rng.RandInt(int64(span), int64(segLen))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	start := end - int64(span)
	out := make([]int, clipLen)
	// numpy's linspace: start + i·step with step = (stop-start)/(num-1)
	// in float64, the last value stop itself.
	step := float64(end-start) / float64(max(clipLen-1, 1))
	for i := range out {
		v := float64(i)*step + float64(start)
		if i == clipLen-1 && clipLen > 1 {
			v = float64(end)
		}
		v = min(max(v, float64(start)), float64(end-1))
		out[i] = int(v) // astype(int64) truncates; v >= 0 here
	}
	return out, nil
}

// NumpyRandom is numpy's legacy global generator (np.random.seed,
// np.random.randint: MT19937 seeded by init_genrand), so the docs'
// seeded sampling picks the same frames here.
type NumpyRandom struct {
	mt  [624]uint32
	pos int
}

// NewNumpyRandom is the generator after np.random.seed(seed).
func NewNumpyRandom(seed uint32) *NumpyRandom {
	r := &NumpyRandom{pos: len(NumpyRandom{}.mt)}
	r.mt[0] = seed
	for i := 1; i < len(r.mt); i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	return r
}

// uint32 is MT19937's next output (genrand_int32).
func (r *NumpyRandom) uint32() uint32 {
	const n, m = 624, 397
	if r.pos >= n {
		for k := range n {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%n]&0x7fffffff
			v := r.mt[(k+m)%n] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.pos = 0
	}
	y := r.mt[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	return y ^ y>>18
}

// RandInt is np.random.randint(low, high): a value in [low, high), drawn
// as numpy's legacy generator draws it (32-bit outputs masked to the
// range's bit length, those past the range rejected). Ranges wider than
// 2^32, which numpy draws from 64-bit outputs, are refused.
func (r *NumpyRandom) RandInt(low, high int64) (int64, error) {
	if low >= high {
		return 0, fmt.Errorf("randint: low %d >= high %d", low, high)
	}
	rng := uint64(high - 1 - low)
	if rng > math.MaxUint32 {
		return 0, fmt.Errorf("randint: the range [%d, %d) is wider than 2^32 values, which is not implemented", low, high)
	}
	if rng == 0 {
		return low, nil
	}
	mask := uint32(rng)
	for _, s := range []uint{1, 2, 4, 8, 16} {
		mask |= mask >> s
	}
	for {
		if v := r.uint32() & mask; uint64(v) <= rng {
			return low + int64(v), nil
		}
	}
}
