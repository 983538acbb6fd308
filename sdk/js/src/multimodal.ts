// Multimodal models from Hugging Face folders: the runtime's tokenizers,
// sentence encoders, CLIP, Whisper, TimeSformer and the Conformer speech
// encoder (the Go package multimodal, through the C ABI in Node), the video
// front end and audio resampling. Every check, number and error is the
// runtime's; this file turns strings and tensors into the runtime's
// arguments. In the browser only tokenizers and image processors load
// (from their config files' bytes), and the frame samplers and resample
// run: the models read folders, which a page has not.

import { native } from "./binding.js";
import { Tensor } from "./core.js";
import { RuntimeObject, tensorHandle } from "./objects.js";

/** A batch's (texts, length) i64 tensors. */
export interface Encoding {
  inputIds: Tensor;
  tokenTypeIds: Tensor;
  attentionMask: Tensor;
}

const asList = (texts: string | readonly string[]): readonly string[] => (typeof texts === "string" ? [texts] : texts);

/** A tokenizer.json (WordPiece or byte-level BPE), as the tokenizers library reads it. */
export class Tokenizer extends RuntimeObject {
  /** The file (or its folder) at a path (Node), or a tokenizer.json's bytes. */
  static async load(source: string | Uint8Array): Promise<Tokenizer> {
    const rt = native();
    if (typeof source === "string") return new Tokenizer(rt.domainLoad("tokenizer", source, null));
    if (!(source instanceof Uint8Array)) throw new TypeError("webtensor: Tokenizer.load takes a path or a tokenizer.json's bytes");
    return new Tokenizer(rt.tokenizerLoadBytes(source));
  }

  /** @internal */
  constructor(handle: number) {
    super("tokenizer", handle);
  }

  get vocabSize(): number {
    return native().tokenizerVocabSize(this.handle);
  }

  /**
   * Tokenizes texts with the file's truncation and padding; padId pads the
   * batch to its longest with that id instead (texts of different lengths
   * need one or the other).
   */
  encode(
    texts: string | readonly string[],
    options: { addSpecialTokens?: boolean; padId?: number; device?: string } = {},
  ): Encoding {
    const [ids, types, mask] = native().tokenizerEncode(
      this.handle,
      asList(texts),
      options.addSpecialTokens ?? true,
      options.padId ?? -1,
      options.device ?? null,
    );
    return { inputIds: new Tensor(ids!), tokenTypeIds: new Tensor(types!), attentionMask: new Tensor(mask!) };
  }

  /** The text of a sequence of ids. */
  decode(ids: readonly (number | bigint)[], options: { skipSpecialTokens?: boolean } = {}): string {
    return native().tokenizerDecode(this.handle, ids.map(Number), options.skipSpecialTokens ?? false);
  }

  /** decode for each row of a 2-D i64 tensor of ids. */
  async batchDecode(ids: Tensor, options: { skipSpecialTokens?: boolean } = {}): Promise<string[]> {
    const [rows, cols] = ids.shape;
    if (ids.ndim !== 2) throw new TypeError(`webtensor: batchDecode takes a 2-D tensor of ids, got shape [${ids.shape}]`);
    const flat = Array.from(await ids.data(), Number);
    return Array.from({ length: rows! }, (_, r) => this.decode(flat.slice(r * cols!, (r + 1) * cols!), options));
  }
}

/** transformers' ViT, CLIP or VideoMAE image processor (Pillow's resampling, crop, rescale and normalise, bit for bit). */
export class ImageProcessor extends RuntimeObject {
  /** A preprocessor_config.json (or its folder) at a path (Node), or the file's bytes. */
  static async load(source: string | Uint8Array): Promise<ImageProcessor> {
    const rt = native();
    if (typeof source === "string") return new ImageProcessor(rt.domainLoad("image_processor", source, null));
    if (!(source instanceof Uint8Array)) throw new TypeError("webtensor: ImageProcessor.load takes a path or a preprocessor_config.json's bytes");
    return new ImageProcessor(rt.imageProcessorLoadBytes(source));
  }

  /** @internal */
  constructor(handle: number) {
    super("image_processor", handle);
  }

  /** Pixel values (images, 3, H, W) f32 of (height, width, 3) u8 RGB images. */
  async preprocess(images: Tensor | readonly Tensor[], options: { device?: string } = {}): Promise<Tensor> {
    const list = images instanceof Tensor ? [images] : images;
    const hs = list.map((t, i) => tensorHandle(t, `images[${i}]`));
    return new Tensor(await native().imageProcessorPreprocess(this.handle, hs, options.device ?? null));
  }

