//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/backends/webgpu"

	_ "github.com/webtensor/webtensor/backends/cpu"
)

// call is one function of the bridge (table.go).
type call func(args) (any, error)

// jsError turns err into the Error object the binding rethrows: the
// status and message are abi's, as the C ABI's are.
func jsError(err error) js.Value {
	e := js.Global().Get("Error").New(err.Error())
	e.Set("status", int(abi.StatusOf(err)))
	// Core wraps kernel errors by message, so the sentinel is found by text.
	e.Set("needsAsync", strings.Contains(err.Error(), webgpu.ErrNeedsEventLoop.Error()))
	return e
}

// export registers a synchronous call: panics become internal errors and
// GPU waits inside it are refused (see doc.go).
func export(obj js.Value, name string, fn call) {
	obj.Set(name, js.FuncOf(func(_ js.Value, v []js.Value) (res any) {
		exit := webgpu.EnterSyncCall()
		defer exit()
		defer func() {
			if r := recover(); r != nil {
				res = jsError(abi.Recovered(r))
			}
		}()
		out, err := fn(args{v: v, noGrad: inNoGrad()})
		if err != nil {
			return jsError(err)
		}
		return out
	}))
}

// exportAsync registers a call that may wait for the GPU: it runs on its own
// goroutine, so the event loop stays free, and settles a Promise. The grad
// mode is the caller's when it called, not when the goroutine runs.
func exportAsync(obj js.Value, name string, fn call) {
	obj.Set(name, js.FuncOf(func(_ js.Value, v []js.Value) any {
		a := args{v: append([]js.Value(nil), v...), noGrad: inNoGrad(), async: true}
		return js.Global().Get("Promise").New(js.FuncOf(func(_ js.Value, pr []js.Value) any {
			resolve, reject := pr[0], pr[1]
			go func() {
				defer func() {
					if r := recover(); r != nil {
						reject.Invoke(jsError(abi.Recovered(r)))
					}
				}()
				out, err := fn(a)
				if err != nil {
					reject.Invoke(jsError(err))
					return
				}
				resolve.Invoke(out)
			}()
			return nil
		}))
	}))
}

func main() {
	obj := js.Global().Get("Object").New()
	for name, fn := range calls {
		export(obj, name, fn)
	}
	for _, name := range asyncTwins {
		exportAsync(obj, name+"_async", calls[name])
	}
	for name, fn := range browserOnly {
		exportAsync(obj, name, fn)
	}
	for name, why := range omitted { // a clear error rather than "not a function"
		export(obj, name, func(args) (any, error) {
			return nil, abi.Errorf(abi.StatusUnsupported, "%s is not in the browser build: %s", name, why)
		})
	}
	js.Global().Set("__webtensor", obj)
	if ready := js.Global().Get("__webtensorReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(obj)
	}
	select {} // serve calls for the life of the page
}
