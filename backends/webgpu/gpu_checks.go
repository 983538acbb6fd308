package webgpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/webtensor/webtensor/core"
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

// Some failures are found by the kernel itself: an integer result that the
// GPU cannot hold. Such a kernel gets a flag, one zeroed word it marks
// (wgsl's fail(), or a map kernel's guard), and the op reads it back after
// the launch and fails with the kernel family's error, as validate does for
// checks made before a launch.

// errI64Range is the error of an i64 result outside the i32 range.
var errI64Range = fmt.Errorf("a result does not fit the 32-bit integers WebGPU holds i64 in ([%d, %d]); compute it on device cpu, or cast to f32 first",
	math.MinInt32, math.MaxInt32)

// newFlag makes a zeroed one-word flag for a launch.
func (b *Backend) newFlag() (*core.Tensor, error) {
	f := core.FromBytes(core.U32, core.Shape{1}, make([]byte, 4), b.Device())
	return f, f.Err()
}

// checkFlag fails op with errs[i] when a launch marked bit i of flag (the
// lowest such), and releases the flag.
func (b *Backend) checkFlag(op string, flag *core.Tensor, errs ...error) error {
	return validate(op, func() error {
		defer flag.Release()
		v, err := flag.Int64s()
		if err != nil {
			return err
		}
		for i, e := range errs {
			if v[0]&(1<<i) != 0 {
				return e
			}
		}
		return nil
	})
}
