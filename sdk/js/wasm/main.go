//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall/js"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"

	_ "github.com/webtensor/webtensor/backends/cpu"
)

// The ABI's status codes (capi/include/webtensor.h), so the SDK maps errors
// the same way in Node and in the browser.
const (
	statusInvalid     = 1
	statusHandle      = 2
	statusUnsupported = 3
	statusOOM         = 4
	statusInternal    = 6
)

type abiError struct {
	status int
	msg    string
}

func (e *abiError) Error() string { return e.msg }

func invalid(format string, args ...any) error {
	return &abiError{statusInvalid, fmt.Sprintf(format, args...)}
}

// jsError turns err into the Error object the binding rethrows.
func jsError(err error) js.Value {
	status := statusInvalid
	var ae *abiError
	switch msg := err.Error(); {
	case errors.As(err, &ae):
		status = ae.status
	case strings.Contains(msg, "cannot allocate"):
		status = statusOOM
	case strings.Contains(msg, "no backend"):
		status = statusUnsupported
	}
	e := js.Global().Get("Error").New(err.Error())
	e.Set("status", status)
	// Core wraps kernel errors by message, so the sentinel is found by text.
	e.Set("needsAsync", strings.Contains(err.Error(), webgpu.ErrNeedsEventLoop.Error()))
	return e
}

func recovered(r any) error {
	stack := string(debug.Stack())
	if len(stack) > 600 {
		stack = stack[:600]
	}
	return &abiError{statusInternal, fmt.Sprintf("internal error (please report): %v\n%s", r, stack)}
}

type call func(args []js.Value) (any, error)

// export registers a synchronous call: panics become internal errors and
// GPU waits inside it are refused (see doc.go).
func export(obj js.Value, name string, fn call) {
	obj.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) (res any) {
		exit := webgpu.EnterSyncCall()
		defer exit()
		defer func() {
			if r := recover(); r != nil {
				res = jsError(recovered(r))
			}
		}()
		v, err := fn(args)
		if err != nil {
			return jsError(err)
		}
		return v
	}))
}

// exportAsync registers a call that may wait for the GPU: it runs on its own
// goroutine, so the event loop stays free, and settles a Promise.
func exportAsync(obj js.Value, name string, fn call) {
	obj.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) any {
		args = append([]js.Value(nil), args...)
		return js.Global().Get("Promise").New(js.FuncOf(func(_ js.Value, pr []js.Value) any {
			resolve, reject := pr[0], pr[1]
			go func() {
				defer func() {
					if r := recover(); r != nil {
						reject.Invoke(jsError(recovered(r)))
					}
				}()
				v, err := fn(args)
				if err != nil {
					reject.Invoke(jsError(err))
					return
				}
				resolve.Invoke(v)
			}()
			return nil
		}))
	}))
}

func main() {
	obj := js.Global().Get("Object").New()
	obj.Set("abiVersion", 1)
	obj.Set("version", core.Version)
	for name, fn := range syncCalls() {
		export(obj, name, fn)
	}
	for name, fn := range graphCalls() {
		export(obj, name, fn)
	}
	for name, fn := range asyncCalls() {
		exportAsync(obj, name, fn)
	}
	js.Global().Set("__webtensor", obj)
	if ready := js.Global().Get("__webtensorReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(obj)
	}
	select {} // serve calls for the life of the page
}
