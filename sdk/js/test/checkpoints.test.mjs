// Checkpoints go through the runtime's one validator (Go's, through
// wt_safetensors_header): every file of the shared malformed corpus
// (core/safetensors/testdata/malformed.json) is refused with a WebtensorError
// naming the file and the problem, as in Go, Python and Java; saveFile
// removes the temporaries of earlier saves that were killed mid-write.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as wt from "webtensor";
import { VECTORS } from "./helpers.mjs";

await wt.init();

const CORPUS = join(VECTORS, "..", "..", "core", "safetensors", "testdata", "malformed.json");
const cases = JSON.parse(readFileSync(CORPUS, "utf8")).cases;

/** The file of one corpus case (the corpus's doc says how). */
function caseBytes(c) {
  if (c.raw_hex !== undefined) return Buffer.from(c.raw_hex, "hex");
  let header = c.header_hex ? Buffer.from(c.header_hex, "hex") : Buffer.from(c.header, "utf8");
  if (c.fill) header = Buffer.from(header.toString("latin1").replace("@@", c.fill.text.repeat(c.fill.times)), "latin1");
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(c.length !== undefined ? BigInt(c.length) : BigInt(header.length));
  return Buffer.concat([len, header, Buffer.alloc(c.data)]);
}

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), "wt-ckpt-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("every file of the malformed corpus is one WebtensorError naming the file and the problem", (t) => {
  assert.ok(cases.length > 40);
  const dir = tmp(t);
  for (const [i, c] of cases.entries()) {
    const path = join(dir, `${i}.safetensors`);
    writeFileSync(path, caseBytes(c));
    if (c.want === null) {
      const state = wt.loadFile(path);
      assert.deepEqual([...state.keys()], c.tensors, c.name);
      wt.dispose([...state.values()]);
      continue;
    }
    for (const [what, f, where] of [["loadFile", () => wt.loadFile(path), path], ["load", () => wt.load(readFileSync(path)), ""]]) {
      assert.throws(f, (e) => {
        assert.ok(e instanceof wt.WebtensorError, `${c.name}, ${what}: ${e?.constructor?.name}: ${e?.message}`);
        assert.equal(e.code, "WT_ERR_INVALID");
        assert.ok(e.message.startsWith(where ? `${where}: safetensors: ` : "safetensors: "), e.message);
        assert.ok(e.message.includes(c.want), `${c.name}, ${what}: ${e.message} lacks ${c.want}`);
        return true;
      });
    }
  }
});

test("a valid checkpoint still round-trips", async (t) => {
  const path = join(tmp(t), "ok.safetensors");
  const state = { b: wt.tensor([1, 2]), a: wt.tensor(new BigInt64Array([1n, 2n]), [1, 2]), z: wt.zeros({ shape: [0, 3] }) };
  await wt.saveFile(state, path);
  const back = wt.loadFile(path);
  assert.deepEqual([...back.keys()], ["a", "b", "z"]);
  assert.deepEqual([...back.get("a").dataSync()], [1n, 2n]);
  assert.deepEqual([...back.get("z").shape], [0, 3]);
  wt.dispose([...back.values(), ...Object.values(state)]);
});

test("saveFile removes the temporaries of saves killed mid-write, and only those", async (t) => {
  const dir = tmp(t);
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
  const temp = (name, ageMs = 0) => {
    const p = join(dir, name);
    writeFileSync(p, Buffer.alloc(4096));
    const when = new Date(Date.now() - ageMs);
    utimesSync(p, when, when);
    return name;
  };
  const killed = temp(`.model.safetensors.tmp-${dead}-abc123`);
  const live = temp(`.model.safetensors.tmp-${process.pid}-xyz`);
  const old = temp(".model.safetensors.tmp-12345", 2 * 3600_000); // an older version's (no PID field), long untouched
  const recent = temp(".model.safetensors.tmp-67890", 60_000);
  const other = temp(`.other.safetensors.tmp-${dead}-1`);
  const x = wt.tensor([1]);
  await wt.saveFile({ x }, join(dir, "model.safetensors"));
  assert.deepEqual(readdirSync(dir).sort(), ["model.safetensors", live, recent, other].sort(), `removed ${killed}, ${old}`);
  x.dispose();
});
