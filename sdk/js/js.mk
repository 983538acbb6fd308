# The JavaScript SDK's Node half (sdk/js): included by the top-level Makefile
# (needs GO from it). Node 20+ and npm; koffi comes from the npm registry.

.PHONY: npm wasm-sdk serve-demo js-test js-conformance js-bench

# The browser half: the Go core, CPU and WebGPU backends as one WebAssembly
# module (sdk/js/wasm), with the wasm_exec.js of the Go that built it (the
# two must match).
#
# -tags wtsimd: the CPU backend imports the wasm SIMD GEMM kernel
# (sdk/js/wasm/simd, backends/cpu/gemm_wasmsimd.go), which the SDK's loader
# provides; webtensor-simd.wasm ships next to webtensor.wasm.
JS_WASM_DIR := sdk/js/dist/wasm
wasm-sdk: $(JS_WASM_DIR)/webtensor-simd.wasm ## build the browser runtime: sdk/js/dist/wasm/webtensor.wasm, its SIMD kernels and Go's wasm_exec.js
	mkdir -p $(JS_WASM_DIR)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -tags wtsimd -ldflags="-s -w" -o $(JS_WASM_DIR)/webtensor.wasm ./sdk/js/wasm
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" $(JS_WASM_DIR)/wasm_exec.js

# The SIMD kernels (gemm.c: the GEMM macro-kernel; math.c: exp, gelu and
# the other transcendentals): C for wasm32 with simd128, no libc, importing the Go
# instance's memory (--import-memory) and exporting its functions by
# export_name only. It must need no stack and no static data, which would lie
# at the bottom of Go's memory, over Go's own data: the check fails the build
# when the code touches a global (the shadow stack pointer) or has a DATA
# section. -ffp-contract=off: no fused multiply-adds, so the results are the
# Go kernel's bits.
JS_SIMD_OBJDUMP = $(shell command -v llvm-objdump || command -v llvm-objdump-14)
$(JS_WASM_DIR)/webtensor-simd.wasm: sdk/js/wasm/simd/gemm.c sdk/js/wasm/simd/math.c | plugins-toolchain
	@mkdir -p $(@D)
	$(WASM_CC) --target=wasm32 -msimd128 -O3 -std=c11 -Wall -Wextra -Werror -ffreestanding -nostdlib -ffp-contract=off \
		-fuse-ld=$(WASM_LD) -Wl,--no-entry -Wl,--import-memory -Wl,--strip-all -o $@.tmp $(filter %.c,$^)
	@test -n "$(JS_SIMD_OBJDUMP)" || { echo "llvm-objdump is needed to check $@ (apt-get install llvm)"; rm -f $@.tmp; exit 1; }
	@if $(JS_SIMD_OBJDUMP) -d $@.tmp | grep -qE 'global\.(get|set)' || $(JS_SIMD_OBJDUMP) -h $@.tmp | grep -qw DATA; then \
		echo "$@: the kernels use a stack or static data, which would overlap Go's memory"; rm -f $@.tmp; exit 1; fi
	mv $@.tmp $@

NPM        ?= npm
JS_PREBUILD := sdk/js/prebuilds/linux-x64
JS_VERSION := $(shell sed -n 's/^  "version": "\(.*\)",/\1/p' sdk/js/package.json)
JS_TARBALL := build/npm/webtensor-$(JS_VERSION).tgz

# `make capi` every time: Go's build cache makes it cheap, and a stale
# libwebtensor.so in the tarball would be worse than a few seconds.
npm: ## build the package: libwebtensor.so into prebuilds/, tsc --strict into dist/, webtensor.wasm into dist/wasm/, npm pack into build/npm/
	$(MAKE) --no-print-directory capi
	mkdir -p $(JS_PREBUILD) build/npm
	cp build/libwebtensor.so $(JS_PREBUILD)/libwebtensor.so
	$(MAKE) --no-print-directory build/plugins/policy-kernel-variant.wasm
	cp build/plugins/policy-kernel-variant.wasm sdk/js/prebuilds/policy-kernel-variant.wasm
	$(MAKE) --no-print-directory build/plugins/policy-auto.wasm
	cp build/plugins/policy-auto.wasm sdk/js/prebuilds/policy-auto.wasm
	cd sdk/js && $(NPM) ci --no-audit --no-fund --loglevel=error
	cd sdk/js && rm -rf dist && ./node_modules/.bin/tsc -p tsconfig.json
	$(MAKE) --no-print-directory wasm-sdk
	rm -f build/npm/webtensor-*.tgz
	cd sdk/js && $(NPM) pack --pack-destination ../../build/npm --loglevel=error >/dev/null
	@ls -la $(JS_TARBALL)

