// Run by lend.test.mjs as `node --expose-gc lend-child.mjs`, in a process of
// its own so that a crash (the bug was SIGSEGV) fails that test instead of
// killing the runner: each scenario lends an array with fromArray, tries to
// detach its buffer, collects, and uses the tensor. Prints one JSON line.
import { MessageChannel } from "node:worker_threads";
import * as wt from "webtensor";

await wt.init();
const collect = () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    new Float32Array(1 << 20).fill(7); // reuse what was freed, if anything was
  }
};
const n = 1 << 20;
const out = {};

let a = new Float32Array(n).fill(1);
let t = wt.fromArray(a);
structuredClone(a.buffer, { transfer: [a.buffer] });
collect();
out.structuredClone = { sum: t.sum().item(), length: a.length };
a[0] = 3; // still shared both ways
out.structuredCloneShared = t.sum().item();
t.dispose();

a = new Float32Array(n).fill(2);
t = wt.fromArray(a);
const { port1, port2 } = new MessageChannel();
port1.postMessage(a.buffer, [a.buffer]);
port1.close();
port2.close();
collect();
out.postMessage = { sum: t.sum().item(), length: a.length };
t.dispose();

if (typeof ArrayBuffer.prototype.transfer === "function") {
  a = new Float32Array(n).fill(1);
  t = wt.fromArray(a);
  try {
    a.buffer.transfer();
    out.transfer = "detached";
  } catch (e) {
    out.transfer = `${e.constructor.name}: ${e.message}`;
  }
  collect();
  out.transferSum = t.sum().item();
}
console.log(JSON.stringify(out));
