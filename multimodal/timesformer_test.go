package multimodal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The TimeSformer reference vectors: tiny seeded divided, joint and
// space_only checkpoints transformers saved, their inputs and outputs, a
// uint8 video through the docs' frame sampler and VideoMAE's processor,
// and the samplers' indices (testdata/make_timesformer_refs.py).

// timesformerTol is relative to the largest reference value, as
// visionTol; the outputs agree with transformers' to a few float32 ulps
// of it.
const timesformerTol = 1e-5

type timesformerRefs struct {
	visionRefs
	meta struct {
		Video struct {
			Seed            uint32 `json:"seed"`
			ClipLen         int    `json:"clip_len"`
			FrameSampleRate int    `json:"frame_sample_rate"`
			Indices         []int  `json:"indices"`
		} `json:"video"`
		Sample []struct {
			Seed            uint32  `json:"seed"`
			ClipLen         int     `json:"clip_len"`
			FrameSampleRate int     `json:"frame_sample_rate"`
			SegLen          int     `json:"seg_len"`
			Indices         []int   `json:"indices"`
			Calls           [][]int `json:"calls"`
		} `json:"sample_frame_indices"`
		Uniform []struct {
			Total     int      `json:"total"`
			NumFrames *int     `json:"num_frames"`
			FPS       *float64 `json:"fps"`
			VideoFPS  *float64 `json:"video_fps"`
			Indices   []int    `json:"indices"`
		} `json:"uniform"`
	}
}

func loadTimesformerRefs(t *testing.T) *timesformerRefs {
	t.Helper()
	r := &timesformerRefs{}
	r.Refs = reftest.ReadRefs(t, "timesformer_refs", &r.meta)
	return r
}

func (r *timesformerRefs) check(t *testing.T, name string, got *core.Tensor) {
	t.Helper()
	e := reftest.RelMaxErr(t, got, r.Get(t, name, core.CPU))
	t.Logf("%s: relative error %.2g", name, e)
	require.Less(t, e, timesformerTol, name)
}

// video is reference tensor name, (frames, H, W, 3) uint8, as frames.
func (r *timesformerRefs) video(t *testing.T, name string) []Image {
	t.Helper()
	st, ok := r.File.Tensors[name]
	require.True(t, ok, "reference tensor %s", name)
	s := st.Shape
	n := s[1] * s[2] * 3
	frames := make([]Image, s[0])
	for i := range frames {
		frames[i] = Image{Height: s[1], Width: s[2], Pix: st.Data[i*n : (i+1)*n]}
	}
	return frames
}

func checkTimesformer(t *testing.T, dev core.Device) {
	r := loadTimesformerRefs(t)
	cls, err := LoadTimesformerForVideoClassification(filepath.Join("testdata", "timesformer_tiny"), WithDevice(dev))
	require.NoError(t, err)
	require.Len(t, cls.Timesformer.Config.Labels, 5)
	out, err := cls.Timesformer.Forward(r.Get(t, "tiny/pixel_values", dev))
	require.NoError(t, err)
	r.check(t, "tiny/hidden_states_0", out.HiddenStates[0])
	r.check(t, "tiny/hidden_states_1", out.HiddenStates[1])
	r.check(t, "tiny/last_hidden_state", out.LastHiddenState)
	logits, err := cls.Forward(r.Get(t, "tiny/pixel_values", dev))
	require.NoError(t, err)
	r.check(t, "tiny/logits", logits)
	out, err = cls.Timesformer.Forward(r.Get(t, "tiny/short_pixel_values", dev))
	require.NoError(t, err)
	r.check(t, "tiny/short_last_hidden_state", out.LastHiddenState)

	for _, name := range []string{"space_only", "joint"} {
		m, err := LoadTimesformerModel(filepath.Join("testdata", "timesformer_"+name), WithDevice(dev))
		require.NoError(t, err)
		for _, in := range []string{"", "odd_"} {
			out, err := m.Forward(r.Get(t, name+"/"+in+"pixel_values", dev))
			require.NoError(t, err)
			r.check(t, name+"/"+in+"last_hidden_state", out.LastHiddenState)
		}
	}

	// The front end: the docs' seeded sampler, VideoMAE's processor per
	// frame, the classifier.
	v := r.meta.Video
	clip := r.video(t, "video/frames")
	idx, err := SampleFrameIndices(v.ClipLen, v.FrameSampleRate, len(clip), NewNumpyRandom(v.Seed))
	require.NoError(t, err)
	require.Equal(t, v.Indices, idx)
	frames := make([]Image, len(idx))
	for i, j := range idx {
		frames[i] = clip[j]
	}
	proc, err := LoadImageProcessor(filepath.Join("testdata", "timesformer_tiny"))
	require.NoError(t, err)
	px, err := proc.PreprocessVideos([][]Image{frames}, dev)
	require.NoError(t, err)
	r.check(t, "video/pixel_values", px)
	logits, err = cls.Forward(px)
	require.NoError(t, err)
	r.check(t, "video/logits", logits)
	px, err = proc.PreprocessVideos([][]Image{frames, r.video(t, "video/other_frames")}, dev)
	require.NoError(t, err)
	r.check(t, "video/batch_pixel_values", px)
}

