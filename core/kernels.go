package core

import (
	"fmt"
	"sort"
	"sync"
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
)

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

// LookupKernel returns kind's kernel for op, or nil when there is none
// (core then runs the op on the CPU and counts the fallback).
func LookupKernel(kind, op string) Kernel {
	kernelsMu.RLock()
	k := kernels[kernelKey{kind, op}]
	kernelsMu.RUnlock()
	return k
}

// KernelOps lists, sorted, the ops with a registered kernel for kind.
func KernelOps(kind string) []string {
	kernelsMu.RLock()
	var out []string
	for key := range kernels {
		if key.kind == kind {
			out = append(out, key.op)
		}
	}
	kernelsMu.RUnlock()
	sort.Strings(out)
	return out
}

// MissingKernels lists, sorted, the registry's ops that need a kernel and
// have none for kind (a view needs none: core makes it), and says how many
// need one: what a backend's coverage test reports, and what would run on
// the CPU behind that backend.
func MissingKernels(kind string) (missing []string, needed int) {
	for _, def := range Ops() {
		if def.View != nil {
			continue
		}
		needed++
		if LookupKernel(kind, def.Name) == nil {
			missing = append(missing, def.Name)
		}
	}
	sort.Strings(missing)
	return missing, needed
}
