// Where the tests find the reference vectors: $WEBTENSOR_VECTORS (set by
// `make js-test`, whose tests run from a temporary install), else the repo's.
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const VECTORS =
  process.env.WEBTENSOR_VECTORS ?? join(fileURLToPath(import.meta.url), "..", "..", "..", "..", "conformance", "vectors");

// The ONNX test model and its expected outputs (onnx/testdata/make_sdk_model.py), found from the vectors' repo.
export const ONNX_TESTDATA = join(VECTORS, "..", "..", "onnx", "testdata");

// The domain libraries' checkpoints and reference vectors (multimodal/testdata, diffuse/testdata).
export const MULTIMODAL_TESTDATA = join(VECTORS, "..", "..", "multimodal", "testdata");
export const DIFFUSE_TESTDATA = join(VECTORS, "..", "..", "diffuse", "testdata");

// The live tensor count once the FinalizationRegistry has caught up with
// earlier tests' dropped tensors: a test that compares the count before and
// after its own work must not see another test's garbage freed in between.
export async function settledLiveTensors(wt) {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  let last = -1;
  for (let i = 0; i < 50; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
    const now = wt.liveTensors();
    if (now === last) return now;
    last = now;
  }
  return last;
}
