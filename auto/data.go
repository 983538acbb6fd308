package auto

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/data"
)

// The data agent (issue 22 item 7): a data.Loader's pipeline - worker
// count, prefetch depth, an in-memory cache of decoded records - is tuned
// on the user's own loader, its KPI being seconds per sample over a fixed
// window of batches (the report gives samples/s). Every setting it may
// change leaves the batches alone: data has no streaming shuffle (a
// seeded permutation orders every epoch) and no tuned setting changes
// which records a batch holds or their order, and a guard checks exactly
// that on every proposal - the window's batches must hash as they did
// before the change - so the journal records it decision by decision.
// Sharding a loader across processes changes which samples each one
// yields: it is the user's choice, never the agent's.

// DataAgentName names the data agent in the journal.
const DataAgentName = "data"

// LoaderOptions say how a loader is measured.
type LoaderOptions struct {
	// Batches is how many batches a run reads; 0 reads min(16, the
	// epoch's batches).
	Batches int
	// Epoch is the epoch every run reads: each run reads the same records,
	// those a cache holds after the first run, as an epoch after the first
	// would in training.
	Epoch int
	// Step, when set, is the user's work on each batch (a training step),
	// timed with the loading, so a pipeline is judged by how well it hides
	// behind it; without it the KPI is the loader alone. The batch's
	// tensors are released when Step returns: keep copies, not them.
	Step func(batch []*core.Tensor) error
}

// LoaderWorkload is a loader as a workload: Run reads the window and
// returns seconds per sample.
type LoaderWorkload struct {
	name    string
	l       *data.Loader
	opts    LoaderOptions
	batches int
	// trialing is set while the data agent decides proposals on the
	// loader: switching the cache off then keeps its records, for the A/B
	// test's next run with it on; at any other time (a rollback) it frees
	// them.
	trialing atomic.Bool
}

// loaderName is what a loader's name may hold: it becomes part of setting
// names (data.<name>.workers) and the kernel cache's keys.
var loaderName = regexp.MustCompile(`^[A-Za-z0-9_:-]{1,64}$`)

// NewLoaderWorkload measures l under name (letters, digits, _ : -).
func NewLoaderWorkload(name string, l *data.Loader, o LoaderOptions) (*LoaderWorkload, error) {
	if !loaderName.MatchString(name) {
		return nil, fmt.Errorf("auto: loader name %q: want 1 to 64 letters, digits, '_', ':' or '-'", name)
	}
	n := l.Len()
	switch {
	case n == 0:
		return nil, fmt.Errorf("auto: loader %s has no batch to measure (%d records, batch size %d)", name, l.Dataset().Len(), l.Options().BatchSize)
	case o.Batches < 0 || o.Batches > n:
		return nil, fmt.Errorf("auto: loader %s: %d batches a run, the epoch has %d", name, o.Batches, n)
	case o.Epoch < 0:
		return nil, fmt.Errorf("auto: loader %s: epoch %d is negative", name, o.Epoch)
	}
	b := o.Batches
	if b == 0 {
		b = min(16, n)
	}
	return &LoaderWorkload{name: name, l: l, opts: o, batches: b}, nil
}

// Name is the loader's name.
func (w *LoaderWorkload) Name() string { return w.name }

// Loader is the loader measured.
func (w *LoaderWorkload) Loader() *data.Loader { return w.l }

// Batches is the number of batches a run reads.
func (w *LoaderWorkload) Batches() int { return w.batches }

// Run reads the window (and runs Step on each batch) and returns the
// seconds per sample.
func (w *LoaderWorkload) Run() (float64, error) {
	start := time.Now()
	n, err := w.pass(nil, true)
	if err != nil {
		return 0, err
	}
	return time.Since(start).Seconds() / float64(n), nil
}

