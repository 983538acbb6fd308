"""wt.data: the library's readers and loader through the C ABI, and Python
datasets batched on threads in the library's shuffle order. The files are
data/testdata's, written by NumPy, safetensors, pyarrow and Pillow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import webtensor as wt

TD = Path(__file__).resolve().parents[3] / "data" / "testdata"
X = np.arange(30, dtype=np.float32).reshape(5, 2, 3)
Y = np.arange(5, dtype=np.int64) * 10


def test_npy_reads_numpys_files():
    ds = wt.data.npy(TD / "x.npy", TD / "y.npy")
    assert len(ds) == 5 and ds.fields == ("x", "y") and ds.shapes == ((2, 3), ())
    x, y = ds[3]
    np.testing.assert_array_equal(x.numpy(), X[3])
    assert y.item() == 30
    x, _ = ds[-1]
    np.testing.assert_array_equal(x.numpy(), X[4])
    with pytest.raises(IndexError, match="record 5 out of range"):
        ds[5]


def test_the_other_readers():
    for ds in (wt.data.npz(TD / "xy.npz", ["x", "y"]), wt.data.safetensors(TD / "xy.safetensors", ["x", "y"]),
               wt.data.from_bytes("npz", (TD / "xy.npz").read_bytes(), keys=["x", "y"])):
        np.testing.assert_array_equal(ds[2][0].numpy(), X[2])
        assert ds[2][1].item() == 20
    pq = wt.data.parquet(TD / "table.parquet", ["a", "v"])
    assert pq.dtypes == ("i8", "f32") and pq.shapes == ((), (3,))
    np.testing.assert_array_equal(pq[4][1].numpy(), [4, 5, 6])
    imgs = wt.data.image_folder(TD / "images")
    assert imgs.classes == ["cat", "dog"] and imgs.shapes == ((3, 3, 4), ())
    assert imgs[2][1].item() == 1


def test_errors_name_the_file():
    with pytest.raises(FileNotFoundError):
        wt.data.npy(TD / "missing.npy")
    with pytest.raises(ValueError, match=r'nulls.parquet: column "n": row 1 is null'):
        wt.data.parquet(TD / "nulls.parquet")
    with pytest.raises(ValueError, match="upload.npy: not a .npy file"):
        wt.data.from_bytes("npy", b"junk", name="upload.npy")


@pytest.mark.parametrize("workers", [0, 2])
def test_loader_batches_in_permutation_order(workers):
    ds = wt.data.TensorDataset(X, Y, names=["x", "y"])
    loader = wt.data.DataLoader(ds, batch_size=2, shuffle=True, seed=7, num_workers=workers)
    assert len(loader) == 3
    for epoch in range(2):
        got = [y.numpy() for _, y in loader]
        assert [len(b) for b in got] == [2, 2, 1]
        np.testing.assert_array_equal(np.concatenate(got), Y[wt.data.permutation(5, 7, epoch)])
    loader.set_epoch(1)
    again = np.concatenate([y.numpy() for _, y in loader])
    np.testing.assert_array_equal(again, Y[wt.data.permutation(5, 7, 1)])
    loader.close()


class Squares(wt.data.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return np.full((2,), i * i, np.float32), i


@pytest.mark.parametrize("workers", [0, 3])
def test_python_dataset_shuffles_as_the_library_does(workers):
    loader = wt.data.DataLoader(Squares(), batch_size=4, shuffle=True, seed=3, drop_last=True, num_workers=workers)
    batches = list(loader)
    assert len(batches) == len(loader) == 2
    labels = np.concatenate([b[1].numpy() for b in batches])
    np.testing.assert_array_equal(labels, wt.data.permutation(10, 3, 0)[:8])
    assert batches[0][0].shape == (4, 2)
    np.testing.assert_array_equal(batches[0][0].numpy()[:, 0], labels[:4] ** 2)


def test_loader_options_are_checked():
    ds = wt.data.npy(TD / "x.npy")
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        wt.data.DataLoader(ds, batch_size=0)
    with pytest.raises(wt.UnsupportedError):
        wt.data.DataLoader(ds, device="nosuch")
