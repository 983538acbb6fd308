// The reference-vector machinery every JavaScript runner shares - Node's
// tests, the Node conformance runner and the browser page - so it imports
// nothing from Node: parsing safetensors from bytes, making (strided) inputs,
// running a case through the public API (wt.tensor, wt.op, backward, grad)
// and grading it with the tolerances and rules of conformance/vectors/index.json.
//
// Results are read with `await` (a WebGPU tensor in the browser cannot be
// read synchronously), so a case cannot live in one wt.tidy: it tracks what
// it makes and disposes it at the end.

const ST = { F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", I64: "i64", I32: "i32", U32: "u32",
  I16: "i16", I8: "i8", U8: "u8", BOOL: "bool" };
const SIZE = { f32: 4, f64: 8, f16: 2, bf16: 2, i64: 8, i32: 4, u32: 4, i16: 2, i8: 1, u8: 1, bool: 1 };
const ARRAY = { f32: Float32Array, f64: Float64Array, f16: Uint16Array, bf16: Uint16Array, i64: BigInt64Array,
  i32: Int32Array, u32: Uint32Array, i16: Int16Array, i8: Int8Array, u8: Uint8Array, bool: Uint8Array };

function half(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function fail(msg) {
  throw new Error(msg);
}

/** {meta, tensors: name -> {dtype, shape, bytes (own copy), values (f64)}} from a safetensors file's bytes. */
export function parseSafetensors(raw) {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(raw.subarray(8, 8 + n)));
  const meta = header.__metadata__ ?? {};
  delete header.__metadata__;
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    const dtype = ST[t.dtype];
    const [lo, hi] = t.data_offsets;
    const bytes = raw.slice(8 + n + lo, 8 + n + hi); // a copy, aligned
    const arr = new ARRAY[dtype](bytes.buffer, 0, (hi - lo) / SIZE[dtype]);
    const values = Float64Array.from(arr, (v) =>
      dtype === "f16" ? half(v) : dtype === "bf16" ? new Float32Array(new Uint32Array([v << 16]).buffer)[0] : Number(v));
    tensors[name] = { dtype, shape: t.shape, bytes, values };
  }
  return { meta, tensors };
}

/** False when the case needs what the device cannot hold (f64 or wide i64 on WebGPU). */
export function holds(c, tensors, device) {
  if (!device.startsWith("webgpu")) return true;
  for (const [key, t] of Object.entries(tensors)) {
    if (!key.startsWith(`${c.name}/`) || !(key.includes("/in") || key.includes("/out"))) continue;
    if (t.dtype === "f64") return false;
    if (t.dtype === "i64" && t.values.some((v) => v < -(2 ** 31) || v > 2 ** 31 - 1)) return false;
  }
  return true;
}

function attrValue(v) {
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  if (v === "nan") return NaN;
  return Array.isArray(v) ? v.map(attrValue) : v;
}

