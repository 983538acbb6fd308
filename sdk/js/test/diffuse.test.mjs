// wt.diffuse from Node: the runtime's diffusion pipelines through the C ABI,
// repeating the runs of diffuse/testdata/sdk_pipeline.json, whose images the
// Go library itself gave (abi/diffuse_test.go writes and checks it).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as wt from "webtensor";
import { DIFFUSE_TESTDATA as TD, settledLiveTensors } from "./helpers.mjs";
import { zipEntries, zipFolder } from "./zip.mjs";

await wt.init();

const refs = JSON.parse(readFileSync(join(TD, "sdk_pipeline.json"), "utf8"));

test("diffuse: generate gives the library's images for a seed", async () => {
  const live = await settledLiveTensors(wt);
  const pipe = await wt.diffuse.Pipeline.load(join(TD, refs.pipeline), { device: "cpu" });
  assert.deepEqual([pipe.pipeline, pipe.scheduler, pipe.imageShape, pipe.classConditional], ["DDPMPipeline", "DDPMScheduler", [3, 16, 16], false]);
  for (const run of refs.runs) {
    const img = await pipe.generate({ batch: run.batch, steps: run.steps, seed: run.seed, scheduler: run.scheduler || undefined });
    assert.deepEqual(img.shape, run.shape);
    const got = await img.data();
    const bad = run.images.findIndex((v, i) => !(Math.abs(got[i] - v) <= refs.atol));
    assert.equal(bad, -1, `image value ${bad}: ${got[bad]} vs ${run.images[bad]}`);
    img.dispose();
  }
  await assert.rejects(pipe.generate({ steps: 2, scheduler: "FancyScheduler" }), /FancyScheduler/);
  await assert.rejects(pipe.generateClasses([1], { steps: 2 }), /takes no class labels/);
  pipe.dispose();
  assert.equal(wt.liveTensors(), live, "every tensor freed");
  await assert.rejects(wt.diffuse.Pipeline.load(join(TD, "unet2d_tiny")), /model_index\.json/);
});

// Text to image: diffusers' initial latents (sd_refs.safetensors, diffuse/testdata/make_sd_refs.py)
// give StableDiffusionPipeline's images on the tiny sd_tiny folder; a seed gives the same images twice.
test("diffuse: generateText gives diffusers' images for its latents", async () => {
  const live = await settledLiveTensors(wt);
  const run = JSON.parse(readFileSync(join(TD, "sd_refs.json"), "utf8")).runs.ddim;
  const refs = wt.load(readFileSync(join(TD, "sd_refs.safetensors")));
  const pipe = await wt.diffuse.Pipeline.load(join(TD, "sd_tiny"), { device: "cpu" });
  assert.deepEqual([pipe.pipeline, pipe.imageShape, pipe.textConditional], ["StableDiffusionPipeline", [3, 16, 16], true]);
  const close = async (t, want, tol, what) => {
    const got = await t.data();
    const bad = want.findIndex((v, i) => !(Math.abs(got[i] - v) <= tol));
    assert.equal(bad, -1, `${what} value ${bad}: ${got[bad]} vs ${want[bad]}`);
  };
  const emb = await pipe.encodeText(run.prompts);
  assert.deepEqual(emb.shape, [2, 77, 32]);
  await close(emb, await refs.get("ddim/prompt_embeds").data(), 1e-5, "prompt embeddings");
  const latents = wt.reshape(refs.get("ddim/noise"), { shape: [4, 4, 8, 8] });
  const img = await pipe.generateText(run.prompts, {
    steps: run.steps,
    guidanceScale: run.guidance_scale,
    imagesPerPrompt: run.images_per_prompt,
    latents,
  });
  assert.deepEqual(img.shape, [4, 3, 16, 16]);
  // diffusers' "np" images are (B, H, W, C).
  const hwc = wt.permute(img, { dims: [0, 2, 3, 1] });
  await close(hwc, await refs.get("ddim/images").data(), 1e-4, "images");
  const seeded = async () => {
    const t = await pipe.generateText("a red cube", { negativePrompts: ["blurry"], steps: 2, seed: 5, height: 8, width: 12 });
    const v = await t.data();
    t.dispose();
    return v;
  };
  const a = await seeded();
  assert.equal(a.length, 3 * 8 * 12);
  assert.deepEqual(a, await seeded());
  await assert.rejects(pipe.generateText("a", { negativePrompts: ["x", "y"], steps: 1 }), /2 negative prompts for 1 prompts/);
  await assert.rejects(pipe.generate({ steps: 1 }), /text-conditional: use diffusion.generate_text/);
  wt.dispose([emb, latents, img, hwc, ...refs.values()]);
  pipe.dispose();
  assert.equal(wt.liveTensors(), live, "every tensor freed");
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

// A zip archive of the folder (what a page fetches) gives the same images;
// a broken one rejects naming the problem, and Node has no step callback.
test("diffuse: a zip archive of the folder loads and gives the same images", async () => {
  const live = await settledLiveTensors(wt);
  const pipe = await wt.diffuse.Pipeline.load(zipFolder(join(TD, refs.pipeline), "ddpm_pipe/"), { device: "cpu" });
  assert.deepEqual([pipe.pipeline, pipe.scheduler, pipe.imageShape], ["DDPMPipeline", "DDPMScheduler", [3, 16, 16]]);
  const run = refs.runs[0];
  const img = await pipe.generate({ batch: run.batch, steps: run.steps, seed: run.seed });
  const got = await img.data();
  const bad = run.images.findIndex((v, i) => !(Math.abs(got[i] - v) <= refs.atol));
  assert.equal(bad, -1, `image value ${bad}: ${got[bad]} vs ${run.images[bad]}`);
  img.dispose();
  await assert.rejects(pipe.generate({ steps: 2, onStep: () => {} }), /onStep is browser-only/);
  pipe.dispose();
  assert.equal(wt.liveTensors(), live, "every tensor freed");

  const data = zipFolder(join(TD, refs.pipeline));
  await assert.rejects(wt.diffuse.Pipeline.load(data.subarray(0, data.length >> 1)), (e) => {
    assert.equal(e.code, "WT_ERR_INVALID");
    assert.match(e.message, /diffusion.load: zip archive: not a zip archive, or a truncated one/);
    return true;
  });
  await assert.rejects(wt.diffuse.Pipeline.load(zipEntries([["../model_index.json", new Uint8Array(2)]])), /the path leaves the archive's root/);
  await assert.rejects(wt.diffuse.Pipeline.load(zipFolder(join(TD, refs.pipeline, "unet"))), /no model_index\.json at its root/);
});
