package abi

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/diffuse"
	"github.com/webtensor/webtensor/internal/modelfs"
)

// diffusion.load: a zip archive of a pipeline folder (the
// browser's way in) loads the pipeline the folder holds, and a hostile or
// broken archive fails with WT_ERR_INVALID naming the problem.

func zipFolder(t testing.TB, dir string) []byte {
	data, err := modelfs.ZipFolder(dir)
	require.NoError(t, err)
	return data
}

// rezip rewrites an archive's entries under prefix and adds extra ones.
func rezip(t testing.TB, data []byte, prefix string, extra map[string]string) []byte {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range r.File {
		rc, err := f.Open()
		require.NoError(t, err)
		out, err := w.Create(prefix + f.Name)
		require.NoError(t, err)
		_, err = out.Write(readAll(t, rc))
		require.NoError(t, err)
		rc.Close()
	}
	for name, body := range extra {
		out, err := w.Create(name)
		require.NoError(t, err)
		_, err = out.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func readAll(t testing.TB, r interface{ Read([]byte) (int, error) }) []byte {
	var b bytes.Buffer
	_, err := b.ReadFrom(r)
	require.NoError(t, err)
	return b.Bytes()
}

// The zip of ddpm_pipe samples the folder's images bit for bit, whether
// the pipeline is at the archive's root or in its one top folder.
func TestDiffusionLoadZipSamplesTheFoldersImages(t *testing.T) {
	folder, err := diffusionLoad(ddpmPipe, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(folder)) }()
	data := zipFolder(t, ddpmPipe)
	for _, archive := range [][]byte{data, rezip(t, data, "ddpm_pipe/", nil)} {
		p, err := diffusionLoadZip(archive, "cpu")
		require.NoError(t, err)
		want, err := diffusionInfoJSON(folder)
		require.NoError(t, err)
		got, err := diffusionInfoJSON(p)
		require.NoError(t, err)
		assert.JSONEq(t, want, got)
		var steps [][2]int
		h, err := diffusionGenerate(p, 2, 4, 7, "", func(step, n int) error {
			steps = append(steps, [2]int{step, n})
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, [][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}, steps, "progress after each step")
		gotImg, _ := hostValues(t, h)
		h, err = diffusionGenerate(folder, 2, 4, 7, "", nil)
		require.NoError(t, err)
		wantImg, _ := hostValues(t, h)
		assert.Equal(t, wantImg, gotImg)
		require.NoError(t, diffusionFree(p))
	}
}

// A StableDiffusionPipeline's text encoder and tokenizer load from the
// archive too, and a DiT pipeline's transformer and VAE.
func TestDiffusionLoadZipTextAndClassPipelines(t *testing.T) {
	folder, err := diffusionLoad(sdTiny, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(folder)) }()
	p, err := diffusionLoadZip(zipFolder(t, sdTiny), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(p)) }()
	req := TextToImage{Prompts: []string{"a red cube"}, Steps: 2, Seed: 3, GuidanceScale: 5}
	var n int
	req.Progress = func(int, int) error { n++; return nil }
	h, err := diffusionGenerateText(p, req)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	got, _ := hostValues(t, h)
	req.Progress = nil
	h, err = diffusionGenerateText(folder, req)
	require.NoError(t, err)
	want, _ := hostValues(t, h)
	assert.Equal(t, want, got)

	dir := t.TempDir()
	copyDir(t, filepath.Join(diffuseTestdata, "dit_pipe"), filepath.Join(dir, "transformer"))
	copyDir(t, filepath.Join(diffuseTestdata, "vae_tiny"), filepath.Join(dir, "vae"))
	copyDir(t, filepath.Join(ddpmPipe, "scheduler"), filepath.Join(dir, "scheduler"))
	index := `{"_class_name": "DiTPipeline", "transformer": ["diffusers", "DiTTransformer2DModel"],
		"vae": ["diffusers", "AutoencoderKL"], "scheduler": ["diffusers", "DDPMScheduler"]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model_index.json"), []byte(index), 0o644))
	d, err := diffusionLoadZip(zipFolder(t, dir), "cpu")
	require.NoError(t, err)
	h, err = diffusionGenerateClasses(d, []int64{3}, 2, 5, 4, "", nil)
	require.NoError(t, err)
	require.NoError(t, TensorFree(h))
	require.NoError(t, diffusionFree(d))
}

func TestDiffusionLoadZipErrors(t *testing.T) {
	data := zipFolder(t, ddpmPipe)
	noUNet := t.TempDir()
	copyDir(t, filepath.Join(ddpmPipe, "scheduler"), filepath.Join(noUNet, "scheduler"))
	index, err := os.ReadFile(filepath.Join(ddpmPipe, "model_index.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(noUNet, "model_index.json"), index, 0o644))
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "diffusion.load: zip archive: empty (0 bytes)"},
		{"truncated", data[:len(data)/2], "diffusion.load: zip archive: not a zip archive, or a truncated one"},
		{"not a pipeline", zipFolder(t, filepath.Join(ddpmPipe, "unet")),
			"diffusion.load: zip archive: no model_index.json at its root or in a top-level folder (its root holds: config.json, diffusion_pytorch_model.safetensors)"},
		{"missing unet", zipFolder(t, noUNet), "diffusion.load: diffuse: LoadUNet2D: the zip archive has no unet/config.json"},
		{"escaping path", rezip(t, data, "", map[string]string{"../evil": "x"}), `diffusion.load: zip archive: entry "../evil": the path leaves the archive's root`},
		{"bad index", rezip(t, zipFolder(t, filepath.Join(ddpmPipe, "unet")), "", map[string]string{"model_index.json": "{"}),
			"diffusion.load: model_index.json: unexpected end of JSON input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := diffusionLoadZip(c.data, "cpu")
			require.Error(t, err)
			assert.Equal(t, StatusInvalid, StatusOf(err), err.Error())
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err = diffusionLoadZip(data, "tpu")
	assert.ErrorContains(t, err, "tpu")
}

// tinyPipelineZip is a DDPM pipeline small enough to fuzz: a one-level
// UNet of 4 channels on 4×4 images, saved as diffusers saves it, zipped.
func tinyPipelineZip(f *testing.F) []byte {
	c := diffuse.DefaultUNet2DConfig()
	c.SampleSize, c.InChannels, c.OutChannels = 4, 1, 1
	c.BlockOutChannels, c.DownBlockTypes, c.UpBlockTypes = []int{4}, []string{"DownBlock2D"}, []string{"UpBlock2D"}
	c.LayersPerBlock, c.NormNumGroups, c.AttentionHeadDim = 1, 2, 4
	m, err := diffuse.NewUNet2D(c, 1)
	require.NoError(f, err)
	m.Train(false)
	cfg, err := diffuse.Defaults("DDPMScheduler")
	require.NoError(f, err)
	dir := f.TempDir()
	require.NoError(f, diffuse.SavePipeline(dir, m, cfg))
	return zipFolder(f, dir)
}

// FuzzDiffusionLoadZip: whatever the archive, diffusion.load
// loads a pipeline or fails with WT_ERR_INVALID, never a panic nor
// another status.
func FuzzDiffusionLoadZip(f *testing.F) {
	tiny := tinyPipelineZip(f)
	f.Add(tiny)
	f.Add(rezip(f, tiny, "pipe/", nil))
	f.Add(tiny[:len(tiny)-10])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := diffusionLoadZip(data, "cpu")
		if err != nil {
			if s := StatusOf(err); s != StatusInvalid {
				t.Fatalf("status %v, want WT_ERR_INVALID: %v", s, err)
			}
			return
		}
		if _, err := diffusionInfoJSON(h); err != nil {
			t.Fatalf("a loaded pipeline has no info: %v", err)
		}
		if err := diffusionFree(h); err != nil {
			t.Fatal(err)
		}
	})
}
