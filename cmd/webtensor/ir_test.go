package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
)

func TestIRShowPrintsKindsAndTheMemoryPlan(t *testing.T) {
	out, err := execute(t, "ir", "show", "--model", "transformer")
	require.NoError(t, err, out)
	assert.Regexp(t, `= permute\(%\d+\)  \{dims: \[0 2 1 3\]\}  # layout\n`, out)
	assert.Regexp(t, `# after the passes: \d+ nodes \(\d+ folded into constants, \d+ layout nodes dropped or merged, \d+ slice-gradient sums made concats, \d+ merged, \d+ dead removed\)`, out)
	assert.Regexp(t, `# memory plan\n# peak \d+\.\d KiB held with buffers released after their last use, \d+\.\d KiB allocated without \(\d+% less\)\n`, out)
	assert.Regexp(t, `# after node \d+ \(add -> %\d+\): free %\d+ \(`, out)
	out, err = execute(t, "ir", "show", "--model", "gcn")
	require.NoError(t, err, out)
	assert.Contains(t, out, "# sparse\n")
	assert.Contains(t, out, "# segment\n")
}

// needWebGPU skips when this machine has no WebGPU adapter, and fails when
// one exists but the backend does not open.
func needWebGPU(t *testing.T) {
	t.Helper()
	webgputest.Need(t)
}

func TestIRShowFusesOnWebGPU(t *testing.T) {
	needWebGPU(t)
	out, err := execute(t, "ir", "show", "--model", "transformer", "--device", "webgpu")
	require.NoError(t, err, out)
	assert.Regexp(t, `# after fusion on webgpu:0: \d+ nodes \(\d+ ops in elementwise kernels, 0 reductions with a fused prologue, 4 epilogues, 0 second stores, 0 bias gradients in their weight gradient, 1 attention outputs written transposed, \d+ weights in their other layout, 0 group norms with their SiLU\)`, out)
	assert.Regexp(t, `= fused_matmul\[relu\(add\(\$0, \$1\)\)\]\(`, out)
	out, err = execute(t, "ir", "show", "--model", "gcn", "--device", "webgpu")
	require.NoError(t, err, out)
	assert.Contains(t, out, "fused_spmm[add($0, $1)]")
	_, err = execute(t, "ir", "show", "--device", "tpu")
	assert.Error(t, err)
}

// --train traces a whole training step; its backward pass is in the graph
// and the passes reach it (the q/k/v slice gradients become a concat).
// --profile prints each op's kernel time on WebGPU and refuses the CPU.
func TestIRShowTrainingStepAndProfile(t *testing.T) {
	out, err := execute(t, "ir", "show", "--model", "transformer", "--train")
	require.NoError(t, err, out)
	assert.Contains(t, out, "_layer_norm_backward(")
	assert.Regexp(t, `1 slice-gradient sums made concats`, out)
	assert.Regexp(t, `= concat\(`, out)
	_, err = execute(t, "ir", "show", "--model", "mlp", "--profile")
	assert.ErrorContains(t, err, "--profile needs --device webgpu")
	needWebGPU(t)
	out, err = execute(t, "ir", "show", "--model", "gcn", "--device", "webgpu", "--train", "--profile")
	require.NoError(t, err, out)
	assert.Regexp(t, `# kernel profile on webgpu:0, per run`, out)
	assert.Regexp(t, `# spmm/sparse +1 +\d+\.\d+\n`, out)
	assert.Regexp(t, `# total +\d+\.\d+\n`, out)
}
