package abi

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The image processors against transformers' PIL processors
// (multimodal/testdata/image_refs.*): every case's config loaded from its
// bytes, its uint8 images preprocessed, the pixel values compared.
func TestImageProcessorPreprocess(t *testing.T) {
	var cases []struct {
		Name   string          `json:"name"`
		Config json.RawMessage `json:"config"`
		Images int             `json:"images"`
	}
	refs := mmRefs(t, "image_refs", &cases)
	for _, c := range cases {
		p, err := imageProcessorLoadBytes(c.Config)
		require.NoError(t, err, c.Name)
		for i := range c.Images {
			img := refHandle(t, refs, fmt.Sprintf("%s/image_%d", c.Name, i))
			px, err := imageProcessorPreprocess(p, []int64{img}, "cpu")
			require.NoError(t, err, c.Name)
			got, _ := hostValues(t, px)
			want, _ := refTensor(t, refs, fmt.Sprintf("%s/pixels_%d", c.Name, i))
			requireClose(t, want, got, 1e-5, c.Name)
		}
		require.NoError(t, imageProcessorFree(p))
	}

	p, err := imageProcessorLoadBytes(cases[0].Config)
	require.NoError(t, err)
	defer func() { require.NoError(t, imageProcessorFree(p)) }()
	_, err = imageProcessorPreprocess(p, []int64{refHandle(t, refs, cases[0].Name+"/pixels_0")}, "")
	assert.ErrorContains(t, err, "image 0 has shape [3 24 24] and dtype f32; want (height, width, 3) u8 RGB")
	_, err = imageProcessorLoadBytes([]byte(`{"image_processor_type": "SiglipImageProcessor"}`))
	assert.ErrorContains(t, err, "SiglipImageProcessor")
	_, err = imageProcessorLoad(filepath.Join(mmTestdata, "clip_tiny"))
	assert.Equal(t, StatusIO, StatusOf(err), "%v", err)
}
