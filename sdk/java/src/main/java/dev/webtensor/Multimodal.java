package dev.webtensor;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.webtensor.NativeObject.args;
import static dev.webtensor.NativeObject.asInt;
import static dev.webtensor.NativeObject.call;
import static dev.webtensor.NativeObject.longs;
import static dev.webtensor.NativeObject.map;
import static dev.webtensor.NativeObject.tensor;

/**
 * Multimodal models from Hugging Face folders: the runtime's tokenizers,
 * sentence encoders, CLIP, Whisper (with streaming), TimeSformer, the
 * Conformer speech encoder and SpeechT5 text-to-speech with its HiFi-GAN
 * vocoder, the video front end and audio resampling (the Go package
 * multimodal, each method one wt_call by name: "tokenizer.encode",
 * "whisper_stream.push", ...; docs/calls.md lists them). Every check, number
 * and error is the runtime's; these classes only turn Java strings and
 * tensors into its arguments and its results into Java's.
 *
 * <pre>{@code
 * try (var enc = Multimodal.SentenceEncoder.load(Path.of("all-MiniLM-L6-v2"));
 *      Tensor emb = enc.encode(List.of("A man is eating food.", "Someone eats."))) {
 *     float[] v = emb.toFloatArray(); // (2, 384)
 * }
 * }</pre>
 */
public final class Multimodal {
    private Multimodal() {
    }

    /** A batch's (texts, length) i64 tensors; closing it closes all three. */
    public record Encoding(Tensor inputIds, Tensor tokenTypeIds, Tensor attentionMask) implements AutoCloseable {
        @Override
        public void close() {
            inputIds.close();
            tokenTypeIds.close();
            attentionMask.close();
        }
    }

    /** A tokenizer.json (WordPiece or byte-level BPE), as the tokenizers library reads it. */
    public static final class Tokenizer extends NativeObject {
        private Tokenizer(long h) {
            super(h, "tokenizer", "tokenizer");
        }

        /** The tokenizer.json at path, or in the folder path. */
        public static Tokenizer load(Path path) throws IOException {
            return new Tokenizer(loadPath("tokenizer.load", path, null));
        }

        /** A tokenizer.json's bytes. */
        public static Tokenizer load(byte[] json) {
            return new Tokenizer(loadData("tokenizer.load", json, null, "tokenizer"));
        }

        public int vocabSize() {
            return asInt(call("tokenizer.vocab_size", handle()));
        }

        /** encode(texts, true, -1, null): special tokens, the file's padding, the default device. */
        public Encoding encode(List<String> texts) {
            return encode(texts, true, -1, null);
        }

        /**
         * Tokenizes texts with the file's truncation and padding; padId >= 0 pads
         * the batch to its longest with that id instead (texts of different
         * lengths need one or the other).
         */
        public Encoding encode(List<String> texts, boolean addSpecialTokens, long padId, String device) {
            Map<?, ?> r = map(call("tokenizer.encode", handle(),
                    args("texts", texts, "add_special_tokens", addSpecialTokens, "pad_id", padId, "device", device), null));
            return new Encoding(tensor(r.get("input_ids")), tensor(r.get("token_type_ids")), tensor(r.get("attention_mask")));
        }

        /** The text of ids, as the tokenizers library decodes them. */
        public String decode(long[] ids, boolean skipSpecialTokens) {
            return (String) call("tokenizer.decode", handle(), args("ids", ids, "skip_special_tokens", skipSpecialTokens), null);
        }

        /** decode for each row of a 2-D tensor of ids. */
        public List<String> batchDecode(Tensor ids, boolean skipSpecialTokens) {
            return strings(call("tokenizer.batch_decode", handle(), args("ids", ids, "skip_special_tokens", skipSpecialTokens), null));
        }
    }

    /** A result's list of strings, modifiable as the classes returned it before. */
    private static List<String> strings(Object list) {
        List<String> out = new ArrayList<>();
        for (Object o : (List<?>) list) {
            out.add((String) o);
        }
        return out;
    }

    /** transformers' ViT, CLIP or VideoMAE image processor: Pillow's resampling, crop, rescale and normalise, bit for bit. */
    public static final class ImageProcessor extends NativeObject {
        private ImageProcessor(long h) {
            super(h, "image_processor", "image processor");
        }

        /** The preprocessor_config.json at path, or in the folder path. */
        public static ImageProcessor load(Path path) throws IOException {
            return new ImageProcessor(loadPath("image_processor.load", path, null));
        }

