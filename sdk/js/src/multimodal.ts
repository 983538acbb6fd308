// Multimodal models from Hugging Face folders: the runtime's tokenizers,
// sentence encoders, CLIP, Whisper, TimeSformer and the Conformer speech
// encoder (the Go package multimodal), the video front end and audio
// resampling. Every method is one wt_call of its target by name
// (docs/calls.md, abi/calls_multimodal.go); every check, number and error
// is the runtime's, and this file turns options and tensors into the
// call's arguments and its JSON result into tensors. In the browser
// tokenizers and image processors load from their config files' bytes,
// sentence encoders and CLIP from a zip archive of their folder, and the
// frame samplers and resample run: the other models read folders, which a
// page has not.

import { native } from "./binding.js";
import { Tensor } from "./core.js";
import { RuntimeObject, tensorHandle } from "./objects.js";

/** A batch's (texts, length) i64 tensors. */
export interface Encoding {
  inputIds: Tensor;
  tokenTypeIds: Tensor;
  attentionMask: Tensor;
}

/** The handles of one tensor or several, named what[i] in the TypeError. */
const handles = (ts: Tensor | readonly Tensor[], what: string): number[] =>
  (ts instanceof Tensor ? [ts] : ts).map((t, i) => tensorHandle(t, `${what}[${i}]`));

/** A result's optional tensor: null for none. */
const maybeTensor = (h: number | null): Tensor | null => (h ? new Tensor(h) : null);

/**
 * A path in the browser, which has no file system: the error says what the
 * page can load instead.
 */
function noFolders(instead: string): void {
  if (native().platform === "browser") throw new Error(`webtensor: ${instead}`);
}

/** A tokenizer.json (WordPiece or byte-level BPE), as the tokenizers library reads it. */
export class Tokenizer extends RuntimeObject {
  /** The file (or its folder) at a path (Node), or a tokenizer.json's bytes. */
  static async load(source: string | Uint8Array): Promise<Tokenizer> {
    if (typeof source === "string") {
      noFolders("the browser has no file system: load() takes the config file's bytes");
      return new Tokenizer(native().call<number>("tokenizer.load", 0, { path: source }));
    }
    if (!(source instanceof Uint8Array)) throw new TypeError("webtensor: Tokenizer.load takes a path or a tokenizer.json's bytes");
    return new Tokenizer(native().call<number>("tokenizer.load", 0, null, source));
  }

  /** @internal */
  constructor(handle: number) {
    super("tokenizer", handle);
  }

  get vocabSize(): number {
    return this.call<number>("vocab_size");
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
    const r = this.call<{ input_ids: number; token_type_ids: number; attention_mask: number }>("encode", {
      texts,
      add_special_tokens: options.addSpecialTokens,
      pad_id: options.padId,
      device: options.device,
    });
    return { inputIds: new Tensor(r.input_ids), tokenTypeIds: new Tensor(r.token_type_ids), attentionMask: new Tensor(r.attention_mask) };
  }

  /** The text of a sequence of ids. */
  decode(ids: readonly (number | bigint)[], options: { skipSpecialTokens?: boolean } = {}): string {
    return this.call<string>("decode", { ids: ids.map(Number), skip_special_tokens: options.skipSpecialTokens });
  }

  /** decode for each row of a 2-D i64 tensor of ids. */
  async batchDecode(ids: Tensor, options: { skipSpecialTokens?: boolean } = {}): Promise<string[]> {
    const h = tensorHandle(ids, "ids");
    return this.callAsync<string[]>("batch_decode", { ids: h, skip_special_tokens: options.skipSpecialTokens });
  }
}

/** transformers' ViT, CLIP or VideoMAE image processor (Pillow's resampling, crop, rescale and normalise, bit for bit). */
export class ImageProcessor extends RuntimeObject {
  /** A preprocessor_config.json (or its folder) at a path (Node), or the file's bytes. */
  static async load(source: string | Uint8Array): Promise<ImageProcessor> {
    if (typeof source === "string") {
      noFolders("the browser has no file system: load() takes the config file's bytes");
      return new ImageProcessor(native().call<number>("image_processor.load", 0, { path: source }));
    }
    if (!(source instanceof Uint8Array)) throw new TypeError("webtensor: ImageProcessor.load takes a path or a preprocessor_config.json's bytes");
    return new ImageProcessor(native().call<number>("image_processor.load", 0, null, source));
  }

