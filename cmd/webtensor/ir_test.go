package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
