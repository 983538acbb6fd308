package reftest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/internal/modelfs"
)

// ZipOf opens a zip archive of a model folder, as the browser hands one
// over, so a test can check that loading through FromFS reads what the
// folder holds.
func ZipOf(t testing.TB, dir string) *modelfs.Zip {
	t.Helper()
	data, err := modelfs.ZipFolder(dir)
	require.NoError(t, err)
	z, err := modelfs.OpenZip(data, 1<<30)
	require.NoError(t, err)
	return z
}