  /** @internal */
  constructor(handle: number) {
    super("image_processor", handle);
  }

  /** Pixel values (images, 3, H, W) f32 of (height, width, 3) u8 RGB images. */
  async preprocess(images: Tensor | readonly Tensor[], options: { device?: string } = {}): Promise<Tensor> {
    const hs = handles(images, "images");
    return new Tensor(await this.callAsync<number>("preprocess", { images: hs, device: options.device }));
  }

  /**
   * Pixel values (videos, frames, 3, H, W) f32 of (frames, height, width, 3)
   * u8 RGB videos, every frame processed on its own as VideoMAEImageProcessor does.
   */
  async preprocessVideo(videos: Tensor | readonly Tensor[], options: { device?: string } = {}): Promise<Tensor> {
    const hs = handles(videos, "videos");
    return new Tensor(await this.callAsync<number>("preprocess_video", { videos: hs, device: options.device }));
  }
}

/**
 * The frame indices transformers' TimeSformer and VideoMAE docs sample from a
 * clip of segLen frames after np.random.seed(seed): clipLen indices over a
 * window of clipLen * frameSampleRate frames ending at numpy's randint.
 */
export async function sampleFrameIndices(clipLen: number, frameSampleRate: number, segLen: number, seed = 0): Promise<number[]> {
  const args = { clip_len: clipLen, frame_sample_rate: frameSampleRate, seg_len: segLen, seed };
  return native().call<number[]>("video.sample_frame_indices", 0, args);
}

/** numFrames indices spread evenly over total frames, as transformers' video processors sample them. */
export async function uniformFrameIndices(total: number, numFrames: number): Promise<number[]> {
  return native().call<number[]>("video.uniform_frame_indices", 0, { total, num_frames: numFrames });
}

/**
 * The model of a folder's path (Node) or of a zip archive's bytes. what
 * names the class in the errors.
 */
function loadModel(kind: "sentence_encoder" | "clip", what: string, source: string | Uint8Array, device?: string): Promise<number> {
  if (typeof source === "string") {
    noFolders(`the browser has no file system: multimodal.${what}.load() takes a zip archive of the model's folder (its bytes)`);
    return native().callAsync<number>(`${kind}.load`, 0, { path: source, device });
  }
  if (!(source instanceof Uint8Array)) {
    throw new TypeError(`webtensor: ${what}.load takes a folder's path or a zip archive's bytes (a Uint8Array)`);
  }
  return native().callAsync<number>(`${kind}.load`, 0, { device }, source);
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
    return new SentenceEncoder(await loadModel("sentence_encoder", "SentenceEncoder", source, options.device));
  }

  /** @internal */
  constructor(handle: number) {
    super("sentence_encoder", handle);
  }

  /** The length of one embedding. */
  get dim(): number {
    return this.call<number>("dim");
  }

  /** The embeddings (sentences, dim), as sentence-transformers' encode gives them. */
  async encode(sentences: string | readonly string[], options: { batchSize?: number } = {}): Promise<Tensor> {
    return new Tensor(await this.callAsync<number>("encode", { texts: sentences, batch_size: options.batchSize }));
  }
}

/** A CLIPModel (config.json, model.safetensors, tokenizer.json). */
export class CLIP extends RuntimeObject {
  /** The folder at path (Node), or a zip archive of it (Node and the browser), as SentenceEncoder.load takes them. */
  static async load(source: string | Uint8Array, options: { device?: string } = {}): Promise<CLIP> {
    return new CLIP(await loadModel("clip", "CLIP", source, options.device));
  }

  /** @internal */
  constructor(handle: number) {
    super("clip", handle);
  }

  /** Each image's probabilities over texts, (images, texts), from pixel values (images, 3, H, W). */
  async zeroShot(pixels: Tensor, texts: readonly string[]): Promise<Tensor> {
    return new Tensor(await this.callAsync<number>("zero_shot", { pixels: tensorHandle(pixels, "pixels"), texts }));
  }

  /** The projected text embeddings (not normalised), as get_text_features gives them. */
  async textFeatures(texts: readonly string[]): Promise<Tensor> {
    return new Tensor(await this.callAsync<number>("text_features", { texts }));
  }

