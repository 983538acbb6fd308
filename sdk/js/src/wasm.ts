// The browser runtime: the Go core compiled to WebAssembly (sdk/js/wasm),
// started with Go's wasm_exec.js, as a Binding. The module's calls are on
// globalThis.__webtensor; each returns its value or an Error with a
// `status`, which becomes a WebtensorError here.

import { ERR_INVALID, WebtensorError } from "./binding.js";
import type { AttrEntry, Binding } from "./binding.js";
import type { TypedArray } from "./dtype.js";

/** What sdk/js/wasm/calls.go exports. */
interface GoCalls {
  abiVersion: number;
  version: string;
  init(preferGPU: boolean): Promise<[string, string]>;
  read(h: number): Promise<Uint8Array>;
  toDeviceAsync(h: number, device: string): Promise<number>;
  opAsync(name: string, inputs: number[], attrs: unknown[]): Promise<number[]>;
  backwardAsync(h: number, grad: number): Promise<void>;
  [sync: string]: unknown;
}

type GoClass = new () => { importObject: WebAssembly.Imports; run(instance: WebAssembly.Instance): Promise<void> };

export interface BrowserInitOptions {
  /** Where webtensor.wasm is; default: next to this file (the package's dist/wasm/). */
  wasmURL?: string | URL;
  /** Where Go's wasm_exec.js is; default: next to webtensor.wasm. */
  wasmExecURL?: string | URL;
  /** "auto" (default): WebGPU when the browser offers it, else the CPU with a warning; "cpu": the CPU backend. */
  device?: "auto" | "webgpu" | "cpu";
}

function rethrow(e: unknown): never {
  if (e instanceof Error) {
    const x = e as Error & { status?: number; needsAsync?: boolean };
    throw new WebtensorError(x.status ?? ERR_INVALID, e.message, x.needsAsync ?? false);
  }
  throw e;
}

async function settle<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    rethrow(e);
  }
}

const plainAttrs = (attrs: readonly AttrEntry[]) =>
  attrs.map(([n, k, v]) => [n, k, typeof v === "bigint" ? Number(v) : v]);

