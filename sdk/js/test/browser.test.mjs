// The browser build in headless Chromium (Debian's, through playwright-core):
// the package's browser entry served on 127.0.0.1, the reference vectors on
// WebGPU and on the CPU backend, the fallback when the browser has no
// WebGPU, and errors. WebGPU is expected (Chromium runs with
// --enable-unsafe-webgpu and has SwiftShader): a run that silently fell back
// to the CPU fails.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserConformance, withPage } from "./browser/harness.mjs";
import { MULTIMODAL_TESTDATA, ONNX_TESTDATA } from "./helpers.mjs";

// The example page: copied next to the tests by make js-test, else the repo's.
const here = dirname(fileURLToPath(import.meta.url));
const demoDir = [join(here, "examples", "browser"), join(here, "..", "examples", "browser")].find((d) => existsSync(d));

const failures = (r) =>
  Object.entries(r.ops).filter(([, x]) => x.status === "fail").map(([op, x]) => `${op}: ${x.detail}`);

test("browser: init opens WebGPU and ops run on it", async () => {
  await withPage(async ({ page }) => {
    const r = await page.evaluate(async () => {
      const { wt } = window;
      await wt.init({ device: "webgpu" });
      const x = wt.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
      const y = wt.tidy(() => wt.softmax(x, { axis: -1 }).mul(2));
      const xt = wt.transpose(x);
      const m = wt.matmul(x, xt);
      // Many small uploads while the module's memory grows (each upload once
      // went through a view of that memory, which growing empties).
      let acc = wt.zeros({ shape: [1] });
      for (let i = 0; i < 3000; i++) {
        const t = wt.tensor(new Float32Array([1]), [1]);
        const next = wt.add(acc, t);
        wt.dispose([t, acc]);
        acc = next;
      }
      const out = { device: wt.device(), why: wt.whyNotWebGPU(), choice: wt.deviceChoice(), yDevice: y.device, y: Array.from(await y.data()),
        m: Array.from(await m.data()), shape: m.shape, acc: (await acc.data())[0],
        fallbacks: wt.fallbacks(true), threads: wt.getNumThreads() };
      wt.dispose([x, xt, y, m, acc]);
      out.liveAfter = wt.liveTensors();
      return out;
    });
    assert.equal(r.device, "webgpu:0", `WebGPU was expected (why not: ${r.why})`);
    assert.equal(r.yDevice, "webgpu:0");
    assert.equal(r.choice.device, "webgpu:0");
    assert.match(r.choice.reason, /WebGPU was asked for/);
    assert.equal(r.choice.timings, null, "a forced WebGPU is not calibrated");
    const e = [1, 2, 3].map(Math.exp);
    const s = e.reduce((a, b) => a + b);
    r.y.slice(0, 3).forEach((v, i) => assert.ok(Math.abs(v - (2 * e[i]) / s) < 1e-5, `softmax ${i}: ${v}`));
    assert.deepEqual(r.m, [14, 32, 32, 77]);
    assert.deepEqual(r.shape, [2, 2]);
    assert.equal(r.acc, 3000);
    assert.equal(r.liveAfter, 0);
    assert.deepEqual(r.fallbacks.filter((f) => f.kind === "cpu"), [], "every op ran on WebGPU");
    assert.equal(r.threads, 1, "Go's wasm port runs one thread");
  });
});

test("browser: every reference vector passes on WebGPU", async () => {
  await withPage(async ({ page }) => {
    const r = await browserConformance(page, "webgpu", { device: "webgpu" });
    assert.match(r.detail, /runtime device webgpu/, "WebGPU must be in use");
    assert.deepEqual(failures(r), []);
    assert.ok(Object.values(r.ops).filter((x) => x.status === "pass").length > 150);
  });
});

test("browser: every reference vector passes on the CPU backend", async () => {
  await withPage(async ({ page }) => {
    const r = await browserConformance(page, "cpu", { device: "cpu" });
    assert.deepEqual(failures(r), []);
    assert.equal(Object.values(r.ops).filter((x) => x.status === "pass").length, Object.keys(r.ops).length);
  });
});

// The calibration's choice as the page sees it, and the cache entries it left.
async function initAuto(page) {
  return page.evaluate(async () => {
    const { wt } = window;
    await wt.init();
    const entries = Object.keys(localStorage).filter((k) => k.startsWith("webtensor:device-choice:"));
    const y = wt.add(wt.tensor([1, 2]), 3);
    return { device: wt.device(), why: wt.whyNotWebGPU(), choice: wt.deviceChoice(), entries,
      stored: entries.map((k) => localStorage.getItem(k)), y: Array.from(await y.data()), yDevice: y.device };
  });
}

