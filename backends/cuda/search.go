package cuda

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/webtensor/webtensor/core/config"
)

// Where the CUDA libraries are looked for. The driver (libcuda.so.1) comes
// with the NVIDIA driver and is found by the dynamic linker; NVRTC and
// cuBLAS come with a CUDA toolkit or with pip's nvidia-* wheels (which
// PyTorch installs), so the search also walks the usual toolkit folders and
// the active Python environment's site-packages.

// libNames are the file names tried for each library, newest major first;
// majors lists the CUDA majors whose libraries the loader accepts.
var majors = []string{"13", "12"}

func libNames(base string, major string) []string {
	if major != "" {
		return []string{base + ".so." + major}
	}
	out := make([]string, 0, len(majors)+1)
	for _, m := range majors {
		out = append(out, base+".so."+m)
	}
	return append(out, base+".so")
}

// driverCandidates are the paths tried for libcuda.so.1, in order.
func driverCandidates() []string {
	out := []string{}
	if p := config.String("WEBTENSOR_CUDA_DRIVER"); p != "" {
		out = append(out, p)
	}
	out = append(out, "libcuda.so.1")
	for _, d := range []string{"/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib", "/usr/lib/aarch64-linux-gnu"} {
		out = append(out, filepath.Join(d, "libcuda.so.1"))
	}
	return out
}

// toolkitDirs are folders that may hold NVRTC and cuBLAS, in the order
// searched: the user's WEBTENSOR_CUDA_LIBS first, then toolkits, then pip's
// nvidia wheels in the active environment.
func toolkitDirs() []string {
	var dirs []string
	for _, d := range filepath.SplitList(config.String("WEBTENSOR_CUDA_LIBS")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if h := os.Getenv(env); h != "" {
			dirs = append(dirs, filepath.Join(h, "lib64"), filepath.Join(h, "lib"))
		}
	}
	arch := "x86_64-linux"
	if runtime.GOARCH == "arm64" {
		arch = "sbsa-linux"
	}
	dirs = append(dirs, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/"+arch+"/lib")
	for _, sp := range sitePackages() {
		for _, sub := range []string{"nvidia/cu13/lib", "nvidia/cu12/lib", "nvidia/cuda_nvrtc/lib", "nvidia/cublas/lib"} {
			dirs = append(dirs, filepath.Join(sp, sub))
		}
	}
	return dirs
}

// sitePackages lists the site-packages folders of the active Python
// environment (VIRTUAL_ENV, CONDA_PREFIX) and of the interpreter that loaded
// this library, if any (WEBTENSOR_PYTHON_SITE, set by the Python SDK).
func sitePackages() []string {
	var out []string
	for _, sp := range filepath.SplitList(config.String("WEBTENSOR_PYTHON_SITE")) {
		if sp != "" {
			out = append(out, sp)
		}
	}
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		root := os.Getenv(env)
		if root == "" {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(root, "lib", "python3*", "site-packages"))
		out = append(out, matches...)
	}
	return out
}

// libraryCandidates lists paths for base (libnvrtc, libcublas, libcublasLt)
// with the driver's CUDA major first: a bare file name lets the dynamic
// linker search LD_LIBRARY_PATH and its cache.
func libraryCandidates(base, driverMajor string) []string {
	order := []string{}
	if driverMajor != "" {
		order = append(order, driverMajor)
	}
	for _, m := range majors {
		if m != driverMajor {
			order = append(order, m)
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, m := range order {
		for _, d := range toolkitDirs() {
			for _, n := range libNames(base, m) {
				if _, err := os.Stat(filepath.Join(d, n)); err == nil {
					add(filepath.Join(d, n))
				}
			}
		}
		for _, n := range libNames(base, m) {
			add(n)
		}
	}
	return out
}

// majorOf is the CUDA major of a driver version (12040 is "12").
func majorOf(driverVersion int) string {
	if driverVersion <= 0 {
		return ""
	}
	return strconv.Itoa(driverVersion / 1000)
}
