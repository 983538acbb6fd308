// c64 and c128: JS has no complex numbers, so a complex tensor's data is its
// parts interleaved (real first) in a Float32Array or Float64Array, the
// runtime's own layout. The values here are checked against complex
// arithmetic written out in JS, not against the runtime itself.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as wt from "webtensor";
import { openProblem } from "./cases.mjs";

await wt.init();

// Complex numbers as [re, im], for the expected values.
const cmul = ([a, b], [c, d]) => [a * c - b * d, a * d + b * c];
const cdiv = ([a, b], [c, d]) => {
  const n = c * c + d * d;
  return [(a * c + b * d) / n, (b * c - a * d) / n];
};
const cexp = ([a, b]) => [Math.exp(a) * Math.cos(b), Math.exp(a) * Math.sin(b)];
const pairs = (a) => Array.from({ length: a.length / 2 }, (_, i) => [a[2 * i], a[2 * i + 1]]);
const flat = (zs) => zs.flat();

/** Asserts got (a typed array) is want (numbers) within tol, naming the first index that is not. */
function close(got, want, tol, what) {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, want ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i] - want[i]);
    assert.ok(err <= tol * (1 + Math.abs(want[i])), `${what}[${i}]: ${got[i]}, want ${want[i]}`);
  }
}

const A = [[1, 2], [3, -4], [-0.5, 0.25], [0, 1.5]];
const B = [[2, -1], [0.5, 0.5], [-3, 1], [1, 0]];
const F32 = 1e-6;

test("c64 from interleaved parts; dtype, shape, data, item, toString and DType", async () => {
  const parts = new Float32Array(flat(A));
  const z = wt.tensor(parts, [2, 2], { dtype: "c64" });
  assert.equal(z.dtype, "c64");
  assert.deepEqual([...z.shape], [2, 2]);
  assert.equal(z.size, 4);
  assert.deepEqual(z.dataSync(), parts);
  assert.deepEqual(await z.data(), parts); // the CPU's zero-copy view: 8 values for 4 elements
  assert.equal(String(z), "Tensor(c64, [2, 2], cpu)");
  assert.deepEqual(wt.tensor(parts, undefined, { dtype: "complex64" }).shape, [4]); // 1-d by default
  assert.deepEqual(wt.tensor(new Float32Array([3, -1]), [], { dtype: "c64" }).item(), { re: 3, im: -1 });
  assert.deepEqual(await wt.tensor(new Float64Array([0.5, 2]), [1], { dtype: "c128" }).itemAsync(), { re: 0.5, im: 2 });
  // Numbers given for a complex dtype are real parts, as in torch.tensor(..., dtype=complex64).
  assert.deepEqual(wt.tensor([1, 2], undefined, { dtype: "c64" }).dataSync(), new Float32Array([1, 0, 2, 0]));
  const lent = wt.fromArray(new Float32Array([1, 2, 3, 4]), [2], { dtype: "c64" });
  assert.deepEqual(wt.abs(lent).dataSync(), new Float32Array([Math.hypot(1, 2), Math.hypot(3, 4)]));
  assert.deepEqual(wt.DType.c64, { name: "c64", code: 12, itemsize: 8, isFloating: false, isComplex: true });
  assert.deepEqual(wt.DType.complex128, { name: "c128", code: 13, itemsize: 16, isFloating: false, isComplex: true });
  assert.equal(wt.DType.f32.isComplex, false);
});

test("complex data is refused when it is not pairs of the part dtype", () => {
  assert.throws(() => wt.tensor(new Float32Array(3), undefined, { dtype: "c64" }), /interleaved, 3 values are not pairs/);
  assert.throws(() => wt.tensor(new Float32Array(6), [2, 2], { dtype: "c64" }),
    /shape \[2, 2\] holds 4 elements, the data has 6 values \(3 complex\)/);
  assert.throws(() => wt.tensor(new Float64Array(4), [2], { dtype: "c64" }), /Float64Array holds f64, not f32 \(the parts of c64\)/);
  assert.throws(() => wt.fromArray(new Float32Array(4), [2], { dtype: "c128" }), /Float32Array holds f32, not f64 \(the parts of c128\)/);
});

