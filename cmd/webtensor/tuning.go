package main

import (
	"context"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/backends/webgpu"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// withTuningPolicy gives every command --tuning-policy: the WebGPU tuner
// asks that WebAssembly policy which kernel variant to try. The flag stands
// for WEBTENSOR_TUNING_POLICY (it sets the variable for this process, so
// the backend reads one setting whichever way it came), and this program
// links the plugin host that loads the module.
func withTuningPolicy(root *cobra.Command) {
	var spec string
	root.PersistentFlags().StringVar(&spec, "tuning-policy", "",
		"a WebAssembly tuning policy (module.wasm or module.wasm#policy) the WebGPU tuner asks which kernel variant to try; make plugins builds the default, build/plugins/policy-kernel-variant.wasm (same as WEBTENSOR_TUNING_POLICY)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if spec != "" {
			return os.Setenv("WEBTENSOR_TUNING_POLICY", spec)
		}
		return nil
	}
	webgpu.SetPolicyLoader(loadTuningPolicy)
}

// policyHost is the sandbox the CLI's policy runs in, made on first use.
var policyHost = sync.OnceValues(func() (*plugins.Host, error) {
	return plugins.NewHost(context.Background(), plugins.NewConfig())
})

func loadTuningPolicy(spec string) (webgpu.Policy, error) {
	h, err := policyHost()
	if err != nil {
		return nil, err
	}
	q, err := h.LoadPolicy(context.Background(), spec)
	if err != nil {
		return nil, err
	}
	return q, nil
}
