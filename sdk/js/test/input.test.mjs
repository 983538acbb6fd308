// What JavaScript callers hand the SDK is checked before it reaches the
// library (src/check.ts): JavaScript would otherwise convert it silently
// ("hello" became [NaN], an unknown option was dropped, 300 became 44).
// Each refusal is a TypeError (wrong kind) or RangeError (out of range)
// naming the value.

import { test } from "node:test";
import assert from "node:assert/strict";
import { runInNewContext } from "node:vm";
import * as wt from "webtensor";

await wt.init();

const throwsLike = (f, type, re) => assert.throws(f, (e) => e instanceof type && re.test(e.message), `${type.name} ${re}`);

test("tensor() refuses elements that are not numbers, booleans or bigints, naming where they are", () => {
  throwsLike(() => wt.tensor("hello"), TypeError, /tensor\(\): the scalar is "hello"; elements are numbers, booleans or bigints/);
  throwsLike(() => wt.tensor([1, "a"]), TypeError, /element \[1\] is "a"/);
  throwsLike(() => wt.tensor([[1, 2], [3, null]]), TypeError, /element \[1\]\[1\] is null/);
  throwsLike(() => wt.tensor([[1], [{}]]), TypeError, /element \[1\]\[0\] is an Object/);
  throwsLike(() => wt.tensor(undefined), TypeError, /the scalar is undefined/);
  throwsLike(() => wt.tensor(new DataView(new ArrayBuffer(4))), TypeError, /a DataView has no webtensor dtype/);
  assert.deepEqual([...wt.tensor([1, true, 2n]).dataSync()], [1, 1, 2], "numbers, booleans and bigints mix");
});

test("integer dtypes refuse values they cannot hold; bool holds truthiness", () => {
  throwsLike(() => wt.tensor([NaN], undefined, { dtype: "i64" }), RangeError, /element \[0\] is NaN, which an i64 tensor cannot hold/);
  throwsLike(() => wt.tensor([1, 300], undefined, { dtype: "u8" }), RangeError, /element \[1\] is 300, outside the range of u8 \[0, 255\]/);
  throwsLike(() => wt.tensor([-1], undefined, { dtype: "u32" }), RangeError, /outside the range of u32/);
  throwsLike(() => wt.tensor([2n ** 63n], undefined, { dtype: "i64" }), RangeError, /9223372036854775808n, outside the range of i64/);
  throwsLike(() => wt.tensor(Infinity, [], { dtype: "i32" }), RangeError, /the scalar is Infinity/);
  assert.deepEqual([...wt.tensor([1.7, -1.7], undefined, { dtype: "i32" }).dataSync()], [1, -1], "truncated toward zero, as PyTorch");
  assert.deepEqual([...wt.tensor([2, 0, -0.5, NaN], undefined, { dtype: "bool" }).dataSync()], [1, 0, 1, 0]);
  assert.deepEqual([...wt.tensor([-(2n ** 63n)], undefined, { dtype: "i64" }).dataSync()], [-(2n ** 63n)]);
});

test("unknown options and attributes are TypeErrors naming them, requiresGrad on a creation op included", () => {
  const x = wt.tensor([1, 2]);
  throwsLike(() => wt.zeros({ shape: [2], requiresGrad: true }), TypeError,
    /zeros: unknown attribute "requiresGrad" \(attributes: shape, dtype, device\); set requiresGrad on the result \(t\.requiresGrad = true\)/);
  throwsLike(() => wt.sum(x, { axs: [0] }), TypeError, /sum: unknown attribute "axs" \(attributes: axes, keepdim\)/);
  throwsLike(() => x.sum({ keepDim: true }), TypeError, /sum: unknown attribute "keepDim"/);
  throwsLike(() => wt.relu(x, { axis: 0 }), TypeError, /relu: unknown attribute "axis" \(it takes none\)/);
  throwsLike(() => x.relu({ inplace: true }), TypeError, /relu: unknown attribute "inplace"/);
  throwsLike(() => wt.sum(x, [0]), TypeError, /sum: attributes come in an object \(axes, keepdim\), got \[0\]/);
  throwsLike(() => wt.op("softmax", [x], { axsi: 1 }), TypeError, /op softmax has no attribute axsi \(attributes: axis\)/);
  throwsLike(() => wt.tensor([1], undefined, { requiresgrad: true }), TypeError,
    /tensor\(\): unknown option "requiresgrad" \(options: dtype, device, requiresGrad\)/);
  throwsLike(() => wt.tensor([1], undefined, { requiresGrad: "yes" }), TypeError, /requiresGrad is a boolean, got "yes"/);
  throwsLike(() => wt.fromArray(new Float32Array(1), [1], { device: "cpu" }), TypeError, /fromArray\(\): unknown option "device"/);
  // What is known still works, and null/undefined values are left out.
  assert.deepEqual([...wt.sum(x, { axes: [0], keepdim: undefined }).dataSync()], [3]);
  const z = wt.zeros({ shape: [2] });
  z.requiresGrad = true;
  assert.equal(z.requiresGrad, true);
});

test("more than 64 dimensions is a RangeError; 64 is fine", () => {
  const one = (n) => Array(n).fill(1);
  throwsLike(() => wt.tensor(new Float32Array(1), one(65)), RangeError, /shape has 65 dimensions, more than the 64 a tensor may have/);
  throwsLike(() => wt.fromArray(new Float32Array(1), one(65)), RangeError, /65 dimensions/);
  throwsLike(() => wt.zeros({ shape: one(65) }), RangeError, /zeros: attribute shape has 65 dimensions/);
  throwsLike(() => wt.reshape(wt.tensor([1]), { shape: one(65) }), RangeError, /reshape: attribute shape has 65 dimensions/);
  let nested = 1;
  for (let i = 0; i < 65; i++) nested = [nested];
  throwsLike(() => wt.tensor(nested), RangeError, /arrays nested more than 64 deep/);
  let deep = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  throwsLike(() => wt.tensor(deep), RangeError, /nested more than 64 deep/);
  assert.equal(wt.tensor(new Float32Array([5]), one(64)).ndim, 64);
  assert.equal(wt.zeros({ shape: one(64) }).ndim, 64);
});

test("typed arrays from another realm keep their dtype", () => {
  const [f, i] = runInNewContext("[new Float32Array([1, 2]), new Int32Array([3])]");
  assert.equal(wt.tensor(f).dtype, "f32");
  assert.equal(wt.fromArray(i).dtype, "i32");
});
