//go:build linux && cgo

package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmulatorUsesThePrecompiledPrelude holds the emulator to its
// precompiled header: GCC silently parses the header's text again when
// the flags of a kernel's compile and the header's differ, which would
// double the CI's emulator time without failing anything else.
func TestEmulatorUsesThePrecompiledPrelude(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skipf("no g++ for the CUDA emulator: %v", err)
	}
	d := &emuDevice{dir: t.TempDir(), cxx: "g++"}
	include := d.precompiledPrelude()
	require.NotEmpty(t, include, "the prelude did not precompile")
	name := strings.TrimSuffix(strings.TrimPrefix(include, "#include \""), "\"\n")
	require.FileExists(t, filepath.Join(d.dir, name+".gch"))

	src := filepath.Join(d.dir, "kernel.cc")
	body := "\nextern \"C\" __global__ void wt_kernel(const WtArgs A) {}\n"
	require.NoError(t, os.WriteFile(src, []byte(include+body+emuTail), 0o644))
	args := append(emuFlags, "-pipe", "-shared", "-H", "-Winvalid-pch", "-o", filepath.Join(d.dir, "k.so"), src)
	out, err := exec.Command("g++", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// -H marks a precompiled header it used with "!", one it refused with "x".
	first, _, _ := strings.Cut(string(out), "\n")
	require.Equal(t, "! "+filepath.Join(d.dir, name+".gch"), first, "g++ -H's first line")

	// The same kernel from its full text builds too: the path taken when
	// the header cannot be precompiled.
	d2 := &emuDevice{dir: t.TempDir(), cxx: "g++", live: map[devicePtr]uint64{}}
	d2.preludeOnce.Do(func() {})
	_, err = d2.build("plain", prelude+body)
	require.NoError(t, err)
}