// pass reads the window's batches, giving each to visit, then to Step
// when step is set, then releasing it; it returns the samples read.
func (w *LoaderWorkload) pass(visit func([]*core.Tensor) error, step bool) (int, error) {
	it := w.l.Epoch(w.opts.Epoch)
	defer it.Close()
	samples := 0
	for b := range w.batches {
		batch, err := it.Next()
		if err == nil && batch == nil {
			err = fmt.Errorf("the epoch ended after %d batches", b)
		}
		if err == nil {
			samples += batch[0].Shape()[0]
			if visit != nil {
				err = visit(batch)
			}
			if err == nil && step && w.opts.Step != nil {
				err = w.opts.Step(batch)
			}
		}
		for _, t := range batch {
			t.Release()
		}
		if err != nil {
			return samples, fmt.Errorf("loader %s, batch %d of epoch %d: %w", w.name, b, w.opts.Epoch, err)
		}
	}
	return samples, nil
}

// Digest is the SHA-256 of the window's batches, every field's bytes in
// order: equal digests mean the same samples in the same order.
func (w *LoaderWorkload) Digest() (string, error) {
	h := sha256.New()
	_, err := w.pass(func(batch []*core.Tensor) error {
		for _, t := range batch {
			b, err := t.Bytes()
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	}, false)
	return hex.EncodeToString(h.Sum(nil)), err
}

// DataAgent tunes data loaders' pipelines.
type DataAgent struct {
	fw      *Framework
	policy  Proposer
	winners string
}

// NewDataAgent registers the kernel cache file (where kept pipelines are
// remembered, per loader) with fw's state, once, and returns the agent.
func NewDataAgent(fw *Framework, policy Proposer) (*DataAgent, error) {
	path, err := addWinnersFile(fw)
	if err != nil {
		return nil, err
	}
	return &DataAgent{fw: fw, policy: policy, winners: path}, nil
}

// WithPolicy is the agent asking p instead.
func (a *DataAgent) WithPolicy(p Proposer) *DataAgent {
	b := *a
	b.policy = p
	return &b
}

// loaderSettings are the names of w's settings.
func loaderSettings(name string) []string {
	return []string{"data." + name + ".cache", "data." + name + ".prefetch", "data." + name + ".workers"}
}

// Register binds w's name to w: its settings (registered on the first
// binding of the name, with w's pipeline as their defaults) reach w from
// now on. A second loader of the same name takes the name over, as a
// loader rebuilt by the next run of a script would.
func (a *DataAgent) Register(w *LoaderWorkload) error {
	fw := a.fw
	fw.mu.Lock()
	if fw.loaders == nil {
		fw.loaders = map[string]*LoaderWorkload{}
	}
	_, known := fw.loaders[w.name]
	fw.loaders[w.name] = w
	fw.mu.Unlock()
	if known {
		return nil
	}
	name := w.name
	workload := func() *LoaderWorkload {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		return fw.loaders[name]
	}
	bound := func() *data.Loader { return workload().l }
	set := func(change func(*data.Pipeline)) error {
		l := bound()
		p := l.Pipeline()
		change(&p)
		return l.SetPipeline(p)
	}
	p := w.l.Pipeline()
	cache := []string{"off"}
	if _, _, fits := w.l.CacheFits(); fits || p.Cache {
		cache = append(cache, "on")
	}
	names := loaderSettings(name)
	settings := []Setting{
		{Name: names[0], Doc: "keep " + name + "'s decoded records in memory after their first read (data.Options.Cache)",
			Choices: cache, Default: onOff(p.Cache),
			Get: func() string { return onOff(bound().Pipeline().Cache) },
			Set: func(v string) error {
				if v != "on" && v != "off" {
					return fmt.Errorf("want on or off, got %q", v)
				}
				if err := set(func(p *data.Pipeline) { p.Cache = v == "on" }); err != nil {
					return err
				}
				if w := workload(); v == "off" && !w.trialing.Load() {
					w.l.DropCache()
				}
				return nil
			}},
		intSetting(names[1], "batches each of "+name+"'s workers reads ahead (data.Options.Prefetch)",
			counts([]int{1, 2, 4, 8}, p.Prefetch), p.Prefetch,
			func() int { return bound().Pipeline().Prefetch },
			func(n int) error { return set(func(p *data.Pipeline) { p.Prefetch = n }) }),
		intSetting(names[2], "goroutines reading "+name+"'s batches; 0 reads them in Next (data.Options.Workers)",
			counts([]int{0, 1, 2, 4, 8, runtime.GOMAXPROCS(0)}, p.Workers), p.Workers,
			func() int { return bound().Pipeline().Workers },
			func(n int) error { return set(func(p *data.Pipeline) { p.Workers = n }) }),
	}
	for _, s := range settings {
		if err := fw.settings.Add(s); err != nil {
			return err
		}
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// counts is the sorted choices of a count setting with the current value
// among them.
func counts(base []int, cur int) []string {
	all := append(slices.Clone(base), cur)
	sort.Ints(all)
	all = slices.Compact(all)
	out := make([]string, len(all))
	for i, n := range all {
		out[i] = strconv.Itoa(n)
	}
	return out
}

func intSetting(name, doc string, choices []string, def int, get func() int, set func(int) error) Setting {
	return Setting{Name: name, Doc: doc, Choices: choices, Default: strconv.Itoa(def),
		Get: func() string { return strconv.Itoa(get()) },
		Set: func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("want a count, got %q", v)
			}
			return set(n)
		}}
}

// winnersKey is a loader's entry in the kernel cache.
func winnersKey(name string) string { return "data:" + name }

// ApplyCached registers w and puts in force the pipeline the kernel cache
// holds for its name: how a later process reuses winners without
// measuring.
func (a *DataAgent) ApplyCached(w *LoaderWorkload) (map[string]string, error) {
	if err := a.Register(w); err != nil {
		return nil, err
	}
	c, err := readWinners(a.winners)
	if err != nil {
		return nil, err
	}
	won := c[winnersKey(w.name)]
	return won, a.fw.settings.Apply(won)
}

// DataReport is what tuning a loader did.
type DataReport struct {
	Loader    string        `json:"loader"`
	Records   int           `json:"records"`
	BatchSize int           `json:"batch_size"`
	Batches   int           `json:"batches"`
	Before    data.Pipeline `json:"pipeline_before"`
	After     data.Pipeline `json:"pipeline_after"`
	// Cached is the pipeline the kernel cache held for the loader, put in
	// force before anything was measured (Before is after it).
	Cached map[string]string `json:"cached"`
	// Samples per second, median of the same runs before the first
	// proposal and after the last (equal when nothing was kept).
	SamplesPerSecBefore float64         `json:"samples_per_s_before"`
	SamplesPerSecAfter  float64         `json:"samples_per_s_after"`
	Cache               data.CacheStats `json:"cache"`
	Decisions           []Decision      `json:"decisions"`
}

// maxDataRounds bounds how often the policy is asked again after its
// proposals were decided (each round profiles the new pipeline).
const maxDataRounds = 3

// Apply puts w's cached pipeline in force and reports it, measuring
// nothing: what a later run of a tuned script does.
func (a *DataAgent) Apply(w *LoaderWorkload) (DataReport, error) {
	ds := w.l.Dataset()
	r := DataReport{Loader: w.name, Records: ds.Len(), BatchSize: w.l.Options().BatchSize, Batches: w.batches, Decisions: []Decision{}}
	won, err := a.ApplyCached(w)
	r.Cached = map[string]string{}
	for k, v := range won {
		r.Cached[k] = v
	}
	r.Before = w.l.Pipeline()
	r.After = r.Before
	r.Cache = w.l.CacheStats()
	return r, err
}

// Tune applies w's cached pipeline, then asks the policy round by round
// (the pipeline re-profiled each time) and decides each proposal on w,
// under the same-samples guard, until the policy proposes nothing or
// maxDataRounds have passed.
func (a *DataAgent) Tune(w *LoaderWorkload) (DataReport, error) {
	r, err := a.Apply(w)
	if err != nil {
		return r, err
	}
	base, err := w.Digest()
	if err != nil {
		return r, err
	}
	trial := Trial{Workloads: []Workload{w},
		Guard: func() (GuardResult, error) {
			d, err := w.Digest()
			if err != nil {
				return GuardResult{}, err
			}
			ok := d == base
			g := GuardResult{Limit: 1, OK: ok, Detail: fmt.Sprintf("same samples in the same order: the %d batches of epoch %d hash %.12s, %.12s before any change",
				w.batches, w.opts.Epoch, d, base)}
			if ok {
				g.Metric = 1
			}
			return g, nil
		},
		Commit: func(p Proposal) error { return rememberWinners(a.winners, winnersKey(w.name), p.Change) }}
	kept := false
	w.trialing.Store(true)
	defer w.trialing.Store(false)
	for round := range maxDataRounds {
		info, err := a.profile(w)
		if err != nil {
			return r, err
		}
		if round == 0 {
			r.SamplesPerSecBefore = perSecond(info.SampleSeconds)
		}
		req := Request{Agent: DataAgentName, Workload: w.name, Device: w.l.Options().Device.String(), Loader: &info,
			Settings: a.fw.settings.Info(loaderSettings(w.name)...), History: a.fw.history(DataAgentName, w.name)}
		props, _, err := ask(a.policy, req)
		if err != nil {
			return r, err
		}
		if len(props) == 0 {
			break
		}
		for _, p := range props {
			d, err := a.fw.Evaluate(DataAgentName, a.policy.PolicyName(), p, trial)
			r.Decisions = append(r.Decisions, d)
			// A cache that lost its test, or was turned off by a later
			// decision, would otherwise hold the dataset in memory.
			if !w.l.Pipeline().Cache {
				w.l.DropCache()
			}
			if err != nil {
				return r, err
			}
			kept = kept || d.Verdict == Kept
		}
	}
	r.After = w.l.Pipeline()
	r.SamplesPerSecAfter = r.SamplesPerSecBefore
	if kept {
		s, err := medianRun(w, 3)
		if err != nil {
			return r, err
		}
		r.SamplesPerSecAfter = perSecond(s)
	}
	r.Cache = w.l.CacheStats()
	return r, nil
}

// perSecond is 1/s, or 0 for a time too short to measure (JSON has no
// infinity).
func perSecond(s float64) float64 {
	if s <= 0 {
		return 0
	}
	return 1 / s
}

// medianRun is w's median KPI over n runs after one warm-up run (which
// fills a cache, as the first epoch does).
func medianRun(w Workload, n int) (float64, error) {
	if _, err := w.Run(); err != nil {
		return 0, err
	}
	xs := make([]float64, n)
	for i := range xs {
		v, err := w.Run()
		if err != nil {
			return 0, err
		}
		xs[i] = v
	}
	return median(xs), nil
}

// profile measures w as it is now for the policy.
func (a *DataAgent) profile(w *LoaderWorkload) (LoaderInfo, error) {
	ds := w.l.Dataset()
	need, budget, fits := w.l.CacheFits()
	info := LoaderInfo{Records: ds.Len(), BatchSize: w.l.Options().BatchSize, Batches: w.batches,
		InMemory: data.InMemory(ds), CacheNeed: need, CacheFits: fits, CacheBytes: budget,
		Step: w.opts.Step != nil, Cores: runtime.GOMAXPROCS(0)}
	if ds.Len() > 0 {
		info.RecordBytes = need / int64(ds.Len())
	}
	fields := ds.Fields()
	dst := make([][]byte, len(fields))
	for f, fd := range fields {
		dst[f] = make([]byte, fd.Bytes())
	}
	k := min(16, ds.Len())
	reads := make([]float64, k)
	for j := range k {
		start := time.Now()
		if err := ds.Read(j*ds.Len()/k, dst); err != nil {
			return info, fmt.Errorf("auto: profiling loader %s: %w", w.name, err)
		}
		reads[j] = time.Since(start).Seconds()
	}
	if k > 0 {
		s := slices.Clone(reads)
		sort.Float64s(s)
		info.ReadSeconds = median(s)
		if info.ReadSeconds > 0 {
			info.ReadSpread = (s[(9*len(s))/10] - s[len(s)/10]) / info.ReadSeconds
		}
	}
	var err error
	if info.SampleSeconds, err = medianRun(w, 3); err != nil {
		return info, fmt.Errorf("auto: profiling loader %s: %w", w.name, err)
	}
	return info, nil
}
