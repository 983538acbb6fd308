"""Reference vectors for multimodal's TimeSformer and its video front end.

Test-only: the Go tests (timesformer_test.go) and the Python SDK's test read
what this writes and never run it. It needs transformers 5.25.0, torch,
numpy, safetensors and Pillow 13.0.0 (the venv of the repository's
reference scripts). Run from this folder:

    python make_timesformer_refs.py

It writes
  timesformer_tiny/            a tiny seeded TimesformerForVideoClassification (divided
                               space-time attention; save_pretrained) and the
                               VideoMAEImageProcessor config a real checkpoint ships
  timesformer_space_only/      a tiny seeded TimesformerModel with attention_type space_only,
                               no q/k/v biases and the tanh GELU
  timesformer_joint/           a tiny seeded TimesformerModel with joint_space_time attention
  timesformer_refs.safetensors inputs and outputs: random pixel values, a seeded uint8
                               video, its sampled frames' pixel values and logits
  timesformer_refs.json        the frame indices transformers' docs and video processors
                               sample, and each case's settings
"""

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import PIL  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402
from transformers.video_utils import VideoMetadata, default_sample_indices_fn  # noqa: E402

assert transformers.__version__ == "5.25.0", transformers.__version__
assert PIL.__version__ == "13.0.0", PIL.__version__

HERE = os.path.dirname(os.path.abspath(__file__))


def randomize(model):
    """Spreads the weights as make_refs.py does (that script pins another
    transformers version, so it is not imported): transformers' init (std
    0.02, LayerNorm 1 and 0, zero time embeddings) makes nearly constant
    activations that would hide a wrong layer or a wrong token order."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g) * 0.1
            p.copy_(1 + noise if "norm" in name and name.endswith("weight") else noise * 2)


def sample_frame_indices(clip_len, frame_sample_rate, seg_len):
    """transformers' TimeSformer and VideoMAE docs' sampler, verbatim: a
    window of clip_len * frame_sample_rate frames ending at a random index
    from numpy's global generator, clip_len indices spread over it."""
    converted_len = int(clip_len * frame_sample_rate)
    end_idx = np.random.randint(converted_len, seg_len)
    start_idx = end_idx - converted_len
    indices = np.linspace(start_idx, end_idx, num=clip_len)
    indices = np.clip(indices, start_idx, end_idx - 1).astype(np.int64)
    return indices


