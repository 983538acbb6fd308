// The benchmark's Markdown: the table run.mjs prints and the section of
// docs/perf.md it writes with --doc.

const ms = (x) => (x >= 100 ? x.toFixed(1) : x >= 10 ? x.toFixed(2) : x.toFixed(3));
const ratio = (tf, ours) => (tf / ours).toFixed(2);

/** The results as a Markdown table: per-op times (ms), TF.js / webtensor ratios (> 1: webtensor faster). */
export function table(report) {
  const head = [
    "case", "webtensor on", "TF.js backend", "webtensor ms", "TF.js ms", "TF.js/webtensor",
    "single+read webtensor ms", "single+read TF.js ms", "single TF.js/webtensor",
    "dispatch webtensor ms", "dispatch TF.js ms",
  ];
  const rows = report.results.map((r) => [
    r.case, r.device, (r.peer ?? `tfjs-${r.device}`).replace(/^tfjs-/, ""), ms(r.webtensor.ms), ms(r.tfjs.ms),
    ratio(r.tfjs.ms, r.webtensor.ms), ms(r.webtensor.single), ms(r.tfjs.single), ratio(r.tfjs.single, r.webtensor.single),
    ms(r.webtensor.dispatch), ms(r.tfjs.dispatch),
  ]);
  return [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

export const HEADING = "## JavaScript in the browser vs TensorFlow.js";

const range = (xs) => {
  const lo = Math.min(...xs).toFixed(1);
  const hi = Math.max(...xs).toFixed(1);
  return lo === hi ? `${lo}x` : `${lo}x to ${hi}x`;
};

/** Where webtensor stands, from the numbers: which rows it wins, by how much. */
function standing(report) {
  const gpu = report.results.filter((r) => r.device === "webgpu");
  if (!gpu.length) return "The WebGPU rows were not run (--no-gpu).";
  const ratios = gpu.map((r) => r.tfjs.ms / r.webtensor.ms);
  const slower = gpu.filter((r) => r.tfjs.ms < r.webtensor.ms || r.tfjs.single < r.webtensor.single);
  const dispatch = gpu.map((r) => r.webtensor.dispatch / r.tfjs.dispatch);
  const says = [
    slower.length
      ? `On WebGPU webtensor is slower in ${slower.map((r) => `${r.case}`).join(", ")}; in the other rows it is faster (TF.js/webtensor ${range(ratios)}).`
      : `On WebGPU webtensor is faster in every row, ${range(ratios)} pipelined.`,
    `Where it is slower is the JavaScript time per op (the dispatch columns): ${range(dispatch)} TF.js's.`,
  ];
  return says.join(" ");
}

/** The docs/perf.md section: {heading, text}. */
export function section(report) {
  const e = report.env;
  const o = report.options;
  const m = o.mlp;
  const text = `${HEADING}

Measured by \`make js-bench\` on ${e.date} at commit ${e.commit ?? "unknown"} (${e.hostCores} cores shared with other work; ${e.browser} headless, WebGPU on
${e.adapter}, Chromium's software WebGPU, which runs the compute shaders on the same CPU cores; webtensor ${e.webtensor}
on ${e.webtensorDevice}; TensorFlow.js ${e.tfjs} with @tensorflow/tfjs-backend-webgpu, \`tf.getBackend()\` = ${e.tfjsBackend}).
\`make js-bench\` runs \`sdk/js/bench/run.mjs\` on a copy of the built package (\`make npm\`), with TensorFlow.js from
\`sdk/js/bench\`'s own locked dependencies; everything is served on 127.0.0.1. Both libraries run in one page on the
same inputs, alternating rep by rep, and their results must agree (1e-3 relative) or the run fails. Times are
medians of ${o.reps} reps after ${o.warmup} warm-up runs, in milliseconds per op or training step (lower is better); a
ratio is TF.js time / webtensor time, so above 1 means webtensor is faster.

- pipelined (the first three columns): n ops queued back to back (n ${nRange(report)}, chosen from the warm-up, the same
  for both), then one \`await data()\` of the last result; the time over n.
- single+read: one op, then \`await data()\` of its result: the latency of a lone call.
- dispatch: the JavaScript time to issue each op of a pipelined rep, before the readback (\`performance.now\`,
  100 µs resolution in a page). On the CPU backends the op runs inside the call, so it is the whole time.

${table(report)}

Cases: matmul of two n x n f32 matrices; one SGD step (forward, softmax cross entropy averaged over the batch,
backward, update, lr ${m.lr}) of a ${m.inputs}-${m.hidden}-${m.outputs} ReLU MLP at batch ${m.batch}, written as each library's users write it
(webtensor: \`loss.backward()\`, new parameters made under \`noGrad\`; TF.js: \`tf.train.sgd(lr).minimize\` over
variables).${o.cpu ? ` The cpu rows are webtensor's CPU path (the Go core compiled to WebAssembly, one thread: Go's wasm
port has none) against TF.js's \`wasm\` backend (@tensorflow/tfjs-backend-wasm ${e.tfjs}, XNNPACK, ${wasmBuild(e)}; its .wasm
files served from node_modules through \`setWasmPaths\`) and its \`cpu\` backend (plain JavaScript): matmul ${o.cpu.sizes.join(" and ")}
and one Adam step (lr ${o.cpu.mlp.lr}, torch's epsilon 1e-8 on both; TF.js: \`tf.train.adam\`) of a
${o.cpu.mlp.inputs}-${o.cpu.mlp.hidden}-${o.cpu.mlp.hidden}-${o.cpu.mlp.outputs} ReLU MLP at batch ${o.cpu.mlp.batch}.` : ""}

${standing(report)}

${cpuPath(report)}

- The GPU time decides the WebGPU rows, and SwiftShader runs a GPU program as CPU threads. TF.js's WebGPU matmul
  (its default, packed program) stages tiles in workgroup shared memory between barriers, which costs a CPU
  emulation dearly; its other programs (\`WEBGPU_MATMUL_PROGRAM_TYPE\`) were no faster at 512 (split-K 1.1-1.2 s,
  the small-output one 2 s, the reduce one over WebGPU's dispatch limits). webtensor's browser build uses its
  register-blocked kernels without shared memory (untuned: timing needs waits a synchronous call cannot make),
  which software drivers favour, as the llvmpipe rows above show. On a hardware GPU, where shared-memory tiling
  pays, the matmul ratios were not measured here and may well be smaller.
- Per op, webtensor spends more JavaScript time than TF.js. Every op crosses from JavaScript into the Go
  module (syscall/js; an empty call costs 25-40 µs here), and the Go WebGPU backend builds each op's bind group
  through syscall/js (cogentcore/webgpu assembles the descriptor as JavaScript objects field by field, each
  \`js.Value\` with a Go finalizer). A CPU profile of a small relu on WebGPU (about 0.6 ms a call, against 0.06 ms
  for TF.js's) put about a quarter in creating the bind group, an eighth in decoding the call's arguments (the op
  name and the input list), about a quarter in the Go runtime entering and leaving the call, and the rest in the
  core's dispatch, allocation and GC. Behind tens of milliseconds of GPU time per op it does not show; with many
  small ops on a fast GPU it would be what limits a training step.
`;
  return { heading: HEADING, text };
}

function nRange(report) {
  const ns = report.results.map((r) => r.n);
  const lo = Math.min(...ns);
  const hi = Math.max(...ns);
  return lo === hi ? `= ${lo}` : `${lo} to ${hi}`;
}

/** How TF.js's wasm backend ran: its SIMD build or not, and its threads. */
function wasmBuild(e) {
  const w = e.tfjsWasm;
  if (!w) return "build not recorded";
  return `${w.simd ? "SIMD" : "no SIMD"} build, ${w.threads} thread${w.threads === 1 ? "" : "s"}`;
}

/** The CPU path's standing against TF.js's wasm backend (issue 27's bar: at least 0.5 of its speed) and wt.init()'s choice. */
function cpuPath(report) {
  const rows = report.results.filter((r) => r.device === "cpu" && r.peer === "tfjs-wasm");
  const c = report.env.deviceChoice;
  const says = [];
  if (rows.length) {
    const met = rows.filter((r) => r.tfjs.ms / r.webtensor.ms >= 0.5);
    const list = (xs) => xs.map((r) => `${r.case} ${ratio(r.tfjs.ms, r.webtensor.ms)}`).join(", ");
    says.push(
      `Against TF.js's wasm backend the CPU path runs at ${list(rows)} of its speed (TF.js time / webtensor time; ` +
        `the bar is 0.5): ${met.length === rows.length ? "met in every row" : `met in ${met.length} of ${rows.length} rows`}.`,
    );
  }
  if (rows.some((r) => r.case.startsWith("MLP"))) {
    says.push(
      "TF.js's wasm training step takes several times what its own matmul rate predicts for the step's " +
        "~0.5 GFLOP (not investigated: its other kernels, the transposed products of the backward pass or Adam), " +
        "so the MLP ratio says less about matrix speed than the matmul rows do.",
    );
  }
  if (c) says.push(`Left to itself, \`wt.init()\` in this browser chose ${c.device}: ${c.reason}.`);
  return says.join(" ");
}
