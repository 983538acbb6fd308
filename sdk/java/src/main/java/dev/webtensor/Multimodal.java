package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Multimodal models from Hugging Face folders: the runtime's tokenizers,
 * sentence encoders, CLIP, Whisper (with streaming), TimeSformer, the
 * Conformer speech encoder and SpeechT5 text-to-speech with its HiFi-GAN
 * vocoder (the Go package multimodal, through the ABI's wt_tokenizer_*,
 * wt_sentence_encoder_*, wt_clip_*, wt_whisper_*, wt_whisper_stream_*,
 * wt_timesformer_*, wt_conformer_*, wt_speecht5_*), the video front end
 * and audio resampling. Every
 * check, number and error is the runtime's; these classes only turn Java
 * strings and tensors into its arguments.
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
            super(h, Abi.TOKENIZER_FREE, "tokenizer");
        }

        /** The tokenizer.json at path, or in the folder path. */
        public static Tokenizer load(Path path) throws IOException {
            return new Tokenizer(load(Abi.TOKENIZER_LOAD, path));
        }

        /** A tokenizer.json's bytes. */
        public static Tokenizer load(byte[] json) {
            return new Tokenizer(loadJson(Abi.TOKENIZER_LOAD_BYTES, json, "tokenizer"));
        }

        public int vocabSize() {
            return int32(Abi.TOKENIZER_VOCAB_SIZE, handle());
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
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ids = arena.allocate(JAVA_LONG), types = arena.allocate(JAVA_LONG), mask = arena.allocate(JAVA_LONG);
                Native.call(Abi.TOKENIZER_ENCODE, h, texts(arena, texts), texts.size(), addSpecialTokens ? 1 : 0, padId,
                        cString(arena, device), ids, types, mask);
                return new Encoding(Tensor.wrap(ids.get(JAVA_LONG, 0)), Tensor.wrap(types.get(JAVA_LONG, 0)),
                        Tensor.wrap(mask.get(JAVA_LONG, 0)));
            }
        }

        /** The text of ids, as the tokenizers library decodes them. */
        public String decode(long[] ids, boolean skipSpecialTokens) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment arr = longs(arena, ids);
                MemorySegment needed = arena.allocate(JAVA_LONG);
                int skip = skipSpecialTokens ? 1 : 0;
                Native.invoke(Abi.TOKENIZER_DECODE, h, arr, (long) ids.length, skip, MemorySegment.NULL, 0L, needed);
                long n = needed.get(JAVA_LONG, 0);
                MemorySegment buf = arena.allocate(n);
                Native.call(Abi.TOKENIZER_DECODE, h, arr, (long) ids.length, skip, buf, n, needed);
                // The text may hold NUL (a token can decode to one): its length is needed - 1, not strlen.
                return new String(buf.asSlice(0, n - 1).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
            }
        }

        /** decode for each row of a 2-D tensor of ids. */
        public List<String> batchDecode(Tensor ids, boolean skipSpecialTokens) {
            long[] shape = ids.shape();
            if (shape.length != 2) {
                throw new IllegalArgumentException("tokenizer: batchDecode takes a 2-D tensor of ids, got rank " + shape.length);
            }
            long[] flat = ids.toLongArray();
            int cols = (int) shape[1];
            List<String> out = new ArrayList<>((int) shape[0]);
            for (int r = 0; r < shape[0]; r++) {
                out.add(decode(java.util.Arrays.copyOfRange(flat, r * cols, (r + 1) * cols), skipSpecialTokens));
            }
            return out;
        }
    }

    /** transformers' ViT, CLIP or VideoMAE image processor: Pillow's resampling, crop, rescale and normalise, bit for bit. */
    public static final class ImageProcessor extends NativeObject {
        private ImageProcessor(long h) {
            super(h, Abi.IMAGE_PROCESSOR_FREE, "image processor");
        }

        /** The preprocessor_config.json at path, or in the folder path. */
        public static ImageProcessor load(Path path) throws IOException {
            return new ImageProcessor(load(Abi.IMAGE_PROCESSOR_LOAD, path));
        }

        /** A preprocessor_config.json's bytes. */
        public static ImageProcessor load(byte[] json) {
            return new ImageProcessor(loadJson(Abi.IMAGE_PROCESSOR_LOAD_BYTES, json, "image processor"));
        }

        /** Pixel values (images, 3, H, W) f32 of (height, width, 3) u8 RGB images, on device (null: the default). */
        public Tensor preprocess(List<Tensor> images, String device) {
            return run(Abi.IMAGE_PROCESSOR_PREPROCESS, images, device);
        }

        /**
         * Pixel values (videos, frames, 3, H, W) f32 of (frames, height, width, 3) u8
         * RGB videos, every frame processed on its own as VideoMAEImageProcessor does.
         */
        public Tensor preprocessVideo(List<Tensor> videos, String device) {
            return run(Abi.IMAGE_PROCESSOR_PREPROCESS_VIDEO, videos, device);
        }

        /** fn(processor, inputs' handles, count, device, out): the inputs stay reachable until it returns. */
        private Tensor run(MethodHandle fn, List<Tensor> inputs, String device) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(fn, arena, h, handles(arena, inputs), inputs.size(), cString(arena, device));
            } finally {
                Reference.reachabilityFence(inputs);
            }
        }
    }

    /**
     * The frame indices transformers' TimeSformer and VideoMAE docs sample from a
     * clip of segLen frames after np.random.seed(seed) (0 to 2^32-1): clipLen
     * indices over a window of clipLen * frameSampleRate frames ending at numpy's randint.
     */
    public static long[] sampleFrameIndices(int clipLen, int frameSampleRate, int segLen, long seed) {
        if (seed < 0 || seed > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("sampleFrameIndices: seed " + seed + " is outside numpy's 0..2^32-1");
        }
        try (Arena arena = Arena.ofConfined();
             Tensor t = NativeObject.newTensor(Abi.VIDEO_SAMPLE_FRAME_INDICES, arena, clipLen, frameSampleRate, segLen, (int) seed)) {
            return t.toLongArray();
        }
    }

    /** numFrames indices spread evenly over total frames, as transformers' video processors sample them. */
    public static long[] uniformFrameIndices(int total, int numFrames) {
        try (Arena arena = Arena.ofConfined();
             Tensor t = NativeObject.newTensor(Abi.VIDEO_UNIFORM_FRAME_INDICES, arena, total, numFrames)) {
            return t.toLongArray();
        }
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
            super(h, Abi.TIMESFORMER_FREE, "timesformer model");
            this.info = Native.readString((buf, cap, needed) -> (int) Abi.TIMESFORMER_INFO_JSON.invokeExact(h, buf, cap, needed));
        }

        public static Timesformer load(Path path, String device) throws IOException {
            return new Timesformer(load(Abi.TIMESFORMER_LOAD, path, device));
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
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment l = logits ? arena.allocate(JAVA_LONG) : MemorySegment.NULL;
                MemorySegment s = hidden ? arena.allocate(JAVA_LONG) : MemorySegment.NULL;
                Native.call(Abi.TIMESFORMER_FORWARD, h, pixels.handle(), l, s);
                return new VideoOutput(logits ? Tensor.wrap(l.get(JAVA_LONG, 0)) : null,
                        hidden ? Tensor.wrap(s.get(JAVA_LONG, 0)) : null);
            } finally {
                Reference.reachabilityFence(pixels);
            }
        }
    }

    /** A sentence-transformers folder (modules.json: a BERT Transformer, Pooling, optionally Normalize). */
    public static final class SentenceEncoder extends NativeObject {
        private SentenceEncoder(long h) {
            super(h, Abi.SENTENCE_ENCODER_FREE, "sentence encoder");
        }

        /** The folder at path with its weights on device (null: the default). */
        public static SentenceEncoder load(Path path, String device) throws IOException {
            return new SentenceEncoder(load(Abi.SENTENCE_ENCODER_LOAD, path, device));
        }

        public static SentenceEncoder load(Path path) throws IOException {
            return load(path, null);
        }

        /**
         * The model in a zip archive of such a folder (its files at the root, or in
         * one top-level folder as {@code zip -r model.zip model} nests them), read
         * from the archive's bytes (wt_sentence_encoder_load_zip) with its weights on
         * device (null: the default). A hostile or broken archive (paths leaving it,
         * a zip bomb, truncation, a missing file) throws a WebtensorException naming
         * the entry.
         */
        public static SentenceEncoder loadZip(byte[] zip, String device) {
            return new SentenceEncoder(loadZip(Abi.SENTENCE_ENCODER_LOAD_ZIP, zip, device, "sentence encoder"));
        }

        /** The length of one embedding. */
        public int dim() {
            return int32(Abi.SENTENCE_ENCODER_DIM, handle());
        }

        /** The embeddings (sentences, dim) in batches of 32, as sentence-transformers' encode gives them. */
        public Tensor encode(List<String> sentences) {
            return encode(sentences, 32);
        }

        public Tensor encode(List<String> sentences, int batchSize) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(Abi.SENTENCE_ENCODER_ENCODE, arena, h, texts(arena, sentences), sentences.size(), batchSize);
            }
        }
    }

    /** A CLIPModel folder (config.json, model.safetensors, tokenizer.json). */
    public static final class CLIP extends NativeObject {
        private CLIP(long h) {
            super(h, Abi.CLIP_FREE, "clip model");
        }

        public static CLIP load(Path path, String device) throws IOException {
            return new CLIP(load(Abi.CLIP_LOAD, path, device));
        }

        public static CLIP load(Path path) throws IOException {
            return load(path, null);
        }

        /** The model in a zip archive of such a folder (wt_clip_load_zip), as SentenceEncoder.loadZip reads one. */
        public static CLIP loadZip(byte[] zip, String device) {
            return new CLIP(loadZip(Abi.CLIP_LOAD_ZIP, zip, device, "clip model"));
        }

        /** Each image's probabilities over texts, (images, texts), from pixel values (images, 3, H, W). */
        public Tensor zeroShot(Tensor pixels, List<String> texts) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(Abi.CLIP_ZERO_SHOT, arena, h, pixels.handle(), texts(arena, texts), texts.size());
            } finally {
                Reference.reachabilityFence(pixels);
            }
        }

        /** The projected text embeddings (not normalised), as get_text_features gives them. */
        public Tensor textFeatures(List<String> texts) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(Abi.CLIP_TEXT_FEATURES, arena, h, texts(arena, texts), texts.size());
            }
        }

        /** The projected image embeddings (not normalised), as get_image_features gives them. */
        public Tensor imageFeatures(Tensor pixels) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(Abi.CLIP_IMAGE_FEATURES, arena, h, pixels.handle());
            } finally {
                Reference.reachabilityFence(pixels);
            }
        }
    }

    /** A WhisperForConditionalGeneration folder with its tokenizer.json and preprocessor_config.json. */
    public static final class Whisper extends NativeObject {
        private final Tokenizer tokenizer;

        private Whisper(long h) {
            super(h, Abi.WHISPER_FREE, "whisper model");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(JAVA_LONG);
                Native.call(Abi.WHISPER_TOKENIZER, h, out);
                this.tokenizer = new Tokenizer(out.get(JAVA_LONG, 0));
            }
        }

        public static Whisper load(Path path, String device) throws IOException {
            return new Whisper(load(Abi.WHISPER_LOAD, path, device));
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
            return int32(Abi.WHISPER_SAMPLING_RATE, handle());
        }

        /**
         * Token ids (waves, length) for 1-D float waveforms, padded with the pad
         * token as transformers' generate pads them; 0 takes the generation
         * config's value.
         */
        public Tensor generate(List<Tensor> waves, int maxNewTokens, int numBeams) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(Abi.WHISPER_GENERATE, arena, h, handles(arena, waves), waves.size(), maxNewTokens, numBeams);
            } finally {
                Reference.reachabilityFence(waves);
            }
        }

        /** The texts of waveforms, greedy (or with numBeams beams). */
        public List<String> transcribe(List<Tensor> waves, int maxNewTokens, int numBeams) {
            try (Tensor ids = generate(waves, maxNewTokens, numBeams)) {
                return tokenizer.batchDecode(ids, true);
            }
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
                    Abi.WHISPER_STREAM_FREE, "whisper stream");
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
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(JAVA_LONG);
                Native.call(Abi.WHISPER_STREAM_NEW, whisper.handle(), chunkSamples, maxNewTokens, windowSamples,
                        trim ? 1 : 0, tokensPerSecond, out);
                return out.get(JAVA_LONG, 0);
            }
        }

        private List<StreamUpdate> push(Tensor samples, boolean end) {
            long h = handle();
            try {
                Native.call(Abi.WHISPER_STREAM_PUSH, h, samples == null ? 0L : samples.handle(), end ? 1 : 0,
                        MemorySegment.NULL);
            } finally {
                Reference.reachabilityFence(samples);
            }
            String raw = Native.readString((buf, cap, needed) -> (int) Abi.WHISPER_STREAM_READ.invokeExact(h, buf, cap, needed));
            List<StreamUpdate> out = new ArrayList<>();
            for (Object o : (List<?>) Json.parse(raw, "wt_whisper_stream_read")) {
                java.util.Map<?, ?> u = (java.util.Map<?, ?>) o;
                out.add(new StreamUpdate(((Long) u.get("chunk")).intValue(), ((Long) u.get("samples")).intValue(),
                        ids(u.get("committed")), ids(u.get("tentative")), (String) u.get("committed_text"),
                        (String) u.get("tentative_text"), ((Number) u.get("elapsed_ms")).doubleValue(),
                        (Boolean) u.get("final"), ((Number) u.get("drafted")).intValue()));
            }
            return out;
        }

        private static long[] ids(Object list) {
            return ((List<?>) list).stream().mapToLong(x -> (Long) x).toArray();
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
        private final boolean vocoder;

        private SpeechT5(long h, boolean vocoder) {
            super(h, Abi.SPEECHT5_FREE, "speecht5 model");
            this.vocoder = vocoder;
        }

        /** The model folder, the vocoder folder (null: none) and the device (null: the default). */
        public static SpeechT5 load(Path path, Path vocoder, String device) throws IOException {
            return new SpeechT5(load(Abi.SPEECHT5_LOAD, path, vocoder == null ? null : vocoder.toString(), device),
                    vocoder != null);
        }

        /** The vocoder's sampling rate. */
        public int samplingRate() {
            return int32(Abi.SPEECHT5_SAMPLING_RATE, handle());
        }

        /** Token ids and attention mask (texts, length), as SpeechT5Tokenizer gives them with padding. */
        public Tensor[] tokenize(List<String> texts) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ids = arena.allocate(JAVA_LONG), mask = arena.allocate(JAVA_LONG);
                Native.call(Abi.SPEECHT5_TOKENIZE, h, texts(arena, texts), texts.size(), ids, mask);
                return new Tensor[] {Tensor.wrap(ids.get(JAVA_LONG, 0)), Tensor.wrap(mask.get(JAVA_LONG, 0))};
            }
        }

        /** Speech for texts with speaker embeddings (1 or texts, speaker_embedding_dim). */
        public SpeechOutput generate(List<String> texts, Tensor speakers, SpeechOptions o) {
            Tensor[] enc = tokenize(texts);
            try (Tensor ids = enc[0]; Tensor mask = enc[1]) {
                return generate(ids, mask, speakers, o);
            }
        }

        /** Speech for token ids (texts, length) and their mask (null: the ids that are not padding). */
        public SpeechOutput generate(Tensor ids, Tensor mask, Tensor speakers, SpeechOptions o) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment spec = arena.allocate(JAVA_LONG), lengths = arena.allocate(JAVA_LONG);
                MemorySegment wave = arena.allocate(JAVA_LONG);
                Native.call(Abi.SPEECHT5_GENERATE, h, ids.handle(), mask == null ? 0L : mask.handle(), speakers.handle(),
                        o.threshold(), o.minLenRatio(), o.maxLenRatio(), o.prenetDropout() ? 1 : 0, o.seed(),
                        o.prefix() == null ? 0L : o.prefix().handle(), o.prefillChunk(), spec, lengths,
                        vocoder && o.vocode() ? wave : MemorySegment.NULL);
                long[] n;
                try (Tensor lt = Tensor.wrap(lengths.get(JAVA_LONG, 0))) {
                    n = lt.toLongArray();
                }
                return new SpeechOutput(Tensor.wrap(spec.get(JAVA_LONG, 0)), n,
                        vocoder && o.vocode() ? Tensor.wrap(wave.get(JAVA_LONG, 0)) : null);
            } finally {
                Reference.reachabilityFence(ids);
                Reference.reachabilityFence(mask);
                Reference.reachabilityFence(speakers);
                Reference.reachabilityFence(o);
            }
        }

        /** The vocoder's waveform of a spectrogram (B, frames, mels) or (frames, mels). */
        public Tensor vocode(Tensor spectrogram) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                return newTensor(Abi.SPEECHT5_VOCODE, arena, h, spectrogram.handle());
            } finally {
                Reference.reachabilityFence(spectrogram);
            }
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
            super(h, Abi.CONFORMER_FREE, "conformer model");
        }

        public static Conformer load(Path path, String device) throws IOException {
            return new Conformer(load(Abi.CONFORMER_LOAD, path, device));
        }

        public static Conformer load(Path path) throws IOException {
            return load(path, null);
        }

        /** The rate waveforms must be sampled at (16000 by default). */
        public int samplingRate() {
            return int32(Abi.CONFORMER_SAMPLING_RATE, handle());
        }

        /**
         * Encodes 1-D float waveforms, padded to the longest, as transformers'
         * model(**extractor(waves, padding=True)) does.
         */
        public ConformerOutput encode(List<Tensor> waves, boolean frameMask) {
            long h = handle();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment hs = handles(arena, waves);
                MemorySegment hidden = arena.allocate(JAVA_LONG);
                MemorySegment mask = frameMask ? arena.allocate(JAVA_LONG) : MemorySegment.NULL;
                Native.call(Abi.CONFORMER_ENCODE, h, hs, waves.size(), hidden, mask);
                return new ConformerOutput(Tensor.wrap(hidden.get(JAVA_LONG, 0)),
                        frameMask ? Tensor.wrap(mask.get(JAVA_LONG, 0)) : null);
            } finally {
                Reference.reachabilityFence(waves);
            }
        }
    }

    /**
     * x (..., time), float, resampled from fromHz to toHz on its device, as
     * torchaudio.functional.resample does by default (Hann-windowed sinc,
     * lowpass_filter_width 6, rolloff 0.99).
     */
    public static Tensor resample(Tensor x, int fromHz, int toHz) {
        try (Arena arena = Arena.ofConfined()) {
            return NativeObject.newTensor(Abi.AUDIO_RESAMPLE, arena, x.handle(), fromHz, toHz);
        } finally {
            Reference.reachabilityFence(x);
        }
    }
}
