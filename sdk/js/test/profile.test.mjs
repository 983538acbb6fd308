// wt.profile(): the runtime's op-call trace (trace/, wt_profile_*) from Node,
// as Chrome trace JSON.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as wt from "webtensor";

await wt.init();

test("records the ops a function calls, with shapes, as a Chrome trace", async () => {
  const json = await wt.profile(() => {
    wt.tidy(() => wt.tensor(new Float32Array([1, 2, 3, 4]), [2, 2]).exp().sum().dataSync());
  });
  const trace = JSON.parse(json);
  assert.ok(Array.isArray(trace.traceEvents));
  const ops = trace.traceEvents.filter((e) => e.ph === "X");
  const exp = ops.find((e) => e.name === "exp");
  assert.ok(exp, `exp recorded: ${ops.map((e) => e.name)}`);
  assert.deepEqual(exp.args.inputs, ["f32[2 2]"]);
  assert.ok(ops.some((e) => e.name === "sum"));
  assert.ok(trace.otherData.webtensor.devices.length > 0, "the environment travels with the trace");
});

test("a second recording cannot start while one runs", async () => {
  await assert.rejects(
    wt.profile(() => wt.profile(() => {})),
    /a recording is already running/,
  );
});
