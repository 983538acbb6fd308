// Compiled with `tsc --strict --noEmit` against the installed package by
// `make js-test`: the published types let a consumer write this, and reject
// the marked mistakes.
import * as wt from "webtensor";

await wt.init();
const x: wt.Tensor = wt.tensor(new Float32Array(6), [2, 3]);
const y: wt.Tensor = x.softmax({ axis: -1 }).add(1);
const d: Float32Array = await y.data<"f32">();
const parts: wt.Tensor[] = wt.split(x, { sections: 3, axis: 1 });
const z: wt.Tensor = wt.layerNorm(x, null, null, { normalizedShape: [3] });
const dt: wt.DType = z.dtype;
const c = wt.tensor(new Float32Array(4), [2], { dtype: "c64" });
const cparts: Float32Array = c.dataSync<"c64">(); // interleaved real and imaginary parts
const c128: Float64Array = await c.cast({ dtype: "c128" }).data<"c128">();
const one = c.sum().item();
const re: number = typeof one === "object" ? one.re : 0;
const ci: wt.Complex = { re, im: 0 };
const kept = wt.tidy(() => ({ a: x.relu(), b: [x.exp()] }));
kept.a.dispose();
wt.dispose([parts, y, z, kept]);
const model: wt.onnx.Model = await wt.onnx.load(new Uint8Array(0), { device: "cpu" });
const outs: Record<string, wt.Tensor> = await model.run({ x });
const info: readonly wt.onnx.ValueInfo[] = model.inputs;
const values: Record<string, wt.Tensor | wt.Tensor[] | null> = await model.runValues({ x, parts: [x, x], maybe: null });
const kind: wt.onnx.Kind = info[0]!.kind;
model.dispose();
// @ts-expect-error onnx inputs are tensors
await model.run({ x: [1, 2] });
const tok: wt.multimodal.Tokenizer = await wt.multimodal.Tokenizer.load(new Uint8Array(0));
const enc: wt.multimodal.Encoding = tok.encode(["a", "b"], { padId: 0 });
const text: string = await (await wt.multimodal.Whisper.load("w")).transcribe(x);
const enc2: wt.multimodal.ConformerOutput = await (await wt.multimodal.Conformer.load("m")).encode([x], { frameMask: true });
const x16: wt.Tensor = wt.multimodal.resample(x, 44100, 16000);
const img: wt.Tensor = await (await wt.diffuse.Pipeline.load("p")).generate({ batch: 2, seed: 7n });
const emb: wt.Tensor = await (await wt.multimodal.SentenceEncoder.load(new Uint8Array(0))).encode(["a"], { batchSize: 8 });
const probs: wt.Tensor = await (await wt.multimodal.CLIP.load(new Uint8Array(0), { device: "webgpu:0" })).zeroShot(x, ["a"]);
// @ts-expect-error a model loads from a folder's path or a zip archive's bytes
await wt.multimodal.SentenceEncoder.load(42);
// @ts-expect-error zero-shot pixels are a tensor
await (await wt.multimodal.CLIP.load("c")).zeroShot([1, 2], ["a"]);
// @ts-expect-error reshape needs its shape
wt.reshape(x);
// @ts-expect-error axis is a number
x.softmax({ axis: "1" });
// @ts-expect-error not a dtype
x.cast({ dtype: "f128" });
console.log(d.length, dt, cparts, c128, ci, outs, info, enc, text, img, enc2, x16);
