"""Datasets and a DataLoader with PyTorch's semantics (torch.utils.data).

    import webtensor as wt
    ds = wt.data.npy("images.npy", "labels.npy")       # or npz, safetensors, parquet, image_folder
    loader = wt.data.DataLoader(ds, batch_size=128, shuffle=True, seed=0, num_workers=2)
    for epoch in range(3):
        for images, labels in loader:                  # a new shuffle each pass
            ...

The built-in readers, shuffling, worker threads and batch collation are the
library's (Go, package data, through the C ABI): the same in every SDK. A
Python dataset (anything with __getitem__ and __len__) works too: it is read
on Python threads in the order the library's permutation gives, so a seed
shuffles a Python dataset as it does a built-in one.
"""

from ._loader import DataLoader, default_collate
from ._native import (
    Dataset,
    NativeDataset,
    TensorDataset,
    from_bytes,
    image_folder,
    npy,
    npz,
    parquet,
    permutation,
    safetensors,
)

__all__ = [
    "DataLoader", "Dataset", "NativeDataset", "TensorDataset", "default_collate", "from_bytes", "image_folder",
    "npy", "npz", "parquet", "permutation", "safetensors",
]
