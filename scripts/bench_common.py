"""What the benchmark scripts that time a Go benchmark beside a Python library share (test-only; CI never
runs them): one thread count for both sides, and the Go side's medians.

A script beside a package's tests (diffuse/testdata/bench_diffusers.py, for one) imports it from here before
it imports torch, since OpenBLAS and OpenMP read their thread variables once, when they load:

    ROOT = os.path.dirname(os.path.dirname(HERE))
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import bench_common  # noqa: E402

    THREADS = bench_common.pin_threads()
    import torch  # noqa: E402
"""

import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def thread_count():
    """WEBTENSOR_NUM_THREADS if set, else the CPUs this process may use."""
    env = os.environ.get("WEBTENSOR_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pin_threads():
    """Gives the Go benchmarks (WEBTENSOR_NUM_THREADS) and OpenBLAS and OpenMP the same thread count, quiets
    the Vulkan loader's probing (see backends/webgpu), and returns the count."""
    threads = thread_count()
    for var in ("WEBTENSOR_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("NODEVICE_SELECT", "1")
    return threads


def go_bench(cmd, root):
    """Runs the `go test -bench` command cmd in root and returns seconds per op of each benchmark, the median
    of its -count runs; exits with Go's output if it fails."""
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"go benchmarks failed:\n{res.stdout}\n{res.stderr}")
    runs = {}
    for line in res.stdout.splitlines():
        m = LINE.match(line)
        if m:
            runs.setdefault(m.group(1), []).append(float(m.group(2)) * 1e-9)
    return {k: statistics.median(v) for k, v in runs.items()}
