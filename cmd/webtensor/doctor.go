package main

import (
	"errors"
	"fmt"
	"runtime"
	"sort"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

func doctorCmd() *cobra.Command {
	var measureDevices bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report versions, devices and what each backend can do",
		Long: `Print the webtensor and Go versions, the machine, the WEBTENSOR_* settings
in effect, every backend compiled in with whether it opened (and why not)
and how many ops it implements, a quick check of each device, the GPU,
driver and libraries the CUDA backend found, the WebGPU adapters, the ops
that fell back to the CPU or did host-side work, and the default device;
it checks the CPU threads and the Vulkan drivers WebGPU can load, and
measures each device's memory bandwidth and matmul throughput (--measure=false
skips that).
A backend is "absent" when the machine has no such device and "FAILED"
when it has one that did not open. Attach its output to
bug reports.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			m := core.BuildManifest()
			fmt.Fprintf(out, "webtensor %s", core.Version)
			if m.Commit != "" {
				fmt.Fprintf(out, " (commit %.12s)", m.Commit)
			}
			fmt.Fprintf(out, "\n%s %s/%s, %d CPUs\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
			printConfig(out)
			devs, failed := core.Devices()
			public := 0
			counts := map[string]int{}
			for _, op := range m.Ops {
				if op.Internal {
					continue
				}
				public++
				for _, b := range op.Backends {
					counts[b]++
				}
			}
			fmt.Fprintln(out, "\nbackends:")
			for _, d := range devs {
				b, _ := core.BackendFor(d)
				caps := b.Capabilities()
				fmt.Fprintf(out, "  %-8s ok      %s; %d of %d ops; dtypes %v\n", d, caps.Description, counts[d.Kind], public, caps.DTypes)
				fmt.Fprintf(out, "           %s\n", smokeTest(d))
				if measureDevices {
					fmt.Fprintf(out, "           %s\n", measure(d))
				}
				if g, ok := b.(*webgpu.Backend); ok {
					smokeTest(d) // again: a warm run should find every kernel compiled
					st := g.KernelCacheStats()
					fmt.Fprintf(out, "           kernel cache: %d kernels compiled, %d lookups, hit ratio %.1f%% (the smoke test ran twice)\n",
						st.Lookups-st.Hits, st.Lookups, 100*st.HitRatio())
					fmt.Fprintf(out, "           %s\n", st)
				}
				if c, ok := b.(*cuda.Backend); ok {
					printCUDA(out, c)
				}
				if caps.Software {
					fmt.Fprintf(out, "           software emulation: never the default, slower than the cpu backend; use it with --device %s or WEBTENSOR_DEVICE=%s\n", d.Kind, d.Kind)
				}
			}
			kinds := make([]string, 0, len(failed))
			for k := range failed {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			// absent: no such device here; FAILED: the device is there
			// but its backend did not open, which is a fault to report.
			for _, k := range kinds {
				state := "FAILED"
				if errors.Is(failed[k], core.ErrNoDevice) {
					state = "absent"
				}
				fmt.Fprintf(out, "  %-8s %-7s %v\n", k, state, failed[k])
			}
			printEnvironmentChecks(out)
			printAdapters(out)
			printFallbacks(out)
			fmt.Fprintf(out, "\ndefault device: %s\n", core.DefaultDevice())
			return nil
		},
	}
	cmd.Flags().BoolVar(&measureDevices, "measure", true, "time a + b and a matmul on each device (about a second each)")
	return cmd
}