# playwright-core for the browser tests comes from the registry at the
# version sdk/js's lockfile pins (the package does not depend on it).
JS_PLAYWRIGHT = playwright-core@$$(node -p 'require("$(abspath sdk/js/package-lock.json)").packages["node_modules/playwright-core"].version')

# The tests run against the tarball installed into an empty folder (as a user
# would get it), not against the source tree; the vectors come from the repo.
# The browser tests serve that installed package to Debian's Chromium.
js-test: npm browser-deps plugins ## the JS SDK's tests (node --test: Node, and the browser build in headless Chromium) and a tsc --strict consumer, against the installed tarball
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	echo '{"name": "webtensor-js-test", "private": true, "type": "module"}' > $$d/package.json; \
	(cd $$d && $(NPM) install --no-audit --no-fund --loglevel=error $(abspath $(JS_TARBALL)) $(JS_PLAYWRIGHT)); \
	cp -r sdk/js/test/. $$d/; mkdir -p $$d/examples && cp -r sdk/js/examples/browser sdk/js/examples/onnx-minilm sdk/js/examples/diffusion sdk/js/examples/multimodal $$d/examples/; \
	echo "--- tsc --strict over a consumer of the installed package"; \
	sdk/js/node_modules/.bin/tsc --strict --noEmit --skipLibCheck false --module nodenext --moduleResolution nodenext \
		--target es2022 --types node --typeRoots $(abspath sdk/js/node_modules/@types) $$d/types.ts; \
	echo "--- node --test in $$d"; \
	rc=0; (cd $$d && NODEVICE_SELECT=1 WEBTENSOR_VECTORS=$(abspath conformance/vectors) \
		WEBTENSOR_TEST_PLUGIN=$(abspath build/plugins/cclip.wasm) node --test --test-concurrency=1 *.test.mjs > test.log 2>&1) || rc=$$?; \
	if [ $$rc -ne 0 ]; then grep -v XDG_RUNTIME_DIR $$d/test.log | grep -E -A20 '^not ok' | head -n 80; fi; \
	grep -E '^# (tests|pass|fail|duration_ms)' $$d/test.log; exit $$rc

# The conformance columns node / {cpu, webgpu} and browser / {webgpu, cpu}
# (conformance/README.md): the runners run from the installed tarball, like
# the tests. CONF_OUT comes from conformance/conformance.mk. (test -s: a
# runner that wrote nothing would silently drop its column.)
js-conformance: npm browser-deps ## the JS SDK's conformance columns: build/conformance/{node,browser}-*.json
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	echo '{"name": "webtensor-js-conformance", "private": true, "type": "module"}' > $$d/package.json; \
	(cd $$d && $(NPM) install --no-audit --no-fund --loglevel=error $(abspath $(JS_TARBALL)) $(JS_PLAYWRIGHT)); \
	cp -r sdk/js/test/. $$d/; \
	for dev in cpu webgpu cuda; do \
		(cd $$d && NODEVICE_SELECT=1 WEBTENSOR_VECTORS=$(abspath conformance/vectors) \
			node conformance-runner.mjs --device $$dev --out $(abspath $(CONF_OUT))/node-$$dev.json 2>&1 \
			| grep -v XDG_RUNTIME_DIR || true); \
		test -s $(CONF_OUT)/node-$$dev.json; \
		[ $$dev = cuda ] && continue; \
		(cd $$d && WEBTENSOR_VECTORS=$(abspath conformance/vectors) \
			node browser/conformance.mjs --device $$dev --out $(abspath $(CONF_OUT))/browser-$$dev.json 2>&1 || true); \
		test -s $(CONF_OUT)/browser-$$dev.json; \
	done

serve-demo: npm ## serve the browser examples (sdk/js/examples: training on WebGPU; /onnx-minilm/: MiniLM from ONNX, after make onnx-models; /diffusion/: sampling a zipped pipeline, the digits DDPM after make diffusion-digits; /multimodal/: MiniLM and CLIP from zips) on 127.0.0.1:$${PORT:-8080}
	node sdk/js/examples/serve-demo.mjs

# webtensor against TensorFlow.js in headless Chromium, both on WebGPU
# (sdk/js/bench, with its own locked npm dependencies): run.mjs serves a copy
# of the package from build/bench-pkg/, so a concurrent `make npm` cannot
# pull dist/ from under it. Not part of `make test`; `make bench` runs it.
js-bench: npm browser-deps ## webtensor vs TensorFlow.js in headless Chromium on WebGPU: build/bench/js-tfjs.json and its section of docs/perf.md
	cd sdk/js/bench && $(NPM) ci --no-audit --no-fund --loglevel=error
	node sdk/js/bench/run.mjs --out build/bench/js-tfjs.json --doc docs/perf.md