        /** A preprocessor_config.json's bytes. */
        public static ImageProcessor load(byte[] json) {
            return new ImageProcessor(loadData("image_processor.load", json, null, "image processor"));
        }

        /** Pixel values (images, 3, H, W) f32 of (height, width, 3) u8 RGB images, on device (null: the default). */
        public Tensor preprocess(List<Tensor> images, String device) {
            return tensor(call("image_processor.preprocess", handle(), args("images", images, "device", device), null));
        }

        /**
         * Pixel values (videos, frames, 3, H, W) f32 of (frames, height, width, 3) u8
         * RGB videos, every frame processed on its own as VideoMAEImageProcessor does.
         */
        public Tensor preprocessVideo(List<Tensor> videos, String device) {
            return tensor(call("image_processor.preprocess_video", handle(), args("videos", videos, "device", device), null));
        }
    }

    /**
     * The frame indices transformers' TimeSformer and VideoMAE docs sample from a
     * clip of segLen frames after np.random.seed(seed) (0 to 2^32-1): clipLen
     * indices over a window of clipLen * frameSampleRate frames ending at numpy's randint.
     */
    public static long[] sampleFrameIndices(int clipLen, int frameSampleRate, int segLen, long seed) {
        return longs(call("video.sample_frame_indices", 0,
                args("clip_len", clipLen, "frame_sample_rate", frameSampleRate, "seg_len", segLen, "seed", seed), null));
    }

    /** numFrames indices spread evenly over total frames, as transformers' video processors sample them. */
    public static long[] uniformFrameIndices(int total, int numFrames) {
        return longs(call("video.uniform_frame_indices", 0, args("total", total, "num_frames", numFrames), null));
    }

    /** A TimeSformer forward's logits and last hidden state (null when not asked for); closing it closes both. */
    public record VideoOutput(Tensor logits, Tensor lastHiddenState) implements AutoCloseable {
        @Override
        public void close() {
            if (logits != null) {
                logits.close();
            }
            if (lastHiddenState != null) {
                lastHiddenState.close();
            }
        }
    }

    /** A TimesformerForVideoClassification or TimesformerModel folder (config.json, model.safetensors). */
    public static final class Timesformer extends NativeObject {
        private final String info;

        private Timesformer(long h) {
            super(h, "timesformer", "timesformer model");
            this.info = callJson("timesformer.info", h, null, null); // the result is the info object itself
        }

        public static Timesformer load(Path path, String device) throws IOException {
            return new Timesformer(loadPath("timesformer.load", path, args("device", device)));
        }

        public static Timesformer load(Path path) throws IOException {
            return load(path, null);
        }

        /**
         * The runtime's JSON description: {"model": "TimesformerForVideoClassification",
         * "attention_type": "divided_space_time", "num_frames": 8, "image_size": 224, ...,
         * "labels": [...]} (labels for a classifier only).
         */
        public String info() {
            return info;
        }

        /** The classifier's logits (B, labels) of pixel values (B, frames, 3, H, W). */
        public Tensor logits(Tensor pixels) {
            return forward(pixels, true, false).logits();
        }

        /** The last hidden state (B, 1 + patches * frames, hidden) of pixel values. */
        public Tensor lastHiddenState(Tensor pixels) {
            return forward(pixels, false, true).lastHiddenState();
        }

        /** Both outputs of one forward (a classifier's folder only). */
        public VideoOutput forward(Tensor pixels) {
            return forward(pixels, true, true);
        }

        private VideoOutput forward(Tensor pixels, boolean logits, boolean hidden) {
            Map<?, ?> r = map(call("timesformer.forward", handle(),
                    args("pixels", pixels, "logits", logits, "last_hidden_state", hidden), null));
            return new VideoOutput(tensor(r.get("logits")), tensor(r.get("last_hidden_state")));
        }
    }

    /** A sentence-transformers folder (modules.json: a BERT Transformer, Pooling, optionally Normalize). */
    public static final class SentenceEncoder extends NativeObject {
        private SentenceEncoder(long h) {
            super(h, "sentence_encoder", "sentence encoder");
        }

        /** The folder at path with its weights on device (null: the default). */
        public static SentenceEncoder load(Path path, String device) throws IOException {
            return new SentenceEncoder(loadPath("sentence_encoder.load", path, args("device", device)));
        }

        public static SentenceEncoder load(Path path) throws IOException {
            return load(path, null);
        }

