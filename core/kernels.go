package core

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// The kernel registry: which backend kind has a kernel for which op. Every
// kernel registers here - a backend's built-in ones at init, a plugin's
// when it loads - so core can say what runs where (KernelOps, the
// manifest) without asking each backend package, and a plugin adds a CPU
// kernel without reaching into the CPU backend's internals. A backend's
// Kernel method reads its kind's entries (LookupKernel) and may wrap them
// (profiling) or add kernels an OpDef carries (a plugin op's WGSL).

type kernelKey struct{ kind, op string }

var (
	kernelsMu sync.RWMutex // plugins register while other goroutines dispatch
	kernels   = map[kernelKey]Kernel{}
	derived   = map[kernelKey]Kernel{} // built by a deriver on first lookup
	derivers  = map[string]KernelDeriver{}

	// kernelsGen counts changes to what a lookup can answer (a kernel, a
	// deriver or an op registered); an OpDef's remembered answer from an
	// older generation is looked up again.
	kernelsGen atomic.Uint64
)

// memoKinds are the backend kinds whose lookups an OpDef remembers.
var memoKinds = [...]string{"cpu", "cuda"}

type kernelMemo struct {
	gen    uint64
	kernel Kernel
}

// LookupKernelFor is LookupKernel for a registered op, remembered in def
// until the registry changes: a small op's dispatch is then two atomic
// loads instead of a read lock and a map lookup keyed by two strings.
func LookupKernelFor(kind string, def *OpDef) Kernel {
	slot := -1
	for i, k := range memoKinds {
		if k == kind {
			slot = i
		}
	}
	if slot < 0 {
		return LookupKernel(kind, def.Name)
	}
	gen := kernelsGen.Load()
	if m := def.kernels[slot].Load(); m != nil && m.gen == gen {
		return m.kernel
	}
	k := LookupKernel(kind, def.Name)
	def.kernels[slot].Store(&kernelMemo{gen: gen, kernel: k})
	return k
}

// DefKerneler is a Backend whose Kernel answer depends on the op and the
// registry alone, so it can answer from the OpDef's memo (LookupKernelFor);
// dispatch uses it where a backend implements it.
type DefKerneler interface {
	KernelFor(def *OpDef) Kernel
}

// kernelOf is b's kernel for def.
func kernelOf(b Backend, def *OpDef) Kernel {
	if dk, ok := b.(DefKerneler); ok {
		return dk.KernelFor(def)
	}
	return b.Kernel(def.Name)
}

// KernelDeriver builds a backend kind's kernel for an op from the op's own
// description (its Pointwise arithmetic, or its GPUBody), or returns nil
// when it cannot.
// A backend registers one so that an op described once runs on it without
// a kernel written for it - a plugin's op too.
type KernelDeriver func(def *OpDef) Kernel

// RegisterKernelDeriver installs kind's deriver; a registered kernel
// always takes precedence over a derived one.
func RegisterKernelDeriver(kind string, d KernelDeriver) {
	kernelsMu.Lock()
	derivers[kind] = d
	kernelsGen.Add(1)
	kernelsMu.Unlock()
}

// RegisterKernel installs k as the kernel of op on backends of kind
// ("cpu", "webgpu", "cuda"). A kernel, once registered, is never replaced:
// a second one for the same kind and op is an error, so two plugins (or a
// plugin and a built-in) cannot silently shadow each other.
func RegisterKernel(kind, op string, k Kernel) error {
	if k == nil {
		return fmt.Errorf("%s kernel for %q is nil", kind, op)
	}
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	key := kernelKey{kind, op}
	if _, dup := kernels[key]; dup {
		return fmt.Errorf("a %s kernel for %q is already registered", kind, op)
	}
	kernels[key] = k
	kernelsGen.Add(1)
	recordSite(kind, op)
	return nil
}

// MustRegisterKernel is RegisterKernel for a backend's init functions,
// where a duplicate is a programming error.
func MustRegisterKernel(kind, op string, k Kernel) {
	if err := RegisterKernel(kind, op, k); err != nil {
		panic(err)
	}
}

// LookupKernel returns kind's kernel for op: the registered one, else one
// kind's deriver builds from the op's Pointwise or GPUBody description, else nil
// (core then runs the op on the CPU and counts the fallback).
func LookupKernel(kind, op string) Kernel {
	key := kernelKey{kind, op}
	kernelsMu.RLock()
	k, ok := kernels[key]
	if !ok {
		k, ok = derived[key]
	}
	d := derivers[kind]
	kernelsMu.RUnlock()
	if ok || d == nil {
		return k
	}
	def, found := LookupOp(op)
	if !found || !derivable(def) {
		return nil
	}
	k = d(def)
	if k == nil {
		return nil
	}
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	if reg, ok := kernels[key]; ok { // registered while this one was built
		return reg
	}
	if prev, ok := derived[key]; ok {
		return prev
	}
	derived[key] = k
	return k
}

// KernelOps lists, sorted, the ops with a kernel for kind, derived ones
// included.
func KernelOps(kind string) []string {
	seen := map[string]bool{}
	kernelsMu.RLock()
	for key := range kernels {
		if key.kind == kind {
			seen[key.op] = true
		}
	}
	kernelsMu.RUnlock()
	for _, def := range Ops() {
		if derivable(def) && !seen[def.Name] && LookupKernel(kind, def.Name) != nil {
			seen[def.Name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for op := range seen {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// MissingKernels lists, sorted, the registry's ops that need a kernel and
// have none for kind (a view needs none: core makes it), and says how many
// need one: what a backend's coverage test reports, and what would run on
// the CPU behind that backend.
func MissingKernels(kind string) (missing []string, needed int) {
	for _, def := range Ops() {
		if def.View != nil || def.Compose != nil {
			continue // no kernel: a view shares storage, a Compose op runs its parts
		}
		needed++
		if LookupKernel(kind, def.Name) == nil {
			missing = append(missing, def.Name)
		}
	}
	sort.Strings(missing)
	return missing, needed
}
