// Checkpoints in the safetensors format, byte for byte what the Go nn
// package (nn.Save) and the Python SDK (wt.save) write: names sorted,
// compact JSON header padded with spaces to 8 bytes, metadata
// {"format": "pt"}. So a model saved here loads in Go, Python, Java and
// PyTorch (safetensors.torch.load_file), and the other way round.
//
// Bytes in and out, so the same code runs in Node and in the browser; the
// Node entry adds saveFile/loadFile.

import { Tensor, tensor } from "./core.js";
import { DTYPES } from "./dtype.js";
import type { DType } from "./dtype.js";
import type { Module } from "./nn.js";

const TO_ST: Record<DType, string> = { f64: "F64", f32: "F32", f16: "F16", bf16: "BF16", i64: "I64", i32: "I32",
  u32: "U32", i16: "I16", i8: "I8", u8: "U8", bool: "BOOL" };
const FROM_ST = Object.fromEntries(Object.entries(TO_ST).map(([k, v]) => [v, k as DType])) as Record<string, DType>;
const MAX_HEADER = 100 << 20;

type StateDict = Map<string, Tensor> | Record<string, Tensor>;

/** A state dict (or a module's) as safetensors bytes; waits for the device to read the values. */
export async function save(state: StateDict | Module, metadata: Record<string, string> = { format: "pt" }): Promise<Uint8Array> {
  const sd: Map<string, Tensor> =
    "stateDict" in state && typeof state.stateDict === "function" ? (state as Module).stateDict()
      : state instanceof Map ? state : new Map(Object.entries(state as Record<string, Tensor>));
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) {
    header.__metadata__ = Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  const blobs: Uint8Array[] = [];
  let offset = 0;
  for (const name of [...sd.keys()].sort()) {
    const t = sd.get(name)!;
    if (name === "__metadata__" || name === "") throw new Error(`webtensor: save: invalid tensor name ${JSON.stringify(name)}`);
    if (!(t instanceof Tensor)) throw new TypeError(`webtensor: save: ${name} is not a webtensor Tensor`);
    const host = t.device === "cpu" ? t : await t.toAsync("cpu");
    const a = await host.data();
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
    if (host !== t) host.dispose();
    header[name] = { dtype: TO_ST[t.dtype], shape: [...t.shape], data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
    blobs.push(bytes);
  }
  const ordered = Object.fromEntries(Object.keys(header).sort().map((k) => [k, header[k]]));
  let hj = new TextEncoder().encode(JSON.stringify(ordered));
  const pad = (8 - ((8 + hj.length) % 8)) % 8;
  if (pad) hj = new Uint8Array([...hj, ...new Array(pad).fill(0x20)]);
  const out = new Uint8Array(8 + hj.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(hj.length), true);
  out.set(hj, 8);
  let at = 8 + hj.length;
  for (const b of blobs) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/**
 * Reads safetensors bytes (from save, Go's nn.Save, Python's wt.save or
 * safetensors.torch) into name -> Tensor in file order, on device (default:
 * the default device). Module.loadStateDict takes the result.
 */
export function load(bytes: Uint8Array, device?: string): Map<string, Tensor> {
  const where = "webtensor: load";
  if (bytes.length < 8) throw new Error(`${where}: ${bytes.length} bytes, too short for safetensors`);
  const hl = Number(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(0, true));
  if (hl > MAX_HEADER || hl > bytes.length - 8) {
    throw new Error(`${where}: header length ${hl} exceeds the ${bytes.length}-byte file: truncated or not safetensors`);
  }
  let header: Record<string, { dtype?: string; shape?: number[]; data_offsets?: number[] }>;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + hl)));
  } catch (e) {
    throw new Error(`${where}: the header is not valid JSON: ${(e as Error).message}`);
  }
  const base = 8 + hl;
  const size = bytes.length - base;
  const entries: [number, number, string, DType, number[]][] = [];
  for (const [name, e] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const dt = FROM_ST[e?.dtype ?? ""];
    if (!dt) throw new Error(`${where}: tensor ${JSON.stringify(name)}: unsupported dtype ${JSON.stringify(e?.dtype)}`);
    const shape = e.shape;
    const off = e.data_offsets;
    if (!Array.isArray(shape) || !shape.every((s) => Number.isInteger(s) && s >= 0)) {
      throw new Error(`${where}: tensor ${JSON.stringify(name)}: bad shape ${JSON.stringify(shape)}`);
    }
    const n = shape.reduce((a, b) => a * b, 1);
    const [lo, hi] = Array.isArray(off) ? off : [-1, -1];
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo! < 0 || hi! < lo! || hi! > size || hi! - lo! !== n * DTYPES[dt].size) {
      throw new Error(`${where}: tensor ${JSON.stringify(name)}: data offsets ${JSON.stringify(off)} do not fit shape [${shape}] of ${dt} within ${size} data bytes`);
    }
    entries.push([lo!, hi!, name, dt, shape]);
  }
  entries.sort((a, b) => a[0] - b[0]);
  const out = new Map<string, Tensor>();
  try {
    for (const [lo, hi, name, dt, shape] of entries) {
      // a copy, aligned for the typed array (a Node Buffer's slice() would be a view)
      const raw = new Uint8Array(hi - lo);
      raw.set(bytes.subarray(base + lo, base + hi));
      const arr = new DTYPES[dt].array(raw.buffer, 0, (hi - lo) / DTYPES[dt].size);
      out.set(name, tensor(arr, shape, { dtype: dt, device }));
    }
  } catch (e) {
    for (const t of out.values()) t.dispose();
    throw e;
  }
  return out;
}
