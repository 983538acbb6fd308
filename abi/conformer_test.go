package abi

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestConformerEncodeAndResample(t *testing.T) {
	var meta struct {
		ModelLengths []int `json:"model_lengths"`
		Resample     []struct {
			Name     string `json:"name"`
			From, To int
		} `json:"resample"`
	}
	refs := mmRefs(t, "conformer_refs", &meta)

	c, err := conformerLoad(filepath.Join(mmTestdata, "conformer_tiny_rel"), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, conformerFree(c)) }()
	rate, err := conformerSamplingRate(c)
	require.NoError(t, err)
	assert.Equal(t, 16000, rate)
	waves := []int64{refHandle(t, refs, "model/wave_0"), refHandle(t, refs, "model/wave_1")}
	hidden, mask, err := conformerEncode(c, waves, true)
	require.NoError(t, err)
	got, shape := hostValues(t, hidden)
	want, wantShape := refTensor(t, refs, "conformer_tiny_rel/last_hidden_state")
	require.Equal(t, wantShape, shape)
	requireClose(t, want, got, 1e-4, "last_hidden_state")
	frames, shape := hostValues(t, mask)
	require.Equal(t, core.Shape{2, 1599}, shape)
	real := 0
	for _, v := range frames[1599:] {
		real += int(v)
	}
	assert.Equal(t, 1099, real) // (11003 - 10) / 5 + 1 = 2199 frames, then (2199 - 3) / 2 + 1
	hidden, mask, err = conformerEncode(c, waves[:1], false)
	require.NoError(t, err)
	assert.Zero(t, mask)
	require.NoError(t, TensorFree(hidden))

	_, _, err = conformerEncode(c, nil, false)
	assert.ErrorContains(t, err, "conformer.encode: no waveforms")
	_, err = conformerLoad(filepath.Join(mmTestdata, "whisper_tiny"), "cpu")
	assert.ErrorContains(t, err, `Wav2Vec2Conformer config: unknown key "activation_function"`)

	require.NotEmpty(t, meta.Resample)
	for _, r := range meta.Resample {
		y, err := audioResample(refHandle(t, refs, "resample/"+r.Name+"/input"), r.From, r.To)
		require.NoError(t, err, r.Name)
		got, _ := hostValues(t, y)
		want, _ := refTensor(t, refs, "resample/"+r.Name+"/output")
		requireClose(t, want, got, 5e-7, r.Name)
	}
	_, err = audioResample(waves[0], 16000, -1)
	assert.ErrorContains(t, err, "audio.resample: multimodal: Resample: rates must be positive, got 16000 Hz to -1 Hz")
}
