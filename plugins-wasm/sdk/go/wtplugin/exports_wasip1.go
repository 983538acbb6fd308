//go:build wasip1

//lint:file-ignore U1000 the host calls the go:wasmexport functions; staticcheck cannot see those calls

package wtplugin

import (
	"fmt"
	"unsafe"
)

// The ABI's exports. The host sees only 32-bit addresses, which the garbage
// collector cannot trace, so everything the host may still read is kept
// reachable from a package variable. Go's collector never moves objects, so
// a reachable block stays at the address the host was given.

var (
	live       = map[uintptr][]uint64{} // wt_alloc blocks until wt_free
	lastError  []byte                   // until the next failure
	lastAnswer []byte                   // wt_infer's answer, until the next one
	anchor     byte
)

// at turns a linear-memory address into a pointer. The module's memory
// starts at address 0, so the address is the pointer; it is formed as an
// offset from a real one so go vet's unsafe.Pointer check stays useful.
func at(addr uint32) unsafe.Pointer {
	base := unsafe.Pointer(&anchor)
	return unsafe.Add(base, int(addr)-int(uintptr(base)))
}

func linear(addr, n uint32) []byte {
	if addr == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(at(addr)), n)
}

func pack(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	return int64(uint64(uintptr(unsafe.Pointer(&b[0])))<<32 | uint64(len(b)))
}

func fail(err error) {
	lastError = []byte(err.Error())
}

// guard turns a panic outside the kernel (a record that points nowhere) into
// a failed call: an unrecovered panic would exit the module, and the host
// would see only an exit code instead of the reason.
func guard(what string, failed func()) {
	if p := recover(); p != nil {
		fail(fmt.Errorf("%s %s: %v", pluginName, what, p))
		failed()
	}
}

//go:wasmexport wt_plugin_abi
func wtPluginABI() int32 { return 1 }

// wt_alloc hands out 8-byte aligned blocks backed by []uint64. A request the
// runtime could not satisfy would abort the module rather than return 0, so
// sizes beyond any memory cap are refused up front.
//
//go:wasmexport wt_alloc
func wtAlloc(size uint32) uint32 {
	if size > 1<<31 {
		return 0
	}
	block := make([]uint64, (size+7)/8+1) // +1: size 0 still gets its own address
	p := uintptr(unsafe.Pointer(&block[0]))
	live[p] = block
	return uint32(p)
}

//go:wasmexport wt_free
func wtFree(ptr, _ uint32) {
	delete(live, uintptr(ptr))
}

//go:wasmexport wt_manifest
func wtManifest() int64 { return pack(Manifest()) }

//go:wasmexport wt_error
func wtError() int64 { return pack(lastError) }

//go:wasmexport wt_kernel
func wtKernel(op int32, call uint32) (rc int32) {
	defer guard("wt_kernel", func() { rc = 1 })
	c, err := decodeCall(linear, call)
	if err == nil {
		err = runKernel(int(op), c)
	}
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}

//go:wasmexport wt_infer
func wtInfer(op int32, ptr, n uint32) (packed int64) {
	defer guard("wt_infer", func() { packed = 0 })
	answer, err := runInfer(int(op), linear(ptr, n))
	if err != nil {
		fail(err)
		return 0
	}
	lastAnswer = answer
	return pack(lastAnswer)
}

//go:wasmexport wt_decide
func wtDecide(policy int32, ptr, n uint32) (packed int64) {
	defer guard("wt_decide", func() { packed = 0 })
	answer, err := runDecide(int(policy), linear(ptr, n))
	if err != nil {
		fail(err)
		return 0
	}
	lastAnswer = answer
	return pack(lastAnswer)
}