test("mul, div and exp against complex arithmetic; real scalars; complex from {re, im}", () => {
  wt.tidy(() => {
    const x = wt.tensor(new Float32Array(flat(A)), [4], { dtype: "c64" });
    const y = wt.tensor(new Float32Array(flat(B)), [4], { dtype: "c64" });
    close(x.mul(y).dataSync(), flat(A.map((a, i) => cmul(a, B[i]))), F32, "mul");
    close(x.div(y).dataSync(), flat(A.map((a, i) => cdiv(a, B[i]))), F32, "div");
    close(x.exp().dataSync(), flat(A.map(cexp)), F32, "exp");
    close(x.add(y).dataSync(), flat(A.map((a, i) => [a[0] + B[i][0], a[1] + B[i][1]])), F32, "add");
    assert.equal(x.mul(2.5).dtype, "c64"); // a JS number next to a complex tensor is x + 0i
    close(x.mul(2.5).dataSync(), flat(A.map(([a, b]) => [2.5 * a, 2.5 * b])), F32, "mul 2.5");
    close(wt.sub(1, x).dataSync(), flat(A.map(([a, b]) => [1 - a, -b])), F32, "1 - x");
    const r = wt.tensor(new Float32Array([1, 2, -1, 0.5]));
    close(x.mul(r).dataSync(), flat(A.map(([a, b], i) => [a * r.dataSync()[i], b * r.dataSync()[i]])), F32, "mul f32");
    // From separate real and imaginary arrays: the complex op.
    const re = new Float32Array(A.map((a) => a[0]));
    const im = new Float32Array(A.map((a) => a[1]));
    const z = wt.complex(wt.tensor(re), wt.tensor(im));
    assert.equal(z.dtype, "c64");
    assert.deepEqual(z.dataSync(), new Float32Array(flat(A)));
    assert.equal(wt.complex(wt.tensor(new Float64Array(re)), wt.tensor(new Float64Array(im))).dtype, "c128");
  });
});

test("abs, angle, real, imag, conj and the view ops", async () => {
  wt.tidy(() => {
    const x = wt.tensor(new Float32Array(flat(A)), [4], { dtype: "c64" });
    close(wt.abs(x).dataSync(), A.map(([a, b]) => Math.hypot(a, b)), F32, "abs");
    close(x.angle().dataSync(), A.map(([a, b]) => Math.atan2(b, a)), F32, "angle");
    assert.equal(wt.abs(x).dtype, "f32");
    assert.deepEqual(x.real().dataSync(), new Float32Array(A.map((a) => a[0])));
    assert.deepEqual(x.imag().dataSync(), new Float32Array(A.map((a) => a[1])));
    assert.deepEqual(x.conj().dataSync(), new Float32Array(flat(A.map(([a, b]) => [a, -b]))));
    const p = x.viewAsReal();
    assert.equal(p.dtype, "f32");
    assert.deepEqual([...p.shape], [4, 2]);
    assert.deepEqual(p.dataSync(), x.dataSync());
    assert.deepEqual(p.viewAsComplex().dataSync(), x.dataSync());
  });
  // real() is a strided view: data() copies it rather than viewing every other value.
  const z = wt.tensor(new Float32Array(flat(A)), [4], { dtype: "c64" });
  assert.deepEqual(await z.real().data(), new Float32Array(A.map((a) => a[0])));
});

/** The DFT by its definition, X[k] = sum_t x[t] e^(-2 pi i k t / n), in f64. */
function dft(zs) {
  const n = zs.length;
  return zs.map((_, k) => zs.reduce(([sr, si], z, t) => {
    const [wr, wi] = cexp([0, (-2 * Math.PI * k * t) / n]);
    const [pr, pi] = cmul(z, [wr, wi]);
    return [sr + pr, si + pi];
  }, [0, 0]));
}

