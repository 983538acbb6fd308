// The benchmark's page side: webtensor (window.wt) against TensorFlow.js
// (window.tf) on the WebGPU backend of both (the CPU path's rows, against
// TF.js's wasm and cpu backends, are cpu.mjs's). One protocol drives both libraries, alternating them rep by
// rep so a busy machine slows both alike:
//   pipelined: n ops (or training steps) queued back to back, then one
//     readback of the last result with `await data()`; time / n.
//   single: one op and the readback of its result; the latency of a lone call.
//   dispatch: the JavaScript time spent issuing the ops of a pipelined rep
//     (before the readback), per op; what each call costs before the GPU.
// Warm-up first (kernels compiled, buffers pooled), medians of the reps.
// Both libraries get the same inputs (one seeded generator), and the results
// are compared so a fast wrong answer cannot pass.

const wt = () => window.wt;
const tf = () => window.tf;

/** Seeded standard normal numbers (mulberry32 and Box-Muller), scaled. */
export function normals(count, seed, scale = 1) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = scale * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  }
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const maxAbs = (a) => a.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

/** Whether two libraries' first and last results agree (f32 sums in different orders: 1e-3 relative). */
function agreement(firstA, firstB, lastA, lastB) {
  const diff = Math.max(maxAbsDiff(firstA, firstB), maxAbsDiff(lastA, lastB));
  const scale = Math.max(1, maxAbs(firstB), maxAbs(lastB));
  const check = { maxAbsDiff: diff, maxAbs: scale, agree: diff <= 1e-3 * scale };
  if (lastA.length === 1) check.last = [lastA[0], lastB[0]];
  return check;
}

async function result(c) {
  const t = c.run();
  const v = Float32Array.from(await c.read(t));
  c.free(t);
  return v;
}

// ---- the two libraries, behind one shape: {run(): tensor, read, free, close} ----

export function wtMatmul(n, device) {
  const opts = device ? { device } : {};
  const a = wt().tensor(normals(n * n, 1), [n, n], opts);
  const b = wt().tensor(normals(n * n, 2), [n, n], opts);
  return {
    run: () => wt().matmul(a, b),
    read: (t) => t.data(),
    free: (t) => t.dispose(),
    close: () => wt().dispose([a, b]),
  };
}

export function tfMatmul(n) {
  const a = tf().tensor2d(normals(n * n, 1), [n, n]);
  const b = tf().tensor2d(normals(n * n, 2), [n, n]);
  return {
    run: () => tf().matMul(a, b),
    read: (t) => t.data(),
    free: (t) => t.dispose(),
    close: () => tf().dispose([a, b]),
  };
}

/**
 * An MLP's data and initial parameters, the same for every library: x
 * [batch, in], one-hot y [batch, out], and w, b per layer (He-initialised
 * weights, zero biases) for hiddenLayers layers of width hidden: w1, b1, w2,
 * b2 for one (this page's), w1 ... b3 for two (cpu.mjs's).
 */
export function mlpInit({ batch, inputs, hidden, outputs }, hiddenLayers = 1) {
  const y = new Float32Array(batch * outputs);
  for (let i = 0; i < batch; i++) y[i * outputs + ((i * 7) % outputs)] = 1;
  const widths = [inputs, ...Array(hiddenLayers).fill(hidden), outputs];
  const params = widths.slice(1).flatMap((fanOut, l) => {
    const fanIn = widths[l];
    return [
      [normals(fanIn * fanOut, 4 + l, Math.sqrt(2 / fanIn)), [fanIn, fanOut]],
      [new Float32Array(fanOut), [fanOut]],
    ];
  });
  return { x: [normals(batch * inputs, 3), [batch, inputs]], y: [y, [batch, outputs]], params };
}

/**
 * One SGD step of relu(x w1 + b1) w2 + b2 under softmax cross entropy (mean
 * over the batch), as a webtensor user writes it: backward() into the
 * leaves' grads, new parameters made under noGrad; run() returns the loss.
 */
function wtTrain(cfg, device) {
  const W = wt();
  const opts = device ? { device } : {};
  const init = mlpInit(cfg);
  const x = W.tensor(...init.x, opts);
  const y = W.tensor(...init.y, opts);
  let params = init.params.map(([d, s]) => {
    const t = W.tensor(d, s, opts);
    t.requiresGrad = true;
    return t;
  });
  return {
    run() {
      const [loss, ...next] = W.tidy(() => {
        const [w1, b1, w2, b2] = params;
        const h = W.relu(W.add(W.matmul(x, w1), b1));
        const l = W.crossEntropy(W.add(W.matmul(h, w2), b2), y);
        l.backward();
        return [l, ...W.noGrad(() => params.map((p) => p.sub(p.grad.mul(cfg.lr))))];
      });
      W.dispose(params);
      for (const p of next) p.requiresGrad = true;
      params = next;
      return loss;
    },
    read: (t) => t.data(),
    free: (t) => t.dispose(),
    close: () => W.dispose([x, y, params]),
  };
}

