package core

import (
	"runtime"
	"strings"
	"sync"
)

// Where each op and kernel was registered: the source file of the package
// init function that registered it. The repository files every op under its
// category's name in core and in each backend (ops_<category>.go,
// kernels_<category>.go); a layout test (internal/layout) reads these sites
// to hold it to that, which it could not do from the kernels themselves (they
// are closures made by shared helpers and wrapped by the backends).

var (
	sitesMu sync.RWMutex
	sites   = map[kernelKey]string{} // kind "" is the OpDef
)

// recordSite notes the file of the innermost package init function on the
// caller's stack as where kind's op was registered; nothing when the
// registration did not come from an init function (a plugin loading).
func recordSite(kind, op string) {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if isInit(f.Function) {
			sitesMu.Lock()
			sites[kernelKey{kind, op}] = f.File
			sitesMu.Unlock()
			return
		}
		if !more {
			return
		}
	}
}

// isInit says whether a function name ("path/pkg.init.0", "path/pkg.init")
// is a package init function, not a closure inside one or a method named init.
func isInit(fn string) bool {
	name := fn[strings.LastIndexByte(fn, '/')+1:]
	_, after, ok := strings.Cut(name, ".")
	if !ok {
		return false
	}
	n, ok := strings.CutPrefix(after, "init")
	if !ok || n == "" {
		return ok
	}
	if n[0] != '.' || len(n) == 1 {
		return false
	}
	for _, c := range n[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// RegisteredIn returns the source file (an absolute path as the compiler saw
// it) whose init function registered kind's kernel for op, or, for kind "",
// the op's OpDef; "" when it was registered at run time or not at all. It is
// for tools and tests that check where code lives, not for dispatch.
func RegisteredIn(kind, op string) string {
	sitesMu.RLock()
	defer sitesMu.RUnlock()
	return sites[kernelKey{kind, op}]
}
