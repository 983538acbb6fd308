package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

// The device functions (abi/devices.go), their C arguments checked here.

// deviceName reads a device function's required device name.
func deviceName(fn string, device *C.char) (string, error) {
	name, ok := goString(device)
	if !ok {
		return "", abi.Invalidf("%s: device is NULL", fn)
	}
	return name, nil
}

//export wt_device_count
func wt_device_count(count *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if count == nil {
		return invalid("wt_device_count: count is NULL")
	}
	*count = C.int32_t(abi.DeviceCount())
	return statusOK
}

//export wt_device_name
func wt_device_name(index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	name, err := abi.DeviceName(int64(index))
	return writeResult(name, err, buf, capacity, needed)
}

//export wt_default_device
func wt_default_device(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return writeString(abi.DefaultDevice(), buf, capacity, needed)
}

//export wt_set_default_device
func wt_set_default_device(device *C.char) (status C.int32_t) {
	defer guard(&status)
	name, err := deviceName("wt_set_default_device", device)
	if err != nil {
		return fail(err)
	}
	return done(abi.SetDefaultDevice(name))
}

//export wt_device_sync
func wt_device_sync(device *C.char) (status C.int32_t) {
	defer guard(&status)
	name, err := deviceName("wt_device_sync", device)
	if err != nil {
		return fail(err)
	}
	return done(abi.DeviceSync(name))
}

//export wt_device_info_json
func wt_device_info_json(device *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	name, err := deviceName("wt_device_info_json", device)
	if err != nil {
		return fail(err)
	}
	info, err := abi.DeviceInfoJSON(name)
	return writeResult(info, err, buf, capacity, needed)
}

//export wt_device_tuning_json
func wt_device_tuning_json(device *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	name, err := deviceName("wt_device_tuning_json", device)
	if err != nil {
		return fail(err)
	}
	js, err := abi.DeviceTuningJSON(name)
	return writeResult(js, err, buf, capacity, needed)
}

//export wt_device_empty_cache
func wt_device_empty_cache(device *C.char) (status C.int32_t) {
	defer guard(&status)
	name, err := deviceName("wt_device_empty_cache", device)
	if err != nil {
		return fail(err)
	}
	return done(abi.DeviceEmptyCache(name))
}

//export wt_device_set_option
func wt_device_set_option(device *C.char, name *C.char, value C.int64_t) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_device_set_option"
	dev, err := deviceName(fn, device)
	if err != nil {
		return fail(err)
	}
	opt, ok := goString(name)
	if !ok {
		return invalid("%s: name is NULL", fn)
	}
	return done(abi.DeviceSetOption(dev, opt, int64(value)))
}

//export wt_device_stream
func wt_device_stream(device *C.char, stream *C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	if stream == nil {
		return invalid("wt_device_stream: stream is NULL")
	}
	name, err := deviceName("wt_device_stream", device)
	if err != nil {
		return fail(err)
	}
	s, err := abi.DeviceStream(name)
	if err != nil {
		return fail(err)
	}
	*stream = C.uint64_t(s)
	return statusOK
}

//export wt_set_num_threads
func wt_set_num_threads(n C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return done(abi.SetNumThreads(int64(n)))
}

//export wt_get_num_threads
func wt_get_num_threads(n *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if n == nil {
		return invalid("wt_get_num_threads: n is NULL")
	}
	*n = C.int32_t(abi.NumThreads())
	return statusOK
}

//export wt_fallbacks_json
func wt_fallbacks_json(reset C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	fb, err := abi.FallbacksJSON()
	st := writeResult(fb, err, buf, capacity, needed)
	if st == statusOK && reset != 0 {
		abi.ResetFallbacks() // only once the caller has the counts
	}
	return st
}
