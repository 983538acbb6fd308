// webtensor in the browser against TensorFlow.js, both on WebGPU, in one
// headless Chromium (Debian's, through the browser tests' launcher): serves a
// private copy of the built package (so a concurrent `make npm`, which
// deletes sdk/js/dist, cannot break a run), TensorFlow.js from this folder's
// node_modules and the page, on 127.0.0.1 only; prints a table, writes the
// results as JSON and, with --doc, its section of docs/perf.md.
//
//   node sdk/js/bench/run.mjs [--reps 5] [--quick] [--no-cpu] [--no-gpu]
//        [--out build/bench/js-tfjs.json] [--doc docs/perf.md]
//   node sdk/js/bench/run.mjs --from build/bench/js-tfjs.json --doc docs/perf.md
//        (the table and the section again from a saved run, running nothing)
//
// `make js-bench` builds the package, installs this folder's dependencies
// (npm ci) and runs it with --doc docs/perf.md.

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { launch } from "../test/browser/chromium.mjs";
import { serve } from "../test/browser/serve.mjs";
import { section, table } from "./report.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, "..");
const root = join(sdk, "..", "..");

const { values: args } = parseArgs({
  options: {
    reps: { type: "string", default: "5" },
    quick: { type: "boolean", default: false },
    "no-cpu": { type: "boolean", default: false },
    "no-gpu": { type: "boolean", default: false },
    out: { type: "string", default: join(root, "build", "bench", "js-tfjs.json") },
    doc: { type: "string" },
    from: { type: "string" },
  },
});

/** Copies package.json and dist/ into build/bench-pkg/; fails with the fix when the package is not built. */
function privatePackage() {
  const wasm = join(sdk, "dist", "wasm", "webtensor.wasm");
  if (!existsSync(wasm) || !existsSync(join(sdk, "dist", "browser.js"))) {
    throw new Error("sdk/js/dist has no browser build (dist/browser.js, dist/wasm/webtensor.wasm): run `make npm` first");
  }
  const pkg = join(root, "build", "bench-pkg");
  rmSync(pkg, { recursive: true, force: true });
  mkdirSync(pkg, { recursive: true });
  cpSync(join(sdk, "package.json"), join(pkg, "package.json"));
  cpSync(join(sdk, "dist"), join(pkg, "dist"), { recursive: true });
  for (const f of ["dist/browser.js", "dist/wasm/webtensor.wasm", "dist/wasm/wasm_exec.js"]) {
    if (!existsSync(join(pkg, f))) throw new Error(`the copy of the package lacks ${f} (sdk/js/dist changed while copying?): run again`);
  }
  return pkg;
}

function tfjsDir() {
  const dir = join(here, "node_modules", "@tensorflow");
  const parts = ["tfjs/dist/tf.min.js", "tfjs-backend-webgpu/dist", "tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm"];
  if (!parts.every((p) => existsSync(join(dir, p)))) {
    throw new Error("TensorFlow.js is not installed: run `npm ci` in sdk/js/bench (make js-bench does)");
  }
  return dir;
}

/** Replaces the section that starts with heading (up to the next "## " heading) in a Markdown file, or appends it. */
function updateDoc(file, heading, text) {
  const doc = existsSync(file) ? readFileSync(file, "utf8") : "";
  const start = doc.indexOf(`\n${heading}\n`);
  let out;
  if (start < 0) {
    out = `${doc.replace(/\n*$/, "")}\n\n${text}`;
  } else {
    const next = doc.indexOf("\n## ", start + heading.length + 2);
    out = doc.slice(0, start + 1) + text + (next < 0 ? "" : `\n${doc.slice(next + 1)}`);
  }
  writeFileSync(file, out);
}

/** The commit measured: short hash, "+dirty" when the tree has changes. */
function commit() {
  try {
    const git = (...a) => execFileSync("git", ["-C", root, ...a], { encoding: "utf8" }).trim();
    return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain", "--untracked-files=no") ? "+dirty" : "");
  } catch {
    return "unknown";
  }
}

/** Opens bench.html in a fresh context (so no cached decision) and resolves to what page(fn, arg) returns. */
async function onPage(browser, url, fn, arg) {
  const page = await browser.newPage();
  try {
    page.on("console", (m) => console.log(`  [page] ${m.text()}`));
    page.on("pageerror", (e) => console.log(`  [page error] ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(() => window.pageReady === true, null, { timeout: 60_000 });
    return await page.evaluate(fn, arg);
  } finally {
    await page.close();
  }
}

/** Runs the page's benchmark; resolves to its report. */
async function measure() {
  const opts = {
    sizes: [256, 512, 1024],
    mlp: { batch: 256, inputs: 784, hidden: 256, outputs: 10, lr: 0.05 },
    gpu: !args["no-gpu"],
    // The CPU path against TF.js's wasm (XNNPACK) and cpu backends, one thread each (issue 27, deliverable 7).
    cpu: args["no-cpu"]
      ? null
      : { sizes: [256, 1024], mlp: { batch: 128, inputs: 784, hidden: 512, outputs: 10, lr: 1e-3 }, peers: ["wasm", "cpu"],
          wasmPaths: "/tf/tfjs-backend-wasm/dist/" },
    reps: args.quick ? 3 : Number(args.reps),
    warmup: 3,
    repMs: args.quick ? 150 : 400,
    maxN: 50,
  };
  const pkg = privatePackage();
  const srv = await serve({ "/webtensor/": pkg, "/tf/": tfjsDir(), "/bench/": here });
  const browser = await launch();
  const url = `${srv.url}/bench/bench.html`;
  try {
    const started = Date.now();
    // What wt.init() chooses in this browser when left to itself (a fresh page, nothing cached).
    const choice = await onPage(browser, url, async () => {
      await window.wt.init();
      return window.wt.deviceChoice();
    });
    const timing = { reps: opts.reps, warmup: opts.warmup, repMs: opts.repMs, maxN: opts.maxN };
    const gpu = opts.gpu ? await onPage(browser, url, (o) => window.bench.run(o), opts) : { env: {}, results: [] };
    const cpu = opts.cpu ? await onPage(browser, url, (o) => window.cpuBench.run(o), { ...opts.cpu, ...timing }) : { env: {}, results: [] };
    const report = { env: { ...cpu.env, ...gpu.env, deviceChoice: choice }, results: [...gpu.results, ...cpu.results] };
    report.env.date = new Date().toISOString().slice(0, 10);
    report.env.commit = commit();
    report.env.seconds = Math.round((Date.now() - started) / 1000);
    report.env.hostCores = availableParallelism();
    report.options = opts;
    return report;
  } finally {
    await browser.close();
    await srv.close();
  }
}

async function main() {
  const report = args.from ? JSON.parse(readFileSync(args.from, "utf8")) : await measure();
  console.log(table(report));
  if (!args.from) {
    const out = resolve(args.out);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${out}`);
  }
  const wrong = report.results.filter((r) => !r.agree);
  if (wrong.length) {
    const what = wrong.map((r) => `${r.case} (${r.device}${r.peer ? ` vs ${r.peer}` : ""}): max |difference| ${r.maxAbsDiff} at scale ${r.maxAbs}`);
    throw new Error(`webtensor and TensorFlow.js disagree: ${what.join("; ")}`);
  }
  if (args.doc) {
    const s = section(report);
    updateDoc(resolve(args.doc), s.heading, s.text);
    console.log(`updated ${args.doc}`);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
