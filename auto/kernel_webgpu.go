package auto

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/webtensor/webtensor/backends/webgpu"
)

// The kernel agent on a WebGPU device (issue 22 item 10): profile the
// workload's kernels, take the tuning decisions its hot ops consult
// (a matmul's shape class, an elementwise launch's workgroup size),
// synthesise variants for them from the backend's parametrised template
// (tile rows and columns, vector width, K unrolling, workgroup shape),
// check each against the default kernel before timing it, screen the
// survivors on the decision's own launch, and let the policy pick which to
// measure A/B on the whole workload. A winner goes to the backend's disk
// cache, keyed by device signature, op and shape class, where any later
// process on this device finds it without measuring.

// WebGPUCacheComponent is the state component of the WebGPU disk cache's
// tuning decisions (every device's), so a rollback restores them exactly.
const WebGPUCacheComponent = "webgpu_cache"

// WebGPUOptions bound a tuning call.
type WebGPUOptions struct {
	MaxKeys  int      // hot decisions tuned a call; 0 is 2
	MinShare float64  // of the profiled kernel time a decision must have; 0 is 0.05
	Screen   int      // variants checked and timed per decision; 0 is 24
	Extra    []string // variants screened besides the synthesised ones (checked like them)
}

func (o WebGPUOptions) withDefaults() WebGPUOptions {
	if o.MaxKeys <= 0 {
		o.MaxKeys = 2
	}
	if o.MinShare <= 0 {
		o.MinShare = 0.05
	}
	if o.Screen <= 0 {
		o.Screen = 24
	}
	return o
}

// hotKey is a tuning decision the profile found hot.
type hotKey struct {
	use   webgpu.KernelUse
	share float64
	ops   []string
}

