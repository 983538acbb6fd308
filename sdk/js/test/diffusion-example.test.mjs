// The diffusion example page (examples/diffusion) in headless Chromium: it
// fetches a zip of diffuse/testdata/ddpm_pipe (built here from the
// committed folder), loads it with wt.diffuse.Pipeline.load(bytes) and
// samples with a fixed seed on WebGPU and, with navigator.gpu hidden, on
// the CPU backend. The images must be the Go library's for that seed
// (diffuse/testdata/sdk_pipeline.json, which abi/diffuse_test.go checks
// against package diffuse), every step must be reported, and the canvas
// must show them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withPage } from "./browser/harness.mjs";
import { DIFFUSE_TESTDATA } from "./helpers.mjs";
import { zipFolder } from "./zip.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// The example: copied next to the tests by make js-test, else the repo's.
const exampleDir = [join(here, "examples", "diffusion"), join(here, "..", "examples", "diffusion")].find((d) => existsSync(d));
const refs = JSON.parse(readFileSync(join(DIFFUSE_TESTDATA, "sdk_pipeline.json"), "utf8"));

// The library's images came from the native CPU backend. The browser's CPU
// backend (WebAssembly) and SwiftShader's WebGPU round sums in other orders;
// DDPM's clamps and its step from 1000 down to a few amplify an ulp into
// ~1e-6 of an image in [0, 1] on the CPU, and GPU reductions more, as the
// Python SDK's WebGPU test allows (1e-4).
const TOL = { cpu: 1e-5, webgpu: 1e-4 };

async function samplePage(run, initScript) {
  const models = mkdtempSync(join(tmpdir(), "wt-diffusion-"));
  try {
    writeFileSync(join(models, "pipeline.zip"), zipFolder(join(DIFFUSE_TESTDATA, refs.pipeline), "ddpm_pipe/"));
    return await withPage(
      async ({ page, logs }) => {
        const q = new URLSearchParams({ batch: run.batch, steps: run.steps, seed: run.seed });
        if (run.scheduler) q.set("scheduler", run.scheduler);
        await page.goto(page.url().replace(/\/test\/browser\/page\.html.*/, `/diffusion/index.html?${q}`));
        await page.waitForFunction(() => window.diffusion && (window.diffusion.done > 0 || window.diffusion.error), null, { timeout: 120_000 });
        const got = await page.evaluate(() => {
          const c = document.getElementById("images");
          const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
          let lit = 0;
          for (let i = 0; i < px.length; i += 4) if (px[i] !== 0x28 || px[i + 1] !== 0x28 || px[i + 2] !== 0x28) lit++;
          return { ...window.diffusion, note: document.getElementById("note").textContent, canvas: [c.width, c.height], lit,
            progress: [document.getElementById("progress").value, document.getElementById("progress").max] };
        });
        assert.equal(got.error, "", `the page failed; its console:\n${logs.join("\n")}`);
        return got;
      },
      { initScript, extraRoots: { "/diffusion/": exampleDir, "/models/diffusion/": models } },
    );
  } finally {
    rmSync(models, { recursive: true, force: true });
  }
}

function checkImages(got, run, tol) {
  assert.deepEqual(got.shape, run.shape);
  assert.deepEqual(got.steps, Array.from({ length: run.steps }, (_, i) => i + 1), "every step is reported, in order");
  assert.deepEqual(got.progress, [run.steps, run.steps], "the progress bar ends full");
  assert.ok(got.lit > 0.5 * run.shape[0] * (96 * 96), `the canvas shows the images (${got.lit} pixels drawn on ${got.canvas})`);
  let worst = 0;
  run.images.forEach((want, i) => {
    const d = Math.abs(got.images[i] - want);
    worst = Math.max(worst, d);
    assert.ok(d <= tol, `image value ${i}: ${got.images[i]}, the Go library's ${want}`);
  });
  return worst;
}