function bytes(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function wasmBinding(go: GoCalls): Binding {
  const call = <T>(name: string, ...args: unknown[]): T => {
    const r = (go[name] as (...a: unknown[]) => unknown)(...args);
    if (r instanceof Error) rethrow(r);
    return r as T;
  };
  type Info = [number, number[], number[], string, boolean, boolean];
  const info = (h: number) => call<Info>("info", h);
  return {
    platform: "browser",
    version: () => go.version,
    devices: () => call<string[]>("devices"),
    defaultDevice: () => call<string>("defaultDevice"),
    setDefaultDevice: (d) => call("setDefaultDevice", d),
    fromData: (data, dtype, shape, device) => call<number>("fromData", bytes(data), dtype, [...shape], device),
    fromHostBorrowed: () => null, // the module's memory is its own: fromArray copies
    lentArrays: () => 0,
    free: (h) => call("free", h),
    liveTensors: () => call<number>("liveTensors"),
    dtype: (h) => info(h)[0],
    shape: (h) => info(h)[1],
    strides: (h) => info(h)[2],
    device: (h) => info(h)[3],
    isContiguous: (h) => info(h)[4],
    readSync: (h, dst) => bytes(dst).set(call<Uint8Array>("readSync", h)),
    read: async (h, dst) => bytes(dst).set(await settle(go.read(h))),
    view: () => null, // the module's memory moves when it grows: reads copy
    toDevice: (h, d) => call<number>("toDevice", h, d),
    toDeviceAsync: (h, d) => settle(go.toDeviceAsync(h, d)),
    contiguous: (h) => call<number>("contiguous", h),
    detach: (h) => call<number>("detach", h),
    op: (name, inputs, attrs) => call<number[]>("op", name, [...inputs], plainAttrs(attrs)),
    opAsync: (name, inputs, attrs) => settle(go.opAsync(name, [...inputs], plainAttrs(attrs))),
    manifest: () => call<string>("manifest"),
    requiresGrad: (h) => info(h)[5],
    setRequiresGrad: (h, on) => call("setRequiresGrad", h, on),
    backward: (h, g) => call("backward", h, g),
    backwardAsync: (h, g) => settle(go.backwardAsync(h, g)),
    grad: (h) => call<number>("grad", h),
    zeroGrad: (h) => call("zeroGrad", h),
    noGradEnter: () => call("noGradEnter"),
    noGradExit: () => call("noGradExit"),
    manualSeed: (seed) => call("manualSeed", seed.toString()),
    liveDLPackExports: () => 0,
    traceBegin: (inputs) => call("traceBegin", [...inputs]),
    traceEnd: (outputs) => call<number>("traceEnd", [...outputs]),
    traceAbort: () => call("traceAbort"),
    graphRun: (g, inputs) => call<number[]>("graphRun", g, [...inputs]),
    graphText: (g) => call<string>("graphText", g),
    graphFree: (g) => call("graphFree", g),
    loadPlugin: () => {
      throw new Error("webtensor: WebAssembly plugins run in Node (the browser build has no wazero host)");
    },
    safetensorsHeader: (prefix, fileSize, name) => call<string>("safetensorsHeader", prefix, fileSize, name),
  };
}

async function fetchModule(url: URL): Promise<WebAssembly.Module> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`webtensor: cannot fetch ${url}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new Error(`webtensor: cannot fetch ${url}: HTTP ${res.status} (is webtensor.wasm served there?)`);
  try {
    return await WebAssembly.compileStreaming(res);
  } catch {
    // a server that does not say application/wasm: compile the bytes
    const again = await fetch(url);
    return WebAssembly.compile(await again.arrayBuffer());
  }
}

/** Fetches, compiles and starts the Go module; resolves when its calls are ready. */
export async function loadBrowser(opts: BrowserInitOptions = {}): Promise<{ binding: Binding; device: string; why: string }> {
  const wasmURL = new URL(opts.wasmURL ?? "./wasm/webtensor.wasm", import.meta.url);
  const execURL = new URL(opts.wasmExecURL ?? "./wasm_exec.js", wasmURL);
  const g = globalThis as unknown as { Go?: GoClass; __webtensor?: GoCalls; __webtensorReady?: (c: GoCalls) => void };
  if (!g.Go) {
    try {
      await import(/* @vite-ignore */ execURL.href);
    } catch (e) {
      throw new Error(`webtensor: cannot load Go's wasm_exec.js from ${execURL}: ${(e as Error).message}`);
    }
    if (!g.Go) throw new Error(`webtensor: ${execURL} did not define Go (is it Go's wasm_exec.js?)`);
  }
  const module = await fetchModule(wasmURL);
  const go = new g.Go!();
  const ready = new Promise<GoCalls>((resolve) => (g.__webtensorReady = resolve));
  const instance = await WebAssembly.instantiate(module, go.importObject);
  const exited = go.run(instance).then(() => {
    throw new Error("webtensor: the WebAssembly module exited");
  });
  const calls = await Promise.race([ready, exited]);
  const hasGPU = typeof navigator !== "undefined" && "gpu" in navigator && !!(navigator as { gpu?: unknown }).gpu;
  const want = opts.device ?? "auto";
  if (want === "webgpu" && !hasGPU) {
    console.warn("webtensor: this browser has no WebGPU (navigator.gpu); using the CPU backend");
  }
  let device: string;
  let why: string;
  [device, why] = await settle(calls.init(want !== "cpu" && hasGPU));
  if (!hasGPU) why = "this browser has no WebGPU (navigator.gpu)";
  else if (why && want !== "cpu") console.warn(`webtensor: WebGPU is not used (${why}); using the CPU backend`);
  return { binding: wasmBinding(calls), device, why };
}
