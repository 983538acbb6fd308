// webtensor's ONNX import against onnxruntime on all-MiniLM-L6-v2 (its real
// weights, exported by `make onnx-models`), batch 8 x sequence 128, side by
// side in one run:
//   browser (headless Chromium, Debian's): webtensor on WebGPU against
//     onnxruntime-web's WebGPU execution provider, and webtensor's CPU path
//     against onnxruntime-web's wasm execution provider, one thread each;
//   Node: webtensor's CPU backend against onnxruntime-node's CPU provider;
//   import times: the same sides, and Go's (go test -bench ImportMiniLM
//     ./onnx, run by scripts/bench_onnx.sh, whose output --go reads).
// Prints a table, writes the results as JSON and, with --doc, its section of
// docs/perf.md. onnxruntime comes from this folder's locked dependencies.
//
//   node sdk/js/bench/onnx/run.mjs [--reps 9] [--warmup 5] [--gpu-reps 3] [--no-gpu] [--no-cpu] [--no-node]
//        [--go build/bench/onnx-go.txt] [--out build/bench/onnx.json] [--doc docs/perf.md]
//   node sdk/js/bench/onnx/run.mjs --from build/bench/onnx.json --doc docs/perf.md
//        (the table and the section again from a saved run, running nothing)
//
// `make onnx-bench` runs scripts/bench_onnx.sh, which runs this.

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { launch } from "../../test/browser/chromium.mjs";
import { serve } from "../../test/browser/serve.mjs";
import { median } from "./measure.mjs";
import { runNode } from "./node.mjs";
import { section, table, updateDoc } from "./report.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, "..", "..");
const root = join(sdk, "..", "..");

const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: join(root, "build", "onnx", "all-MiniLM-L6-v2.onnx") },
    // Nine runs after five warm-ups: V8 compiles a wasm module's hot
    // functions again, optimised, in the background (tier-up), and on two
    // cores that compilation slowed both sides' first few runs in a page by
    // up to 40% (webtensor's 30 MB module the longer).
    reps: { type: "string", default: "9" },
    "gpu-reps": { type: "string", default: "3" },
    "import-reps": { type: "string", default: "3" },
    warmup: { type: "string", default: "5" },
    "no-gpu": { type: "boolean", default: false },
    "no-cpu": { type: "boolean", default: false },
    "no-node": { type: "boolean", default: false },
    go: { type: "string" },
    out: { type: "string", default: join(root, "build", "bench", "onnx.json") },
    doc: { type: "string" },
    from: { type: "string" },
  },
});

const TOKENIZER = join(root, "multimodal", "testdata", "minilm_tokenizer", "tokenizer.json");
// The example page's test sentences (8 of them: the batch), padded to 128 by tokenizer.json.
const SENTENCES = JSON.parse(readFileSync(join(root, "onnx", "testdata", "minilm_similarity.json"), "utf8")).sentences;

/** Copies package.json and dist/ into build/bench-onnx-pkg/ so a concurrent `make npm` cannot pull them away mid-run. */
function privatePackage() {
  for (const f of ["dist/browser.js", "dist/index.js", "dist/wasm/webtensor.wasm"]) {
    if (!existsSync(join(sdk, f))) throw new Error(`sdk/js has no ${f}: run \`make npm\` first`);
  }
  const pkg = join(root, "build", "bench-onnx-pkg");
  rmSync(pkg, { recursive: true, force: true });
  mkdirSync(pkg, { recursive: true });
  cpSync(join(sdk, "package.json"), join(pkg, "package.json"));
  cpSync(join(sdk, "dist"), join(pkg, "dist"), { recursive: true });
  return pkg;
}

function ortWebDir() {
  const dir = join(here, "node_modules", "onnxruntime-web", "dist");
  if (!existsSync(join(dir, "ort.webgpu.min.mjs")) || !existsSync(join(here, "node_modules", "onnxruntime-node"))) {
    throw new Error("onnxruntime is not installed: run `ONNXRUNTIME_NODE_INSTALL=skip npm ci` in sdk/js/bench/onnx (make onnx-bench does)");
  }
  return dir;
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

/** Go's import times from `go test -bench ImportMiniLM` output: the median ms per sub-benchmark. */
function goImports(file) {
  const text = readFileSync(file, "utf8");
  const times = {};
  for (const m of text.matchAll(/^BenchmarkImportMiniLM\/(\w+)-\d+\s+\d+\s+([\d.]+) ns\/op/gm)) {
    (times[m[1]] ??= []).push(Number(m[2]) / 1e6);
  }
  if (!Object.keys(times).length) {
    const skip = text.match(/--- SKIP.*\n.*/)?.[0];
    throw new Error(`${file} has no BenchmarkImportMiniLM results${skip ? `: ${skip.trim()}` : ""}`);
  }
  const go = text.match(/^goos: .*$/m) ? execFileSync("go", ["version"], { encoding: "utf8" }).trim() : "go";
  return { version: go, ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])), runs: times };
}

