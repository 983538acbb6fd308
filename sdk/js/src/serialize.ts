// Checkpoints in the safetensors format, byte for byte what the Go nn
// package (nn.Save) and the Python SDK (wt.save) write: names sorted,
// compact JSON header padded with spaces to 8 bytes, metadata
// {"format": "pt"}. So a model saved here loads in Go, Python, Java and
// PyTorch (safetensors.torch.load_file), and the other way round.
//
// Bytes in and out, so the same code runs in Node and in the browser; the
// Node entry adds saveFile/loadFile. Loading reads the file's layout from the
// runtime's validator (Go's, the one every SDK uses), so a malformed file is
// refused as everywhere else: a WebtensorError naming the file and the problem.

import { native } from "./binding.js";
import { Tensor, tensor } from "./core.js";
import { DTYPES, toDType } from "./dtype.js";
import type { DType } from "./dtype.js";
import type { Module } from "./nn.js";

const TO_ST: Record<DType, string> = { f64: "F64", f32: "F32", f16: "F16", bf16: "BF16", i64: "I64", i32: "I32",
  u32: "U32", i16: "I16", i8: "I8", u8: "U8", bool: "BOOL" };
// Headers past this the validator refuses anyway: only this much goes to it.
const MAX_HEADER = 100 << 20;

/** The layout wt_safetensors_header describes (capi/include/webtensor.h). */
interface Layout {
  data_start: number;
  metadata: Record<string, string>;
  tensors: { name: string; dtype: string; shape: number[]; offsets: [number, number] }[];
}

/** Checks bytes with the runtime's validator and returns their layout; name labels them in errors. */
function layout(bytes: Uint8Array, name = ""): Layout {
  let n = Math.min(bytes.length, 8);
  if (bytes.length >= 8) {
    const hl = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
    if (hl <= BigInt(MAX_HEADER)) n = Math.min(bytes.length, 8 + Number(hl));
  }
  return JSON.parse(native().safetensorsHeader(bytes.subarray(0, n), bytes.length, name)) as Layout;
}

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
 * the default device). Module.loadStateDict takes the result. name says what
 * to call the bytes in errors (loadFile passes the path).
 */
export function load(bytes: Uint8Array, device?: string, name = ""): Map<string, Tensor> {
  const { data_start: base, tensors } = layout(bytes, name);
  const out = new Map<string, Tensor>();
  try {
    for (const { name: key, dtype, shape, offsets: [lo, hi] } of tensors) {
      const dt = toDType(dtype);
      // a copy, aligned for the typed array (a Node Buffer's slice() would be a view)
      const raw = new Uint8Array(hi - lo);
      raw.set(bytes.subarray(base + lo, base + hi));
      const arr = new DTYPES[dt].array(raw.buffer, 0, (hi - lo) / DTYPES[dt].size);
      out.set(key, tensor(arr, shape, { dtype: dt, device }));
    }
  } catch (e) {
    for (const t of out.values()) t.dispose();
    throw e;
  }
  return out;
}
