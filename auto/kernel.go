package auto

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/trace"
)

// The kernel agent (issue 22 item 10): profile the workload, tell the
// policy which ops are hot and which kernel settings exist, measure what
// it proposes, and keep the winners in the persistent kernel cache, keyed
// by workload, so the next process applies them without measuring.

// KernelAgentName names the kernel agent in the journal.
const KernelAgentName = "kernel"

// KernelCacheFile is the kernel cache's file in the framework's folder.
const KernelCacheFile = "kernels.json"

// KernelAgent tunes kernel settings on the user's workloads.
type KernelAgent struct {
	fw       *Framework
	policy   Proposer
	cache    string
	defaults map[string]string // the CPU settings as the agent found them
}

// NewKernelAgent registers the CPU backend's kernel settings, the kernel
// cache file and the WebGPU disk cache's tuning decisions with fw's state (once per framework: agents with
// different policies share them) and returns the agent.
func NewKernelAgent(fw *Framework, policy Proposer) (*KernelAgent, error) {
	a := &KernelAgent{fw: fw, policy: policy}
	for _, s := range CPUSettings() {
		if fw.settings.Has(s.Name) {
			continue
		}
		if err := fw.settings.Add(s); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, 2)
	for _, s := range CPUSettings() {
		names = append(names, s.Name)
	}
	defaults, err := fw.settings.Current(names)
	if err != nil {
		return nil, err
	}
	a.defaults = defaults
	if a.cache, err = addWinnersFile(fw); err != nil {
		return nil, err
	}
	if err := addWebGPUCache(fw); err != nil {
		return nil, err
	}
	return a, nil
}

// WithPolicy is the agent asking p instead, sharing everything else (the
// CPU settings as this agent found them above all: a new agent made after
// a kept change would take the changed values for the defaults).
func (a *KernelAgent) WithPolicy(p Proposer) *KernelAgent {
	b := *a
	b.policy = p
	return &b
}

// CPUSettings are the CPU backend's kernel knobs: the thread count of its
// worker pool (waking a helper costs a few µs, which small ops do not
// repay, and on a shared machine the second core may be busy) and the
// bytes of freed storage it keeps for reuse.
func CPUSettings() []Setting {
	var threads []string
	for n := 1; n <= runtime.GOMAXPROCS(0); n++ {
		threads = append(threads, strconv.Itoa(n))
	}
	cacheChoices := []string{"0", "67108864", "268435456", "1073741824"}
	if cur := strconv.FormatInt(cpuCacheLimit(), 10); !slices.Contains(cacheChoices, cur) {
		cacheChoices = append(cacheChoices, cur)
	}
	return []Setting{
		{Name: "cpu.threads", Doc: "threads of the CPU backend's worker pool (cpu.SetNumThreads)", Choices: threads,
			Get: func() string { return strconv.Itoa(cpu.NumThreads()) },
			Set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return fmt.Errorf("cpu.threads must be a positive integer, got %q", v)
				}
				cpu.SetNumThreads(n)
				return nil
			}},
		{Name: "cpu.cache_bytes", Doc: "bytes of freed storage the CPU backend keeps for reuse (cpu.SetCacheLimit)", Choices: cacheChoices,
			Get: func() string { return strconv.FormatInt(cpuCacheLimit(), 10) },
			Set: func(v string) error {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("cpu.cache_bytes must be a byte count, got %q", v)
				}
				cpu.SetCacheLimit(n)
				return nil
			}},
	}
}

// cpuCacheLimit reads the limit without touching the cache (setting it
// to read the old value back would drop the blocks it holds).
func cpuCacheLimit() int64 { return (*cpu.Backend)(nil).MemoryStats().Limit }

// SettingsOwner is a workload with settings of its own (a graph's fusion
// switch), which it registers and the kernel agent offers to the policy.
type SettingsOwner interface {
	OwnSettings() []Setting
}

// Register adds w's own settings to fw, once.
func Register(fw *Framework, w Workload) error {
	o, ok := w.(SettingsOwner)
	if !ok {
		return nil
	}
	for _, s := range o.OwnSettings() {
		if fw.settings.Has(s.Name) {
			continue
		}
		if err := fw.settings.Add(s); err != nil {
			return err
		}
	}
	return nil
}

