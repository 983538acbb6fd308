package multimodal

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/internal/reftest"
)

// The loaders read through FromFS (a zip archive) what they read from the
// folder: weights, generation config and a tokenizer from vocab.json and
// merges.txt alike.
func TestFromFSLoadsWhatTheFolderHolds(t *testing.T) {
	dir := vocabFolder(t)
	want, _, err := LoadCLIPTokenizer(dir)
	require.NoError(t, err)
	got, cfg, err := LoadCLIPTokenizer(".", FromFS(reftest.ZipOf(t, dir)))
	require.NoError(t, err)
	assert.Equal(t, 77, cfg.ModelMaxLength)
	for _, s := range []string{"a photo of a cat", "An astronaut riding a horse!"} {
		w, err := want.Encode(s, true)
		require.NoError(t, err)
		g, err := got.Encode(s, true)
		require.NoError(t, err)
		assert.Equal(t, w.IDs, g.IDs, s)
	}

	vitDir := filepath.Join("testdata", "vit_model")
	vit, err := LoadViTModel(vitDir)
	require.NoError(t, err)
	vitZip, err := LoadViTModel(".", FromFS(reftest.ZipOf(t, vitDir)))
	require.NoError(t, err)
	a, b := vit.StateDict(), vitZip.StateDict()
	require.Len(t, b, len(a))
	for i := range a {
		av, err := a[i].Value.Tensor().Float32s()
		require.NoError(t, err)
		bv, err := b[i].Value.Tensor().Float32s()
		require.NoError(t, err)
		require.Equal(t, a[i].Name, b[i].Name)
		require.Equal(t, av, bv, a[i].Name)
	}

	whisperDir := filepath.Join("testdata", "whisper_tiny")
	w, err := LoadWhisperForConditionalGeneration(whisperDir)
	require.NoError(t, err)
	wz, err := LoadWhisperForConditionalGeneration(".", FromFS(reftest.ZipOf(t, whisperDir)))
	require.NoError(t, err)
	assert.Equal(t, w.Generation, wz.Generation, "generation_config.json is read from the archive too")
	_, err = LoadWhisperForConditionalGeneration("m", FromFS(reftest.ZipOf(t, whisperDir)))
	assert.ErrorContains(t, err, "the zip archive has no m/config.json")

	_, _, err = LoadCLIPTokenizer("../x", FromFS(reftest.ZipOf(t, dir)))
	assert.ErrorContains(t, err, `multimodal: LoadCLIPTokenizer: modelfs: folder "../x" is not a valid path`)
}