test("fft of a complex tensor against the DFT, c64 and c128", () => {
  const zs = Array.from({ length: 7 }, (_, i) => [Math.cos(1.3 * i) + 0.1 * i, Math.sin(0.7 * i * i)]);
  const want = flat(dft(zs));
  for (const [dt, Arr, tol] of [["c64", Float32Array, 1e-5], ["c128", Float64Array, 1e-12]]) {
    wt.tidy(() => {
      const z = wt.tensor(new Arr(flat(zs)), [7], { dtype: dt });
      // The registry's transforms take complex pairs [..., 2]: two views, no copy.
      const f = wt.fft(z.viewAsReal()).viewAsComplex();
      assert.equal(f.dtype, dt);
      close(f.dataSync(), want, tol, `fft ${dt}`);
      close(wt.ifft(f.viewAsReal()).viewAsComplex().dataSync(), flat(zs), tol, `ifft ${dt}`);
    });
  }
});

test("gradients of a real loss are PyTorch's conjugate Wirtinger ones", () => {
  wt.tidy(() => {
    // L = sum(real(z * z)) + sum(|z|): dL/dx + i dL/dy = 2 conj(z) + z / |z|.
    const z = wt.tensor(new Float32Array(flat(A)), [4], { dtype: "c64", requiresGrad: true });
    z.mul(z).real().sum().add(wt.abs(z).sum()).backward();
    const g = z.grad;
    assert.equal(g.dtype, "c64");
    close(g.dataSync(), flat(A.map(([a, b]) => {
      const m = Math.hypot(a, b);
      return [2 * a + a / m, -2 * b + b / m];
    })), F32, "grad");
  });
});

test("c128 on the CPU keeps f64 precision", () => {
  wt.tidy(() => {
    const a = [[1e-9, 1], [Math.PI, -Math.E]];
    const b = [[1 + 1e-12, 2], [-1, 1e-10]];
    const x = wt.tensor(new Float64Array(flat(a)), [2], { dtype: "c128" });
    const y = wt.tensor(new Float64Array(flat(b)), [2], { dtype: "c128" });
    assert.ok(x.dataSync() instanceof Float64Array);
    close(x.mul(y).dataSync(), flat(a.map((v, i) => cmul(v, b[i]))), 1e-15, "mul c128");
    close(x.div(y).dataSync(), flat(a.map((v, i) => cdiv(v, b[i]))), 1e-15, "div c128");
    close(x.exp().dataSync(), flat(a.map(cexp)), 1e-15, "exp c128");
    assert.equal(wt.cast(x, { dtype: "c64" }).dtype, "c64");
    assert.deepEqual(wt.cast(wt.tensor(new Int32Array([2, -3])), { dtype: "complex128" }).dataSync(), new Float64Array([2, 0, -3, 0]));
  });
});

test("ops without a complex meaning refuse complex input by name", () => {
  const z = wt.tensor(new Float32Array([1, 2]), [1], { dtype: "c64" });
  assert.throws(() => wt.relu(z), (e) => e instanceof wt.WebtensorError &&
    /relu: does not take complex dtypes \(c64, c128\); the ops that do: .*\bmul\b/.test(e.message));
  assert.throws(() => wt.cast(z, { dtype: "f32" }), /casting dtype c64 to f32 would drop the imaginary part/);
  z.dispose();
});

test("on WebGPU: c64 mul and abs (stored as f32 pairs)", (t) => {
  const why = openProblem(wt, "webgpu");
  if (why.startsWith("unavailable")) return t.skip(why); // no adapter; an adapter that fails is a failure:
  assert.equal(why, "", `WebGPU: ${why}`);
  wt.tidy(() => {
    const x = wt.tensor(new Float32Array(flat(A)), [4], { dtype: "c64", device: "webgpu" });
    const y = wt.tensor(new Float32Array(flat(B)), [4], { dtype: "c64", device: "webgpu" });
    const p = x.mul(y);
    assert.equal(p.dtype, "c64");
    assert.match(p.device, /^webgpu/);
    close(p.dataSync(), flat(A.map((a, i) => cmul(a, B[i]))), F32, "mul webgpu");
    close(wt.abs(x).dataSync(), A.map(([a, b]) => Math.hypot(a, b)), F32, "abs webgpu");
  });
});
