package webgpu

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webtensor/webtensor/backends/webgpu/kernelpolicy"
	"github.com/webtensor/webtensor/core/config"
)

// tuner picks a kernel variant per (op, shape class) by timing each
// candidate once on this device, and remembers the winner in the disk cache
// (one entry per decision) so the measurement happens once per machine, not
// once per process. A corrupt entry is ignored and rewritten.
type tuner struct {
	mu       sync.Mutex
	device   string
	fallback string // variant used when measuring is off or pointless
	disk     *diskCache
	choices  map[string]tuneRecord   // decisions made or read by this process
	history  map[string][]tuneRecord // earlier decisions per key, for rollback
	sync     func() error
	policy   Policy
	software bool
	timed    atomic.Int64 // variants measured, for KernelCacheStats
	uses     useLog       // the decisions launches consulted (gpu_synth_api.go)
}

// tuneRecord is one decision and the timings behind it (nanoseconds).
type tuneRecord struct {
	Variant string           `json:"variant"`
	Timings map[string]int64 `json:"timings_ns,omitempty"`
	// Set when a policy was asked: its name, what it proposed and why,
	// whether the proposal measured faster and was kept, and any error.
	Policy   string `json:"policy,omitempty"`
	Proposed string `json:"proposed,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Kept     bool   `json:"kept,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Policy proposes kernel variants: given the device and a workload, which
// variant to try. The tuner times the proposal against its current choice
// and keeps it only when it is faster. A WebAssembly policy loaded by
// package plugins (plugins.Policy) satisfies this interface.
type Policy interface {
	PolicyName() string
	Decide(request, reply any) error
}

// PolicyRequest is what a policy is asked, and PolicyReply its proposal;
// package kernelpolicy declares them so that a policy module built for
// WebAssembly (plugins-wasm/policies/kernel-variant) uses the same types.
type (
	PolicyRequest = kernelpolicy.Request
	PolicyReply   = kernelpolicy.Reply
)

// SetPolicy makes the tuner ask p about workloads it has not decided yet;
// nil goes back to timing every variant.
func (b *Backend) SetPolicy(p Policy) {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.policy = p
}

// RollbackTuning undoes the latest decision for key ("matmul|<class>"):
// the previous one comes back, or, when there was none, the device's
// default variant is pinned. It returns the decision now in force.
func (b *Backend) RollbackTuning(key string) (tuneRecord, error) {
	t := &b.tuner
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.lookup(key); !ok {
		return tuneRecord{}, fmt.Errorf("webgpu: no tuning decision for %q to roll back", key)
	}
	var rec tuneRecord
	if h := t.history[key]; len(h) > 0 {
		rec, t.history[key] = h[len(h)-1], h[:len(h)-1]
	} else {
		rec = tuneRecord{Variant: t.fallback, Reason: "rolled back to the device default"}
	}
	t.choices[key] = rec
	t.disk.store(entryTuning, key, rec)
	return rec, nil
}

func tuneOff() bool { return config.String("WEBTENSOR_TUNE") == "off" }

// lookup finds the decision for key in memory, then on disk (unless tuning
// is off); the caller holds t.mu.
func (t *tuner) lookup(key string) (tuneRecord, bool) {
	t.ensureMaps()
	if rec, ok := t.choices[key]; ok {
		return rec, true
	}
	var rec tuneRecord
	if tuneOff() || !t.disk.load(entryTuning, key, &rec) || rec.Variant == "" {
		return tuneRecord{}, false
	}
	t.choices[key] = rec
	return rec, true
}

// decided is the variant chosen for kind and class, or "" while none is.
func (t *tuner) decided(kind, class string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, _ := t.lookup(kind + "|" + class)
	return rec.Variant
}

// ensureMaps makes the maps ForgetTuning drops; the caller holds t.mu.
func (t *tuner) ensureMaps() {
	if t.choices == nil {
		t.choices, t.history = map[string]tuneRecord{}, map[string][]tuneRecord{}
	}
}

// choose returns the variant for kind and class. Unknown classes are
// decided by measurement: run(v) must perform the real work with variant v
// (the last run leaves a correct result). With a policy set, only its
// proposal and the current default are timed; otherwise every variant is.
func (t *tuner) choose(kind, class string, workload map[string]int, variants []string, current string, run func(v string) error) string {
	key := kind + "|" + class
	t.noteUse(key, workload)
	t.mu.Lock()
	rec, ok := t.lookup(key)
	off := tuneOff()
	policy := t.policy
	t.mu.Unlock()
	if ok && (slices.Contains(variants, rec.Variant) || acceptsSynth(kind, class, rec.Variant)) {
		return rec.Variant
	}
	if off || len(variants) < 2 || canBlock() != nil {
		return current
	}
	candidates := variants
	rec = tuneRecord{Timings: map[string]int64{}}
	if policy != nil {
		rec.Policy = policy.PolicyName()
		var reply PolicyReply
		req := PolicyRequest{Device: t.device, Software: t.software, Kind: kind, Class: class, Workload: workload,
			Variants: variants, Current: current}
		switch err := policy.Decide(req, &reply); {
		case err != nil:
			rec.Error = err.Error()
		case !slices.Contains(variants, reply.Variant):
			rec.Error = fmt.Sprintf("proposed %q, not one of %v", reply.Variant, variants)
		default:
			rec.Proposed, rec.Reason = reply.Variant, reply.Reason
			candidates = []string{current, reply.Variant}
			if reply.Variant == current {
				candidates = candidates[:1]
			}
		}
	}
	best := time.Duration(-1)
	for _, v := range candidates {
		d, ok := t.measure(v, run, best)
		if !ok {
			continue
		}
		rec.Timings[v] = d.Nanoseconds()
		if best < 0 || d < best {
			best, rec.Variant = d, v
		}
	}
	if rec.Variant == "" {
		return current
	}
	rec.Kept = rec.Proposed != "" && rec.Variant == rec.Proposed
	t.mu.Lock()
	t.ensureMaps()
	if prev, ok := t.choices[key]; ok {
		t.history[key] = append(t.history[key], prev)
	}
	t.choices[key] = rec
	t.mu.Unlock()
	t.disk.store(entryTuning, key, rec)
	return rec.Variant
}

// tuneRule numbers how measure times variants; it is in the key of every
// decision on disk, so a change to it makes earlier decisions miss.
const tuneRule = 2

// measure times variant v: one warm-up run (which builds its kernels),
// then the fastest of three synced runs - the minimum, because on a busy
// machine interference only ever adds time. A variant whose first timed run
// takes several times the best so far cannot win; that time is returned
// without the repeats (a tiled kernel on a software driver would otherwise
// cost seconds). The rule looks past the warm-up: building a kernel can
// take a software driver 100 times its run time, and a variant that builds
// more code (16-row blocks, or attention's three composed kernels) lost
// that way to one that runs at half its speed.
func (t *tuner) measure(v string, run func(v string) error, best time.Duration) (time.Duration, bool) {
	t.timed.Add(1)
	if run(v) != nil || t.sync() != nil {
		return 0, false
	}
	fastest := time.Duration(-1)
	for i := range 3 {
		start := time.Now()
		if run(v) != nil || t.sync() != nil {
			return 0, false
		}
		d := time.Since(start)
		if fastest < 0 || d < fastest {
			fastest = d
		}
		if i == 0 && best > 0 && d > 4*best {
			break
		}
	}
	return fastest, true
}

// Tuning reports the decisions for this device: those made or read by this
// process and those on disk, for doctor and tests.
func (b *Backend) Tuning() map[string]tuneRecord {
	t := &b.tuner
	out := map[string]tuneRecord{}
	if !tuneOff() {
		t.disk.scan(entryTuning, func(key string, value json.RawMessage) {
			var rec tuneRecord
			if json.Unmarshal(value, &rec) == nil && rec.Variant != "" {
				out[key] = rec
			}
		})
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range t.choices {
		out[k] = v
	}
	return out
}

// ForgetTuning drops the decisions held in memory; the next workload looks
// in the disk cache again, in the directory the environment names then.
func (b *Backend) ForgetTuning() {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.choices, b.tuner.history = nil, nil
	b.disk.reset()
}

// TuningFile is the disk entry holding the decision for key ("matmul|<class>"),
// "" when the disk cache is off.
func (b *Backend) TuningFile(key string) string {
	return b.disk.path(entryTuning, key)
}
