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

// Vars lists the declared variables by name.
func Vars() []Var {
	out := make([]Var, 0, len(vars))
	for _, v := range vars {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
