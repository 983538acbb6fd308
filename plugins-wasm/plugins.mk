# WebAssembly plugins: the SDK's example plugins, built into build/plugins/.
# The top-level Makefile includes this file (include plugins-wasm/plugins.mk);
# plugins-wasm/examples_test.go loads what it builds and skips without it.

GO          ?= go
PLUGINS_OUT := build/plugins
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian 12's lld installs wasm-ld-14 (and a wasm-ld link to it); clang 14
# takes the linker by absolute path through -fuse-ld. Recursive (=) so the
# lookup happens after plugins-toolchain may have installed it.
WASM_CC     ?= clang
WASM_LD      = $(shell command -v wasm-ld-14 || command -v wasm-ld)
# -ffreestanding -nostdlib: no libc; -mbulk-memory: copy and fill loops become
# memory.copy/memory.fill, not calls to a memcpy that is not there;
# --no-entry: a reactor with no main. Exports come from export_name attributes
# in wtplugin.h, so nothing else is exported.
WASM_CFLAGS ?= --target=wasm32 -O2 -std=c11 -Wall -Wextra -Werror -ffreestanding -nostdlib -mbulk-memory
WASM_LDFLAGS = -fuse-ld=$(WASM_LD) -Wl,--no-entry

SDK_GO_SRC  := $(wildcard plugins-wasm/sdk/go/wtplugin/*.go)
SDK_C_SRC   := plugins-wasm/sdk/c/wtplugin.h

.PHONY: plugins plugins-toolchain

plugins: $(PLUGINS_OUT)/goswish.wasm $(PLUGINS_OUT)/cclip.wasm $(PLUGINS_OUT)/policy-kernel-variant.wasm $(PLUGINS_OUT)/policy-auto.wasm ## build the example plugins, the default tuning policy and the auto-agents' default policy into build/plugins/

# Installs clang and lld only when the C toolchain for wasm32 is missing.
# llvm brings llvm-objdump, which checks the browser's SIMD kernels (sdk/js/js.mk).
plugins-toolchain:
	@if ! command -v $(WASM_CC) >/dev/null 2>&1 || ! { command -v wasm-ld-14 || command -v wasm-ld; } >/dev/null 2>&1 \
		|| ! { command -v llvm-objdump || command -v llvm-objdump-14; } >/dev/null 2>&1; then \
		echo "installing clang, lld and llvm (wasm32 C toolchain)"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq clang lld llvm; \
	fi

# The default tuning policy the WebGPU backend can consult (see ABI.md, "Policies").
$(PLUGINS_OUT)/policy-kernel-variant.wasm: $(SDK_GO_SRC) $(wildcard plugins-wasm/policies/kernel-variant/*.go backends/webgpu/kernelpolicy/*.go)
	@mkdir -p $(@D)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins-wasm/policies/kernel-variant

# The auto-agents' default policy (package auto, plugins-wasm/policies/auto).
$(PLUGINS_OUT)/policy-auto.wasm: $(SDK_GO_SRC) $(wildcard plugins-wasm/policies/auto/*.go auto/wire/*.go)
	@mkdir -p $(@D)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins-wasm/policies/auto

$(PLUGINS_OUT)/goswish.wasm: $(SDK_GO_SRC) $(wildcard plugins-wasm/examples/go-swish/*.go)
	@mkdir -p $(@D)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins-wasm/examples/go-swish

# The toolchain is order-only: installing it must not force a rebuild.
$(PLUGINS_OUT)/cclip.wasm: plugins-wasm/examples/c-clip/cclip.c $(SDK_C_SRC) | plugins-toolchain
	@mkdir -p $(@D)
	$(WASM_CC) $(WASM_CFLAGS) $(WASM_LDFLAGS) -o $@ plugins-wasm/examples/c-clip/cclip.c
