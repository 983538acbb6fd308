// The Node SDK's conformance runner: every case of every vector file through
// the public API (cases.mjs, shared with the browser page) on one device,
// graded with index.json's tolerances, written in the schema of
// conformance/index.go Result.
//
//   node conformance-runner.mjs --device cpu --out build/conformance/node-cpu.json
//
// Runs from the installed package (make js-conformance puts it next to
// node_modules/webtensor). Node has no nn library yet, so no training or
// checkpoint columns: ops and the random-stream identity only.

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as wt from "webtensor";
import { conformance } from "./cases.mjs";
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
writeFileSync(out, JSON.stringify(result, null, 2));
const failed = Object.entries(result.ops).filter(([, r]) => r.status === "fail");
console.log(`${out}: ${Object.keys(result.ops).length} ops, ${failed.length} failing`);
