"""Fill conformance/vectors/<op>.safetensors with NumPy/PyTorch reference results.

The Go export tool (conformance/gen/export) writes each op's sample inputs and
case descriptions into build/vectors-in; this script computes every case's outputs with the
reference function of refs/*.py (REFS dicts: op name -> fn(ins, attrs)), and,
for differentiable cases, the gradients of sum(out * upstream) for random
upstream gradients, and writes inputs and results to conformance/vectors
(leaving a file untouched when nothing in it changed).

Complex inputs and outputs are stored as their real pairs (the case says
which): a reference gets complex tensors and may return complex ones.

Floating inputs are upcast to float64 before the reference runs, so results
are the exact values rounded once to the dtype Go's shape inference declares;
a reference marked native_dtypes (refs/_util.py) gets them as they are.
Usage: python make_vectors.py [--inputs DIR] [--dir DIR] [--op NAME]
"""

import argparse
import hashlib
import importlib
import json
import math
import pkgutil
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DTYPES = {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
    "i64": torch.int64, "i32": torch.int32, "u32": torch.uint32, "i16": torch.int16,
    "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool, "u16": torch.uint16, "u64": torch.uint64,
}


def load_refs():
    import refs
    table = {}
    for mod in pkgutil.iter_modules(refs.__path__):
        m = importlib.import_module(f"refs.{mod.name}")
        for name, fn in getattr(m, "REFS", {}).items():
            if name in table:
                raise SystemExit(f"reference for {name!r} defined twice (refs/{mod.name}.py)")
            table[name] = fn
    return table


def json_attr(v):
    if v == "inf":
        return math.inf
    if v == "-inf":
        return -math.inf
    if v == "nan":
        return math.nan
    if isinstance(v, list):
        return [json_attr(x) for x in v]
    return v


def seed_of(*parts):
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "little")


def as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def run_case(op, fn, case, tensors):
    attrs = {k: json_attr(v) for k, v in case["attrs"].items()}
    ins, leaves = [], []
    for i, spec in enumerate(case["inputs"] or []):
        if spec.get("absent"):
            ins.append(None)
            leaves.append(None)
            continue
        t = tensors[f"{case['name']}/in{i}"]
        if t.is_floating_point() and not getattr(fn, "native_dtypes", False):
            t = t.to(torch.float64)
            if case["grad"] and spec.get("grad"):
                t = t.clone().requires_grad_(True)
                leaves.append(t)
            else:
                leaves.append(None)
        else:
            leaves.append(None)
        if spec.get("complex"):  # the file holds its real pairs; gradients go to them
            t = torch.view_as_complex(t)
        ins.append(t)
    outs = as_tuple(fn(ins, attrs))
    specs = case["outputs"]
    if len(outs) != len(specs):
        raise ValueError(f"reference gave {len(outs)} outputs, Go declares {len(specs)}")
    result = {}
    loss = None
    for j, (o, spec) in enumerate(zip(outs, specs, strict=True)):
        if not isinstance(o, torch.Tensor):
            o = torch.as_tensor(o)
        if spec.get("complex") and o.is_complex():
            o = torch.view_as_real(o)  # compared and differentiated as its pairs
        if spec["shape"] is not None and list(o.shape) != spec["shape"]:
            raise ValueError(f"output {j}: reference shape {list(o.shape)}, Go infers {spec['shape']}")
        want = DTYPES[spec["dtype"]]
        result[f"{case['name']}/out{j}"] = o.detach().to(want).contiguous().clone()
        if case["grad"] and o.requires_grad and o.is_floating_point():
            rng = np.random.default_rng(seed_of(op, case["name"], "up", j))
            up = torch.from_numpy(rng.standard_normal(tuple(o.shape))).to(want)
            result[f"{case['name']}/up{j}"] = up.contiguous().clone()
            term = (o * up.to(torch.float64)).sum()
            loss = term if loss is None else loss + term
    if case["grad"]:
        if loss is None:
            raise ValueError("case is marked differentiable but no output depends on the inputs")
        grads = torch.autograd.grad(loss, [leaf for leaf in leaves if leaf is not None], allow_unused=True)
        k = 0
        for i, leaf in enumerate(leaves):
            if leaf is None:
                continue
            g = grads[k]
            k += 1
            if g is None:
                g = torch.zeros_like(leaf)
            dt = DTYPES[case["inputs"][i]["dtype"]]
            result[f"{case['name']}/grad{i}"] = g.detach().to(dt).contiguous().clone()
    return result


def read(path):
    with safe_open(str(path), "pt") as f:
        return load_file(str(path)), dict(f.metadata())


def fill(src, dst, refs):
    """Compute the references for the inputs exported to src; write dst."""
    tensors, meta = read(src)
    old, old_meta = read(dst) if dst.exists() else ({}, {})
    op = meta["op"]
    if op not in refs:
        return f"no reference function for {op!r} in refs/*.py"
    cases = json.loads(meta["cases"])
    out = {k: v for k, v in tensors.items() if "/in" in k}
    for case in cases:
        try:
            out.update(run_case(op, refs[op], case, tensors))
        except Exception as e:  # report every failing case, not just the first
            return f"{op}/{case['name']}: {type(e).__name__}: {e}"
    meta["complete"] = "true"
    meta["generator"] = f"torch {torch.__version__}, numpy {np.__version__}"
    if unchanged(old, old_meta, out, meta):
        return None
    save_file(out, str(dst), metadata=meta)
    return None


def unchanged(old, old_meta, new, new_meta):
    """The safetensors writer orders metadata keys arbitrarily, so rewriting
    identical results would still change the bytes; keep the file instead."""
    if old_meta != new_meta or old.keys() != new.keys():
        return False
    return all(old[k].dtype == new[k].dtype and old[k].shape == new[k].shape and same_bytes(old[k], new[k])
               for k in new)


def same_bytes(a, b):
    # Bitwise, so that NaN equals NaN.
    return bytes(a.clone().untyped_storage()) == bytes(b.clone().untyped_storage())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", default=str(HERE.parent.parent / "build" / "vectors-in"),
                    help="directory the Go export tool wrote the inputs to")
    ap.add_argument("--dir", default=str(HERE.parent / "vectors"), help="the committed vector files")
    ap.add_argument("--op", default="")
    args = ap.parse_args()
    torch.use_deterministic_algorithms(True)
    refs = load_refs()
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(Path(args.inputs).glob("*.safetensors"))
    if args.op:
        files = [p for p in files if p.stem == args.op]
    else:
        # Vector files of ops that no longer exist would never be read again.
        for stale in set(p.name for p in out.glob("*.safetensors")) - set(p.name for p in files):
            (out / stale).unlink()
    errors = [e for e in (fill(p, out / p.name, refs) for p in files) if e]
    for e in errors:
        print("make_vectors:", e, file=sys.stderr)
    print(f"make_vectors: {len(files) - len(errors)} of {len(files)} ops written")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
