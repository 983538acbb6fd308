"""The Python SDK's conformance runner: every case of every vector file
through webtensor's public Python API (wt.tensor, wt.call, backward) on one
device, graded against the tolerances in conformance/vectors/index.json, and
written as a result file for `make conformance` (see conformance/README.md).

    python conformance/runners/python_runner.py --device cpu --out build/conformance/python-cpu.json
"""

import argparse
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

import webtensor as wt

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance" / "vectors"
NP = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64, "I32": np.int32,
      "U32": np.uint32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "BF16": np.uint16,
      "U16": np.uint16, "U64": np.uint64}
NAMES = {"F32": "f32", "F64": "f64", "F16": "f16", "BF16": "bf16", "I64": "i64", "I32": "i32", "U32": "u32",
         "I16": "i16", "I8": "i8", "U8": "u8", "BOOL": "bool", "U16": "u16", "U64": "u64"}


def read_safetensors(path: Path):
    """Header metadata and {name: (dtype name, shape, float64 values)}."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {}
    for name, t in header.items():
        lo, hi = t["data_offsets"]
        arr = np.frombuffer(data[lo:hi], dtype=NP[t["dtype"]]).copy()
        if t["dtype"] == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = (NAMES[t["dtype"]], list(t["shape"]), arr.astype(np.float64).reshape(t["shape"]))
    return meta, tensors


def make_input(dtype: str, shape, values, strided: bool, device: str):
    """A tensor on device; strided inputs are views with doubled strides,
    taken with a step-2 slice of a base twice as wide in the last dim."""
    if not strided or len(shape) == 0:
        return wt.tensor(values.astype(np.float64), dtype=dtype, device=device) if dtype in ("f16", "bf16", "f32") \
            else wt.tensor(values.astype(NP[dtype.upper()] if dtype != "bool" else np.bool_), device=device)
    base = np.zeros(list(shape[:-1]) + [2 * shape[-1]], dtype=np.float64)
    base[..., ::2] = values
    if dtype in ("f16", "bf16", "f32"):
        b = wt.tensor(base, dtype=dtype, device=device)
    else:
        b = wt.tensor(base.astype(NP[dtype.upper()] if dtype != "bool" else np.bool_), device=device)
    return b[..., ::2]


def host_values(t) -> np.ndarray:
    """Any tensor's values as float64, via the CPU."""
    c = t.to("cpu")
    if c.dtype.name != "f64":
        c = wt.cast(c, dtype="f64")
    return c.numpy()


def attr_value(v):
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if isinstance(v, list):
        return [attr_value(x) for x in v]
    return v


def grade(got, want_dtype, want_shape, want, tol, scale):
    """Worst |got - want| / (atol + rtol |want|); raises on a mismatch."""
    if got.dtype.name != want_dtype:
        raise AssertionError(f"dtype {got.dtype.name}, want {want_dtype}")
    if list(got.shape) != list(want_shape):
        raise AssertionError(f"shape {list(got.shape)}, want {want_shape}")
    g, w = host_values(got).reshape(-1), want.reshape(-1)
    atol, rtol = (tol["atol"] * scale, tol["rtol"] * scale) if want_dtype in ("f32", "f64", "f16", "bf16") else (0, 0)
    worst = 0.0
    for i, (a, b) in enumerate(zip(g, w, strict=True)):
        if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
            if not (math.isnan(a) and math.isnan(b)) and a != b:
                raise AssertionError(f"element {i}: got {a}, want {b}")
            continue
        d, bound = abs(a - b), atol + rtol * abs(b)
        r = d / bound if bound > 0 else (math.inf if d > 0 else 0.0)
        worst = max(worst, r)
        if d > bound:
            raise AssertionError(f"element {i}: got {a}, want {b} (atol {atol:g}, rtol {rtol:g})")
    return worst


def run_case(op, case, tensors, tols, device, spec, grad_scale):
    """Runs one case; tols maps dtype -> {atol, rtol} already scaled for the op."""
    name = case["name"]
    ins, leaves = [], []
    for i, s in enumerate(case["inputs"]):
        if s.get("absent"):
            ins.append(None)
            leaves.append(None)
            continue
        dt, shape, vals = tensors[f"{name}/in{i}"]
        t = make_input(dt, shape, vals, s.get("strided", False), device)
        if case["grad"] and s.get("grad"):
            t.requires_grad = True
        leaves.append(t)
        # A complex input is filed as its real pairs (index.json's "complex").
        ins.append(wt.view_as_complex(t) if s.get("complex") else t)
    attrs = {k: attr_value(v) for k, v in case["attrs"].items()}
    if any(a["name"] == "device" for a in spec.get("attrs", [])) and not attrs.get("device"):
        attrs["device"] = device
    outs = wt.call(op, *ins, **attrs)
    outs = outs if isinstance(outs, list) else [outs]
    if len(outs) != len(case["outputs"]):
        raise AssertionError(f"{len(outs)} outputs, want {len(case['outputs'])}")
    worst, loss = 0.0, None
    for j, o in enumerate(outs):
        if case["outputs"][j].get("complex"):
            o = wt.view_as_real(o)
        dt, shape, want = tensors[f"{name}/out{j}"]
        worst = max(worst, grade(o, dt, shape, want, tols[dt], 1))
        if f"{name}/up{j}" in tensors and o.requires_grad:
            udt, ushape, uvals = tensors[f"{name}/up{j}"]
            term = (o * make_input(udt, ushape, uvals, False, device)).sum()
            loss = term if loss is None else loss + term
    if case["grad"] and loss is not None:
        loss.backward()
        for i, s in enumerate(case["inputs"]):
            if not s.get("grad"):
                continue
            dt, shape, want = tensors[f"{name}/grad{i}"]
            g = leaves[i].grad if leaves[i].grad is not None else wt.zeros_like(leaves[i])
            worst = max(worst, grade(g, dt, shape, want, tols[dt], grad_scale))
    return worst


