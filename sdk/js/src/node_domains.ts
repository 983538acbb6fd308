// The diffusion pipelines' calls over the C ABI (webtensor_domains.h's
// wt_diffusion_*) as part of the Node Binding: the argument conversions
// only (the koffi prototypes are generated from the header:
// abi_prototypes.gen.ts). The multimodal library's methods go through
// wt_call (node.ts's call).

import type { PROTOTYPES } from "./abi_prototypes.gen.js";
import type { DomainBinding, StepCallback } from "./binding.js";

type NativeFn = (...args: any[]) => any;

type DomainNative = { [K in keyof typeof PROTOTYPES]: NativeFn };

/** What node.ts lends: its status check and its out-parameter helpers. */
export interface NodeHelpers {
  check(status: number): void;
  newHandle(f: (out: BigInt64Array) => number): number;
  readString(fn: NativeFn, ...args: unknown[]): string;
}

/**
 * The C ABI's sampling calls return when the last step is done: a step
 * callback would never be called, so asking for one is an error rather
 * than silence.
 */
function noStepCallback(onStep: StepCallback | null): void {
  if (onStep) throw new TypeError("webtensor: onStep is browser-only (the C ABI's wt_diffusion_generate* report no steps)");
}

/** The domain half of the Node Binding. */
export function domainCalls(lib: DomainNative, h: NodeHelpers): DomainBinding {
  const { check, newHandle, readString } = h;
  const list = (xs: readonly number[]) => BigInt64Array.from(xs.length ? xs : [0], BigInt);
  const strs = (xs: readonly string[]) => (xs.length ? [...xs] : null);
  return {
    domainLoad: (kind, path, device) => newHandle((o) => lib[`wt_${kind}_load`](path, device, o)),
    domainFree: (kind, handle) => check(lib[`wt_${kind}_free`](handle)),
    diffusionLoadZip: async (bytes, device) => newHandle((o) => lib.wt_diffusion_load_zip(bytes, bytes.byteLength, device, o)),
    diffusionInfo: (p) => readString(lib.wt_diffusion_info_json, p),
    diffusionGenerate: async (p, batch, steps, seed, scheduler, onStep) => {
      noStepCallback(onStep);
      return newHandle((o) => lib.wt_diffusion_generate(p, batch, steps, seed, scheduler, o));
    },
    diffusionGenerateClasses: async (p, labels, steps, seed, guidance, scheduler, onStep) => {
      noStepCallback(onStep);
      return newHandle((o) => lib.wt_diffusion_generate_classes(p, list(labels), labels.length, steps, seed, guidance, scheduler, o));
    },
    diffusionGenerateText: async (p, ps, negs, perPrompt, steps, seed, guidance, height, width, scheduler, latents, onStep) => {
      noStepCallback(onStep);
      return newHandle((o) =>
        lib.wt_diffusion_generate_text(
          p,
          strs(ps),
          ps.length,
          strs(negs),
          negs.length,
          perPrompt,
          steps,
          seed,
          guidance,
          height,
          width,
          scheduler,
          latents,
          o,
        ),
      );
    },
    diffusionEncodeText: async (p, ts) => newHandle((o) => lib.wt_diffusion_encode_text(p, strs(ts), ts.length, o)),
    diffusionQuantizeInt8: async (p) => check(lib.wt_diffusion_quantize_int8(p)),
  };
}