  /** The projected image embeddings (not normalised), as get_image_features gives them. */
  async imageFeatures(pixels: Tensor): Promise<Tensor> {
    return new Tensor(await this.callAsync<number>("image_features", { pixels: tensorHandle(pixels, "pixels") }));
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
    noFolders("TimeSformer loads from a folder, and the browser has no file system (Node only)");
    return new Timesformer(await native().callAsync<number>("timesformer.load", 0, { path, device: options.device }));
  }

  /** @internal */
  constructor(handle: number) {
    super("timesformer", handle);
    const info = this.call<{
      model: string;
      attention_type: string;
      num_frames: number;
      image_size: number;
      device: string;
      labels?: string[];
    }>("info");
    this.model = info.model;
    this.attentionType = info.attention_type;
    this.numFrames = info.num_frames;
    this.imageSize = info.image_size;
    this.device = info.device;
    this.labels = info.labels ? Object.freeze(info.labels) : null;
  }

  /** Logits (B, labels) and last hidden state of pixel values (B, frames, 3, H, W), as preprocessVideo makes them. */
  async forward(pixels: Tensor): Promise<VideoOutput> {
    const args = { pixels: tensorHandle(pixels, "pixels"), logits: this.labels !== null, last_hidden_state: true };
    const r = await this.callAsync<{ logits: number | null; last_hidden_state: number }>("forward", args);
    return { logits: maybeTensor(r.logits), lastHiddenState: new Tensor(r.last_hidden_state) };
  }

  /** The classifier's logits (B, labels) of pixel values (B, frames, 3, H, W). */
  async logits(pixels: Tensor): Promise<Tensor> {
    const args = { pixels: tensorHandle(pixels, "pixels"), logits: true, last_hidden_state: false };
    return new Tensor((await this.callAsync<{ logits: number }>("forward", args)).logits);
  }
}

/** A WhisperForConditionalGeneration folder with its tokenizer.json and preprocessor_config.json. Node only. */
export class Whisper extends RuntimeObject {
  /** The model's own tokenizer, disposed with it. */
  readonly tokenizer: Tokenizer;

  static async load(path: string, options: { device?: string } = {}): Promise<Whisper> {
    noFolders("Whisper loads from a folder, and the browser has no file system (Node only)");
    return new Whisper(await native().callAsync<number>("whisper.load", 0, { path, device: options.device }));
  }

  /** @internal */
  constructor(handle: number) {
    super("whisper", handle);
    this.tokenizer = new Tokenizer(this.call<number>("tokenizer"));
  }

  /** The rate waveforms must be sampled at (16000). */
  get samplingRate(): number {
    return this.call<number>("sampling_rate");
  }

  /**
   * Token ids (waves, length) for one 1-D float waveform or several, padded
   * with the pad token as transformers' generate pads them; 0 takes the
   * generation config's value.
   */
  async generate(waves: Tensor | readonly Tensor[], options: { maxNewTokens?: number; numBeams?: number } = {}): Promise<Tensor> {
    const args = { waves: handles(waves, "waves"), max_new_tokens: options.maxNewTokens, num_beams: options.numBeams };
    return new Tensor(await this.callAsync<number>("generate", args));
  }

