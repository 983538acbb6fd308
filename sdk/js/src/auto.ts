// wt.auto: the runtime's auto-agents (Go's package auto, through wt_call's
// auto.*, docs/calls.md). An agent measures a change A/B on your own
// workload, in this process, keeps it only when it wins, remembers it under
// a name and journals every decision; a policy (a sandboxed WebAssembly module)
// proposes and never changes anything itself. Node only: the agents
// journal to a folder and run their policies on the plugin host.

import { native } from "./binding.js";
import { Graph, signature } from "./compile.js";
import type { Tensor } from "./core.js";
import type { DataLoader } from "./data.js";

let defaultModule: string | null = null;

/** @internal The policy module the package ships (set by the Node entry when it has one). */
export function setDefaultPolicyModule(path: string): void {
  defaultModule = path;
}

/** The policy an agent ("data", "kernel") asks by default: the package's policy-auto.wasm, or "default#agent" (build/plugins/policy-auto.wasm found from the working folder). */
export function defaultPolicy(agent: string): string {
  return `${defaultModule ?? "default"}#${agent}`;
}

/** Where the journal is and how strict the A/B tests are. */
export interface AutoOptions {
  /** The journal's folder (default: auto/ in the cache folder, see WEBTENSOR_CACHE_DIR). */
  dir?: string;
  /** "module.wasm#policy" (default: defaultPolicy(agent)). */
  policy?: string;
  /** A/B runs a side (9). */
  runs?: number;
  /** Relative gain a change must reach (0.1). */
  margin?: number;
}

export interface TuneOptions extends AutoOptions {
  /** The loader's name, which keys what is remembered for it ("loader"). */
  name?: string;
  /** Batches a measured run reads (default: min(16, an epoch's)). */
  batches?: number;
  /** The epoch every run reads (0). */
  epoch?: number;
  /** false applies what an earlier tune under the name kept, measuring nothing. */
  measure?: boolean;
}

export interface Pipeline {
  workers: number;
  prefetch: number;
  cache: boolean;
}

/** A decision as a tune reports it; journal() has the whole record. */
export interface DecisionSummary {
  id: string;
  what: string;
  verdict: string;
  gain: number;
  canary_gain: number;
  reason: string;
}

export interface LoaderReport {
  loader: string;
  records: number;
  batch_size: number;
  batches: number;
  pipeline_before: Pipeline;
  pipeline_after: Pipeline;
  cached: Record<string, string>;
  samples_per_s_before: number;
  samples_per_s_after: number;
  cache: { records: number; bytes: number; hits: number; misses: number };
  decisions: DecisionSummary[];
}

export interface GraphReport {
  workload: string;
  repeat: number;
  settings: Record<string, string>;
  cached: Record<string, string>;
  decisions: DecisionSummary[];
}

function options(agent: string | null, o: AutoOptions, extra: Record<string, unknown>): Record<string, unknown> {
  const policy = agent === null ? undefined : (o.policy ?? defaultPolicy(agent));
  return { dir: o.dir, policy, runs: o.runs, margin: o.margin, ...extra };
}

/**
 * Tunes a DataLoader's pipeline (workers, prefetch, a cache of decoded
 * records) on its own throughput; the loader changes in place for the
 * epochs after. A change is kept only if the measured batches hash as they
 * did before it: the same samples in the same order.
 */
export function tune(loader: DataLoader, o: TuneOptions = {}): LoaderReport {
  const measure = o.measure ?? true;
  const opts = options(measure ? "data" : null, o, { name: o.name, batches: o.batches, epoch: o.epoch, measure });
  return native().call<LoaderReport>("auto.tune_loader", 0, { loader: loader.handle, options: opts });
}

/** The graph fn is, or the one a wt.compile'd fn captures on inputs (capturing it first). */
function graphOf(
  fn: Graph | (((...xs: Tensor[]) => unknown) & { graphs: Map<string, Graph> }),
  inputs: readonly Tensor[],
  what: string,
): Graph {
  if (fn instanceof Graph) return fn;
  const key = signature(inputs);
  if (!fn.graphs.has(key)) fn(...inputs);
  const g = fn.graphs.get(key);
  if (!g) throw new TypeError(`webtensor: ${what}: the function did not capture a graph for these inputs (is it wt.compile'd?)`);
  return g;
}

