package core

import "sync/atomic"

// Tracer observes the op calls a program makes: graph capture (core/ir)
// installs one while it runs the function it captures. Record gets each
// successful top-level call with its inputs and attributes as the caller
// passed them (before promotion, and without the seed a random op draws,
// so a replay draws afresh) and its outputs.
type Tracer interface {
	Record(def *OpDef, inputs []*Tensor, attrs Attrs, outs []*Tensor)
}

// Aliaser is implemented by tracers that follow tensors made without an
// op call: Alias says that dst holds src's data (Detach made it; Backward
// detaches each gradient it stores in a leaf's Grad), so a traced value
// read through dst is src's.
type Aliaser interface {
	Alias(src, dst *Tensor)
}

type tracerBox struct {
	t     Tracer
	depth atomic.Int32
}

var tracer atomic.Pointer[tracerBox]

// SetTracer installs t (nil removes it) for the whole process and returns
// the previous one. Capture is meant for one goroutine at a time: calls from
// other goroutines while a tracer is set are recorded too.
func SetTracer(t Tracer) (previous Tracer) {
	var box *tracerBox
	if t != nil {
		box = &tracerBox{t: t}
	}
	if old := tracer.Swap(box); old != nil {
		return old.t
	}
	return nil
}

// Tracing reports whether a tracer is installed. Code with a fast path that
// calls a backend directly (a fused kernel, which no tracer would see)
// takes the plain op calls while one is.
func Tracing() bool { return tracer.Load() != nil }