  /** The text of one waveform, or the texts of several. */
  async transcribe(waves: Tensor, options?: { maxNewTokens?: number; numBeams?: number }): Promise<string>;
  async transcribe(waves: readonly Tensor[], options?: { maxNewTokens?: number; numBeams?: number }): Promise<string[]>;
  async transcribe(waves: Tensor | readonly Tensor[], options: { maxNewTokens?: number; numBeams?: number } = {}): Promise<string | string[]> {
    const args = { waves: handles(waves, "waves"), max_new_tokens: options.maxNewTokens, num_beams: options.numBeams };
    const texts = await this.callAsync<string[]>("transcribe", args);
    return waves instanceof Tensor ? texts[0]! : texts;
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
      native().call<number>("whisper_stream.new", 0, {
        model: whisper.handle,
        chunk_samples: options.chunkSamples,
        max_new_tokens: options.maxNewTokens,
        window_samples: options.windowSamples,
        trim_encoder: options.trimEncoder,
        tokens_per_second: options.tokensPerSecond,
      }),
    );
  }

  async #push(samples: Tensor | null, final: boolean): Promise<StreamUpdate[]> {
    const h = samples ? tensorHandle(samples, "samples") : undefined;
    const raw = await this.callAsync<Record<string, unknown>[]>("push", { samples: h, final });
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
  static async load(path: string, options: { vocoder?: string; device?: string } = {}): Promise<SpeechT5> {
    noFolders("SpeechT5 loads from a folder, and the browser has no file system (Node only)");
    const args = { path, vocoder: options.vocoder, device: options.device };
    return new SpeechT5(await native().callAsync<number>("speecht5.load", 0, args));
  }

  /** @internal */
  constructor(handle: number) {
    super("speecht5", handle);
  }

  /** The vocoder's sampling rate. */
  get samplingRate(): number {
    return this.call<number>("sampling_rate");
  }

  /** [ids, attention mask] (texts, length), as SpeechT5Tokenizer gives them with padding. */
  tokenize(texts: string | readonly string[]): [Tensor, Tensor] {
    const r = this.call<{ input_ids: number; attention_mask: number }>("tokenize", { texts });
    return [new Tensor(r.input_ids), new Tensor(r.attention_mask)];
  }

  /** Speech for a text, texts or token ids (texts, length), with speaker embeddings (1 or texts, dim). */
  async generate(text: string | readonly string[] | Tensor, speakers: Tensor, options: SpeechOptions = {}): Promise<SpeechOutput> {
    // Texts are tokenized by the call; token ids come with their optional mask.
    const input =
      text instanceof Tensor
        ? {
            input_ids: tensorHandle(text, "ids"),
            attention_mask: options.attentionMask ? tensorHandle(options.attentionMask, "attentionMask") : undefined,
          }
        : { texts: text };
    const r = await this.callAsync<{ spectrogram: number; lengths: number[]; waveform: number | null }>("generate", {
      ...input,
      speaker_embeddings: tensorHandle(speakers, "speakers"),
      threshold: options.threshold,
      minlenratio: options.minLenRatio,
      maxlenratio: options.maxLenRatio,
      prenet_dropout: options.prenetDropout,
      seed: options.seed,
      prefix: options.prefix ? tensorHandle(options.prefix, "prefix") : undefined,
      prefill_chunk: options.prefillChunk,
      vocode: options.vocode,
    });
    return { spectrogram: new Tensor(r.spectrogram), lengths: r.lengths, waveform: maybeTensor(r.waveform) };
  }

  /** The vocoder's waveform of a spectrogram (B, frames, mels) or (frames, mels). */
  async vocode(spectrogram: Tensor): Promise<Tensor> {
    return new Tensor(await this.callAsync<number>("vocode", { spectrogram: tensorHandle(spectrogram, "spectrogram") }));
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
    noFolders("a Conformer loads from a folder, and the browser has no file system (Node only)");
    return new Conformer(await native().callAsync<number>("conformer.load", 0, { path, device: options.device }));
  }

  /** @internal */
  constructor(handle: number) {
    super("conformer", handle);
  }

  /** The rate waveforms must be sampled at (16000 by default). */
  get samplingRate(): number {
    return this.call<number>("sampling_rate");
  }

  /**
   * Encodes one 1-D float waveform or several, padded to the longest, as
   * transformers' model(**extractor(waves, padding=True)) does.
   */
  async encode(waves: Tensor | readonly Tensor[], options: { frameMask?: boolean } = {}): Promise<ConformerOutput> {
    const args = { waves: handles(waves, "waves"), frame_mask: options.frameMask };
    const r = await this.callAsync<{ last_hidden_state: number; frame_mask: number | null }>("encode", args);
    return { lastHiddenState: new Tensor(r.last_hidden_state), frameMask: maybeTensor(r.frame_mask) };
  }
}

/**
 * x (..., time) resampled from fromHz to toHz on its device, as
 * torchaudio.functional.resample does by default (Hann-windowed sinc,
 * lowpass_filter_width 6, rolloff 0.99).
 */
export function resample(x: Tensor, fromHz: number, toHz: number): Tensor {
  return new Tensor(native().call<number>("audio.resample", 0, { x: tensorHandle(x, "x"), from_hz: fromHz, to_hz: toHz }));
}
