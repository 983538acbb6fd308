package lower

import "fmt"

// SameSource is the check a GPU backend's kernel cache makes, in tests
// (webgpu.VerifyKernelKeys, cuda.VerifyKernelKeys), on a hit: render makes
// the source cached under key again, and a difference means the key misses
// something the source depends on (the output's dtype, an attribute written
// into the code), so two calls would share one kernel.
func SameSource(backend, key, cached string, render func() (string, error)) error {
	again, err := render()
	if err != nil || again == cached {
		return err
	}
	return fmt.Errorf("%s: kernel key %q names two sources: the key misses something the kernel's code depends on (a bug: two calls would share one kernel)", backend, key)
}
