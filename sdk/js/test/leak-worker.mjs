// The leak test's loop, run on a worker thread by api.test.mjs: FFI calls
// from the main thread cost ~0.1-0.4 ms each (README, "Known cost"), on a
// worker ~1 us, so 100,000 tensors take seconds here instead of minutes.
import { parentPort, workerData } from "node:worker_threads";
import * as wt from "webtensor";

await wt.init();
const start = wt.liveTensors();
const data = new Float32Array([1, 2, 3, 4]);
for (let i = 0; i < workerData.n; i++) {
  const t = wt.tensor(data, [2, 2]);
  if (i % 10 === 0) wt.tidy(() => {
    t.add(1).mul(t);
  });
  t.dispose();
}
parentPort.postMessage({ start, end: wt.liveTensors() });