// TuneWebGPU tunes the kernels dev runs for w (the canary) and the rollout
// workloads. It returns every decision made: the synthesised variants that
// failed their check (rejected before any timing) and the policy's
// proposals.
func (a *KernelAgent) TuneWebGPU(dev *webgpu.Backend, w Workload, o WebGPUOptions, rollout ...Workload) ([]Decision, error) {
	o = o.withDefaults()
	for _, x := range append([]Workload{w}, rollout...) {
		if err := Register(a.fw, x); err != nil {
			return nil, err
		}
	}
	// A first run builds the kernels and lets the backend's own tuner make
	// its decisions, so neither lands in the profile or a trial's state.
	if _, err := w.Run(); err != nil {
		return nil, fmt.Errorf("auto: warming up %s: %w", w.Name(), err)
	}
	hot, hotKeys, err := profileWebGPU(dev, w, o)
	if err != nil {
		return nil, err
	}
	var out []Decision
	var infos []KernelInfo
	var names []string
	for _, k := range hotKeys {
		info, wrong, err := a.screen(dev, k, o)
		if err != nil {
			return out, err
		}
		for _, v := range wrong {
			p := Proposal{What: info.Setting + "=" + v, ExpectedGain: 0, Change: map[string]string{info.Setting: v},
				Why: "a synthesised variant of " + k.use.Key + "; checked against the default kernel before any timing"}
			d, err := a.fw.Evaluate(KernelAgentName, "synthesis", p, Trial{Workloads: []Workload{w}, Guard: a.guard(dev)})
			out = append(out, d)
			if err != nil {
				return out, err
			}
		}
		infos = append(infos, info)
		names = append(names, info.Setting)
	}
	if len(infos) == 0 {
		return out, nil
	}
	if a.policy == nil {
		return out, fmt.Errorf("auto: the kernel agent has no policy to ask")
	}
	req := Request{Agent: KernelAgentName, Workload: w.Name(), Device: webgpuName(dev), HotOps: hot,
		Settings: a.fw.settings.Info(names...), History: a.fw.history(KernelAgentName, w.Name()), Kernels: infos}
	props, _, err := ask(a.policy, req)
	if err != nil {
		return out, err
	}
	timings := map[string]map[string]int64{}
	for _, in := range infos {
		t := map[string]int64{in.Current: int64(in.CurrentSeconds * 1e9)}
		for _, c := range in.Candidates {
			t[c.Variant] = int64(c.Seconds * 1e9)
		}
		timings[in.Key] = t
	}
	for _, p := range props {
		trial := Trial{Workloads: append([]Workload{w}, rollout...), Guard: a.guard(dev), Commit: func(p Proposal) error {
			for _, name := range keys(p.Change) {
				key, ok := strings.CutPrefix(name, webgpuSettingPrefix)
				if !ok {
					continue
				}
				if err := dev.PersistTuning(key, p.Change[name], a.policy.PolicyName(), p.Why, timings[key]); err != nil {
					return err
				}
			}
			return nil
		}}
		d, err := a.fw.Evaluate(KernelAgentName, a.policy.PolicyName(), p, trial)
		out = append(out, d)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func webgpuName(dev *webgpu.Backend) string {
	return "webgpu:" + strings.TrimSpace(dev.Info().DriverDescription)
}

// profileWebGPU runs w once under the op recorder and the device's kernel
// profile and returns the hot ops and the hot synthesisable decisions.
func profileWebGPU(dev *webgpu.Backend, w Workload, o WebGPUOptions) ([]HotOp, []hotKey, error) {
	dev.ResetKernelUses()
	dev.StartKernelProfile()
	hot, err := Profile(w)
	kernels := dev.StopKernelProfile()
	if err != nil {
		return nil, nil, err
	}
	var total time.Duration
	for _, k := range kernels {
		total += k.Total
	}
	var out []hotKey
	for _, u := range dev.KernelUses() {
		if !webgpu.Synthesisable(u.Key) {
			continue
		}
		family := "matmul" // a kernel key's first field (pipeline keys: "matmul|<variant>|...")
		if u.Kind == "map-wg" {
			family = "map"
		}
		h := hotKey{use: u}
		var spent time.Duration
		for _, k := range kernels {
			op, fam, _ := strings.Cut(k.Kernel, "/")
			if u.Ops[op] > 0 && strings.HasPrefix(fam, family) {
				spent += k.Total
				h.ops = append(h.ops, op)
			}
		}
		if total > 0 {
			h.share = spent.Seconds() / total.Seconds()
		}
		if h.share >= o.MinShare {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].share > out[j].share })
	if len(out) > o.MaxKeys {
		out = out[:o.MaxKeys]
	}
	return hot, out, nil
}

// webgpuSettingPrefix names a decision's setting: "webgpu.matmul|<class>".
const webgpuSettingPrefix = "webgpu."

// autoVariant is the setting's value while the device holds no decision.
const autoVariant = "auto"

// screen registers k's setting, synthesises its variants, checks each
// against the default kernel and times those that pass; it returns what
// the policy is told and the variants that failed their check.
func (a *KernelAgent) screen(dev *webgpu.Backend, k hotKey, o WebGPUOptions) (KernelInfo, []string, error) {
	key := k.use.Key
	name := webgpuSettingPrefix + key
	current := dev.TuningVariant(key)
	if current == "" {
		current = autoVariant
	}
	space := synthSpace(k.use)
	var extra []string
	for _, v := range o.Extra {
		if dev.Runnable(key, v) == nil {
			extra = append(extra, v)
		}
	}
	if !a.fw.settings.Has(name) {
		choices := append([]string{current}, space...)
		choices = append(choices, extra...)
		s := Setting{Name: name, Doc: "the kernel variant of " + key + " on " + webgpuName(dev), Choices: dedupe(choices), Default: current,
			Get: func() string {
				if v := dev.TuningVariant(key); v != "" {
					return v
				}
				return autoVariant
			},
			Set: func(v string) error {
				if v == autoVariant {
					v = ""
				}
				return dev.SetTuning(key, v)
			}}
		if err := a.fw.settings.Add(s); err != nil {
			return KernelInfo{}, nil, err
		}
	}
	info := KernelInfo{Setting: name, Key: key, Ops: k.ops, Share: k.share, Current: current}
	base := current
	if base == autoVariant {
		base = "" // no decision to time: CurrentSeconds stays 0, unknown
	}
	var wrong []string
	timeOf := map[string]float64{}
	try := func(v string) error {
		if _, done := timeOf[v]; done || slices.Contains(wrong, v) || v == current {
			return nil
		}
		c, err := dev.CheckVariant(key, v)
		if err != nil {
			return fmt.Errorf("auto: checking %s=%s: %w", key, v, err)
		}
		if !c.OK {
			wrong = append(wrong, v)
			return nil
		}
		d, err := dev.TimeVariant(key, v, 3)
		if err != nil {
			return fmt.Errorf("auto: timing %s=%s: %w", key, v, err)
		}
		timeOf[v] = d.Seconds()
		return nil
	}
	if base != "" {
		d, err := dev.TimeVariant(key, base, 3)
		if err != nil {
			return info, nil, fmt.Errorf("auto: timing %s=%s: %w", key, base, err)
		}
		info.CurrentSeconds = d.Seconds()
	}
	for _, v := range extra {
		if err := try(v); err != nil {
			return info, nil, err
		}
	}
	if err := search(k.use, space, o.Screen, timeOf, try); err != nil {
		return info, nil, err
	}
	for v, s := range timeOf {
		info.Candidates = append(info.Candidates, VariantTiming{Variant: v, Seconds: s})
	}
	sort.Slice(info.Candidates, func(i, j int) bool {
		if info.Candidates[i].Seconds != info.Candidates[j].Seconds {
			return info.Candidates[i].Seconds < info.Candidates[j].Seconds
		}
		return info.Candidates[i].Variant < info.Candidates[j].Variant
	})
	if len(info.Candidates) > 8 {
		info.Candidates = info.Candidates[:8]
	}
	return info, wrong, nil
}

// guard checks, with a proposal in force, that each WebGPU decision it
// changes computes what the default kernel does: a wrong variant is
// rejected before it is timed, whatever the policy claimed.
func (a *KernelAgent) guard(dev *webgpu.Backend) func() (GuardResult, error) {
	return func() (GuardResult, error) {
		g := GuardResult{OK: true}
		for _, s := range a.fw.settings.Info() {
			key, ok := strings.CutPrefix(s.Name, webgpuSettingPrefix)
			if !ok || s.Current == autoVariant {
				continue
			}
			c, err := dev.CheckVariant(key, s.Current)
			if err != nil {
				return g, err
			}
			if g.OK && (!c.OK || c.MaxError > g.Metric) {
				g.Metric, g.Limit = c.MaxError, c.Limit
				g.Detail = fmt.Sprintf("%s=%s against %s: max |difference| %.3g, limit %.3g", key, s.Current, c.Against, c.MaxError, c.Limit)
			}
			g.OK = g.OK && c.OK
		}
		return g, nil
	}
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// webgpuCache is the WebGPU disk cache's tuning entries as one state
// component: every entry file by name (kernel sources are left out: they
// follow from the code, not from decisions). Restoring writes the files
// back, removes entries made since, and makes open devices reread them.
type webgpuCache struct{}

func (webgpuCache) Name() string { return WebGPUCacheComponent }

func (webgpuCache) Snapshot() ([]byte, error) {
	dir, off := webgpu.TuningCacheDir()
	files := map[string][]byte{}
	if off == "" {
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), webgpu.TuningEntryPrefix) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if errors.Is(err, os.ErrNotExist) {
				continue // pruned or replaced meanwhile
			}
			if err != nil {
				return nil, err
			}
			files[e.Name()] = b
		}
	}
	return json.Marshal(files) // keys sorted: equal caches give equal bytes
}

func (webgpuCache) Restore(data []byte) error {
	var files map[string][]byte
	if err := json.Unmarshal(data, &files); err != nil {
		return fmt.Errorf("webgpu cache snapshot %.60q: %w", data, err)
	}
	dir, off := webgpu.TuningCacheDir()
	if off != "" {
		if len(files) > 0 {
			return fmt.Errorf("the WebGPU disk cache is off (%s); the snapshot holds %d decisions", off, len(files))
		}
		return nil
	}
	defer webgpu.ReloadTuning()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		if _, keep := files[e.Name()]; !keep && strings.HasPrefix(e.Name(), webgpu.TuningEntryPrefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	for name, b := range files {
		if filepath.Base(name) != name || !strings.HasPrefix(name, webgpu.TuningEntryPrefix) {
			return fmt.Errorf("webgpu cache snapshot names %q, not a tuning entry", name)
		}
		if err := writeAtomic(filepath.Join(dir, name), b); err != nil {
			return err
		}
	}
	return nil
}

// addWebGPUCache registers the WebGPU cache component with fw's state, once.
func addWebGPUCache(fw *Framework) error {
	if slices.Contains(fw.state.Names(), WebGPUCacheComponent) {
		return nil
	}
	return fw.state.Add(webgpuCache{})
}
