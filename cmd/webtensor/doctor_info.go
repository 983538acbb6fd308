package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
)

// printConfig lists the WEBTENSOR_* variables set in the environment (the
// declared ones of core/config, so a misspelt name shows as unknown).
func printConfig(out io.Writer) {
	var lines []string
	for _, v := range config.Vars() {
		if val, set := os.LookupEnv(v.Name); set {
			lines = append(lines, fmt.Sprintf("  %s=%s", v.Name, val))
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, known := config.Lookup(name); strings.HasPrefix(name, "WEBTENSOR_") && !known {
			lines = append(lines, fmt.Sprintf("  %s is not a webtensor setting (docs/config.md lists them); it is ignored", name))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(out, "\nenvironment:\n%s\n", strings.Join(lines, "\n"))
	}
}

// printCUDA describes an open CUDA backend: the GPU, the driver and the
// libraries it found, where kernels are cached, the allocator and options.
func printCUDA(out io.Writer, b *cuda.Backend) {
	i := b.Info()
	fmt.Fprintf(out, "           GPU: %s, compute capability %s, %d SMs, %s; kernels built for %s\n",
		i.Name, i.ComputeCapability, i.Multiprocessors, byteCount(i.MemoryBytes), i.Arch)
	fmt.Fprintf(out, "           driver: CUDA %s (%s)\n", i.DriverVersion, i.DriverLibrary)
	fmt.Fprintf(out, "           NVRTC %s (%s); cuBLAS %d (%s)\n", i.NVRTCVersion, i.NVRTCLibrary, i.CublasVersion, i.CublasLibrary)
	fmt.Fprintf(out, "           memory: %s\n", b.MemoryStats())
	fmt.Fprintf(out, "           TF32 for f32 products: %v (WEBTENSOR_CUDA_TF32, wt.cuda.set_allow_tf32)\n", b.AllowTF32())
}

// printFallbacks lists the op calls that ran on the CPU instead of the
// device asked for (no kernel there), and the calls whose device kernel did
// declared host-side work, since the process started (here: the smoke
// tests).
func printFallbacks(out io.Writer) {
	var cpu, host []core.Fallback
	for _, f := range core.Fallbacks() {
		if f.Kind == core.FallbackHost {
			host = append(host, f)
		} else {
			cpu = append(cpu, f)
		}
	}
	if len(cpu) == 0 {
		fmt.Fprintln(out, "\nCPU fallbacks: none (every op ran on the device asked for)")
	} else {
		fmt.Fprintln(out, "\nCPU fallbacks (ops with no kernel on the device, run on the CPU and counted):")
		for _, f := range cpu {
			fmt.Fprintf(out, "  %-8s %-24s %d\n", f.Device, f.Op, f.Count)
		}
	}
	fmt.Fprintf(out, "host-side work in device kernels: %d kinds declared (webtensor ops --markdown lists them)\n", len(core.DeclaredHostWork()))
	for _, f := range host {
		fmt.Fprintf(out, "  %-8s %-24s %d  %s\n", f.Device, f.Op, f.Count, f.Reason)
	}
}
