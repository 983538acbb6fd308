//go:build js && wasm

package main

import (
	"encoding/json"
	"strconv"
	"syscall/js"

	"github.com/webtensor/webtensor/core"
)

func handleOut(t *core.Tensor) (any, error) { return newHandle(t) }

func bytesToJS(raw []byte) js.Value {
	u := js.Global().Get("Uint8Array").New(len(raw))
	js.CopyBytesToJS(u, raw)
	return u
}

// readBytes returns the tensor's elements, row-major, as a Uint8Array.
func readBytes(args []js.Value) (any, error) {
	t, err := tensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	raw, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	return bytesToJS(raw), nil
}

func toDevice(args []js.Value) (any, error) {
	t, err := tensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	dev, err := deviceArg(args, 1)
	if err != nil || dev == nil {
		return nil, invalid("toDevice needs a device name")
	}
	return handleOut(t.To(dev[0]))
}

func deviceNames() []any {
	devs, _ := core.Devices()
	out := make([]any, len(devs))
	for i, d := range devs {
		out[i] = d.String()
	}
	return out
}

func syncCalls() map[string]call {
	return map[string]call{
		"fromData": func(args []js.Value) (any, error) {
			code, err := intArg(args, 1, "dtype")
			if err != nil {
				return nil, err
			}
			dt, err := dtypeOf(code)
			if err != nil {
				return nil, err
			}
			dims, err := intList(args[2], "shape", maxDims)
			if err != nil {
				return nil, err
			}
			shape := core.Shape(dims)
			for _, d := range dims {
				if d < 0 {
					return nil, invalid("bad shape %v: extents are integers >= 0", dims)
				}
			}
			dev, err := deviceArg(args, 3)
			if err != nil {
				return nil, err
			}
			src := args[0]
			want := shape.Numel() * dt.Size()
			if src.Type() != js.TypeObject || src.Get("byteLength").Int() != want {
				return nil, invalid("data has %v bytes, shape %v of %s needs %d", src.Get("byteLength"), shape, dt, want)
			}
			raw := make([]byte, want)
			js.CopyBytesToGo(raw, src)
			return handleOut(core.FromBytes(dt, shape, raw, dev...))
		},
		"free": func(args []js.Value) (any, error) {
			h, err := intArg(args, 0, "tensor handle")
			if err != nil {
				return nil, err
			}
			return nil, release(h)
		},
		"retain": func(args []js.Value) (any, error) {
			h, err := intArg(args, 0, "tensor handle")
			if err != nil {
				return nil, err
			}
			return nil, retain(h)
		},
		"liveTensors": func([]js.Value) (any, error) { return len(table), nil },
		"info": func(args []js.Value) (any, error) {
			t, err := tensorArg(args, 0)
			if err != nil {
				return nil, err
			}
			return []any{int(t.DType()), ints(t.Shape()), ints(t.Strides()), t.Device().String(),
				t.IsContiguous(), t.RequiresGrad()}, nil
		},
		"readSync":   readBytes,
		"toDevice":   toDevice,
		"contiguous": func(args []js.Value) (any, error) { return unary(args, (*core.Tensor).Contiguous) },
		"detach":     func(args []js.Value) (any, error) { return unary(args, (*core.Tensor).Detach) },
		"op":         runOp,
		"manifest": func([]js.Value) (any, error) {
			m, err := json.Marshal(core.BuildManifest())
			return string(m), err
		},
		"devices":       func([]js.Value) (any, error) { return deviceNames(), nil },
		"defaultDevice": func([]js.Value) (any, error) { return core.DefaultDevice().String(), nil },
		"setDefaultDevice": func(args []js.Value) (any, error) {
			dev, err := deviceArg(args, 0)
			if err != nil || dev == nil {
				return nil, invalid("setDefaultDevice needs a device name")
			}
			if err := core.SetDefaultDevice(dev[0]); err != nil {
				return nil, &abiError{statusUnsupported, "device " + dev[0].String() + ": " + err.Error()}
			}
			return nil, nil
		},
		"setRequiresGrad": func(args []js.Value) (any, error) {
			t, err := tensorArg(args, 0)
			if err != nil {
				return nil, err
			}
			return nil, t.SetRequiresGrad(len(args) > 1 && args[1].Truthy()).Err()
		},
		"backward": backward,
		"grad": func(args []js.Value) (any, error) {
			t, err := tensorArg(args, 0)
			if err != nil {
				return nil, err
			}
			if g := t.Grad(); g != nil {
				return handleOut(g)
			}
			return 0, nil
		},
		"zeroGrad": func(args []js.Value) (any, error) {
			t, err := tensorArg(args, 0)
			if err == nil {
				t.ZeroGrad()
			}
			return nil, err
		},
		"noGradEnter": func([]js.Value) (any, error) { core.EnterNoGrad(); return nil, nil },
		"noGradExit":  func([]js.Value) (any, error) { return nil, core.ExitNoGrad() },
		"manualSeed": func(args []js.Value) (any, error) {
			s, err := stringArg(args, 0, "seed")
			if err != nil {
				return nil, err
			}
			seed, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, invalid("seed %q is not an unsigned 64-bit integer", s)
			}
			core.ManualSeed(seed)
			return nil, nil
		},
		"safetensorsHeader": safetensorsHeader,
	}
}

func asyncCalls() map[string]call {
	return map[string]call{
		"read":          readBytes,
		"toDeviceAsync": toDevice,
		// The async forms of op and backward: the same calls on a goroutine
		// that may wait for the GPU, for what must read GPU memory to
		// proceed (an output shape that depends on the data, sparse
		// structure, ...).
		"opAsync":       runOp,
		"backwardAsync": backward,
		// init opens the WebGPU device (its adapter and device promises need
		// the event loop) and makes it the default unless the page asked for
		// the CPU; it resolves to [default device, why WebGPU is not used].
		"init": func(args []js.Value) (any, error) {
			preferGPU := len(args) == 0 || args[0].Truthy()
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
			return []any{core.DefaultDevice().String(), why}, nil
		},
	}
}

func unary(args []js.Value, f func(*core.Tensor) *core.Tensor) (any, error) {
	t, err := tensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	return handleOut(f(t))
}

// runOp calls a registry op: op(name, [handles; 0 = absent], attrs) -> [handles].
func runOp(args []js.Value) (any, error) {
	name, err := stringArg(args, 0, "op name")
	if err != nil {
		return nil, err
	}
	hs, err := intList(args[1], name+": inputs", maxInputs)
	if err != nil {
		return nil, err
	}
	ins := make([]*core.Tensor, len(hs))
	for i, h := range hs {
		if h == 0 {
			continue
		}
		if ins[i], err = tensorOf(h); err != nil {
			return nil, &abiError{statusHandle, name + ": input " + strconv.Itoa(i) + ": " + err.Error()}
		}
	}
	var attrs core.Attrs
	if len(args) > 2 {
		if attrs, err = attrsArg(args[2]); err != nil {
			return nil, &abiError{statusInvalid, name + ": " + err.Error()}
		}
	}
	outs, err := core.Call(name, ins, attrs)
	if err != nil {
		return nil, err
	}
	res := make([]any, len(outs))
	for i, o := range outs {
		if res[i], err = newHandle(o); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func backward(args []js.Value) (any, error) {
	t, err := tensorArg(args, 0)
	if err != nil {
		return nil, err
	}
	if h, _ := intArg(args, 1, "gradient"); h != 0 {
		g, err := tensorOf(h)
		if err != nil {
			return nil, err
		}
		return nil, t.Backward(g)
	}
	return nil, t.Backward()
}
