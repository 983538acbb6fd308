"""wt.data's loader against PyTorch's DataLoader on one dataset, in one run.

The workload is issue 22's: N 28x28 uint8 images and int64 labels in .npy
files, batch 128, shuffled, the same worker count for both. PyTorch reads
a TensorDataset over the arrays (its usual in-memory setup; every batch is
a list of sample indexings and a default_collate stack); webtensor reads
the .npy files with wt.data.npy and its library loader. Each loader runs
--epochs full epochs, interleaved, and the best epoch of each counts (the
machine's noise only ever slows an epoch). PyTorch's worker processes start
once (persistent_workers), the setting that favours it most.

    python scripts/data_bench.py [--n 50000] [--workers 2] [--epochs 3]

Prints samples/s for each and the ratio webtensor / PyTorch (>= 1.0 is
issue 22's target).
"""

import argparse
import os
import tempfile
import time

import numpy as np


def epoch_time(loader) -> float:
    t = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()

    import torch
    from torch.utils.data import DataLoader, TensorDataset

    import webtensor as wt

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (args.n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, args.n, dtype=np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        xpath, ypath = os.path.join(tmp, "images.npy"), os.path.join(tmp, "labels.npy")
        np.save(xpath, images)
        np.save(ypath, labels)

        torch.manual_seed(0)
        tds = TensorDataset(torch.from_numpy(np.load(xpath)), torch.from_numpy(np.load(ypath)))
        tl = DataLoader(tds, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                        persistent_workers=args.workers > 0)
        wl = wt.data.DataLoader(wt.data.npy(xpath, ypath), batch_size=args.batch, shuffle=True,
                                num_workers=args.workers, device="cpu")
        # Both loaders' batches must be what the other's are, up to order.
        tx, ty = next(iter(tl))
        wx, wy = next(iter(wl))
        assert tuple(tx.shape) == tuple(wx.shape) and tx.dtype == torch.uint8 and wx.dtype == wt.u8, (tx.shape, wx)
        assert tuple(ty.shape) == tuple(wy.shape)

        best = {"pytorch": float("inf"), "webtensor": float("inf")}
        for _ in range(args.epochs):
            best["pytorch"] = min(best["pytorch"], epoch_time(tl))
            best["webtensor"] = min(best["webtensor"], epoch_time(wl))
        wl.close()

    rate = {k: args.n / v for k, v in best.items()}
    print(f"{args.n} 28x28 u8 images, batch {args.batch}, shuffle, {args.workers} workers, "
          f"best of {args.epochs} epochs (torch {torch.__version__}, {os.cpu_count()} CPUs)")
    for k in ("pytorch", "webtensor"):
        print(f"  {k:10s} {best[k] * 1e3:8.1f} ms/epoch  {rate[k]:12,.0f} samples/s")
    print(f"  ratio webtensor / pytorch: {rate['webtensor'] / rate['pytorch']:.2f}x")


if __name__ == "__main__":
    main()
