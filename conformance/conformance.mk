# The cross-SDK conformance suite: every SDK runs every reference case
# through its public API on each backend it has (cpu, webgpu and cuda; a
# device this machine lacks gives a column of "-" with the reason) and
# writes a result file;
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

# The Java runner is a JUnit class (sdk/java/src/test/java/dev/webtensor/ConformanceRunnerTest.java)
# that only runs when -Dwebtensor.conformance.out is set; it writes an
# "unavailable" column itself when the device list has no such backend.
# JAVA_MVN (JAVA_HOME on the JDK) comes from sdk/java/java.mk.
# (A runner that wrote nothing would silently drop its column, hence the test -s.)
JAVA_CONFORMANCE = ( $(JAVA_MVN) test -Dtest=ConformanceRunnerTest -Dwebtensor.conformance.device=$(1) \
	-Dwebtensor.conformance.out=$(abspath $(CONF_OUT))/java-$(1).json ) && test -s $(CONF_OUT)/java-$(1).json

conformance: python-sdk build/c_runner java ## every SDK x backend runs every reference case; prints the parity table, writes conformance/report.md
	rm -rf $(CONF_OUT) && mkdir -p $(CONF_OUT)
	for dev in cpu webgpu cuda; do \
		NODEVICE_SELECT=1 ./build/c_runner conformance/vectors $$dev $(CONF_OUT)/c-$$dev.json && \
		NODEVICE_SELECT=1 $(GO) run ./conformance/cmd/run -device $$dev -out $(CONF_OUT)/go-$$dev.json && \
		NODEVICE_SELECT=1 $(PY) conformance/runners/python_runner.py --device $$dev --out $(CONF_OUT)/python-$$dev.json || exit 1; \
	done
	export NODEVICE_SELECT=1 && $(call JAVA_CONFORMANCE,cpu)
	export NODEVICE_SELECT=1 && $(call JAVA_CONFORMANCE,webgpu)
	export NODEVICE_SELECT=1 && $(call JAVA_CONFORMANCE,cuda)
	$(MAKE) --no-print-directory js-conformance
	$(GO) run ./conformance/cmd/report -results $(CONF_OUT)
