package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quietChildArg marks this test binary, re-run, as the child of
// TestDoctorPrintsNothingToStderr.
const quietChildArg = "quiet-child"

// Starting the library (both backends' instances, every adapter, a kernel
// on each device) prints nothing to stderr, even where XDG_RUNTIME_DIR is
// unset: Mesa's Vulkan device-select layer and wgpu's EGL probe used to
// print "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
// up to nine times. The doctor runs in a fresh process (the instance is
// made once per process) with the variables that would quieten Mesa unset.
func TestDoctorPrintsNothingToStderr(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDoctorQuietChild$", "-test.count=1", "-test.v", quietChildArg)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "XDG_RUNTIME_DIR", "NODEVICE_SELECT", "MESA_VK_DEVICE_SELECT", "DRI_PRIME":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "WEBTENSOR_CACHE_DIR="+t.TempDir(), "WEBTENSOR_TUNE=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	require.Contains(t, stdout.String(), "--- PASS: TestDoctorQuietChild", "the child ran the doctor")
	assert.Empty(t, stderr.String(), "stderr of `webtensor doctor` without XDG_RUNTIME_DIR")
}

// TestDoctorQuietChild is not a test: it is the body of the child process
// above, and skips unless started as one.
func TestDoctorQuietChild(t *testing.T) {
	if flag.Arg(0) != quietChildArg {
		t.Skip("runs only as the child of TestDoctorPrintsNothingToStderr")
	}
	out, err := execute(t, "doctor")
	require.NoError(t, err, out)
	require.Contains(t, out, "default device:", out)
}