/** The CPU jiffies /proc/stat counts as busy and in all, or null off Linux. */
function cpuJiffies() {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3] + (f[4] ?? 0); // idle and iowait
    const all = f.reduce((a, b) => a + b, 0);
    return { busy: all - idle, all };
  } catch {
    return null;
  }
}

/**
 * How many cores other work keeps busy: /proc/stat over 2 s while this run
 * does nothing (its browser closed or idle between cases). The load average
 * would count this run's own work too.
 */
async function otherWork() {
  const a = cpuJiffies();
  await new Promise((r) => setTimeout(r, 2000));
  const b = cpuJiffies();
  if (!a || !b || b.all === a.all) return null;
  return ((b.busy - a.busy) / (b.all - a.all)) * availableParallelism();
}

/** One backend pair in a fresh page; resolves to the page's {env, result}. */
async function browserCase(browser, url, opts) {
  const page = await browser.newPage();
  try {
    page.on("console", (m) => console.log(`  [page] ${m.text()}`));
    page.on("pageerror", (e) => console.log(`  [page error] ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(() => window.pageReady === true, null, { timeout: 60_000 });
    page.setDefaultTimeout(0);
    return await page.evaluate((o) => window.onnxBench.run(o), opts);
  } finally {
    await page.close();
  }
}

async function measure() {
  if (!existsSync(args.model)) throw new Error(`${args.model} is missing: \`make onnx-models\` exports it`);
  const started = Date.now();
  const report = {
    env: {
      date: new Date().toISOString().slice(0, 10),
      commit: commit(),
      hostCores: availableParallelism(),
      cpu: cpus()[0]?.model ?? "?",
      loadBefore: loadavg()[0],
      otherWork: [],
      sentences: SENTENCES.length,
    },
    options: { reps: Number(args.reps), gpuReps: Number(args["gpu-reps"]), importReps: Number(args["import-reps"]), warmup: Number(args.warmup) },
    browser: {},
  };
  const o = report.options;
  const sample = async () => report.env.otherWork.push(await otherWork());
  await sample();
  if (args.go) report.go = goImports(args.go);
  if (!args["no-gpu"] || !args["no-cpu"]) {
    const srv = await serve({
      "/webtensor/": privatePackage(),
      "/ort/": ortWebDir(),
      "/bench/": here,
      "/model/": dirname(resolve(args.model)),
      "/tokenizer/": dirname(TOKENIZER),
    });
    const browser = await launch();
    try {
      const url = `${srv.url}/bench/bench.html`;
      const common = { modelUrl: `/model/${args.model.split("/").pop()}`, tokenizerUrl: "/tokenizer/tokenizer.json", sentences: SENTENCES };
      // WebGPU first: SwiftShader's runs take seconds each, so it gets fewer reps.
      if (!args["no-gpu"]) {
        report.browser.webgpu = await browserCase(browser, url, { ...common, backend: "webgpu", importReps: o.importReps, warmup: 1, reps: o.gpuReps });
        await sample();
      }
      if (!args["no-cpu"]) {
        report.browser.cpu = await browserCase(browser, url, { ...common, backend: "cpu", importReps: o.importReps, warmup: o.warmup, reps: o.reps });
        await sample();
      }
    } finally {
      await browser.close();
      await srv.close();
    }
  }
  if (!args["no-node"]) {
    const threads = [...new Set([1, availableParallelism()])];
    report.node = await runNode({ modelPath: args.model, tokenizerPath: TOKENIZER, sentences: SENTENCES, threads, importReps: o.importReps, warmup: o.warmup, reps: o.reps });
    await sample();
  }
  report.env.loadAfter = loadavg()[0];
  report.env.seconds = Math.round((Date.now() - started) / 1000);
  return report;
}

/** Every comparison in the report whose outputs disagree. */
function disagreements(report) {
  const all = [
    ...Object.entries(report.browser ?? {}).map(([k, v]) => [`browser ${k}`, v.result.agreement]),
    ...(report.node?.results ?? []).map((r) => [`node, ${r.threads} threads`, r.agreement]),
  ];
  return all.filter(([, a]) => !a.agree).map(([k, a]) => `${k}: max |difference| ${a.maxAbsDiff} at scale ${a.maxAbs}`);
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
  const wrong = disagreements(report);
  if (wrong.length) throw new Error(`webtensor and onnxruntime disagree: ${wrong.join("; ")}`);
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