func TestTimesformerMatchesTransformers(t *testing.T) { checkTimesformer(t, core.CPU) }

func TestTimesformerOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkTimesformer(t, webgputest.Device)
}

func TestFrameSamplersMatchTransformers(t *testing.T) {
	r := loadTimesformerRefs(t)
	require.NotEmpty(t, r.meta.Sample)
	for _, c := range r.meta.Sample {
		rng := NewNumpyRandom(c.Seed)
		calls := c.Calls
		if c.Indices != nil {
			calls = [][]int{c.Indices}
		}
		for i, want := range calls {
			got, err := SampleFrameIndices(c.ClipLen, c.FrameSampleRate, c.SegLen, rng)
			require.NoError(t, err)
			require.Equal(t, want, got, "seed %d call %d", c.Seed, i)
		}
	}
	require.NotEmpty(t, r.meta.Uniform)
	for _, c := range r.meta.Uniform {
		var got []int
		var err error
		if c.NumFrames != nil {
			got, err = UniformFrameIndices(c.Total, *c.NumFrames)
		} else {
			got, err = FPSFrameIndices(c.Total, *c.VideoFPS, *c.FPS)
		}
		require.NoError(t, err)
		require.Equal(t, c.Indices, got, "%+v", c)
	}

	_, err := SampleFrameIndices(4, 3, 12, NewNumpyRandom(0))
	require.ErrorContains(t, err, "the clip's 12 frames are not more than clip_len 4 x frame_sample_rate 3 = 12")
	_, err = UniformFrameIndices(5, 8)
	require.ErrorContains(t, err, "num_frames 8 exceeds the clip's 5 frames")
	_, err = FPSFrameIndices(10, 0, 2)
	require.ErrorContains(t, err, "the video's fps 0 and the wanted fps 2 must be positive")
	_, err = NewNumpyRandom(0).RandInt(0, 1<<40)
	require.ErrorContains(t, err, "wider than 2^32")
}

func TestTimesformerStateDictNames(t *testing.T) {
	cls, err := LoadTimesformerForVideoClassification(filepath.Join("testdata", "timesformer_tiny"))
	require.NoError(t, err)
	requireStateDictIsFile(t, cls, filepath.Join("testdata", "timesformer_tiny", "model.safetensors"))
	for _, name := range []string{"space_only", "joint"} {
		dir := filepath.Join("testdata", "timesformer_"+name)
		m, err := LoadTimesformerModel(dir)
		require.NoError(t, err)
		requireStateDictIsFile(t, m, filepath.Join(dir, "model.safetensors"))
	}
}

// tinyCopy copies timesformer_tiny to a temporary folder with config.json
// edited by cfg and the tensors by edit.
func tinyCopy(t *testing.T, cfg func(map[string]any), edit func(map[string]safetensors.Tensor)) string {
	t.Helper()
	src := filepath.Join("testdata", "timesformer_tiny")
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(raw, &c))
	cfg(c)
	raw, err = json.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644))
	f, err := safetensors.ReadFile(filepath.Join(src, "model.safetensors"))
	require.NoError(t, err)
	edit(f.Tensors)
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), f.Tensors, f.Metadata))
	return dir
}

