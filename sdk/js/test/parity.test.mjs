// The names the JS SDK shares with Python's (docs/parity.md): DType,
// UnsupportedError, isTensor, scope, synchronize, call, Plugin, nn's
// Identity, ModuleList, Parameter, BatchNorm, CrossEntropyLoss,
// MultiheadAttention and init, data's Dataset and defaultCollate,
// onnx.ValueInfo and wt.cuda. Expected values come from the Python SDK
// (same seed, same draws) or by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as wt from "webtensor";
import { settledLiveTensors } from "./helpers.mjs";

await wt.init();

const close = (got, want, tol, what) => {
  assert.equal(got.length, want.length, `${what}: length`);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= tol, `${what}[${i}]: ${g} vs ${want[i]}`));
};
const values = async (t) => [...(await t.data())].map(Number);

test("core: DType, UnsupportedError, isTensor, call, synchronize", async () => {
  assert.deepEqual({ ...wt.DType.float16 }, { name: "f16", code: 2, itemsize: 2, isFloating: true, isComplex: false });
  assert.equal(wt.DType.i64.itemsize, 8);
  assert.equal(wt.DType.bool.isFloating, false);
  const x = wt.tensor([1, 2, 3]);
  assert.ok(wt.isTensor(x));
  assert.ok(!wt.isTensor([1, 2, 3]));
  const s = wt.call("softmax", [x], { axis: 0 });
  assert.ok(s instanceof wt.Tensor, "one output: a Tensor");
  close(await values(s), [0.09003057, 0.24472847, 0.66524096], 1e-6, "softmax");
  const parts = wt.call("split", [wt.tensor([1, 2, 3, 4])], { sizes: [1, 3] });
  assert.ok(Array.isArray(parts) && parts.length === 2, "several outputs: an array");
  await wt.synchronize("cpu");
  // A device that does not open is a request the runtime cannot serve here.
  assert.throws(() => wt.tensor([1], undefined, { device: "cuda:7" }), (e) => e instanceof wt.UnsupportedError && e instanceof wt.WebtensorError
    && e.code === "WT_ERR_UNSUPPORTED");
  assert.throws(() => wt.call("softmax", [x], { dim: 0 }), /has no attribute dim/);
});

test("core: scope frees what it made except what it keeps", async () => {
  const before = await settledLiveTensors(wt);
  const s = wt.scope();
  let kept;
  try {
    const a = wt.tensor([1, 2]);
    const b = wt.add(a, 1);
    kept = s.keep(wt.mul(b, 2));
  } finally {
    s.close();
  }
  assert.equal(wt.liveTensors(), before + 1, "only the kept tensor lives");
  assert.equal(kept.isDisposed, false);
  const outer = wt.scope();
  const inner = wt.scope();
  assert.throws(() => outer.close(), /inner scope/);
  inner.keep(wt.tensor([3]));
  inner.close();
  outer.close();
  assert.equal(wt.liveTensors(), before + 1, "a tensor kept by an inner scope belongs to the outer one");
  kept.dispose();
  const s3 = wt.scope();
  const bn = new wt.nn.BatchNorm1d(2);
  s3.close();
  assert.ok([...bn.stateDict().values()].every((t) => !t.isDisposed), "a module's state outlives the scope it was built in");
  bn.dispose();
});

test("plugins: Plugin is a class; call of an op it lacks names its ops", () => {
  const p = new wt.Plugin("demo", ["demo.clip"]);
  assert.ok(p instanceof wt.Plugin);
  assert.deepEqual([...p.ops], ["demo.clip"]);
  assert.throws(() => p.call("nope", []), /plugin demo has no op nope \(ops: demo.clip\)/);
});

