"""Every function of the standard's main namespace (2024.12, as
array-api-strict lists it) has a property test in test_props_*.py, or is
named in NOT_YET with the reason: a function added to the standard, or one
whose property goes missing, fails here."""

from __future__ import annotations

import test_props_creation
import test_props_elementwise
import test_props_linalg_main
import test_props_manipulation
import test_props_reductions
from array_api_props import standard_functions

# Functions the property suites do not draw yet, with the reason (none now:
# every function of 2024.12 has a property on the CPU and WebGPU).
NOT_YET: set[str] = set()


def test_every_standard_function_has_a_property():
    covered = (test_props_elementwise.COVERED | test_props_reductions.COVERED | test_props_creation.COVERED
               | test_props_manipulation.COVERED | test_props_linalg_main.COVERED)
    names = standard_functions()
    missing = names - covered - NOT_YET
    assert not missing, f"standard functions without a property test: {sorted(missing)}"
    stale = NOT_YET & covered
    assert not stale, f"covered now, drop from NOT_YET: {sorted(stale)}"
    assert NOT_YET <= names, sorted(NOT_YET - names)
