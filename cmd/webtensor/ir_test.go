package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestIRShowPrintsKindsAndTheMemoryPlan(t *testing.T) {
	out, err := execute(t, "ir", "show", "--model", "transformer")
	require.NoError(t, err, out)
	assert.Regexp(t, `= permute\(%\d+\)  \{dims: \[0 2 1 3\]\}  # layout\n`, out)
	assert.Regexp(t, `# after the passes: \d+ nodes \(\d+ folded into constants, \d+ layout nodes dropped or merged, \d+ merged, \d+ dead removed\)`, out)
	assert.Regexp(t, `# memory plan\n# peak \d+\.\d KiB held with buffers released after their last use, \d+\.\d KiB allocated without \(\d+% less\)\n`, out)
	assert.Regexp(t, `# after node \d+ \(add -> %\d+\): free %\d+ \(`, out)
	out, err = execute(t, "ir", "show", "--model", "gcn")
	require.NoError(t, err, out)
	assert.Contains(t, out, "# sparse\n")
	assert.Contains(t, out, "# segment\n")
}

func TestIRShowFusesOnWebGPU(t *testing.T) {
	if _, err := core.BackendFor(core.Device{Kind: "webgpu"}); err != nil {
		t.Skipf("no WebGPU adapter: %v", err)
	}
	out, err := execute(t, "ir", "show", "--model", "transformer", "--device", "webgpu")
	require.NoError(t, err, out)
	assert.Regexp(t, `# after fusion on webgpu:0: \d+ nodes \(\d+ ops in elementwise kernels, 0 reductions with a fused prologue, 4 epilogues\)`, out)
	assert.Regexp(t, `= fused_matmul\[relu\(add\(\$0, \$1\)\)\]\(`, out)
	out, err = execute(t, "ir", "show", "--model", "gcn", "--device", "webgpu")
	require.NoError(t, err, out)
	assert.Contains(t, out, "fused_spmm[add($0, $1)]")
	_, err = execute(t, "ir", "show", "--device", "tpu")
	assert.Error(t, err)
}
