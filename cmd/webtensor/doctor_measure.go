package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// measure gives a device's two quick figures: memory bandwidth (a + b on
// 4M f32: two reads and a write of 16 MB each) and matmul throughput
// (512 x 512 f32), each the best of three timed runs after a warm-up,
// waiting for the device so a GPU's queue is not mistaken for its speed.
func measure(dev core.Device) string {
	b, err := core.BackendFor(dev)
	if err != nil {
		return "measure: " + err.Error()
	}
	sync := func() error {
		if s, ok := b.(interface{ Sync() error }); ok {
			return s.Sync()
		}
		return nil
	}
	best := func(run func() *core.Tensor) (time.Duration, error) {
		var fastest time.Duration
		for i := range 4 { // the first run compiles and warms up
			start := time.Now()
			out := run()
			if err := out.Err(); err != nil {
				return 0, err
			}
			if err := sync(); err != nil {
				return 0, err
			}
			took := time.Since(start)
			out.Release()
			if i > 0 && (fastest == 0 || took < fastest) {
				fastest = took
			}
		}
		return fastest, nil
	}
	const n, m = 1 << 22, 512
	x := core.Call1("randn", core.Attrs{"shape": []int{n}, "seed": 1, "device": dev.String()})
	y := core.Call1("randn", core.Attrs{"shape": []int{n}, "seed": 2, "device": dev.String()})
	a := core.Call1("randn", core.Attrs{"shape": []int{m, m}, "seed": 3, "device": dev.String()})
	add, err := best(func() *core.Tensor { return core.Call1("add", nil, x, y) })
	if err != nil {
		return "measure: add: " + err.Error()
	}
	mm, err := best(func() *core.Tensor { return core.Call1("matmul", nil, a, a) })
	if err != nil {
		return "measure: matmul: " + err.Error()
	}
	gbs := 3 * 4 * float64(n) / add.Seconds() / 1e9
	gflops := 2 * float64(m*m*m) / mm.Seconds() / 1e9
	return fmt.Sprintf("measured: bandwidth %.1f GB/s (a + b, 4M f32), matmul %.1f GFLOP/s (512 x 512 f32)", gbs, gflops)
}

// printEnvironmentChecks reports what the backends depend on outside the
// program: the CPU threads, and the Vulkan drivers (ICDs) the WebGPU
// backend can load, with where the loader looks for them.
func printEnvironmentChecks(out io.Writer) {
	fmt.Fprintln(out, "\nchecks:")
	fmt.Fprintf(out, "  cpu threads: %d (WEBTENSOR_NUM_THREADS or wt_set_num_threads change it)\n", cpu.NumThreads())
	if files := os.Getenv("VK_ICD_FILENAMES"); files != "" {
		fmt.Fprintf(out, "  vulkan drivers: VK_ICD_FILENAMES=%s (the loader uses only these)\n", files)
		return
	}
	var icds []string
	for _, dir := range []string{"/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		icds = append(icds, matches...)
	}
	sort.Strings(icds)
	if len(icds) == 0 {
		fmt.Fprintln(out, "  vulkan drivers: none found in the loader's folders; WebGPU needs one (a GPU driver, or Mesa's lavapipe: apt-get install mesa-vulkan-drivers)")
		return
	}
	names := make([]string, len(icds))
	for i, p := range icds {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".json")
	}
	fmt.Fprintf(out, "  vulkan drivers: %s\n", strings.Join(names, ", "))
}
