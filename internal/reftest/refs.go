package reftest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// Refs are the tensors of a reference file (testdata/<base>.safetensors,
// written by the package's reference script beside testdata/<base>.json).
type Refs struct {
	File *safetensors.File
}

// ReadRefs reads testdata/<base>.json into meta (skipped when meta is nil)
// and returns the tensors of testdata/<base>.safetensors.
func ReadRefs(t testing.TB, base string, meta any) Refs {
	t.Helper()
	if meta != nil {
		b, err := os.ReadFile(filepath.Join("testdata", base+".json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, meta))
	}
	f, err := safetensors.ReadFile(filepath.Join("testdata", base+".safetensors"))
	require.NoError(t, err)
	return Refs{File: f}
}

// Get is reference tensor name on dev; a missing or unreadable tensor
// fails t.
func (r Refs) Get(t testing.TB, name string, dev core.Device) *core.Tensor {
	t.Helper()
	st, ok := r.File.Tensors[name]
	require.True(t, ok, "no reference tensor %s", name)
	x := st.ToTensor(dev)
	require.NoError(t, x.Err())
	return x
}
