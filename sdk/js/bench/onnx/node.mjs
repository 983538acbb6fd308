// The ONNX benchmark's Node side: all-MiniLM-L6-v2 through webtensor's Node
// package (the C ABI, libwebtensor.so, through koffi) on its CPU backend
// against onnxruntime-node's CPU execution provider, at the same thread
// count, in one process, with the protocol the page uses (measure.mjs).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compare } from "./measure.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * opts: {modelPath, tokenizerPath, sentences, threads: number[],
 * importReps, warmup, reps}. webtensor is the package built in sdk/js
 * (`make npm`: dist/ and prebuilds/). Resolves to {env, results}, a result
 * per thread count.
 */
export async function runNode(opts) {
  const wt = await import(pathToFileURL(join(here, "..", "..", "dist", "index.js")).href);
  const ort = createRequire(join(here, "x.js"))("onnxruntime-node");
  const ortVersion = JSON.parse(readFileSync(join(here, "node_modules", "onnxruntime-node", "package.json"), "utf8")).version;
  const modelBytes = new Uint8Array(readFileSync(opts.modelPath));
  // The runtime's WordPiece tokenizer with tokenizer.json's padding (fixed, 128).
  const tok = await wt.multimodal.Tokenizer.load(new Uint8Array(readFileSync(opts.tokenizerPath)));
  const enc = tok.encode(opts.sentences, { device: "cpu" });
  tok.dispose();
  const shape = enc.inputIds.shape;
  const wtFeeds = { input_ids: enc.inputIds, attention_mask: enc.attentionMask, token_type_ids: enc.tokenTypeIds };
  const ortFeeds = {};
  for (const [name, t] of Object.entries(wtFeeds)) ortFeeds[name] = new ort.Tensor("int64", await t.data(), shape);

  const results = [];
  for (const threads of opts.threads) {
    wt.setNumThreads(threads);
    const sides = {
      webtensor: {
        // From the bytes in memory, as onnxruntime's create(bytes) below.
        load: () => wt.onnx.load(modelBytes, { device: "cpu" }),
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
            executionProviders: ["cpu"],
            intraOpNumThreads: threads,
            interOpNumThreads: 1,
            graphOptimizationLevel: "all",
          }),
        run: async (s) => (await s.run(ortFeeds)).last_hidden_state.data,
        free: (s) => s.release(),
      },
    };
    const log = (m) => console.log(`node, ${threads} thread${threads === 1 ? "" : "s"}: ${m}`);
    const r = await compare(sides, { importReps: opts.importReps, warmup: opts.warmup, reps: opts.reps, log });
    results.push({ threads, wtThreads: wt.getNumThreads(), ...r });
  }
  wt.dispose(Object.values(wtFeeds));
  return { env: { node: process.version, webtensor: wt.version(), onnxruntimeNode: ortVersion, batch: shape }, results };
}
