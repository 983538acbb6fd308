"""What the side-by-side benchmarks against a Python peer share (diffuse/testdata/bench_diffusers.py,
multimodal/testdata/bench_timesformer.py and bench_multimodal.py): one thread count for both sides,
interleaved timing, and writing a section of docs/perf.md.

Import it before torch: setup_threads() sets the thread variables torch (OpenMP, OpenBLAS) and webtensor
read when they load. The scripts live beside their testdata and find this folder from the repository root:

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import benchenv
    THREADS = benchenv.setup_threads()
"""

import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_BENCH_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def thread_count():
    """WEBTENSOR_NUM_THREADS if set, else the CPUs this process may use."""
    env = os.environ.get("WEBTENSOR_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def setup_threads():
    """Gives webtensor, OpenMP and OpenBLAS the same thread count, before any of them loads (so before torch
    is imported), and keeps the Vulkan loader quiet; returns the count. The caller passes it to
    torch.set_num_threads too, since torch's intra-op pool may have been sized already."""
    threads = thread_count()
    for var in ("WEBTENSOR_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("NODEVICE_SELECT", "1")
    return threads


def timed(fn, repeats=3, min_time=2.0):
    """Seconds per call: two warm-up calls, a batch of about min_time/repeats, the median of repeats."""
    return interleaved({"fn": fn}, repeats, min_time)["fn"]


def interleaved(fns, repeats=5, min_time=2.0):
    """Seconds per call of each fn: two warm-up calls, a batch size per fn of about min_time/repeats, then
    rounds in which the fns take turns (so a shared machine's changing load falls on all of them); the
    median of the rounds."""
    batch = calibrate(fns, repeats, min_time)
    runs = {name: [] for name in fns}
    for _ in range(repeats):
        peer_round(fns, batch, runs)
    return {name: statistics.median(r) for name, r in runs.items()}


def calibrate(fns, repeats, min_time):
    """Two warm-up calls of each fn; returns how many calls of each make a round of about min_time/repeats."""
    batch = {}
    for name, fn in fns.items():
        fn()
        start = time.perf_counter()
        fn()
        batch[name] = max(1, int(min_time / repeats / max(time.perf_counter() - start, 1e-7)))
    return batch


def peer_round(fns, batch, runs):
    """One round: each fn's batch in turn, its seconds per call appended to runs[name]."""
    for name, fn in fns.items():
        start = time.perf_counter()
        for _ in range(batch[name]):
            fn()
        runs[name].append((time.perf_counter() - start) / batch[name])


def go_test_binary(pkg, out_dir, root=ROOT):
    """Builds the Go package pkg's test binary (go test -c) into out_dir once, so that rounds do not build
    or link again; returns its path. Run it in the package's folder, where its testdata is."""
    path = os.path.join(out_dir, os.path.basename(pkg.rstrip("/")) + ".test")
    run_or_exit(["go", "test", "-c", "-o", path, pkg], root, "go test -c")
    return path


def run_or_exit(cmd, root, what):
    """Runs cmd in root, echoing it, and returns its stdout; exits with its output if it fails."""
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"{what} failed:\n{res.stdout}\n{res.stderr}")
    return res.stdout


def alternating(go_cmd, go_dir, fns, rounds, min_time=2.0):
    """The Go benchmarks and the peer's fns taking turns: each round one run of go_cmd (a test binary's
    -test.bench command, run in go_dir, given -test.count 2: the second pass is timed) and then one peer
    round. A shared machine's load drifts over the minutes a run takes; timed in turns it falls on both
    sides alike, where timing all of one side and then all of the other put a drift between them into the
    ratio. Returns the two sides' medians over the rounds (seconds per op or call, by name)."""
    batch = calibrate(fns, rounds, min_time)
    go_runs, peer_runs = {}, {name: [] for name in fns}
    for _ in range(rounds):
        # Each round is a new process: its first pass over the benchmarks warms it (the CPU allocator's free
        # lists, the heap), as the peer's process is warm from its calibration, and the second is timed.
        for name, sec in go_bench(go_cmd + ["-test.count", "2"], root=go_dir, pick=lambda runs: runs[-1]).items():
            go_runs.setdefault(name, []).append(sec)
        peer_round(fns, batch, peer_runs)
    med = statistics.median
    return {k: med(v) for k, v in go_runs.items()}, {k: med(v) for k, v in peer_runs.items()}


def cpu_model():
    """The CPU's model name and core count ("AMD EPYC, 2 cores"): ratios measured on one CPU do not carry over
    to another, and the same machine kind is not always the same CPU."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores"


def commit():
    """The repository's commit (with -dirty when the tree has changes), as the rows record it."""
    res = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    return res.stdout.strip() or "unknown"


def write_section(path, title, section):
    """Replaces the section of the Markdown file path headed by title (up to the next "## ") with section,
    which starts with that title, or appends it."""
    text = open(path).read() if os.path.exists(path) else ""
    start = text.find(title)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(title))
        text = text[:start] + section + ("" if end < 0 else text[end:])
    with open(path, "w") as f:
        f.write(text)


def go_bench(cmd, root=ROOT, pick=statistics.median):
    """Runs the `go test -bench` command cmd (or a test binary's -test.bench command) in root and returns
    seconds per op of each benchmark, pick of its -count runs (their median); exits with Go's output if it fails."""
    runs = {}
    for line in run_or_exit(cmd, root, "go benchmarks").splitlines():
        m = GO_BENCH_LINE.match(line)
        if m:
            runs.setdefault(m.group(1), []).append(float(m.group(2)) * 1e-9)
    return {k: pick(v) for k, v in runs.items()}
