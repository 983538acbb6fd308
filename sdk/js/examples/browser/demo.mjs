// The demo: data, model and training loop with the webtensor API, drawing
// with the plain canvas API. window.demo reports progress for the tests.

import * as wt from "webtensor";

const params = new URLSearchParams(location.search);
const STEPS = Number(params.get("steps") ?? 300);
// ?device=webgpu keeps the GPU even where the CPU measured faster (a software adapter).
const DEVICE = params.get("device") ?? "auto";
const status = document.getElementById("status");
const demo = (window.demo = { done: false, losses: [], device: "", error: "" });

/** Three interleaved spirals, 100 points each, with a little deterministic jitter. */
function spirals(perClass = 100) {
  const xs = new Float32Array(perClass * 3 * 2);
  const ys = new Int32Array(perClass * 3);
  let seed = 1;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * 0.2;
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < perClass; i++) {
      const r = i / perClass;
      const t = c * 4 + 4 * r + rnd();
      const k = c * perClass + i;
      xs[2 * k] = r * Math.sin(t);
      xs[2 * k + 1] = r * Math.cos(t);
      ys[k] = c;
    }
  }
  return { xs, ys };
}

function drawLoss(canvas, losses) {
  const g = canvas.getContext("2d");
  const { width: w, height: h } = canvas;
  g.clearRect(0, 0, w, h);
  g.fillStyle = "#555";
  g.fillText("loss", 8, 14);
  g.fillText(`step ${losses.length ? losses[losses.length - 1][0] : 0}`, w - 70, h - 8);
  if (losses.length < 2) return;
  const max = Math.max(...losses.map(([, l]) => l));
  g.strokeStyle = "#1565c0";
  g.lineWidth = 2;
  g.beginPath();
  losses.forEach(([step, l], i) => {
    const x = 30 + ((w - 40) * step) / STEPS;
    const y = h - 20 - ((h - 40) * l) / max;
    if (i === 0) g.moveTo(x, y);
    else g.lineTo(x, y);
  });
  g.stroke();
}

function drawPoints(canvas, xs, pred) {
  const g = canvas.getContext("2d");
  const colors = ["#e53935", "#43a047", "#1e88e5"];
  g.clearRect(0, 0, canvas.width, canvas.height);
  for (let k = 0; k < pred.length; k++) {
    g.fillStyle = colors[pred[k]];
    g.beginPath();
    g.arc(150 + 140 * xs[2 * k], 150 - 140 * xs[2 * k + 1], 3, 0, 2 * Math.PI);
    g.fill();
  }
}

async function main() {
  await wt.init({ device: DEVICE });
  demo.device = wt.device();
  const where = demo.device.startsWith("webgpu") ? "the GPU (WebGPU)" : `the CPU (${wt.deviceChoice().reason})`;
  const { xs, ys } = spirals();
  const x = wt.tensor(xs, [ys.length, 2]);
  const y = wt.tensor(ys, [ys.length]);
  wt.manualSeed(0);
  const model = new wt.nn.Sequential(new wt.nn.Linear(2, 64), new wt.nn.ReLU(), new wt.nn.Linear(64, 64),
    new wt.nn.ReLU(), new wt.nn.Linear(64, 3));
  const opt = new wt.optim.Adam(model.parameters(), { lr: 0.01 });
  const start = performance.now();
  for (let step = 1; step <= STEPS; step++) {
    opt.zeroGrad();
    const loss = wt.tidy(() => wt.crossEntropy(model.call(x), y));
    loss.backward();
    opt.step();
    if (step % 10 === 0 || step === 1) {
      const l = (await loss.data())[0]; // the only wait for the GPU, every 10 steps
      demo.losses.push([step, l]);
      drawLoss(document.getElementById("loss"), demo.losses);
      status.textContent = `training on ${where}: step ${step}/${STEPS}, loss ${l.toFixed(4)}`;
    }
    loss.dispose();
  }
  const pred = wt.tidy(() => wt.argmax(model.call(x), { axis: 1 }));
  const p = await pred.data();
  const predicted = Array.from(p, Number);
  demo.accuracy = predicted.filter((c, k) => c === ys[k]).length / ys.length;
  drawPoints(document.getElementById("points"), xs, predicted);
  const secs = (performance.now() - start) / 1000;
  status.textContent = `trained on ${where}: ${STEPS} steps in ${secs.toFixed(1)} s, ` +
    `loss ${demo.losses[demo.losses.length - 1][1].toFixed(4)}, accuracy ${(100 * demo.accuracy).toFixed(1)}%`;
  wt.dispose([x, y, pred]);
  opt.dispose();
  model.dispose();
  demo.done = true;
}

main().catch((e) => {
  demo.error = e.message;
  status.textContent = `error: ${e.message}`;
});
