# The cross-SDK conformance suite: every SDK runs every reference case
# through its public API on each backend it has and writes a result file;
# the report tool prints the parity table and writes conformance/report.md.
# The top-level Makefile includes this file.

CONF_OUT := build/conformance

.PHONY: conformance

conformance: python-sdk ## every SDK x backend runs every reference case; prints the parity table, writes conformance/report.md
	rm -rf $(CONF_OUT) && mkdir -p $(CONF_OUT)
	NODEVICE_SELECT=1 $(GO) run ./conformance/cmd/run -device cpu -out $(CONF_OUT)/go-cpu.json
	NODEVICE_SELECT=1 $(GO) run ./conformance/cmd/run -device webgpu -out $(CONF_OUT)/go-webgpu.json
	NODEVICE_SELECT=1 $(PY) conformance/runners/python_runner.py --device cpu --out $(CONF_OUT)/python-cpu.json
	NODEVICE_SELECT=1 $(PY) conformance/runners/python_runner.py --device webgpu --out $(CONF_OUT)/python-webgpu.json
	$(GO) run ./conformance/cmd/report -results $(CONF_OUT)