test("nn.init: the runtime's draws, in place, with torch's statistics", async () => {
  const t = wt.zeros({ shape: [64, 128] });
  wt.manualSeed(9);
  assert.equal(wt.nn.init.xavierUniform_(t), t, "returns its argument");
  const a = Math.sqrt(6 / 192);
  wt.manualSeed(9);
  const u = await values(wt.rand({ shape: [64, 128] }));
  const got = await values(t);
  close(got, u.map((v) => v * 2 * a - a), 1e-6, "xavier_uniform = rand scaled");
  const mean = got.reduce((s, v) => s + v, 0) / got.length;
  const variance = got.reduce((s, v) => s + (v - mean) ** 2, 0) / got.length;
  assert.ok(Math.abs(mean) < 0.01 && Math.abs(variance / (a * a / 3) - 1) < 0.1, `mean ${mean}, var ${variance}`);

  const n = wt.zeros({ shape: [100, 50] });
  wt.nn.init.kaimingNormal_(n, { mode: "fan_out", nonlinearity: "relu" });
  const k = await values(n);
  const std = Math.sqrt(k.reduce((s, v) => s + v * v, 0) / k.length);
  assert.ok(Math.abs(std / (Math.SQRT2 / 10) - 1) < 0.05, `kaiming_normal std ${std}`);

  const p = new wt.nn.Parameter(wt.tensor([1, 2, 3]));
  assert.ok(p instanceof wt.Tensor && p.requiresGrad);
  wt.nn.init.constant_(p, 0.5);
  assert.ok(p.requiresGrad, "a parameter stays trainable");
  assert.deepEqual(await values(p), [0.5, 0.5, 0.5]);
  wt.nn.init.normal_(p, 2, 0);
  assert.deepEqual(await values(p), [2, 2, 2]);
  wt.nn.init.uniform_(p, 4, 4);
  assert.deepEqual(await values(p), [4, 4, 4]);
  wt.nn.init.kaimingUniform_(wt.zeros({ shape: [3, 3] }));
  wt.nn.init.xavierNormal_(wt.zeros({ shape: [3, 3] }), 2);

  assert.equal(wt.nn.init.calculateGain("tanh"), 5 / 3);
  assert.equal(wt.nn.init.calculateGain("leaky_relu"), Math.sqrt(2 / (1 + 0.01 ** 2)));
  assert.equal(wt.nn.init.calculateGain("leaky_relu", 0), Math.SQRT2);
  assert.throws(() => wt.nn.init.calculateGain("softsign"), /unsupported nonlinearity "softsign"/);
  assert.throws(() => wt.nn.init.xavierUniform_(wt.zeros({ shape: [3] })), /at least 2 dims/);
});

test("nn: Identity, ModuleList, and Sequential through an Identity", async () => {
  const id = new wt.nn.Identity(3, "ignored");
  const x = wt.tensor([[1, -2]]);
  assert.equal(id.call(x), x);
  const seq = new wt.nn.Sequential(new wt.nn.ReLU(), new wt.nn.Identity(), new wt.nn.Tanh());
  close(await values(seq.call(x)), [Math.tanh(1), 0], 1e-6, "relu, identity, tanh");
  wt.manualSeed(1);
  const list = new wt.nn.ModuleList([new wt.nn.Linear(2, 3)]).append(new wt.nn.Linear(3, 1));
  assert.equal(list.length, 2);
  assert.ok(list.at(-1) instanceof wt.nn.Linear);
  assert.deepEqual([...list.stateDict().keys()], ["0.weight", "0.bias", "1.weight", "1.bias"]);
  assert.equal([...list].length, 2);
  assert.throws(() => list.call(x), /ModuleList does not define forward/);
});

test("nn: BatchNorm1d/2d as the Python SDK: batch statistics, running ones in place, eval, state names", async () => {
  const bn = new wt.nn.BatchNorm1d(2);
  const rm = bn.buffer("running_mean");
  const x = wt.tensor([[1, 2], [3, 6], [5, 10]]);
  close(await values(bn.call(x)), [-1.2247425, -1.2247443, 0, 0, 1.2247425, 1.2247443], 1e-6, "training output");
  close(await values(rm), [0.3, 0.6], 1e-7, "running_mean, updated behind the same handle");
  close(await values(bn.buffer("running_var")), [1.3, 2.5], 1e-6, "running_var (unbiased batch variance)");
  assert.deepEqual(await values(bn.buffer("num_batches_tracked")), [1]);
  assert.deepEqual([...bn.stateDict().keys()], ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);
  assert.deepEqual(bn.parameters().length, 2, "buffers are not parameters");
  bn.eval();
  close(await values(bn.call(x)), [0.61393827, 0.885436, 2.3680477, 3.4152532, 4.122157, 5.9450698], 1e-5, "eval output");

  const c = new wt.nn.BatchNorm2d(2, { momentum: null });
  const x2 = wt.tensor([[[[1, 2], [3, 4]], [[0, 0], [2, 2]]], [[[5, 6], [7, 8]], [[4, 4], [6, 6]]]]);
  c.call(x2);
  c.call(wt.mul(x2, 2));
  close(await values(c.buffer("running_mean")), [6.75, 4.5], 1e-6, "cumulative mean");
  close(await values(c.buffer("running_var")), [15, 14.285714], 1e-5, "cumulative var");
  assert.deepEqual(await values(c.buffer("num_batches_tracked")), [2]);
  const plain = new wt.nn.BatchNorm1d(2, { trackRunningStats: false, affine: false });
  assert.deepEqual([...plain.stateDict().keys()], []);
  close(await values(plain.call(x)), [-1.2247425, -1.2247443, 0, 0, 1.2247425, 1.2247443], 1e-6, "batch statistics always");
});

