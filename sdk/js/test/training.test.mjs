// Training through the runtime from Node: RMSprop and Adagrad, the
// learning-rate schedules, gradient clipping and an optimizer's state, with
// numbers torch 2.15 gives for the same steps.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as wt from "webtensor";

await wt.init();

const close = (got, want, tol, what) =>
  want.forEach((w, i) => assert.ok(Math.abs(got[i] - w) <= tol * (1 + Math.abs(w)), `${what}[${i}]: ${got[i]} vs ${w}`));

/** Five steps on p0[i] = cos(0.7 i) with gradients sin(i + 1.3 t) * 2 / (t + 1), as nn/optim_test.go. */
async function run(make) {
  const p = wt.tensor(new Float64Array(6).map((_, i) => Math.cos(0.7 * i)), [2, 3]);
  p.requiresGrad = true;
  const opt = make([p]);
  for (let t = 0; t < 5; t++) {
    opt.zeroGrad();
    const g = wt.tensor(new Float64Array(6).map((_, i) => (Math.sin(i + 1.3 * t) * 2) / (t + 1)), [2, 3]);
    const loss = wt.tidy(() => wt.sum(wt.mul(p, g)));
    loss.backward();
    wt.dispose([g, loss]);
    opt.step();
  }
  const out = [...(await p.data())];
  const state = opt.state.get(p);
  assert.equal(state.step, 5);
  wt.dispose(Object.values(state).filter((v) => v instanceof wt.Tensor));
  opt.dispose();
  p.dispose();
  return out;
}

test("optim: RMSprop and Adagrad match torch", async () => {
  close(await run((ps) => new wt.optim.RMSprop(ps, { lr: 0.01, alpha: 0.9, weightDecay: 0.1, momentum: 0.9, centered: true })),
    [0.7346748906745703, 0.6020621723009315, 0.07433613643392768, -0.5153341157945429, -0.7661480834307307, -0.8200907240659774], 1e-12, "RMSprop");
  close(await run((ps) => new wt.optim.Adagrad(ps, { lr: 0.1, lrDecay: 0.1, weightDecay: 0.05, initialAccumulatorValue: 0.5, maximize: true })),
    [1.0387441196322864, 0.8524461038911669, 0.2309757527344819, -0.5197594085013963, -1.0321049254419836, -0.9963511795203344], 1e-12, "Adagrad");
  const q = wt.tensor([1]);
  q.requiresGrad = true;
  assert.throws(() => new wt.optim.RMSprop([q], { alpha: -1 }), /RMSprop: invalid alpha: -1/);
  assert.throws(() => new wt.optim.Adagrad([q], { lrDecay: 1, momentum: 0.9 }), /Adagrad: unknown setting "momentum"/);
  q.dispose();
});

test("optim: schedules set the optimizer's lr as torch's do", () => {
  const p = wt.tensor([0]);
  p.requiresGrad = true;
  const opt = new wt.optim.SGD([p], { lr: 0.1 });
  const cases = [
    [(o) => new wt.optim.StepLR(o, { stepSize: 3, gamma: 0.5 }), [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025]],
    [(o) => new wt.optim.MultiStepLR(o, { milestones: [2, 5], gamma: 0.5 }), [0.1, 0.1, 0.05, 0.05, 0.05, 0.025]],
    [(o) => new wt.optim.ExponentialLR(o, { gamma: 0.9 }), [0.1, 0.09000000000000001, 0.08100000000000002]],
    [(o) => new wt.optim.CosineAnnealingLR(o, { tMax: 10, etaMin: 0.001 }), [0.1, 0.09757729755661011, 0.0905463412215599]],
    [(o) => new wt.optim.LinearLR(o, { startFactor: 0.5, endFactor: 0.1, totalIters: 4 }), [0.05, 0.04000000000000001, 0.030000000000000006]],
  ];
  for (const [make, want] of cases) {
    opt.options.lr = 0.1;
    const sched = make(opt);
    const got = [opt.options.lr];
    for (let i = 1; i < want.length; i++) {
      opt.step();
      sched.step();
      got.push(opt.options.lr);
    }
    close(got, want, 1e-14, sched.constructor.name);
    assert.equal(sched.lastEpoch, want.length - 1);
  }
  assert.throws(() => new wt.optim.StepLR(opt, { stepSize: 0 }), /step size must be >= 1/);
  opt.dispose();
  p.dispose();
});

test("nn: clipGradNorm and clipGradValue clip on the device as torch's", async () => {
  const a = wt.tensor([0, 0, 0]);
  a.requiresGrad = true;
  const g = wt.tensor([3, -4, 1.5]);
  const loss = wt.tidy(() => wt.sum(wt.mul(a, g)));
  loss.backward();
  const total = wt.nn.clipGradNorm([a], 1);
  close([Number(total.item())], [5.220153254455275], 1e-6, "total");
  const clipped = a.grad;
  close([...(await clipped.data())], [0.5746958, -0.7662611, 0.2873479], 1e-6, "grad");
  wt.nn.clipGradValue([a], 0.5);
  const v = a.grad;
  close([...(await v.data())], [0.5, -0.5, 0.2873479], 1e-6, "clamped");
  wt.dispose([a, g, loss, total, clipped, v]);
});