async function reload(page) {
  await page.reload();
  await page.waitForFunction(() => window.pageReady === true, null, { timeout: 60_000 });
}

test("browser: on a software adapter init() measures WebGPU against the CPU and caches the choice", async () => {
  await withPage(async ({ page }) => {
    const first = await initAuto(page);
    const c = first.choice;
    assert.equal(c.software, true, `headless Chromium's adapter is a software one: ${c.adapter}`);
    assert.equal(c.cached, false);
    assert.ok(c.timings.cpu > 0 && c.timings.webgpu > 0, JSON.stringify(c.timings));
    const want = c.timings.cpu < c.timings.webgpu ? "cpu" : "webgpu:0";
    assert.equal(c.device, want, "the faster one is the default");
    assert.equal(first.device, want);
    assert.equal(first.yDevice, want);
    assert.deepEqual(first.y, [4, 5]);
    assert.match(c.reason, /software WebGPU adapter; a calibration .* took [\d.]+ ms on the CPU backend and [\d.]+ ms on WebGPU/);
    assert.equal(first.why, want === "cpu" ? c.reason : "");
    assert.equal(first.entries.length, 1, "one cache entry");
    assert.ok(first.entries[0].includes(c.adapter), `keyed by the adapter: ${first.entries[0]}`);

    // A new page load takes the cached decision without measuring.
    await reload(page);
    const second = await initAuto(page);
    assert.equal(second.choice.cached, true);
    assert.deepEqual(second.choice.timings, c.timings);
    assert.equal(second.device, want);
    assert.match(second.choice.reason, /an earlier page's calibration/);

    // A corrupt entry is ignored: the next load measures again and replaces it.
    await page.evaluate((k) => localStorage.setItem(k, '{"webgpu": "fast", "cpu": -1'), first.entries[0]);
    await reload(page);
    const third = await initAuto(page);
    assert.equal(third.choice.cached, false);
    assert.ok(third.choice.timings.cpu > 0 && third.choice.timings.webgpu > 0);
    assert.deepEqual(JSON.parse(third.stored[0]), third.choice.timings);
  });
});

test("browser: a hardware adapter is taken without calibrating", async () => {
  // Chromium here has only SwiftShader: the adapter's info is made to say a GPU.
  const fakeGPU = () => {
    Object.defineProperty(GPUAdapter.prototype, "info", {
      configurable: true,
      get: () => ({ vendor: "acme", architecture: "rdna9", device: "", description: "Acme Radeon 9000", isFallbackAdapter: false }),
    });
    if ("isFallbackAdapter" in GPUAdapter.prototype) {
      Object.defineProperty(GPUAdapter.prototype, "isFallbackAdapter", { configurable: true, get: () => false });
    }
  };
  await withPage(
    async ({ page }) => {
      const r = await initAuto(page);
      assert.equal(r.device, "webgpu:0");
      assert.equal(r.choice.software, false);
      assert.equal(r.choice.adapter, "Acme Radeon 9000");
      assert.equal(r.choice.timings, null);
      assert.match(r.choice.reason, /hardware WebGPU adapter \(Acme Radeon 9000\), taken without calibrating/);
      assert.deepEqual(r.entries, [], "nothing cached");
    },
    { initScript: fakeGPU },
  );
});

// withAndWithoutSIMD runs fn(simd) in a page on the CPU backend with its
// wasm SIMD kernels, then reloaded without them, checks that each ran what
// it asked for (fn returns the device choice's cpuKernels as kernels), and
// returns both results.
async function withAndWithoutSIMD(fn) {
  let res;
  await withPage(async ({ page }) => {
    const simd = await page.evaluate(fn, true);
    await reload(page);
    const go = await page.evaluate(fn, false);
    assert.match(simd.kernels, /^wasm SIMD/);
    assert.match(go.kernels, /^Go \(no wasm SIMD kernels: turned off/);
    res = { simd, go };
  });
  return res;
}

test("browser: the CPU backend's wasm SIMD GEMM gives the Go kernels' bits", async () => {
  // Products with full and partial tiles, transposed operands, several k panels.
  const { simd: withSIMD, go: withoutSIMD } = await withAndWithoutSIMD(async (simd) => {
    const { wt } = window;
    await wt.init({ device: "cpu", simd });
    const mat = (r, c, k) => wt.tensor(Float32Array.from({ length: r * c }, (_, i) => Math.sin(i * k) * 0.5), [r, c]);
    const shapes = [[256, 256, 256], [37, 53, 29], [130, 300, 70], [5, 600, 9], [64, 1030, 17]];
    const out = [];
    for (const [m, k, n] of shapes) {
      const a = mat(m, k, 0.37);
      const b = mat(k, n, 0.91);
      const bt = mat(n, k, 0.53);
      for (const y of [wt.matmul(a, b), wt.matmul(a, wt.transpose(bt)), wt.matmul(wt.transpose(a), mat(m, n, 0.11))]) {
        out.push(Array.from(new Uint32Array((await y.data()).buffer)));
      }
    }
    return { bits: out, kernels: wt.deviceChoice().cpuKernels };
  });
  assert.equal(withSIMD.bits.length, 15);
  withSIMD.bits.forEach((b, i) => assert.deepEqual(b, withoutSIMD.bits[i], `product ${i}: the same bits`));
});

test("browser: the CPU backend's wasm SIMD transcendentals and row kernels stay within a few ulp of Go's", async () => {
  // Every op math.c has, over a sweep through the ranges where each changes
  // branch (exp's clamps, gelu's tail, tanh's clamp), the specials, and
  // lengths with a tail of 1-3 lanes; softmax and layer_norm run the row
  // kernels, rows of 131 and of 7 (with a weight and a bias).
  const { simd: withSIMD, go } = await withAndWithoutSIMD(async (simd) => {
    const { wt } = window;
    await wt.init({ device: "cpu", simd });
    const xs = [NaN, Infinity, -Infinity, 0, -0, 1e-30, -1e-30, 88.7, 88.8, 89, -87.3, -103.9, -104, -110, 3e38, -3e38];
    for (let i = 0; i <= 4000; i++) xs.push(-110 + i * 0.05, (i - 2000) * 0.004 + 1e-3);
    const x = wt.tensor(Float32Array.from(xs), [xs.length]);
    const rows = wt.tensor(Float32Array.from({ length: 7 * 131 }, (_, i) => Math.sin(i * 0.77) * 30 - (i % 7)), [7, 131]);
    const ys = {
      exp: wt.exp(x),
      sigmoid: wt.sigmoid(x),
      silu: wt.silu(x),
      gelu: wt.gelu(x),
      gelu_tanh: wt.gelu(x, { approximate: "tanh" }),
      tanh: wt.tanh(x),
      exp_tail: wt.exp(wt.tensor([1, 2, 3, 4, 5, 6, 7])),
      softmax: wt.softmax(rows, { axis: -1 }),
      layer_norm: wt.layerNorm(rows, null, null, { normalizedShape: [131] }),
      layer_norm_affine: wt.layerNorm(wt.reshape(rows, { shape: [131, 7] }), wt.tensor([1, -2, 0.5, 3, 0, 1, 2]), wt.tensor([0, 1, -1, 2, 0.5, 0, -3]), { normalizedShape: [7] }),
    };
    const out = {};
    for (const [k, y] of Object.entries(ys)) out[k] = Array.from(await y.data());
    return { out, kernels: wt.deviceChoice().cpuKernels };
  });
  // Relative to the float64 reference rounded once; differences below
  // the smallest normal (subnormal results) are not counted. Measured:
  // 1-4 ulp (1.2e-7 to 2.7e-7) but for the gelus' far negative tails
  // (|x| near 12, values near 1e-30): e^a with a near -70, where a's own
  // rounding is 4e-6 of the result (6e-6 and 9e-6 measured).
  const tolerance = { exp: 3e-7, sigmoid: 5e-7, silu: 5e-7, gelu: 2e-5, gelu_tanh: 2e-5, tanh: 5e-7, exp_tail: 3e-7, softmax: 6e-7, layer_norm: 1e-6, layer_norm_affine: 1e-6 };
  const worst = {};
  for (const [k, want] of Object.entries(go.out)) {
    const got = withSIMD.out[k];
    assert.equal(got.length, want.length, k);
    worst[k] = { rel: 0, at: "" };
    want.forEach((w, i) => {
      const g = got[i];
      if (Number.isNaN(w) || !Number.isFinite(w) || w === 0) {
        assert.ok(Object.is(g, w) || (w === 0 && Math.abs(g) < 2 ** -126), `${k}[${i}]: ${g}, want ${w}`);
        return;
      }
      const err = Math.abs(g - w);
      if (err >= 2 ** -126 && err / Math.abs(w) > worst[k].rel) worst[k] = { rel: err / Math.abs(w), at: `${k}[${i}]: ${g}, want ${w}` };
    });
  }
  for (const [k, w] of Object.entries(worst)) assert.ok(w.rel <= tolerance[k], `relative error ${w.rel} at ${w.at}`);
  // The module's kernels ran (had the Go loops run, every bit would match).
  assert.ok(worst.exp.rel > 0 && worst.gelu.rel > 0 && worst.softmax.rel > 0, "the wasm SIMD kernels' last bits differ from Go's");
});

test("browser: without WebGPU it warns and runs on the CPU", async () => {
  const hide = () => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
  await withPage(
    async ({ page, logs }) => {
      const r = await page.evaluate(async () => {
        const { wt } = window;
        await wt.init({ device: "webgpu" });
        const y = wt.add(wt.tensor([1, 2]), 3);
        return { device: wt.device(), why: wt.whyNotWebGPU(), choice: wt.deviceChoice(), y: Array.from(y.dataSync()) };
      });
      assert.equal(r.device, "cpu");
      assert.match(r.why, /no WebGPU/);
      assert.equal(r.choice.timings, null);
      assert.deepEqual(r.y, [4, 5]);
      assert.ok(logs.some((l) => l.startsWith("warning:") && /no WebGPU/.test(l)), `a warning: ${logs.join(" | ")}`);
    },
    { initScript: hide },
  );
});

test("browser: bad input gives clear errors", async () => {
  await withPage(async ({ page }) => {
    const r = await page.evaluate(async () => {
      const { wt } = window;
      const msg = async (f) => {
        try {
          await f();
          return "no error";
        } catch (e) {
          return `${e.name}|${e.code ?? ""}|${e.needsAsync ?? ""}|${e.message}`;
        }
      };
      const out = {};
      out.beforeInit = await msg(() => wt.tensor([1]));
      out.missingWasm = await msg(() => wt.init({ wasmURL: "/webtensor/dist/wasm/nope.wasm" }));
      await wt.init({ device: "webgpu" });
      const a = wt.tensor(new Float32Array(6), [2, 3]);
      const b = wt.tensor(new Float32Array(4), [4]);
      out.shape = await msg(() => wt.matmul(a, b));
      out.dataShape = await msg(() => wt.tensor(new Float32Array(5), [2, 3]));
      out.syncRead = await msg(() => a.dataSync());
      out.nonzeroSync = await msg(() => wt.nonzero(a));
      const nz = await wt.opAsync("nonzero", [wt.tensor([0, 3, 0, 4])]);
      out.nonzeroAsync = Array.from(await nz[0].toAsync("cpu").then((t) => t.dataSync()), Number);
      const idx = wt.tensor(new Int32Array([0, 7]), [2]);
      const g = wt.indexSelect(wt.tensor([1, 2, 3]), idx, { axis: 0 }); // checked at the next read
      out.deferred = await msg(() => g.data());
      out.afterDeferred = Array.from(await wt.add(wt.tensor([1]), 1).data());
      a.dispose();
      out.disposed = await msg(() => a.shape);
      return out;
    });
    assert.match(r.beforeInit, /call `await wt.init\(\)` first/);
    assert.match(r.missingWasm, /cannot fetch .*nope\.wasm: HTTP 404/);
    assert.match(r.shape, /^WebtensorError\|WT_ERR_INVALID\|false\|.*matmul/);
    assert.match(r.dataShape, /shape \[2, 3\] holds 6 elements, the data has 5/);
    assert.match(r.syncRead, /needsAsync|true\|.*async form/);
    assert.match(r.nonzeroSync, /\|true\|/);
    assert.deepEqual(r.nonzeroAsync, [1, 3]);
    assert.match(r.deferred, /earlier indexing call failed its check: index 7 is out of bounds for axis 0 with size 3/);
    assert.deepEqual(r.afterDeferred, [2]);
    assert.match(r.disposed, /used after dispose/);
  });
});

test("browser: c64 in and out as interleaved parts, on WebGPU and the CPU; c128 on the CPU", async () => {
  await withPage(async ({ page }) => {
    const r = await page.evaluate(async () => {
      const { wt } = window;
      await wt.init({ device: "webgpu" });
      const out = {};
      for (const device of ["webgpu", "cpu"]) {
        const x = wt.tensor(new Float32Array([1, 2, 3, -4]), [2], { dtype: "c64", device });
        const y = wt.tensor(new Float32Array([2, -1, 0.5, 0.5]), [2], { dtype: "c64", device });
        out[device] = { device: x.device, dtype: x.mul(y).dtype, mul: Array.from(await x.mul(y).data()),
          abs: Array.from(await wt.abs(x).data()), item: await wt.sum(x).itemAsync() };
      }
      const z = wt.tensor(new Float64Array([0, Math.PI]), [1], { dtype: "c128", device: "cpu" });
      out.exp = Array.from(await z.exp().data());
      out.c128Type = (await z.data()).constructor.name;
      return out;
    });
    for (const device of ["webgpu", "cpu"]) {
      const o = r[device];
      assert.match(o.device, new RegExp(`^${device}`));
      assert.equal(o.dtype, "c64");
      // (1+2i)(2-i) = 4+3i, (3-4i)(0.5+0.5i) = 3.5-0.5i
      [4, 3, 3.5, -0.5].forEach((v, i) => assert.ok(Math.abs(o.mul[i] - v) < 1e-5, `${device} mul[${i}]: ${o.mul[i]}`));
      [Math.hypot(1, 2), 5].forEach((v, i) => assert.ok(Math.abs(o.abs[i] - v) < 1e-5, `${device} abs[${i}]: ${o.abs[i]}`));
      assert.deepEqual(o.item, { re: 4, im: -2 });
    }
    assert.equal(r.c128Type, "Float64Array");
    assert.ok(Math.abs(r.exp[0] + 1) < 1e-15 && Math.abs(r.exp[1]) < 1e-15, `exp(i pi): ${r.exp}`);
  });
});

test("browser: nn and optim train on WebGPU; the checkpoint loads back", async () => {
  await withPage(async ({ page }) => {
    const r = await page.evaluate(async () => {
      const { wt, cases } = window;
      await wt.init({ device: "webgpu" });
      const { losses, checkpoint } = await cases.trainMLP(wt, "webgpu:0");
      return { device: wt.device(), losses, loads: cases.loadsCheckpoint(wt, checkpoint), live: wt.liveTensors() };
    });
    assert.equal(r.device, "webgpu:0");
    assert.equal(r.losses.length, 20);
    assert.ok(r.losses[19] < r.losses[0] * 0.8, `loss ${r.losses[0]} -> ${r.losses[19]}`);
    assert.equal(r.loads, "ok");
    assert.equal(r.live, 0, "every tensor freed");
  });
});

test("browser: wt.compile fuses an elementwise chain on WebGPU and equals eager", async () => {
  await withPage(async ({ page }) => {
    const r = await page.evaluate(async () => {
      const { wt } = window;
      await wt.init({ device: "webgpu" });
      const b = wt.tensor(new Float32Array([0.5, -1, 2, 0.25]));
      const f = (x) => x.mul(b).add(1).tanh().mul(x);
      const cf = wt.compile(f);
      cf(wt.tensor(new Float32Array([1, 2, 3, 4])));
      const x = wt.tensor(new Float32Array([-1, 0.5, 1, 2]));
      const got = Array.from(await cf(x).data());
      const want = Array.from(await f(x).data());
      return { got, want, text: String([...cf.graphs.values()][0]) };
    });
    assert.match(r.text, /fused\[mul\(tanh\(add\(mul\(\$0, \$1\), \$2\)\), \$0\)\]/);
    r.want.forEach((w, i) => assert.ok(Math.abs(r.got[i] - w) < 1e-5, `${r.got[i]} vs ${w}`));
  });
});

test("browser: wt.onnx.load(bytes) runs a model on WebGPU with named inputs, and sequences and optionals", async () => {
  await withPage(
    async ({ page }) => {
      const r = await page.evaluate(async () => {
        const { wt, cases } = window;
        await wt.init({ device: "webgpu" });
        const bytes = new Uint8Array(await (await fetch("/onnx/sdk_model.onnx")).arrayBuffer());
        const expected = await (await fetch("/onnx/sdk_model.json")).json();
        const problems = await cases.onnxSdkModel(wt, bytes, expected, "webgpu:0");
        const valueCases = await (await fetch("/onnx/sdk_values_model.json")).json();
        const valuesBytes = new Uint8Array(await (await fetch("/onnx/sdk_values_model.onnx")).arrayBuffer());
        problems.push(...(await cases.onnxValuesModel(wt, valuesBytes, valueCases, "webgpu:0")));
        let fileError = "";
        try {
          await wt.onnx.load("model.onnx");
        } catch (e) {
          fileError = e.message;
        }
        return { problems, fileError, live: wt.liveTensors() };
      });
      assert.deepEqual(r.problems, []);
      assert.match(r.fileError, /no file system/);
      assert.equal(r.live, 0, "every tensor freed");
    },
    { extraRoots: { "/onnx/": ONNX_TESTDATA } },
  );
});

test("browser: wt.multimodal's tokenizers and image processors load from bytes; a model folder's name is refused with the zip's way", async () => {
  await withPage(
    async ({ page }) => {
      const r = await page.evaluate(async () => {
        const { wt } = window;
        await wt.init({ device: "webgpu" });
        const bytes = new Uint8Array(await (await fetch("/mm/whisper_bpe/tokenizer.json")).arrayBuffer());
        const refs = await (await fetch("/mm/whisper_refs.json")).json();
        const tok = await wt.multimodal.Tokenizer.load(bytes);
        const problems = [];
        for (const c of refs.decode) {
          if (tok.decode(c.ids) !== c.text) problems.push(`decode ${c.ids}: ${tok.decode(c.ids)}`);
          if (tok.decode(c.ids, { skipSpecialTokens: true }) !== c.skip_special) problems.push(`skip ${c.ids}`);
        }
        const enc = tok.encode(["Hello, world!", "a"], { addSpecialTokens: false, padId: 0 });
        const mask = Array.from(await enc.attentionMask.data(), Number);
        wt.dispose([enc.inputIds, enc.tokenTypeIds, enc.attentionMask]);
        tok.dispose();
        // An image on WebGPU (the default device): the preprocessing reads it back asynchronously.
        const images = wt.load(new Uint8Array(await (await fetch("/mm/image_refs.safetensors")).arrayBuffer()));
        const cases = await (await fetch("/mm/image_refs.json")).json();
        const proc = await wt.multimodal.ImageProcessor.load(new TextEncoder().encode(JSON.stringify(cases[1].config)));
        const px = await proc.preprocess(images.get(`${cases[1].name}/image_0`), { device: "cpu" });
        const want = await images.get(`${cases[1].name}/pixels_0`).data();
        const got = await px.data();
        const worst = Math.max(...Array.from(got, (v, i) => Math.abs(v - want[i])));
        if (!(worst < 1e-5)) problems.push(`pixels differ by ${worst}`);
        wt.dispose([px, ...images.values()]);
        proc.dispose();
        let folderError = "";
        try {
          await wt.multimodal.SentenceEncoder.load("all-MiniLM-L6-v2");
        } catch (e) {
          folderError = e.message;
        }
        return { problems, mask, folderError, live: wt.liveTensors() };
      });
      assert.deepEqual(r.problems, []);
      assert.deepEqual(r.mask, [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
      assert.match(r.folderError, /the browser has no file system: multimodal\.SentenceEncoder\.load\(\) takes a zip archive/);
      assert.equal(r.live, 0, "every tensor freed");
    },
    { extraRoots: { "/mm/": MULTIMODAL_TESTDATA } },
  );
});

test("browser: the example page trains on WebGPU and draws the loss", async () => {
  await withPage(
    async ({ page }) => {
      await page.goto(page.url().replace(/\/test\/browser\/page\.html.*/, "/demo/index.html?steps=40&device=webgpu"));
      await page.waitForFunction(() => window.demo && (window.demo.done || window.demo.error), null, { timeout: 120_000 });
      const r = await page.evaluate(() => {
        const c = document.getElementById("loss");
        const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        let inked = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
        return { ...window.demo, inked, status: document.getElementById("status").textContent };
      });
      assert.equal(r.error, "");
      assert.equal(r.device, "webgpu:0");
      assert.ok(r.losses.at(-1)[1] < r.losses[0][1] * 0.7, `loss ${r.losses[0][1]} -> ${r.losses.at(-1)[1]}`);
      assert.ok(r.inked > 300, `the loss curve is drawn (${r.inked} pixels)`);
      assert.match(r.status, /trained on the GPU \(WebGPU\): 40 steps/);
    },
    { extraRoots: { "/demo/": demoDir } },
  );
});
