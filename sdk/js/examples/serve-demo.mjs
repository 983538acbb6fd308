// Serves the browser examples on 127.0.0.1 (make serve-demo): the package's
// build at /webtensor/, the training demo at /, the ONNX sentence-similarity
// page at /onnx-minilm/ with the files it fetches (the MiniLM export `make
// onnx-models` writes into build/onnx, and its tokenizer.json). PORT picks
// the port (default 8080).

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "../test/browser/serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const port = Number(process.env.PORT ?? 8080);
const onnxDir = join(root, "build", "onnx");
const { url } = await serve(
  {
    "/webtensor/": join(here, ".."),
    "/": join(here, "browser"),
    "/onnx-minilm/": join(here, "onnx-minilm"),
    "/models/onnx/": onnxDir,
    "/models/minilm-tokenizer/": join(root, "multimodal", "testdata", "minilm_tokenizer"),
  },
  port,
);
console.log(`webtensor demo: open ${url}/ in a browser with WebGPU (Chrome, Edge; Firefox or Safari with it on)`);
console.log("it trains on the page's GPU and draws the loss; Ctrl-C stops the server");
console.log(`sentence similarity with all-MiniLM-L6-v2 imported from ONNX: ${url}/onnx-minilm/`);
if (!existsSync(join(onnxDir, "all-MiniLM-L6-v2.onnx"))) {
  console.log("  (its model is missing: `make onnx-models` exports build/onnx/all-MiniLM-L6-v2.onnx)");
}
