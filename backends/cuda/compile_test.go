//go:build linux && cgo

package cuda_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/backendtest"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
)

var dryDevice = core.Device{Kind: "cuda-dry"}

// useRepoVenv points the library search at the repository's .venv, where
// `make test` installs PyTorch and with it NVRTC and cuBLAS (pip's nvidia
// wheels), unless the caller chose a place.
func useRepoVenv() {
	if os.Getenv("WEBTENSOR_PYTHON_SITE") != "" || os.Getenv("WEBTENSOR_CUDA_LIBS") != "" {
		return
	}
	sites, _ := filepath.Glob("../../.venv/lib/python3*/site-packages")
	for i, s := range sites {
		if abs, err := filepath.Abs(s); err == nil {
			sites[i] = abs
		}
	}
	os.Setenv("WEBTENSOR_PYTHON_SITE", strings.Join(sites, string(os.PathListSeparator)))
}

func init() {
	core.RegisterBackend("cuda-dry", -100, func() (core.Backend, error) {
		useRepoVenv()
		return cuda.NewCompileOnly(90)
	})
}

// needNVRTC skips when NVRTC cannot be found on this machine, saying so.
func needNVRTC(t *testing.T) *cuda.Backend {
	t.Helper()
	b, err := core.BackendFor(dryDevice)
	if err != nil {
		t.Skipf("NVRTC is not installed here (pip install nvidia-cuda-nvrtc, or PyTorch): %v", err)
	}
	return b.(*cuda.Backend)
}

// TestKernelsCompile runs the whole op suite on the compile-only backend:
// every kernel the suite needs is generated and compiled by NVRTC for
// sm_90, so a code generation mistake fails here, without a GPU.
func TestKernelsCompile(t *testing.T) {
	needNVRTC(t)
	backendtest.RunExercise(t, dryDevice, func(err error) bool {
		var ce *cuda.CompileError
		return !errors.As(err, &ce) && !strings.Contains(err.Error(), "cuda:")
	})
}

// compileCases runs each case on the compile-only device: every kernel
// it needs must compile with NVRTC and its outputs read back. That device
// reads back zeros, so the values are not checked.
func compileCases(t *testing.T, cs []diffCase) {
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			ins := make([]*core.Tensor, len(c.args))
			for i, a := range c.args {
				ins[i] = a.on(dryDevice)
			}
			outs, err := core.Call(c.op, ins, c.attrs)
			var ce *cuda.CompileError
			require.False(t, errors.As(err, &ce), "%v", err)
			require.NoError(t, err)
			for _, o := range outs {
				_, err := o.Float64s()
				require.NoError(t, err)
			}
		})
	}
}

var emuDevice = core.Device{Kind: "cuda-emu"}

func init() {
	core.RegisterBackend("cuda-emu", -100, func() (core.Backend, error) { return cuda.NewEmulated() })
}

// needEmulator returns the emulated CUDA backend, skipping when this
// machine has no C++ compiler to build its kernels with.
func needEmulator(t *testing.T) *cuda.Backend {
	t.Helper()
	b, err := core.BackendFor(emuDevice)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		t.Skipf("no C++ compiler for the CUDA emulator: %v", err)
	case err != nil:
		t.Fatalf("the CUDA emulator did not open: %v", err)
	}
	return b.(*cuda.Backend)
}

// suiteOnEmulator runs one of backendtest's shared suites on the emulator,
// which runs the CUDA kernel sources on the CPU.
func suiteOnEmulator(t *testing.T, suite func(*testing.T, core.Device)) {
	t.Helper()
	needEmulator(t)
	suite(t, emuDevice)
}

// The CUDA kernels' results: the shared op suite on the emulator.
func TestEmulatedOpsMatchReference(t *testing.T) { suiteOnEmulator(t, backendtest.RunVectors) }

// u16 on the CUDA kernels against Go's arithmetic; u64 is refused by name
// (unsupportedDType).
func TestEmulatedUnsigned(t *testing.T) { suiteOnEmulator(t, backendtest.RunUnsigned) }

func TestEmulatedGradients(t *testing.T) { suiteOnEmulator(t, backendtest.RunGradCheck) }

func TestEmulatedComplex(t *testing.T) { suiteOnEmulator(t, backendtest.RunComplex) }

func TestEmulatedRowBodies(t *testing.T) { suiteOnEmulator(t, backendtest.RunRowBodies) }

// WtArgs in cu/prelude.cuh and wtArgs in args.go must agree byte for byte:
// the host compiler checks every field's offset, NVRTC the size.
func TestArgsLayout(t *testing.T) {
	if err := needEmulator(t).CheckArgsLayout(); err != nil {
		t.Fatal("host layout:", err)
	}
	if err := needNVRTC(t).CheckArgsLayout(); err != nil {
		t.Fatal("NVRTC's size:", err)
	}
}