test("nn: CrossEntropyLoss is the cross_entropy op", async () => {
  const w = wt.tensor([1, 2, 0.5]);
  const ce = new wt.nn.CrossEntropyLoss({ weight: w, labelSmoothing: 0.1 });
  const logits = wt.tensor([[1, 2, 0.5], [0.1, -1, 3]]);
  const target = wt.tensor([1n, 2n]);
  const got = await values(ce.call(logits, target));
  close(got, [0.54072487], 1e-6, "loss (Python SDK)");
  close(got, await values(wt.crossEntropy(logits, target, w, { labelSmoothing: 0.1 })), 0, "the op");
  assert.deepEqual([...ce.stateDict().keys()], ["weight"]);
  const none = new wt.nn.CrossEntropyLoss({ reduction: "none" });
  assert.deepEqual(none.call(logits, target).shape, [2]);
});

test("nn: MultiheadAttention gives the Python SDK's outputs for the same seed", async () => {
  wt.manualSeed(5);
  const m = new wt.nn.MultiheadAttention(4, 2, { batchFirst: true });
  assert.deepEqual([...m.stateDict().keys()], ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]);
  close((await values(m.param("in_proj_weight"))).slice(0, 4), [0.3257603, -0.5269992, 0.5924541, 0.5703967], 1e-6, "xavier draws");
  const x = wt.tensor([[[1, 0, -1, 2], [0.5, 1, 0, -1], [2, -2, 1, 0]]]);
  const [out, w] = m.call(x, x, x);
  close(await values(out), [-0.32270172, 0.06918649, -0.59030372, -0.17267956, 0.11404064, -0.02887913, -0.19399205, -0.01561788,
    -0.31976902, -0.11270087, -0.42561251, -0.14123231], 2e-6, "output");
  close(await values(w), [0.20761265, 0.31129414, 0.48109323, 0.41302809, 0.38532394, 0.20164797, 0.51743466, 0.10112087, 0.38144445],
    2e-6, "weights averaged over heads");
  const [out2, w2] = m.call(x, x, x, { keyPaddingMask: wt.tensor([[false, false, true]]), averageAttnWeights: false });
  assert.deepEqual(w2.shape, [1, 2, 3, 3]);
  close(await values(out2), [-0.09873639, -0.04982814, -0.51756215, -0.0374608, 0.27396113, -0.08762029, -0.0777414, 0.05539323,
    -0.10993627, -0.36513287, -0.28774554, 0.05528916], 2e-6, "output, padding masked");
  close((await values(w2)).filter((_, i) => i % 3 === 2), [0, 0, 0, 0, 0, 0], 0, "no weight on the padded key");
  const [out3, none] = m.call(x, x, x, { needWeights: false, isCausal: true });
  assert.equal(none, null);
  close(await values(out3), [-0.13044554, -0.46673027, -0.23232211, 0.08148183, 0.27396113, -0.08762028, -0.0777414, 0.05539322,
    -0.31976902, -0.11270089, -0.42561251, -0.14123231], 2e-6, "fused causal attention");
  // (L, N, E) by default, and unbatched (L, E).
  const seqFirst = new wt.nn.MultiheadAttention(4, 2);
  seqFirst.loadStateDict(m.stateDict());
  const [o4] = seqFirst.call(wt.transpose(x, { dim0: 0, dim1: 1 }), wt.transpose(x, { dim0: 0, dim1: 1 }), wt.transpose(x, { dim0: 0, dim1: 1 }));
  assert.deepEqual(o4.shape, [3, 1, 4]);
  const x2d = wt.reshape(x, { shape: [3, 4] });
  const [o5, w5] = seqFirst.call(x2d, x2d, x2d);
  assert.deepEqual([o5.shape, w5.shape], [[3, 4], [3, 3]]);
  close(await values(o5), await values(out), 2e-6, "unbatched = batched");
  assert.throws(() => new wt.nn.MultiheadAttention(5, 2), /positive multiple of numHeads/);
});

