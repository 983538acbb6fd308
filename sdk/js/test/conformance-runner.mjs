// The Node SDK's conformance runner: every case of every vector file through
// the public API (cases.mjs, shared with the browser page) on one device,
// graded with index.json's tolerances, written in the schema of
// conformance/index.go Result.
//
//   node conformance-runner.mjs --device cpu --out build/conformance/node-cpu.json
//
// Runs from the installed package (make js-conformance puts it next to
// node_modules/webtensor). Besides the ops and the random streams it runs
// the cross-SDK training check, saves its checkpoint next to the result and
// loads every other column's checkpoint found there.

import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as wt from "webtensor";
import { conformance, countFallbacks, loadsCheckpoint, trainMLP } from "./cases.mjs";
import { VECTORS } from "./helpers.mjs";

const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : def;
};
const device = arg("--device", "cpu");
const out = arg("--out");
if (!out) {
  console.error("usage: node conformance-runner.mjs --device cpu|webgpu --out FILE");
  process.exit(2);
}

await wt.init();
const index = JSON.parse(readFileSync(join(VECTORS, "index.json"), "utf8"));
const result = await conformance(wt, index, {
  sdk: "node",
  device,
  detail: `webtensor ${wt.version()} (Node package), Node ${process.versions.node}`,
  load: async (file) => new Uint8Array(readFileSync(join(VECTORS, file))),
  digest: async (bytes) => createHash("sha256").update(bytes).digest("hex"),
});
mkdirSync(dirname(out), { recursive: true });
if (!result.detail.startsWith("unavailable")) {
  const ckpt = out.replace(/\.json$/, ".ckpt.safetensors");
  try {
    const { losses, checkpoint } = await trainMLP(wt, device);
    writeFileSync(ckpt, checkpoint);
    result.training = losses;
    result.checkpoint = ckpt;
  } catch (e) {
    result.checkpoint = `error: ${e.name}: ${e.message}`;
  }
  result.loads_checkpoints = {};
  for (const f of readdirSync(dirname(out)).filter((f) => f.endsWith(".ckpt.safetensors")).sort()) {
    const other = join(dirname(out), f);
    if (other === ckpt) continue;
    result.loads_checkpoints[f.replace(/\.ckpt\.safetensors$/, "")] = loadsCheckpoint(wt, new Uint8Array(readFileSync(other)));
  }
  // Counted since conformance() reset them: the cases, streams and training.
  result.fallbacks = countFallbacks(wt);
}
writeFileSync(out, JSON.stringify(result, null, 2));
const failed = Object.entries(result.ops).filter(([, r]) => r.status === "fail");
console.log(`${out}: ${Object.keys(result.ops).length} ops, ${failed.length} failing`);
