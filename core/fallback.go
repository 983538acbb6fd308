package core

import (
	"sort"
	"sync"
	"sync/atomic"
)

// An op a backend has no kernel for runs on the CPU behind it (its inputs
// copied to the host, its outputs back). That is correct but slow and not
// what the user asked for, so every such call is counted, per device and
// op, and reported: Fallbacks here, webtensor doctor, the SDKs' fallback
// calls and the conformance report's fallback column.

// Fallback is how often one op ran on the CPU for a device.
type Fallback struct {
	Device string `json:"device"`
	Op     string `json:"op"`
	Count  int64  `json:"count"`
}

var fallbackCounts sync.Map // fallbackKey -> *atomic.Int64

type fallbackKey struct{ device, op string }

func countFallback(d Device, op string) {
	k := fallbackKey{d.String(), op}
	c, ok := fallbackCounts.Load(k)
	if !ok {
		c, _ = fallbackCounts.LoadOrStore(k, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
}

// Fallbacks lists the op calls that ran on the CPU instead of their
// device since the process started (or the last ResetFallbacks), by
// device and op.
func Fallbacks() []Fallback {
	var out []Fallback
	fallbackCounts.Range(func(k, v any) bool {
		key := k.(fallbackKey)
		if n := v.(*atomic.Int64).Load(); n > 0 {
			out = append(out, Fallback{Device: key.device, Op: key.op, Count: n})
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Device != out[j].Device {
			return out[i].Device < out[j].Device
		}
		return out[i].Op < out[j].Op
	})
	return out
}

// FallbackCount is the number of fallback calls for one device (all ops).
func FallbackCount(d Device) int64 {
	var n int64
	for _, f := range Fallbacks() {
		if f.Device == d.String() {
			n += f.Count
		}
	}
	return n
}

// ResetFallbacks sets every count back to zero.
func ResetFallbacks() {
	fallbackCounts.Range(func(k, _ any) bool {
		fallbackCounts.Delete(k)
		return true
	})
}
