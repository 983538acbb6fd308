# The Python SDK (sdk/python): included by the top-level Makefile.
# Needs VENV and PY from it, and the reference-time deps (NumPy, PyTorch).

.PHONY: python-sdk python-test python-overhead wheel wheel-test

python-sdk: $(VENV)/.ref-deps ## install the Python SDK (sdk/python) into .venv, building libwebtensor.so with Go
	$(PY) -m pip install -q --disable-pip-version-check pytest
	$(PY) -m pip install -q --disable-pip-version-check sdk/python

python-test: python-sdk ## the Python SDK's tests (pytest) against the installed package
	cd sdk/python/tests && $(abspath $(PY)) -m pytest -q -p no:cacheprovider .

# `make bench` runs this too (scripts/bench.py), after rewriting docs/perf.md.
python-overhead: python-sdk ## per-op overhead from Python (8-float ops) against PyTorch and NumPy; updates its section of docs/perf.md
	NODEVICE_SELECT=1 $(PY) scripts/bench_overhead.py

# The wheel ships the library `make capi` builds. Go c-shared libraries need
# glibc >= 2.34 and link only libc, libm and libgcc_s, so the wheel is
# tagged manylinux_2_34 and auditwheel must agree.
WHEEL_TAG := manylinux_2_34_x86_64

wheel: $(VENV)/.ref-deps build/libwebtensor.so build/plugins/policy-kernel-variant.wasm build/plugins/policy-auto.wasm ## build dist/webtensor-*.whl (manylinux_2_34, checked with auditwheel show)
	rm -rf dist && mkdir -p dist build
	WEBTENSOR_PREBUILT_LIBRARY=$(abspath build/libwebtensor.so) WEBTENSOR_PREBUILT_POLICY=$(abspath build/plugins/policy-kernel-variant.wasm) WEBTENSOR_PREBUILT_AUTO_POLICY=$(abspath build/plugins/policy-auto.wasm) $(PY) -m pip wheel -q --disable-pip-version-check --no-deps -w dist sdk/python
	$(PY) -m pip install -q --disable-pip-version-check auditwheel wheel
	$(PY) -m wheel tags --remove --platform-tag $(WHEEL_TAG) dist/webtensor-*-linux_x86_64.whl
	$(PY) -m auditwheel show dist/webtensor-*.whl | tee build/auditwheel.txt
	@grep -q '"$(WHEEL_TAG)"' build/auditwheel.txt || { echo "auditwheel does not confirm $(WHEEL_TAG)"; exit 1; }

wheel-test: wheel ## install the wheel into a fresh venv and use it with no Go toolchain on PATH
	rm -rf build/wheel-venv && python3 -m venv build/wheel-venv
	build/wheel-venv/bin/pip install -q --disable-pip-version-check dist/webtensor-*.whl numpy
	cd build && env -i HOME=$(HOME) PATH=/usr/bin:/bin NODEVICE_SELECT=1 wheel-venv/bin/python ../sdk/python/tests/wheel_smoke.py
