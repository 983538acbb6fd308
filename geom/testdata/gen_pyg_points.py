"""Reference vectors for geom's point-cloud code (test-only; `make geom-vectors`).

Writes geom/testdata/pyg_points.safetensors, all floats f64, names "<case>/<what>":

- neighbour search (knn, knn_graph, radius, radius_graph) on random clouds,
  batched ones, clouds smaller than k, and integer grids full of exact ties;
- EdgeConv (max, mean, add) and DynamicEdgeConv: output and the gradients of
  sum(out * up) with respect to the features and every parameter of h;
- NormalizeScale and RandomRotate (fixed angles) outputs.

PyG 2.8.1 runs knn/radius and DynamicEdgeConv through pyg-lib (torch_cluster
in older releases); neither is installed here, so the search reference is
plain torch: exact squared distances from broadcast differences (what cdist
computes, without its matmul shortcut) and a stable sort (torch.topk promises
no order among ties), so ties go to the lowest index. DynamicEdgeConv is PyG's
EdgeConv over that k-NN graph, self included, which is what DynamicEdgeConv
computes (knn(x, x, k) then flip). The transforms are PyG's own.
"""

import json
import sys

import torch
import torch_geometric
import torch_geometric.transforms as T
from safetensors.torch import save_file
from torch_geometric.data import Data
from torch_geometric.nn import EdgeConv

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
out, meta = {}, {}


def sq_dist(x, y):
    return ((y[:, None, :] - x[None, :, :]) ** 2).sum(-1)  # [M, N]


def allowed(x, y, bx, by, same, loop):
    ok = by[:, None] == bx[None, :]
    if same and not loop:
        ok &= ~torch.eye(len(x), dtype=torch.bool)
    return ok


def ref_knn(x, y, k, bx, by, same=False, loop=False):
    """PyG's assignment index [2, E]: row 0 the y (centre), row 1 the x index, nearest first."""
    d = sq_dist(x, y).masked_fill(~allowed(x, y, bx, by, same, loop), float("inf"))
    order = torch.sort(d, dim=1, stable=True).indices[:, :k]
    rows, cols = [], []
    for i in range(len(y)):
        for j in order[i].tolist():
            if d[i, j] != float("inf"):
                rows.append(i)
                cols.append(j)
    return torch.tensor([rows, cols], dtype=torch.int64)


def ref_radius(x, y, r, bx, by, cap, same=False, loop=False):
    """Everything closer than r, in index order, the first cap (0: all) per centre."""
    ok = (sq_dist(x, y) < r * r) & allowed(x, y, bx, by, same, loop)
    rows, cols = [], []
    for i in range(len(y)):
        js = ok[i].nonzero().flatten().tolist()
        js = js[:cap] if cap > 0 else js
        rows += [i] * len(js)
        cols += js
    return torch.tensor([rows, cols], dtype=torch.int64).reshape(2, -1)


def batch_of(*sizes, ids=None):
    ids = ids or range(len(sizes))
    return torch.cat([torch.full((n,), i, dtype=torch.int64) for i, n in zip(ids, sizes, strict=True)])


def grid(n, d, hi):
    return torch.randint(0, hi, (n, d)).double()


def search_case(name, kind, x, y, bx, by, **attrs):
    same = kind.endswith("_graph")
    loop = attrs.get("loop", False)
    if kind.startswith("knn"):
        idx = ref_knn(x, y, attrs["k"], bx, by, same, loop)
    else:
        idx = ref_radius(x, y, attrs["r"], bx, by, attrs["max"], same, loop)
    out[f"{name}/x"] = x
    out[f"{name}/batch_x"] = bx
    if not same:
        out[f"{name}/y"] = y
        out[f"{name}/batch_y"] = by
    # The *_graph forms in PyG's flow layout: row 0 the neighbour (source).
    out[f"{name}/index"] = idx.flip(0) if same else idx
    meta[name] = {"kind": kind, **attrs}


def graph_case(name, kind, x, b, **attrs):
    search_case(name, kind, x, x, b, b, **attrs)


