//go:build js && wasm

package main

import (
	"strconv"
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

// The calls of table.go that need more than one abi call's plumbing.

// noGradDepth is the page's no-grad depth: JavaScript calls from one
// thread, so one variable is what capi's C thread-local is per thread.
var noGradDepth int32

func inNoGrad() bool { return abi.InNoGrad(func() *int32 { return &noGradDepth }) }

// onHandle is a call taking a handle and returning nothing.
func onHandle(f func(int64) error) call {
	return func(a args) (any, error) {
		h, err := a.handle(0)
		if err != nil {
			return nil, err
		}
		return nil, f(h)
	}
}

// ofHandle is a call taking a handle and returning one value.
func ofHandle[R any](f func(int64) (R, error)) call {
	return func(a args) (any, error) {
		h, err := a.handle(0)
		if err != nil {
			return nil, err
		}
		return f(h)
	}
}

// onDevice is a call taking a device name and returning nothing.
func onDevice(f func(string) error) call {
	return func(a args) (any, error) {
		d, err := a.str(0, "device")
		if err != nil {
			return nil, err
		}
		return nil, f(d)
	}
}

func ints(xs []int, err error) (any, error) {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out, err
}

func handleList(outs abi.Outputs) []any {
	hs := make([]int64, outs.Len())
	outs.Handles(hs)
	res := make([]any, len(hs))
	for i, h := range hs {
		res[i] = h
	}
	return res
}

func statusString(a args) (any, error) {
	s, err := a.int(0, "status")
	if err != nil {
		return nil, err
	}
	return abi.StatusString(abi.Status(s)), nil
}

func deviceName(a args) (any, error) {
	i, err := a.int(0, "index")
	if err != nil {
		return nil, err
	}
	return abi.DeviceName(i)
}

// ofDevice calls fn, a query of a device (its report as JSON, its
// stream), with the device named by the first argument.
func ofDevice[R any](fn func(device string) (R, error)) call {
	return func(a args) (any, error) {
		d, err := a.str(0, "device")
		if err != nil {
			return nil, err
		}
		return fn(d)
	}
}

func deviceSetOption(a args) (any, error) {
	r := a.reader()
	d := r.str(0, "device")
	name := r.str(1, "name")
	v := r.int(2, "value")
	return r.then(func() (any, error) { return nil, abi.DeviceSetOption(d, name, v) })
}

// deviceStream gives the stream as a decimal string: a uint64 need not
// fit a Number.
var deviceStream = ofDevice(func(d string) (string, error) {
	s, err := abi.DeviceStream(d)
	return strconv.FormatUint(s, 10), err
})

func setNumThreads(a args) (any, error) {
	n, err := a.int(0, "n")
	if err != nil {
		return nil, err
	}
	return nil, abi.SetNumThreads(n)
}

func fallbacks(a args) (any, error) {
	fb, err := abi.FallbacksJSON()
	if err == nil && a.bool(0) {
		abi.ResetFallbacks()
	}
	return fb, err
}

// layout reads (dtype, shape, device) from argument i on.
func layout(a args, i int) (abi.Layout, error) {
	dtype, err := a.int(i, "dtype")
	if err != nil {
		return abi.Layout{}, err
	}
	dims, err := a.ints(i+1, "shape")
	if err != nil {
		return abi.Layout{}, err
	}
	dev, err := a.optStr(i+2, "device")
	if err != nil {
		return abi.Layout{}, err
	}
	return abi.ParseLayout(dtype, dims, dev)
}

// tensorFromData(data: Uint8Array, dtype, shape, device | null) -> handle
func tensorFromData(a args) (any, error) {
	l, err := layout(a, 1)
	if err != nil {
		return nil, err
	}
	raw, err := a.bytes(0, "data", func(n int) error { _, err := l.DataSize(uint64(n)); return err })
	if err != nil {
		return nil, err
	}
	return abi.TensorFromData(l, raw)
}

// tensorZeros(dtype, shape, device | null) -> handle
func tensorZeros(a args) (any, error) {
	l, err := layout(a, 0)
	if err != nil {
		return nil, err
	}
	return abi.TensorZeros(l)
}

// tensorToHost(h, dst: Uint8Array) copies the elements into dst.
func tensorToHost(a args) (any, error) {
	h, err := a.handle(0)
	if err != nil {
		return nil, err
	}
	dst, err := a.uint8Array(1, "dst")
	if err != nil {
		return nil, err
	}
	n, err := abi.TensorHostSize(h)
	if err != nil {
		return nil, err
	}
	if capacity := dst.Get("byteLength").Int(); capacity < n {
		return nil, abi.Errorf(abi.StatusBufferTooSmall, "wt_tensor_to_host: buffer of %d bytes is too small: %d needed", capacity, n)
	}
	raw, err := abi.TensorToHost(h)
	if err != nil {
		return nil, err
	}
	js.CopyBytesToJS(dst, raw[:n])
	return nil, nil
}

func tensorContiguous(a args) (any, error) {
	h, err := a.handle(0)
	if err != nil {
		return nil, err
	}
	return abi.TensorContiguous(h, a.noGrad)
}

func tensorToDevice(a args) (any, error) {
	r := a.reader()
	h := r.handle(0)
	d := r.optStr(1, "device")
	return r.then(func() (any, error) { return abi.TensorToDevice(h, d, a.noGrad) })
}

// op(name, inputs: handles (0 = absent), attrs: [name, kind, value][]) -> handles
func op(a args) (any, error) {
	r := a.reader()
	name := r.str(0, "op name")
	ins := r.ints(1, name+": inputs")
	if r.err != nil {
		return nil, r.err
	}
	var attrs jsAttrs
	if len(a.v) > 2 {
		attrs.v = a.v[2]
	}
	outs, err := abi.Op(name, ins, attrs, a.noGrad)
	if err != nil {
		return nil, err
	}
	return handleList(outs), nil
}

func setRequiresGrad(a args) (any, error) {
	h, err := a.handle(0)
	if err != nil {
		return nil, err
	}
	return nil, abi.TensorSetRequiresGrad(h, a.bool(1))
}

// backward(h, grad: a handle, 0 for none)
func backward(a args) (any, error) {
	h, err := a.handle(0)
	if err != nil {
		return nil, err
	}
	var g int64
	if !a.absent(1) {
		if g, err = a.int(1, "gradient handle"); err != nil {
			return nil, err
		}
	}
	return nil, abi.Backward(h, g)
}

func manualSeed(a args) (any, error) {
	s, err := a.uint64(0, "seed")
	if err == nil {
		abi.ManualSeed(s)
	}
	return nil, err
}

func promoteTypes(a args) (any, error) {
	r := a.reader()
	x := r.int(0, "a")
	y := r.int(1, "b")
	return r.then(func() (any, error) { return abi.PromoteTypes(x, y) })
}

func rngState(args) (any, error) {
	s, o := abi.RNGState()
	return []any{strconv.FormatUint(s, 10), strconv.FormatUint(o, 10)}, nil
}

func setRNGState(a args) (any, error) {
	r := a.reader()
	s := r.uint64(0, "seed")
	o := r.uint64(1, "offset")
	if r.err != nil {
		return nil, r.err
	}
	abi.SetRNGState(s, o)
	return nil, nil
}

func traceBegin(a args) (any, error) {
	ins, err := a.ints(0, "inputs")
	if err != nil {
		return nil, err
	}
	return nil, abi.TraceBegin(ins)
}

func traceEnd(a args) (any, error) {
	outs, err := a.ints(0, "outputs")
	if err != nil {
		abi.TraceAbort() // the capture ends either way, as in the C ABI
		return nil, err
	}
	return abi.TraceEnd(outs)
}

// graphRun(graph, inputs) -> handles
func graphRun(a args) (any, error) {
	r := a.reader()
	g := r.int(0, "graph handle")
	ins := r.ints(1, "inputs")
	if r.err != nil {
		return nil, r.err
	}
	outs, err := abi.GraphRun(g, ins, a.noGrad)
	if err != nil {
		return nil, err
	}
	return handleList(outs), nil
}

// safetensorsHeader(prefix: Uint8Array, fileSize, name) -> layout JSON
func safetensorsHeader(a args) (any, error) {
	size, err := a.int(1, "file size")
	if err == nil && size < 0 {
		err = abi.Invalidf("file size %d is negative", size)
	}
	if err != nil {
		return nil, err
	}
	name, err := a.optStr(2, "name")
	if err != nil {
		return nil, err
	}
	prefix, err := a.bytes(0, "prefix", func(n int) error { return abi.CheckSafetensorsPrefix(uint64(n), uint64(size)) })
	if err != nil {
		return nil, err
	}
	return abi.SafetensorsHeader(prefix, uint64(size), name)
}

// browserInit(preferGPU) -> [default device, why WebGPU is not used ("" when
// it is), the WebGPU adapter's description, whether it is a software one]
func browserInit(a args) (any, error) {
	preferGPU := len(a.v) == 0 || a.v[0].Truthy()
	_, gpuErr := core.BackendFor(core.Device{Kind: "webgpu"})
	why := ""
	switch {
	case !preferGPU:
		why = "the CPU backend was asked for"
	case gpuErr != nil:
		why = gpuErr.Error()
	default:
		if err := core.SetDefaultDevice(core.Device{Kind: "webgpu"}); err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		if err := core.SetDefaultDevice(core.CPU); err != nil {
			return nil, err
		}
	}
	desc, software := "", false
	if gpuErr == nil {
		if b, err := core.BackendFor(core.Device{Kind: "webgpu"}); err == nil {
			software = b.Capabilities().Software
			if w, ok := b.(*webgpu.Backend); ok {
				desc = w.Info().DriverDescription // the adapter's words, without Capabilities' decoration
			}
		}
	}
	return []any{core.DefaultDevice().String(), why, desc, software}, nil
}
