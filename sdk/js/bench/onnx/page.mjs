// The ONNX benchmark's page side: all-MiniLM-L6-v2 through webtensor
// (window.wt, the package's browser build) and through onnxruntime-web, in
// one page, on one backend pair: "webgpu" (webtensor's WebGPU backend
// against onnxruntime's WebGPU execution provider) or "cpu" (webtensor's CPU
// path, the Go core compiled to WebAssembly, against onnxruntime's wasm
// execution provider). Both run single-threaded: Go's wasm port has no
// threads, and onnxruntime-web is held to one (numThreads = 1; the page is
// not cross-origin isolated, which its threads would need anyway). run.mjs
// opens a fresh page per pair and calls window.onnxBench.run.

import { compare } from "./measure.mjs";

const fetchBytes = async (url) => {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
};

async function adapterInfo() {
  const a = navigator.gpu ? await navigator.gpu.requestAdapter() : null;
  const i = a?.info ?? {};
  return [i.vendor, i.architecture, i.description].filter(Boolean).join(" / ") || "none";
}

/**
 * opts: {backend: "webgpu" | "cpu", modelUrl, tokenizerUrl, sentences,
 * importReps, warmup, reps}. Resolves to {env, result}.
 */
export async function run(opts) {
  const wt = window.wt;
  const gpu = opts.backend === "webgpu";
  // Each execution provider from the build its users load: the WebGPU
  // bundle for "webgpu", the plain wasm one (no JSEP) for the wasm EP.
  const ort = await import(gpu ? "/ort/ort.webgpu.min.mjs" : "/ort/ort.wasm.min.mjs");
  ort.env.wasm.wasmPaths = "/ort/";
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = "error";
  await wt.init({ device: gpu ? "webgpu" : "cpu" });
  const device = wt.device();
  if (gpu && !device.startsWith("webgpu")) throw new Error(`webtensor is not on WebGPU: ${wt.whyNotWebGPU()}`);

  const [modelBytes, tokBytes] = await Promise.all([fetchBytes(opts.modelUrl), fetchBytes(opts.tokenizerUrl)]);
  // The runtime's WordPiece tokenizer, with tokenizer.json's own padding
  // (fixed, to 128): the batch is (sentences, 128).
  const tok = await wt.multimodal.Tokenizer.load(tokBytes);
  const enc = tok.encode(opts.sentences, { device });
  tok.dispose();
  const shape = enc.inputIds.shape;
  const wtFeeds = { input_ids: enc.inputIds, attention_mask: enc.attentionMask, token_type_ids: enc.tokenTypeIds };
  const ortFeeds = {};
  for (const [name, t] of Object.entries(wtFeeds)) ortFeeds[name] = new ort.Tensor("int64", await t.data(), shape);

  const sides = {
    webtensor: {
      load: () => wt.onnx.load(modelBytes, { device }),
      run: async (m) => {
        const out = await m.run(wtFeeds);
        try {
          return await out.last_hidden_state.data();
        } finally {
          wt.dispose(Object.values(out));
        }
      },
      free: async (m) => m.dispose(),
    },
    onnxruntime: {
      load: () =>
        ort.InferenceSession.create(modelBytes, {
          executionProviders: [gpu ? "webgpu" : "wasm"],
          graphOptimizationLevel: "all",
          logSeverityLevel: 3, // errors only: its note that shape ops run on the CPU is by design
        }),
      // Outputs come back to the CPU (onnxruntime's default location), as webtensor's data() brings them.
      run: async (s) => (await s.run(ortFeeds)).last_hidden_state.data,
      free: (s) => s.release(),
    },
  };
  const log = (m) => console.log(`${opts.backend}: ${m}`);
  const result = await compare(sides, { importReps: opts.importReps, warmup: opts.warmup, reps: opts.reps, log });
  wt.dispose(Object.values(wtFeeds));
  const env = {
    browser: navigator.userAgent.match(/Chrom\S+/)?.[0] ?? navigator.userAgent,
    adapter: await adapterInfo(),
    webtensor: wt.version(),
    webtensorDevice: device,
    onnxruntimeWeb: ort.env.versions?.web ?? "?",
    ortThreads: ort.env.wasm.numThreads,
    crossOriginIsolated: self.crossOriginIsolated,
    // Which of onnxruntime-web's builds the EP loaded (JSEP or asyncify for WebGPU, the plain one for wasm).
    ortFiles: performance.getEntriesByType("resource").map((r) => new URL(r.name).pathname).filter((p) => p.startsWith("/ort/")),
    batch: shape,
  };
  return { env, result };
}

window.onnxBench = { run };
window.pageReady = true;
