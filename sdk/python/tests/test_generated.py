"""Each public op of the library's manifest is a generated function, in its category's module.

make generate-check keeps webtensor/_ops current with the registry; these tests check the
installed package against the loaded library's manifest.
"""

import importlib
from pathlib import Path

import webtensor as wt


def _public_ops():
    """The registry's public ops; a plugin's (category "plugin"), loaded by other tests, are called by name."""
    return [o for o in wt.manifest()["ops"]
            if not o.get("internal") and not o["name"].startswith("_") and o["category"] != "plugin"]


# Ops whose name the array API standard gives an extension module: wt.fft is
# the fft extension (complex in and out), the op over real pairs stays
# wt._ops.fft and Tensor.fft.
EXTENSION_NAMES = {"fft"}


def test_every_public_op_is_a_function():
    missing = [o["name"] for o in _public_ops()
               if not callable(getattr(wt if o["name"] not in EXTENSION_NAMES else wt._ops, o["name"], None))]
    assert not missing
    assert all(not callable(getattr(wt, n)) and hasattr(wt.Tensor, n) for n in EXTENSION_NAMES)
    assert wt.softmax.__doc__ and "axis" in wt.softmax.__doc__
    assert callable(wt.Tensor.softmax) and callable(wt.Tensor.relu)


def test_one_module_per_category():
    by_category: dict[str, list[str]] = {}
    for o in _public_ops():
        by_category.setdefault(o["category"], []).append(o["name"])
    for category, names in by_category.items():
        module = importlib.import_module(f"webtensor._ops.{category}")
        assert module.__doc__ == f"The {category} ops."
        defined = sorted(n for n, f in vars(module).items() if getattr(f, "__module__", "") == module.__name__)
        assert defined == sorted(names), category


def test_generated_files_say_so():
    package = Path(importlib.import_module("webtensor._ops").__file__).parent
    files = sorted(package.glob("*.py*"))
    assert files
    for p in files:
        first = p.read_text().splitlines()[0]
        assert first.startswith("# Code generated ") and first.endswith(" DO NOT EDIT."), p
    assert (package.parent / "py.typed").is_file()
