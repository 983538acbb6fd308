package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"

	"github.com/webtensor/webtensor/core"
)

//export wt_build_info
func wt_build_info(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	m := core.BuildManifest()
	info, _ := json.Marshal(map[string]any{
		"version": core.Version, "abi": int(C.WT_ABI_VERSION), "go": runtime.Version(),
		"commit": m.Commit, "os": runtime.GOOS, "arch": runtime.GOARCH,
	})
	return writeString(string(info), buf, capacity, needed)
}

//export wt_manifest_json
func wt_manifest_json(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	m, err := json.Marshal(core.BuildManifest())
	if err != nil {
		return fail(err)
	}
	return writeString(string(m), buf, capacity, needed)
}

//export wt_device_count
func wt_device_count(count *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if count == nil {
		return fail(invalid("wt_device_count: count is NULL"))
	}
	devs, _ := core.Devices()
	*count = C.int32_t(len(devs))
	return statusOK
}

//export wt_device_name
func wt_device_name(index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	devs, _ := core.Devices()
	if index < 0 || int(index) >= len(devs) {
		return fail(invalid("wt_device_name: device index %d out of range (%d devices)", int(index), len(devs)))
	}
	return writeString(devs[index].String(), buf, capacity, needed)
}

//export wt_default_device
func wt_default_device(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return writeString(core.DefaultDevice().String(), buf, capacity, needed)
}

//export wt_set_default_device
func wt_set_default_device(device *C.char) (status C.int32_t) {
	defer guard(&status)
	name, ok := goString(device)
	if !ok {
		return fail(invalid("wt_set_default_device: device is NULL"))
	}
	d, err := core.ParseDevice(name)
	if err != nil {
		return fail(invalid("%v", err))
	}
	if err := core.SetDefaultDevice(d); err != nil {
		return fail(errf(statusUnsupported, "device %q: %v", name, err))
	}
	return statusOK
}

//export wt_manual_seed
func wt_manual_seed(seed C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	core.ManualSeed(uint64(seed))
	return statusOK
}

//export wt_rng_state
func wt_rng_state(seed, offset *C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	if seed == nil || offset == nil {
		return fail(invalid("wt_rng_state: seed or offset is NULL"))
	}
	s, o := core.RNGState()
	*seed, *offset = C.uint64_t(s), C.uint64_t(o)
	return statusOK
}

//export wt_set_rng_state
func wt_set_rng_state(seed, offset C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	core.SetRNGState(uint64(seed), uint64(offset))
	return statusOK
}
