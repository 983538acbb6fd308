"""A few of `make bench`'s CPU cases, webtensor and its peers taking turns
round by round, and optionally their rows of docs/perf.md's first table.

`make bench` runs every Go benchmark first and the peers after, so on a
machine other people share the load can differ between the two halves. Here
each round runs, case by case, one `go test -bench` of the case (a test
binary built once) and then the peers' calls for about as long, so both
sides see the same machine; the ratio is taken per round and its median is
reported beside the medians of the times. The Python cases (the MLP step
from Python, `a + b`) time the webtensor SDK in this process: --sdk puts a
private install first on sys.path (for example one made with
`pip install --no-deps --target build/pysdk sdk/python`), so the shared
virtual environment is left alone.

    scripts/bench_cases.py Sum SumAll                 # print only
    scripts/bench_cases.py --update Sum SumAll        # and rewrite those rows of docs/perf.md
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK = None  # --sdk: the webtensor package's folder, first on the path (also of small_add's child)
GO_TEST = ROOT / "build" / "bench.test"


def go_pattern(case):
    """The -test.bench pattern of a Go case: Elementwise/add is a sub-benchmark."""
    return "/".join(f"^{p}$" for p in ("Benchmark" + case).split("/"))


def go_time(case, benchtime, binary=GO_TEST):
    """Seconds per call of the Go benchmark of case, one run of binary."""
    cmd = [str(binary), "-test.run", "^$", "-test.bench", go_pattern(case), "-test.benchtime", benchtime,
           "-test.count", "1"]
    res = subprocess.run(cmd, cwd=ROOT / "bench", capture_output=True, text=True, check=False)
    for line in res.stdout.splitlines():
        m = bench.LINE.match(line)
        if m and m.group(1) == case:
            return float(m.group(2)) * 1e-9
    sys.exit(f"{case}: no result from the Go benchmark:\n{res.stdout}\n{res.stderr}")


def calibrate(fn, seconds):
    """Calls per batch so that a batch of fn takes about seconds."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(seconds / max(time.perf_counter() - start, 1e-7)))


def timed(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def loadavg():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def small_add():
    """Seconds per `a + b` on 8 floats of each side, timed as the per-op
    overhead section times it (bench_overhead.py): in a fresh process. Timed
    here, after the large cases' work, webtensor's small op read up to 1.7x
    slower and PyTorch's up to 1.2x (neither when run alone), so the rows
    would measure what the earlier cases left behind."""
    code = ("import json, sys; sys.path[:0] = json.loads(sys.argv[1]); import bench_overhead as b; "
            "env = b.setup(); stmts = next(c[1:] for c in b.CASES if c[0] == 'a + b'); "
            "print(json.dumps([best for best, _ in b.best_of(list(stmts), env, 3)]))")
    paths = [str(ROOT / "scripts")] + ([str(Path(SDK).resolve())] if SDK else [])
    res = subprocess.run([sys.executable, "-c", code, json.dumps(paths)], capture_output=True, text=True, check=True)
    return dict(zip(("webtensor", "torch", "numpy"), json.loads(res.stdout.strip().splitlines()[-1]), strict=True))


def measure(cases, rounds, benchtime, seconds, base=None):
    """{case: {side: [seconds per call, one per round]}}; side "go" is the
    Go benchmark, "base" the same benchmark of another build (base, a test
    binary of ./bench, when given), the others peer_fns' (and
    bench_overhead's for AddSmall)."""
    fns, _ = bench.peer_fns()
    batches = {}
    for case in cases:
        if case != "AddSmall":
            batches[case] = {side: calibrate(fn, seconds) for side, fn in fns[case].items()}
    runs = {case: {} for case in cases}
    for r in range(rounds):
        for case in cases:
            if case == "AddSmall":
                for side, best in small_add().items():
                    runs[case].setdefault(side, []).append(best)
                continue
            if "webtensor" not in fns[case]:
                runs[case].setdefault("go", []).append(go_time(case, benchtime))
                if base:
                    runs[case].setdefault("base", []).append(go_time(case, benchtime, base))
            for side, fn in fns[case].items():
                runs[case].setdefault(side, []).append(timed(fn, batches[case][side]))
        print(f"round {r + 1}/{rounds} done (load average {loadavg()})", flush=True)
    return runs


def ours_of(case_runs):
    return case_runs.get("webtensor") or case_runs["go"]


def report(runs):
    """Prints each case's median times and per-round ratios (peer / ours)."""
    for case, sides in runs.items():
        ours = ours_of(sides)
        parts = [f"ours {statistics.median(ours) * 1e6:.1f} µs (best {min(ours) * 1e6:.1f})"]
        for peer in ("torch", "numpy", "base"):
            if peer in sides:
                ratios = [p / o for p, o in zip(sides[peer], ours, strict=True)]
                parts.append(f"{peer} {statistics.median(sides[peer]) * 1e6:.1f} µs, ratio median "
                             f"{statistics.median(ratios):.3f} (rounds {min(ratios):.3f}..{max(ratios):.3f}, "
                             f"best/best {min(sides[peer]) / min(ours):.3f})")
        print(f"{case}: " + "; ".join(parts))


MARK = " †"


def stamp():
    """bench.stamp(), but '+dirty' only for changes to tracked files (an
    untracked link such as a worktree's .venv is not a change to the code)."""
    date, commit = bench.stamp()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True, check=False).stdout.strip()
    return date, commit.removesuffix("+dirty") + ("+dirty" if dirty else "")


