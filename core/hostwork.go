package core

import (
	"sort"
	"sync"
)

// HostWork declares that a backend's kernel for an op does part of the op
// on the host: it reads device memory back, computes there and may upload
// the result. Ops whose output shape depends on their values (nonzero,
// unique) read a count to size the output; that is a wait, not host work,
// and is not declared.
type HostWork struct {
	// Backend is the backend kind ("webgpu"), or AnyDevice for a library
	// function that does it on every device but the CPU.
	Backend string `json:"backend"`
	// Op is the op's name, or package.Function for library code outside
	// the registry ("geom.FromEdgeIndex").
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

// AnyDevice is HostWork.Backend for work done on the host whatever the
// (non-CPU) device.
const AnyDevice = "*"

type hostKey struct{ backend, op string }

var hostWork = struct {
	sync.RWMutex
	m map[hostKey]string
}{m: map[hostKey]string{}}

// DeclareHostWork records that backend's kernel for op (or library function
// op, with backend AnyDevice) does part of its work on the host, and what.
// Backends call it from init next to registering the kernel, and the code
// that does the work counts each time it does with CountHostWork. The
// manifest and docs/ops.md list every declaration.
func DeclareHostWork(backend, op, reason string) {
	hostWork.Lock()
	hostWork.m[hostKey{backend, op}] = reason
	hostWork.Unlock()
}

// HostWorkReason is what backend kind's kernel for op does on the host, or
// "" when nothing is declared.
func HostWorkReason(backend, op string) string {
	hostWork.RLock()
	defer hostWork.RUnlock()
	if r, ok := hostWork.m[hostKey{backend, op}]; ok || backend == "cpu" {
		return r
	}
	return hostWork.m[hostKey{AnyDevice, op}]
}

// DeclaredHostWork lists every declaration, by op and backend.
func DeclaredHostWork() []HostWork {
	hostWork.RLock()
	out := make([]HostWork, 0, len(hostWork.m))
	for k, r := range hostWork.m {
		out = append(out, HostWork{Backend: k.backend, Op: k.op, Reason: r})
	}
	hostWork.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Op != out[j].Op {
			return out[i].Op < out[j].Op
		}
		return out[i].Backend < out[j].Backend
	})
	return out
}

// CountHostWork counts one call of op on d that did its declared host work
// (kind FallbackHost in Fallbacks). An undeclared op is counted with an
// empty reason, which the conformance report refuses. Work for the CPU
// device is not host work and is not counted.
func CountHostWork(d Device, op string) {
	if d.Kind == "cpu" {
		return
	}
	countFallback(d, op, FallbackHost)
}
