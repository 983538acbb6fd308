// wt.compile / wt.trace from Node: graph capture through the C ABI.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as wt from "webtensor";

await wt.init();

test("compile: replays a captured graph on new inputs, one graph per signature", async () => {
  const w = wt.tensor(new Float32Array([0.5, -1, 2, 0.25]));
  const f = (x) => {
    const y = x.mul(w).exp();
    x.sin(); // dead: dropped from the graph
    return [y.add(1), y.sum()];
  };
  const cf = wt.compile(f);
  cf(wt.tensor(new Float32Array([1, 2, 3, 4])));
  assert.equal(cf.graphs.size, 1);
  const text = String([...cf.graphs.values()][0]);
  assert.match(text, /exp\(/);
  assert.doesNotMatch(text, /sin\(/);
  const x2 = wt.tensor(new Float32Array([-1, 0, 1, 2]));
  const [a, b] = cf(x2);
  const [ea, eb] = f(x2);
  assert.deepEqual([...(await a.data())], [...(await ea.data())]);
  assert.ok(Math.abs((await b.data())[0] - (await eb.data())[0]) < 1e-5);
  cf(wt.tensor(new Float32Array(8), [2, 4]));
  assert.equal(cf.graphs.size, 2);
  for (const g of cf.graphs.values()) g.dispose();
  assert.throws(() => [...cf.graphs.values()][0].run(x2), /graph used after dispose/);
});

test("compile: errors leave no capture behind", () => {
  const outside = wt.tensor([1, 2]);
  assert.throws(() => wt.compile(() => 3)(wt.tensor([1])), /must return a Tensor/);
  assert.throws(() => wt.compile(() => outside)(wt.tensor([1])), /not computed/);
  assert.throws(() => wt.compile((x) => { throw new RangeError("boom"); })(wt.tensor([1])), /boom/);
  assert.throws(() => wt.compile((x) => x)(3), /argument 0 is not a Tensor/);
  const ok = wt.compile((x) => x.mul(3).sum())(wt.tensor([1, 2]));
  assert.equal(Number(ok.item()), 9);
});

test("compile: gradients flow through a replayed graph", async () => {
  const w = wt.tensor([2, 4]);
  const cf = wt.compile((x) => x.mul(w).tanh().sum());
  cf(wt.tensor([0.5, -0.25]));
  const x = wt.tensor([0.1, 0.3], undefined, { requiresGrad: true });
  cf(x).backward();
  const g = await x.grad.data();
  [0.1, 0.3].forEach((v, i) => {
    const want = (1 - Math.tanh(v * [2, 4][i]) ** 2) * [2, 4][i];
    assert.ok(Math.abs(g[i] - want) < 1e-5, `${g[i]} vs ${want}`);
  });
});

test("compile: a whole training step (forward, backward, the gradient) replays on new values", async () => {
  const x = wt.tensor(new Float32Array([0.5, -1, 2, 0.25]), [2, 2]);
  const step = (x, w) => {
    const loss = x.matmul(w).tanh().square().sum();
    loss.backward();
    return [loss, w.grad];
  };
  const cf = wt.compile(step);
  for (const seed of [1, 2, 3]) {
    const vals = new Float32Array(6).map((_, i) => Math.sin(seed * 7 + i));
    const [loss, grad] = cf(x, wt.tensor(vals, [2, 3], { requiresGrad: true }));
    const [wantLoss, wantGrad] = step(x, wt.tensor(vals, [2, 3], { requiresGrad: true }));
    assert.ok(Math.abs((await loss.data())[0] - (await wantLoss.data())[0]) < 1e-5);
    const g = await grad.data();
    const w = await wantGrad.data();
    g.forEach((v, i) => assert.ok(Math.abs(v - w[i]) < 1e-5, `grad ${i}: ${v} vs ${w[i]}`));
  }
  assert.equal(cf.graphs.size, 1);
});
