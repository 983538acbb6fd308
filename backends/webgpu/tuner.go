package webgpu

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// tuner picks a kernel variant per (op, shape class) by timing each
// candidate once on this device, and remembers the winner on disk so the
// measurement happens once per machine, not once per process. A corrupt or
// foreign cache file is ignored and rewritten.
type tuner struct {
	mu       sync.Mutex
	device   string
	fallback string // variant used when measuring is off or pointless
	path     string
	loaded   bool
	choices  map[string]tuneRecord
	sync     func() error
}

// tuneRecord is one decision and the timings behind it (nanoseconds).
type tuneRecord struct {
	Variant string           `json:"variant"`
	Timings map[string]int64 `json:"timings_ns"`
}

type tuneFile struct {
	Device  string                `json:"device"`
	Choices map[string]tuneRecord `json:"choices"`
}

func tuneCachePath() string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserCacheDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(dir, "webtensor", "webgpu-tuning.json")
}

func (t *tuner) load() {
	if t.loaded {
		return
	}
	t.loaded = true
	t.choices = map[string]tuneRecord{}
	if os.Getenv("WEBTENSOR_TUNE") == "off" {
		return
	}
	t.path = tuneCachePath()
	raw, err := os.ReadFile(t.path)
	if err != nil {
		return
	}
	var f tuneFile
	if json.Unmarshal(raw, &f) != nil || f.Device != t.device {
		return
	}
	for k, v := range f.Choices {
		t.choices[k] = v
	}
}

// save writes the cache through a temporary file and a rename, so two
// processes never leave a half-written file behind.
func (t *tuner) save() {
	if t.path == "" {
		return
	}
	raw, err := json.MarshalIndent(tuneFile{Device: t.device, Choices: t.choices}, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(t.path), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), "tuning-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), t.path) != nil {
		os.Remove(tmp.Name())
	}
}

// choose returns the variant for kind and class. Unknown classes are
// measured: run(v) must perform the real work with variant v (the last run
// leaves a correct result).
func (t *tuner) choose(kind, class string, variants []string, run func(v string) error) string {
	key := kind + "|" + class
	t.mu.Lock()
	t.load()
	rec, ok := t.choices[key]
	off := os.Getenv("WEBTENSOR_TUNE") == "off"
	t.mu.Unlock()
	if ok {
		return rec.Variant
	}
	if off || len(variants) < 2 {
		return t.fallback
	}
	rec = tuneRecord{Timings: map[string]int64{}}
	best := time.Duration(-1)
	for _, v := range variants {
		if run(v) != nil || t.sync() != nil { // compile and warm up
			continue
		}
		start := time.Now()
		const reps = 3
		failed := false
		for range reps {
			if run(v) != nil {
				failed = true
			}
		}
		if failed || t.sync() != nil {
			continue
		}
		d := time.Since(start) / reps
		rec.Timings[v] = d.Nanoseconds()
		if best < 0 || d < best {
			best, rec.Variant = d, v
		}
	}
	if rec.Variant == "" {
		return t.fallback
	}
	t.mu.Lock()
	t.choices[key] = rec
	t.save()
	t.mu.Unlock()
	return rec.Variant
}

// Tuning reports the decisions made so far, for doctor and tests.
func (b *Backend) Tuning() map[string]tuneRecord {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.load()
	out := make(map[string]tuneRecord, len(b.tuner.choices))
	for k, v := range b.tuner.choices {
		out[k] = v
	}
	return out
}

// ReadTuningFile reads a tuning cache and checks it belongs to device.
func ReadTuningFile(path, device string) (map[string]tuneRecord, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f tuneFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("tuning cache %s is corrupt (it will be rewritten): %w", path, err)
	}
	if !strings.HasPrefix(f.Device, device) {
		return nil, fmt.Errorf("tuning cache %s is for device %q, not %q", path, f.Device, device)
	}
	return f.Choices, nil
}
