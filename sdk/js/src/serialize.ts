// Checkpoints in the safetensors format. The runtime writes and reads them
// (wt_state_*): the bytes every SDK, Go's nn.Save and torch's safetensors
// write, checked on load by the one validator (a malformed file is a
// WebtensorError naming it and the problem). Bytes in and out here, so the
// same code runs in Node and in the browser; the Node entry adds saveFile
// and loadFile.

import { native } from "./binding.js";
import { Tensor } from "./core.js";
import type { Module } from "./nn.js";

type StateDict = Map<string, Tensor> | Record<string, Tensor>;

/** The entries of a state dict or a module's. */
export function entriesOf(state: StateDict | Module): [string, Tensor][] {
  if ("stateDict" in state && typeof state.stateDict === "function") return [...(state as Module).stateDict()];
  return state instanceof Map ? [...state] : Object.entries(state as Record<string, Tensor>);
}

/** @internal A runtime state dict of entries and metadata; the caller frees it (stateFree). */
export function stateOf(entries: Iterable<[string, Tensor]>, metadata: Record<string, string> = {}): number {
  const rt = native();
  const s = rt.stateNew();
  try {
    for (const [name, t] of entries) {
      if (!(t instanceof Tensor)) throw new TypeError(`webtensor: save: ${name} is not a webtensor Tensor`);
      rt.statePut(s, name, t.handle);
    }
    for (const [k, v] of Object.entries(metadata)) rt.stateSetMetadata(s, k, v);
  } catch (e) {
    rt.stateFree(s);
    throw e;
  }
  return s;
}

/** @internal The entries of a runtime state dict as new tensors (in order), freeing it. */
export function readState(s: number): Map<string, Tensor> {
  const rt = native();
  const out = new Map<string, Tensor>();
  try {
    const n = rt.stateCount(s);
    for (let i = 0; i < n; i++) out.set(rt.stateName(s, i), new Tensor(rt.stateGet(s, i)));
  } catch (e) {
    for (const t of out.values()) t.dispose();
    throw e;
  } finally {
    rt.stateFree(s);
  }
  return out;
}

/** A state dict (or a module's) as safetensors bytes; waits for the device to read the values. */
export async function save(state: StateDict | Module, metadata: Record<string, string> = { format: "pt" }): Promise<Uint8Array> {
  const s = stateOf(entriesOf(state), metadata);
  try {
    return await native().stateToBytes(s);
  } finally {
    native().stateFree(s);
  }
}

/**
 * Reads safetensors bytes (from save, Go's nn.Save, Python's wt.save or
 * safetensors.torch) into name -> Tensor in file order, on device (default:
 * the default device). Module.loadStateDict takes the result. name says what
 * to call the bytes in errors (loadFile passes the path).
 */
export function load(bytes: Uint8Array, device?: string, name = ""): Map<string, Tensor> {
  return readState(native().stateFromBytes(bytes, device ?? null, name));
}