// Tune profiles w, asks the policy, and decides each proposal on w (the
// canary) and the rollout workloads. It returns the decisions made; a
// policy that fails (a trap, a timeout, a malformed answer) is an error
// and changes nothing.
func (a *KernelAgent) Tune(w Workload, rollout ...Workload) ([]Decision, error) {
	for _, x := range rollout {
		if err := Register(a.fw, x); err != nil {
			return nil, err
		}
	}
	if err := a.ApplyCached(w); err != nil {
		return nil, err
	}
	hot, err := Profile(w)
	if err != nil {
		return nil, err
	}
	names := []string{"cpu.threads", "cpu.cache_bytes"}
	if o, ok := w.(SettingsOwner); ok {
		for _, s := range o.OwnSettings() {
			names = append(names, s.Name)
		}
	}
	req := Request{Agent: KernelAgentName, Workload: w.Name(), Device: "cpu", HotOps: hot,
		Settings: a.fw.settings.Info(names...), History: a.fw.history(KernelAgentName, w.Name())}
	props, _, err := ask(a.policy, req)
	if err != nil {
		return nil, err
	}
	trial := Trial{Workloads: append([]Workload{w}, rollout...), Commit: func(p Proposal) error {
		return rememberWinners(a.cache, w.Name(), p.Change)
	}}
	var out []Decision
	for _, p := range props {
		d, err := a.fw.Evaluate(KernelAgentName, a.policy.PolicyName(), p, trial)
		out = append(out, d)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// kernelCache is the file's content: per workload, the settings that won.
// The data agent keeps its loaders' winners in the same file, under
// "data:<loader>", so one file component covers both and a rollback of
// either restores it.
type kernelCache map[string]map[string]string

func readWinners(path string) (kernelCache, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return kernelCache{}, nil
	}
	if err != nil {
		return nil, err
	}
	c := kernelCache{}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("auto: kernel cache %s: %w", path, err)
	}
	return c, nil
}

func rememberWinners(path, key string, change map[string]string) error {
	c, err := readWinners(path)
	if err != nil {
		return err
	}
	if c[key] == nil {
		c[key] = map[string]string{}
	}
	for k, v := range change {
		c[key][k] = v
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// addWinnersFile registers the kernel cache file with fw's state, once.
func addWinnersFile(fw *Framework) (string, error) {
	path := filepath.Join(fw.journal.Dir(), KernelCacheFile)
	if slices.Contains(fw.state.Names(), "kernel_cache") {
		return path, nil
	}
	return path, fw.state.Add(FileComponent{Label: "kernel_cache", Path: path})
}

// Cached is the settings the kernel cache holds for workload.
func (a *KernelAgent) Cached(workload string) (map[string]string, error) {
	c, err := readWinners(a.cache)
	if err != nil {
		return nil, err
	}
	return c[workload], nil
}

// ApplyCached puts in force the settings for w: the CPU settings as the
// agent found them, then what the cache holds for w - the way a later
// process reuses winners without measuring again. The CPU settings are
// global, so without the reset one workload's winner (one thread for
// small ops) would be in force while another is measured and tuned.
func (a *KernelAgent) ApplyCached(w Workload) error {
	if err := Register(a.fw, w); err != nil {
		return err
	}
	c, err := a.Cached(w.Name())
	if err != nil {
		return err
	}
	if err := a.fw.settings.Apply(a.defaults); err != nil {
		return err
	}
	return a.fw.settings.Apply(c)
}

// Profile runs w once under the op recorder and returns its ops by time,
// the top-level calls only (an op's inner calls are part of its time).
func Profile(w Workload) ([]HotOp, error) {
	rec, err := trace.Start(trace.WithSync())
	if err != nil {
		return nil, fmt.Errorf("auto: profiling %s: %w", w.Name(), err)
	}
	_, runErr := w.Run()
	t := rec.Stop()
	if runErr != nil {
		return nil, fmt.Errorf("auto: profiling %s: %w", w.Name(), runErr)
	}
	by := map[string]*HotOp{}
	var total float64
	for _, e := range t.Events {
		if e.Depth != 0 {
			continue
		}
		h := by[e.Op]
		if h == nil {
			h = &HotOp{Op: e.Op}
			by[e.Op] = h
		}
		h.Calls++
		h.Seconds += e.Duration.Seconds()
		h.Bytes += e.Bytes
		total += e.Duration.Seconds()
	}
	out := make([]HotOp, 0, len(by))
	for _, h := range by {
		if total > 0 {
			h.Share = h.Seconds / total
		}
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return strings.Compare(out[i].Op, out[j].Op) < 0
	})
	if len(out) > 8 {
		out = out[:8]
	}
	return out, nil
}
