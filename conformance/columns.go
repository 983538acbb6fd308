package conformance

import (
	"errors"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// A column whose device did not open says why in Result.Detail, with one of
// two prefixes that every runner writes the same way. Only a machine
// without the device at all (core.ErrNoDevice: no adapter, no driver) gives
// an unavailable column, shown as "-" and not counted; a backend that fails
// to open on a machine that has the device fails the run, so a broken
// WebGPU or CUDA stack cannot make its columns vanish from CI.
const (
	DetailUnavailable = "unavailable: "
	DetailOpenFailed  = "open failed: "
)

// RunColumn is the Go SDK's column for dev: every op's cases and the
// random streams, with the fallbacks counted from a reset before them. The
// runner adds the training check (conformance/training, which needs nn). A
// device that does not open gives a column saying why (OpenDetail).
func RunColumn(dev core.Device) Result {
	res := Result{SDK: "go", Backend: dev.Kind, Ops: map[string]OpResult{}}
	b, err := core.BackendFor(dev)
	if err != nil {
		res.Detail = OpenDetail(err)
		return res
	}
	core.ResetFallbacks()
	res.Detail = b.Capabilities().Description
	dir := VectorsDir()
	for _, def := range OpsWithSamples() {
		v, err := LoadVectors(dir, def.Name)
		if err != nil {
			res.Ops[def.Name] = OpResult{Status: "fail", Detail: err.Error()}
			continue
		}
		res.Ops[def.Name] = RunOp(def, v, dev)
	}
	res.Identity = RunIdentity(dev)
	res.Fallbacks = append([]core.Fallback{}, core.Fallbacks()...)
	return res
}

// OpenDetail is the Detail of a column whose backend did not open with err.
func OpenDetail(err error) string {
	if errors.Is(err, core.ErrNoDevice) {
		return DetailUnavailable + err.Error()
	}
	return DetailOpenFailed + err.Error()
}

// Unavailable reports whether r is a column of a device this machine lacks.
func (r Result) Unavailable() bool { return strings.HasPrefix(r.Detail, "unavailable") }

// OpenFailed reports whether r's device exists here but did not open.
func (r Result) OpenFailed() bool { return strings.HasPrefix(r.Detail, DetailOpenFailed) }

// Ran reports whether r's runner ran the cases (its device opened).
func (r Result) Ran() bool { return !r.Unavailable() && !r.OpenFailed() }

// DeviceFallbacks splits r.Fallbacks on the column's backend into CPU
// fallbacks and host work, each by op.
func (r Result) DeviceFallbacks() (cpu, host map[string]core.Fallback) {
	cpu, host = map[string]core.Fallback{}, map[string]core.Fallback{}
	for _, f := range r.Fallbacks {
		if kind, _, _ := strings.Cut(f.Device, ":"); kind != r.Backend {
			continue
		}
		m := cpu
		if f.Kind == core.FallbackHost {
			m = host
		}
		prev := m[f.Op]
		f.Count += prev.Count
		m[f.Op] = f
	}
	return cpu, host
}
