"""The library's datasets (wt_dataset_*) behind a Python object, and the
shuffle permutation every loader uses."""

from __future__ import annotations

import ctypes as C
import json
import os
from typing import Any

from .. import _lib
from .._objects import Handle
from .._tensor import Tensor, tensor


class Dataset:
    """A map-style dataset, PyTorch's torch.utils.data.Dataset: subclass it
    (or write any class) with __getitem__(i) and __len__()."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} defines no __len__")


class NativeDataset(Dataset, Handle):
    """A dataset the library reads (a wt_dataset handle): its records are
    tuples of Tensors, one per field. Freed by close(), a with block or the
    garbage collector; loaders made from it keep it alive."""

    _free = "wt_dataset_free"
    _what = "dataset"

    def __init__(self, handle: int):
        super().__init__(handle)
        info = json.loads(_lib.read_string("wt_dataset_info_json", handle))
        self._len: int = info["len"]
        self.fields: tuple[str, ...] = tuple(f["name"] for f in info["fields"])
        self.dtypes: tuple[str, ...] = tuple(f["dtype"] for f in info["fields"])
        self.shapes: tuple[tuple[int, ...], ...] = tuple(tuple(f["shape"]) for f in info["fields"])
        self.classes: list[str] | None = info.get("classes")

    def __len__(self) -> int:
        return self._len

    def get(self, index: int, device: str | None = None) -> tuple[Tensor, ...]:
        """Record index, one Tensor per field, on device (default: the
        default device). A negative index counts from the end."""
        h = self._live()
        if index < 0:
            index += self._len
        cap = max(len(self.fields), 1)
        outs = (C.c_int64 * cap)()
        n = C.c_int32(0)
        _lib.call("wt_dataset_get", h, index, device.encode() if device else None, outs, cap, C.byref(n))
        return tuple(Tensor._wrap(outs[i]) for i in range(n.value))

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return self.get(index)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}: {d}{list(s)}" for n, d, s in zip(self.fields, self.dtypes, self.shapes, strict=True))
        return f"data.NativeDataset(len={self._len}, fields=({fields}))"



def _open(spec: dict[str, Any]) -> NativeDataset:
    h = C.c_int64()
    _lib.call("wt_dataset_open", json.dumps(spec).encode(), C.byref(h))
    return NativeDataset(h.value)


def _keys(keys) -> list[str] | None:
    return None if keys is None else [keys] if isinstance(keys, str) else list(keys)


def npy(*paths: str | os.PathLike) -> NativeDataset:
    """NumPy .npy files, one field per file named by its stem (x.npy is
    field "x"); record i is row i of every file."""
    return _open({"format": "npy", "paths": [os.fspath(p) for p in paths]})


def npz(path: str | os.PathLike, keys=None) -> NativeDataset:
    """The arrays keys of an .npz archive (default: all, in archive order)."""
    return _open({"format": "npz", "path": os.fspath(path), "keys": _keys(keys)})


def safetensors(path: str | os.PathLike, keys=None) -> NativeDataset:
    """The tensors keys of a safetensors file (default: all, in file order),
    a record being one index along their first dim."""
    return _open({"format": "safetensors", "path": os.fspath(path), "keys": _keys(keys)})


def parquet(path: str | os.PathLike, columns=None) -> NativeDataset:
    """The columns of a Parquet file (default: all), a record being a row: a
    column of numbers is a scalar field, a column of equal-length lists of
    numbers a vector field. Nulls, strings and ragged lists are refused,
    naming the column and the row."""
    return _open({"format": "parquet", "path": os.fspath(path), "keys": _keys(columns)})


def image_folder(root: str | os.PathLike, mode: str = "rgb", size: tuple[int, int] | None = None) -> NativeDataset:
    """torchvision's ImageFolder: root/CLASS/*.png|jpg, classes sorted (see
    .classes); records are (image u8 [C, H, W], label i64). mode is "rgb" or
    "gray"; size (height, width) resizes (bilinear), else every image must
    have the first one's size. Images are decoded when read, by the
    loader's workers."""
    spec: dict[str, Any] = {"format": "images", "path": os.fspath(root), "mode": mode}
    if size is not None:
        spec["size"] = list(size)
    return _open(spec)


def from_bytes(fmt: str, data: bytes | bytearray | memoryview, keys=None, name: str | None = None) -> NativeDataset:
    """A dataset from one file's bytes (fmt: npy, npz, safetensors or
    parquet); name labels it in errors."""
    raw = bytes(data)
    spec = {"format": fmt, "keys": _keys(keys), "name": name or fmt}
    h = C.c_int64()
    _lib.call("wt_dataset_open_bytes", json.dumps(spec).encode(), raw, len(raw), C.byref(h))
    return NativeDataset(h.value)


def TensorDataset(*tensors, names=None) -> NativeDataset:  # noqa: N802 (PyTorch's class name)
    """PyTorch's TensorDataset: record i is t[i] of each tensor (Tensors, or
    anything wt.tensor takes), all with the same first dim. The values are
    copied into the library once."""
    if not tensors:
        raise ValueError("TensorDataset needs at least one tensor")
    made = [t if isinstance(t, Tensor) else tensor(t) for t in tensors]
    handles = _lib.i64_array([t._live() for t in made])
    names_arr = None
    if names is not None:
        if len(names) != len(made):
            raise ValueError(f"{len(names)} names for {len(made)} tensors")
        names_arr = (C.c_char_p * len(names))(*(n.encode() for n in names))
    h = C.c_int64()
    try:
        _lib.call("wt_dataset_from_tensors", handles, names_arr, len(made), C.byref(h))
    finally:
        for t, given in zip(made, tensors, strict=True):
            if t is not given:
                t.close()
    return NativeDataset(h.value)


def permutation(n: int, seed: int = 0, epoch: int = 0) -> list[int]:
    """The record order of shuffled epoch `epoch`: what every loader with
    this seed reads, in every SDK."""
    out = (C.c_int64 * max(n, 1))()
    _lib.call("wt_data_permutation", n, seed, epoch, out)
    return list(out[:n])
