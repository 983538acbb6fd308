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