def threads_note():
    """How the rows' thread count differs from the table's, if it does."""
    if os.environ.get("WEBTENSOR_NUM_THREADS", "").strip():
        return (f" with {bench.THREADS} thread{'s' if bench.THREADS > 1 else ''} on every side "
                f"(WEBTENSOR_NUM_THREADS; the unmarked rows have the thread count above)")
    return ""


def update_doc(runs, doc, rounds, benchtime, load):
    """Rewrites the rows of the measured cases in doc's first table (marked
    †) and the note under the table that says when they were measured.
    Each side's figure is its best round: on a shared machine a round's
    time is the op's plus whatever the other jobs took, and PyTorch's
    OpenMP threads, which spin, lose the most to them (medians of 10x its
    quiet time were seen), so medians would rank the load, not the code."""
    go, ref = {}, {}
    for case, sides in runs.items():
        if "go" in sides:
            go[case] = min(sides["go"])
        ref[case] = {s: min(v) for s, v in sides.items() if s not in ("go", "base")}
    rows = {line.split(" | ")[0]: line for line in bench.cpu_rows(go, ref)[2:]}
    labels = {label for case, label, *_ in bench.CASES if case in runs}
    date, commit = stamp()
    lines = doc.read_text().split("\n")
    top = next(i for i, line in enumerate(lines) if line.startswith("| case | unit |"))
    end = top
    while end + 1 < len(lines) and lines[end + 1].startswith("|"):
        end += 1
    for i in range(top + 2, end + 1):
        # A row may carry another run's mark (‡: measured with other
        # settings, its own note below); this run's figures replace it.
        key = lines[i].split(" | ")[0].removesuffix(MARK).removesuffix(" ‡")
        if key in rows and key.removeprefix("| ") in labels:
            cells = rows[key].split(" | ")
            cells[0] += MARK
            lines[i] = " | ".join(cells)
    import benchenv  # scripts/, which the entry point puts on sys.path

    note = (f"{MARK.strip()} Re-measured on {date} at commit {commit} on {benchenv.cpu_model()} by "
            f"`scripts/bench_cases.py --update "
            f"{' '.join(runs)}`{threads_note()}: each of {rounds} rounds runs the Go benchmark once "
            f"(-benchtime {benchtime}) and then the peers for about as long; each side's best round (not the "
            f"median: the machine was shared with other jobs, load average {load} when it began, and PyTorch's "
            f"spinning OpenMP threads lose most to them).")
    # The table, a blank line, the note (replacing an earlier one), a blank line.
    if end + 2 < len(lines) and lines[end + 2].startswith(MARK.strip()):
        del lines[end + 1:end + 3]
    lines[end + 1:end + 1] = ["", note]
    doc.write_text("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", help="case names of scripts/bench.py's CASES (Sum, Elementwise/add, ...)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--benchtime", default="1s", help="go test -benchtime of each Go run")
    ap.add_argument("--sdk", help="a folder holding the webtensor package to time (before sys.path)")
    ap.add_argument("--no-build", action="store_true", help="use build/bench.test as it is")
    ap.add_argument("--base", help="a test binary of ./bench built from another commit, timed in the same rounds "
                                   "(its ratio is its time over this tree's)")
    ap.add_argument("--update", action="store_true", help="rewrite these cases' rows of docs/perf.md")
    ap.add_argument("--out", default=str(ROOT / "docs" / "perf.md"))
    args = ap.parse_args()
    known = {c[0] for c in bench.CASES}
    for c in args.cases:
        if c not in known:
            sys.exit(f"unknown case {c!r}; known: {', '.join(sorted(known))}")
    if not args.no_build:
        subprocess.run(["go", "test", "-c", "-o", str(GO_TEST), "./bench"], cwd=ROOT, check=True)
    load = loadavg()
    seconds = float(args.benchtime.removesuffix("s")) if args.benchtime.endswith("s") else 1.0
    runs = measure(args.cases, args.rounds, args.benchtime, seconds, args.base)
    report(runs)
    if args.update:
        update_doc(runs, Path(args.out), args.rounds, args.benchtime, load)
        print(f"updated {args.out}")


if __name__ == "__main__":
    _sdk = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--sdk=")), None)
    if _sdk is None and "--sdk" in sys.argv:
        _sdk = sys.argv[sys.argv.index("--sdk") + 1]
    if _sdk:
        sys.path.insert(0, str(Path(_sdk).resolve()))
    SDK = _sdk
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench  # noqa: E402  (sets the thread counts before NumPy and PyTorch load)
    main()
