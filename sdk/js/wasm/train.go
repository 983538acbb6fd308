//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
)

// The training and checkpoint calls of table.go: optimisers, schedules,
// clipping and state dicts, with the same rules as the others (settings
// are [name, kind, value] attributes as wt_op's, handles are Numbers,
// bytes are Uint8Arrays).

// float reads a number argument.
func (a args) float(i int, what string) (float64, error) {
	v, err := a.at(i, what)
	if err != nil {
		return 0, err
	}
	if v.Type() != js.TypeNumber {
		return 0, abi.Invalidf("%s must be a number, got %s", what, v.Type())
	}
	return v.Float(), nil
}

// settings reads argument i as attributes (absent: none).
func (a args) settings(i int) jsAttrs {
	if a.absent(i) {
		return jsAttrs{v: js.Null()}
	}
	return jsAttrs{v: a.v[i]}
}

// optimizerNew(kind, params: handles, settings) -> optimizer handle
func optimizerNew(a args) (any, error) {
	r := a.reader()
	kind := r.str(0, "kind")
	ps := r.ints(1, "params")
	return r.then(func() (any, error) { return abi.OptimizerNew(kind, ps, a.settings(2)) })
}

// optimizerSet(optimizer, settings)
func optimizerSet(a args) (any, error) {
	h, err := a.int(0, "optimizer handle")
	if err != nil {
		return nil, err
	}
	return nil, abi.OptimizerSet(h, a.settings(1))
}

// optimizerLoadState(optimizer, state)
func optimizerLoadState(a args) (any, error) {
	r := a.reader()
	h := r.int(0, "optimizer handle")
	s := r.int(1, "state handle")
	return r.then(func() (any, error) { return nil, abi.OptimizerLoadState(h, s) })
}

// lrSchedule(kind, settings, base, step) -> lr
func lrSchedule(a args) (any, error) {
	r := a.reader()
	kind := r.str(0, "kind")
	base := r.float(2, "base_lr")
	step := r.int(3, "step")
	return r.then(func() (any, error) { return abi.LRSchedule(kind, a.settings(1), base, step) })
}

// clipGradNorm(params, maxNorm, normType) -> the total norm's handle
func clipGradNorm(a args) (any, error) {
	r := a.reader()
	ps := r.ints(0, "params")
	maxNorm := r.float(1, "max_norm")
	normType := r.float(2, "norm_type")
	return r.then(func() (any, error) { return abi.ClipGradNorm(ps, maxNorm, normType) })
}

// clipGradValue(params, clip)
func clipGradValue(a args) (any, error) {
	r := a.reader()
	ps := r.ints(0, "params")
	clip := r.float(1, "clip_value")
	return r.then(func() (any, error) { return nil, abi.ClipGradValue(ps, clip) })
}

// nnInit(tensor, method, settings)
func nnInit(a args) (any, error) {
	r := a.reader()
	t := r.handle(0)
	method := r.str(1, "method")
	return r.then(func() (any, error) { return nil, abi.NNInit(t, method, a.settings(2)) })
}

// nnCalculateGain(nonlinearity, param) -> gain
func nnCalculateGain(a args) (any, error) {
	r := a.reader()
	n := r.str(0, "nonlinearity")
	param := r.float(1, "param")
	return r.then(func() (any, error) { return abi.NNCalculateGain(n, param) })
}

// statePut(state, name, tensor)
func statePut(a args) (any, error) {
	r := a.reader()
	s := r.int(0, "state handle")
	name := r.str(1, "name")
	t := r.handle(2)
	return r.then(func() (any, error) { return nil, abi.StatePut(s, name, t) })
}

// stateIndexed is a call taking a state handle and an entry index.
func stateIndexed[R any](f func(s int64, i int) (R, error)) call {
	return func(a args) (any, error) {
		s, err := a.int(0, "state handle")
		if err != nil {
			return nil, err
		}
		i, err := a.int(1, "index")
		if err != nil {
			return nil, err
		}
		return f(s, int(i))
	}
}

// metadataPart reads part (0: key, 1: value) of metadata entry i.
func metadataPart(part int) call {
	return stateIndexed(func(s int64, i int) (string, error) {
		m, err := abi.StateMetadata(s)
		if err != nil {
			return "", err
		}
		e, err := abi.MetadataEntry(m, i)
		return e[part], err
	})
}

// stateSetMetadata(state, key, value)
func stateSetMetadata(a args) (any, error) {
	r := a.reader()
	s := r.int(0, "state handle")
	k := r.str(1, "key")
	v := r.str(2, "value")
	return r.then(func() (any, error) { return nil, abi.StateSetMetadata(s, k, v) })
}

// stateToBytes(state) -> Uint8Array
func stateToBytes(a args) (any, error) {
	s, err := a.int(0, "state handle")
	if err != nil {
		return nil, err
	}
	raw, err := abi.StateEncode(s)
	if err != nil {
		return nil, err
	}
	out := js.Global().Get("Uint8Array").New(len(raw))
	js.CopyBytesToJS(out, raw)
	return out, nil
}

// stateFromBytes(bytes: Uint8Array, device, name) -> state handle
func stateFromBytes(a args) (any, error) {
	raw, err := a.bytes(0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	r := a.reader()
	d := r.optStr(1, "device")
	name := r.optStr(2, "name")
	return r.then(func() (any, error) { return abi.StateDecode(raw, d, name) })
}

// stateAssign(module, values, strict, moduleName)
func stateAssign(a args) (any, error) {
	r := a.reader()
	m := r.int(0, "module state handle")
	v := r.int(1, "values state handle")
	name := r.optStr(3, "module name")
	return r.then(func() (any, error) { return nil, abi.StateAssign(m, v, a.bool(2), name) })
}
