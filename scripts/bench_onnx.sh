#!/usr/bin/env bash
# The ONNX import benchmark (make onnx-bench): all-MiniLM-L6-v2, exported by
# `make onnx-models`, through webtensor and onnxruntime side by side. Go's
# import time here (go test -bench ImportMiniLM ./onnx: five runs of one
# second), then sdk/js/bench/onnx/run.mjs: the browser (WebGPU and the CPU
# path against onnxruntime-web) and Node (against onnxruntime-node), which
# writes build/bench/onnx.json and its section of docs/perf.md. Extra
# arguments go to run.mjs (--reps, --no-gpu, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
model=build/onnx/all-MiniLM-L6-v2.onnx
if [ ! -f "$model" ]; then
	echo "$model is missing: \`make onnx-models\` exports it" >&2
	exit 1
fi
mkdir -p build/bench
echo "--- Go: go test -bench ImportMiniLM ./onnx"
"${GO:-go}" test -run '^$' -bench ImportMiniLM -count 5 ./onnx | tee build/bench/onnx-go.txt
echo "--- the browser and Node: sdk/js/bench/onnx/run.mjs"
exec node sdk/js/bench/onnx/run.mjs --go build/bench/onnx-go.txt --doc docs/perf.md "$@"
