#!/usr/bin/env bash
# The GPU device check (issue 20): on a machine with an NVIDIA GPU and the
# binaries `make device-build` left in build/device (the GPU machine has no
# Go toolchain), it runs in order, each step under its own time limit:
#   smoke         the CUDA backend opens and runs a few ops (stops here if not)
#   warm          every kernel of the op suite compiled in parallel (NVRTC)
#   bench         bench/cuda_test.go against PyTorch CUDA in the same run
#   suite         the shared op suite, finite differences, threads, coverage
#   conformance   the Go and Python cuda columns of the conformance report
#   pytest        the Python SDK's CUDA tests (DLPack with PyTorch, memory)
#   webgpu        if the GPU has a Vulkan driver: the WebGPU suite and its
#                 4096 matmul against the CUDA backend's
# Logs and results go to build/device-out and, packed as device-logs.tgz with
# the benchmark table, to $OUT when set (the device tool's folder of files
# to bring back); the last lines printed are a summary. Usage, from the repository root:
#   make device-build            # here, where Go is
#   scripts/device-check.sh      # there (carry build/device and .gl)
set -u
RESULTS=${OUT:-}
OUT=build/device-out
rm -rf "$OUT" && mkdir -p "$OUT"
ROOT=$(pwd)
D=$ROOT/build/device
START=$(date +%s)
SUMMARY=()

# step NAME LIMIT DIR CMD...: runs CMD in DIR with a time limit, logging to
# $OUT/NAME.log, and records how it ended.
step() {
	local name=$1 limit=$2 dir=$3
	shift 3
	echo "=== $name ($(($(date +%s) - START))s)"
	(cd "$dir" && timeout "$limit" "$@") >"$OUT/$name.log" 2>&1
	local rc=$?
	local verdict=ok
	[ $rc -ne 0 ] && verdict="FAILED rc=$rc"
	[ $rc -eq 124 ] && verdict="TIMED OUT after ${limit}s"
	SUMMARY+=("$name: $verdict")
	# Results come back even if the device's time runs out mid-run.
	[ -n "$RESULTS" ] && echo "$name: $verdict ($(($(date +%s) - START))s)" >>"$RESULTS/summary.txt"
	grep -E -- '--- FAIL|^FAIL|panic:|Error' "$OUT/$name.log" | head -n 20
	tail -n 4 "$OUT/$name.log"
	return $rc
}

for f in "$D"/*.gz; do gunzip -f -k "$f"; done
chmod +x "$D"/*.test

{
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
	python3 -c 'import torch, numpy; print("torch", torch.__version__, "cuda", torch.version.cuda, "numpy", numpy.__version__)'
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

SITES=$(python3 -c 'import site, os; print(os.pathsep.join(site.getsitepackages()))')
export WEBTENSOR_PYTHON_SITE=$SITES
export WEBTENSOR_VECTORS=$ROOT/conformance/vectors
export WEBTENSOR_CACHE_DIR=$ROOT/build/device-cache
export WEBTENSOR_LIBRARY=$D/libwebtensor.so
export PYTHONPATH=$ROOT/sdk/python
export PYTHONUNBUFFERED=1
export NODEVICE_SELECT=1 # Mesa's device-select layer, where present, prints without a runtime dir
# STEPS (default all) limits the run to some steps, space-separated, for a
# short first look at a new machine: STEPS="warm suite bench".
STEPS=${STEPS:-"warm suite conformance pytest bench webgpu"}
want() { [[ " $STEPS " == *" $1 "* ]]; }

if ! step smoke 90 backends/cuda "$D/cuda.test" -test.v -test.run 'TestCUDAOpsMatchReference/(add|sum|matmul|softmax)$'; then
	echo "the CUDA backend does not work here; see $OUT/smoke.log"
	printf '%s\n' "${SUMMARY[@]}"
	exit 1
fi

want warm && step warm 150 backends/cuda "$D/cuda.test" -test.run 'TestKernelsCompile' -test.parallel 16
if want bench; then
	step bench-go 180 bench "$D/bench.test" -test.run '^$' -test.bench 'CUDA' -test.benchtime 20x -test.count 3
	step bench 180 . python3 scripts/bench_cuda.py --go "$OUT/bench-go.log" --out "$OUT/bench.json"
fi
if want suite; then
	SUITE=${SUITE:-'TestCUDA(OpsMatchReference|GradientsMatchFiniteDifferences|ConcurrentAutograd|KernelCoverage|RowBodies)'}
	step suite 240 backends/cuda "$D/cuda.test" -test.v -test.run "$SUITE"
	grep -E 'cuda kernels:|device:' "$OUT/suite.log" | head -n 3
fi
if want conformance; then
	WT_CONFORMANCE_OUT=$ROOT/$OUT/go-cuda.json step conformance-go 120 backends/cuda "$D/cuda.test" -test.run 'TestCUDAConformanceColumn'
	step conformance-py 150 . python3 conformance/runners/python_runner.py --device cuda --out "$OUT/python-cuda.json"
fi
want pytest && step pytest 120 . python3 -m pytest -q -p no:cacheprovider sdk/python/tests/test_cuda.py sdk/python/tests/test_dlpack.py

# WebGPU on the same GPU, through its Vulkan driver (the loader comes in
# .gl, as the device notes describe).
if want webgpu && ls .gl/*.deb >/dev/null 2>&1; then
	for f in .gl/*.deb; do dpkg -x "$f" /; done
	ldconfig
fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
	[ -f "$icd" ] && export VK_DRIVER_FILES=$icd && break
done
# NVIDIA's Vulkan driver is libGLX_nvidia, which needs the GL dispatch
# libraries (libglvnd0, libgl1, libegl1 come in .gl too).
for egl in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
	[ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl && break
done
if ! want webgpu; then
	:
elif [ -n "${VK_DRIVER_FILES:-}" ]; then
	VK_LOADER_DEBUG=error,warn step webgpu-suite 150 backends/webgpu "$D/webgpu.test" -test.v -test.run 'TestOpsMatchReference|TestKernelCoverage|TestRowBodies'
	[ -n "$RESULTS" ] && grep -E -- '^(--- FAIL|    --- FAIL)' "$OUT/webgpu-suite.log" | head -n 40 >"$RESULTS/webgpu-failures.txt"
	grep -E 'adapter|webgpu kernels' "$OUT/webgpu-suite.log" | head -n 3
	step webgpu-bench 120 bench "$D/bench.test" -test.run '^$' -test.bench 'WebGPUMatmul|CUDAMatmul/f32' -matmul4096 -test.benchtime 10x -test.count 2
else
	SUMMARY+=("webgpu: no NVIDIA Vulkan ICD found; skipped")
fi

echo "=== summary ($(($(date +%s) - START))s)"
printf '%s\n' "${SUMMARY[@]}"
grep -hE '^\| ' "$OUT/bench.log" 2>/dev/null
grep -hE '^Benchmark(WebGPUMatmul|CUDAMatmul/f32)' "$OUT/webgpu-bench.log" 2>/dev/null

if [ -n "$RESULTS" ]; then
	tar czf "$RESULTS/device-logs.tgz" -C "$OUT" .
	cp "$OUT/bench.json" "$OUT/go-cuda.json" "$OUT/python-cuda.json" "$RESULTS/" 2>/dev/null
fi
