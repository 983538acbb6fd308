// The reference-vector machinery shared by vectors.test.mjs and the
// conformance runner: reading safetensors, making (strided) inputs, running a
// case through the public API (wt.tensor, wt.op, backward, grad) and grading
// it with the tolerances and rules of conformance/vectors/index.json.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as wt from "webtensor";
import { VECTORS } from "./helpers.mjs";

await wt.init();
export const index = JSON.parse(readFileSync(join(VECTORS, "index.json"), "utf8"));
const specs = new Map(wt.manifest().ops.map((o) => [o.name, o]));

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

/** {meta, tensors: name -> {dtype, shape, bytes (own copy), values (f64)}}. */
export function readSafetensors(path) {
  const raw = readFileSync(path);
  const n = Number(raw.readBigUInt64LE(0));
  const header = JSON.parse(raw.toString("utf8", 8, 8 + n));
  const meta = header.__metadata__ ?? {};
  delete header.__metadata__;
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    const dtype = ST[t.dtype];
    const [lo, hi] = t.data_offsets;
    const bytes = new Uint8Array(raw.subarray(8 + n + lo, 8 + n + hi)); // a copy, aligned
    const arr = new ARRAY[dtype](bytes.buffer, 0, (hi - lo) / SIZE[dtype]);
    const values = Float64Array.from(arr, (v) =>
      dtype === "f16" ? half(v) : dtype === "bf16" ? new Float32Array(new Uint32Array([v << 16]).buffer)[0] : Number(v));
    tensors[name] = { dtype, shape: t.shape, bytes, values };
  }
  return { meta, tensors };
}

/** An input tensor; a strided one is a step-2 slice of a base twice as wide in the last dim. */
function makeInput({ dtype, shape, bytes }, strided, device) {
  if (!strided || shape.length === 0) return wt.tensor(new ARRAY[dtype](bytes.buffer), shape, { dtype, device });
  const size = SIZE[dtype];
  const base = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length / size; i++) base.set(bytes.subarray(i * size, (i + 1) * size), 2 * i * size);
  const baseShape = [...shape.slice(0, -1), 2 * shape[shape.length - 1]];
  const b = wt.tensor(new ARRAY[dtype](base.buffer), baseShape, { dtype, device });
  const v = wt.op1("slice", [b], { axis: -1, step: 2 });
  assert.equal(v.isContiguous(), shape[shape.length - 1] <= 1 && v.size <= 1 ? v.isContiguous() : false);
  return v;
}

function attrValue(v) {
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  if (v === "nan") return NaN;
  return Array.isArray(v) ? v.map(attrValue) : v;
}

/** Worst |got - want| / (atol + rtol |want|); throws on a mismatch. */
function grade(got, want, tol, scale, what) {
  assert.equal(got.dtype, want.dtype, `${what}: dtype`);
  assert.deepEqual([...got.shape], want.shape, `${what}: shape`);
  const g = wt.op1("cast", [got.to("cpu")], { dtype: "f64" }).dataSync();
  const w = want.values;
  const floating = ["f32", "f64", "f16", "bf16"].includes(want.dtype);
  const atol = floating ? tol.atol * scale : 0, rtol = floating ? tol.rtol * scale : 0;
  let worst = 0;
  for (let i = 0; i < w.length; i++) {
    const a = g[i], b = w[i];
    if (Number.isNaN(a) || Number.isNaN(b) || !Number.isFinite(a) || !Number.isFinite(b)) {
      if (!(Number.isNaN(a) && Number.isNaN(b)) && a !== b) assert.fail(`${what}: element ${i}: got ${a}, want ${b}`);
      continue;
    }
    const d = Math.abs(a - b), bound = atol + rtol * Math.abs(b);
    if (d > bound) assert.fail(`${what}: element ${i}: got ${a}, want ${b} (atol ${atol}, rtol ${rtol})`);
    worst = Math.max(worst, bound > 0 ? d / bound : 0);
  }
  return worst;
}

export function runCase(op, c, tensors, tolScale, device = "cpu") {
  const tol = (dt) => ({ atol: index.tolerances[dt].atol * tolScale, rtol: index.tolerances[dt].rtol * tolScale });
  const ins = c.inputs.map((s, i) => {
    if (s.absent) return null;
    const t = makeInput(tensors[`${c.name}/in${i}`], s.strided, device);
    if (c.grad && s.grad) t.requiresGrad = true;
    return t;
  });
  const attrs = Object.fromEntries(Object.entries(c.attrs).map(([k, v]) => [k, attrValue(v)]));
  if ((specs.get(op)?.attrs ?? []).some((a) => a.name === "device") && !attrs.device) attrs.device = device;
  const outs = wt.op(op, ins, attrs);
  assert.equal(outs.length, c.outputs.length, "number of outputs");
  let worst = 0, loss = null;
  outs.forEach((o, j) => {
    worst = Math.max(worst, grade(o, tensors[`${c.name}/out${j}`], tol(tensors[`${c.name}/out${j}`].dtype), 1, `out${j}`));
    const up = tensors[`${c.name}/up${j}`];
    if (up && o.requiresGrad) {
      const term = wt.sum(wt.mul(o, makeInput(up, false, device)));
      loss = loss ? wt.add(loss, term) : term;
    }
  });
  if (c.grad && loss) {
    loss.backward();
    c.inputs.forEach((s, i) => {
      if (!s.grad) return;
      const want = tensors[`${c.name}/grad${i}`];
      const g = ins[i].grad ?? wt.zerosLike(ins[i]);
      worst = Math.max(worst, grade(g, want, tol(want.dtype), index.grad_tol_scale, `grad${i}`));
    });
  }
  return worst;
}
