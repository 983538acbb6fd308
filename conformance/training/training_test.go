package training_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/conformance/training"
	"github.com/webtensor/webtensor/core"
)

// The check trains (the loss falls), its checkpoint loads back into a
// fresh model, and a column records its curve and checkpoint; a
// checkpoint that cannot be written is recorded as the error.
func TestTrainingCheckRecordsItsCurveAndCheckpoint(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "go-cpu.ckpt.safetensors")
	res := conformance.Result{SDK: "go", Backend: "cpu"}
	training.Record(&res, core.CPU, ckpt)
	require.Equal(t, ckpt, res.Checkpoint)
	require.Len(t, res.Training, training.Steps)
	assert.Less(t, res.Training[training.Steps-1], res.Training[0])

	vals, err := training.CheckpointValues(ckpt)
	require.NoError(t, err)
	assert.NotEmpty(t, vals)

	res = conformance.Result{SDK: "go", Backend: "cpu"}
	training.Record(&res, core.CPU, filepath.Join(t.TempDir(), "missing", "dir", "x.safetensors"))
	assert.Nil(t, res.Training)
	assert.Contains(t, res.Checkpoint, "error: ")
}