  /**
   * Pixel values (videos, frames, 3, H, W) f32 of (frames, height, width, 3)
   * u8 RGB videos, every frame processed on its own as VideoMAEImageProcessor does.
   */
  async preprocessVideo(videos: Tensor | readonly Tensor[], options: { device?: string } = {}): Promise<Tensor> {
    const list = videos instanceof Tensor ? [videos] : videos;
    const hs = list.map((t, i) => tensorHandle(t, `videos[${i}]`));
    return new Tensor(await native().imageProcessorPreprocessVideo(this.handle, hs, options.device ?? null));
  }
}

/** An i64 index tensor's values, the tensor disposed. */
async function indexList(handle: number): Promise<number[]> {
  const t = new Tensor(handle);
  try {
    return Array.from(await t.data(), Number);
  } finally {
    t.dispose();
  }
}

/**
 * The frame indices transformers' TimeSformer and VideoMAE docs sample from a
 * clip of segLen frames after np.random.seed(seed): clipLen indices over a
 * window of clipLen * frameSampleRate frames ending at numpy's randint.
 */
export async function sampleFrameIndices(clipLen: number, frameSampleRate: number, segLen: number, seed = 0): Promise<number[]> {
  return indexList(native().videoSampleFrameIndices(clipLen, frameSampleRate, segLen, seed));
}

/** numFrames indices spread evenly over total frames, as transformers' video processors sample them. */
export async function uniformFrameIndices(total: number, numFrames: number): Promise<number[]> {
  return indexList(native().videoUniformFrameIndices(total, numFrames));
}

/** A sentence-transformers folder (modules.json: a BERT Transformer, Pooling, optionally Normalize). Node only. */
export class SentenceEncoder extends RuntimeObject {
  static async load(path: string, options: { device?: string } = {}): Promise<SentenceEncoder> {
    return new SentenceEncoder(native().domainLoad("sentence_encoder", path, options.device ?? null));
  }

  /** @internal */
  constructor(handle: number) {
    super("sentence_encoder", handle);
  }

  /** The length of one embedding. */
  get dim(): number {
    return native().sentenceEncoderDim(this.handle);
  }

  /** The embeddings (sentences, dim), as sentence-transformers' encode gives them. */
  async encode(sentences: string | readonly string[], options: { batchSize?: number } = {}): Promise<Tensor> {
    return new Tensor(await native().sentenceEncoderEncode(this.handle, asList(sentences), options.batchSize ?? 32));
  }
}

/** A CLIPModel folder (config.json, model.safetensors, tokenizer.json). Node only. */
export class CLIP extends RuntimeObject {
  static async load(path: string, options: { device?: string } = {}): Promise<CLIP> {
    return new CLIP(native().domainLoad("clip", path, options.device ?? null));
  }

  /** @internal */
  constructor(handle: number) {
    super("clip", handle);
  }

  /** Each image's probabilities over texts, (images, texts), from pixel values (images, 3, H, W). */
  async zeroShot(pixels: Tensor, texts: readonly string[]): Promise<Tensor> {
    return new Tensor(await native().clipZeroShot(this.handle, tensorHandle(pixels, "pixels"), texts));
  }

  /** The projected text embeddings (not normalised), as get_text_features gives them. */
  async textFeatures(texts: readonly string[]): Promise<Tensor> {
    return new Tensor(await native().clipTextFeatures(this.handle, texts));
  }

  /** The projected image embeddings (not normalised), as get_image_features gives them. */
  async imageFeatures(pixels: Tensor): Promise<Tensor> {
    return new Tensor(await native().clipImageFeatures(this.handle, tensorHandle(pixels, "pixels")));
  }
}

/** A TimeSformer forward: the logits (null without a classifier) and the last hidden state. */
export interface VideoOutput {
  logits: Tensor | null;
  lastHiddenState: Tensor;
}

/** A TimesformerForVideoClassification or TimesformerModel folder (config.json, model.safetensors). Node only. */
export class Timesformer extends RuntimeObject {
  /** "TimesformerForVideoClassification" or "TimesformerModel". */
  readonly model: string;
  readonly attentionType: string;
  readonly numFrames: number;
  readonly imageSize: number;
  readonly device: string;
  /** id2label by id; null without a classifier. */
  readonly labels: readonly string[] | null;

  static async load(path: string, options: { device?: string } = {}): Promise<Timesformer> {
    return new Timesformer(native().domainLoad("timesformer", path, options.device ?? null));
  }

  /** @internal */
  constructor(handle: number) {
    super("timesformer", handle);
    const info = JSON.parse(native().timesformerInfo(handle)) as {
      model: string;
      attention_type: string;
      num_frames: number;
      image_size: number;
      device: string;
      labels?: string[];
    };
    this.model = info.model;
    this.attentionType = info.attention_type;
    this.numFrames = info.num_frames;
    this.imageSize = info.image_size;
    this.device = info.device;
    this.labels = info.labels ? Object.freeze(info.labels) : null;
  }