        /**
         * The model in a zip archive of such a folder (its files at the root, or in
         * one top-level folder as {@code zip -r model.zip model} nests them), read
         * from the archive's bytes (sentence_encoder.load with them as the call's data) with its weights on
         * device (null: the default). A hostile or broken archive (paths leaving it,
         * a zip bomb, truncation, a missing file) throws a WebtensorException naming
         * the entry.
         */
        public static SentenceEncoder loadZip(byte[] zip, String device) {
            return new SentenceEncoder(loadData("sentence_encoder.load", zip, args("device", device), "sentence encoder"));
        }

        /** The length of one embedding. */
        public int dim() {
            return asInt(call("sentence_encoder.dim", handle()));
        }

        /** The embeddings (sentences, dim) in batches of 32, as sentence-transformers' encode gives them. */
        public Tensor encode(List<String> sentences) {
            return encode(sentences, 32);
        }

        public Tensor encode(List<String> sentences, int batchSize) {
            return tensor(call("sentence_encoder.encode", handle(), args("texts", sentences, "batch_size", batchSize), null));
        }
    }

    /** A CLIPModel folder (config.json, model.safetensors, tokenizer.json). */
    public static final class CLIP extends NativeObject {
        private CLIP(long h) {
            super(h, "clip", "clip model");
        }

        public static CLIP load(Path path, String device) throws IOException {
            return new CLIP(loadPath("clip.load", path, args("device", device)));
        }

        public static CLIP load(Path path) throws IOException {
            return load(path, null);
        }

        /** The model in a zip archive of such a folder, as SentenceEncoder.loadZip reads one. */
        public static CLIP loadZip(byte[] zip, String device) {
            return new CLIP(loadData("clip.load", zip, args("device", device), "clip model"));
        }

        /** Each image's probabilities over texts, (images, texts), from pixel values (images, 3, H, W). */
        public Tensor zeroShot(Tensor pixels, List<String> texts) {
            return tensor(call("clip.zero_shot", handle(), args("pixels", pixels, "texts", texts), null));
        }

        /** The projected text embeddings (not normalised), as get_text_features gives them. */
        public Tensor textFeatures(List<String> texts) {
            return tensor(call("clip.text_features", handle(), args("texts", texts), null));
        }

        /** The projected image embeddings (not normalised), as get_image_features gives them. */
        public Tensor imageFeatures(Tensor pixels) {
            return tensor(call("clip.image_features", handle(), args("pixels", pixels), null));
        }
    }

    /** A WhisperForConditionalGeneration folder with its tokenizer.json and preprocessor_config.json. */
    public static final class Whisper extends NativeObject {
        private final Tokenizer tokenizer;

        private Whisper(long h) {
            super(h, "whisper", "whisper model");
            this.tokenizer = new Tokenizer(asLong(call("whisper.tokenizer", h)));
        }

        public static Whisper load(Path path, String device) throws IOException {
            return new Whisper(loadPath("whisper.load", path, args("device", device)));
        }

        public static Whisper load(Path path) throws IOException {
            return load(path, null);
        }

        /** The model's own tokenizer, closed with it. */
        public Tokenizer tokenizer() {
            return tokenizer;
        }

        /** The rate waveforms must be sampled at (16000). */
        public int samplingRate() {
            return asInt(call("whisper.sampling_rate", handle()));
        }

        /**
         * Token ids (waves, length) for 1-D float waveforms, padded with the pad
         * token as transformers' generate pads them; 0 takes the generation
         * config's value.
         */
        public Tensor generate(List<Tensor> waves, int maxNewTokens, int numBeams) {
            return tensor(call("whisper.generate", handle(), genArgs(waves, maxNewTokens, numBeams), null));
        }

        /** The texts of waveforms, greedy (or with numBeams beams). */
        public List<String> transcribe(List<Tensor> waves, int maxNewTokens, int numBeams) {
            return strings(call("whisper.transcribe", handle(), genArgs(waves, maxNewTokens, numBeams), null));
        }

        private static Map<String, Object> genArgs(List<Tensor> waves, int maxNewTokens, int numBeams) {
            return args("waves", waves, "max_new_tokens", maxNewTokens, "num_beams", numBeams);
        }

        /** The text of one waveform with the generation config's settings. */
        public String transcribe(Tensor wave) {
            return transcribe(List.of(wave), 0, 0).get(0);
        }

        @Override
        public void close() {
            tokenizer.close();
            super.close();
        }
    }

    /**
     * What one chunk of a WhisperStream (or its flush) gave: every committed
     * token, the latest hypothesis' tokens after them, their texts, the
     * samples processed so far and the time the chunk took (features,
     * encoder and decoder).
     */
    public record StreamUpdate(int chunk, int samples, long[] committed, long[] tentative, String committedText,
                               String tentativeText, double elapsedMs, boolean isFinal, int drafted) {
    }

