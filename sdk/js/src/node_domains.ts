// The domain libraries' calls over the C ABI (webtensor.h's wt_tokenizer_*,
// wt_sentence_encoder_*, wt_clip_*, wt_whisper_*, wt_whisper_stream_*,
// wt_timesformer_*, the video front end, wt_conformer_*, wt_audio_resample,
// wt_speecht5_*, wt_diffusion_*) as part
// of the Node Binding: the argument conversions only (the koffi prototypes
// are generated from the header: abi_prototypes.gen.ts).

import type { PROTOTYPES } from "./abi_prototypes.gen.js";
import type { DomainBinding, DomainKind, StepCallback } from "./binding.js";

type NativeFn = (...args: any[]) => any;

type DomainNative = { [K in keyof typeof PROTOTYPES]: NativeFn };

/** What node.ts lends: its status check and its out-parameter helpers. */
export interface NodeHelpers {
  check(status: number): void;
  newHandle(f: (out: BigInt64Array) => number): number;
  int32(f: (out: Int32Array) => number): number;
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
  const { check, newHandle, int32, readString } = h;
  const list = (xs: readonly number[]) => BigInt64Array.from(xs.length ? xs : [0], BigInt);
  const strs = (xs: readonly string[]) => (xs.length ? [...xs] : null);
  const fn = (kind: DomainKind, what: "load" | "free") => lib[`wt_${kind}_${what}` as keyof DomainNative];
  return {
    domainLoad: (kind, path, device) =>
      newHandle((o) =>
        kind === "tokenizer" || kind === "image_processor" ? fn(kind, "load")(path, o) : fn(kind, "load")(path, device, o),
      ),
    domainFree: (kind, handle) => check(fn(kind, "free")(handle)),
    tokenizerLoadBytes: (bytes) => newHandle((o) => lib.wt_tokenizer_load_bytes(bytes, bytes.byteLength, o)),
    tokenizerVocabSize: (tok) => int32((o) => lib.wt_tokenizer_vocab_size(tok, o)),
    tokenizerEncode: (tok, ts, addSpecial, padId, device) => {
      const outs = [new BigInt64Array(1), new BigInt64Array(1), new BigInt64Array(1)] as const;
      check(lib.wt_tokenizer_encode(tok, strs(ts), ts.length, addSpecial ? 1 : 0, padId, device, ...outs));
      return outs.map((o) => Number(o[0]));
    },
    tokenizerDecode: (tok, ids, skip) => {
      const arr = list(ids);
      const needed = new BigUint64Array(1);
      lib.wt_tokenizer_decode(tok, arr, ids.length, skip ? 1 : 0, null, 0, needed);
      const buf = Buffer.alloc(Number(needed[0]));
      check(lib.wt_tokenizer_decode(tok, arr, ids.length, skip ? 1 : 0, buf, buf.length, needed));
      // The text may hold NUL (a token can decode to one): its length is needed - 1.
      return buf.toString("utf8", 0, Number(needed[0]) - 1);
    },
    imageProcessorLoadBytes: (bytes) => newHandle((o) => lib.wt_image_processor_load_bytes(bytes, bytes.byteLength, o)),
    imageProcessorPreprocess: async (p, images, device) =>
      newHandle((o) => lib.wt_image_processor_preprocess(p, list(images), images.length, device, o)),
    imageProcessorPreprocessVideo: async (p, videos, device) =>
      newHandle((o) => lib.wt_image_processor_preprocess_video(p, list(videos), videos.length, device, o)),
    videoSampleFrameIndices: (clipLen, rate, segLen, seed) =>
      newHandle((o) => lib.wt_video_sample_frame_indices(clipLen, rate, segLen, seed, o)),
    videoUniformFrameIndices: (total, n) => newHandle((o) => lib.wt_video_uniform_frame_indices(total, n, o)),
    sentenceEncoderLoadZip: async (bytes, device) =>
      newHandle((o) => lib.wt_sentence_encoder_load_zip(bytes, bytes.byteLength, device, o)),
    sentenceEncoderDim: (enc) => int32((o) => lib.wt_sentence_encoder_dim(enc, o)),
    sentenceEncoderEncode: async (enc, ts, batch) =>
      newHandle((o) => lib.wt_sentence_encoder_encode(enc, strs(ts), ts.length, batch, o)),
    clipLoadZip: async (bytes, device) => newHandle((o) => lib.wt_clip_load_zip(bytes, bytes.byteLength, device, o)),
    clipZeroShot: async (clip, pixels, ts) => newHandle((o) => lib.wt_clip_zero_shot(clip, pixels, strs(ts), ts.length, o)),
    clipTextFeatures: async (clip, ts) => newHandle((o) => lib.wt_clip_text_features(clip, strs(ts), ts.length, o)),
    clipImageFeatures: async (clip, pixels) => newHandle((o) => lib.wt_clip_image_features(clip, pixels, o)),
    whisperSamplingRate: (m) => int32((o) => lib.wt_whisper_sampling_rate(m, o)),
    whisperTokenizer: (m) => newHandle((o) => lib.wt_whisper_tokenizer(m, o)),
    whisperGenerate: async (m, waves, maxNew, beams) =>
      newHandle((o) => lib.wt_whisper_generate(m, list(waves), waves.length, maxNew, beams, o)),
    whisperStreamNew: (m, chunk, maxNew, window, trim, rate) =>
      newHandle((o) => lib.wt_whisper_stream_new(m, chunk, maxNew, window, trim ? 1 : 0, rate, o)),
    whisperStreamPush: async (st, samples, final) => {
      check(lib.wt_whisper_stream_push(st, samples, final ? 1 : 0, null));
      return readString(lib.wt_whisper_stream_read, st);
    },
    speecht5Load: (path, vocoder, device) => newHandle((o) => lib.wt_speecht5_load(path, vocoder, device, o)),
    speecht5SamplingRate: (m) => int32((o) => lib.wt_speecht5_sampling_rate(m, o)),
    speecht5Tokenize: (m, ts) => {
      const outs = [new BigInt64Array(1), new BigInt64Array(1)] as const;
      check(lib.wt_speecht5_tokenize(m, strs(ts), ts.length, ...outs));
      return outs.map((o) => Number(o[0]));
    },
    speecht5Generate: async (m, ids, mask, spk, threshold, minRatio, maxRatio, dropout, seed, prefix, chunk, wantWave) => {
      const outs = [new BigInt64Array(1), new BigInt64Array(1), new BigInt64Array(1)] as const;
      check(
        lib.wt_speecht5_generate(m, ids, mask, spk, threshold, minRatio, maxRatio, dropout ? 1 : 0, seed, prefix, chunk,
          outs[0], outs[1], wantWave ? outs[2] : null),
      );
      return [Number(outs[0][0]), Number(outs[1][0]), Number(outs[2][0])];
    },
    speecht5Vocode: async (m, spec) => newHandle((o) => lib.wt_speecht5_vocode(m, spec, o)),
    timesformerInfo: (m) => readString(lib.wt_timesformer_info_json, m),
    timesformerForward: async (m, pixels, logits, hidden) => {
      const outs = [logits ? new BigInt64Array(1) : null, hidden ? new BigInt64Array(1) : null] as const;
      check(lib.wt_timesformer_forward(m, pixels, ...outs));
      return [Number(outs[0]?.[0] ?? 0n), Number(outs[1]?.[0] ?? 0n)];
    },
    conformerSamplingRate: (m) => int32((o) => lib.wt_conformer_sampling_rate(m, o)),
    conformerEncode: async (m, waves, wantMask) => {
      const hidden = new BigInt64Array(1);
      const mask = new BigInt64Array(1);
      check(lib.wt_conformer_encode(m, list(waves), waves.length, hidden, wantMask ? mask : null));
      return [Number(hidden[0]), Number(mask[0])];
    },
    audioResample: (x, fromHz, toHz) => newHandle((o) => lib.wt_audio_resample(x, fromHz, toHz, o)),
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
