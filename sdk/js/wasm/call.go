//go:build js && wasm

package main

import "github.com/webtensor/webtensor/abi"

// wt_call(target, self, argsJSON, data: Uint8Array | null, onStep?) -> result handle:
// the domain libraries' methods by name (abi/call.go), read back with
// wt_call_result_json as through the C ABI. The models that load from
// folders say so when asked: a page has no file system.
func callMethod(a args) (any, error) {
	r := a.reader()
	target := r.str(0, "target")
	self := r.int(1, "self")
	argsJSON := r.optStr(2, "args_json")
	if r.err != nil {
		return nil, r.err
	}
	var data []byte
	if !a.absent(3) {
		var err error
		if data, err = a.bytes(3, "data", nil); err != nil {
			return nil, err
		}
	}
	// onStep (a diffusion pipeline's sampling): the header has no callback.
	progress, err := a.onStep(4, self)
	if err != nil {
		return nil, err
	}
	return abi.CallToResult(target, self, argsJSON, data, abi.CallContext{NoGrad: a.noGrad, Progress: progress, OwnsData: true})
}