    /**
     * Streaming transcription on a Whisper model (LocalAgreement-2): audio
     * pushed in any pieces is processed in chunks of chunkSamples (0: one
     * second); the tokens two consecutive hypotheses agree on are committed
     * and forced at the start of the next; flush commits the rest. A window of
     * windowSamples (0: the model's) that fills up is committed whole;
     * trimEncoder encodes only the buffered audio (faster, not transformers' output);
     * tokensPerSecond, when positive, bounds each hypothesis at that many tokens per
     * second of buffered audio (speech is about 3: 5 cuts only a hallucination loop).
     */
    public static final class WhisperStream extends NativeObject {
        public WhisperStream(Whisper whisper, int chunkSamples, int maxNewTokens, int windowSamples, boolean trimEncoder,
                             double tokensPerSecond) {
            super(newStream(whisper, chunkSamples, maxNewTokens, windowSamples, trimEncoder, tokensPerSecond),
                    "whisper_stream", "whisper stream");
        }

        /** A stream with no tokens-per-second bound. */
        public WhisperStream(Whisper whisper, int chunkSamples, int maxNewTokens, int windowSamples, boolean trimEncoder) {
            this(whisper, chunkSamples, maxNewTokens, windowSamples, trimEncoder, 0);
        }

        /** A stream of chunkSamples chunks (0: one second) in the model's window, exact. */
        public WhisperStream(Whisper whisper, int chunkSamples, int maxNewTokens) {
            this(whisper, chunkSamples, maxNewTokens, 0, false);
        }

        private static long newStream(Whisper whisper, int chunkSamples, int maxNewTokens, int windowSamples, boolean trim,
                                      double tokensPerSecond) {
            return asLong(call("whisper_stream.new", 0, args("model", whisper, "chunk_samples", chunkSamples,
                    "max_new_tokens", maxNewTokens, "window_samples", windowSamples, "trim_encoder", trim,
                    "tokens_per_second", tokensPerSecond), null));
        }

        /** One push (samples null: none): the updates the runtime returns, as records. */
        private List<StreamUpdate> push(Tensor samples, boolean end) {
            List<StreamUpdate> out = new ArrayList<>();
            for (Object o : (List<?>) call("whisper_stream.push", handle(), args("samples", samples, "final", end), null)) {
                Map<?, ?> u = map(o);
                out.add(new StreamUpdate(asInt(u.get("chunk")), asInt(u.get("samples")), longs(u.get("committed")),
                        longs(u.get("tentative")), (String) u.get("committed_text"), (String) u.get("tentative_text"),
                        ((Number) u.get("elapsed_ms")).doubleValue(), (Boolean) u.get("final"), asInt(u.get("drafted"))));
            }
            return out;
        }

        /** Adds samples (a 1-D float tensor at the model's rate): one update per chunk they complete. */
        public List<StreamUpdate> push(Tensor samples) {
            return push(samples, false);
        }

        /** Processes what is left and ends the stream: the final update. */
        public StreamUpdate flush() {
            List<StreamUpdate> us = push(null, true);
            return us.get(us.size() - 1);
        }
    }

    /**
     * SpeechT5.generate's result: the spectrogram (texts, frames, mels) after
     * the postnet, zero-padded to the longest; each text's frames; and the
     * vocoder's (texts, samples) waveforms or null. Closing it closes both tensors.
     */
    public record SpeechOutput(Tensor spectrogram, long[] lengths, Tensor waveform) implements AutoCloseable {
        @Override
        public void close() {
            spectrogram.close();
            if (waveform != null) {
                waveform.close();
            }
        }
    }

    /**
     * Options of SpeechT5.generate, as transformers' generate_speech takes
     * them (0 takes its defaults: threshold 0.5, maxLenRatio 20). prenetDropout
     * applies the prenet dropout transformers always applies, drawn from seed;
     * off, the output is deterministic. prefix (null: none) is mel frames the
     * speech starts with, prefilled prefillChunk steps at a time.
     */
    public record SpeechOptions(double threshold, double minLenRatio, double maxLenRatio, boolean prenetDropout, long seed,
                                Tensor prefix, int prefillChunk, boolean vocode) {
        public static final SpeechOptions DEFAULTS = new SpeechOptions(0.5, 0, 20, false, 0, null, 0, true);
    }

