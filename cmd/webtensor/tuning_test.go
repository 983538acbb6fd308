package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
)

// cliChild is set in the process TestTuningPolicyFlag starts: the policy is
// read once per process, so each case runs the CLI in its own.
const cliChild = "WT_CLI_CHILD_ARGS"

// --tuning-policy loads the policy when WebGPU opens (doctor names it); a
// module that does not load fails the WebGPU backend with the setting named.
func TestTuningPolicyFlag(t *testing.T) {
	if args := os.Getenv(cliChild); args != "" {
		out, err := execute(t, strings.Split(args, "\x1f")...)
		fmt.Print(out)
		if err != nil {
			fmt.Println("error:", err)
		}
		return
	}
	webgputest.Need(t)
	policy, err := filepath.Abs(filepath.Join("..", "..", "build", "plugins", "policy-kernel-variant.wasm"))
	require.NoError(t, err)
	if _, err := os.Stat(policy); err != nil {
		t.Skipf("%s is missing: run make plugins", policy)
	}
	child := func(args ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTuningPolicyFlag$")
		cmd.Env = append(os.Environ(), cliChild+"="+strings.Join(args, "\x1f"), "XDG_CACHE_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	out := child("doctor", "--tuning-policy", policy)
	assert.Contains(t, out, "tuning policy: tuning.kernel_variant")
	missing := filepath.Join(t.TempDir(), "missing.wasm")
	out = child("doctor", "--tuning-policy", missing)
	assert.Regexp(t, `webgpu +FAILED +webgpu: WEBTENSOR_TUNING_POLICY=".*missing.wasm": .*no such file`, out)
}
