// wt.cuda: whether a CUDA device is here, what it is, its memory and
// options, as Python's wt.cuda and torch.cuda. Everything is the runtime's
// answer (wt_device_info_json and the other wt_device_* calls): the
// caching allocator, the driver and library versions live in Go. Where
// CUDA does not open (no driver, the browser) isAvailable() is false,
// deviceCount() 0, and the calls that need a device throw an
// UnsupportedError whose message is the runtime's reason.

import { native } from "./binding.js";
import { devices } from "./core.js";

function cudaName(device: string): string {
  if (!device.startsWith("cuda")) throw new Error(`webtensor: ${JSON.stringify(device)} is not a CUDA device (want "cuda" or "cuda:N")`);
  return device;
}

/** Whether a CUDA device opens here. */
export function isAvailable(): boolean {
  return deviceCount() > 0;
}

/** How many CUDA devices open here. */
export function deviceCount(): number {
  return devices().filter((d) => d.startsWith("cuda")).length;
}

/** The caching allocator's counters (bytes; "Allocated", "Reserved", "PeakAllocated", ...). */
export type MemoryStats = Record<string, number>;

/**
 * What the runtime reports on a CUDA device: the GPU and its libraries
 * ("cuda": name, compute capability, driver and library versions), the
 * allocator's counters ("memory"), the driver's free and total bytes, the
 * TF32 switch and the fallback count.
 */
export interface DeviceProperties {
  readonly device: string;
  readonly description: string;
  readonly software: boolean;
  readonly fallbacks: number;
  readonly cuda?: Readonly<Record<string, unknown>>;
  readonly memory?: Readonly<MemoryStats>;
  readonly device_free_bytes?: number;
  readonly device_total_bytes?: number;
  readonly allow_tf32?: boolean;
}

export function getDeviceProperties(device = "cuda"): DeviceProperties {
  return JSON.parse(native().deviceInfo(cudaName(device))) as DeviceProperties;
}

export function memoryStats(device = "cuda"): MemoryStats {
  const m = getDeviceProperties(device).memory;
  if (!m) throw new Error(`webtensor: ${device} reports no memory counters`);
  return m;
}

/** Bytes held by tensors (in the allocator's size classes). */
export function memoryAllocated(device = "cuda"): number {
  return memoryStats(device).Allocated ?? 0;
}

/** Bytes taken from the driver: held by tensors or cached for reuse. */
export function memoryReserved(device = "cuda"): number {
  return memoryStats(device).Reserved ?? 0;
}

/** Gives cached, unused device memory back to the driver. */
export function emptyCache(device = "cuda"): void {
  native().deviceEmptyCache(cudaName(device));
}

/** Waits for every op queued on the device and rejects with a check a kernel failed. */
export async function synchronize(device = "cuda"): Promise<void> {
  await native().deviceSync(cudaName(device));
}

/** Lets f32 matrix products use TF32 tensor cores (off by default). */
export function setAllowTF32(on: boolean, device = "cuda"): void {
  native().deviceSetOption(cudaName(device), "allow_tf32", on ? 1 : 0);
}

/** The CUstream the device's work is queued on, as an integer (for DLPack exchange with other CUDA code). */
export function currentStream(device = "cuda"): bigint {
  return native().deviceStream(cudaName(device));
}