/** The same step as a TensorFlow.js user writes it: variables and tf.train.sgd's minimize. */
function tfTrain(cfg) {
  const T = tf();
  const init = mlpInit(cfg);
  const x = T.tensor(...init.x);
  const y = T.tensor(...init.y);
  const vars = init.params.map(([d, s]) => T.variable(T.tensor(d, s)));
  const opt = T.train.sgd(cfg.lr);
  const loss = () => {
    const [w1, b1, w2, b2] = vars;
    const h = T.relu(T.add(T.matMul(x, w1), b1));
    return T.losses.softmaxCrossEntropy(y, T.add(T.matMul(h, w2), b2));
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

// ---- the protocol --------------------------------------------------------------------

async function single(c) {
  const t0 = performance.now();
  const t = c.run();
  const t1 = performance.now();
  await c.read(t);
  const t2 = performance.now();
  c.free(t);
  return { ms: t2 - t0, dispatch: t1 - t0 };
}

async function pipelined(c, n) {
  const t0 = performance.now();
  let last = null;
  for (let i = 0; i < n; i++) {
    const t = c.run();
    if (last) c.free(last);
    last = t;
  }
  const t1 = performance.now();
  await c.read(last);
  const t2 = performance.now();
  c.free(last);
  return { ms: (t2 - t0) / n, dispatch: (t1 - t0) / n };
}

/**
 * Times the cases {webtensor, tfjs} (each {run, read, free, close}) with the
 * protocol above; n is chosen from the warm-up so one pipelined rep takes
 * about repMs, the same n for both.
 */
export async function compare(name, cases, { reps, warmup, repMs, maxN }) {
  const libs = Object.keys(cases);
  const first = {};
  let slowest = 0;
  for (const lib of libs) {
    first[lib] = await result(cases[lib]);
    for (let i = 1; i < warmup; i++) slowest = Math.max(slowest, (await single(cases[lib])).ms);
  }
  const n = Math.max(3, Math.min(maxN, Math.round(repMs / Math.max(slowest, 1e-3))));
  const samples = Object.fromEntries(libs.map((l) => [l, { ms: [], dispatch: [], single: [], singleDispatch: [] }]));
  for (let r = 0; r < reps; r++) {
    for (const lib of libs) {
      const p = await pipelined(cases[lib], n);
      const s = await single(cases[lib]);
      const x = samples[lib];
      x.ms.push(p.ms);
      x.dispatch.push(p.dispatch);
      x.single.push(s.ms);
      x.singleDispatch.push(s.dispatch);
    }
  }
  // Both ran the same number of steps, so the last results (a training
  // step's loss after every update so far) must agree too.
  const last = {};
  for (const lib of libs) last[lib] = await result(cases[lib]);
  for (const lib of libs) cases[lib].close();
  const [a, b] = libs;
  const check = agreement(first[a], first[b], last[a], last[b]);
  const out = { case: name, n, reps, ...check };
  for (const lib of libs) {
    out[lib] = Object.fromEntries(Object.entries(samples[lib]).map(([k, v]) => [k, median(v)]));
  }
  out.ratio = out.tfjs.ms / out.webtensor.ms; // peer time / ours, pipelined: above 1, webtensor is faster
  console.log(`${name}: n=${n} webtensor ${out.webtensor.ms.toFixed(2)} ms, tfjs ${out.tfjs.ms.toFixed(2)} ms`);
  return out;
}

export async function adapterInfo() {
  const a = navigator.gpu ? await navigator.gpu.requestAdapter() : null;
  const i = a?.info ?? {};
  return [i.vendor, i.architecture, i.description].filter(Boolean).join(" / ") || "unknown";
}

/**
 * Runs the WebGPU cases; opts: {sizes, mlp: {batch, inputs, hidden, outputs,
 * lr}, reps, warmup, repMs, maxN}. Resolves to {env, results}. The CPU
 * path's rows are cpu.mjs's.
 */
export async function run(opts) {
  const W = wt();
  const T = tf();
  await W.init({ device: "webgpu" });
  if (W.device() !== "webgpu:0") throw new Error(`webtensor is not on WebGPU: ${W.whyNotWebGPU()}`);
  await T.setBackend("webgpu");
  await T.ready();
  if (T.getBackend() !== "webgpu") throw new Error(`TensorFlow.js is on ${T.getBackend()}, not webgpu`);
  const env = {
    webtensor: W.version(),
    webtensorDevice: W.device(),
    tfjs: T.version.tfjs,
    tfjsBackend: T.getBackend(),
    browser: navigator.userAgent.match(/Chrom\S+/)?.[0] ?? navigator.userAgent,
    adapter: await adapterInfo(),
    cores: navigator.hardwareConcurrency,
  };
  const p = { reps: opts.reps, warmup: opts.warmup, repMs: opts.repMs, maxN: opts.maxN };
  const results = [];
  for (const n of opts.sizes) {
    results.push({ device: "webgpu", ...(await compare(`matmul ${n}`, { webtensor: wtMatmul(n), tfjs: tfMatmul(n) }, p)) });
  }
  const m = opts.mlp;
  const mlpName = `MLP step ${m.inputs}-${m.hidden}-${m.outputs}, batch ${m.batch}`;
  results.push({ device: "webgpu", ...(await compare(mlpName, { webtensor: wtTrain(m), tfjs: tfTrain(m) }, p)) });
  return { env, results };
}