  /** Logits (B, labels) and last hidden state of pixel values (B, frames, 3, H, W), as preprocessVideo makes them. */
  async forward(pixels: Tensor): Promise<VideoOutput> {
    const [l, h] = await native().timesformerForward(this.handle, tensorHandle(pixels, "pixels"), this.labels !== null, true);
    return { logits: this.labels !== null ? new Tensor(l) : null, lastHiddenState: new Tensor(h) };
  }

  /** The classifier's logits (B, labels) of pixel values (B, frames, 3, H, W). */
  async logits(pixels: Tensor): Promise<Tensor> {
    const [l] = await native().timesformerForward(this.handle, tensorHandle(pixels, "pixels"), true, false);
    return new Tensor(l);
  }
}

/** A WhisperForConditionalGeneration folder with its tokenizer.json and preprocessor_config.json. Node only. */
export class Whisper extends RuntimeObject {
  /** The model's own tokenizer, disposed with it. */
  readonly tokenizer: Tokenizer;

  static async load(path: string, options: { device?: string } = {}): Promise<Whisper> {
    return new Whisper(native().domainLoad("whisper", path, options.device ?? null));
  }

  /** @internal */
  constructor(handle: number) {
    super("whisper", handle);
    this.tokenizer = new Tokenizer(native().whisperTokenizer(handle));
  }

  /** The rate waveforms must be sampled at (16000). */
  get samplingRate(): number {
    return native().whisperSamplingRate(this.handle);
  }

  /**
   * Token ids (waves, length) for one 1-D float waveform or several, padded
   * with the pad token as transformers' generate pads them; 0 takes the
   * generation config's value.
   */
  async generate(waves: Tensor | readonly Tensor[], options: { maxNewTokens?: number; numBeams?: number } = {}): Promise<Tensor> {
    const list = waves instanceof Tensor ? [waves] : waves;
    const hs = list.map((w, i) => tensorHandle(w, `waves[${i}]`));
    return new Tensor(await native().whisperGenerate(this.handle, hs, options.maxNewTokens ?? 0, options.numBeams ?? 0));
  }

  /** The text of one waveform, or the texts of several. */
  async transcribe(waves: Tensor, options?: { maxNewTokens?: number; numBeams?: number }): Promise<string>;
  async transcribe(waves: readonly Tensor[], options?: { maxNewTokens?: number; numBeams?: number }): Promise<string[]>;
  async transcribe(waves: Tensor | readonly Tensor[], options: { maxNewTokens?: number; numBeams?: number } = {}): Promise<string | string[]> {
    const ids = await this.generate(waves, options);
    try {
      const texts = await this.tokenizer.batchDecode(ids, { skipSpecialTokens: true });
      return waves instanceof Tensor ? texts[0]! : texts;
    } finally {
      ids.dispose();
    }
  }

  override dispose(): void {
    this.tokenizer.dispose();
    super.dispose();
  }
}

/** A Conformer encoding: the last hidden state and, when asked for, each waveform's frames. */
export interface ConformerOutput {
  /** (waves, frames, hidden) */
  lastHiddenState: Tensor;
  /** (waves, frames) bool, marking each waveform's own frames; null unless asked for. */
  frameMask: Tensor | null;
}

/** A Wav2Vec2ConformerModel folder with its preprocessor_config.json. Node only. */
export class Conformer extends RuntimeObject {
  static async load(path: string, options: { device?: string } = {}): Promise<Conformer> {
    return new Conformer(native().domainLoad("conformer", path, options.device ?? null));
  }

  /** @internal */
  constructor(handle: number) {
    super("conformer", handle);
  }

  /** The rate waveforms must be sampled at (16000 by default). */
  get samplingRate(): number {
    return native().conformerSamplingRate(this.handle);
  }

  /**
   * Encodes one 1-D float waveform or several, padded to the longest, as
   * transformers' model(**extractor(waves, padding=True)) does.
   */
  async encode(waves: Tensor | readonly Tensor[], options: { frameMask?: boolean } = {}): Promise<ConformerOutput> {
    const list = waves instanceof Tensor ? [waves] : waves;
    const hs = list.map((w, i) => tensorHandle(w, `waves[${i}]`));
    const [hidden, mask] = await native().conformerEncode(this.handle, hs, options.frameMask ?? false);
    return { lastHiddenState: new Tensor(hidden), frameMask: mask ? new Tensor(mask) : null };
  }
}

/**
 * x (..., time) resampled from fromHz to toHz on its device, as
 * torchaudio.functional.resample does by default (Hann-windowed sinc,
 * lowpass_filter_width 6, rolloff 0.99).
 */
export function resample(x: Tensor, fromHz: number, toHz: number): Tensor {
  return new Tensor(native().audioResample(tensorHandle(x, "x"), fromHz, toHz));
}
