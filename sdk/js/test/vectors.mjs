// Node's access to the reference vectors (conformance/vectors, or
// $WEBTENSOR_VECTORS): the index and files from disk, the machinery from
// cases.mjs, shared with the browser page.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as wt from "webtensor";
import { caseRunner, parseSafetensors } from "./cases.mjs";
import { VECTORS } from "./helpers.mjs";

await wt.init();
export const index = JSON.parse(readFileSync(join(VECTORS, "index.json"), "utf8"));

/** {meta, tensors} of one vector file. */
export function readSafetensors(path) {
  return parseSafetensors(new Uint8Array(readFileSync(path)));
}

/** Runs and grades one case (see cases.mjs); resolves to the worst error ratio. */
export const runCase = caseRunner(wt, index);
