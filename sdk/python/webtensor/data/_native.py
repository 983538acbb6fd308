"""The library's datasets (the dataset.* targets of call(), docs/calls.md)
behind a Python object, and the shuffle permutation every loader uses."""

from __future__ import annotations

import os
from typing import Any

from .._objects import Handle, Inputs, call
from .._tensor import Tensor


class Dataset:
    """A map-style dataset, PyTorch's torch.utils.data.Dataset: subclass it
    (or write any class) with __getitem__(i) and __len__()."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} defines no __len__")


class NativeDataset(Dataset, Handle):
    """A dataset the library reads (a dataset handle): its records are
    tuples of Tensors, one per field. Freed by close(), a with block or the
    garbage collector; loaders made from it keep it alive."""

    _kind = _what = "dataset"

    def __init__(self, handle: int):
        super().__init__(handle)
        info = call("dataset.info", handle)
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
        return tuple(map(Tensor._wrap, call("dataset.get", self._live(), index=index, device=device)))

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return self.get(index)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}: {d}{list(s)}" for n, d, s in zip(self.fields, self.dtypes, self.shapes, strict=True))
        return f"data.NativeDataset(len={self._len}, fields=({fields}))"



def _open(spec: dict[str, Any], data: bytes | None = None) -> NativeDataset:
    return NativeDataset(call("dataset.open", spec=spec, data=data))


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
    return _open({"format": fmt, "keys": _keys(keys), "name": name or fmt}, bytes(data))


def TensorDataset(*tensors, names=None) -> NativeDataset:  # noqa: N802 (PyTorch's class name)
    """PyTorch's TensorDataset: record i is t[i] of each tensor (Tensors, or
    anything wt.tensor takes), all with the same first dim. The values are
    copied into the library once."""
    if not tensors:
        raise ValueError("TensorDataset needs at least one tensor")
    if names is not None and len(names) != len(tensors):
        raise ValueError(f"{len(names)} names for {len(tensors)} tensors")
    with Inputs() as made:
        hs = [made.handle(t) for t in tensors]
        return NativeDataset(call("dataset.from_tensors", tensors=hs, names=None if names is None else list(names)))


def permutation(n: int, seed: int = 0, epoch: int = 0) -> list[int]:
    """The record order of shuffled epoch `epoch`: what every loader with
    this seed reads, in every SDK."""
    return call("data.permutation", n=n, seed=seed, epoch=epoch)
