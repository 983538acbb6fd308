//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
)

// Datasets and loaders (abi/data.go) as the bridge takes them: datasets
// from a file's bytes (the page has no file system), lists as arrays, a
// batch as an array of handles (empty at the end of an epoch).

// datasetOpenBytes(spec: string, bytes: Uint8Array) -> dataset handle
func datasetOpenBytes(a args) (any, error) {
	spec, err := a.str(0, "spec")
	if err != nil {
		return nil, err
	}
	raw, err := a.bytes(1, "bytes", nil)
	if err != nil {
		return nil, err
	}
	return abi.DatasetOpenBytes(spec, raw)
}

// strList reads an optional array of strings (null: none).
func strList(a args, i int, what string) ([]string, error) {
	if a.absent(i) {
		return nil, nil
	}
	v := a.v[i]
	if !isArray(v) {
		return nil, abi.Invalidf("%s must be an array, got %s", what, v.Type())
	}
	if err := abi.CheckCount(what+": count", int64(v.Length()), abi.MaxInputs); err != nil {
		return nil, err
	}
	out := make([]string, v.Length())
	for k := range out {
		s := v.Index(k)
		if s.Type() != js.TypeString {
			return nil, abi.Invalidf("%s[%d] must be a string, got %s", what, k, s.Type())
		}
		out[k] = s.String()
	}
	return out, nil
}

// datasetFromTensors(tensors: handles, names?: string[]) -> dataset handle
func datasetFromTensors(a args) (any, error) {
	hs, err := a.ints(0, "tensors")
	if err != nil {
		return nil, err
	}
	names, err := strList(a, 1, "names")
	if err != nil {
		return nil, err
	}
	return abi.DatasetFromTensors(hs, names)
}

// datasetGet(dataset, index, device?) -> handles
func datasetGet(a args) (any, error) {
	r := a.reader()
	h := r.int(0, "dataset handle")
	i := r.int(1, "index")
	d := r.optStr(2, "device")
	if r.err != nil {
		return nil, r.err
	}
	outs, err := abi.DatasetGet(h, i, d)
	if err != nil {
		return nil, err
	}
	return handleList(outs), nil
}

// loaderNew(dataset, options?: JSON string) -> loader handle
func loaderNew(a args) (any, error) {
	r := a.reader()
	h := r.int(0, "dataset handle")
	o := r.optStr(1, "options")
	return r.then(func() (any, error) { return abi.LoaderNew(h, o) })
}

// loaderEpoch(loader, epoch)
func loaderEpoch(a args) (any, error) {
	r := a.reader()
	h := r.int(0, "loader handle")
	e := r.int(1, "epoch")
	return r.then(func() (any, error) { return nil, abi.LoaderEpoch(h, e) })
}

// loaderNext(loader) -> handles, [] at the end of the epoch
func loaderNext(a args) (any, error) {
	h, err := a.int(0, "loader handle")
	if err != nil {
		return nil, err
	}
	n, err := abi.LoaderFieldCount(h)
	if err != nil {
		return nil, err
	}
	outs, err := abi.LoaderNext(h, n)
	if err != nil {
		return nil, err
	}
	return handleList(outs), nil
}

// dataPermutation(n, seed: decimal string or number, epoch) -> number[]
func dataPermutation(a args) (any, error) {
	r := a.reader()
	n := r.int(0, "n")
	seed := r.uint64(1, "seed")
	e := r.int(2, "epoch")
	if r.err != nil {
		return nil, r.err
	}
	p, err := abi.DataPermutation(n, seed, e)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(p))
	for i, v := range p {
		out[i] = v
	}
	return out, nil
}
