"""Per-op overhead from Python: small ops (8 f32 elements on the CPU) in
webtensor, PyTorch and NumPy, timed in one process, interleaved round by
round, as the best time per call over the rounds (timeit's advice: the
minimum is the cost, the rest is the machine's noise).

`make python-overhead` prints the table and rewrites its section of
docs/perf.md; `make bench` includes the same section. When the Go toolchain
is on PATH (and --no-go is not given) it also times the Go half alone
(wt_op + wt_tensor_free called from Go), so the table says what the rest of
the gap is made of. WEBTENSOR_CTYPES_ONLY=1 in a child process gives the
pure ctypes path for comparison.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Python per-op overhead"

# (case, webtensor statement, PyTorch statement, NumPy statement)
CASES = [
    ("a + b", "a + b", "ta + tb", "na + nb"),
    ("add(a, b)", "wt.add(a, b)", "torch.add(ta, tb)", "np.add(na, nb)"),
    ("exp(a), a unary op", "wt.exp(a)", "torch.exp(ta)", "np.exp(na)"),
    ("a * 2.0, a Python scalar", "a * 2.0", "ta * 2.0", "na * 2.0"),
    ("sum(a, axis=0), an op with attributes", "wt.sum(a, axis=0)", "torch.sum(ta, dim=0)", "np.sum(na, axis=0)"),
]


def setup():
    import numpy as np
    import torch

    import webtensor as wt

    na = np.arange(8, dtype=np.float32)
    nb = na[::-1].copy()
    return {"wt": wt, "torch": torch, "np": np, "a": wt.tensor(na), "b": wt.tensor(nb),
            "ta": torch.from_numpy(na.copy()), "tb": torch.from_numpy(nb.copy()), "na": na, "nb": nb}


def best_of(stmts, env, rounds, target=0.02):
    """Seconds per call of each statement: min (and median) over rounds, the
    statements taking turns within a round so drift hits them alike."""
    timers = [timeit.Timer(s, globals=env) for s in stmts]
    numbers = []
    for t in timers:
        n, _ = t.autorange()
        numbers.append(max(1, int(n * target / 0.2)))
    runs = [[] for _ in stmts]
    for _ in range(rounds):
        for i, t in enumerate(timers):
            runs[i].append(t.timeit(numbers[i]) / numbers[i])
    return [(min(r), statistics.median(r)) for r in runs]


def measure(rounds):
    env = setup()
    out = {}
    for case, *stmts in CASES:
        out[case] = best_of(stmts, env, rounds)
    return out, env


def ctypes_only(rounds):
    """a + b with the C extension switched off, in a child process."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_overhead as b; "
            f"r, _ = b.measure_one('a + b', {rounds}); print(r)")
    env = {**os.environ, "WEBTENSOR_CTYPES_ONLY": "1"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(res.stdout.strip().splitlines()[-1])


def measure_one(case, rounds):
    env = setup()
    stmt = next(c[1] for c in CASES if c[0] == case)
    return best_of([stmt], env, rounds)[0][0], env


GO_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def go_half():
    """ns per wt_op + wt_tensor_free of the small add, called from Go
    (BenchmarkOpAddSmall in capi): the fastest of five runs."""
    cmd = ["go", "test", "-run", "^$", "-bench", "^BenchmarkOpAddSmall$", "-benchtime", "300000x", "-count", "5",
           "./capi"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False,
                         env={**os.environ, "NODEVICE_SELECT": "1"})
    times = [float(m.group(2)) for m in map(GO_LINE.match, res.stdout.splitlines()) if m]
    return min(times) if times else None


def us(seconds):
    return f"{seconds * 1e6:.2f} µs"


def table(res, slow, go):
    rows = ["| case | webtensor | PyTorch | NumPy | webtensor time / PyTorch time | webtensor time / NumPy time |",
            "|---|---|---|---|---|---|"]
    for case, *_ in CASES:
        (w, _), (t, _), (n, _) = res[case]
        rows.append(f"| {case} | {us(w)} | {us(t)} | {us(n)} | {w / t:.2f}x | {w / n:.2f}x |")
    (t, _), (n, _) = res["a + b"][1], res["a + b"][2]
    if slow:
        rows.append(f"| a + b, ctypes only (WEBTENSOR_CTYPES_ONLY=1) | {us(slow)} | {us(t)} | {us(n)} | "
                    f"{slow / t:.2f}x | {slow / n:.2f}x |")
    if go:
        rows.append(f"| the Go half of a + b: wt_op and wt_tensor_free called from Go (BenchmarkOpAddSmall) | "
                    f"{go / 1e3:.2f} µs | - | - | - | - |")
    return rows


def section(rounds=15, with_go=None, res=None):
    """The docs/perf.md section, measured now (or from res, measure()'s
    result, when scripts/bench.py has taken it already for its own table)."""
    import numpy as np
    import torch

    from webtensor import _tensor

    if res is None:
        res, _ = measure(rounds)
    slow = ctypes_only(rounds)
    if with_go is None:
        with_go = shutil.which("go") is not None
    go = go_half() if with_go else None
    rows = table(res, slow, go)
    path = "the C extension (webtensor._fast)" if _tensor.fast_path() else "ctypes (webtensor._fast not built)"
    w, t = res["a + b"][0][0], res["a + b"][1][0]
    split = ("The Python side and the crossings are the rest: the webtensor figure less the Go half, "
             f"about {w * 1e6 - go / 1e3:.2f} µs\nhere (indicative only: the Go half runs in a Go test binary, "
             "not in this process)." if go else "The Python side and the crossings are the rest.")
    if w <= t:
        torch_gap = f"against PyTorch, `a + b` is {(t - w) * 1e6:.2f} µs faster in this run"
    else:
        torch_gap = f"against PyTorch, `a + b` is {(w - t) * 1e6:.2f} µs slower in this run"
    return f"""{SECTION}

`make python-overhead` (scripts/bench_overhead.py): the time of one op on 8 f32 elements on the
CPU, called from Python, including freeing its result; webtensor through {path}, PyTorch
{torch.__version__} eager, NumPy {np.__version__}, in one process, interleaved, best of {rounds} rounds.
A ratio above 1 means webtensor takes longer than the peer. Now `a + b` takes {w / t:.2f}x PyTorch's time.

{chr(10).join(rows)}

Where the time goes in `a + b`: CPython dispatches the operator to the extension's method
descriptor (no Python frame); two cgo crossings, into wt_op and into wt_tensor_free when the
result is dropped (the Go runtime switches stacks and thread states each way); and the Go half
in the last row: the handle table, the op lookup, dtype and shape checks, broadcasting, the output
(a Go tensor header and a block of a pooled C slab, C memory so that DLPack can share it) and the
kernel. {split}
What is left against NumPy is mostly that Go half, allocation and garbage collection of the
tensor headers included; {torch_gap}.
Unary ops pay one more Python frame (the generated function); ops with attributes build Go maps
for them and, for reductions, run a generic kernel through float64; a Python scalar operand
becomes a 0-d tensor (two more crossings). Without the extension (WEBTENSOR_CTYPES_ONLY=1, or no
C compiler at install) every call converts its eight ctypes arguments in Python: the ctypes row.
"""


def update_doc(text, doc):
    body = doc.read_text() if doc.exists() else "# Performance\n"
    start = body.find(SECTION)
    if start >= 0:
        nxt = body.find("\n## ", start + len(SECTION))
        body = body[:start] + text + (body[nxt + 1:] if nxt >= 0 else "")
    else:
        anchor = body.find("## WebAssembly plugins")
        body = body[:anchor] + text + "\n" + body[anchor:] if anchor >= 0 else body.rstrip() + "\n\n" + text
    doc.write_text(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-go", action="store_true", help="skip the Go benchmarks of the Go half")
    ap.add_argument("--out", default=str(ROOT / "docs" / "perf.md"), help="the doc whose section to rewrite")
    ap.add_argument("--print-only", action="store_true", help="print the section, leave the doc alone")
    args = ap.parse_args()
    text = section(args.rounds, False if args.no_go else None)
    print(text)
    if not args.print_only:
        update_doc(text, Path(args.out))
        print(f"updated {args.out}")


if __name__ == "__main__":
    main()
