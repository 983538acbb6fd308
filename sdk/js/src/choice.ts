// The browser's default device when WebGPU is a software adapter. Chromium
// without a GPU offers SwiftShader, which runs compute shaders on the same
// CPU cores as the page, through an emulated GPU: often slower than the CPU
// backend, by how much depends on the machine and the browser. So init()
// measures both on a short fixed workload (sdk/js/wasm/calibrate.go) and
// keeps the faster, instead of trusting the name "WebGPU". A hardware
// adapter is taken as it is: measuring it would cost every page load time
// for an answer that is nearly always "the GPU".

import type { Binding } from "./binding.js";

/** What init() chose as the default device, and why (`wt.deviceChoice()`). */
export interface DeviceChoice {
  /** The default device init() left: "webgpu:0" or "cpu". */
  device: string;
  /** Why, in words. */
  reason: string;
  /** The calibration's times in ms (median of its reps) and its workload; null when it did not run. */
  timings: Calibration | null;
  /** Whether the timings came from an earlier page's calibration (localStorage) rather than from this one. */
  cached: boolean;
  /** The WebGPU adapter's description ("" without one). */
  adapter: string;
  /** Whether that adapter is a software one (SwiftShader, llvmpipe). */
  software: boolean;
  /** What runs the CPU backend's matrix products, transcendentals and softmax/layer_norm rows: "wasm SIMD (...)" or "Go (...why not SIMD)". */
  cpuKernels: string;
}

/** One calibration: the workload's median time on each device, in milliseconds. */
export interface Calibration {
  webgpu: number;
  cpu: number;
  workload: string;
}

/** What loadBrowser learnt before choosing. */
export interface Opened {
  want: "auto" | "webgpu" | "cpu";
  hasGPU: boolean;
  device: string; // the default device wt_browser_init left
  why: string; // why WebGPU did not open ("" when it did)
  adapter: string;
  software: boolean;
  cpuKernels: string; // DeviceChoice.cpuKernels
  simd: boolean; // whether the CPU backend runs the wasm SIMD kernels
}

const KEY_PREFIX = "webtensor:device-choice:";

/**
 * The cache key: the runtime's version, the CPU kernels and the adapter, so
 * a new release (other kernels), a page without the SIMD module or another
 * adapter (a browser update, a GPU switched on) measures again.
 */
export function cacheKey(version: string, simd: boolean, adapter: string): string {
  return `${KEY_PREFIX}${version}:${simd ? "simd" : "go"}:${adapter}`;
}

function storage(): Storage | null {
  try {
    return (globalThis as { localStorage?: Storage }).localStorage ?? null;
  } catch {
    return null; // opaque origins and disabled storage throw on access
  }
}

const positive = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x > 0;

/** A cached calibration, or null when there is none or it is not one (a stale format, a hand edit). */
export function readCached(key: string): Calibration | null {
  try {
    const raw = storage()?.getItem(key);
    if (!raw) return null;
    const v = JSON.parse(raw) as Partial<Calibration> | null;
    if (v && positive(v.webgpu) && positive(v.cpu) && typeof v.workload === "string") {
      return { webgpu: v.webgpu, cpu: v.cpu, workload: v.workload };
    }
  } catch {
    // not JSON: ignored, and replaced by the next calibration
  }
  return null;
}

function writeCached(key: string, c: Calibration): void {
  try {
    storage()?.setItem(key, JSON.stringify(c));
  } catch {
    // quota or disabled storage: the next page calibrates again
  }
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

/**
 * Decides the default device from what init() opened, calibrating when the
 * adapter is a software one and the page left the choice to us; sets it
 * through the binding and returns the choice.
 */
export async function chooseDevice(
  b: Binding,
  o: Opened,
  calibrate: () => Promise<Calibration>,
): Promise<DeviceChoice> {
  const base = { adapter: o.adapter, software: o.software, timings: null, cached: false, cpuKernels: o.cpuKernels };
  if (!o.hasGPU) return { ...base, device: o.device, reason: "this browser has no WebGPU (navigator.gpu)" };
  if (o.want === "cpu") return { ...base, device: o.device, reason: 'the CPU backend was asked for (init({device: "cpu"}))' };
  if (o.why) return { ...base, device: o.device, reason: o.why };
  if (o.want === "webgpu") {
    return { ...base, device: o.device, reason: 'WebGPU was asked for (init({device: "webgpu"})), so nothing was measured' };
  }
  if (!o.software) {
    return { ...base, device: o.device, reason: `a hardware WebGPU adapter (${o.adapter}), taken without calibrating` };
  }
  const key = cacheKey(b.version(), o.simd, o.adapter);
  let timings = readCached(key);
  const cached = timings !== null;
  if (!timings) {
    try {
      timings = await calibrate();
    } catch (e) {
      // WebGPU opened, so it stays; the page learns why nothing was compared.
      const reason = `${o.adapter} is a software WebGPU adapter, but calibrating failed (${(e as Error).message}); WebGPU stays the default`;
      return { ...base, device: o.device, reason };
    }
    writeCached(key, timings);
  }
  const cpuWins = timings.cpu < timings.webgpu;
  if (cpuWins) b.setDefaultDevice("cpu");
  const reason =
    `${o.adapter} is a software WebGPU adapter; ${cached ? "an earlier page's" : "a"} calibration (${timings.workload}, ` +
    `median of 3 after a warm-up) took ${ms(timings.cpu)} on the CPU backend and ${ms(timings.webgpu)} on WebGPU, ` +
    `so the ${cpuWins ? "CPU backend" : "WebGPU device"} is the default`;
  return { ...base, device: b.defaultDevice(), reason, timings, cached };
}
