// The browser's conformance columns: every reference case through the
// package's browser build in headless Chromium on one device, the random
// streams, the training check (its checkpoint saved next to the result) and
// loading every other column's checkpoint found there.
//
//   node browser/conformance.mjs --device webgpu --out build/conformance/browser-webgpu.json
//
// WebGPU is expected: when the page ends up on the CPU the column fails
// instead of passing for the wrong backend.

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { browserConformance, withPage } from "./harness.mjs";

const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : def;
};
const device = arg("--device", "webgpu");
const out = arg("--out");
if (!out) {
  console.error("usage: node browser/conformance.mjs --device webgpu|cpu --out FILE");
  process.exit(2);
}
mkdirSync(dirname(out), { recursive: true });
const ckpt = out.replace(/\.json$/, ".ckpt.safetensors");
const others = readdirSync(dirname(out))
  .filter((f) => f.endsWith(".ckpt.safetensors") && join(dirname(out), f) !== ckpt)
  .sort()
  .map((f) => [f.replace(/\.ckpt\.safetensors$/, ""), [...readFileSync(join(dirname(out), f))]]);

const result = await withPage(async ({ page }) => {
  const r = await browserConformance(page, device, { device: device === "cpu" ? "cpu" : "webgpu" });
  if (device.startsWith("webgpu") && !/runtime device webgpu/.test(r.detail)) {
    for (const op of Object.keys(r.ops)) r.ops[op] = { status: "fail", cases: 0, worst: 0, detail: "WebGPU was expected, the page fell back to the CPU" };
    return r;
  }
  const extra = await page.evaluate(
    async ({ device, others }) => {
      const { wt, cases } = window;
      const res = { loads: {} };
      try {
        const { losses, checkpoint } = await cases.trainMLP(wt, device);
        Object.assign(res, { losses, checkpoint: [...checkpoint] });
      } catch (e) {
        res.error = `${e.name}: ${e.message}`;
      }
      for (const [name, bytes] of others) res.loads[name] = cases.loadsCheckpoint(wt, new Uint8Array(bytes));
      return res;
    },
    { device, others },
  );
  if (extra.error) r.checkpoint = `error: ${extra.error}`;
  else {
    writeFileSync(ckpt, new Uint8Array(extra.checkpoint));
    r.training = extra.losses;
    r.checkpoint = ckpt;
  }
  r.loads_checkpoints = extra.loads;
  return r;
});
writeFileSync(out, JSON.stringify(result, null, 2));
const failed = Object.entries(result.ops).filter(([, r]) => r.status === "fail");
console.log(`${out}: ${Object.keys(result.ops).length} ops, ${failed.length} failing`);
