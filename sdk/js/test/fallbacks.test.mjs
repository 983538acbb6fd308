// wt.fallbacks(): op calls that ran on the CPU instead of their device, and
// device kernels that did declared host-side work, per device and op.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as wt from "webtensor";
import { openProblem } from "./cases.mjs";

await wt.init();

// goswish has no WGSL, so its op runs on the CPU behind WebGPU. It sits
// beside the test plugin make js-test names, else in the repo's build/.
const GOSWISH = process.env.WEBTENSOR_TEST_PLUGIN
  ? join(dirname(process.env.WEBTENSOR_TEST_PLUGIN), "goswish.wasm")
  : join(fileURLToPath(import.meta.url), "..", "..", "..", "..", "build", "plugins", "goswish.wasm");

test("reset reads, then clears; the CPU has nothing to report", () => {
  wt.fallbacks(true);
  assert.deepEqual(wt.fallbacks(), []);
  wt.tidy(() => wt.tensor(new Float32Array([1, 2])).mul(2).dataSync());
  assert.deepEqual(wt.fallbacks(true), []);
});

test("on WebGPU: a CPU fallback and host work, each named", (t) => {
  const why = openProblem(wt, "webgpu");
  if (why.startsWith("unavailable")) return t.skip(why); // no adapter; an adapter that fails is a failure:
  assert.equal(why, "", `WebGPU: ${why}`);
  if (!existsSync(GOSWISH)) return t.skip(`run \`make plugins\` to build ${GOSWISH}`);
  const swish = wt.loadPlugin(GOSWISH);
  wt.fallbacks(true);
  wt.tidy(() => {
    const x = wt.tensor(new Float32Array([0, 1, 2, 3]), [2, 2], { device: "webgpu" });
    const ids = wt.tensor(new BigInt64Array([1n, 0n]), [2], { device: "webgpu" });
    assert.equal(swish.call("swish", [x])[0].device, "webgpu:0");
    assert.deepEqual([...wt.op1("segment_sum", [x, ids], { num_segments: 2 }).dataSync()], [2, 3, 0, 1]);
    wt.indexSelect(x, ids).dataSync(); // checks its indices on the GPU: no host work
  });
  const fb = wt.fallbacks(true);
  assert.deepEqual(fb.map((f) => `${f.device} ${f.op} ${f.kind} ${f.count}`).sort(),
    ["webgpu:0 goswish.swish cpu 1", "webgpu:0 segment_sum host 1"]);
  assert.match(fb.find((f) => f.kind === "host").reason, /segment_ids/);
  assert.ok(Object.isFrozen(fb[0]));
  assert.deepEqual(wt.fallbacks(), []);
});