/** The runner over one loaded package (wt) and vector index. */
export function caseRunner(wt, index) {
  const specs = new Map(wt.manifest().ops.map((o) => [o.name, o]));

  /** An input tensor; a strided one is a step-2 slice of a base twice as wide in the last dim. */
  function makeInput({ dtype, shape, bytes }, strided, device) {
    if (!strided || shape.length === 0) return wt.tensor(new ARRAY[dtype](bytes.buffer), shape, { dtype, device });
    const size = SIZE[dtype];
    const base = new Uint8Array(bytes.length * 2);
    for (let i = 0; i < bytes.length / size; i++) base.set(bytes.subarray(i * size, (i + 1) * size), 2 * i * size);
    const baseShape = [...shape.slice(0, -1), 2 * shape[shape.length - 1]];
    const b = wt.tensor(new ARRAY[dtype](base.buffer), baseShape, { dtype, device });
    const v = wt.op1("slice", [b], { axis: -1, step: 2 });
    if (v.isContiguous() && !(shape[shape.length - 1] <= 1 && v.size <= 1)) fail("a strided input came out contiguous");
    return v;
  }

  /** The elements as f64 on the host, whatever the device (waits for it). */
  async function values(t) {
    const host = await t.toAsync("cpu");
    try {
      return wt.tidy(() => wt.op1("cast", [host], { dtype: "f64" }).dataSync());
    } finally {
      if (host !== t) host.dispose();
    }
  }

  /** Worst |got - want| / (atol + rtol |want|); throws on a mismatch. */
  async function grade(got, want, tol, scale, what) {
    if (got.dtype !== want.dtype) fail(`${what}: dtype ${got.dtype}, want ${want.dtype}`);
    if (JSON.stringify([...got.shape]) !== JSON.stringify(want.shape)) {
      fail(`${what}: shape [${got.shape}], want [${want.shape}]`);
    }
    const g = await values(got);
    const w = want.values;
    const floating = ["f32", "f64", "f16", "bf16"].includes(want.dtype);
    const atol = floating ? tol.atol * scale : 0, rtol = floating ? tol.rtol * scale : 0;
    let worst = 0;
    for (let i = 0; i < w.length; i++) {
      const a = g[i], b = w[i];
      if (Number.isNaN(a) || Number.isNaN(b) || !Number.isFinite(a) || !Number.isFinite(b)) {
        if (!(Number.isNaN(a) && Number.isNaN(b)) && a !== b) fail(`${what}: element ${i}: got ${a}, want ${b}`);
        continue;
      }
      const d = Math.abs(a - b), bound = atol + rtol * Math.abs(b);
      if (d > bound) fail(`${what}: element ${i}: got ${a}, want ${b} (atol ${atol}, rtol ${rtol})`);
      worst = Math.max(worst, bound > 0 ? d / bound : 0);
    }
    return worst;
  }

  /**
   * Computes one case: the outputs and gradients to check, and everything
   * else it made (to dispose). Ops run synchronously, as users call them;
   * one the browser cannot run without waiting for the GPU (needsAsync) runs
   * again through its async form.
   */
  async function compute(op, c, tensors, device, made) {
    const keep = (t) => (made.push(t), t);
    const input = (spec, strided) => wt.tidy(() => keep(makeInput(spec, strided, device)));
    const ins = c.inputs.map((s, i) => {
      if (s.absent) return null;
      const t = input(tensors[`${c.name}/in${i}`], s.strided);
      if (c.grad && s.grad) t.requiresGrad = true;
      return t;
    });
    // "inf"/"nan" spell float values; a string attribute ("inf" as a norm's order) stays a string.
    const kinds = new Map((specs.get(op)?.attrs ?? []).map((a) => [a.name, a.kind]));
    const attrs = Object.fromEntries(Object.entries(c.attrs).map(([k, v]) => [k, kinds.get(k) === "string" ? v : attrValue(v)]));
    if ((specs.get(op)?.attrs ?? []).some((a) => a.name === "device") && !attrs.device) attrs.device = device;
    // A complex input is filed as its real pairs, a complex output compared
    // as them (index.json's "complex"); gradients arrive at the pairs.
    const call = ins.map((t, i) => (t && c.inputs[i].complex ? keep(wt.op("view_as_complex", [t], {})[0]) : t));
    let outs;
    try {
      outs = wt.op(op, call, attrs);
    } catch (e) {
      if (!e.needsAsync) throw e;
      outs = await wt.opAsync(op, call, attrs);
    }
    outs.forEach(keep);
    outs = outs.map((o, j) => (c.outputs[j]?.complex ? keep(wt.op("view_as_real", [o], {})[0]) : o));
    if (outs.length !== c.outputs.length) fail(`${outs.length} outputs, want ${c.outputs.length}`);
    const grads = [];
    const loss = wt.tidy(() => {
      let l = null;
      outs.forEach((o, j) => {
        const up = tensors[`${c.name}/up${j}`];
        if (up && o.requiresGrad) {
          const term = wt.sum(wt.mul(o, makeInput(up, false, device)));
          l = l ? wt.add(l, term) : term;
        }
      });
      return l;
    });
    if (c.grad && loss) {
      keep(loss);
      try {
        loss.backward();
      } catch (e) {
        if (!e.needsAsync) throw e;
        await loss.backwardAsync();
      }
      c.inputs.forEach((s, i) => {
        if (s.grad) grads.push([i, keep(ins[i].grad ?? wt.zerosLike(ins[i]))]);
      });
    }
    return { outs, grads };
  }

  /** Runs and grades one case; resolves to the worst error ratio, rejects on a mismatch. */
  return async function runCase(op, c, tensors, tolScale, device = "cpu") {
    const tol = (dt) => ({ atol: index.tolerances[dt].atol * tolScale, rtol: index.tolerances[dt].rtol * tolScale });
    const made = [];
    try {
      const { outs, grads } = await compute(op, c, tensors, device, made);
      let worst = 0;
      for (const [j, o] of outs.entries()) {
        const want = tensors[`${c.name}/out${j}`];
        worst = Math.max(worst, await grade(o, want, tol(want.dtype), 1, `out${j}`));
      }
      for (const [i, g] of grads) {
        const want = tensors[`${c.name}/grad${i}`];
        worst = Math.max(worst, await grade(g, want, tol(want.dtype), index.grad_tol_scale, `grad${i}`));
      }
      return worst;
    } finally {
      wt.dispose(made);
    }
  };
}

