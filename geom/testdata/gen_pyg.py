"""Reference vectors for geom/ from PyTorch Geometric (test-only; `make geom-vectors`).

For each case: a small random graph, features, the layer's parameters as
PyG initialised them (seeded), its output, a random upstream gradient and the
gradients of sum(out * upstream) with respect to the features and every
parameter - all in f64, written to geom/testdata/pyg.safetensors with names
"<case>/<what>". The Go test loads the parameters into the geom layer of the
same name (state-dict names match PyG's) and compares.
"""

import json
import sys

import torch
import torch_geometric
from safetensors.torch import save_file
from torch_geometric.nn import GATConv, GCNConv, GINConv, SAGEConv, global_add_pool, global_max_pool, global_mean_pool

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
N, E, F_IN, F_OUT = 7, 16, 4, 3


def graph():
    # Distinct directed edges without self loops (PyG's add_self_loops then
    # adds one per node, as the Go layers do).
    pairs = set()
    while len(pairs) < E:
        s, d = torch.randint(0, N, (2,)).tolist()
        if s != d:
            pairs.add((s, d))
    return torch.tensor(sorted(pairs), dtype=torch.int64).t().contiguous()


out, meta = {}, {}


def case(name, layer, run, attrs):
    x = torch.randn(N, F_IN, requires_grad=True)
    ei = graph()
    w = torch.rand(E) + 0.5
    batch = torch.tensor([0, 0, 0, 1, 1, 2, 2])
    y = run(layer, x, ei, w, batch)
    up = torch.randn_like(y)
    (y * up).sum().backward()
    out[f"{name}/x"] = x.detach()
    out[f"{name}/edge_index"] = ei
    out[f"{name}/edge_weight"] = w
    out[f"{name}/batch"] = batch
    out[f"{name}/out"] = y.detach()
    out[f"{name}/up"] = up
    out[f"{name}/grad/x"] = x.grad
    for pn, p in layer.named_parameters():
        out[f"{name}/param/{pn}"] = p.detach().clone()
        out[f"{name}/grad/{pn}"] = p.grad
    meta[name] = attrs


case("gcn", GCNConv(F_IN, F_OUT), lambda m, x, ei, w, b: m(x, ei), {})
case("gcn_weighted", GCNConv(F_IN, F_OUT), lambda m, x, ei, w, b: m(x, ei, w), {"weighted": True})
case("sage_mean", SAGEConv(F_IN, F_OUT), lambda m, x, ei, w, b: m(x, ei), {"aggr": "mean"})
case("sage_max", SAGEConv(F_IN, F_OUT, aggr="max"), lambda m, x, ei, w, b: m(x, ei), {"aggr": "max"})
case("gin", GINConv(torch.nn.Linear(F_IN, F_OUT), eps=0.5), lambda m, x, ei, w, b: m(x, ei), {"eps": 0.5})
case("gat", GATConv(F_IN, F_OUT, heads=2), lambda m, x, ei, w, b: m(x, ei), {"heads": 2, "concat": True})
case("gat_mean", GATConv(F_IN, F_OUT, heads=2, concat=False), lambda m, x, ei, w, b: m(x, ei),
     {"heads": 2, "concat": False})
ident = torch.nn.Identity()
case("pool_add", ident, lambda m, x, ei, w, b: global_add_pool(x * 1.0, b), {"pool": "add"})
case("pool_mean", ident, lambda m, x, ei, w, b: global_mean_pool(x * 1.0, b), {"pool": "mean"})
case("pool_max", ident, lambda m, x, ei, w, b: global_max_pool(x * 1.0, b), {"pool": "max"})

path = sys.argv[1] if len(sys.argv) > 1 else "geom/testdata/pyg.safetensors"


def hetero():
    """A HeteroConv of SAGEConvs over authors and papers (sum across relations)."""
    from torch_geometric.nn import HeteroConv

    counts, dims = {"author": 4, "paper": 5}, {"author": 2, "paper": 3}
    x = {t: torch.randn(counts[t], dims[t], requires_grad=True) for t in counts}
    rels = {("author", "writes", "paper"): 7, ("paper", "cites", "paper"): 6, ("paper", "rev_writes", "author"): 5}
    ei = {}
    for (s, r, d), e in rels.items():
        ei[(s, r, d)] = torch.stack([torch.randint(0, counts[s], (e,)), torch.randint(0, counts[d], (e,))])
    conv = HeteroConv({k: SAGEConv((-1, -1), 3) for k in rels}, aggr="sum").double()
    with torch.no_grad():
        conv({t: v.detach() for t, v in x.items()}, ei)  # materialise the lazy layers
    for p in conv.parameters():
        torch.nn.init.normal_(p)
    y = conv(x, ei)
    loss = 0
    for t, v in y.items():
        up = torch.randn_like(v)
        out[f"hetero/out/{t}"] = v.detach()
        out[f"hetero/up/{t}"] = up
        loss = loss + (v * up).sum()
    loss.backward()
    for t, v in x.items():
        out[f"hetero/x/{t}"] = v.detach()
        out[f"hetero/grad/x/{t}"] = v.grad
    for (s, r, d), v in ei.items():
        out[f"hetero/edge_index/{s}__{r}__{d}"] = v
    for pn, p in conv.named_parameters():
        out[f"hetero/param/{pn}"] = p.detach().clone()
        out[f"hetero/grad/{pn}"] = p.grad
    meta["hetero"] = {"counts": counts, "dims": dims}


hetero()
versions = {"torch_geometric": torch_geometric.__version__, "torch": torch.__version__}
save_file({k: v.contiguous() for k, v in out.items()}, path, metadata={"cases": json.dumps(meta), **versions})
print(f"{path}: {len(meta)} cases")
