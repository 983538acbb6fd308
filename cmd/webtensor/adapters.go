package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

// printAdapters lists every WebGPU adapter with its driver, backend,
// features and the limits that bound tensor sizes and kernels, then the
// kernel-variant decisions measured on this machine.
func printAdapters(out io.Writer) {
	ads := webgpu.Adapters()
	fmt.Fprintf(out, "\nwebgpu adapters: %d\n", len(ads))
	for i, a := range ads {
		l := a.Limits
		fmt.Fprintf(out, "  %d: %s (%s, %s)\n", i, strings.TrimSpace(a.Driver), a.Backend, a.Type)
		fmt.Fprintf(out, "     limits: buffer %s, storage binding %s, %d storage buffers, workgroup %d invocations, %s workgroup memory\n",
			byteCount(l.MaxBufferSize), byteCount(l.MaxStorageBufferBindingSize), l.MaxStorageBuffersPerShaderStage,
			l.MaxComputeInvocationsPerWorkgroup, byteCount(uint64(l.MaxComputeWorkgroupStorageSize)))
		fmt.Fprintf(out, "     features: %s\n", strings.Join(a.Features, " "))
	}
	if b, err := core.BackendFor(core.Device{Kind: "webgpu"}); err == nil {
		g := b.(*webgpu.Backend)
		fmt.Fprintf(out, "  in use: %s; requested features: %v\n", g.Capabilities().Description, g.Features())
		if name := webgpu.DefaultPolicyName(); name != "" {
			fmt.Fprintf(out, "  tuning policy: %s\n", name)
		}
		for key, rec := range g.Tuning() {
			line := fmt.Sprintf("  tuned %s -> %s %v", key, rec.Variant, rec.Timings)
			if rec.Policy != "" {
				line += fmt.Sprintf(" (policy %s proposed %s: %s)", rec.Policy, rec.Proposed, rec.Reason)
			}
			fmt.Fprintln(out, line)
		}
	}
}

func byteCount(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
