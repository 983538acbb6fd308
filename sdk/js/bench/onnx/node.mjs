// The ONNX benchmark's Node side: all-MiniLM-L6-v2 through webtensor's Node
// package (the C ABI, libwebtensor.so, through koffi) on its CPU backend
// against onnxruntime-node's CPU execution provider, at the same thread
// count, in one process, with the protocol the page uses (measure.mjs).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compare, median } from "./measure.mjs";

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
    const waited = { webtensor: [], onnxruntime: [] };
    const settle = async (side) => waited[side].push(await untilIdle());
    const r = await compare(sides, { importReps: opts.importReps, warmup: opts.warmup, reps: opts.reps, log, settle });
    log(`busy after a run or import (the wait before the next, median): ${Object.entries(waited).map(([n, w]) => `${n} ${median(w).toFixed(0)} ms`).join(", ")}`);
    results.push({ threads, wtThreads: wt.getNumThreads(), ...r });
  }
  wt.dispose(Object.values(wtFeeds));
  return { env: { node: process.version, webtensor: wt.version(), onnxruntimeNode: ortVersion, batch: shape }, results };
}

/**
 * Resolves once this process has used under a tenth of a core for 50 ms
 * (at most 5 s on). onnxruntime's intra-op workers spin after a run until
 * their spin budget runs out (session.intra_op.allow_spinning, on by
 * default; about a second on some hosts), and the two sides share this
 * process and its cores: without the wait, the side that ran second had
 * onnxruntime's spinning workers beside it on the cores it was timed on.
 * Waiting lets each side start on an idle machine, as in a process of its
 * own, and leaves both runtimes' settings at their defaults. Resolves to the
 * milliseconds waited.
 */
export async function untilIdle() {
  const t0 = performance.now();
  const windowMs = 50;
  for (;;) {
    const before = process.cpuUsage();
    const w0 = performance.now();
    await new Promise((r) => setTimeout(r, windowMs));
    const used = process.cpuUsage(before);
    const busy = (used.user + used.system) / 1000 / (performance.now() - w0);
    if (busy < 0.1 || performance.now() - t0 > 5000) return performance.now() - t0;
  }
}