b3 = batch_of(15, 20, 5)
x40 = torch.rand(40, 3)
graph_case("knn_graph_random", "knn_graph", x40, b3, k=6, loop=False)
graph_case("knn_graph_loop", "knn_graph", x40, b3, k=4, loop=True)
graph_case("knn_graph_one_cloud", "knn_graph", torch.rand(25, 2), torch.zeros(25, dtype=torch.int64), k=3, loop=False)
graph_case("knn_graph_ties", "knn_graph", grid(30, 2, 3), batch_of(18, 12), k=5, loop=False)
graph_case("knn_graph_highdim", "knn_graph", torch.randn(30, 12), batch_of(16, 14), k=5, loop=False)
bx, by = batch_of(18, 12, ids=[0, 2]), batch_of(5, 2, 5)  # y cloud 1 has no x points
search_case("knn_xy", "knn", torch.rand(30, 3), torch.rand(12, 3), bx, by, k=4)
search_case("knn_xy_ties", "knn", grid(30, 3, 3), grid(12, 3, 3), bx, by, k=7)
graph_case("radius_graph", "radius_graph", x40, b3, r=0.35, max=0, loop=False)
graph_case("radius_graph_cap", "radius_graph", x40, b3, r=0.5, max=4, loop=True)
graph_case("radius_graph_ties", "radius_graph", grid(30, 2, 4), batch_of(18, 12), r=1.5, max=3, loop=False)
search_case("radius_xy", "radius", torch.rand(30, 3), torch.rand(12, 3), bx, by, r=0.4, max=0)


def layer_case(name, h, x, edge_index, batch, aggr, **attrs):
    x = x.clone().requires_grad_(True)
    conv = EdgeConv(h, aggr=aggr)
    y = conv(x, edge_index)
    up = torch.randn_like(y)
    (y * up).sum().backward()
    out[f"{name}/x"] = x.detach()
    out[f"{name}/edge_index"] = edge_index
    out[f"{name}/batch"] = batch
    out[f"{name}/out"] = y.detach()
    out[f"{name}/up"] = up
    out[f"{name}/grad/x"] = x.grad
    for pn, p in conv.named_parameters():  # "nn.0.weight", ...: PyG's names
        out[f"{name}/param/{pn}"] = p.detach().clone()
        out[f"{name}/grad/{pn}"] = p.grad
    meta[name] = {"kind": "layer", "aggr": aggr, **attrs}


def mlp(fin, hidden, fout):
    return torch.nn.Sequential(torch.nn.Linear(2 * fin, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, fout))


x10, one = torch.randn(10, 4), torch.zeros(10, dtype=torch.int64)
ei10 = ref_knn(x10, x10, 3, one, one, same=True).flip(0)
for aggr in ("max", "mean", "add"):
    layer_case(f"edgeconv_{aggr}", mlp(4, 6, 3), x10, ei10, one, aggr, hidden=6, out=3)
# DynamicEdgeConv: the k-NN graph of the features, each point its own neighbour.
for name, n, f, k, b in (("dynamic_edgeconv", 14, 4, 4, batch_of(8, 6)),
                         ("dynamic_edgeconv_highdim", 16, 10, 3, batch_of(9, 7))):
    xf = torch.randn(n, f)
    ei = ref_knn(xf, xf, k, b, b).flip(0)
    layer_case(name, mlp(f, 5, 3), xf, ei, b, "max", k=k, hidden=5, out=3)


def transform_case(name, transform, pos, **attrs):
    out[f"{name}/pos"] = pos
    out[f"{name}/out"] = transform(Data(pos=pos.clone())).pos
    meta[name] = {"kind": "transform", **attrs}


transform_case("normalize_scale", T.NormalizeScale(), torch.randn(20, 3) * 4 + torch.tensor([10.0, -3.0, 2.0]))
for axis in range(3):
    # A range of one value: PyG's random.uniform(a, a) is a, so no draw to match.
    transform_case(f"rotate_axis{axis}", T.RandomRotate((30.0, 30.0), axis=axis), torch.randn(10, 3),
                   degrees=30.0, axis=axis)
transform_case("rotate_2d", T.RandomRotate((-45.0, -45.0)), torch.randn(8, 2), degrees=-45.0, axis=0)

path = sys.argv[1] if len(sys.argv) > 1 else "geom/testdata/pyg_points.safetensors"
versions = {"torch_geometric": torch_geometric.__version__, "torch": torch.__version__}
# Cases share inputs; safetensors wants every tensor in storage of its own.
tensors = {k: v.detach().clone().contiguous() for k, v in out.items()}
save_file(tensors, path, metadata={"cases": json.dumps(meta), **versions})
print(f"{path}: {len(meta)} cases")