/** The seeded random streams every SDK must draw identically: name -> make (on device). */
export function identityCases(wt, device) {
  return {
    rand_seed7: () => wt.op1("rand", [], { shape: [64], seed: 7, device }),
    randint_seed7: () => wt.op1("randint", [], { shape: [64], seed: 7, low: -5, high: 50, device }),
    bernoulli_seed3: () => wt.op1("bernoulli", [wt.full({ shape: [64], value: 0.3, device })], { seed: 3 }),
  };
}

/**
 * Runs every case of every op in the index on one device and returns the
 * conformance result object (conformance/index.go Result); load(file)
 * resolves to a vector file's bytes, digest(bytes) to its SHA-256 hex.
 */
export async function conformance(wt, index, { sdk, device, detail, load, digest, progress }) {
  const runCase = caseRunner(wt, index);
  const kind = device.split(":")[0];
  const result = { sdk, backend: kind, ops: {}, detail };
  const why = openProblem(wt, device);
  if (why) {
    result.detail = why;
    return result;
  }
  countFallbacks(wt, true);
  const ops = Object.entries(index.ops).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [k, [op, entry]] of ops.entries()) {
    progress?.(k, ops.length, op);
    const { meta, tensors } = parseSafetensors(await load(entry.file));
    const r = { status: "pass", cases: 0, worst: 0 };
    for (const c of JSON.parse(meta.cases)) {
      if (!holds(c, tensors, device)) {
        r.skipped = (r.skipped ?? 0) + 1;
        continue;
      }
      r.cases++;
      try {
        r.worst = Math.max(r.worst, await runCase(op, c, tensors, entry.tol_scale, device));
      } catch (e) {
        // a failing case is a result, not a crash
        if (r.status === "pass") Object.assign(r, { status: "fail", detail: `case ${c.name}: ${e.message}` });
      }
    }
    if (r.cases === 0) Object.assign(r, { status: "n/a", detail: `every case needs a dtype ${device} cannot hold` });
    if (!Number.isFinite(r.worst)) r.worst = 1e308;
    result.ops[op] = r;
  }
  result.identity = {};
  for (const [name, make] of Object.entries(identityCases(wt, device))) {
    try {
      const t = make();
      const host = await t.toAsync("cpu");
      const a = await host.data();
      result.identity[name] = await digest(new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice());
      wt.dispose([t, host]);
    } catch (e) {
      result.identity[name] = `error: ${e.message}`;
    }
  }
  return result;
}

// core.NoDeviceText: the runtime's message says so when the machine has no
// such device at all (no adapter, no driver), as opposed to a backend that
// failed to open, which fails the column (conformance/columns.go).
export const NO_DEVICE = "no such device on this machine";

/** "" when device opens, else the column's detail: "unavailable: ..." (no such device here) or "open failed: ...". */
export function openProblem(wt, device) {
  const kind = device.split(":")[0];
  if (wt.devices().some((d) => d.split(":")[0] === kind)) return "";
  const previous = wt.defaultDevice();
  try {
    wt.setDefaultDevice(device); // fails, saying why
    wt.setDefaultDevice(previous);
    return `open failed: ${device} opens but is not in devices()`;
  } catch (e) {
    return `${e.message.includes(NO_DEVICE) ? "unavailable" : "open failed"}: ${e.message}`;
  }
}