export interface GraphTuneOptions extends AutoOptions {
  /** The workload's name in the journal and the kernel cache ("graph"). */
  name?: string;
  /** Graph runs a measured run makes (default: about 10 ms' worth). */
  repeat?: number;
  /** Record autograd while running (default: inference). */
  grad?: boolean;
}

/**
 * Tunes the CPU backend's settings (threads, its storage cache) on a graph
 * run on inputs: a Graph from wt.trace, or a wt.compile'd function
 * (captured on these inputs first if it has not been). The settings kept
 * are the whole process's, remembered under the name.
 */
export function tuneGraph(
  fn: Graph | (((...xs: Tensor[]) => unknown) & { graphs: Map<string, Graph> }),
  inputs: readonly Tensor[],
  o: GraphTuneOptions = {},
): GraphReport {
  const graph = graphOf(fn, inputs, "tuneGraph");
  const opts = options("kernel", o, { name: o.name, repeat: o.repeat, grad: o.grad });
  return native().call<GraphReport>("auto.tune_graph", 0, { graph: graph.handle, inputs: inputs.map((t) => t.handle), options: opts });
}

/** A device of a cluster description for planParallel. */
export interface ClusterDevice {
  name: string;
  kind: "cpu" | "webgpu" | "process";
  gflops: number;
  gbps: number;
  memory_bytes: number;
}

export interface ParallelOptions {
  /** The cluster: devices, and links from "parent" to each process; without it this machine is measured. */
  cluster?: { devices: ClusterDevice[]; links?: { a: string; b: string; gbps: number; latency_us: number }[] };
  /** Worker processes to measure (with workerExe: the webtensor CLI serves as one). */
  workers?: number;
  workerExe?: string;
  /** Measure the WebGPU device too. */
  webgpu?: boolean;
  /** Which graph inputs are parameters (default: the constants that require gradients). */
  paramInputs?: number[];
}

/** One plan: a strategy, its degree and what the cost model predicts for it. */
export interface ParallelPlan {
  strategy: string;
  degree: number;
  micro_batches?: number;
  feasible: boolean;
  why?: string;
  step_seconds: number;
  memory_bytes: number;
  [key: string]: unknown;
}

export interface ParallelReport {
  chosen: ParallelPlan | null;
  candidates: ParallelPlan[];
  error?: string;
  [key: string]: unknown;
}

/**
 * Auto-parallel (Node): how to split a training step of a model (a Graph
 * from wt.trace, or a wt.compile'd function captured on inputs; input 0 is
 * the batch) across a cluster - one device, data, tensor, sequence or
 * pipeline parallel - chosen by a cost model of the graph's FLOPs, bytes,
 * parameters and exchanges. `chosen` is null when nothing fits (`error`
 * says why); every candidate carries its prediction or why it cannot run.
 */
export function planParallel(
  fn: Graph | (((...xs: Tensor[]) => unknown) & { graphs: Map<string, Graph> }),
  inputs: readonly Tensor[],
  o: ParallelOptions = {},
): ParallelReport {
  const graph = graphOf(fn, inputs, "planParallel");
  const opts = { cluster: o.cluster, workers: o.workers, worker_exe: o.workerExe, webgpu: o.webgpu, param_inputs: o.paramInputs };
  return native().call<ParallelReport>("auto.parallel_plan", 0, { graph: graph.handle, options: opts });
}

/** The journal's records (all, or those of ids), oldest first: proposals, measurements, guards, verdicts, state hashes. */
export function journal(o: { dir?: string; ids?: readonly string[] } = {}): Record<string, unknown>[] {
  return native().call<Record<string, unknown>[]>("auto.journal", 0, { options: { dir: o.dir, ids: o.ids } });
}

/** Restores the state from before kept decision id (undoing the kept ones after it); returns the rollback's journal id. */
export function rollback(id: string, o: { dir?: string } = {}): string {
  return native().call<string>("auto.rollback", 0, { options: { dir: o.dir }, id });
}
