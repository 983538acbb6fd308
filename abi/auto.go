//go:build !js

package abi

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/auto"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// The auto-agents (the auto.* targets): package auto on what an SDK can name - a
// loader handle (the data agent tunes its pipeline) and a traced graph
// with its inputs (the kernel agent tunes the CPU settings it runs under)
// - and the journal those decisions go to, which an SDK reads and rolls
// back by id. Agents measure in this process: a tune call runs for
// seconds. The browser build has none of this (abi/auto.go is not
// compiled for js): the agents need a journal folder on a file system and
// the plugin host for their policies.

// One framework per journal folder and process, so decision ids stay in
// sequence and every loader a process tunes shares its settings; the
// agents are made once per framework (the CPU settings they found then
// are the defaults a rollback returns to) and take each call's policy.
type autoSession struct {
	mu     sync.Mutex
	fw     *auto.Framework
	kernel *auto.KernelAgent
	data   *auto.DataAgent
}

var autoState = struct {
	mu       sync.Mutex
	sessions map[string]*autoSession
	modules  map[string]*plugins.Plugin // policy modules by absolute path
}{sessions: map[string]*autoSession{}, modules: map[string]*plugins.Plugin{}}

// autoOptions are the options every auto.* target takes.
type autoOptions struct {
	// Dir is the journal's folder; "" is auto.DefaultDir().
	Dir string `json:"dir,omitempty"`
	// Policy is "module.wasm#policy", "<loaded plugin>#policy" or
	// "default#policy" (build/plugins/policy-auto.wasm found from the
	// working folder); "" is the default module's policy for the agent.
	Policy string `json:"policy,omitempty"`
	// Runs, Margin and Alpha override auto.DefaultConfig().
	Runs   int      `json:"runs,omitempty"`
	Margin *float64 `json:"margin,omitempty"`
	Alpha  float64  `json:"alpha,omitempty"`
}

// session opens (once) the framework of the options' folder and applies
// their strictness.
func (o autoOptions) session(fn string) (*autoSession, error) {
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = auto.DefaultDir(); err != nil {
			return nil, Errorf(StatusIO, "%s: %v", fn, err)
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	cfg := auto.DefaultConfig()
	if o.Runs != 0 {
		cfg.Runs = o.Runs
	}
	if o.Margin != nil {
		cfg.Margin = *o.Margin
	}
	if o.Alpha != 0 {
		cfg.Alpha = o.Alpha
	}
	autoState.mu.Lock()
	defer autoState.mu.Unlock()
	s, ok := autoState.sessions[dir]
	if !ok {
		fw, err := auto.Open(dir, cfg)
		if err != nil {
			return nil, autoError(fn, err)
		}
		s = &autoSession{fw: fw}
		if s.kernel, err = auto.NewKernelAgent(fw, nil); err != nil {
			return nil, autoError(fn, err)
		}
		if s.data, err = auto.NewDataAgent(fw, nil); err != nil {
			return nil, autoError(fn, err)
		}
		autoState.sessions[dir] = s
	}
	if err := s.fw.SetConfig(cfg); err != nil {
		return nil, Invalidf("%s: %v", fn, err)
	}
	return s, nil
}

// autoError maps an agent's error: the file system's refusals are
// WT_ERR_IO, the rest (a policy, a workload, the options) WT_ERR_INVALID.
func autoError(fn string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Errorf(StatusIO, "%s: %v", fn, err)
	}
	return Invalidf("%s: %v", fn, err)
}

