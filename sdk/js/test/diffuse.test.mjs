// wt.diffuse from Node: the runtime's diffusion pipelines through the C ABI,
// repeating the runs of diffuse/testdata/sdk_pipeline.json, whose images the
// Go library itself gave (abi/diffuse_test.go writes and checks it).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as wt from "webtensor";
import { DIFFUSE_TESTDATA as TD } from "./helpers.mjs";

await wt.init();

const refs = JSON.parse(readFileSync(join(TD, "sdk_pipeline.json"), "utf8"));

test("diffuse: generate gives the library's images for a seed", async () => {
  const live = wt.liveTensors();
  const pipe = await wt.diffuse.Pipeline.load(join(TD, refs.pipeline), { device: "cpu" });
  assert.deepEqual([pipe.pipeline, pipe.scheduler, pipe.imageShape, pipe.classConditional], ["DDPMPipeline", "DDPMScheduler", [3, 16, 16], false]);
  for (const run of refs.runs) {
    const img = await pipe.generate({ batch: run.batch, steps: run.steps, seed: run.seed, scheduler: run.scheduler || undefined });
    assert.deepEqual(img.shape, run.shape);
    const got = await img.data();
    const bad = run.images.findIndex((v, i) => !(Math.abs(got[i] - v) <= 1e-6));
    assert.equal(bad, -1, `image value ${bad}: ${got[bad]} vs ${run.images[bad]}`);
    img.dispose();
  }
  await assert.rejects(pipe.generate({ steps: 2, scheduler: "FancyScheduler" }), /FancyScheduler/);
  await assert.rejects(pipe.generateClasses([1], { steps: 2 }), /takes no class labels/);
  pipe.dispose();
  assert.equal(wt.liveTensors(), live, "every tensor freed");
  await assert.rejects(wt.diffuse.Pipeline.load(join(TD, "unet2d_tiny")), /model_index\.json/);
});

test("diffuse: int8 weights stay within 38 dB PSNR of the f32 images", async () => {
  const f32 = await wt.diffuse.Pipeline.load(join(TD, refs.pipeline), { device: "cpu" });
  const pipe = await wt.diffuse.Pipeline.load(join(TD, refs.pipeline), { device: "cpu", int8Weights: true });
  assert.ok(pipe.int8Weights && !f32.int8Weights);
  assert.ok(pipe.weightBytes < f32.weightBytes / 3.5, `${pipe.weightBytes} vs ${f32.weightBytes} bytes`);
  const run = refs.runs[0];
  const img = await pipe.generate({ batch: run.batch, steps: run.steps, seed: run.seed });
  const got = await img.data();
  const mse = run.images.reduce((s, v, i) => s + (got[i] - v) ** 2, 0) / run.images.length;
  assert.ok(mse > 0 && 10 * Math.log10(1 / mse) >= 38, `PSNR ${10 * Math.log10(1 / mse)} dB`);
  img.dispose();
  pipe.dispose();
  f32.dispose();
});