def video(frames, h, w, seed):
    """A uint8 RGB video: gradients that move from frame to frame, a hard
    edge and noise, so resampling, cropping and frame order all show."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    out = []
    for t in range(frames):
        base = np.stack([255 * ((xx + 3 * t) % w) / max(w - 1, 1), 255 * yy / max(h - 1, 1),
                         128 + 8 * t + 0 * xx], -1)
        base[:, : w // 3] = 255 - base[:, : w // 3]
        out.append(np.clip(base + rng.normal(0, 30, base.shape), 0, 255).astype(np.uint8))
    return np.stack(out)


def attention_case(tensors, name, cfg, seed, shape, odd_shape):
    """A tiny TimesformerModel of cfg (another attention type), seeded with
    seed, saved to timesformer_<name>/ and reloaded from it as a user
    would; tensors gets its last hidden state for random pixel values of
    shape and of odd_shape (a size or frame count that is not the
    config's), under name/."""
    torch.manual_seed(seed)
    model = transformers.TimesformerModel(cfg)
    randomize(model)
    out_dir = os.path.join(HERE, "timesformer_" + name)
    model.eval().save_pretrained(out_dir)
    model = transformers.TimesformerModel.from_pretrained(out_dir).eval()
    pixels = torch.randn(*shape)
    odd = torch.randn(*odd_shape)
    with torch.no_grad():
        tensors[name + "/last_hidden_state"] = model(pixel_values=pixels).last_hidden_state.numpy()
        tensors[name + "/odd_last_hidden_state"] = model(pixel_values=odd).last_hidden_state.numpy()
    tensors[name + "/pixel_values"] = pixels.numpy()
    tensors[name + "/odd_pixel_values"] = odd.numpy()


def main():
    tensors, meta = {}, {}
    torch.manual_seed(0)

    # The divided space-time classifier the issue names.
    cfg = transformers.TimesformerConfig(image_size=32, patch_size=8, num_frames=4, hidden_size=32,
                                         num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                         num_labels=5)
    model = transformers.TimesformerForVideoClassification(cfg)
    randomize(model)
    out_dir = os.path.join(HERE, "timesformer_tiny")
    model.eval().save_pretrained(out_dir)
    proc = transformers.VideoMAEImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32},
                                                  image_mean=[0.45, 0.45, 0.45], image_std=[0.225, 0.225, 0.225])
    proc.save_pretrained(out_dir)
    # The references come from the files, as a user would load them.
    model = transformers.TimesformerForVideoClassification.from_pretrained(out_dir).eval()
    pixels = torch.randn(2, 4, 3, 32, 32)
    # A shorter frame than the config's: the spatial position embeddings
    # are interpolated (nearest) to the 3x4 patch grid.
    short = torch.randn(1, 4, 3, 24, 32)
    with torch.no_grad():
        out = model(pixel_values=pixels, output_hidden_states=True)
        base = model.timesformer(pixel_values=pixels, output_hidden_states=True)
        short_out = model.timesformer(pixel_values=short)
    tensors["tiny/pixel_values"] = pixels.numpy()
    tensors["tiny/logits"] = out.logits.numpy()
    tensors["tiny/last_hidden_state"] = base.last_hidden_state.numpy()
    tensors["tiny/hidden_states_0"] = base.hidden_states[0].numpy()
    tensors["tiny/hidden_states_1"] = base.hidden_states[1].numpy()
    tensors["tiny/short_pixel_values"] = short.numpy()
    tensors["tiny/short_last_hidden_state"] = short_out.last_hidden_state.numpy()

    # The video front end: a 16-frame uint8 clip of another size, frames
    # sampled as the docs do after np.random.seed(0), then the processor
    # (resize the shortest edge to 32, centre crop, rescale, normalise) and
    # the model.
    clip = video(16, 30, 41, 3)
    np.random.seed(0)
    idx = sample_frame_indices(clip_len=4, frame_sample_rate=2, seg_len=len(clip))
    frames = clip[idx]
    px = proc(list(frames), return_tensors="np")["pixel_values"]
    with torch.no_grad():
        logits = model(pixel_values=torch.from_numpy(px)).logits
    tensors["video/frames"] = clip
    tensors["video/pixel_values"] = px.astype(np.float32)
    tensors["video/logits"] = logits.numpy()
    meta["video"] = {"seed": 0, "clip_len": 4, "frame_sample_rate": 2, "indices": idx.tolist()}
    # A batch of two videos of different sizes (every frame is cropped to
    # the same 32x32).
    other = video(4, 50, 33, 4)
    px2 = proc([list(frames), list(other)], return_tensors="np")["pixel_values"]
    tensors["video/other_frames"] = other
    tensors["video/batch_pixel_values"] = px2.astype(np.float32)

    # The docs' sampler for other seeds and sizes, one call after each seed
    # and three in a row after the last.
    cases = []
    for seed, clip_len, rate, seg_len in [(0, 8, 1, 300), (1, 8, 4, 300), (42, 16, 2, 40), (7, 4, 3, 13),
                                          (2**32 - 1, 5, 1, 6)]:
        np.random.seed(seed)
        cases.append({"seed": seed, "clip_len": clip_len, "frame_sample_rate": rate, "seg_len": seg_len,
                      "indices": sample_frame_indices(clip_len, rate, seg_len).tolist()})
    np.random.seed(5)
    cases.append({"seed": 5, "clip_len": 6, "frame_sample_rate": 3, "seg_len": 100, "calls": [
        sample_frame_indices(6, 3, 100).tolist() for _ in range(3)]})
    meta["sample_frame_indices"] = cases
    # The video processors' uniform sampler (default_sample_indices_fn):
    # num_frames over the clip, or fps frames per second of it.
    uniform = []
    for total, n, fps, video_fps in [(300, 8, None, None), (16, 4, None, None), (10, 7, None, None),
                                     (5, 5, None, None), (300, None, 2, 30.0), (47, None, 1.5, 24.0),
                                     (3, None, 1, 30.0)]:
        md = VideoMetadata(total_num_frames=total, fps=video_fps)
        got = default_sample_indices_fn(md, num_frames=n, fps=fps)
        uniform.append({"total": total, "num_frames": n, "fps": fps, "video_fps": video_fps,
                        "indices": got.tolist()})
    meta["uniform"] = uniform

    # space_only: every frame its own sequence (B*T of them, the time
    # embeddings absent), no q/k/v biases, the tanh GELU; run at the
    # config's size and at 40x24 (the position embeddings interpolated to
    # a 5x3 grid), with a frame count that is not the config's.
    cfg = transformers.TimesformerConfig(image_size=32, patch_size=8, num_frames=3, hidden_size=24,
                                         num_hidden_layers=2, num_attention_heads=2, intermediate_size=40,
                                         attention_type="space_only", qkv_bias=False, hidden_act="gelu_new",
                                         layer_norm_eps=1e-12)
    attention_case(tensors, "space_only", cfg, 1, (2, 3, 3, 32, 32), (1, 2, 3, 40, 24))

    # joint_space_time: one attention over every patch of every frame; run
    # at the config's size and with 3 frames of 24x40 (the time embeddings
    # resized from 4 frames, the positions to a 3x5 grid).
    cfg = transformers.TimesformerConfig(image_size=32, patch_size=8, num_frames=4, hidden_size=16,
                                         num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                                         attention_type="joint_space_time")
    attention_case(tensors, "joint", cfg, 2, (2, 4, 3, 32, 32), (1, 3, 3, 24, 40))

    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()},
              os.path.join(HERE, "timesformer_refs.safetensors"))
    with open(os.path.join(HERE, "timesformer_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
