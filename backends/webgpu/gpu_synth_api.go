package webgpu

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/core"
)

// What the auto-kernel agent (package auto) asks of a device: which tuning
// decisions a run touched and how large its work was (KernelUses), whether
// a variant computes what the default kernel does (CheckVariant) and how
// fast it is (TimeVariant), and a way to put a variant in force for a trial
// (SetTuning) and to keep it (PersistTuning). The agent decides; this file
// only runs kernels.

// KernelUse is one tuning decision a run consulted: its key
// ("matmul|b0-m2-k10-n10-v4"), the sizes of the latest launch under it,
// how often it was consulted and by which ops (while a kernel profile
// runs, StartKernelProfile, the op whose kernel it was).
type KernelUse struct {
	Key      string         `json:"key"`
	Kind     string         `json:"kind"`
	Class    string         `json:"class"`
	Workload map[string]int `json:"workload"`
	Calls    int            `json:"calls"`
	Ops      map[string]int `json:"ops,omitempty"`
}

// maxUses bounds the decisions remembered between resets.
const maxUses = 256

type useLog struct {
	mu   sync.Mutex
	by   map[string]*KernelUse
	opOf func() string // the op running now, "" when not profiling
}

// noteUse records a consultation of key; the tuner calls it for every
// launch that asks it.
func (t *tuner) noteUse(key string, workload map[string]int) {
	u := &t.uses
	op := ""
	if u.opOf != nil {
		op = u.opOf()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.by == nil {
		u.by = map[string]*KernelUse{}
	}
	e := u.by[key]
	if e == nil {
		if len(u.by) >= maxUses {
			return
		}
		kind, class, _ := strings.Cut(key, "|")
		e = &KernelUse{Key: key, Kind: kind, Class: class, Ops: map[string]int{}}
		u.by[key] = e
	}
	e.Calls++
	e.Workload = workload
	if op != "" {
		e.Ops[op]++
	}
}

// currentOp is the op whose kernels run now, while profiling.
func (b *Backend) currentOp() string {
	if !b.profiling() {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.profile.op
}

// KernelUses lists the decisions consulted since ResetKernelUses, by key.
func (b *Backend) KernelUses() []KernelUse {
	u := &b.tuner.uses
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]KernelUse, 0, len(u.by))
	for _, e := range u.by {
		c := *e
		c.Ops = map[string]int{}
		for k, v := range e.Ops {
			c.Ops[k] = v
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ResetKernelUses forgets the consultations recorded so far.
func (b *Backend) ResetKernelUses() {
	u := &b.tuner.uses
	u.mu.Lock()
	defer u.mu.Unlock()
	u.by = nil
}

// Synthesisable says whether the agent can synthesise variants for key.
func Synthesisable(key string) bool {
	kind, class, _ := strings.Cut(key, "|")
	return (kind == "matmul" && strings.HasSuffix(class, "-v4")) || kind == "map-wg"
}

// TuningVariant is the variant in force for key: this process's decision,
// else the disk cache's, else "".
func (b *Backend) TuningVariant(key string) string {
	t := &b.tuner
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, _ := t.lookup(key)
	return rec.Variant
}

// SetTuning puts variant in force for key in this process only (a trial);
// "" drops the process's decision, so the disk cache's applies again. A
// variant the key's kind cannot run is an error.
func (b *Backend) SetTuning(key, variant string) error {
	t := &b.tuner
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ensureMaps()
	if variant == "" {
		delete(t.choices, key)
		return nil
	}
	if err := b.Runnable(key, variant); err != nil {
		return err
	}
	t.choices[key] = tuneRecord{Variant: variant, Reason: "set for a trial"}
	return nil
}

// PersistTuning keeps variant for key in this process and in the disk
// cache, where later processes on this device find it, with the timings
// (nanoseconds by variant) and the reason that chose it.
func (b *Backend) PersistTuning(key, variant, policy, reason string, timings map[string]int64) error {
	if err := b.Runnable(key, variant); err != nil {
		return err
	}
	rec := tuneRecord{Variant: variant, Timings: timings, Policy: policy, Proposed: variant, Reason: reason, Kept: true}
	t := &b.tuner
	t.mu.Lock()
	t.ensureMaps()
	if prev, ok := t.choices[key]; ok && prev.Variant != variant {
		t.history[key] = append(t.history[key], prev)
	}
	t.choices[key] = rec
	t.mu.Unlock()
	if b.disk.path(entryTuning, key) == "" {
		return fmt.Errorf("webgpu: the disk cache is off (%s): %s=%s would not outlive this process", b.diskOff(), key, variant)
	}
	b.disk.store(entryTuning, key, rec)
	return nil
}

func (b *Backend) diskOff() string {
	_, off := b.disk.status()
	return off
}

// Runnable says why variant cannot serve key, or nil.
func (b *Backend) Runnable(key, variant string) error {
	kind, class, _ := strings.Cut(key, "|")
	switch {
	case kind == "matmul" && (acceptsSynth(kind, class, variant) || variant == variantRegBlock4 || variant == variantRegBlock16 ||
		variant == variantRegBlock || variant == variantTiled):
		return nil
	case strings.HasSuffix(kind, "-wg") && acceptsSynth(kind, class, variant):
		return nil
	}
	if _, err := ParseMatmulTile(variant); kind == "matmul" && strings.HasPrefix(variant, "syn-") {
		return err
	}
	return fmt.Errorf("webgpu: %q cannot run %s (a matmul of vec4 rows takes syn-... tiles or its fixed variants, a -wg kind a workgroup size of %v)",
		variant, key, SynthWorkgroups)
}

// VariantCheck is a variant's result against the default kernel's on the
// same random operands: the largest absolute difference and the bound it
// must stay within.
type VariantCheck struct {
	Variant  string  `json:"variant"`
	Against  string  `json:"against"`
	MaxError float64 `json:"max_error"`
	Limit    float64 `json:"limit"`
	OK       bool    `json:"ok"`
}

// probe is a launch of key's work on fresh seeded operands, runnable with
// any variant, that KernelUses recorded the sizes of.
type probe struct {
	run      func(variant string) error
	out      *core.Tensor
	def      string
	limit    float64
	releases []*core.Tensor
}

func (p *probe) release() {
	for _, t := range p.releases {
		t.Release()
	}
}

func (b *Backend) probeFor(key string) (*probe, error) {
	var use *KernelUse
	for _, u := range b.KernelUses() {
		if u.Key == key {
			use = &u
			break
		}
	}
	if use == nil {
		return nil, fmt.Errorf("webgpu: no launch under %s since the uses were reset: run the workload first", key)
	}
	w := use.Workload
	rng := rand.New(rand.NewSource(int64(len(key))))
	random := func(shape core.Shape) (*core.Tensor, error) {
		v := make([]float32, shape.Numel())
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		t := core.FromSlice(v, shape, b.Device())
		return t, t.Err()
	}
	p := &probe{}
	switch {
	case use.Kind == "matmul":
		nb, m, k, n := max(w["batch"], 1), w["m"], w["k"], w["n"]
		if m*k*n == 0 {
			return nil, fmt.Errorf("webgpu: %s recorded sizes %v", key, w)
		}
		batch := core.Shape{}
		if nb > 1 {
			batch = core.Shape{nb}
		}
		a, err := random(append(batch.Clone(), m, k))
		if err != nil {
			return nil, err
		}
		bb, err := random(append(batch.Clone(), k, n))
		if err != nil {
			a.Release()
			return nil, err
		}
		out, err := core.Empty(b, append(batch.Clone(), m, n), core.F32)
		if err != nil {
			a.Release()
			bb.Release()
			return nil, err
		}
		p.out, p.releases, p.def = out, []*core.Tensor{a, bb, out}, vecCandidates[layoutNN].def
		// Operands in [-1, 1]: partial sums stay near sqrt(K) in size, and
		// two summation orders differ by at most about K roundings of one.
		// A kernel that drops one chunk of K misses terms of size ~0.3.
		p.limit = 1e-5 + 4*float64(k)*math.Sqrt(float64(k))*0x1p-24
		p.run = func(v string) error { return b.matmul(a, bb, out, batch, m, k, n, v) }
	case use.Kind == "map-wg":
		n := w["n"]
		x, err := random(core.Shape{n})
		if err != nil {
			return nil, err
		}
		out, err := core.Empty(b, core.Shape{n}, core.F32)
		if err != nil {
			x.Release()
			return nil, err
		}
		p.out, p.releases, p.def, p.limit = out, []*core.Tensor{x, out}, strconv.Itoa(mapWG), 0
		p.run = func(v string) error {
			wg, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("webgpu: workgroup size %q: %w", v, err)
			}
			return b.mapRunWG([]*core.Tensor{x}, out, "x0 * 1.5 + 0.25", "", nil, nil, wg)
		}
	default:
		return nil, fmt.Errorf("webgpu: %s: no variants are synthesised for %s launches", key, use.Kind)
	}
	return p, nil
}

// CheckVariant runs key's recorded work on fresh seeded operands with the
// default kernel and with variant and compares the results: a variant is
// kept only if it computes the same product (within the rounding of a
// different summation order) or, for a workgroup size, the same bits.
func (b *Backend) CheckVariant(key, variant string) (VariantCheck, error) {
	p, err := b.probeFor(key)
	if err != nil {
		return VariantCheck{}, err
	}
	defer p.release()
	c := VariantCheck{Variant: variant, Against: p.def, Limit: p.limit}
	if err := b.Runnable(key, variant); err != nil {
		return c, err
	}
	if err := p.run(p.def); err != nil {
		return c, fmt.Errorf("webgpu: %s with the default %s: %w", key, p.def, err)
	}
	want, err := p.out.Float32s()
	if err != nil {
		return c, err
	}
	if err := p.run(variant); err != nil {
		return c, fmt.Errorf("webgpu: %s with %s: %w", key, variant, err)
	}
	got, err := p.out.Float32s()
	if err != nil {
		return c, err
	}
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		c.MaxError = max(c.MaxError, d)
	}
	c.OK = c.MaxError <= c.Limit
	return c, nil
}

// TimeVariant times key's recorded work with variant: one warm-up run
// (which builds the kernel), then the fastest of runs synced runs.
func (b *Backend) TimeVariant(key, variant string, runs int) (time.Duration, error) {
	p, err := b.probeFor(key)
	if err != nil {
		return 0, err
	}
	defer p.release()
	if err := b.Runnable(key, variant); err != nil {
		return 0, err
	}
	if err := p.run(variant); err != nil {
		return 0, err
	}
	if err := b.Sync(); err != nil {
		return 0, err
	}
	best := time.Duration(math.MaxInt64)
	for range max(runs, 1) {
		start := time.Now()
		if err := p.run(variant); err != nil {
			return 0, err
		}
		if err := b.Sync(); err != nil {
			return 0, err
		}
		best = min(best, time.Since(start))
	}
	return best, nil
}

// TuningCacheDir is the folder of the WebGPU disk cache (the entries of
// every device), "" with the reason when the cache is off.
func TuningCacheDir() (dir, off string) { return cacheDir() }

// TuningEntryPrefix starts the file name of every tuning decision in
// TuningCacheDir; kernel sources have other names.
const TuningEntryPrefix = entryTuning + "-"

// ReloadTuning makes every open device read its decisions from the disk
// cache again: after the cache's files were restored (an agent's
// rollback), no decision a process held in memory may outlive them.
func ReloadTuning() {
	pp := &processPolicy
	pp.mu.Lock()
	opened := append([]*Backend(nil), pp.opened...)
	pp.mu.Unlock()
	for _, b := range opened {
		b.tuner.mu.Lock()
		b.tuner.choices, b.tuner.history = nil, nil
		b.tuner.mu.Unlock()
	}
}
