package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/auto/parallel"
	_ "github.com/webtensor/webtensor/backends/cpu"
	_ "github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

func main() {
	parallel.ServeIfWorker() // auto parallel starts this program as its workers
	stop := traceFromConfig()
	err := rootCmd().Execute()
	stop()
	if err != nil {
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "webtensor",
		Short: "A portable tensor and machine-learning runtime",
		Long: `webtensor runs the same tensor programs on every device: a pure-Go CPU
backend, WebGPU (Vulkan, Metal, DX12) and CUDA.

Environment:
  WEBTENSOR_DEVICE   device to use by default (one of the devices below); the
                     best device that opens is used when unset
  webtensor config lists every setting.`,
		Version:       core.Version,
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(opsCmd(), doctorCmd(), configCmd(), runCmd(), pluginCmd(), irCmd(), traceCmd(), flameCmd(), opCmd(), autoCmd())
	withDevicesHelp(root)
	withTuningPolicy(root)
	return root
}

// fail prints an error that says how to fix it and exits non-zero.
func fail(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}
