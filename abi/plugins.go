//go:build !js

package abi

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/webtensor/webtensor/backends/webgpu"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// One sandboxed plugin host per process, made on first use with the default
// limits (memory cap and per-call deadline, no filesystem, network or
// clock). The browser build leaves the host out (this file is not compiled
// for js): a page's plugins would be WebAssembly run by a Go interpreter
// inside WebAssembly, where the browser itself can instantiate them.
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

func loaded(p *plugins.Plugin) string {
	pluginHost.mu.Lock()
	defer pluginHost.mu.Unlock()
	pluginHost.byID[p.Name()] = p
	return p.Name()
}

// PluginLoad is wt_plugin_load: it returns the plugin's name.
func PluginLoad(path string) (string, error) {
	if path == "" {
		return "", Invalidf("wt_plugin_load: path is NULL or empty")
	}
	h, err := host()
	if err != nil {
		return "", err
	}
	p, err := h.LoadFile(context.Background(), path)
	if err != nil {
		return "", err
	}
	return loaded(p), nil
}

// PluginLoadBytes is wt_plugin_load_bytes; module must be the caller's to
// give (the host may keep it), label names it in errors.
func PluginLoadBytes(module []byte, label string) (string, error) {
	if len(module) == 0 || len(module) > 1<<30 {
		return "", Invalidf("wt_plugin_load_bytes: need a non-NULL module of 1 byte to 1 GiB, got %d bytes", len(module))
	}
	if label == "" {
		label = "module"
	}
	h, err := host()
	if err != nil {
		return "", err
	}
	p, err := h.Load(context.Background(), label, module)
	if err != nil {
		return "", err
	}
	return loaded(p), nil
}

// PluginOps is wt_plugin_ops: a loaded plugin's op names as a JSON array.
func PluginOps(plugin string) (string, error) {
	pluginHost.mu.Lock()
	p, found := pluginHost.byID[plugin]
	pluginHost.mu.Unlock()
	if !found {
		return "", Invalidf("wt_plugin_ops: no plugin %q is loaded", plugin)
	}
	js, err := json.Marshal(p.Ops())
	return string(js), err
}

// The WebGPU tuner's policy comes from this host: WEBTENSOR_TUNING_POLICY
// names a module that is loaded here when the first WebGPU device opens.
func init() {
	webgpu.SetPolicyLoader(func(spec string) (webgpu.Policy, error) {
		h, err := host()
		if err != nil {
			return nil, err
		}
		q, err := h.LoadPolicy(context.Background(), spec)
		if err != nil {
			return nil, err
		}
		return q, nil
	})
}

// TuningPolicySet is wt_tuning_policy_set: the WebGPU tuner of every device
// asks the loaded plugin's policy (its only one when policy is "") which
// kernel variant to try; plugin "" goes back to timing every variant.
func TuningPolicySet(plugin, policy string) error {
	if plugin == "" {
		webgpu.SetDefaultPolicy(nil)
		return nil
	}
	pluginHost.mu.Lock()
	p, found := pluginHost.byID[plugin]
	pluginHost.mu.Unlock()
	if !found {
		return Invalidf("wt_tuning_policy_set: no plugin %q is loaded (load it with wt_plugin_load first)", plugin)
	}
	q, err := p.PolicyOrOnly(policy)
	if err != nil {
		return Invalidf("wt_tuning_policy_set: %v", err)
	}
	webgpu.SetDefaultPolicy(q)
	return nil
}
