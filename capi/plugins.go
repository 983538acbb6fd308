package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

//export wt_plugin_load
func wt_plugin_load(path *C.char, nameBuf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	file, _ := goString(path)
	name, err := abi.PluginLoad(file)
	return writeResult(name, err, nameBuf, capacity, needed)
}

//export wt_plugin_load_bytes
func wt_plugin_load_bytes(wasm unsafe.Pointer, nbytes C.size_t, label *C.char, nameBuf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if wasm == nil || nbytes == 0 || nbytes > 1<<30 {
		return invalid("wt_plugin_load_bytes: need a non-NULL module of 1 byte to 1 GiB, got %d bytes", uint64(nbytes))
	}
	l, _ := goString(label)
	// A copy: the host may keep the module's bytes after the call.
	name, err := abi.PluginLoadBytes(C.GoBytes(wasm, C.int(nbytes)), l)
	return writeResult(name, err, nameBuf, capacity, needed)
}

//export wt_plugin_ops
func wt_plugin_ops(plugin *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	name, ok := goString(plugin)
	if !ok {
		return invalid("wt_plugin_ops: plugin is NULL")
	}
	ops, err := abi.PluginOps(name)
	return writeResult(ops, err, buf, capacity, needed)
}

//export wt_tuning_policy_set
func wt_tuning_policy_set(plugin *C.char, policy *C.char) (status C.int32_t) {
	defer guard(&status)
	name, _ := goString(plugin)
	pol, _ := goString(policy)
	return done(abi.TuningPolicySet(name, pol))
}
