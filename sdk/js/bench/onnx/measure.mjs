// The protocol both halves of the ONNX benchmark share (the page, page.mjs,
// and Node, node.mjs): webtensor and onnxruntime import the same model bytes
// and run it on the same token ids, taking turns so that a busy machine
// slows both alike, and their outputs must agree or the run fails. Plain
// JavaScript, no imports: it runs in the page and in Node.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Whether two last hidden states agree: f32 sums in different orders (and
 * onnxruntime's fused kernels) differ by far less than 1e-3 of the largest
 * value; a wrong result differs by about the values themselves.
 */
export function agreement(a, b) {
  if (a.length !== b.length) return { agree: false, maxAbsDiff: Infinity, maxAbs: 0, why: `lengths ${a.length} and ${b.length}` };
  let diff = 0;
  let scale = 1;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    // NaN fails: it is never <= the bound below.
    diff = d > diff || Number.isNaN(d) ? d : diff;
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return { agree: diff <= 1e-3 * scale, maxAbsDiff: diff, maxAbs: scale };
}

/**
 * Times two sides, each {load(): Promise<model>, run(model):
 * Promise<Float32Array> (the output read back to the host), free(model)}:
 * importReps imports of each (every one but the last freed), warmup runs
 * (the first one timed on its own: kernels compile then), then reps timed
 * runs; the sides take turns and which goes first alternates rep by rep.
 * settle(side), when given, is awaited after every import and run of a
 * side, before the next one starts (node.mjs: until the process is idle
 * again). Resolves to
 * {webtensor, onnxruntime: {importMs, firstMs, ms, runs}, agreement},
 * medians in milliseconds.
 */
export async function compare(sides, { importReps, warmup, reps, log = () => {}, settle = async () => {} }) {
  const names = Object.keys(sides);
  const out = Object.fromEntries(names.map((n) => [n, { imports: [], runs: [] }]));
  const models = {};
  const order = (i) => (i % 2 ? [...names].reverse() : names);
  for (let i = 0; i < importReps; i++) {
    for (const n of order(i)) {
      if (models[n] !== undefined) await sides[n].free(models[n]);
      const t0 = performance.now();
      models[n] = await sides[n].load();
      out[n].imports.push(performance.now() - t0);
      await settle(n);
    }
  }
  log(`imported: ${names.map((n) => `${n} ${median(out[n].imports).toFixed(0)} ms`).join(", ")}`);
  const first = {};
  try {
    for (let i = 0; i < Math.max(1, warmup); i++) {
      for (const n of order(i)) {
        const t0 = performance.now();
        const v = await sides[n].run(models[n]);
        if (i === 0) {
          out[n].firstMs = performance.now() - t0;
          first[n] = v;
        }
        await settle(n);
      }
    }
    log(`first run: ${names.map((n) => `${n} ${out[n].firstMs.toFixed(0)} ms`).join(", ")}`);
    for (let i = 0; i < reps; i++) {
      for (const n of order(i)) {
        const t0 = performance.now();
        await sides[n].run(models[n]);
        out[n].runs.push(performance.now() - t0);
        await settle(n);
      }
      log(`rep ${i + 1}/${reps}: ${names.map((n) => `${n} ${out[n].runs.at(-1).toFixed(0)} ms`).join(", ")}`);
    }
  } finally {
    for (const n of names) await sides[n].free(models[n]);
  }
  for (const n of names) {
    out[n].importMs = median(out[n].imports);
    out[n].ms = median(out[n].runs);
  }
  out.agreement = agreement(first.webtensor, first.onnxruntime);
  return out;
}
