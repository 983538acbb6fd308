// The example's page side: fetch all-MiniLM-L6-v2's ONNX export and its
// tokenizer.json, import the model onto WebGPU, and for the sentences in the
// text box compute sentence-transformers' embeddings (the mean of the last
// hidden state over the real tokens, L2-normalised) and their cosine
// similarities, all with webtensor ops on the model's device. window.minilm
// reports progress and the matrix for the tests (sdk/js/test/onnx-minilm.test.mjs).

import * as wt from "webtensor";

const params = new URLSearchParams(location.search);
const MODEL = params.get("model") ?? "/models/onnx/all-MiniLM-L6-v2.onnx";
const TOKENIZER = params.get("tokenizer") ?? "/models/minilm-tokenizer/tokenizer.json";
// WebGPU unless the page asks for the CPU: init() falls back to the CPU
// backend, and says why, where the browser has no WebGPU.
const DEVICE = params.get("device") === "cpu" ? "cpu" : "webgpu";
const DEFAULT_SENTENCES = [
  "A man is eating food.",
  "A man is eating a piece of bread.",
  "A man is riding a horse.",
  "A man is riding a white horse on an enclosed ground.",
  "A woman is playing violin.",
  "A monkey is playing drums.",
];

const $ = (id) => document.getElementById(id);
const state = (window.minilm = { ready: false, done: 0, error: "", device: "", note: "", sentences: [], similarity: null, ms: {} });

/** The bytes at url; a missing file says how to make it. */
async function fetchBytes(url, what, fix) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${what} not found at ${url} (HTTP ${res.status}): ${fix}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * The sentences' normalised embeddings (n, 384) on the model's device:
 * sentence-transformers' Pooling (mean over tokens whose attention mask is
 * 1) and Normalize modules written as tensor ops. The batch is padded to its
 * longest sentence with [PAD] (id 0), which the mask leaves out of both the
 * attention and the mean.
 */
export async function embed(model, tokenizer, sentences) {
  const enc = tokenizer.encode(sentences, { padId: 0, device: model.device });
  const out = await model.run({ input_ids: enc.inputIds, attention_mask: enc.attentionMask, token_type_ids: enc.tokenTypeIds });
  const hidden = out[model.outputNames[0]];
  try {
    return wt.tidy(() => {
      const mask = wt.unsqueeze(wt.cast(enc.attentionMask, { dtype: "f32" }), { axis: -1 }); // (n, S, 1)
      const summed = wt.sum(wt.mul(hidden, mask), { axes: [1] }); // (n, 384)
      const count = wt.clamp(wt.sum(mask, { axes: [1] }), { min: 1e-9 }); // (n, 1), as sentence-transformers clamps it
      const mean = wt.div(summed, count);
      // F.normalize: x / max(|x|, 1e-12).
      const norm = wt.clamp(wt.sqrt(wt.sum(wt.mul(mean, mean), { axes: [1], keepdim: true })), { min: 1e-12 });
      return wt.div(mean, norm);
    });
  } finally {
    wt.dispose([enc.inputIds, enc.attentionMask, enc.tokenTypeIds, ...Object.values(out)]);
  }
}

/** Cosine similarities (n, n) of normalised embeddings, as nested arrays. */
export async function similarity(emb) {
  const sim = wt.tidy(() => wt.matmul(emb, wt.transpose(emb)));
  try {
    const flat = await sim.data();
    const n = emb.shape[0];
    return Array.from({ length: n }, (_, i) => Array.from(flat.subarray(i * n, (i + 1) * n)));
  } finally {
    sim.dispose();
  }
}

function showMatrix(sentences, sim) {
  const table = $("matrix");
  table.replaceChildren();
  const head = table.insertRow();
  head.appendChild(document.createElement("th"));
  sentences.forEach((_, j) => {
    const th = document.createElement("th");
    th.textContent = String(j + 1);
    head.appendChild(th);
  });
  sentences.forEach((s, i) => {
    const row = table.insertRow();
    const th = document.createElement("th");
    th.className = "row";
    th.textContent = `${i + 1}. ${s}`;
    row.appendChild(th);
    sim[i].forEach((v) => {
      const td = row.insertCell();
      td.textContent = v.toFixed(3);
      // Blue as the similarity rises to 1; white at 0 and below.
      td.style.background = `rgba(30, 100, 220, ${Math.max(0, Math.min(1, v)).toFixed(3)})`;
      if (v > 0.6) td.style.color = "#fff";
    });
  });
}

async function compare(model, tokenizer) {
  const sentences = $("sentences").value.split("\n").map((s) => s.trim()).filter((s) => s);
  if (!sentences.length) {
    $("status").textContent = "type a sentence or more, one a line";
    return;
  }
  $("compare").disabled = true;
  $("status").textContent = `embedding ${sentences.length} sentences on ${model.device}…`;
  const start = performance.now();
  const emb = await embed(model, tokenizer, sentences);
  let sim;
  try {
    sim = await similarity(emb);
  } finally {
    emb.dispose();
  }
  state.ms.run = performance.now() - start;
  showMatrix(sentences, sim);
  $("timings").textContent = `fetch ${state.ms.fetch.toFixed(0)} ms, import ${state.ms.import.toFixed(0)} ms, ` +
    `embeddings and similarities ${state.ms.run.toFixed(0)} ms`;
  $("status").textContent = `all-MiniLM-L6-v2 on ${model.device}: ${sentences.length} sentences compared`;
  Object.assign(state, { sentences, similarity: sim, done: state.done + 1 });
  $("compare").disabled = false;
}

async function main() {
  $("sentences").value = params.get("text") ?? DEFAULT_SENTENCES.join("\n");
  await wt.init({ device: DEVICE });
  state.device = wt.device();
  state.note = wt.deviceNote(DEVICE);
  $("note").textContent = state.note;

  $("status").textContent = "fetching the model and its tokenizer…";
  let start = performance.now();
  const fix = "run `make onnx-models` (it exports build/onnx/all-MiniLM-L6-v2.onnx) and serve with `make serve-demo`";
  const [modelBytes, tokBytes] = await Promise.all([
    fetchBytes(MODEL, "the ONNX model", fix),
    fetchBytes(TOKENIZER, "the tokenizer", "serve multimodal/testdata/minilm_tokenizer (make serve-demo does)"),
  ]);
  state.ms.fetch = performance.now() - start;
  $("status").textContent = `importing ${(modelBytes.length / 1e6).toFixed(0)} MB onto ${state.device}…`;
  start = performance.now();
  const tokenizer = await wt.multimodal.Tokenizer.load(tokBytes);
  const model = await wt.onnx.load(modelBytes, { device: state.device });
  state.ms.import = performance.now() - start;
  state.ready = true;
  $("compare").onclick = () => compare(model, tokenizer).catch(fail);
  await compare(model, tokenizer);
}

function fail(e) {
  state.error = e.message;
  $("status").textContent = `error: ${e.message}`;
  $("compare").disabled = false;
}

main().catch(fail);
