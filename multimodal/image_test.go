package multimodal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// The image processor references: transformers' ViTImageProcessorPil and
// CLIPImageProcessorPil on small uint8 images
// (testdata/make_whisper_image_refs.py).

type imageCase struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
	Images int             `json:"images"`
}

func loadImageRefs(t *testing.T) ([]imageCase, *safetensors.File) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "image_refs.json"))
	require.NoError(t, err)
	var cases []imageCase
	require.NoError(t, json.Unmarshal(data, &cases))
	f, err := safetensors.ReadFile(filepath.Join("testdata", "image_refs.safetensors"))
	require.NoError(t, err)
	return cases, f
}

func checkImageProcessor(t *testing.T, dev core.Device) {
	cases, f := loadImageRefs(t)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		p, err := ParseImageProcessor(c.Config)
		require.NoError(t, err, c.Name)
		for i := range c.Images {
			st := f.Tensors[fmt.Sprintf("%s/image_%d", c.Name, i)]
			require.Equal(t, core.U8, st.DType)
			img := Image{Height: st.Shape[0], Width: st.Shape[1], Pix: st.Data}
			got, err := p.Preprocess([]Image{img}, dev)
			require.NoError(t, err, c.Name)
			want := f.Tensors[fmt.Sprintf("%s/pixels_%d", c.Name, i)].ToTensor(core.CPU)
			e := maxAbsErr(t, got.Reshape(want.Shape()), want)
			t.Logf("%s image %d (%dx%d -> %v): max error %.2g", c.Name, i, img.Height, img.Width, want.Shape(), e)
			// Pillow's fixed-point resize is reproduced exactly, and the
			// float32 rescale and normalise round as numpy's do.
			require.Zero(t, e, "%s image %d", c.Name, i)
		}
	}
}

func TestImageProcessorMatchesTransformers(t *testing.T) { checkImageProcessor(t, core.CPU) }

func TestImageProcessorOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkImageProcessor(t, webgputest.Device)
}

func TestImageProcessorErrors(t *testing.T) {
	_, err := ParseImageProcessor([]byte(`{"image_processor_type": "DeiTImageProcessor"}`))
	require.ErrorContains(t, err, `image_processor_type "DeiTImageProcessor" is not supported`)
	_, err = ParseImageProcessor([]byte(`{"image_processor_type": "ViTImageProcessor", "resample": 0}`))
	require.ErrorContains(t, err, `key "resample": 0 is not supported`)
	_, err = ParseImageProcessor([]byte(`{"image_processor_type": "CLIPImageProcessor", "size": {"longest_edge": 5}}`))
	require.ErrorContains(t, err, `size key "longest_edge" is not supported`)
	_, err = ParseImageProcessor([]byte(`{"image_processor_type": "ViTImageProcessor", "do_pad": true}`))
	require.ErrorContains(t, err, `key "do_pad": value true is not supported`)

	// A size past any model's (here a fuzzer's) is refused before the
	// resize allocates it: 45098 x 63137 pixels would end the process.
	small := Image{Height: 5, Width: 7, Pix: make([]uint8, 5*7*3)}
	huge, err := ParseImageProcessor([]byte(`{"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 45098}}`))
	require.NoError(t, err)
	_, err = huge.Preprocess([]Image{small}, core.CPU)
	require.ErrorContains(t, err, "image 0: resizing to 45098x63137: want a positive size of at most 67108864 pixels")
	huge, err = ParseImageProcessor([]byte(`{"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 4}, "crop_size": {"height": 9000, "width": 9000}}`))
	require.NoError(t, err)
	_, err = huge.Preprocess([]Image{small}, core.CPU)
	require.ErrorContains(t, err, "a center crop of 9000x9000")

	// Older files: feature_extractor_type and integer sizes.
	p, err := ParseImageProcessor([]byte(`{"feature_extractor_type": "CLIPFeatureExtractor", "size": 20, "crop_size": 18}`))
	require.NoError(t, err)
	require.Equal(t, ImageSize{ShortestEdge: 20}, p.Size)
	require.Equal(t, ImageSize{Height: 18, Width: 18}, p.CropSize)

	_, err = p.Preprocess([]Image{{Height: 2, Width: 2, Pix: make([]uint8, 11)}}, core.CPU)
	require.ErrorContains(t, err, "image 0: 2x2 RGB needs 12 bytes, have 11")
	p.DoCenterCrop = false
	_, err = p.Preprocess([]Image{{Height: 20, Width: 30, Pix: make([]uint8, 1800)}, {Height: 20, Width: 20, Pix: make([]uint8, 1200)}}, core.CPU)
	require.ErrorContains(t, err, "image 1 comes out 20x20, image 0 20x30")
}
