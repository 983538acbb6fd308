package sdk

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilesCarryTheSDKs(t *testing.T) {
	_, err := fs.Stat(Files, "c/wtplugin.h")
	assert.NoError(t, err)
	gos, err := fs.Glob(Files, "go/wtplugin/*.go")
	require.NoError(t, err)
	assert.Contains(t, gos, "go/wtplugin/exports_wasip1.go")
}

// The C header's own tests run natively: the allocator, the attribute
// scanner, the error formatter and its math against the platform's libm.
func TestCHeader(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH: apt-get install gcc")
	}
	bin := filepath.Join(t.TempDir(), "wtplugin_test")
	out, err := exec.Command(cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
		"-o", bin, filepath.Join("c", "wtplugin_test.c"), "-lm").CombinedOutput()
	require.NoError(t, err, "compiling c/wtplugin_test.c:\n%s", out)
	out, err = exec.Command(bin).CombinedOutput()
	assert.NoError(t, err, "%s", out)
	assert.Equal(t, "ok\n", string(out))
}