// autoPolicy resolves a policy spec, loading its module on the process's
// plugin host once (and listing it with the plugins wt_plugin_load loaded,
// whose names a spec may use instead of a path).
func autoPolicy(fn, spec, agent string) (auto.Proposer, error) {
	if spec == "" {
		spec = "default#" + agent
	}
	mod, name, _ := strings.Cut(spec, "#")
	pluginHost.mu.Lock()
	p, loadedByName := pluginHost.byID[mod]
	pluginHost.mu.Unlock()
	if !loadedByName {
		path := mod
		if mod == "default" {
			var err error
			if path, err = auto.DefaultPolicyPath(); err != nil {
				return nil, Errorf(StatusIO, "%s: %v", fn, err)
			}
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		// The host's load error keeps only the message: look first, so a
		// missing module is the file system's refusal.
		if _, err := os.Stat(path); err != nil {
			return nil, Errorf(StatusIO, "%s: policy module: %v", fn, err)
		}
		autoState.mu.Lock()
		defer autoState.mu.Unlock()
		if p = autoState.modules[path]; p == nil {
			h, err := host()
			if err != nil {
				return nil, Errorf(StatusUnsupported, "%s: the plugin host: %v", fn, err)
			}
			if p, err = h.LoadFile(context.Background(), path); err != nil {
				return nil, autoError(fn, err)
			}
			autoState.modules[path] = p
			loaded(p)
		}
	}
	q, err := p.PolicyOrOnly(name)
	if err != nil {
		return nil, Invalidf("%s: policy %s: %v", fn, spec, err)
	}
	return auto.WasmPolicy{P: q}, nil
}

// AutoReportBytes bounds what a tune call writes: the C ABI refuses a
// smaller buffer before doing any work, since the work cannot be redone
// to fill a second, larger one.
const AutoReportBytes = 16 << 10

// decisionSummary is a decision as a tune call reports it; the journal
// (auto.journal) has the whole record. Strings a policy wrote are
// clipped so that the report stays within AutoReportBytes.
type decisionSummary struct {
	ID         string  `json:"id"`
	What       string  `json:"what"`
	Verdict    string  `json:"verdict"`
	Gain       float64 `json:"gain"`        // the A/B test's
	CanaryGain float64 `json:"canary_gain"` // the re-measurement's, for a decision that got there
	Reason     string  `json:"reason"`
}

func summarise(ds []auto.Decision) []decisionSummary {
	out := make([]decisionSummary, 0, len(ds))
	for _, d := range ds {
		s := decisionSummary{ID: d.ID, Verdict: d.Verdict, Reason: clip(d.Reason, 200)}
		if d.Proposal != nil {
			s.What = clip(d.Proposal.What, 80)
		}
		if d.Trial != nil {
			s.Gain = finite(d.Trial.Gain)
		}
		if len(d.Canary) > 0 {
			s.CanaryGain = finite(d.Canary[0].Gain)
		}
		out = append(out, s)
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// loaderTuneOptions are auto.tune_loader's options.
type loaderTuneOptions struct {
	autoOptions
	// Name keys the loader's settings and remembered pipeline; "" is
	// "loader".
	Name    string `json:"name,omitempty"`
	Batches int    `json:"batches,omitempty"` // a run's batches (0: min(16, an epoch's))
	Epoch   int    `json:"epoch,omitempty"`   // the epoch every run reads
	// Measure false applies the remembered pipeline without measuring.
	Measure *bool `json:"measure,omitempty"`
}

// autoTuneLoader is auto.tune_loader: the data agent on a loader
// handle; its pipeline changes in place for the epochs started after.
func autoTuneLoader(h int64, options string) (string, error) {
	const fn = "auto.tune_loader"
	st, err := loaders.get(h)
	if err != nil {
		return "", err
	}
	var o loaderTuneOptions
	if err := decodeJSON(fn, "options", options, &o); err != nil {
		return "", err
	}
	if o.Name == "" {
		o.Name = "loader"
	}
	s, err := o.session(fn)
	if err != nil {
		return "", err
	}
	measure := o.Measure == nil || *o.Measure
	agent := s.data
	if measure {
		pol, err := autoPolicy(fn, o.Policy, auto.DataAgentName)
		if err != nil {
			return "", err
		}
		agent = agent.WithPolicy(pol)
	}
	w, err := auto.NewLoaderWorkload(o.Name, st.l, auto.LoaderOptions{Batches: o.Batches, Epoch: o.Epoch})
	if err != nil {
		return "", Invalidf("%s: %v", fn, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var r auto.DataReport
	if measure {
		r, err = agent.Tune(w)
	} else {
		r, err = agent.Apply(w)
	}
	if err != nil {
		return "", autoError(fn, err)
	}
	out := struct {
		auto.DataReport
		Decisions []decisionSummary `json:"decisions"`
	}{r, summarise(r.Decisions)}
	b, err := json.Marshal(out)
	return string(b), err
}

// graphTuneOptions are auto.tune_graph's options.
type graphTuneOptions struct {
	autoOptions
	Name string `json:"name,omitempty"` // the workload's name in the journal and kernel cache; "" is "graph"
	// Repeat is how many graph runs one measured run makes; 0 makes it
	// last about 10 ms, so a timer tick does not decide a test.
	Repeat int `json:"repeat,omitempty"`
	// Grad runs the graph recording autograd, as wt_graph_run with
	// no_grad 0 does; the default runs it as inference.
	Grad bool `json:"grad,omitempty"`
}

// autoTuneGraph is auto.tune_graph: the kernel agent on a traced graph
// run on inputs. On the CPU the settings it keeps are the CPU backend's,
// for the whole process, remembered under the name; on a WebGPU device
// (the first input's) they are kernel variants it synthesised for the hot
// decisions, kept in the device's disk cache for every later process.
func autoTuneGraph(h int64, inputHandles []int64, options string) (string, error) {
	const fn = "auto.tune_graph"
	g, err := graphOf(h)
	if err != nil {
		return "", err
	}
	ins, err := tensorList(inputHandles, fn+": input")
	if err != nil {
		return "", err
	}
	var o graphTuneOptions
	if err := decodeJSON(fn, "options", options, &o); err != nil {
		return "", err
	}
	if o.Name == "" {
		o.Name = "graph"
	}
	if o.Repeat < 0 {
		return "", Invalidf("%s: repeat %d is negative", fn, o.Repeat)
	}
	s, err := o.session(fn)
	if err != nil {
		return "", err
	}
	pol, err := autoPolicy(fn, o.Policy, auto.KernelAgentName)
	if err != nil {
		return "", err
	}
	once := func() error {
		var outs []*core.Tensor
		var err error
		underGrad(!o.Grad, func() { outs, err = g.Run(ins...) })
		if err == nil && len(outs) > 0 {
			_, err = outs[0].Bytes() // the device has finished
		}
		for _, t := range outs {
			t.Release()
		}
		return err
	}
	if o.Repeat == 0 {
		start := time.Now()
		if err := once(); err != nil {
			return "", Invalidf("%s: running the graph: %v", fn, err)
		}
		o.Repeat = int(min(1000, max(1, math.Ceil(0.01/max(time.Since(start).Seconds(), 1e-9)))))
	}
	w := auto.Timed(o.Name, func() error {
		for range o.Repeat {
			if err := once(); err != nil {
				return err
			}
		}
		return nil
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	agent := s.kernel.WithPolicy(pol)
	if len(ins) > 0 && ins[0].Device().Kind == "webgpu" {
		return tuneGraphWebGPU(fn, agent, s.fw, ins[0].Device(), w, o)
	}
	ds, err := agent.Tune(w)
	if err != nil {
		return "", autoError(fn, err)
	}
	cached, err := agent.Cached(o.Name)
	if err != nil {
		return "", autoError(fn, err)
	}
	if cached == nil {
		cached = map[string]string{} // {} in the report, not null
	}
	settings := map[string]string{}
	for _, si := range s.fw.Settings().Info("cpu.threads", "cpu.cache_bytes") {
		settings[si.Name] = si.Current
	}
	b, err := json.Marshal(map[string]any{"workload": o.Name, "repeat": o.Repeat, "settings": settings,
		"cached": cached, "decisions": summarise(ds)})
	return string(b), err
}

// journalOptions are auto.journal's options.
type journalOptions struct {
	Dir string   `json:"dir,omitempty"`
	IDs []string `json:"ids,omitempty"` // only these records (default: all)
}

// autoJournalJSON is auto.journal: the journal's records, oldest
// first, as a JSON array.
func autoJournalJSON(options string) (string, error) {
	const fn = "auto.journal"
	var o journalOptions
	if err := decodeJSON(fn, "options", options, &o); err != nil {
		return "", err
	}
	s, err := autoOptions{Dir: o.Dir}.session(fn)
	if err != nil {
		return "", err
	}
	want := map[string]bool{}
	for _, id := range o.IDs {
		want[id] = true
	}
	out := []auto.Decision{}
	for _, d := range s.fw.Journal().Decisions() {
		if len(want) == 0 || want[d.ID] {
			out = append(out, d)
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// AutoRollbackIDBytes bounds the id auto.rollback writes (d0001: ids
// count decisions, 20 digits at most).
const AutoRollbackIDBytes = 32

// autoRollback is auto.rollback: it restores the state from before the
// kept decision id (undoing the kept ones after it) and returns the id of
// the rollback's own record. In a process that has not registered the
// loaders or workloads the snapshot names, it fails naming them.
func autoRollback(options, id string) (string, error) {
	const fn = "auto.rollback"
	var o autoOptions
	if err := decodeJSON(fn, "options", options, &o); err != nil {
		return "", err
	}
	s, err := o.session(fn)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.fw.Rollback(id)
	if err != nil {
		return r.ID, autoError(fn, err)
	}
	return r.ID, nil
}

// tuneGraphWebGPU is auto.tune_graph on a WebGPU device: the report
// names the kernel variant in force for each decision the agent tuned.
func tuneGraphWebGPU(fn string, agent *auto.KernelAgent, fw *auto.Framework, d core.Device, w auto.Workload, o graphTuneOptions) (string, error) {
	b, err := core.BackendFor(d)
	if err != nil {
		return "", Errorf(StatusUnsupported, "%s: %v", fn, err)
	}
	dev, ok := b.(*webgpu.Backend)
	if !ok {
		return "", Invalidf("%s: device %s is not the WebGPU backend", fn, d)
	}
	ds, err := agent.TuneWebGPU(dev, w, auto.WebGPUOptions{})
	if err != nil {
		return "", autoError(fn, err)
	}
	kernels := map[string]string{}
	for _, si := range fw.Settings().Info() {
		if key, ok := strings.CutPrefix(si.Name, "webgpu."); ok {
			kernels[key] = si.Current
		}
	}
	out, err := json.Marshal(map[string]any{"workload": o.Name, "repeat": o.Repeat, "device": d.String(),
		"kernels": kernels, "decisions": summarise(ds)})
	return string(out), err
}