class Squares extends wt.data.Dataset {
  get length() {
    return 5;
  }

  async get(i) {
    return [wt.tensor([i, i * i]), i];
  }
}

test("data: a JavaScript Dataset loads in the runtime's shuffle order; defaultCollate stacks", async () => {
  const loader = new wt.data.DataLoader(new Squares(), { batchSize: 2, shuffle: true, seed: 3, numWorkers: 2 });
  assert.equal(loader.length, 3);
  const order = wt.data.permutation(5, 3, 0);
  const seen = [];
  for await (const [x, y] of loader) {
    assert.equal(y.dtype, "i64", "integer labels collate to i64, as Python ints");
    const ys = (await values(y));
    seen.push(...ys);
    const xs = await values(x);
    assert.deepEqual(xs, ys.flatMap((i) => [i, i * i]));
  }
  assert.deepEqual(seen, order);
  const again = [];
  for await (const [, y] of loader) again.push(...(await values(y)));
  assert.deepEqual(again, wt.data.permutation(5, 3, 1), "the next pass is the next epoch");
  const dropped = new wt.data.DataLoader(new Squares(), { batchSize: 2, dropLast: true });
  assert.equal(dropped.length, 2);

  const batch = wt.data.defaultCollate([{ a: 1.5, b: [true, "x"] }, { a: 2, b: [false, "y"] }]);
  assert.equal(batch.a.dtype, "f32");
  assert.deepEqual(await values(batch.a), [1.5, 2]);
  assert.equal(batch.b[0].dtype, "bool");
  assert.deepEqual(batch.b[1], ["x", "y"]);

  const ds = wt.data.TensorDataset([wt.tensor([[1, 2], [3, 4], [5, 6]])], ["x"]);
  assert.ok(ds instanceof wt.data.Dataset);
  const summed = new wt.data.DataLoader(ds, { batchSize: 3, collateFn: (records) => wt.sum(wt.stack(records.map((r) => r[0]))) });
  for await (const s of summed) assert.deepEqual(await values(s), [21]);
});

test("onnx: ValueInfo is a class", () => {
  const v = new wt.onnx.ValueInfo("x", "f32", [1, "batch", null]);
  assert.ok(Object.isFrozen(v) && Object.isFrozen(v.shape));
  assert.deepEqual([v.name, v.dtype, v.shape], ["x", "f32", [1, "batch", null]]);
});

test("cuda: the runtime's answers, on a CUDA machine or not", async () => {
  const here = wt.devices().filter((d) => d.startsWith("cuda"));
  assert.equal(wt.cuda.deviceCount(), here.length);
  assert.equal(wt.cuda.isAvailable(), here.length > 0);
  assert.throws(() => wt.cuda.getDeviceProperties("cpu"), /not a CUDA device/);
  if (!wt.cuda.isAvailable()) {
    // Each call that needs the device says why it does not open.
    for (const f of [wt.cuda.getDeviceProperties, wt.cuda.memoryAllocated, wt.cuda.emptyCache, wt.cuda.currentStream]) {
      assert.throws(() => f(), (e) => e instanceof wt.UnsupportedError && /cuda/.test(e.message));
    }
    await assert.rejects(wt.cuda.synchronize(), wt.UnsupportedError);
    return;
  }
  const p = wt.cuda.getDeviceProperties();
  assert.equal(typeof p.cuda, "object");
  const x = wt.ones({ shape: [1024, 1024], device: "cuda" });
  await wt.cuda.synchronize();
  assert.ok(wt.cuda.memoryAllocated() >= 4 * 1024 * 1024);
  assert.ok(wt.cuda.memoryReserved() >= wt.cuda.memoryAllocated());
  assert.equal(typeof wt.cuda.memoryStats().PeakAllocated, "number");
  wt.cuda.setAllowTF32(true);
  assert.equal(wt.cuda.getDeviceProperties().allow_tf32, true);
  wt.cuda.setAllowTF32(false);
  assert.equal(typeof wt.cuda.currentStream(), "bigint");
  x.dispose();
  wt.cuda.emptyCache();
});
