# The cross-SDK conformance suite: every SDK runs every reference case
# through its public API on each backend it has and writes a result file;
# the report tool prints the parity table and writes conformance/report.md.
# The top-level Makefile includes this file.

CONF_OUT := build/conformance

.PHONY: conformance

CC ?= gcc

# The C runner links the library `make capi` builds and finds it by rpath.
build/c_runner: $(wildcard conformance/runners/c/*.[ch]) capi/include/webtensor.h build/libwebtensor.so
	$(CC) -O2 -Wall -Wextra -Werror -std=c11 -Icapi/include -Iconformance/runners/c conformance/runners/c/*.c \
		-Lbuild -lwebtensor -lm -Wl,-rpath,$(abspath build) -o $@

build/libwebtensor.so: $(shell git ls-files '*.go' 2>/dev/null)
	$(GO) build -buildmode=c-shared -o $@ ./capi

conformance: python-sdk build/c_runner ## every SDK x backend runs every reference case; prints the parity table, writes conformance/report.md
	rm -rf $(CONF_OUT) && mkdir -p $(CONF_OUT)
	NODEVICE_SELECT=1 ./build/c_runner conformance/vectors cpu $(CONF_OUT)/c-cpu.json
	NODEVICE_SELECT=1 ./build/c_runner conformance/vectors webgpu $(CONF_OUT)/c-webgpu.json
	NODEVICE_SELECT=1 $(GO) run ./conformance/cmd/run -device cpu -out $(CONF_OUT)/go-cpu.json
	NODEVICE_SELECT=1 $(GO) run ./conformance/cmd/run -device webgpu -out $(CONF_OUT)/go-webgpu.json
	NODEVICE_SELECT=1 $(PY) conformance/runners/python_runner.py --device cpu --out $(CONF_OUT)/python-cpu.json
	NODEVICE_SELECT=1 $(PY) conformance/runners/python_runner.py --device webgpu --out $(CONF_OUT)/python-webgpu.json
	$(GO) run ./conformance/cmd/report -results $(CONF_OUT)
