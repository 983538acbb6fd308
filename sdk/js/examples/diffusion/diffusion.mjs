// The example's page side: fetch a zipped diffusers pipeline, load it onto
// WebGPU with wt.diffuse.Pipeline.load(bytes), and sample images with the
// runtime's sampler, showing each step as it finishes (the onStep
// callback) and drawing the images (B, C, H, W) in [0, 1] on a canvas.
// window.diffusion reports progress, the images and the timings for the
// test (sdk/js/test/diffusion-example.test.mjs).

import * as wt from "webtensor";

const params = new URLSearchParams(location.search);
const MODEL = params.get("model") ?? "/models/diffusion/pipeline.zip";
// WebGPU unless the page asks for the CPU: init() falls back to the CPU
// backend, and says why, where the browser has no WebGPU.
const DEVICE = params.get("device") === "cpu" ? "cpu" : "webgpu";
// Each image is drawn at least this many pixels wide, so 16-pixel digits show.
const MIN_SIDE = 96;

const $ = (id) => document.getElementById(id);
const state = (window.diffusion = {
  ready: false, done: 0, error: "", device: "", note: "", info: null,
  steps: [], shape: null, images: null, ms: {},
});

/** The zip's bytes, with the download's progress in the status line. */
async function fetchZip(url) {
  const res = await fetch(url);
  if (!res.ok) {
    throw new Error(`the pipeline archive is not at ${url} (HTTP ${res.status}): serve one with \`make serve-demo\`, or point ?model= at a zip of a diffusers pipeline folder`);
  }
  const total = Number(res.headers.get("content-length")) || 0;
  const parts = [];
  let got = 0;
  for (const reader = res.body.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    $("status").textContent = `fetching the pipeline: ${(got / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ""} MB…`;
  }
  const bytes = new Uint8Array(got);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return bytes;
}

/** Draws images (B, C, H, W) in [0, 1], C = 1 (grey) or 3 (RGB), in a grid scaled to whole pixels. */
function draw(values, [b, c, h, w]) {
  const canvas = $("images");
  const cols = Math.ceil(Math.sqrt(b));
  const rows = Math.ceil(b / cols);
  const zoom = Math.max(1, Math.ceil(MIN_SIDE / Math.max(h, w)));
  const gap = 4;
  canvas.width = cols * (w * zoom + gap) + gap;
  canvas.height = rows * (h * zoom + gap) + gap;
  const ctx = canvas.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.fillStyle = "#282828";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const tile = document.createElement("canvas");
  tile.width = w;
  tile.height = h;
  const tctx = tile.getContext("2d");
  const px = tctx.createImageData(w, h);
  const plane = h * w;
  for (let k = 0; k < b; k++) {
    const base = k * c * plane;
    for (let i = 0; i < plane; i++) {
      const at = (ch) => Math.round(255 * Math.min(1, Math.max(0, values[base + ch * plane + i])));
      const r = at(0);
      px.data[4 * i] = r;
      px.data[4 * i + 1] = c >= 3 ? at(1) : r;
      px.data[4 * i + 2] = c >= 3 ? at(2) : r;
      px.data[4 * i + 3] = 255;
    }
    tctx.putImageData(px, 0, 0);
    ctx.drawImage(tile, gap + (k % cols) * (w * zoom + gap), gap + Math.floor(k / cols) * (h * zoom + gap), w * zoom, h * zoom);
  }
}

/** The whole-number input's value, within [lo, hi]. */
function intInput(id, lo, hi) {
  const v = Number($(id).value);
  if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`${id} must be a whole number from ${lo} to ${hi}, got ${$(id).value}`);
  return v;
}

async function sample(pipe) {
  const batch = intInput("batch", 1, 64);
  const steps = intInput("steps", 1, 1000);
  const seed = intInput("seed", 0, Number.MAX_SAFE_INTEGER);
  $("sample").disabled = true;
  $("progress").max = steps;
  $("progress").value = 0;
  state.steps = [];
  const start = performance.now();
  const onStep = (step, n) => {
    state.steps.push(step);
    $("progress").max = n;
    $("progress").value = step;
    const ms = (performance.now() - start) / step;
    $("status").textContent = `sampling on ${pipe.device}: step ${step} of ${n} (${ms.toFixed(0)} ms a step)`;
  };
  $("status").textContent = `sampling on ${pipe.device}…`;
  const opts = { steps, seed, scheduler: params.get("scheduler") || undefined, onStep };
  const cond = $("condition").value.trim();
  let img;
  if (pipe.textConditional) {
    img = await pipe.generateText(cond || "a photo", { ...opts, imagesPerPrompt: batch });
  } else if (pipe.classConditional) {
    const labels = cond.split(/[\s,]+/).filter((s) => s).map(Number);
    img = await pipe.generateClasses(labels.length ? labels : [0], opts);
  } else {
    img = await pipe.generate({ ...opts, batch });
  }
  const shape = img.shape;
  let values;
  try {
    values = await img.data();
  } finally {
    img.dispose();
  }
  state.ms.sample = performance.now() - start;
  draw(values, shape);
  $("timings").textContent = `fetch ${state.ms.fetch.toFixed(0)} ms, load ${state.ms.load.toFixed(0)} ms, ` +
    `${state.steps.length} steps and the read ${state.ms.sample.toFixed(0)} ms`;
  $("status").textContent = `${shape[0]} images sampled on ${pipe.device} in ${steps} steps (seed ${seed})`;
  Object.assign(state, { shape, images: Array.from(values), done: state.done + 1 });
  $("sample").disabled = false;
}

async function main() {
  for (const k of ["batch", "steps", "seed"]) if (params.has(k)) $(k).value = params.get(k);
  await wt.init({ device: DEVICE });
  state.device = wt.device();
  state.note = wt.deviceNote(DEVICE);
  $("note").textContent = state.note;

  let start = performance.now();
  const bytes = await fetchZip(MODEL);
  state.ms.fetch = performance.now() - start;
  $("status").textContent = `loading the pipeline (${(bytes.length / 1e6).toFixed(1)} MB zipped) onto ${state.device}…`;
  start = performance.now();
  const pipe = await wt.diffuse.Pipeline.load(bytes, { device: state.device });
  state.ms.load = performance.now() - start;
  state.info = { pipeline: pipe.pipeline, scheduler: pipe.scheduler, imageShape: pipe.imageShape, device: pipe.device };
  $("info").textContent = `${pipe.pipeline} with ${params.get("scheduler") || pipe.scheduler}, images ` +
    `${pipe.imageShape.join("×")} (channels×height×width), ${(pipe.weightBytes / 1e6).toFixed(1)} MB of weights on ${pipe.device}`;
  if (pipe.textConditional || pipe.classConditional) {
    $("condition-label").hidden = false;
    $("condition-what").textContent = pipe.textConditional ? "prompt" : "class labels";
    $("condition").value = params.get(pipe.textConditional ? "prompt" : "labels") ?? (pipe.textConditional ? "a photo of a cat" : "207 360 387");
  }
  state.ready = true;
  $("sample").onclick = () => sample(pipe).catch(fail);
  await sample(pipe);
}

function fail(e) {
  state.error = e.message;
  $("status").textContent = `error: ${e.message}`;
  $("sample").disabled = false;
}

main().catch(fail);