/**
 * The runtime's fallback report (wt.fallbacks(), after reset when asked), or
 * undefined where the runtime cannot give one (the browser's, for now):
 * the report then says "not reported" rather than "none".
 */
export function countFallbacks(wt, reset = false) {
  if (typeof wt.fallbacks !== "function") return undefined;
  try {
    return wt.fallbacks(reset);
  } catch (e) {
    if (e.code === "WT_ERR_UNSUPPORTED") return undefined;
    throw e;
  }
}

/**
 * The cross-SDK training check (conformance/training): the same MLP after
 * the same seed, 20 Adam steps on the same seeded data. Resolves to the loss
 * curve and the final weights as safetensors bytes.
 */
export async function trainMLP(wt, device) {
  const previous = wt.defaultDevice();
  wt.setDefaultDevice(device);
  try {
    wt.manualSeed(2026);
    const model = new wt.nn.Sequential(new wt.nn.Linear(4, 16), new wt.nn.ReLU(), new wt.nn.Linear(16, 3));
    const x = wt.op1("randn", [], { shape: [32, 4], seed: 11, device });
    const y = wt.op1("randint", [], { shape: [32], low: 0, high: 3, seed: 12, device });
    const opt = new wt.optim.Adam(model.parameters(), { lr: 0.05 });
    const losses = [];
    for (let step = 0; step < 20; step++) {
      opt.zeroGrad();
      const loss = wt.tidy(() => wt.crossEntropy(model.call(x), y));
      loss.backward();
      losses.push(Number(await loss.itemAsync()));
      loss.dispose();
      opt.step();
    }
    const checkpoint = await wt.save(model);
    wt.dispose([x, y]);
    opt.dispose();
    model.dispose();
    return { losses, checkpoint };
  } finally {
    wt.setDefaultDevice(previous);
  }
}

/** Loads a checkpoint's bytes into a fresh MLP of this SDK: "ok" or the error. */
export function loadsCheckpoint(wt, bytes) {
  const model = new wt.nn.Sequential(new wt.nn.Linear(4, 16), new wt.nn.ReLU(), new wt.nn.Linear(16, 3));
  try {
    const sd = wt.load(bytes);
    model.loadStateDict(sd);
    wt.dispose([...sd.values()]);
    return "ok";
  } catch (e) {
    return `${e.name}: ${e.message}`;
  } finally {
    model.dispose();
  }
}

// The SDKs' ONNX model (onnx/testdata/make_sdk_model.py: y = relu(x @ W + b)
// * scale, top = argmax(y, 1)) loaded from its bytes onto device, run with
// named inputs and with its initializer b overridden by name, against the
// outputs onnx's reference evaluator gave (expected: sdk_model.json).
// Returns the problems found (none: []).
export async function onnxSdkModel(wt, bytes, expected, device) {
  const problems = [];
  const close = (got, want, what) => {
    if (got.length !== want.length || got.some((g, i) => Math.abs(g - want[i]) > 1e-5)) {
      problems.push(`${what}: ${[...got]} vs ${want}`);
    }
  };
  const model = await wt.onnx.load(bytes, { device });
  if (model.inputNames.join() !== "x,scale") problems.push(`inputs ${model.inputNames}`);
  if (model.outputNames.join() !== "y,top") problems.push(`outputs ${model.outputNames}`);
  if (JSON.stringify(model.inputs[0].shape) !== '["batch",4]') problems.push(`x's shape ${JSON.stringify(model.inputs[0].shape)}`);
  if (model.opset !== 17 || model.device !== device) problems.push(`opset ${model.opset}, device ${model.device}`);
  const x = wt.tensor(new Float32Array(expected.inputs.x.data), expected.inputs.x.shape, { device });
  const scale = wt.tensor(new Float32Array(expected.inputs.scale), [1], { device });
  const b = wt.tensor(new Float32Array(expected.override_b), [3], { device });
  const out = await model.run({ scale, x });
  if (Object.keys(out).join() !== "y,top") problems.push(`output names ${Object.keys(out)}`);
  close(await out.y.data(), expected.outputs.y.data, "y");
  if (out.top.dtype !== "i64") problems.push(`top's dtype ${out.top.dtype}`);
  close([...(await out.top.data())].map(Number), expected.outputs.top, "top");
  const out2 = await model.run({ x, scale, b });
  close(await out2.y.data(), expected.outputs_with_b.y, "y with b");
  close([...(await out2.top.data())].map(Number), expected.outputs_with_b.top, "top with b");
  try {
    await model.run({ x, scale, z: x });
    problems.push("an unknown input name was accepted");
  } catch (e) {
    if (!/the model has no input "z" \(inputs: x, scale\)/.test(e.message)) problems.push(`unknown input: ${e.message}`);
  }
  model.dispose();
  // The outputs outlive the model.
  close(await out.y.data(), expected.outputs.y.data, "y after dispose");
  try {
    await model.run({ x, scale });
    problems.push("a disposed model ran");
  } catch (e) {
    if (!/after dispose/.test(e.message)) problems.push(`disposed: ${e.message}`);
  }
  wt.dispose([x, scale, b, out.y, out.top, out2.y, out2.top]);
  return problems;
}

