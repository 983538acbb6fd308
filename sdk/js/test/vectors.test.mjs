// Every case of every op's reference vectors (conformance/vectors) through
// the public API, on the CPU (cases.mjs has the machinery).

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as wt from "webtensor";
import { VECTORS } from "./helpers.mjs";
import { index, readSafetensors, runCase } from "./vectors.mjs";

for (const [op, entry] of Object.entries(index.ops)) {
  test(`vectors: ${op}`, async () => {
    const { meta, tensors } = readSafetensors(join(VECTORS, entry.file));
    const start = wt.liveTensors();
    for (const c of JSON.parse(meta.cases)) {
      try {
        await runCase(op, c, tensors, entry.tol_scale);
      } catch (e) {
        e.message = `${op} case ${c.name}: ${e.message}`;
        throw e;
      }
    }
    assert.equal(wt.liveTensors(), start, "every tensor of the cases is freed");
  });
}
