"""The array API standard's dtype functions and namespace inspection:
finfo, iinfo, isdtype, result_type, can_cast, __array_namespace_info__ and
the constants. Promotion is the library's own rule (wt_promote_types, the
one the ops apply), so result_type always names the dtype an op returns;
the limits of each dtype are fixed facts of its format, tabled here.
"""

from __future__ import annotations

import builtins
import ctypes as C
import math
from dataclasses import dataclass

from . import _lib
from ._dtype import BY_NAME, DType, from_code, to_dtype

__array_api_version__ = "2024.12"

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

# The standard's names for the dtypes webtensor has (float16 and bfloat16
# are extras the standard does not name).
_STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
             "complex64", "complex128")
_KINDS = {
    "bool": lambda d: d.name == "bool",
    "signed integer": lambda d: d.name in ("i8", "i16", "i32", "i64"),
    "unsigned integer": lambda d: d.name in ("u8", "u16", "u32", "u64"),
    "integral": lambda d: d.name in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"),
    "real floating": lambda d: d.is_floating,
    "complex floating": lambda d: d.is_complex,
    "numeric": lambda d: d.name != "bool",
}


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 (the standard's name for finfo's result)
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801
    bits: int
    max: int
    min: int
    dtype: DType


# (bits, mantissa bits after the point, largest exponent) of each float format.
_FLOATS = {"f16": (16, 10, 15), "bf16": (16, 7, 127), "f32": (32, 23, 127), "f64": (64, 52, 1023)}


def _dtype_of(x) -> DType:
    """x's dtype: x itself when it is a dtype (or names one), else x.dtype."""
    return x.dtype if hasattr(x, "dtype") and not isinstance(x, (DType, str)) else to_dtype(x)


def finfo(type, /) -> finfo_object:  # noqa: A002 (the standard's parameter name)
    """Machine limits of a float or complex dtype (or of such a tensor's
    dtype); a complex dtype's are those of its parts, as the standard says."""
    d = _dtype_of(type)
    part = {"c64": "f32", "c128": "f64"}.get(d.name, d.name)
    if part not in _FLOATS:
        raise TypeError(f"finfo: {d.name} is not a floating-point or complex dtype")
    bits, mant, emax = _FLOATS[part]
    big = (2 - 2.0**-mant) * 2.0**emax
    return finfo_object(bits, 2.0**-mant, big, -big, 2.0 ** (1 - emax), BY_NAME[part])


def iinfo(type, /) -> iinfo_object:  # noqa: A002
    """Machine limits of an integer dtype (or of an integer tensor's dtype)."""
    d = _dtype_of(type)
    if not _KINDS["integral"](d):
        raise TypeError(f"iinfo: {d.name} is not an integer dtype")
    bits = 8 * d.itemsize
    if d.name.startswith("u"):
        return iinfo_object(bits, 2**bits - 1, 0, d)
    return iinfo_object(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), d)


def isdtype(dtype, kind) -> bool:
    """Whether dtype is of kind: a dtype, a kind name ("integral", "real
    floating", ...) or a tuple of either."""
    d = to_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str) and kind in _KINDS:
        return _KINDS[kind](d)
    if isinstance(kind, str) and kind not in BY_NAME:
        raise ValueError(f"isdtype: unknown kind {kind!r}; the kinds are {', '.join(_KINDS)}")
    return d == to_dtype(kind)


def _promote(a: DType, b: DType) -> DType:
    """The library's promotion; u64 with a signed integer has none (the
    standard leaves it undefined) and raises TypeError, as array-api-strict
    and PyTorch do."""
    out = C.c_int32()
    _lib.call("wt_promote_types", a.code, b.code, C.byref(out))
    return from_code(out.value)


def result_type(*arrays_and_dtypes) -> DType:
    """The dtype the ops give these operands: tensors, dtypes and Python
    scalars, which (as in the ops) take a tensor's dtype when it holds
    their kind and the default dtype of their kind otherwise."""
    dts = [_dtype_of(x) for x in arrays_and_dtypes if not isinstance(x, (builtins.bool, int, float, complex))]
    scalars = [x for x in arrays_and_dtypes if isinstance(x, (builtins.bool, int, float, complex))]
    if not dts:
        raise ValueError("result_type: at least one tensor or dtype is needed (Python scalars alone have none)")
    out = dts[0]
    for d in dts[1:]:
        out = _promote(out, d)
    for s in scalars:
        if isinstance(s, complex):
            if not out.is_complex:
                out = _promote(out, BY_NAME["c64"])
        elif isinstance(s, float) and not (out.is_floating or out.is_complex):
            out = _promote(out, BY_NAME["f32"])
        elif isinstance(s, int) and not isinstance(s, builtins.bool) and out.name == "bool":
            out = BY_NAME["i64"]
    return out


def can_cast(from_, to, /) -> bool:
    """Whether promotion takes from_ (a dtype or tensor) to the dtype to
    without changing to: exactly the casts the ops make implicitly."""
    src, dst = _dtype_of(from_), to_dtype(to)
    try:
        return _promote(src, dst) == dst
    except TypeError:  # no common dtype (u64 with a signed integer): no implicit cast either
        return False


class _Info:
    """What __array_namespace_info__() returns: the namespace's capabilities,
    devices and dtypes."""

    __module__ = "webtensor"

    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> str:
        from . import default_device

        return default_device()

    def devices(self) -> list[str]:
        from . import devices

        return devices()

    def default_dtypes(self, *, device: str | None = None) -> dict:
        return {"real floating": BY_NAME["f32"], "complex floating": BY_NAME["c64"], "integral": BY_NAME["i64"],
                "indexing": BY_NAME["i64"]}

    def dtypes(self, *, device: str | None = None, kind=None) -> dict:
        """The standard's dtypes a tensor on device can hold (WebGPU holds no
        f64, so no complex128, and no uint64; CUDA no uint64 yet),
        those of kind when given."""
        dev = device or ""
        absent = (("float64", "complex128", "uint64") if dev.startswith("webgpu")
                  else ("uint64",) if dev.startswith("cuda") else ())
        names = [n for n in _STANDARD if n not in absent]
        return {n: BY_NAME[n] for n in names if kind is None or isdtype(BY_NAME[n], kind)}


def __array_namespace_info__() -> _Info:  # noqa: N807 (the standard's name)
    return _Info()


__all__ = [
    "__array_api_version__", "__array_namespace_info__", "can_cast", "e", "finfo", "iinfo", "inf", "isdtype",
    "nan", "newaxis", "pi", "result_type",
]
