// Multimodal models from Hugging Face folders: the runtime's tokenizers,
// sentence encoders, CLIP, Whisper, TimeSformer and the Conformer speech
// encoder (the Go package multimodal, through the C ABI in Node), the video
// front end and audio resampling. Every check, number and error is the
// runtime's; this file turns strings and tensors into the runtime's
// arguments. In the browser tokenizers and image processors load from their
// config files' bytes, sentence encoders and CLIP from a zip archive of their
// folder, and the frame samplers and resample run: the other models read
// folders, which a page has not.

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

/**
 * The model of a zip archive's bytes, through loadZip; a path through the
 * folder loader (Node). what names the class in the type error.
 */
async function loadModel(
  kind: "sentence_encoder" | "clip",
  what: string,
  source: string | Uint8Array,
  device: string | null,
  loadZip: (bytes: Uint8Array, device: string | null) => Promise<number>,
): Promise<number> {
  if (typeof source === "string") return native().domainLoad(kind, source, device);
  if (!(source instanceof Uint8Array)) {
    throw new TypeError(`webtensor: ${what}.load takes a folder's path or a zip archive's bytes (a Uint8Array)`);
  }
  return loadZip(source, device);
}

/** A sentence-transformers model (modules.json: a BERT Transformer, Pooling, optionally Normalize). */
export class SentenceEncoder extends RuntimeObject {
  /**
   * The folder at path (Node), or a zip archive of it (its files at the
   * root, or in one top-level folder as `zip -r model.zip model` nests them;
   * Node and the browser). A hostile or broken archive (paths leaving it, a
   * zip bomb, truncation, a missing file) rejects naming the entry.
   */
  static async load(source: string | Uint8Array, options: { device?: string } = {}): Promise<SentenceEncoder> {
    const rt = native();
    const h = await loadModel("sentence_encoder", "SentenceEncoder", source, options.device ?? null, (b, d) =>
      rt.sentenceEncoderLoadZip(b, d),
    );
    return new SentenceEncoder(h);
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

/** A CLIPModel (config.json, model.safetensors, tokenizer.json). */
export class CLIP extends RuntimeObject {
  /** The folder at path (Node), or a zip archive of it (Node and the browser), as SentenceEncoder.load takes them. */
  static async load(source: string | Uint8Array, options: { device?: string } = {}): Promise<CLIP> {
    const rt = native();
    return new CLIP(await loadModel("clip", "CLIP", source, options.device ?? null, (b, d) => rt.clipLoadZip(b, d)));
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

/** What one chunk of a WhisperStream (or its flush) gave. */
export interface StreamUpdate {
  /** Updates so far, this one included. */
  chunk: number;
  /** Samples processed so far. */
  samples: number;
  /** Every committed token. */
  committed: number[];
  /** The latest hypothesis' tokens after the committed ones. */
  tentative: number[];
  committedText: string;
  tentativeText: string;
  /** What the chunk took: features, encoder and decoder. */
  elapsedMs: number;
  /** The flush's update: everything is committed. */
  final: boolean;
  /** Tokens of the previous hypothesis the decoder confirmed in one call. */
  drafted: number;
}

/**
 * Streaming transcription on a Whisper model (LocalAgreement-2): audio
 * pushed in any pieces is processed in chunks of chunkSamples (0: one
 * second); the tokens two consecutive hypotheses agree on are committed and
 * forced at the start of the next. A window of windowSamples (0: the
 * model's) that fills up is committed whole; trimEncoder encodes only the
 * buffered audio (faster, not transformers' output); tokensPerSecond, when
 * positive, bounds each hypothesis at that many tokens per second of
 * buffered audio (speech is about 3: 5 cuts only a hallucination loop).
 * Node only.
 */
export class WhisperStream extends RuntimeObject {
  constructor(
    whisper: Whisper,
    options: {
      chunkSamples?: number;
      maxNewTokens?: number;
      windowSamples?: number;
      trimEncoder?: boolean;
      tokensPerSecond?: number;
    } = {},
  ) {
    super(
      "whisper_stream",
      native().whisperStreamNew(
        whisper.handle,
        options.chunkSamples ?? 0,
        options.maxNewTokens ?? 0,
        options.windowSamples ?? 0,
        options.trimEncoder ?? false,
        options.tokensPerSecond ?? 0,
      ),
    );
  }

  async #push(samples: Tensor | null, final: boolean): Promise<StreamUpdate[]> {
    const h = samples ? tensorHandle(samples, "samples") : 0;
    const raw = JSON.parse(await native().whisperStreamPush(this.handle, h, final)) as Record<string, unknown>[];
    return raw.map((u) => ({
      chunk: u.chunk as number,
      samples: u.samples as number,
      committed: u.committed as number[],
      tentative: u.tentative as number[],
      committedText: u.committed_text as string,
      tentativeText: u.tentative_text as string,
      elapsedMs: u.elapsed_ms as number,
      final: u.final as boolean,
      drafted: u.drafted as number,
    }));
  }

  /** Adds samples (a 1-D float tensor at the model's rate): one update per chunk they complete. */
  push(samples: Tensor): Promise<StreamUpdate[]> {
    return this.#push(samples, false);
  }

  /** Processes what is left and ends the stream: the final update. */
  async flush(): Promise<StreamUpdate> {
    const us = await this.#push(null, true);
    return us[us.length - 1]!;
  }
}

/** SpeechT5.generate's result. */
export interface SpeechOutput {
  /** (texts, frames, mels) after the postnet, zero-padded to the longest. */
  spectrogram: Tensor;
  /** Each text's frames. */
  lengths: number[];
  /** (texts, samples) from the vocoder, or null; row i's own samples are lengths[i] * hop. */
  waveform: Tensor | null;
}

/** Options of SpeechT5.generate (transformers' generate_speech; 0 takes its default). */
export interface SpeechOptions {
  attentionMask?: Tensor;
  threshold?: number;
  minLenRatio?: number;
  maxLenRatio?: number;
  /** The prenet dropout transformers always applies, drawn from seed; off, the output is deterministic. */
  prenetDropout?: boolean;
  seed?: bigint;
  /** Mel frames (1 or texts, L, mels) the speech starts with, prefilled prefillChunk steps at a time. */
  prefix?: Tensor;
  prefillChunk?: number;
  /** Run the vocoder when the model has one (default true). */
  vocode?: boolean;
}

/** A SpeechT5ForTextToSpeech folder with, optionally, a SpeechT5HifiGan folder as its vocoder. Node only. */
export class SpeechT5 extends RuntimeObject {
  readonly #vocoder: boolean;

  static async load(path: string, options: { vocoder?: string; device?: string } = {}): Promise<SpeechT5> {
    return new SpeechT5(native().speecht5Load(path, options.vocoder ?? null, options.device ?? null), !!options.vocoder);
  }

  /** @internal */
  constructor(handle: number, vocoder: boolean) {
    super("speecht5", handle);
    this.#vocoder = vocoder;
  }

  /** The vocoder's sampling rate. */
  get samplingRate(): number {
    return native().speecht5SamplingRate(this.handle);
  }

  /** [ids, attention mask] (texts, length), as SpeechT5Tokenizer gives them with padding. */
  tokenize(texts: string | readonly string[]): [Tensor, Tensor] {
    const [ids, mask] = native().speecht5Tokenize(this.handle, typeof texts === "string" ? [texts] : texts);
    return [new Tensor(ids!), new Tensor(mask!)];
  }

  /** Speech for a text, texts or token ids (texts, length), with speaker embeddings (1 or texts, dim). */
  async generate(text: string | readonly string[] | Tensor, speakers: Tensor, options: SpeechOptions = {}): Promise<SpeechOutput> {
    let ids: Tensor;
    let mask: Tensor | undefined = options.attentionMask;
    const own = !(text instanceof Tensor);
    if (text instanceof Tensor) ids = text;
    else [ids, mask] = this.tokenize(text as string | readonly string[]);
    try {
      const [spec, lengths, wave] = await native().speecht5Generate(
        this.handle,
        tensorHandle(ids, "ids"),
        mask ? tensorHandle(mask, "attentionMask") : 0,
        tensorHandle(speakers, "speakers"),
        options.threshold ?? 0.5,
        options.minLenRatio ?? 0,
        options.maxLenRatio ?? 20,
        options.prenetDropout ?? false,
        options.seed ?? 0n,
        options.prefix ? tensorHandle(options.prefix, "prefix") : 0,
        options.prefillChunk ?? 0,
        this.#vocoder && (options.vocode ?? true),
      );
      const lt = new Tensor(lengths);
      try {
        return { spectrogram: new Tensor(spec), lengths: Array.from(await lt.data(), Number), waveform: wave ? new Tensor(wave) : null };
      } finally {
        lt.dispose();
      }
    } finally {
      if (own) {
        ids.dispose();
        mask?.dispose();
      }
    }
  }

  /** The vocoder's waveform of a spectrogram (B, frames, mels) or (frames, mels). */
  async vocode(spectrogram: Tensor): Promise<Tensor> {
    return new Tensor(await native().speecht5Vocode(this.handle, tensorHandle(spectrogram, "spectrogram")));
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
