package abi

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The video calls against multimodal's TimeSformer references
// (multimodal/testdata/timesformer_*): the docs' seeded frame sampler, the
// VideoMAE processor on the sampled frames, the classifier's logits.
func TestTimesformerVideoPipeline(t *testing.T) {
	refs := filepath.Join(mmTestdata, "timesformer_refs.safetensors")
	dir := filepath.Join(mmTestdata, "timesformer_tiny")

	idx, err := videoSampleFrameIndices(4, 2, 16, 0)
	require.NoError(t, err)
	ix, err := TensorOf(idx)
	require.NoError(t, err)
	got, err := ix.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 6, 9, 11}, got) // np.random.seed(0) in the docs' sampler
	clip, err := TensorOf(refHandle(t, refs, "video/frames"))
	require.NoError(t, err)
	frames := NewHandle(clip.IndexSelect(ix, core.Attrs{"axis": 0}), false)
	require.NoError(t, TensorFree(idx))
	defer func() { require.NoError(t, TensorFree(frames)) }()

	proc, err := imageProcessorLoad(dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, imageProcessorFree(proc)) }()
	px, err := imageProcessorPreprocessVideo(proc, []int64{frames}, "cpu")
	require.NoError(t, err)
	pv, shape := hostValues(t, px)
	assert.Equal(t, core.Shape{1, 4, 3, 32, 32}, shape)
	want, _ := refTensor(t, refs, "video/pixel_values")
	requireClose(t, want, pv, 1e-6, "pixel values")

	m, err := timesformerLoad(dir, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, timesformerFree(m)) }()
	info, err := timesformerInfoJSON(m)
	require.NoError(t, err)
	var meta struct {
		Model  string   `json:"model"`
		Frames int      `json:"num_frames"`
		Labels []string `json:"labels"`
	}
	require.NoError(t, json.Unmarshal([]byte(info), &meta))
	assert.Equal(t, "TimesformerForVideoClassification", meta.Model)
	assert.Equal(t, 4, meta.Frames)
	assert.Len(t, meta.Labels, 5)

	pixels := refHandle(t, refs, "video/pixel_values")
	logits, hidden, err := timesformerForward(m, pixels, true, false)
	require.NoError(t, err)
	assert.Zero(t, hidden)
	got2, _ := hostValues(t, logits)
	want, _ = refTensor(t, refs, "video/logits")
	requireClose(t, want, got2, 1e-5, "logits")
	_, hidden, err = timesformerForward(m, refHandle(t, refs, "tiny/pixel_values"), false, true)
	require.NoError(t, err)
	got2, _ = hostValues(t, hidden)
	want, _ = refTensor(t, refs, "tiny/last_hidden_state")
	requireClose(t, want, got2, 1e-5, "last hidden state")

	_, _, err = timesformerForward(m, pixels, false, false)
	assert.ErrorContains(t, err, "nothing to compute")
	_, _, err = timesformerForward(m, refHandle(t, refs, "space_only/pixel_values"), true, false)
	assert.ErrorContains(t, err, "pixels have 3 frames; divided_space_time attention takes num_frames 4")
	bare, err := timesformerLoad(filepath.Join(mmTestdata, "timesformer_joint"), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, timesformerFree(bare)) }()
	_, _, err = timesformerForward(bare, refHandle(t, refs, "joint/pixel_values"), true, true)
	assert.ErrorContains(t, err, "without a classifier")
	_, err = imageProcessorPreprocessVideo(proc, []int64{pixels}, "cpu")
	assert.ErrorContains(t, err, "video 0 has shape [1 4 3 32 32] and dtype f32; want (frames, height, width, 3) u8 RGB")
	_, err = videoSampleFrameIndices(4, 4, 16, 0)
	assert.ErrorContains(t, err, "the clip's 16 frames are not more than clip_len 4 x frame_sample_rate 4 = 16")
	idx, err = videoUniformFrameIndices(300, 8)
	require.NoError(t, err)
	u, _ := hostValues(t, idx)
	assert.Equal(t, []float64{0, 37, 75, 112, 150, 187, 225, 262}, u)
	_, err = timesformerLoad(filepath.Join(mmTestdata, "clip_tiny"), "cpu")
	assert.Equal(t, StatusInvalid, StatusOf(err), "%v", err)
	_, err = timesformerLoad(filepath.Join(mmTestdata, "absent"), "cpu")
	assert.Equal(t, StatusIO, StatusOf(err), "%v", err)
}