func TestTimesformerLoadErrors(t *testing.T) {
	keep := func(map[string]any) {}
	dir := tinyCopy(t, keep, func(ts map[string]safetensors.Tensor) {
		delete(ts, "timesformer.encoder.layer.1.temporal_dense.weight")
		q := ts["timesformer.encoder.layer.0.attention.attention.qkv.weight"]
		ts["timesformer.encoder.layer.0.attention.attention.qkv.weight"] = safetensors.Tensor{DType: q.DType, Shape: core.Shape{32, 96}, Data: q.Data}
	})
	_, err := LoadTimesformerForVideoClassification(dir)
	require.ErrorContains(t, err, "tensor timesformer.encoder.layer.1.temporal_dense.weight is missing (want shape [32 32])")
	require.ErrorContains(t, err, "tensor timesformer.encoder.layer.0.attention.attention.qkv.weight has shape [32 96], want [96 32]")

	// A divided checkpoint read as space_only has temporal tensors too many.
	dir = tinyCopy(t, func(c map[string]any) { c["attention_type"] = "space_only" }, func(map[string]safetensors.Tensor) {})
	_, err = LoadTimesformerForVideoClassification(dir)
	require.ErrorContains(t, err, "tensor timesformer.embeddings.time_embeddings is not a parameter of the model")

	dir = tinyCopy(t, func(c map[string]any) { c["attention_type"] = "divided_space_time_v2" }, func(map[string]safetensors.Tensor) {})
	_, err = LoadTimesformerForVideoClassification(dir)
	require.ErrorContains(t, err, `TimeSformer config: key "attention_type": "divided_space_time_v2" is not supported (supported: divided_space_time, joint_space_time, space_only)`)
	require.ErrorContains(t, err, "config.json")

	_, err = ParseTimesformerConfig([]byte(`{"model_type": "timesformer", "image_size": [32, 24]}`))
	require.ErrorContains(t, err, `TimeSformer config: key "image_size"`)
	_, err = ParseTimesformerConfig([]byte(`{"model_type": "timesformer", "use_mean_pooling": true}`))
	require.ErrorContains(t, err, `TimeSformer config: unknown key "use_mean_pooling"`)
	_, err = ParseTimesformerConfig([]byte(`{"model_type": "timesformer", "hidden_size": 30, "num_attention_heads": 4}`))
	require.ErrorContains(t, err, "hidden_size 30 is not a multiple of num_attention_heads 4")

	// Inputs transformers' divided layer would split wrongly.
	m, err := LoadTimesformerModel(filepath.Join("testdata", "timesformer_space_only"))
	require.NoError(t, err)
	_, err = m.Forward(core.FromSlice(make([]float32, 3*32*32), core.Shape{1, 3, 32, 32}))
	require.ErrorContains(t, err, "pixels have shape [1 3 32 32], want (batch, frames, 3, height, width)")
	cls, err := LoadTimesformerForVideoClassification(filepath.Join("testdata", "timesformer_tiny"))
	require.NoError(t, err)
	_, err = cls.Forward(core.FromSlice(make([]float32, 3*3*32*32), core.Shape{1, 3, 3, 32, 32}))
	require.ErrorContains(t, err, "pixels have 3 frames; divided_space_time attention takes num_frames 4")
	_, err = cls.Forward(core.FromSlice(make([]float32, 4*3*32*40), core.Shape{1, 4, 3, 32, 40}))
	require.ErrorContains(t, err, "pixels are 40 wide, 5 patches; divided_space_time attention takes 4 patches across")

	proc, err := LoadImageProcessor(filepath.Join("testdata", "timesformer_tiny"))
	require.NoError(t, err)
	img := Image{Height: 40, Width: 40, Pix: make([]uint8, 40*40*3)}
	_, err = proc.PreprocessVideos([][]Image{{img, img}, {img}}, core.CPU)
	require.ErrorContains(t, err, "video 1 has 1 frames, video 0 2: they cannot share a batch")
}

// BenchmarkTimesformerForward is one forward of one video through a
// TimeSformer of the base model's shape cut down to what a 2-core machine
// loops over (testdata/bench_timesformer.json): divided attention, 8
// frames of 112x112 in 16x16 patches (7x7 patches, 393 tokens), hidden
// 384, 6 heads, 4 layers, intermediate 1536
// (facebook/timesformer-base-finetuned-k400 is 224x224, hidden 768, 12
// layers: 1569 tokens). Weights drawn; testdata/bench_timesformer.py
// times transformers on the same config in the same run.
//
//	go test -run '^$' -bench TimesformerForward ./multimodal/
func BenchmarkTimesformerForward(b *testing.B) {
	devs := []core.Device{core.CPU}
	if webgputest.Present(b) {
		devs = append(devs, webgputest.Device)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "bench_timesformer.json"))
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := ParseTimesformerConfig(raw)
	if err != nil {
		b.Fatal(err)
	}
	for _, dev := range devs {
		b.Run(dev.Kind, func(b *testing.B) {
			m, err := NewTimesformerForVideoClassification(cfg, 1, WithDevice(dev))
			if err != nil {
				b.Fatal(err)
			}
			s := cfg.ImageSize
			x := core.Randn(core.Attrs{"shape": []int{1, cfg.NumFrames, cfg.NumChannels, s, s}, "dtype": core.F32, "seed": int64(2)}).To(dev)
			run := func() {
				logits, err := m.Forward(x)
				if err == nil {
					_, err = logits.Float32s()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			run()
			b.ResetTimer()
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64(cpu.NumThreads()), "threads")
		})
	}
}
