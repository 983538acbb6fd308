// wt.nn, wt.optim, checkpoints and plugins from Node.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as wt from "webtensor";
import { loadsCheckpoint, trainMLP } from "./cases.mjs";

await wt.init();

test("nn: Linear draws torch's init from the seed and computes x W^T + b", async () => {
  wt.manualSeed(7);
  const l = new wt.nn.Linear(3, 2);
  assert.deepEqual(l.namedParameters().map(([n, p]) => [n, [...p.shape], p.requiresGrad]),
    [["weight", [2, 3], true], ["bias", [2], true]]);
  const w = await l.param("weight").data();
  for (const v of w) assert.ok(Math.abs(v) <= 1 / Math.sqrt(3), `weight ${v} within U(+-1/sqrt(3))`);
  const x = wt.tensor([[1, 2, 3]]);
  const y = await l.call(x).data();
  const b = await l.param("bias").data();
  for (let o = 0; o < 2; o++) {
    const want = w[3 * o] + 2 * w[3 * o + 1] + 3 * w[3 * o + 2] + b[o];
    assert.ok(Math.abs(y[o] - want) < 1e-5);
  }
  wt.manualSeed(7);
  const again = new wt.nn.Linear(3, 2);
  assert.deepEqual([...(await again.param("weight").data())], [...w], "same seed, same weights");
  wt.dispose([x, l.parameters(), again.parameters()]);
});

test("nn: Sequential names parameters as PyTorch and trains with every optimizer", async () => {
  for (const make of [
    (ps) => new wt.optim.SGD(ps, { lr: 0.1, momentum: 0.9 }),
    (ps) => new wt.optim.Adam(ps, { lr: 0.05 }),
    (ps) => new wt.optim.AdamW(ps, { lr: 0.05 }),
  ]) {
    wt.manualSeed(1);
    const model = new wt.nn.Sequential(new wt.nn.Linear(2, 8), new wt.nn.Tanh(), new wt.nn.Linear(8, 1));
    assert.deepEqual([...model.stateDict().keys()], ["0.weight", "0.bias", "2.weight", "2.bias"]);
    const x = wt.randn({ shape: [64, 2] });
    const y = wt.tidy(() => wt.sum(x, { axes: [1], keepdim: true }));
    const opt = make(model.parameters());
    const p0 = model.parameters()[0];
    let first = 0, last = 0;
    for (let i = 0; i < 40; i++) {
      opt.zeroGrad();
      const loss = wt.tidy(() => wt.mseLoss(model.call(x), y));
      loss.backward();
      last = Number(loss.item());
      if (i === 0) first = last;
      loss.dispose();
      opt.step();
    }
    assert.equal(model.parameters()[0], p0, "parameters keep their identity through steps");
    assert.ok(last < first / 4, `${opt.constructor.name}: loss ${first} -> ${last}`);
    opt.dispose();
    model.dispose();
    wt.dispose([x, y]);
  }
});

test("optim: Adam matches torch's equations step by step", async () => {
  // One parameter, gradient 2p: torch gives p1 = p0 - lr * m1_hat / (sqrt(v1_hat) + eps) = p0 - lr * sign
  const p = wt.tensor([3]);
  p.requiresGrad = true;
  const opt = new wt.optim.Adam([p], { lr: 0.1 });
  const loss = wt.sum(wt.square(p));
  loss.backward();
  opt.step();
  assert.ok(Math.abs((await p.data())[0] - 2.9) < 1e-6);
  assert.throws(() => new wt.optim.Adam([p], { betas: [1, 0.9] }), /invalid beta parameter at index 0: 1/);
  assert.throws(() => new wt.optim.SGD([], {}), /no parameters/);
  wt.dispose([p, loss]);
  opt.dispose();
});