test("diffusion example page: samples the Go library's images on WebGPU", async (t) => {
  const run = refs.runs[0];
  const got = await samplePage(run);
  assert.equal(got.device, "webgpu:0", `WebGPU was expected; the page's note: ${got.note}`);
  assert.equal(got.info.device, "webgpu:0");
  assert.deepEqual([got.info.pipeline, got.info.scheduler], ["DDPMPipeline", "DDPMScheduler"]);
  assert.match(got.note, /software one/, "headless Chromium's only adapter here is SwiftShader, and the page says so");
  const worst = checkImages(got, run, TOL.webgpu);
  t.diagnostic(`webgpu: max |page - Go library| ${worst.toExponential(2)}; load ${got.ms.load.toFixed(0)} ms, sample ${got.ms.sample.toFixed(0)} ms`);
});

test("diffusion example page: without WebGPU it samples on the CPU and says why", async (t) => {
  const run = refs.runs.find((r) => r.scheduler) ?? refs.runs[0];
  const hide = () => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
  const got = await samplePage(run, hide);
  assert.equal(got.device, "cpu");
  assert.match(got.note, /No WebGPU here \(.+\): the work runs on the CPU backend/);
  const worst = checkImages(got, run, TOL.cpu);
  t.diagnostic(`cpu (${run.scheduler || "the folder's scheduler"}): max |page - Go library| ${worst.toExponential(2)}; sample ${got.ms.sample.toFixed(0)} ms`);
});

// The browser binding's other calls and errors: int8 weights on WebGPU (the
// quantisation reads the weights' ranges from the GPU, so it runs async), a
// path (no file system), a broken archive, a call the pipeline does not
// take, and an exception from onStep, which stops the run.
test("diffuse in the browser: int8 on WebGPU; a path, a broken zip and a throwing onStep reject clearly", async () => {
  const models = mkdtempSync(join(tmpdir(), "wt-diffusion-"));
  try {
    writeFileSync(join(models, "pipeline.zip"), zipFolder(join(DIFFUSE_TESTDATA, refs.pipeline)));
    const got = await withPage(
      async ({ page }) =>
        page.evaluate(async () => {
          const { wt } = window;
          await wt.init({ device: "webgpu" });
          const reason = (p) => p.then(() => "resolved", (e) => `${e.code}: ${e.message}`);
          const bytes = new Uint8Array(await (await fetch("/models/diffusion/pipeline.zip")).arrayBuffer());
          const pipe = await wt.diffuse.Pipeline.load(bytes, { device: "webgpu:0", int8Weights: true });
          const steps = [];
          const out = {
            int8: [pipe.device, pipe.int8Weights, pipe.weightBytes],
            path: await reason(wt.diffuse.Pipeline.load("ddpm_pipe")),
            truncated: await reason(wt.diffuse.Pipeline.load(bytes.subarray(0, bytes.length >> 1))),
            text: await reason(pipe.generateText("a cat", { steps: 1 })),
            thrown: await reason(pipe.generate({ steps: 3, onStep: (s) => { steps.push(s); if (s === 2) throw new Error("stop here"); } })),
          };
          out.steps = steps;
          pipe.dispose();
          out.live = wt.liveTensors();
          return out;
        }),
      { extraRoots: { "/models/diffusion/": models } },
    );
    assert.deepEqual(got.int8.slice(0, 2), ["webgpu:0", true]);
    assert.ok(got.int8[2] < 709708 / 3.5, `int8 weights take ${got.int8[2]} bytes, about a quarter of f32's 709708`);
    assert.match(got.path, /the browser has no file system: diffuse\.Pipeline\.load\(\) takes a zip archive's bytes/);
    assert.match(got.truncated, /^WT_ERR_INVALID: diffusion.load: zip archive: not a zip archive, or a truncated one/);
    assert.match(got.text, /a DDPMPipeline takes no prompts: use diffusion.generate/);
    assert.match(got.thrown, /stopped by its progress callback after step 2 of 3: onStep threw at step 2: .*stop here/);
    assert.deepEqual(got.steps, [1, 2]);
    assert.equal(got.live, 0, "no tensor left behind");
  } finally {
    rmSync(models, { recursive: true, force: true });
  }
});
