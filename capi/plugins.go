package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"sync"
	"unsafe"

	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// One sandboxed plugin host per process, made on first use with the default
// limits (memory cap and per-call deadline, no filesystem, network or clock).
var pluginHost = struct {
	once sync.Once
	host *plugins.Host
	err  error
	mu   sync.Mutex
	byID map[string]*plugins.Plugin
}{byID: map[string]*plugins.Plugin{}}

func host() (*plugins.Host, error) {
	pluginHost.once.Do(func() {
		pluginHost.host, pluginHost.err = plugins.NewHost(context.Background(), plugins.NewConfig())
	})
	return pluginHost.host, pluginHost.err
}

func loaded(p *plugins.Plugin, buf *C.char, capacity C.size_t, needed *C.size_t) C.int32_t {
	pluginHost.mu.Lock()
	pluginHost.byID[p.Name()] = p
	pluginHost.mu.Unlock()
	return writeString(p.Name(), buf, capacity, needed)
}

//export wt_plugin_load
func wt_plugin_load(path *C.char, nameBuf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	file, ok := goString(path)
	if !ok || file == "" {
		return fail(invalid("wt_plugin_load: path is NULL or empty"))
	}
	h, err := host()
	if err != nil {
		return fail(err)
	}
	p, err := h.LoadFile(context.Background(), file)
	if err != nil {
		return fail(err)
	}
	return loaded(p, nameBuf, capacity, needed)
}

//export wt_plugin_load_bytes
func wt_plugin_load_bytes(wasm unsafe.Pointer, nbytes C.size_t, label *C.char, nameBuf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if wasm == nil || nbytes == 0 || nbytes > 1<<30 {
		return fail(invalid("wt_plugin_load_bytes: need a non-NULL module of 1 byte to 1 GiB, got %d bytes", uint64(nbytes)))
	}
	name, _ := goString(label)
	if name == "" {
		name = "module"
	}
	h, err := host()
	if err != nil {
		return fail(err)
	}
	mod := C.GoBytes(wasm, C.int(nbytes))
	p, err := h.Load(context.Background(), name, mod)
	if err != nil {
		return fail(err)
	}
	return loaded(p, nameBuf, capacity, needed)
}

//export wt_plugin_ops
func wt_plugin_ops(plugin *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	name, ok := goString(plugin)
	if !ok {
		return fail(invalid("wt_plugin_ops: plugin is NULL"))
	}
	pluginHost.mu.Lock()
	p, found := pluginHost.byID[name]
	pluginHost.mu.Unlock()
	if !found {
		return fail(invalid("wt_plugin_ops: no plugin %q is loaded", name))
	}
	js, err := json.Marshal(p.Ops())
	if err != nil {
		return fail(err)
	}
	return writeString(string(js), buf, capacity, needed)
}
