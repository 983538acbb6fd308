"""Write narrow_types.json: ONNX's reference for the narrow element types.

TestNarrowTypes (narrow_test.go) holds the importer's decoding of every bit
pattern and its Cast rounding against what onnx's own helpers compute
(onnx.numpy_helper.saturate_cast, to_float8e8m0 and ml_dtypes, which
onnx.reference's Cast uses). Floats are written as the hex of their
float32 bits, so NaN, the infinities and -0 survive JSON; cast results as
the bit pattern of the narrow type.

Where ONNX's written specification and its reference disagree the
importer follows the specification, and the inputs where they differ are
left out here (narrow_test.go checks them by hand):
  * FLOAT4E2M1: float4.md maps NaN to +6; ml_dtypes gives a zero.
  * FLOAT8E8M0: Cast's table saturates +-Inf to the largest value (the
    reference gives NaN), and without saturate maps zero and values below
    2^-127 to NaN (the reference gives 2^-127); float32 subnormal inputs,
    which the reference rounds from a shifted exponent, are left out too.

Usage: python narrow_types.py > narrow_types.json (with onnx==1.23.2).
"""

import json
import sys

import ml_dtypes
import numpy as np
from onnx import numpy_helper

FLOAT8 = {
    "FLOAT8E4M3FN": ml_dtypes.float8_e4m3fn,
    "FLOAT8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "FLOAT8E5M2": ml_dtypes.float8_e5m2,
    "FLOAT8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
}
INTS = {
    "INT4": ml_dtypes.int4,
    "UINT4": ml_dtypes.uint4,
    "INT2": ml_dtypes.int2,
    "UINT2": ml_dtypes.uint2,
}


def hexbits(a):
    return [f"{int(b):08x}" for b in np.asarray(a, np.float32).view(np.uint32)]


def patterns(a):
    return [int(b) for b in np.asarray(a).view(np.uint8)]


def grid_inputs(values, rng):
    """Every finite value of a format, the midpoints between neighbours and
    one float32 step either side of each, what lies past the largest value,
    the specials, and random magnitudes; a share of it negated."""
    pos = np.unique(np.abs(values[np.isfinite(values)])).astype(np.float32)
    mids = ((pos[:-1].astype(np.float64) + pos[1:]) / 2).astype(np.float32)
    top, step = pos[-1], pos[-1] - pos[-2]
    beyond = np.array([top + step / 2, top + step, top * 1.01, top * 4, 1e6, 3e38], np.float32)
    tiny = np.array([pos[1] / 2, pos[1] / 4, 1e-7, 1e-30], np.float32)
    near = np.concatenate([mids, beyond[:2], tiny[:1]])
    x = np.concatenate(
        [
            pos,
            mids,
            beyond,
            tiny,
            np.nextafter(near, np.float32(np.inf)),
            np.nextafter(near, np.float32(0)),
            np.exp(rng.uniform(np.log(pos[1] / 2), np.log(top * 2), 64)).astype(np.float32),
            np.array([np.inf, np.nan, -0.0], np.float32),
        ]
    )
    return np.concatenate([x, -x[::5]]).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(25)
    out = {"decode": {}, "inputs": {}, "cast": []}
    with np.errstate(all="ignore"):
        for name, dt in [*FLOAT8.items(), ("FLOAT8E8M0", ml_dtypes.float8_e8m0fnu)]:
            out["decode"][name] = hexbits(np.arange(256, dtype=np.uint8).view(dt).astype(np.float32))
        out["decode"]["FLOAT4E2M1"] = hexbits(
            np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
        )

        for name, dt in FLOAT8.items():
            x = grid_inputs(np.arange(256, dtype=np.uint8).view(dt).astype(np.float32), rng)
            out["inputs"][name] = hexbits(x)
            for saturate in (True, False):
                y = numpy_helper.saturate_cast(x, dt) if saturate else x.astype(dt)
                out["cast"].append({"to": name, "saturate": saturate, "input": name, "y": patterns(y)})

        f4 = ml_dtypes.float4_e2m1fn
        x = grid_inputs(np.arange(16, dtype=np.uint8).view(f4).astype(np.float32), rng)
        x = x[~np.isnan(x)]
        out["inputs"]["FLOAT4E2M1"] = hexbits(x)
        out["cast"].append({"to": "FLOAT4E2M1", "saturate": True, "input": "FLOAT4E2M1", "y": patterns(x.astype(f4))})

        k = np.arange(-126, 128, dtype=np.float64)
        p2 = np.ldexp(1.0, k.astype(int)).astype(np.float32)
        x = np.concatenate(
            [
                p2,
                p2 * 1.5,
                np.nextafter(p2, np.float32(np.inf)),
                np.nextafter(p2 * 1.5, np.float32(0)),
                np.array([3.4e38, np.nan], np.float32),
            ]
        )
        x = x[np.isnan(x) | (np.abs(x) >= np.float32(2.0**-126))].astype(np.float32)
        x = np.concatenate([x, -x[::7]])
        out["inputs"]["FLOAT8E8M0"] = hexbits(x)
        out["inputs"]["FLOAT8E8M0_zero"] = hexbits(np.concatenate([x, np.zeros(1, np.float32)]))
        for saturate in (True, False):
            for mode in ("up", "down", "nearest"):
                name = "FLOAT8E8M0_zero" if saturate else "FLOAT8E8M0"
                xs = np.array([np.uint32(int(h, 16)) for h in out["inputs"][name]]).view(np.float32)
                y = numpy_helper.to_float8e8m0(xs, saturate, mode)
                out["cast"].append(
                    {"to": "FLOAT8E8M0", "saturate": saturate, "round_mode": mode, "input": name, "y": patterns(y)}
                )

        x = np.concatenate([np.arange(-20, 20.25, 0.25), [np.nan, np.inf, -np.inf, 1e10, -1e10]]).astype(np.float32)
        xi = np.arange(-300, 300, 7, dtype=np.int32)
        out["inputs"]["floats"] = hexbits(x)
        out["inputs"]["ints"] = [int(v) for v in xi]
        for name, dt in INTS.items():
            out["cast"].append({"to": name, "input": "floats", "y": [int(v) for v in x.astype(dt).astype(np.int32)]})
            out["cast"].append({"to": name, "input": "ints", "y": [int(v) for v in xi.astype(dt).astype(np.int32)]})
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
