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
//
// A kernel that runs on its device but does part of the op on the host
// (reads indices back to bucket them, say) is counted too, as kind "host",
// when its backend declared it with DeclareHostWork: such ops are listed in
// the manifest and docs/ops.md with what the host does, so a "GPU" result
// never hides host work.

// Kinds of Fallback.
const (
	// FallbackCPU: the op ran on the CPU, its device having no kernel.
	FallbackCPU = "cpu"
	// FallbackHost: the device's kernel did declared work on the host.
	FallbackHost = "host"
)

// Fallback is how often one op ran on the CPU for a device (Kind
// FallbackCPU), or did part of its work on the host (Kind FallbackHost,
// Reason saying what).
type Fallback struct {
	Device string `json:"device"`
	Op     string `json:"op"`
	Count  int64  `json:"count"`
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

var fallbackCounts sync.Map // fallbackKey -> *atomic.Int64

type fallbackKey struct{ device, op, kind string }

func countFallback(d Device, op, kind string) {
	k := fallbackKey{d.String(), op, kind}
	c, ok := fallbackCounts.Load(k)
	if !ok {
		c, _ = fallbackCounts.LoadOrStore(k, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
}

// Fallbacks lists the op calls that ran on the CPU instead of their device,
// and those whose kernel did declared host work, since the process started
// (or the last ResetFallbacks), by device, op and kind.
func Fallbacks() []Fallback {
	var out []Fallback
	fallbackCounts.Range(func(k, v any) bool {
		key := k.(fallbackKey)
		if n := v.(*atomic.Int64).Load(); n > 0 {
			f := Fallback{Device: key.device, Op: key.op, Count: n, Kind: key.kind}
			if key.kind == FallbackHost {
				f.Reason = HostWorkReason(deviceKind(key.device), key.op)
			}
			out = append(out, f)
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Device != b.Device {
			return a.Device < b.Device
		}
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		return a.Kind < b.Kind
	})
	return out
}

// FallbackCount is the number of calls on one device (all ops) that ran on
// the CPU; declared host work is not counted here.
func FallbackCount(d Device) int64 {
	var n int64
	for _, f := range Fallbacks() {
		if f.Device == d.String() && f.Kind == FallbackCPU {
			n += f.Count
		}
	}
	return n
}

// ResetFallbacks sets every count (both kinds) back to zero.
func ResetFallbacks() {
	fallbackCounts.Range(func(k, _ any) bool {
		fallbackCounts.Delete(k)
		return true
	})
}

func deviceKind(device string) string {
	d, err := ParseDevice(device)
	if err != nil {
		return device
	}
	return d.Kind
}
