package core

import (
	"sync/atomic"
	"time"
)

// Observing op calls: a tracer (package trace) installs a CallObserver and
// sees every registry call - eager, from any SDK through the ABI, or
// replayed by a compiled graph - with its devices, shapes and time. With
// no observer a call pays one atomic load.

// CallEvent is one finished op call.
type CallEvent struct {
	Op       string
	Category string
	Device   Device // the device the op ran on (its inputs')
	Inputs   []Meta // nil entries for absent optional inputs are left out
	Outputs  []Meta
	Start    time.Time
	Duration time.Duration // host time of the call; on an asynchronous device, submission unless the observer syncs
	Depth    int           // 0 for a call made by user code, 1+ for calls ops make inside their own work
	Err      error
}

// CallObserver receives every finished op call. It runs on the calling
// goroutine and must not call ops itself.
type CallObserver func(e *CallEvent)

var (
	observer  atomic.Pointer[CallObserver]
	callDepth atomic.Int32 // nesting of observed calls (shared across goroutines: a hint, exact for one)
)

// SetCallObserver installs o (nil removes it) and returns the previous one.
func SetCallObserver(o CallObserver) CallObserver {
	var prev *CallObserver
	if o == nil {
		prev = observer.Swap(nil)
	} else {
		prev = observer.Swap(&o)
	}
	if prev == nil {
		return nil
	}
	return *prev
}

// observedCall is CallDef with the observer told of the call.
func observedCall(o CallObserver, def *OpDef, inputs []*Tensor, attrs Attrs) ([]*Tensor, error) {
	depth := int(callDepth.Add(1)) - 1
	start := time.Now()
	outs, err := callDef(def, inputs, attrs)
	dur := time.Since(start)
	callDepth.Add(-1)
	e := &CallEvent{Op: def.Name, Category: def.Category, Start: start, Duration: dur, Depth: depth, Err: err}
	// Shapes are copied: an observer may keep events (a profile does), and a
	// tensor's own shape would keep its storage alive with them.
	for _, t := range inputs {
		if t != nil && t.err == nil {
			e.Inputs = append(e.Inputs, Meta{Shape: t.Shape(), DType: t.dtype})
			if e.Device.Kind == "" {
				e.Device = t.Device()
			}
		}
	}
	for _, t := range outs {
		if t != nil {
			e.Outputs = append(e.Outputs, Meta{Shape: t.Shape(), DType: t.dtype})
			if e.Device.Kind == "" {
				e.Device = t.Device()
			}
		}
	}
	o(e)
	return outs, err
}
