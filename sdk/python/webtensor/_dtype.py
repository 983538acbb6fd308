"""Element types: wt.f32 ... wt.bool, with NumPy/PyTorch-style aliases."""

from __future__ import annotations


class DType:
    """One element type of webtensor (the values match wt_dtype)."""

    __slots__ = ("name", "code", "itemsize", "numpy_name", "is_floating", "is_complex")

    def __init__(self, name: str, code: int, itemsize: int, numpy_name: str | None, is_floating: bool,
                 is_complex: bool = False):
        self.name, self.code, self.itemsize = name, code, itemsize
        self.numpy_name, self.is_floating, self.is_complex = numpy_name, is_floating, is_complex

    def __repr__(self) -> str:
        return f"wt.{self.name}"

    def __reduce__(self):
        return (from_code, (self.code,))


_ALL = [
    DType("f32", 1, 4, "float32", True),
    DType("f16", 2, 2, "float16", True),
    DType("bf16", 3, 2, None, True),
    DType("f64", 4, 8, "float64", True),
    DType("i64", 5, 8, "int64", False),
    DType("i32", 6, 4, "int32", False),
    DType("u32", 7, 4, "uint32", False),
    DType("i16", 8, 2, "int16", False),
    DType("i8", 9, 1, "int8", False),
    DType("u8", 10, 1, "uint8", False),
    DType("bool", 11, 1, "bool", False),
    DType("c64", 12, 8, "complex64", False, True),
    DType("c128", 13, 16, "complex128", False, True),
    DType("u16", 14, 2, "uint16", False),
    DType("u64", 15, 8, "uint64", False),
]
BY_CODE = {d.code: d for d in _ALL}
BY_NAME = {d.name: d for d in _ALL}
ALIASES = {
    "float32": "f32", "float": "f32", "float16": "f16", "half": "f16", "bfloat16": "bf16", "float64": "f64",
    "double": "f64", "int64": "i64", "long": "i64", "int32": "i32", "int": "i32", "uint32": "u32", "int16": "i16",
    "short": "i16", "int8": "i8", "uint8": "u8", "bool_": "bool",
    "uint16": "u16", "uint64": "u64",
    "complex64": "c64", "cfloat": "c64", "complex128": "c128", "cdouble": "c128",
}
for _alias, _name in ALIASES.items():
    BY_NAME[_alias] = BY_NAME[_name]


def from_code(code: int) -> DType:
    return BY_CODE[code]


def to_dtype(d) -> DType:
    """A DType from a DType, a name ("f32", "float32"), a NumPy dtype or a torch dtype."""
    if isinstance(d, DType):
        return d
    if d is bool:
        return BY_NAME["bool"]
    if d is float:
        return BY_NAME["f32"]
    if d is int:
        return BY_NAME["i64"]
    if d is complex:
        return BY_NAME["c64"]  # as Python floats become f32
    name = d if isinstance(d, str) else str(getattr(d, "name", None) or d)
    name = name.removeprefix("torch.").removeprefix("numpy.")
    if name.startswith("<class"):  # a NumPy scalar type such as np.float32
        name = name.split(".")[-1].rstrip("'>")
    try:
        return BY_NAME[name]
    except KeyError:
        raise TypeError(f"unknown dtype {d!r}; webtensor has {', '.join(x.name for x in _ALL)}") from None
