// wt.multimodal's speech calls from Node: SpeechT5 text-to-speech with its
// HiFi-GAN vocoder and streaming Whisper, through the C ABI, on
// multimodal/testdata's tiny checkpoints against transformers' references.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as wt from "webtensor";
import { MULTIMODAL_TESTDATA as TD } from "./helpers.mjs";

await wt.init();

const json = (name) => JSON.parse(readFileSync(join(TD, name), "utf8"));
const refs = (name) => wt.load(readFileSync(join(TD, name)), "cpu");
const values = async (t) => Array.from(await t.data(), Number);

async function assertRelClose(got, want, what) {
  const g = await values(got);
  const w = await values(want);
  assert.equal(g.length, w.length, what);
  const scale = Math.max(...w.map(Math.abs));
  const bad = g.findIndex((x, i) => !(Math.abs(x - w[i]) <= 1e-4 * scale));
  assert.equal(bad, -1, `${what}[${bad}]: ${g[bad]} vs ${w[bad]}`);
}

test("multimodal: SpeechT5 synthesises as transformers' generate_speech", async () => {
  const meta = json("speecht5_refs.json");
  const r = refs("speecht5_refs.safetensors");
  const c = meta.generate.find((g) => g.name === "batch");
  const tts = await wt.multimodal.SpeechT5.load(join(TD, "speecht5_tiny"), { vocoder: join(TD, "speecht5_hifigan_tiny") });
  assert.equal(tts.samplingRate, 16000);
  const [ids, mask] = tts.tokenize(meta.texts);
  assert.deepEqual(await values(ids), await values(r.get("input_ids")));
  assert.deepEqual(await values(mask), await values(r.get("attention_mask")));
  const out = await tts.generate(meta.texts, r.get("speaker_embeddings"), {
    threshold: c.threshold,
    minLenRatio: c.minlenratio,
    maxLenRatio: c.maxlenratio,
  });
  assert.deepEqual(out.lengths, c.lengths);
  await assertRelClose(out.spectrogram, r.get("batch/spectrogram"), "spectrogram");
  await assertRelClose(out.waveform, r.get("batch/waveform"), "waveform");
  await assertRelClose(await tts.vocode(r.get("vocoder/spectrogram")), r.get("vocoder/waveform"), "vocoder");
  await assert.rejects(tts.generate(ids, r.get("input_ids"), { attentionMask: mask }), /speaker embeddings have shape \[2 24\]/);
  tts.dispose();
});

test("multimodal: WhisperStream commits the greedy transcript", async () => {
  const r = refs("whisper_refs.safetensors");
  const w = await wt.multimodal.Whisper.load(join(TD, "whisper_tiny"));
  const wave = r.get("whisper/wave_1");
  const want = (await values(await w.generate(wave))).filter((id) => id !== 600); // 600: pad and end of text
  const s = new wt.multimodal.WhisperStream(w, { chunkSamples: 4000 });
  const updates = await s.push(wave);
  assert.deepEqual(updates.map((u) => u.chunk), [1, 2, 3, 4]);
  for (const u of updates) assert.deepEqual(u.committed, want.slice(0, u.committed.length));
  assert.ok(updates[1].drafted > 0, "chunk 2 verifies chunk 1's hypothesis in one call");
  const final = await s.flush();
  assert.ok(final.final);
  assert.deepEqual(final.committed, want);
  assert.equal(final.committedText, await w.transcribe(wave));
  assert.ok(final.elapsedMs > 0);
  s.dispose();
  const bounded = new wt.multimodal.WhisperStream(w, { chunkSamples: 4000, tokensPerSecond: 5 });
  const two = await bounded.push(wave);
  assert.deepEqual(two.slice(0, 2).map((u) => u.committed.length + u.tentative.length), [2, 3]);
  bounded.dispose();
  w.dispose();
});
