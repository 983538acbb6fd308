// The Node SDK's conformance runner: every case of every vector file through
// the public API (vectors.mjs) on one device, graded with index.json's
// tolerances, written in the schema of conformance/index.go Result.
//
//   node conformance-runner.mjs --device cpu --out build/conformance/node-cpu.json
//
// Runs from the installed package (make js-conformance puts it next to
// node_modules/webtensor). Node has no nn library yet, so no training or
// checkpoint columns: ops and the random-stream identity only.

import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as wt from "webtensor";
import { VECTORS } from "./helpers.mjs";
import { index, readSafetensors, runCase } from "./vectors.mjs";

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

/** False when the case needs what the device cannot hold (f64 or wide i64 on WebGPU). */
function holds(c, tensors) {
  if (!device.startsWith("webgpu")) return true;
  for (const [key, t] of Object.entries(tensors)) {
    if (!key.startsWith(`${c.name}/`) || !(key.includes("/in") || key.includes("/out"))) continue;
    if (t.dtype === "f64") return false;
    if (t.dtype === "i64" && t.values.some((v) => v < -(2 ** 31) || v > 2 ** 31 - 1)) return false;
  }
  return true;
}

function identity() {
  const cases = {
    rand_seed7: () => wt.op1("rand", [], { shape: [64], seed: 7, device }),
    randint_seed7: () => wt.op1("randint", [], { shape: [64], seed: 7, low: -5, high: 50, device }),
    bernoulli_seed3: () => wt.op1("bernoulli", [wt.full({ shape: [64], value: 0.3, device })], { seed: 3 }),
  };
  const res = {};
  for (const [name, make] of Object.entries(cases)) {
    try {
      const a = wt.tidy(() => make().to("cpu").dataSync());
      res[name] = createHash("sha256").update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)).digest("hex");
    } catch (e) {
      res[name] = `error: ${e.message}`;
    }
  }
  return res;
}

const kind = device.split(":")[0];
const result = { sdk: "node", backend: kind, ops: {},
  detail: `webtensor ${wt.version()} (Node package), Node ${process.versions.node}` };
if (!wt.devices().some((d) => d.split(":")[0] === kind)) {
  result.detail = `unavailable: no ${kind} device here`;
} else {
  for (const [op, entry] of Object.entries(index.ops).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { meta, tensors } = readSafetensors(join(VECTORS, entry.file));
    const r = { status: "pass", cases: 0, worst: 0 };
    for (const c of JSON.parse(meta.cases)) {
      if (!holds(c, tensors)) {
        r.skipped = (r.skipped ?? 0) + 1;
        continue;
      }
      r.cases++;
      try {
        const w = wt.tidy(() => runCase(op, c, tensors, entry.tol_scale, device));
        r.worst = Math.max(r.worst, w);
      } catch (e) {
        // a failing case is a result, not a crash
        if (r.status === "pass") Object.assign(r, { status: "fail", detail: `case ${c.name}: ${e.message}` });
      }
    }
    if (r.cases === 0) Object.assign(r, { status: "n/a", detail: `every case needs a dtype ${device} cannot hold` });
    if (!Number.isFinite(r.worst)) r.worst = 1e308;
    result.ops[op] = r;
  }
  result.identity = identity();
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(result, null, 2));
const failed = Object.entries(result.ops).filter(([, r]) => r.status === "fail");
console.log(`${out}: ${Object.keys(result.ops).length} ops, ${failed.length} failing`);