test("checkpoints: bytes as Go and Python write them, strict loading, files", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wt-js-"));
  try {
    const { losses, checkpoint } = await trainMLP(wt, "cpu");
    assert.equal(losses.length, 20);
    assert.ok(losses[19] < losses[0]);
    const hl = Number(new DataView(checkpoint.buffer).getBigUint64(0, true));
    const header = new TextDecoder().decode(checkpoint.subarray(8, 8 + hl));
    assert.equal((8 + hl) % 8, 0, "header padded to 8 bytes");
    assert.match(header, /^\{"0\.bias":\{"dtype":"F32","shape":\[16\],"data_offsets":\[0,64\]\},"0\.weight"/);
    assert.match(header, /"__metadata__":\{"format":"pt"\}\}\s*$/);
    assert.equal(loadsCheckpoint(wt, checkpoint), "ok");
    const bad = new wt.nn.Sequential(new wt.nn.Linear(4, 8));
    assert.throws(() => bad.loadStateDict(wt.load(checkpoint)),
      /loadStateDict: the state dict does not match the Sequential \(3 problem\(s\)\):\n  0\.weight: shape \[16, 4\] in state dict, \[8, 4\] in module\n.*\n  not in module: 2\.bias, 2\.weight/s);
    assert.throws(() => wt.load(checkpoint.subarray(0, 20)), /exceeds the file \(20 bytes\)/);
    const path = join(dir, "m.safetensors");
    const model = new wt.nn.Sequential(new wt.nn.Linear(4, 16), new wt.nn.ReLU(), new wt.nn.Linear(16, 3));
    await wt.saveFile(model, path);
    const back = wt.loadFile(path);
    assert.deepEqual([...(await back.get("0.bias").data())], [...(await model.stateDict().get("0.bias").data())]);
    assert.deepEqual(new Uint8Array(readFileSync(path)), await wt.save(model), "saveFile writes save()'s bytes");
    writeFileSync(join(dir, "junk.safetensors"), "junk");
    assert.throws(() => wt.loadFile(join(dir, "junk.safetensors")), /junk\.safetensors: safetensors: file is 4 bytes, too short/);
    wt.dispose([...back.values()]);
    model.dispose();
    bad.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("plugins: a WebAssembly plugin's ops run from Node, with autograd", { skip: !process.env.WEBTENSOR_TEST_PLUGIN && "WEBTENSOR_TEST_PLUGIN (build/plugins/cclip.wasm from `make plugins`) is not set" }, async () => {
  const p = wt.loadPlugin(process.env.WEBTENSOR_TEST_PLUGIN);
  assert.equal(p.name, "cclip");
  assert.ok(p.ops.includes("cclip.soft_clip"));
  const x = wt.tensor([-3, 0.5, 4]);
  x.requiresGrad = true;
  const [y] = p.call("soft_clip", [x], { limit: 2 });
  const got = [...(await y.data())];
  [-3, 0.5, 4].forEach((v, i) => assert.ok(Math.abs(got[i] - 2 * Math.tanh(v / 2)) < 1e-5));
  wt.sum(y).backward();
  const g = [...(await x.grad.data())];
  [-3, 0.5, 4].forEach((v, i) => assert.ok(Math.abs(g[i] - (1 - Math.tanh(v / 2) ** 2)) < 1e-5));
  const n = wt.op1("cclip.count_above", [x], { threshold: 0.25 });
  assert.equal(Number(n.item()), 2);
  assert.throws(() => p.call("nope", [x]), /plugin cclip has no op nope/);
  assert.throws(() => wt.loadPlugin(new Uint8Array([0, 97, 115, 109, 9, 9])), /WebtensorError|wasm|malformed|magic|version/i);
  assert.throws(() => wt.loadPlugin("/nonexistent/x.wasm"), /cannot read plugin/);
});

test("fromArray: a CPU tensor shares the typed array's memory both ways, and lets go of it", async () => {
  const before = wt.lentArrays();
  const arr = new Float32Array([1, 2, 3, 4, 5, 6]);
  const t = wt.fromArray(arr, [2, 3]);
  assert.equal(t.device, "cpu");
  arr[0] = 10; // the array's write is the tensor's
  const y = wt.mul(t, 2);
  assert.deepEqual([...(await y.data())], [20, 4, 6, 8, 10, 12]);
  assert.throws(() => wt.fromArray(arr, [4]), /shape \[4\] holds 4 elements, the array has 6/);
  assert.throws(() => wt.fromArray(new Int32Array(2), [2], { dtype: "f32" }), /Int32Array holds i32, not f32/);
  assert.throws(() => wt.fromArray([1, 2]), /takes a typed array/);
  const h = wt.fromArray(new Uint16Array([0x3c00]), [1], { dtype: "f16" });
  const h32 = wt.cast(h, { dtype: "f32" });
  assert.equal(Number(h32.item()), 1);
  // The tensor's writes are the array's: through a zero-copy view of it.
  const shared = new Int32Array([1, 2, 3]);
  const s = wt.fromArray(shared);
  const view = await s.data();
  view[2] = 30;
  assert.equal(shared[2], 30);
  wt.dispose([t, y, h, h32, s]);
  let lent = wt.lentArrays();
  for (let i = 0; i < 200 && lent > before + 1; i++) {
    await new Promise((r) => setTimeout(r, 10));
    lent = wt.lentArrays();
  }
  // Released: arr and the f16 bits. Still lent: shared, whose memory the live view exports.
  assert.equal(lent, before + 1, "every lent array is released once nothing uses it");
  assert.equal(view[0], 1);
});

test("tuning policies: the default one ships in the package and loads; the CPU tunes nothing", () => {
  wt.setTuningPolicy("default");
  wt.setTuningPolicy("default"); // loaded once, set again
  wt.setTuningPolicy(null);
  assert.deepEqual(wt.deviceTuning("cpu"), {});
  assert.throws(() => wt.setTuningPolicy("/no/such/policy.wasm"), /cannot read plugin/);
});
