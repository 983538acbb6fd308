//go:build unix

package cpu

import "syscall"

// addressSpaceLimit is the process's address-space rlimit (ulimit -v; 0:
// none). The Go runtime reserves address space beyond the heap, so the
// heap can reach it only approximately; it still turns an allocation that
// cannot succeed into an error instead of a fatal one.
func addressSpaceLimit() int64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &r) != nil || r.Cur > 1<<62 /* RLIM_INFINITY */ {
		return 0
	}
	return int64(r.Cur)
}
