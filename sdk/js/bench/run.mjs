// webtensor in the browser against TensorFlow.js, both on WebGPU, in one
// headless Chromium (Debian's, through the browser tests' launcher): serves a
// private copy of the built package (so a concurrent `make npm`, which
// deletes sdk/js/dist, cannot break a run), TensorFlow.js from this folder's
// node_modules and the page, on 127.0.0.1 only; prints a table, writes the
// results as JSON and, with --doc, its section of docs/perf.md.
//
//   node sdk/js/bench/run.mjs [--reps 5] [--quick] [--no-cpu]
//        [--out build/bench/js-tfjs.json] [--doc docs/perf.md]
//   node sdk/js/bench/run.mjs --from build/bench/js-tfjs.json --doc docs/perf.md
//        (the table and the section again from a saved run, running nothing)
//
// `make js-bench` builds the package, installs this folder's dependencies
// (npm ci) and runs it with --doc docs/perf.md.

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
  if (!existsSync(join(dir, "tfjs", "dist", "tf.min.js")) || !existsSync(join(dir, "tfjs-backend-webgpu", "dist"))) {
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

/** Runs the page's benchmark; resolves to its report. */
async function measure() {
  const opts = {
    sizes: [256, 512, 1024],
    mlp: { batch: 256, inputs: 784, hidden: 256, outputs: 10, lr: 0.05 },
    cpu: args["no-cpu"] ? 0 : 256,
    reps: args.quick ? 3 : Number(args.reps),
    warmup: 3,
    repMs: args.quick ? 150 : 400,
    maxN: 50,
  };
  const pkg = privatePackage();
  const srv = await serve({ "/webtensor/": pkg, "/tf/": tfjsDir(), "/bench/": here });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    page.on("console", (m) => console.log(`  [page] ${m.text()}`));
    page.on("pageerror", (e) => console.log(`  [page error] ${e.message}`));
    await page.goto(`${srv.url}/bench/bench.html`);
    await page.waitForFunction(() => window.pageReady === true, null, { timeout: 60_000 });
    const started = Date.now();
    const report = await page.evaluate((o) => window.bench.run(o), opts);
    report.env.date = new Date().toISOString().slice(0, 10);
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
    const what = wrong.map((r) => `${r.case} (${r.device}): max |difference| ${r.maxAbsDiff} at scale ${r.maxAbs}`);
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
