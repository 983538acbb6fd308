# The Python SDK (sdk/python): included by the top-level Makefile.
# Needs VENV and PY from it, and the reference-time deps (NumPy, PyTorch).

.PHONY: python-sdk python-test

python-sdk: $(VENV)/.ref-deps ## install the Python SDK (sdk/python) into .venv, building libwebtensor.so with Go
	$(PY) -m pip install -q --disable-pip-version-check pytest
	$(PY) -m pip install -q --disable-pip-version-check sdk/python

python-test: python-sdk ## the Python SDK's tests (pytest) against the installed package
	cd sdk/python/tests && $(abspath $(PY)) -m pytest -q -p no:cacheprovider .
