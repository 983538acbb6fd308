// The benchmark's CPU-path rows: webtensor's CPU backend (the Go core
// compiled to WebAssembly, one thread: Go's wasm port has no threads) against
// TF.js's `wasm` backend (XNNPACK, its SIMD build, one thread) and its `cpu`
// backend (plain JavaScript). The wasm rows are what a page without a GPU
// gets from each library, and what wt.init() measures against SwiftShader.
// Same protocol as bench.mjs (compare): webtensor and one TF.js backend
// alternate rep by rep, and their results must agree.

import { adapterInfo, compare, mlpInit, tfMatmul, wtMatmul } from "./bench.mjs";

const wt = () => window.wt;
const tf = () => window.tf;

/** One Adam step of the MLP on webtensor's CPU backend, as the package's demo writes it; run() returns the loss. */
function wtTrainAdam(cfg) {
  const W = wt();
  const init = mlpInit(cfg, 2); // two hidden layers
  const x = W.tensor(...init.x, { device: "cpu" });
  const y = W.tensor(...init.y, { device: "cpu" });
  const params = init.params.map(([d, s]) => W.tensor(d, s, { device: "cpu", requiresGrad: true }));
  const opt = new W.optim.Adam(params, { lr: cfg.lr });
  const forward = () => {
    const [w1, b1, w2, b2, w3, b3] = params;
    const h1 = W.relu(W.add(W.matmul(x, w1), b1));
    const h2 = W.relu(W.add(W.matmul(h1, w2), b2));
    return W.crossEntropy(W.add(W.matmul(h2, w3), b3), y);
  };
  return {
    run() {
      opt.zeroGrad();
      const loss = W.tidy(forward);
      loss.backward();
      opt.step();
      return loss;
    },
    read: (t) => t.data(),
    free: (t) => t.dispose(),
    close: () => {
      W.dispose([x, y, ...params]);
      opt.dispose();
    },
  };
}

/** The same step in TF.js: variables and tf.train.adam's minimize, with torch's epsilon (TF.js defaults to 1e-7). */
function tfTrainAdam(cfg) {
  const T = tf();
  const init = mlpInit(cfg, 2); // two hidden layers
  const x = T.tensor(...init.x);
  const y = T.tensor(...init.y);
  const vars = init.params.map(([d, s]) => T.variable(T.tensor(d, s)));
  const opt = T.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
  const loss = () => {
    const [w1, b1, w2, b2, w3, b3] = vars;
    const h1 = T.relu(T.add(T.matMul(x, w1), b1));
    const h2 = T.relu(T.add(T.matMul(h1, w2), b2));
    return T.losses.softmaxCrossEntropy(y, T.add(T.matMul(h2, w3), b3));
  };
  return {
    run: () => opt.minimize(loss, true, vars),
    read: (t) => t.data(),
    free: (t) => t.dispose(),
    close: () => {
      T.dispose([x, y, ...vars]);
      opt.dispose();
    },
  };
}

/**
 * Switches TF.js to backend ("wasm" or "cpu"). The wasm backend's files come
 * from wasmPaths (this page's server, from node_modules: nothing is fetched
 * from elsewhere) and it gets one thread: the page is not cross-origin
 * isolated, so TF.js picks its SIMD build without threads anyway, and
 * setThreadsCount(1) says so explicitly.
 */
async function useTF(backend, wasmPaths) {
  const T = tf();
  if (backend === "wasm") {
    T.wasm.setWasmPaths(wasmPaths);
    T.wasm.setThreadsCount(1);
  }
  if (!(await T.setBackend(backend))) throw new Error(`TensorFlow.js could not start its ${backend} backend`);
  await T.ready();
  if (T.getBackend() !== backend) throw new Error(`TensorFlow.js is on ${T.getBackend()}, not ${backend}`);
}

/**
 * Runs the CPU-path rows; opts: {sizes, mlp: {batch, inputs, hidden, outputs,
 * lr}, peers: TF.js backends, wasmPaths, reps, warmup, repMs, maxN}.
 * Resolves to {env, results}; each result names its peer.
 */
export async function run(opts) {
  const W = wt();
  const T = tf();
  await W.init({ device: "webgpu" }); // the rows name their device; the page's default does not matter
  const p = { reps: opts.reps, warmup: opts.warmup, repMs: opts.repMs, maxN: opts.maxN };
  const env = {
    webtensor: W.version(),
    tfjs: T.version.tfjs,
    browser: navigator.userAgent.match(/Chrom\S+/)?.[0] ?? navigator.userAgent,
    adapter: await adapterInfo(),
    cores: navigator.hardwareConcurrency,
  };
  const results = [];
  const m = opts.mlp;
  const mlpName = `MLP Adam step ${m.inputs}-${m.hidden}-${m.hidden}-${m.outputs}, batch ${m.batch}`;
  for (const peer of opts.peers) {
    await useTF(peer, opts.wasmPaths);
    if (peer === "wasm") {
      env.tfjsWasm = {
        simd: T.env().getBool("WASM_HAS_SIMD_SUPPORT"),
        multithreadSupport: T.env().getBool("WASM_HAS_MULTITHREAD_SUPPORT"),
        threads: T.wasm.getThreadsCount(),
        crossOriginIsolated: globalThis.crossOriginIsolated === true,
      };
    }
    const row = (r) => ({ device: "cpu", peer: `tfjs-${peer}`, ...r });
    for (const n of opts.sizes) {
      results.push(row(await compare(`matmul ${n}`, { webtensor: wtMatmul(n, "cpu"), tfjs: tfMatmul(n) }, p)));
    }
    results.push(row(await compare(mlpName, { webtensor: wtTrainAdam(m), tfjs: tfTrainAdam(m) }, p)));
  }
  return { env, results };
}
