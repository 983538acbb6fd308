"""multimodal's TimeSformer benchmark beside transformers on the same CPU, in one run (test-only; CI never
runs this).

Run from the repository root with the project's Python (PyTorch, transformers 5):

    python multimodal/testdata/bench_timesformer.py [--rounds 5] [--webgpu]

Each round runs `go test -bench BenchmarkTimesformerForward` once, then times the same work in
transformers in this process: a TimesformerForVideoClassification of testdata/bench_timesformer.json
(seeded transformers initialisation; the timing does not depend on the weights) on one video of 8 frames
under torch.no_grad, two warm-up calls and then the median of repeats. The rounds alternate the two sides
so that a shared machine's changing load falls on both; the ratio reported is the median of the rounds'
ratios. Both sides use the same thread count (WEBTENSOR_NUM_THREADS if set, else the CPUs this process
may use). It prints milliseconds per forward and the ratio transformers' time / webtensor's (above 1:
webtensor is faster).
"""

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import benchenv  # noqa: E402

THREADS = benchenv.setup_threads()
os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
import transformers  # noqa: E402

torch.set_num_threads(THREADS)



def go_bench(count, webgpu):
    pattern = "TimesformerForward" if webgpu else "TimesformerForward/cpu"
    cmd = ["go", "test", "-run", "^$", "-bench", pattern, "-benchtime", "1s", "-count", str(count), "./multimodal/"]
    return benchenv.go_bench(cmd)


def torch_forward():
    with open(os.path.join(HERE, "bench_timesformer.json")) as f:
        cfg = transformers.TimesformerConfig(**{k: v for k, v in json.load(f).items() if k != "model_type"})
    torch.manual_seed(1)
    model = transformers.TimesformerForVideoClassification(cfg).eval()
    x = torch.randn((1, cfg.num_frames, cfg.num_channels, cfg.image_size, cfg.image_size),
                    generator=torch.Generator().manual_seed(2))

    def forward():
        with torch.no_grad():
            model(pixel_values=x)

    return forward


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5, help="rounds of one Go run and one transformers timing")
    ap.add_argument("--webgpu", action="store_true", help="also run the Go benchmark on WebGPU (no peer)")
    args = ap.parse_args()
    forward = torch_forward()
    rows = []
    for _ in range(args.rounds):
        go = go_bench(1, args.webgpu)
        rows.append((go, benchenv.timed(forward)))
    print(f"\nthreads {THREADS}; PyTorch {torch.__version__}, transformers {transformers.__version__}\n")
    print("| round | case | webtensor ms | transformers ms | transformers time / ours |")
    print("|---|---|---|---|---|")
    ratios = []
    for i, (go, peer) in enumerate(rows):
        for name in sorted(go):
            ours = go[name]
            ref = peer if name.endswith("/cpu") else None
            if ref:
                ratios.append(ref / ours)
            ratio = f"{ref / ours:.2f}" if ref else "-"
            ref_ms = f"{ref * 1e3:.2f}" if ref else "-"
            print(f"| {i} | {name} | {ours * 1e3:.2f} | {ref_ms} | {ratio} |")
    print(f"\nmedian ratio transformers / webtensor (cpu): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
