// Diffusion pipelines from diffusers folders, or zip archives of them: the
// runtime's samplers (the Go package diffuse, through wt_call's diffusion.*
// in Node and the browser, docs/calls.md). The noise comes from the
// runtime's Philox stream, so a seed gives the same images on one device
// from every SDK. A page has no folders: there the pipeline loads from a
// zip archive's bytes.

import { native } from "./binding.js";
import type { StepCallback } from "./binding.js";
import { Tensor } from "./core.js";
import { RuntimeObject } from "./objects.js";

interface Info {
  pipeline: string;
  scheduler: string;
  image_shape: number[];
  class_conditional: boolean;
  text_conditional: boolean;
  device: string;
  weight_bytes: number;
  int8_weights: boolean;
}

export interface SampleOptions {
  /** Inference steps (default 50). */
  steps?: number;
  /** The noise stream's seed (default 0). */
  seed?: number | bigint;
  /** Another diffusers scheduler class to sample with (its config converted from the folder's). */
  scheduler?: string;
  /**
   * Called after each denoising step with (step, steps), once that step's
   * work is done on the device; the page can draw in between (browser only:
   * the C ABI under Node reports no steps, and Node rejects it). An
   * exception it throws stops the run, which then rejects.
   */
  onStep?: StepCallback;
}

export interface TextOptions extends SampleOptions {
  /** The unconditional prompts: none (the empty prompt), one for all, or one per prompt. */
  negativePrompts?: readonly string[];
  /** Classifier-free guidance's scale (default 7.5; <= 1: none). */
  guidanceScale?: number;
  /** Images for each prompt, adjacent (default 1). */
  imagesPerPrompt?: number;
  /** The images' height and width in pixels (default: imageShape's). */
  height?: number;
  width?: number;
  /** The initial latents (diffusers' latents=); without them the seed's stream draws them. */
  latents?: Tensor;
}

/**
 * A folder save_pretrained wrote for DDPMPipeline, DDIMPipeline, DiTPipeline or
 * StableDiffusionPipeline (text to image; its safety checker is not run), or a
 * zip archive of one.
 */
export class Pipeline extends RuntimeObject {
  readonly pipeline: string;
  readonly scheduler: string;
  /** One image's [channels, height, width]. */
  readonly imageShape: readonly number[];
  /** Whether it samples from class labels (generateClasses) rather than generate. */
  readonly classConditional: boolean;
  /** Whether it samples from prompts (generateText) rather than generate. */
  readonly textConditional: boolean;
  readonly device: string;
  /** The bytes the models' weights take as held (int8 layers: their i8 weights and f32 scales). */
  readonly weightBytes: number;
  /** Whether the models hold their linear and conv weights as int8. */
  readonly int8Weights: boolean;

  /**
   * Loads the pipeline folder at path (Node), or the pipeline in a zip
   * archive's bytes (its files at the root, or in one top-level folder as
   * `zip -r pipe.zip pipe` nests them; Node and the browser). A hostile or
   * broken archive (paths leaving it, a zip bomb, truncation, a missing
   * file) rejects with a WebtensorError naming the entry. int8Weights holds
   * the models' linear and conv weights as int8 with one f32 scale per
   * output channel (diffusion.quantize_int8), dequantised layer by layer
   * as they run: about a quarter of the weight bytes.
   */
  static async load(source: string | Uint8Array, options: { device?: string; int8Weights?: boolean } = {}): Promise<Pipeline> {
    const rt = native();
    const device = options.device;
    let h: number;
    if (typeof source === "string") {
      if (rt.platform === "browser") {
        throw new Error("webtensor: the browser has no file system: diffuse.Pipeline.load() takes a zip archive's bytes");
      }
      h = await rt.callAsync<number>("diffusion.load", 0, { path: source, device });
    } else if (source instanceof Uint8Array) h = await rt.callAsync<number>("diffusion.load", 0, { device }, source);
    else throw new TypeError("webtensor: diffuse.Pipeline.load takes a folder's path or a zip archive's bytes (a Uint8Array)");
    if (options.int8Weights) {
      try {
        await rt.callAsync("diffusion.quantize_int8", h);
      } catch (e) {
        rt.call("diffusion.free", h);
        throw e;
      }
    }
    return new Pipeline(h);
  }

  /** @internal */
  constructor(handle: number) {
    super("diffusion", handle);
    const info = this.call<Info>("info");
    this.pipeline = info.pipeline;
    this.scheduler = info.scheduler;
    this.imageShape = Object.freeze(info.image_shape);
    this.classConditional = info.class_conditional;
    this.textConditional = info.text_conditional;
    this.device = info.device;
    this.weightBytes = info.weight_bytes;
    this.int8Weights = info.int8_weights;
  }

  /** batch images (batch, C, H, W) in [0, 1]. */
  async generate(options: SampleOptions & { batch?: number } = {}): Promise<Tensor> {
    const { batch, steps, scheduler, onStep } = options;
    return new Tensor(await this.callAsync<number>("generate", { batch, steps, seed: seed(options), scheduler }, onStep));
  }

  /** One image per class label (DiT), with classifier-free guidance (default scale 4). */
  async generateClasses(labels: readonly number[], options: SampleOptions & { guidanceScale?: number } = {}): Promise<Tensor> {
    const { steps, scheduler, onStep } = options;
    const args = { labels, steps, seed: seed(options), guidance_scale: options.guidanceScale, scheduler };
    return new Tensor(await this.callAsync<number>("generate_classes", args, onStep));
  }

  /** Text to image (StableDiffusionPipeline): (prompts × imagesPerPrompt, C, H, W) in [0, 1]. */
  async generateText(prompts: string | readonly string[], options: TextOptions = {}): Promise<Tensor> {
    const { steps, scheduler, height, width, onStep } = options;
    const args = {
      prompts,
      negative_prompts: options.negativePrompts,
      images_per_prompt: options.imagesPerPrompt,
      steps,
      seed: seed(options),
      guidance_scale: options.guidanceScale,
      height,
      width,
      scheduler,
      latents: options.latents?.handle,
    };
    return new Tensor(await this.callAsync<number>("generate_text", args, onStep));
  }

  /** The text encoder's states (texts, max length, width): what the UNet attends to. */
  async encodeText(texts: string | readonly string[]): Promise<Tensor> {
    return new Tensor(await this.callAsync<number>("encode_text", { texts }));
  }
}

/** The seed as the runtime takes it, a uint64: a negative one wraps, as it always has. */
const seed = (o: SampleOptions): bigint => BigInt.asUintN(64, BigInt(o.seed ?? 0));
