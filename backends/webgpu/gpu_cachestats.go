package webgpu

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cogentcore/webgpu/wgpu"
)

// CacheStats counts the kernel caches of one device since it was opened.
// The in-memory cache holds compiled pipelines; the disk cache holds what
// can be carried to the next process (kernel sources and tuning decisions,
// see diskCache).
type CacheStats struct {
	// Lookups and Hits count pipeline lookups and those that found a
	// compiled pipeline in memory (the rest compiled one).
	Lookups, Hits int64
	// Disk lookups (kernel sources and tuning decisions together): hits,
	// misses, entries found corrupt (ignored and rewritten) and entries
	// written.
	DiskHits, DiskMisses, DiskCorrupt, DiskWrites int64
	// VariantsTimed counts kernel variants the tuner timed: a process that
	// found its decisions on disk times none.
	VariantsTimed int64
	// Dir is where entries are kept; Off says why there is no disk cache
	// ("" when there is one).
	Dir, Off string
}

// HitRatio is the in-memory pipeline hit ratio (0 before any lookup).
func (s CacheStats) HitRatio() float64 { return ratio(s.Hits, s.Lookups) }

// DiskHitRatio is the share of disk lookups that found a valid entry.
func (s CacheStats) DiskHitRatio() float64 {
	return ratio(s.DiskHits, s.DiskHits+s.DiskMisses+s.DiskCorrupt)
}

func ratio(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// String is the one-line summary webtensor doctor prints.
func (s CacheStats) String() string {
	if s.Off != "" {
		return fmt.Sprintf("disk cache off (%s); %d variants timed", s.Off, s.VariantsTimed)
	}
	return fmt.Sprintf("disk cache %s: %d hits, %d misses, %d corrupt, %d writes, hit ratio %.1f%%; %d variants timed",
		s.Dir, s.DiskHits, s.DiskMisses, s.DiskCorrupt, s.DiskWrites, 100*s.DiskHitRatio(), s.VariantsTimed)
}

// KernelCacheStats reports the kernel caches' counters: after warm-up a
// training loop should compile nothing, and a second process on the same
// machine should find its kernel sources and tuning decisions on disk.
func (b *Backend) KernelCacheStats() CacheStats {
	dir, off := b.disk.status()
	return CacheStats{
		Lookups: b.kernelLookups.Load(), Hits: b.kernelHits.Load(),
		DiskHits: b.disk.hits.Load(), DiskMisses: b.disk.misses.Load(),
		DiskCorrupt: b.disk.corrupt.Load(), DiskWrites: b.disk.writes.Load(),
		VariantsTimed: b.tuner.timed.Load(),
		Dir:           dir, Off: off,
	}
}

// diskCounters are the disk cache's counters, kept in both builds so the
// stats read the same in the browser (where they stay zero).
type diskCounters struct {
	hits, misses, corrupt, writes atomic.Int64
}

// The kinds of disk entry; each is also its files' name prefix.
const (
	entryKernel = "wgsl" // a kernel's rendered WGSL source, by pipeline key
	entryTuning = "tune" // a tuner decision, by "kind|class"
)

// deviceSignature names the adapter and driver as precisely as the backend
// knows them, so a driver update or another GPU never reads entries made
// for this one. The features are in it since kernels may use shader-f16.
func deviceSignature(info wgpu.AdapterInfo, features []wgpu.FeatureName) string {
	fs := make([]string, len(features))
	for i, f := range features {
		fs[i] = f.String()
	}
	slices.Sort(fs)
	return fmt.Sprintf("%s|%04x:%04x|%s|%s|%s|%s", strings.TrimSpace(info.Name), info.VendorId, info.DeviceId,
		strings.TrimSpace(info.DriverDescription), info.BackendType, info.AdapterType, strings.Join(fs, ","))
}