    /** A SpeechT5ForTextToSpeech folder with, optionally, a SpeechT5HifiGan folder as its vocoder. */
    public static final class SpeechT5 extends NativeObject {
        private SpeechT5(long h) {
            super(h, "speecht5", "speecht5 model");
        }

        /** The model folder, the vocoder folder (null: none) and the device (null: the default). */
        public static SpeechT5 load(Path path, Path vocoder, String device) throws IOException {
            return new SpeechT5(loadPath("speecht5.load", path,
                    args("vocoder", vocoder == null ? null : vocoder.toString(), "device", device)));
        }

        /** The vocoder's sampling rate. */
        public int samplingRate() {
            return asInt(call("speecht5.sampling_rate", handle()));
        }

        /** Token ids and attention mask (texts, length), as SpeechT5Tokenizer gives them with padding. */
        public Tensor[] tokenize(List<String> texts) {
            Map<?, ?> r = map(call("speecht5.tokenize", handle(), args("texts", texts), null));
            return new Tensor[] {tensor(r.get("input_ids")), tensor(r.get("attention_mask"))};
        }

        /** Speech for texts with speaker embeddings (1 or texts, speaker_embedding_dim). */
        public SpeechOutput generate(List<String> texts, Tensor speakers, SpeechOptions o) {
            return generate(args("texts", texts), speakers, o);
        }

        /** Speech for token ids (texts, length) and their mask (null: the ids that are not padding). */
        public SpeechOutput generate(Tensor ids, Tensor mask, Tensor speakers, SpeechOptions o) {
            return generate(args("input_ids", ids, "attention_mask", mask), speakers, o);
        }

        /** generate_speech on the input (texts, or ids and mask); the waveform only with a vocoder and o.vocode(). */
        private SpeechOutput generate(Map<String, Object> a, Tensor speakers, SpeechOptions o) {
            a.putAll(args("speaker_embeddings", speakers, "threshold", o.threshold(), "minlenratio", o.minLenRatio(),
                    "maxlenratio", o.maxLenRatio(), "prenet_dropout", o.prenetDropout(), "seed", o.seed(),
                    "prefix", o.prefix(), "prefill_chunk", o.prefillChunk(), "vocode", o.vocode()));
            Map<?, ?> r = map(call("speecht5.generate", handle(), a, null));
            return new SpeechOutput(tensor(r.get("spectrogram")), longs(r.get("lengths")), tensor(r.get("waveform")));
        }

        /** The vocoder's waveform of a spectrogram (B, frames, mels) or (frames, mels). */
        public Tensor vocode(Tensor spectrogram) {
            return tensor(call("speecht5.vocode", handle(), args("spectrogram", spectrogram), null));
        }
    }

    /**
     * A Conformer encoding: the last hidden state (waves, frames, hidden) and,
     * when asked for, the (waves, frames) bool mask of each waveform's own
     * frames (null otherwise); closing it closes both.
     */
    public record ConformerOutput(Tensor lastHiddenState, Tensor frameMask) implements AutoCloseable {
        @Override
        public void close() {
            lastHiddenState.close();
            if (frameMask != null) {
                frameMask.close();
            }
        }
    }

    /** A Wav2Vec2ConformerModel folder (config.json, model.safetensors) with its preprocessor_config.json. */
    public static final class Conformer extends NativeObject {
        private Conformer(long h) {
            super(h, "conformer", "conformer model");
        }

        public static Conformer load(Path path, String device) throws IOException {
            return new Conformer(loadPath("conformer.load", path, args("device", device)));
        }

        public static Conformer load(Path path) throws IOException {
            return load(path, null);
        }

        /** The rate waveforms must be sampled at (16000 by default). */
        public int samplingRate() {
            return asInt(call("conformer.sampling_rate", handle()));
        }

        /**
         * Encodes 1-D float waveforms, padded to the longest, as transformers'
         * model(**extractor(waves, padding=True)) does.
         */
        public ConformerOutput encode(List<Tensor> waves, boolean frameMask) {
            Map<?, ?> r = map(call("conformer.encode", handle(), args("waves", waves, "frame_mask", frameMask), null));
            return new ConformerOutput(tensor(r.get("last_hidden_state")), tensor(r.get("frame_mask")));
        }
    }

    /**
     * x (..., time), float, resampled from fromHz to toHz on its device, as
     * torchaudio.functional.resample does by default (Hann-windowed sinc,
     * lowpass_filter_width 6, rolloff 0.99).
     */
    public static Tensor resample(Tensor x, int fromHz, int toHz) {
        return tensor(call("audio.resample", 0, args("x", x, "from_hz", fromHz, "to_hz", toHz), null));
    }
}
