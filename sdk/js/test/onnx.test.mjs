// wt.onnx from Node: the runtime's importer through the C ABI (wt_call's onnx.* targets).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as wt from "webtensor";
import { ONNX_TESTDATA, settledLiveTensors } from "./helpers.mjs";
import { onnxSdkModel, onnxValuesModel } from "./cases.mjs";

await wt.init();

const modelPath = join(ONNX_TESTDATA, "sdk_model.onnx");
const expected = JSON.parse(readFileSync(join(ONNX_TESTDATA, "sdk_model.json"), "utf8"));

test("onnx: load(bytes) runs with named inputs and gives the reference outputs by name", async () => {
  const live = await settledLiveTensors(wt);
  assert.deepEqual(await onnxSdkModel(wt, readFileSync(modelPath), expected, "cpu"), []);
  assert.equal(wt.liveTensors(), live, "every tensor freed");
});

test("onnx: runValues carries sequences (arrays) and optionals (null) both ways", async () => {
  const live = await settledLiveTensors(wt);
  const cases = JSON.parse(readFileSync(join(ONNX_TESTDATA, "sdk_values_model.json"), "utf8"));
  assert.deepEqual(await onnxValuesModel(wt, readFileSync(join(ONNX_TESTDATA, "sdk_values_model.onnx")), cases, "cpu"), []);
  assert.equal(wt.liveTensors(), live, "every tensor freed");
});

test("onnx: a model loaded onto WebGPU runs there", async (t) => {
  if (!wt.devices().includes("webgpu:0")) {
    t.skip("no WebGPU adapter on this machine (webgpu:0 is not among wt.devices())");
    return;
  }
  assert.deepEqual(await onnxSdkModel(wt, readFileSync(modelPath), expected, "webgpu:0"), []);
});

test("onnx: load(path) reads the file; errors are the runtime's", async () => {
  const model = await wt.onnx.load(modelPath);
  assert.deepEqual(model.outputNames, ["y", "top"]);
  model.dispose();
  await assert.rejects(wt.onnx.load(join(ONNX_TESTDATA, "absent.onnx")), (e) => {
    assert.equal(e.code, "WT_ERR_IO");
    assert.match(e.message, /absent\.onnx: no such file or directory/);
    return true;
  });
  const broken = Buffer.from(readFileSync(modelPath).toString("latin1").replace("Relu", "Relq"), "latin1");
  await assert.rejects(wt.onnx.load(broken), /Relq/);
  await assert.rejects(wt.onnx.load(new Uint8Array([255, 255, 255])), /parsing ModelProto/);
});
