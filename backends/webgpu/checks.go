package webgpu

import (
	"fmt"
	"sync"
)

// Some kernels check their inputs' values before launching (indices in
// range, no integer division by zero, labels in [0, C), probabilities in
// [0, 1]), which means reading GPU memory. Natively that read happens at
// once. In the browser a synchronous op call cannot wait for a read (see
// gpu_js.go), so the check is kept here and made before the next read of
// any tensor; its error then fails that read, naming the op - the way
// asynchronous device errors surface in other GPU runtimes.
var deferred struct {
	sync.Mutex
	checks []deferredCheck
}

type deferredCheck struct {
	op    string
	check func() error
}

// validate runs check now when this goroutine may wait for the GPU, else
// defers it to the next read.
func validate(op string, check func() error) error {
	if canBlock() == nil {
		return check()
	}
	deferred.Lock()
	deferred.checks = append(deferred.checks, deferredCheck{op, check})
	deferred.Unlock()
	return nil
}

// runDeferredChecks makes the checks that synchronous calls left; the
// first failure is returned and the rest are dropped with it (the work
// after a failed check is not trustworthy anyway). The list is taken before
// running, so the reads the checks make do not run it again.
func runDeferredChecks() error {
	if canBlock() != nil {
		return nil
	}
	deferred.Lock()
	checks := deferred.checks
	deferred.checks = nil
	deferred.Unlock()
	for _, c := range checks {
		if err := c.check(); err != nil {
			return fmt.Errorf("an earlier %s call failed its check: %w", c.op, err)
		}
	}
	return nil
}
