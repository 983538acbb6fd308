// fromArray lends a typed array's memory to the library, which reads it
// through a raw pointer: the buffer must stay where it is for as long as
// the library uses it, whatever the program does with it (lend.ts).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import * as wt from "webtensor";

await wt.init();

test("a lent buffer transferred away and collected does not crash the next op (node --expose-gc)", () => {
  const child = fileURLToPath(new URL("./lend-child.mjs", import.meta.url));
  // Throws, naming the signal, if the child dies (it did: SIGSEGV).
  const stdout = execFileSync(process.execPath, ["--expose-gc", child], {
    encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000,
  });
  const out = JSON.parse(stdout.trim().split("\n").at(-1));
  const n = 1 << 20;
  assert.deepEqual(out.structuredClone, { sum: n, length: n }, "structuredClone copied the pinned buffer");
  assert.equal(out.structuredCloneShared, n + 2, "the array and the tensor still share memory");
  assert.deepEqual(out.postMessage, { sum: 2 * n, length: n }, "postMessage copied the pinned buffer");
  if ("transfer" in out) {
    assert.match(out.transfer, /^TypeError: webtensor: ArrayBuffer\.prototype\.transfer\(\): this buffer of 4194304 bytes is lent to a tensor/);
    assert.equal(out.transferSum, n);
  }
});

test("transfer() refuses a lent buffer while the library uses it, and allows it after", async () => {
  // Node 20 has no ArrayBuffer.prototype.transfer: a realm of our own gets a
  // stand-in that detaches nothing, to check the guard on every Node.
  const [arr, other] = runInNewContext(`
    ArrayBuffer.prototype.transfer = function transfer() { return "moved"; };
    [new Float32Array([1, 2, 3]), new Float32Array(2)];`);
  const t = wt.fromArray(arr);
  assert.throws(() => arr.buffer.transfer(), (e) => e instanceof TypeError &&
    /transfer\(\): this buffer of 12 bytes is lent to a tensor by fromArray\(\).*dispose the tensor first/.test(e.message));
  assert.equal(other.buffer.transfer(), "moved", "a buffer that is not lent is not affected");
  assert.equal(t.sum().item(), 6);
  t.dispose();
  for (let i = 0; i < 200 && (() => { try { arr.buffer.transfer(); return false; } catch { return true; } })(); i++) {
    wt.lentArrays(); // collects and sweeps
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(arr.buffer.transfer(), "moved", "released once the library let go");
});

test("a resizable ArrayBuffer is copied, not lent (it could shrink under the tensor)", () => {
  const buf = new ArrayBuffer(12, { maxByteLength: 64 });
  const arr = new Float32Array(buf);
  arr.set([1, 2, 3]);
  const t = wt.fromArray(arr);
  arr[0] = 100;
  buf.resize(0);
  assert.equal(t.sum().item(), 6);
  t.dispose();
});

test("a SharedArrayBuffer is lent as is (it cannot be detached)", () => {
  const arr = new Int32Array(new SharedArrayBuffer(12));
  arr.set([1, 2, 3]);
  const t = wt.fromArray(arr);
  arr[0] = 10;
  assert.equal(Number(t.sum().item()), 15);
  t.dispose();
});
