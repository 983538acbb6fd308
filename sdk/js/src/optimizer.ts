// The base of wt.optim's optimizers (optim.gen.ts writes the five
// optimizers over it from internal/gen's table): the runtime's optimizer
// behind a handle, made afresh when a parameter's handle changes (keeping
// its state) and given the options whenever they change, so that
// `opt.options.lr = ...` is all a scheduler does.

import { ATTR_KIND, maybeNative, native } from "./binding.js";
import type { AttrEntry } from "./binding.js";
import { Tensor } from "./core.js";

export type Setting = number | boolean | readonly number[];

/** Settings as the runtime takes them: torch's snake_case names, op attributes. */
export function settings(values: Record<string, Setting>): AttrEntry[] {
  return Object.entries(values).map(([k, v]): AttrEntry => {
    const name = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (typeof v === "boolean") return [name, ATTR_KIND.bool, v];
    if (typeof v === "number") return [name, Number.isInteger(v) ? ATTR_KIND.int : ATTR_KIND.float, v];
    return [name, v.every((x) => Number.isInteger(x)) ? ATTR_KIND.ints : ATTR_KIND.floats, [...v]];
  });
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

// An optimiser the program drops without dispose() is freed when collected.
const registry = new FinalizationRegistry<number>((h) => maybeNative()?.optimizerFree(h));

type State = Record<string, Tensor | number>;

/** The base of the optimizers: parameters, options, step, zeroGrad and the state under torch's names (camelCase). */
export abstract class Optimizer {
  readonly params: Tensor[];
  abstract readonly options: { lr: number };
  protected abstract readonly kind: string;
  #h = 0;
  #handles: number[] = [];
  #pushed = "";

  constructor(params: Iterable<Tensor>) {
    this.params = [...params];
  }

  /** The runtime's optimizer, made (or made afresh over new handles, keeping its state) and given the current options. */
  protected sync(): number {
    const rt = native();
    const handles = this.params.map((p) => p.handle);
    const opts = settings(this.options as unknown as Record<string, Setting>);
    const key = JSON.stringify(opts);
    if (!this.#h || handles.some((h, i) => h !== this.#handles[i])) {
      const h = rt.optimizerNew(this.kind, handles, opts);
      if (this.#h) {
        const st = rt.optimizerState(this.#h);
        try {
          rt.optimizerLoadState(h, st);
        } finally {
          rt.stateFree(st);
        }
        this.#free();
      }
      this.#h = h;
      this.#handles = handles;
      registry.register(this, h, this);
    } else if (key !== this.#pushed) {
      rt.optimizerSet(this.#h, opts);
    }
    this.#pushed = key;
    return this.#h;
  }

  /** One update of every parameter that has a gradient (the others are left alone). */
  step(): void {
    native().optimizerStep(this.sync());
  }

  zeroGrad(): void {
    native().optimizerZeroGrad(this.sync());
  }

  /** Each updated parameter's state (step, expAvg, ...): new tensors the caller disposes. */
  get state(): Map<Tensor, State> {
    const rt = native();
    const s = rt.optimizerState(this.sync());
    const out = new Map<Tensor, State>();
    try {
      for (let i = 0; i < rt.stateCount(s); i++) {
        const [index, key] = rt.stateName(s, i).split(/\.(.*)/s) as [string, string];
        const p = this.params[Number(index)]!;
        const st = out.get(p) ?? {};
        const t = new Tensor(rt.stateGet(s, i));
        if (key === "step") {
          st.step = Number(t.item());
          t.dispose();
        } else st[camel(key)] = t;
        out.set(p, st);
      }
    } finally {
      rt.stateFree(s);
    }
    return out;
  }

  #free(): void {
    registry.unregister(this);
    native().optimizerFree(this.#h);
    this.#h = 0;
  }

  /** Frees the optimizer's state (moments, momentum buffers); the parameters stay. */
  dispose(): void {
    if (this.#h) this.#free();
  }
}
