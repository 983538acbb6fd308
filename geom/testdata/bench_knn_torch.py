"""Times knn_graph(x, k=16, batch) on 100k 3-D points in 10 clouds in torch on the CPU.

The counterpart of geom's BenchmarkKNNGraph100k (go test ./geom -run '^$' -bench KNNGraph100k).
PyG 2.8.1's knn_graph needs pyg-lib (torch_cluster before), which is not installed here, so this
is the plain-torch way: per cloud, torch.cdist and topk(k + 1) with the point itself dropped.
Run: .venv/bin/python geom/testdata/bench_knn_torch.py
"""

import time

import torch

N, CLOUDS, K = 100_000, 10, 16


def knn_graph(x, batch, k):
    edges = []
    for c in range(CLOUDS):
        idx = (batch == c).nonzero().flatten()
        pts = x[idx]
        d = torch.cdist(pts, pts)
        d.fill_diagonal_(float("inf"))
        nb = d.topk(k, dim=1, largest=False).indices
        centre = torch.arange(len(idx)).repeat_interleave(k)
        edges.append(torch.stack([idx[nb.flatten()], idx[centre]]))
    return torch.cat(edges, dim=1)


def main():
    torch.manual_seed(0)
    x = torch.rand(N, 3)
    batch = torch.arange(N) // (N // CLOUDS)
    knn_graph(x, batch, K)  # warm-up
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        ei = knn_graph(x, batch, K)
        times.append(time.perf_counter() - t0)
    assert ei.shape == (2, N * K)
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads): knn_graph k={K} on {N} points "
          f"in {CLOUDS} clouds: {min(times) * 1e3:.0f} ms (best of 3)")


if __name__ == "__main__":
    main()
