package parallel

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/webtensor/webtensor/core"
)

// Device is one place a part of the model can run.
type Device struct {
	Name   string  `json:"name"`   // "cpu", "webgpu", "proc0"
	Kind   string  `json:"kind"`   // "cpu", "webgpu", "process"
	Host   string  `json:"host"`   // devices of one host share its cores
	GFLOPS float64 `json:"gflops"` // f32 matmul throughput measured alone
	// SharedGFLOPS is the throughput while every worker of the host
	// computes at once (processes only).
	SharedGFLOPS float64 `json:"shared_gflops,omitempty"`
	GBps         float64 `json:"gbps"`         // memory bandwidth (a copy), GB/s
	MemoryBytes  int64   `json:"memory_bytes"` // what the device may hold
	// OpMicros is one small op's fixed cost (a launch, a dispatch and its
	// wait), which dominates a small model's step on a GPU.
	OpMicros float64 `json:"op_us,omitempty"`
}

// Link joins two devices; a star link "parent"-"procN" carries a
// worker's traffic through the parent process.
type Link struct {
	A         string  `json:"a"`
	B         string  `json:"b"`
	GBps      float64 `json:"gbps"`
	LatencyUs float64 `json:"latency_us"`
	// SharedGBps is the bandwidth while every link carries data at once.
	SharedGBps float64 `json:"shared_gbps,omitempty"`
}

// Cluster is what a plan may use.
type Cluster struct {
	Devices []Device       `json:"devices"`
	Links   []Link         `json:"links"`
	Cores   map[string]int `json:"cores"` // per host
}

