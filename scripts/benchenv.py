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
    batch = {}
    for name, fn in fns.items():
        fn()
        start = time.perf_counter()
        fn()
        batch[name] = max(1, int(min_time / repeats / max(time.perf_counter() - start, 1e-7)))
    runs = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(batch[name]):
                fn()
            runs[name].append((time.perf_counter() - start) / batch[name])
    return {name: statistics.median(r) for name, r in runs.items()}


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


def go_bench(cmd, root=ROOT):
    """Runs the `go test -bench` command cmd in root and returns seconds per op of each benchmark, the median
    of its -count runs; exits with Go's output if it fails."""
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"go benchmarks failed:\n{res.stdout}\n{res.stderr}")
    runs = {}
    for line in res.stdout.splitlines():
        m = GO_BENCH_LINE.match(line)
        if m:
            runs.setdefault(m.group(1), []).append(float(m.group(2)) * 1e-9)
    return {k: statistics.median(v) for k, v in runs.items()}
