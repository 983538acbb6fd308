package dev.webtensor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SequencedMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Multimodal's speech calls: SpeechT5 text-to-speech with its HiFi-GAN vocoder
 * and streaming Whisper, through the ABI, on multimodal/testdata's tiny
 * checkpoints against transformers' references (make_speecht5_refs.py).
 */
class SpeechTest {
    static final Path MM = DomainsTest.MM;

    private static void assertRelClose(Tensor want, Tensor got, String what) {
        float[] w = want.toFloatArray();
        float[] g = got.toFloatArray();
        assertEquals(w.length, g.length, what);
        double scale = 0;
        for (float v : w) {
            scale = Math.max(scale, Math.abs(v));
        }
        for (int i = 0; i < w.length; i++) {
            assertEquals(w[i], g[i], 1e-4 * scale, what + "[" + i + "]");
        }
    }

    @Test
    void speechT5SynthesisesAsTransformers() throws IOException {
        JsonNode meta = new ObjectMapper().readTree(Files.readString(MM.resolve("speecht5_refs.json")));
        JsonNode c = null;
        for (JsonNode g : meta.get("generate")) {
            if (g.get("name").asText().equals("batch")) {
                c = g;
            }
        }
        List<String> texts = new ArrayList<>();
        meta.get("texts").forEach(n -> texts.add(n.asText()));
        try (StateDict refs = StateDict.load(MM.resolve("speecht5_refs.safetensors"), "cpu");
             Multimodal.SpeechT5 tts = Multimodal.SpeechT5.load(MM.resolve("speecht5_tiny"), MM.resolve("speecht5_hifigan_tiny"), null)) {
            SequencedMap<String, Tensor> r = refs.tensors();
            assertEquals(16000, tts.samplingRate());
            Tensor[] enc = tts.tokenize(texts);
            assertArrayEquals(r.get("input_ids").toLongArray(), enc[0].toLongArray());
            assertArrayEquals(r.get("attention_mask").toLongArray(), enc[1].toLongArray());
            Arrays.stream(enc).forEach(Tensor::close);
            var o = new Multimodal.SpeechOptions(c.get("threshold").asDouble(), c.get("minlenratio").asDouble(),
                    c.get("maxlenratio").asDouble(), false, 0, null, 0, true);
            try (Multimodal.SpeechOutput out = tts.generate(texts, r.get("speaker_embeddings"), o)) {
                assertArrayEquals(new long[] {c.get("lengths").get(0).asLong(), c.get("lengths").get(1).asLong()}, out.lengths());
                assertRelClose(r.get("batch/spectrogram"), out.spectrogram(), "spectrogram");
                assertRelClose(r.get("batch/waveform"), out.waveform(), "waveform");
            }
            try (Tensor wave = tts.vocode(r.get("vocoder/spectrogram"))) {
                assertRelClose(r.get("vocoder/waveform"), wave, "vocoder");
            }
            r.values().forEach(Tensor::close);
        }
    }

    @Test
    void whisperStreamCommitsTheGreedyTranscript() throws IOException {
        try (StateDict refs = StateDict.load(MM.resolve("whisper_refs.safetensors"), "cpu");
             Multimodal.Whisper w = Multimodal.Whisper.load(MM.resolve("whisper_tiny"));
             Multimodal.WhisperStream s = new Multimodal.WhisperStream(w, 4000, 0)) {
            Tensor wave = refs.tensors().get("whisper/wave_1");
            long[] want;
            try (Tensor ids = w.generate(List.of(wave), 0, 0)) {
                want = Arrays.stream(ids.toLongArray()).filter(id -> id != 600).toArray(); // 600: pad and end of text
            }
            List<Multimodal.StreamUpdate> updates = s.push(wave);
            assertEquals(4, updates.size());
            for (Multimodal.StreamUpdate u : updates) {
                assertArrayEquals(Arrays.copyOf(want, u.committed().length), u.committed(), "chunk " + u.chunk());
            }
            assertTrue(updates.get(1).drafted() > 0, "chunk 2 verifies chunk 1's hypothesis in one call");
            try (Multimodal.WhisperStream bounded = new Multimodal.WhisperStream(w, 4000, 0, 0, false, 5)) {
                List<Multimodal.StreamUpdate> two = bounded.push(wave);
                assertEquals(2, two.get(0).committed().length + two.get(0).tentative().length);
                assertEquals(3, two.get(1).committed().length + two.get(1).tentative().length);
            }
            Multimodal.StreamUpdate last = s.flush();
            assertTrue(last.isFinal());
            assertArrayEquals(want, last.committed());
            assertEquals(w.transcribe(wave), last.committedText());
            assertTrue(last.elapsedMs() > 0);
            refs.tensors().values().forEach(Tensor::close);
        }
    }
}
