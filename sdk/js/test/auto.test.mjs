// wt.auto from Node: the auto-agents through the C ABI. The data agent
// tunes a DataLoader over PNGs decoded at every read (a record cache beats
// a decode by far more than the 10% margin on any machine); the kernel
// agent a compiled function. The policy is $WEBTENSOR_AUTO_POLICY, else
// the package's, else build/plugins/policy-auto.wasm found from the
// working folder.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import * as wt from "webtensor";

await wt.init();

const policy = (agent) => (process.env.WEBTENSOR_AUTO_POLICY ? `${process.env.WEBTENSOR_AUTO_POLICY}#${agent}` : undefined);

// A minimal RGB PNG: 8-bit, no interlace, filter 0 on every row.
function png(w, h, rgb) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind, data) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(kind, 4, "latin1");
    data.copy(out, 8);
    out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) rgb.copy(raw, y * (1 + 3 * w) + 1, y * 3 * w, (y + 1) * 3 * w);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

function photos() {
  const root = join(mkdtempSync(join(tmpdir(), "wt-auto-")), "photos");
  let seed = 1;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 8) & 0xff;
  for (let c = 0; c < 2; c++) {
    mkdirSync(join(root, `c${c}`), { recursive: true });
    for (let i = 0; i < 16; i++) {
      writeFileSync(join(root, `c${c}`, `${String(i).padStart(2, "0")}.png`), png(48, 48, Buffer.from(Array.from({ length: 48 * 48 * 3 }, rand))));
    }
  }
  return root;
}

async function labels(loader) {
  const out = [];
  for await (const [, y] of loader) out.push([...(await y.data())].map(Number));
  return out;
}

test("auto.tune: keeps a cache of decoded images, journals it, rolls it back", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wt-auto-journal-"));
  const loader = new wt.data.DataLoader(wt.data.imageFolder(photos()), { batchSize: 8, shuffle: true, seed: 1 });
  const before = await labels(loader);
  const report = wt.auto.tune(loader, { name: "photos", dir, runs: 5, policy: policy("data") });
  const first = report.decisions[0];
  assert.equal(first.what, "data.photos.cache=on");
  assert.equal(first.verdict, "kept", first.reason);
  assert.equal(report.pipeline_before.cache, false);
  assert.equal(report.pipeline_after.cache, true);
  assert.ok(report.samples_per_s_after > report.samples_per_s_before);
  loader.setEpoch(0);
  assert.deepEqual(await labels(loader), before, "the same samples in the same order");

  const [rec] = wt.auto.journal({ dir, ids: [first.id] });
  assert.equal(rec.policy, "auto.data");
  assert.equal(rec.guard.ok, true);
  const undo = wt.auto.rollback(first.id, { dir });
  assert.equal(wt.auto.journal({ dir, ids: [undo] })[0].of, first.id);
  const again = wt.auto.tune(loader, { name: "photos", dir, measure: false });
  assert.deepEqual(again.decisions, []);
  assert.equal(again.pipeline_after.cache, false);
  assert.throws(() => wt.auto.rollback(first.id, { dir }), /already rolled back/);
  assert.throws(() => wt.auto.rollback("d0099", { dir }), /no decision "d0099"/);
  loader.dispose();
});

test("auto.tuneGraph: the kernel agent's decisions on a compiled function", () => {
  const dir = mkdtempSync(join(tmpdir(), "wt-auto-graph-"));
  const threads = wt.getNumThreads();
  try {
    const f = wt.compile((x) => x.mul(x).add(1).relu());
    const x = wt.tensor(new Float32Array(64).map((_, i) => i / 32 - 1));
    const report = wt.auto.tuneGraph(f, [x], { name: "poly", dir, runs: 3, policy: policy("kernel") });
    assert.equal(report.workload, "poly");
    assert.ok(report.repeat >= 1);
    assert.ok("cpu.threads" in report.settings);
    for (const [k, v] of Object.entries(report.cached)) assert.equal(report.settings[k], v);
    assert.deepEqual(wt.auto.journal({ dir }).map((r) => r.id), report.decisions.map((d) => d.id));
  } finally {
    wt.setNumThreads(threads);
  }
});

test("auto.planParallel: every plan of a compiled model priced on a described cluster", () => {
  const cluster = {
    devices: [
      { name: "cpu", kind: "cpu", gflops: 40, gbps: 10, memory_bytes: 1e9 },
      { name: "proc0", kind: "process", gflops: 20, gbps: 10, memory_bytes: 1e9 },
      { name: "proc1", kind: "process", gflops: 20, gbps: 10, memory_bytes: 1e9 },
    ],
    links: [
      { a: "parent", b: "proc0", gbps: 1, latency_us: 50 },
      { a: "parent", b: "proc1", gbps: 1, latency_us: 50 },
    ],
  };
  const w1 = wt.tensor(new Float32Array(16 * 32).fill(1), [16, 32], { requiresGrad: true });
  const w2 = wt.tensor(new Float32Array(32 * 8).fill(1), [32, 8], { requiresGrad: true });
  const f = wt.compile((x) => x.matmul(w1).relu().matmul(w2));
  const x = wt.tensor(new Float32Array(8 * 16).fill(1), [8, 16]);
  const report = wt.auto.planParallel(f, [x], { cluster });
  assert.ok(report.chosen && report.chosen.feasible);
  const kinds = new Set(report.candidates.map((p) => `${p.strategy}x${p.degree}`));
  assert.ok(kinds.has("tensorx2") && kinds.has("sequencex2"), [...kinds].join(" "));
  for (const p of report.candidates) assert.ok(p.feasible || p.why, JSON.stringify(p));
  const tiny = { devices: [{ name: "cpu", kind: "cpu", gflops: 1, gbps: 1, memory_bytes: 100 }] };
  const none = wt.auto.planParallel(f, [x], { cluster: tiny });
  assert.equal(none.chosen, null);
  assert.match(none.candidates[0].why, /holds 100/);
  assert.throws(
    () => wt.auto.planParallel(f, [x], { cluster: { devices: [{ name: "t", kind: "tpu", gflops: 1, gbps: 1, memory_bytes: 1 }] } }),
    /device t is a "tpu"/,
  );
});