// The SDKs' model of ONNX sequences and optionals (onnx/testdata/
// make_sdk_values_model.py: pieces = SplitToSequence(x), joined =
// ConcatFromSequence(parts), has = OptionalHasElement(maybe), and the
// optionals passed through) through model.runValues on device, for each case
// of sdk_values_model.json (the optionals given, then empty) against the
// outputs onnx's reference evaluator gave. Returns the problems found.
export async function onnxValuesModel(wt, bytes, cases, device) {
  const problems = [];
  const model = await wt.onnx.load(bytes, { device });
  const kinds = model.inputs.map((v) => v.kind).join();
  if (kinds !== "tensor,sequence,optional_tensor,optional_sequence") problems.push(`input kinds ${kinds}`);
  const made = [];
  // A case's value as runValues takes it: a tensor, an array of them, null.
  const value = (v) => {
    if (v === null) return null;
    if (Array.isArray(v)) return v.map(value);
    const t = wt.tensor(new Float32Array(v.data), v.shape, { device });
    made.push(t);
    return t;
  };
  const check = async (got, want, what) => {
    if (want === null) {
      if (got !== null) problems.push(`${what}: ${got} for null`);
    } else if (Array.isArray(want)) {
      if (!Array.isArray(got) || got.length !== want.length) return problems.push(`${what}: ${got} for ${want.length} tensors`);
      for (let i = 0; i < want.length; i++) await check(got[i], want[i], `${what}[${i}]`);
    } else if (!(got instanceof wt.Tensor)) {
      problems.push(`${what}: ${got} for a tensor`);
    } else {
      const data = [...(await got.data())].map(Number);
      const wantData = want.data.map(Number);
      if (JSON.stringify(got.shape) !== JSON.stringify(want.shape) || JSON.stringify(data) !== JSON.stringify(wantData)) {
        problems.push(`${what}: ${JSON.stringify(got.shape)} ${data} vs ${JSON.stringify(want.shape)} ${wantData}`);
      }
      got.dispose();
    }
  };
  for (const [i, c] of cases.entries()) {
    const inputs = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, value(v)]));
    const out = await model.runValues(inputs);
    if (Object.keys(out).join() !== Object.keys(c.outputs).join()) problems.push(`case ${i}: outputs ${Object.keys(out)}`);
    for (const [name, want] of Object.entries(c.outputs)) await check(out[name], want, `case ${i}: ${name}`);
  }
  try {
    await model.runValues({ x: made[0], parts: made[1], maybe: null, maybe_parts: null });
    problems.push("a tensor was taken for a sequence");
  } catch (e) {
    if (!/input "parts": the model declares a sequence of tensors, got a f32 tensor/.test(e.message)) problems.push(`kind: ${e.message}`);
  }
  model.dispose();
  wt.dispose(made);
  return problems;
}
