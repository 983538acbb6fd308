// The ONNX example page (examples/onnx-minilm) in headless Chromium: it
// imports the real all-MiniLM-L6-v2 export with wt.onnx.load(bytes) onto
// WebGPU, embeds sentences and shows their cosine similarities, which must
// be what sentence-transformers gives (onnx/testdata/minilm_similarity.json,
// written by make_minilm_similarity.py from the same weights). The 90 MB
// export is not committed: without build/onnx/all-MiniLM-L6-v2.onnx (`make
// onnx-models`) the test skips, saying so, as onnx's Go real-model test does.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withPage } from "./browser/harness.mjs";
import { MULTIMODAL_TESTDATA, ONNX_TESTDATA, VECTORS } from "./helpers.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// The example: copied next to the tests by make js-test, else the repo's.
const exampleDir = [join(here, "examples", "onnx-minilm"), join(here, "..", "examples", "onnx-minilm")].find((d) => existsSync(d));
// Where `make onnx-models` writes the export ($WEBTENSOR_ONNX_MODELS overrides), found from the vectors' repo.
const onnxDir = process.env.WEBTENSOR_ONNX_MODELS ?? join(VECTORS, "..", "..", "build", "onnx");
const modelFile = join(onnxDir, "all-MiniLM-L6-v2.onnx");
const missing = existsSync(modelFile) ? false : `${modelFile} is missing (\`make onnx-models\` exports it)`;

// sentence-transformers in f32 on the CPU against webtensor in f32 on
// WebGPU or the CPU: sums in other orders moved a cosine by at most 2.4e-7
// on SwiftShader and 4.4e-7 on the CPU backend; a hardware GPU's other
// reduction orders get a margin.
const ATOL = 2e-5;

async function similarities(device, initScript) {
  const want = JSON.parse(readFileSync(join(ONNX_TESTDATA, "minilm_similarity.json"), "utf8"));
  return withPage(
    async ({ page, logs }) => {
      const q = new URLSearchParams({ device, text: want.sentences.join("\n") });
      await page.goto(page.url().replace(/\/test\/browser\/page\.html.*/, `/onnx-minilm/index.html?${q}`));
      await page.waitForFunction(() => window.minilm && (window.minilm.done > 0 || window.minilm.error), null, { timeout: 300_000 });
      const got = await page.evaluate(() => ({
        ...window.minilm,
        note: document.getElementById("note").textContent,
        cells: document.querySelectorAll("#matrix td").length,
      }));
      assert.equal(got.error, "", `the page failed; its console:\n${logs.join("\n")}`);
      return { got, want };
    },
    {
      initScript,
      extraRoots: {
        "/onnx-minilm/": exampleDir,
        "/models/onnx/": onnxDir,
        "/models/minilm-tokenizer/": join(MULTIMODAL_TESTDATA, "minilm_tokenizer"),
      },
    },
  );
}

function checkMatrix(got, want) {
  assert.deepEqual(got.sentences, want.sentences);
  const n = want.sentences.length;
  assert.equal(got.cells, n * n, "the matrix is shown");
  let worst = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const d = Math.abs(got.similarity[i][j] - want.similarity[i][j]);
      worst = Math.max(worst, d);
      assert.ok(d <= ATOL, `similarity[${i}][${j}]: ${got.similarity[i][j]}, sentence-transformers ${want.similarity[i][j]}`);
    }
  }
  return worst;
}

test("onnx example page: MiniLM on WebGPU gives sentence-transformers' similarities", { skip: missing }, async (t) => {
  const { got, want } = await similarities("webgpu");
  assert.equal(got.device, "webgpu:0", `WebGPU was expected; the page's note: ${got.note}`);
  assert.match(got.note, /software one/, "headless Chromium's only adapter here is SwiftShader, and the page says so");
  const worst = checkMatrix(got, want);
  t.diagnostic(`webgpu: max |ours - sentence-transformers| ${worst.toExponential(2)}; import ${got.ms.import.toFixed(0)} ms, run ${got.ms.run.toFixed(0)} ms`);
});

test("onnx example page: without WebGPU it runs on the CPU and says why", { skip: missing }, async (t) => {
  const hide = () => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
  const { got, want } = await similarities("webgpu", hide);
  assert.equal(got.device, "cpu");
  assert.match(got.note, /No WebGPU here \(.+\): the work runs on the CPU backend/);
  const worst = checkMatrix(got, want);
  t.diagnostic(`cpu: max |ours - sentence-transformers| ${worst.toExponential(2)}; import ${got.ms.import.toFixed(0)} ms, run ${got.ms.run.toFixed(0)} ms`);
});