// Processes are the cluster's worker-process devices, in name order.
func (c Cluster) Processes() []Device {
	var out []Device
	for _, d := range c.Devices {
		if d.Kind == "process" {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// link is the link to device name from the parent.
func (c Cluster) link(name string) (Link, error) {
	for _, l := range c.Links {
		if l.B == name || l.A == name {
			return l, nil
		}
	}
	return Link{}, fmt.Errorf("parallel: the cluster has no link to %s (links %v)", name, c.Links)
}

// Measure describes this machine: the CPU backend (every thread), the
// WebGPU device when wgpu names one that opens, and the workers (each one
// thread, as they run), with the pipe from the parent to each.
func Measure(workers []*Worker, webgpu *core.Device) (Cluster, error) {
	c := Cluster{Cores: map[string]int{"local": runtime.NumCPU()}}
	mem := memAvailable()
	cpuDev := core.Device{Kind: "cpu"}
	g, bw, opUs, err := measureDevice(cpuDev)
	if err != nil {
		return c, err
	}
	c.Devices = append(c.Devices, Device{Name: "cpu", Kind: "cpu", Host: "local", GFLOPS: g, GBps: bw, MemoryBytes: mem, OpMicros: opUs})
	if webgpu != nil {
		g, bw, opUs, err := measureDevice(*webgpu)
		if err != nil {
			return c, fmt.Errorf("parallel: measuring %s: %w", webgpu, err)
		}
		// lavapipe's memory is the host's; a real GPU's limit would come
		// from its adapter.
		c.Devices = append(c.Devices, Device{Name: "webgpu", Kind: "webgpu", Host: "local", GFLOPS: g, GBps: bw, MemoryBytes: mem, OpMicros: opUs})
	}
	cpuOpUs := c.Devices[0].OpMicros
	// All workers at once: the rate each keeps while the others compute
	// and the parent moves their data (the host's cores are shared, and on
	// a loaded machine not all of them are free).
	shared, sharedBW, err := measureTogether(workers)
	if err != nil {
		return c, err
	}
	for i, w := range workers {
		name := fmt.Sprintf("proc%d", i)
		g, err := workerGFLOPS(w)
		if err != nil {
			return c, err
		}
		c.Devices = append(c.Devices, Device{Name: name, Kind: "process", Host: "local", GFLOPS: g, SharedGFLOPS: shared[i], GBps: bw,
			MemoryBytes: mem / int64(len(workers)), OpMicros: cpuOpUs})
		l, err := measureLink(w)
		if err != nil {
			return c, err
		}
		l.A, l.B, l.SharedGBps = "parent", name, sharedBW[i]
		c.Links = append(c.Links, l)
	}
	return c, nil
}

// measureDevice times a 256 x 256 product (best of 5), a 16 MiB copy and
// a 16-element add (best of 8, with the wait for its result).
func measureDevice(d core.Device) (gflops, gbps, opUs float64, err error) {
	const n = 256
	rng := rand.New(rand.NewSource(1))
	v := make([]float32, n*n)
	for i := range v {
		v[i] = rng.Float32()
	}
	a := core.FromSlice(v, core.Shape{n, n}, d)
	if err := a.Err(); err != nil {
		return 0, 0, 0, err
	}
	best := time.Duration(1 << 62)
	for i := range 6 {
		start := time.Now()
		c := a.Matmul(a)
		if _, err := c.Bytes(); err != nil {
			return 0, 0, 0, err
		}
		if t := time.Since(start); i > 0 && t < best {
			best = t
		}
		c.Release()
	}
	gflops = 2 * n * n * n / best.Seconds() / 1e9
	big := core.FromSlice(make([]float32, 4<<20), core.Shape{4 << 20}, d)
	bestCopy := time.Duration(1 << 62)
	for i := range 4 {
		start := time.Now()
		c := core.Call1("add", nil, big, big)
		if _, err := c.Bytes(); err != nil {
			return 0, 0, 0, err
		}
		if t := time.Since(start); i > 0 && t < bestCopy {
			bestCopy = t
		}
		c.Release()
	}
	gbps = 3 * 16 << 20 / bestCopy.Seconds() / 1e9 // two reads, one write
	small := core.FromSlice(make([]float32, 16), core.Shape{16}, d)
	bestOp := time.Duration(1 << 62)
	for i := range 9 {
		start := time.Now()
		c := core.Call1("add", nil, small, small)
		if _, err := c.Bytes(); err != nil {
			return 0, 0, 0, err
		}
		if t := time.Since(start); i > 0 && t < bestOp {
			bestOp = t
		}
		c.Release()
	}
	return gflops, gbps, float64(bestOp.Nanoseconds()) / 1e3, nil
}

// workerGFLOPS times a 256 x 256 product in the worker (best of 5, the
// worker's own clock, so the pipe is not counted).
func workerGFLOPS(w *Worker) (float64, error) {
	const n = 256
	v := make([]float32, n*n)
	for i := range v {
		v[i] = float32(i%7) / 7
	}
	best := 1e9
	for i := range 6 {
		r, err := w.call(msg{Op: "matmul", Data: [][]float32{v, v}, Shapes: []core.Shape{{n, n}, {n, n}}})
		if err != nil {
			return 0, err
		}
		if i > 0 {
			best = min(best, r.Seconds)
		}
	}
	return 2 * n * n * n / best / 1e9, nil
}

// measureLink times echoes: 8 bytes for the latency, 4 MiB for the
// bandwidth (each way, so the round trip carries twice the bytes).
func measureLink(w *Worker) (Link, error) {
	rt := func(n int) (float64, error) {
		best := 1e9
		payload := [][]float32{make([]float32, n)}
		for range 4 {
			start := time.Now()
			if _, err := w.call(msg{Op: "echo", Data: payload}); err != nil {
				return 0, err
			}
			best = min(best, time.Since(start).Seconds())
		}
		return best, nil
	}
	small, err := rt(2)
	if err != nil {
		return Link{}, err
	}
	large, err := rt(1 << 20)
	if err != nil {
		return Link{}, err
	}
	return Link{LatencyUs: small / 2 * 1e6, GBps: 2 * 4 << 20 / max(large-small, 1e-9) / 1e9}, nil
}

// memAvailable is /proc/meminfo's MemAvailable, 8 GiB where unreadable.
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 8 << 30
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 8 << 30
}

// measureTogether times every worker's product and echo at once (the
// median of 5 rounds) and returns each worker's rate and bandwidth.
func measureTogether(workers []*Worker) ([]float64, []float64, error) {
	const n = 256
	v := make([]float32, n*n)
	big := make([]float32, 1<<20)
	g, bw := make([]float64, len(workers)), make([]float64, len(workers))
	for i := range workers {
		g[i], bw[i] = 1e18, 0
	}
	rounds := make([][]float64, len(workers))
	links := make([][]float64, len(workers))
	for range 5 {
		err := parallelDo(len(workers), func(i int) error {
			r, err := workers[i].call(msg{Op: "matmul", Data: [][]float32{v, v}, Shapes: []core.Shape{{n, n}, {n, n}}})
			if err != nil {
				return err
			}
			rounds[i] = append(rounds[i], r.Seconds)
			start := time.Now()
			if _, err := workers[i].call(msg{Op: "echo", Data: [][]float32{big}}); err != nil {
				return err
			}
			links[i] = append(links[i], time.Since(start).Seconds())
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	for i := range workers {
		sort.Float64s(rounds[i])
		sort.Float64s(links[i])
		g[i] = 2 * n * n * n / rounds[i][2] / 1e9
		bw[i] = 2 * 4 << 20 / links[i][2] / 1e9
	}
	return g, bw, nil
}

// Validate says what a cluster description lacks for pricing plans: every
// device a name, a kind (cpu, webgpu, process) and positive rates and
// memory; every process a link from the parent with a bandwidth.
func (c Cluster) Validate() error {
	if len(c.Devices) == 0 {
		return fmt.Errorf("parallel: the cluster has no devices")
	}
	seen := map[string]bool{}
	for i, d := range c.Devices {
		switch {
		case d.Name == "" || seen[d.Name]:
			return fmt.Errorf("parallel: device %d's name %q is empty or repeated", i, d.Name)
		case d.Kind != "cpu" && d.Kind != "webgpu" && d.Kind != "process":
			return fmt.Errorf("parallel: device %s is a %q; a cluster's devices are cpu, webgpu or process", d.Name, d.Kind)
		case !(d.GFLOPS > 0) || !(d.GBps > 0) || d.MemoryBytes <= 0 || d.OpMicros < 0 || d.SharedGFLOPS < 0:
			return fmt.Errorf("parallel: device %s needs positive gflops, gbps and memory_bytes, got %g, %g, %d", d.Name, d.GFLOPS, d.GBps, d.MemoryBytes)
		}
		seen[d.Name] = true
		if d.Kind == "process" {
			l, err := c.link(d.Name)
			if err != nil {
				return err
			}
			if !(l.GBps > 0) || l.LatencyUs < 0 || l.SharedGBps < 0 {
				return fmt.Errorf("parallel: the link to %s needs a positive gbps and a latency of 0 or more, got %g GB/s, %g us", d.Name, l.GBps, l.LatencyUs)
			}
		}
	}
	return nil
}
