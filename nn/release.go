package nn

import (
	"reflect"

	"github.com/webtensor/webtensor/core"
)

// ReleaseDead gives the memory of intermediates a forward pass made and will
// not read again back to the CPU backend's cache at once, for model code
// (multimodal's encoders, diffuse's UNets) that knows where its values die.
// Left to the garbage collector, each op's output is a block last touched a
// collection ago, cold in every cache: a MiniLM layer's layer_norm took 2.8x
// its time on such a block against one just released (what PyTorch's
// reference counting hands back).
//
// It releases only what nothing else can read: on the CPU (whose kernels have
// finished when they return), with no tracer (which may hold the tensors),
// inside a NoGrad scope (so no backward node saved them), never a tensor that
// carries an error, and never one whose storage a tensor in live shares (the
// view of it the caller goes on with). The caller passes only tensors it made
// and handed to no one, whose views die with it except those in live.
func ReleaseDead(live []*core.Tensor, dead ...*core.Tensor) {
	if core.Tracing() || core.GradEnabled() {
		return
	}
	for _, t := range dead {
		if t == nil || t.Err() != nil || t.Device() != core.CPU || t.RequiresGrad() || sharesStorage(t, live) {
			continue
		}
		t.Release()
	}
}

// sharesStorage reports whether one of live has t's storage (true when that
// cannot be told: a storage type that == cannot compare).
func sharesStorage(t *core.Tensor, live []*core.Tensor) bool {
	s := t.Storage()
	if len(live) == 0 {
		return false
	}
	if s == nil || !reflect.TypeOf(s).Comparable() {
		return true
	}
	for _, l := range live {
		if l != nil && l.Err() == nil && l.Device() == core.CPU && l.Storage() == s {
			return true
		}
	}
	return false
}