def identity(device: str) -> dict:
    """SHA-256 of seeded random tensors made through this SDK (the same
    cases as conformance/identity.go); every column must agree."""
    import hashlib

    out = {}
    cases = [("rand_seed7", lambda: wt.call("rand", shape=[64], seed=7, device=device)),
             ("randint_seed7", lambda: wt.call("randint", shape=[64], seed=7, low=-5, high=50, device=device)),
             ("bernoulli_seed3", lambda: wt.call("bernoulli", wt.full([64], 0.3, device=device), seed=3))]
    for name, make in cases:
        try:
            t = make().to("cpu")
            out[name] = hashlib.sha256(t.numpy().tobytes()).hexdigest()
        except Exception as e:
            out[name] = f"error: {e}"
    return out


def train(device: str, ckpt: Path) -> list:
    """The cross-SDK training check (conformance/training): the same MLP
    after the same seed, 20 Adam steps on the same seeded data; saves the
    final weights to ckpt and returns the loss curve."""
    from webtensor import nn, optim

    previous = wt.default_device()
    wt.set_default_device(device)
    try:
        wt.manual_seed(2026)
        model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
        x = wt.call("randn", shape=[32, 4], seed=11, device=device)
        y = wt.call("randint", shape=[32], low=0, high=3, seed=12, device=device)
        opt = optim.Adam(model.parameters(), lr=0.05)
        losses = []
        for _ in range(20):
            opt.zero_grad()
            loss = wt.call("cross_entropy", model(x), y)
            loss.backward()
            losses.append(loss.item())
            opt.step()
        wt.save(model, ckpt)
        return losses
    finally:
        wt.set_default_device(previous)


def load_others(out: Path) -> dict:
    """Loads every other column's checkpoint into a fresh model of this SDK."""
    from webtensor import nn

    res = {}
    for other in sorted(out.parent.glob("*.ckpt.safetensors")):
        if other == out:
            continue
        try:
            model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
            model.load_state_dict(wt.load(other))
            res[other.name.removesuffix(".ckpt.safetensors")] = "ok"
        except Exception as e:
            res[other.name.removesuffix(".ckpt.safetensors")] = f"{type(e).__name__}: {e}"
    return res


def holds(device: str, case, tensors) -> bool:
    """False when the case needs what the device cannot hold (f64 or wide
    i64 on WebGPU)."""
    if not device.startswith("webgpu"):
        return True
    for key, (dt, _, vals) in tensors.items():
        if key.startswith(case["name"] + "/") and ("/in" in key or "/out" in key):
            if dt == "f64":
                return False
            if dt == "i64" and vals.size and (vals.min() < -2**31 or vals.max() > 2**31 - 1):
                return False
    return True


# core.NoDeviceText: the C ABI's message says so when the machine has no
# such device at all (no adapter, no driver), as opposed to a backend that
# failed to open, which fails the column (conformance/columns.go).
NO_DEVICE = "no such device on this machine"


def open_problem(device: str) -> str:
    """'' when device opens, else the column's detail: "unavailable: ..."
    (no such device here) or "open failed: ..." (a fault)."""
    try:
        wt.synchronize(device)
        return ""
    except Exception as e:  # the library's message says which
        return ("unavailable: " if NO_DEVICE in str(e) else "open failed: ") + str(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    index = json.loads((VECTORS / "index.json").read_text())
    specs = {o["name"]: o for o in wt.manifest()["ops"]}
    kind = args.device.split(":")[0]
    result = {"sdk": "python", "backend": kind, "ops": {},
              "detail": f"webtensor {wt.__version__}, Python {sys.version.split()[0]}, NumPy {np.__version__}"}
    why = open_problem(args.device)
    if why:
        result["detail"] = why
    else:
        wt.fallbacks(reset=True)
        for op, entry in sorted(index["ops"].items()):
            meta, tensors = read_safetensors(VECTORS / entry["file"])
            cases = json.loads(meta["cases"])
            r = {"status": "pass", "cases": 0, "worst": 0.0}
            for case in cases:
                if not holds(args.device, case, tensors):
                    r["skipped"] = r.get("skipped", 0) + 1
                    continue
                r["cases"] += 1
                try:
                    with wt.scope():
                        tols = {d: {"atol": t["atol"] * entry["tol_scale"], "rtol": t["rtol"] * entry["tol_scale"]}
                                for d, t in index["tolerances"].items()}
                        w = run_case(op, case, tensors, tols, args.device, specs.get(op, {}), index["grad_tol_scale"])
                    r["worst"] = max(r["worst"], w)
                except Exception as e:  # a failing case is a result, not a crash
                    if r["status"] == "pass":
                        r["status"], r["detail"] = "fail", f"case {case['name']}: {type(e).__name__}: {e}"
            if r["cases"] == 0:
                r["status"], r["detail"] = "n/a", f"every case needs a dtype {args.device} cannot hold"
            if math.isinf(r["worst"]):
                r["worst"] = 1e308
            result["ops"][op] = r
        result["identity"] = identity(args.device)
        ckpt = Path(str(Path(args.out))[:-len(".json")] + ".ckpt.safetensors")
        try:
            result["training"] = train(args.device, ckpt)
            result["checkpoint"] = str(ckpt)
        except Exception as e:
            result["checkpoint"] = f"error: {type(e).__name__}: {e}"
        result["loads_checkpoints"] = load_others(ckpt)
        result["fallbacks"] = wt.fallbacks()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
