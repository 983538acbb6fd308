//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"
	"time"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/diffuse"
)

// wt_call(target, self, argsJSON, data: Uint8Array | null, onStep?) -> result handle:
// the domain libraries' methods by name (abi/call.go), read back with
// wt_call_result_json as through the C ABI. The models that load from
// folders say so when asked: a page has no file system.
func callMethod(a args) (any, error) {
	r := a.reader()
	target := r.str(0, "target")
	self := r.int(1, "self")
	argsJSON := r.optStr(2, "args_json")
	if r.err != nil {
		return nil, r.err
	}
	var data []byte
	if !a.absent(3) {
		var err error
		if data, err = a.bytes(3, "data", nil); err != nil {
			return nil, err
		}
	}
	// onStep (a diffusion pipeline's sampling): the header has no callback.
	progress, err := a.onStep(4, self)
	if err != nil {
		return nil, err
	}
	return abi.CallToResult(target, self, argsJSON, data, abi.CallContext{NoGrad: a.noGrad, Progress: progress, OwnsData: true})
}

// onStep reads argument i, an optional function(step, steps), as the
// Progress a sampling call on the pipeline reports to. In an async call
// each step first waits for the pipeline's device, so the count is what
// has run rather than what was queued, and then sleeps a moment after the
// function: both hand the event loop back to the page, which can then draw
// the progress (a CPU-backend run would otherwise hold it until the last
// step). An exception the function throws stops the run, which rejects
// with it.
func (a args) onStep(i int, pipe int64) (diffuse.Progress, error) {
	if a.absent(i) {
		return nil, nil
	}
	fn := a.v[i]
	if fn.Type() != js.TypeFunction {
		return nil, abi.Invalidf("onStep must be a function, got %s", fn.Type())
	}
	dev, err := abi.DiffusionDevice(pipe)
	if err != nil {
		return nil, err
	}
	return func(step, steps int) (err error) {
		if a.async {
			if err := abi.DeviceSync(dev); err != nil {
				return err
			}
		}
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("onStep threw at step %d: %v", step, r)
			}
		}()
		fn.Invoke(step, steps)
		if a.async {
			time.Sleep(time.Millisecond)
		}
		return nil
	}, nil
}
