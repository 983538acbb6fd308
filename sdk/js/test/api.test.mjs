// The public API: typed-array interop (and which way is zero copy), ops as
// functions and methods, autograd, errors as exceptions with the ABI's
// message, disposed tensors, tidy, and leaks.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as wt from "webtensor";

await wt.init();

test("typed arrays in and out, every dtype", async () => {
  const cases = [
    [new Float32Array([1.5, -2, 3]), "f32"], [new Float64Array([1e300, 2, 3]), "f64"],
    [new BigInt64Array([1n, -(2n ** 62n), 3n]), "i64"], [new Int32Array([1, -2, 3]), "i32"],
    [new Uint32Array([1, 2 ** 32 - 1, 3]), "u32"], [new Int16Array([1, -2, 3]), "i16"],
    [new Int8Array([1, -2, 3]), "i8"], [new Uint8Array([1, 255, 3]), "u8"],
  ];
  for (const [arr, dt] of cases) {
    const t = wt.tensor(arr);
    assert.equal(t.dtype, dt);
    assert.deepEqual([...t.shape], [3]);
    assert.equal(t.device, "cpu");
    assert.deepEqual(await t.data(), arr);
    assert.deepEqual(t.dataSync(), arr);
    t.dispose();
  }
  const b = wt.tensor(new Uint8Array([1, 0, 1]), [3], { dtype: "bool" });
  assert.equal(b.dtype, "bool");
  assert.deepEqual(await b.data(), new Uint8Array([1, 0, 1]));
  const h = wt.tensor(new Uint16Array([0x3c00, 0xc000]), [2], { dtype: "f16" }); // 1, -2
  assert.deepEqual(wt.cast(h, { dtype: "f32" }).dataSync(), new Float32Array([1, -2]));
  const nested = wt.tensor([[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual([...nested.shape], [2, 3]);
  assert.equal(nested.dtype, "f32");
  assert.equal(wt.tensor(true, []).item(), true);
});

test("data() views CPU memory without a copy (DLPack export); tensor() copies", async () => {
  const src = new Float32Array([1, 2, 3, 4]);
  const t = wt.tensor(src, [2, 2]);
  src[0] = 100; // wt_tensor_from_data copied: the tensor keeps 1
  const view = await t.data();
  assert.equal(view[0], 1);
  const again = await t.data();
  view[1] = 42; // both arrays view the tensor's one buffer
  assert.equal(again[1], 42);
  assert.equal(t.dataSync()[1], 42);
  t.dispose();
  assert.equal(view[3], 4, "the export keeps the memory alive after dispose()");
  // A strided view is made dense (a copy) before it is exported.
  const base = wt.tensor(new Float32Array([0, 1, 2, 3, 4, 5]), [6]);
  const strided = wt.slice(base, { step: 2 });
  assert.equal(strided.isContiguous(), false);
  assert.deepEqual(await strided.data(), new Float32Array([0, 2, 4]));
});

test("ops as functions and methods, multi-output, scalars, wt.op by name", () => {
  wt.tidy(() => {
    const x = wt.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
    assert.deepEqual(x.add(1).dataSync(), new Float32Array([2, 3, 4, 5, 6, 7]));
    assert.deepEqual(wt.mul(2, x).dataSync(), new Float32Array([2, 4, 6, 8, 10, 12]));
    assert.deepEqual(x.sum({ axes: [1] }).dataSync(), new Float32Array([6, 15]));
    assert.deepEqual([...x.matmul(wt.transpose(x)).shape], [2, 2]);
    const [v, i] = x.topk({ k: 1, axis: 1 });
    assert.deepEqual(v.dataSync(), new Float32Array([3, 6]));
    assert.deepEqual(i.dataSync(), new BigInt64Array([2n, 2n]));
    assert.equal(wt.split(x, { sections: 3, axis: 1 }).length, 3);
    assert.deepEqual([...wt.concat([x, x], { axis: 0 }).shape], [4, 3]);
    assert.deepEqual(wt.op("relu", [wt.neg(x)])[0].dataSync(), new Float32Array(6));
    assert.equal(typeof wt.var, "function");
  });
});

test("every public op of the library's manifest is a function (make generate writes them)", () => {
  const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  const ops = wt.manifest().ops.filter((o) => !o.internal && !o.name.startsWith("_") && o.category !== "plugin");
  assert.ok(ops.length > 100, `the manifest lists ${ops.length} public ops`);
  const missing = ops.map((o) => camel(o.name)).filter((n) => typeof wt[n] !== "function");
  assert.deepEqual(missing, []);
  const x = wt.tensor(new Float32Array([1, 2]), [2]);
  assert.equal(typeof x.softmax, "function"); // methods of several category files
  assert.equal(typeof x.relu, "function");
  assert.equal(typeof x.sum, "function");
  x.dispose();
});

test("autograd: requiresGrad, backward, grad, noGrad", () => {
  wt.tidy(() => {
    const w = wt.tensor(new Float32Array([1, 2, 3]), [3], { requiresGrad: true });
    assert.equal(w.requiresGrad, true);
    w.mul(w).sum().backward();
    assert.deepEqual(w.grad.dataSync(), new Float32Array([2, 4, 6]));
    w.zeroGrad();
    assert.equal(w.grad, null);
    const y = wt.noGrad(() => w.mul(2));
    assert.equal(y.requiresGrad, false);
  });
});

test("errors are Errors with the ABI's message", () => {
  const a = wt.tensor(new Float32Array(6), [2, 3]);
  const b = wt.tensor(new Float32Array(4), [4]);
  assert.throws(() => wt.add(a, b), (e) => e instanceof wt.WebtensorError && e.code === "WT_ERR_INVALID" &&
    /add: shapes \[2 3\] and \[4\] cannot be broadcast/.test(e.message));
  assert.throws(() => wt.op("no_such_op", [a]), (e) => e instanceof Error && /no_such_op/.test(e.message));
  assert.throws(() => wt.tensor(new Float32Array(5), [2, 3]), /shape \[2, 3\] holds 6 elements, the data has 5/);
  assert.throws(() => wt.tensor(new Float32Array(6), [2, 3], { dtype: "f64" }), /Float32Array holds f32, not f64/);
  assert.throws(() => wt.tensor(new Float32Array(6), [2, -3]), /bad shape/);
  assert.throws(() => wt.tensor(new Uint16Array(2)), /f16 or bf16/);
  assert.throws(() => wt.cast(a, { dtype: "f128" }), /unknown dtype "f128"/);
  assert.throws(() => wt.softmax(a, { axis: 1.5 }), /attribute axis is an integer, got 1.5/);
  assert.throws(() => wt.op("softmax", [a], { axsi: 1 }), /op softmax has no attribute axsi \(attributes: axis\)/);
  assert.throws(() => wt.softmax(a, { axis: 5 }), wt.WebtensorError);
  assert.throws(() => a.to("tpu:0"), wt.WebtensorError);
  const i = wt.tensor(new Int32Array(3));
  assert.throws(() => { i.requiresGrad = true; }, /float/);
  a.dispose();
  b.dispose();
  i.dispose();
  assert.throws(() => a.shape, /tensor used after dispose\(\)/);
  assert.throws(() => wt.relu(a), /tensor used after dispose\(\)/);
  a.dispose(); // twice is harmless
});

test("tidy frees what it does not return, and nests", () => {
  const start = wt.liveTensors();
  const kept = wt.tidy(() => {
    const x = wt.ones({ shape: [3] });
    const inner = wt.tidy(() => x.add(1).mul(2));
    return { y: inner.add(x), n: 1 };
  });
  assert.equal(wt.liveTensors(), start + 1);
  assert.deepEqual(kept.y.dataSync(), new Float32Array([5, 5, 5]));
  kept.y.dispose();
  assert.throws(() => wt.tidy(() => { wt.ones({ shape: [1] }); throw new Error("boom"); }), /boom/);
  assert.throws(() => wt.tidy(async () => 1), /synchronous/);
  assert.equal(wt.liveTensors(), start);
});

test("leaks: 100,000 tensors made and disposed; the live count returns to where it started", async () => {
  // On a worker thread (where FFI calls are fast; it also checks the SDK works
  // there), then 10,000 more on the main thread.
  const { Worker } = await import("node:worker_threads");
  const w = new Worker(new URL("./leak-worker.mjs", import.meta.url), { workerData: { n: 100_000 } });
  const res = await new Promise((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
  assert.equal(res.end, res.start);
  const start = wt.liveTensors();
  const data = new Float32Array([1, 2, 3, 4]);
  for (let i = 0; i < 10_000; i++) {
    const t = wt.tensor(data, [2, 2]);
    if (i % 100 === 0) wt.tidy(() => {
      t.add(1);
    });
    t.dispose();
  }
  assert.equal(wt.liveTensors(), start);
});

test("the FinalizationRegistry frees dropped tensors and data() exports", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  // Earlier tests dropped a few tensors too: collect them first.
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  const start = wt.liveTensors();
  const exports = wt.liveDLPackExports();
  (() => {
    for (let i = 0; i < 1000; i++) wt.tensor(new Float32Array(16), [4, 4]);
  })();
  await (async () => {
    await wt.tensor(new Float32Array(16), [4, 4]).data();
  })();
  for (let i = 0; i < 20 && (wt.liveTensors() > start || wt.liveDLPackExports() > exports); i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(wt.liveTensors(), start);
  assert.equal(wt.liveDLPackExports(), exports);
});

test("a missing native library is a clear Error from init()", async () => {
  const { execFileSync } = await import("node:child_process");
  const script = 'import("webtensor").then((wt) => wt.init()).catch((e) => { console.log(e.message); process.exit(3); })';
  let out = "";
  try {
    execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: process.cwd(), env: { ...process.env, WEBTENSOR_LIBRARY: "/nonexistent/libwebtensor.so" }, encoding: "utf8",
    });
  } catch (e) {
    assert.equal(e.status, 3);
    out = e.stdout;
  }
  assert.match(out, /the native library \/nonexistent\/libwebtensor\.so is missing/);
});

test("threads: setNumThreads like torch.set_num_threads; results do not depend on it", () => {
  const before = wt.getNumThreads();
  assert.ok(before >= 1);
  const x = wt.tensor(Float32Array.from({ length: 1 << 16 }, (_, i) => Math.sin(i)));
  const want = wt.tidy(() => wt.sum(wt.exp(x)).item());
  try {
    wt.setNumThreads(1);
    assert.equal(wt.getNumThreads(), 1);
    assert.equal(wt.tidy(() => wt.sum(wt.exp(x)).item()), want);
    assert.throws(() => wt.setNumThreads(1.5), TypeError);
    assert.throws(() => wt.setNumThreads(1 << 20), /at most 65536/);
  } finally {
    wt.setNumThreads(0);
    wt.dispose([x]);
  }
  assert.equal(wt.getNumThreads(), before);
});
