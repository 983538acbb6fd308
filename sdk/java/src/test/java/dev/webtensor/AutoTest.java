package dev.webtensor;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import javax.imageio.ImageIO;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Auto: the kernel agent on a traced graph through the C ABI, the journal and
 * rollbacks. The policy is the jar's policy-auto.wasm (make java copies it),
 * else build/plugins/policy-auto.wasm found from the working folder.
 */
class AutoTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void tuneGraphJournalsEveryDecision() throws Exception {
        Path dir = Files.createTempDirectory("wt-auto-java-");
        String opts = "{\"dir\": " + JSON.writeValueAsString(dir.toString()) + ", \"name\": \"square\", \"runs\": 3}";
        int threads = Webtensor.getNumThreads();
        try (Tensor x = Tensor.of(new float[] {-1, -0.5f, 0.25f, 1, 2, 3, 4, 5});
             Graph g = Webtensor.trace(in -> new Tensor[] {in[0].mul(in[0]).relu()}, x)) {
            JsonNode r = JSON.readTree(Auto.tuneGraph(g, new Tensor[] {x}, opts));
            assertEquals("square", r.get("workload").asText());
            assertTrue(r.get("repeat").asInt() >= 1);
            assertTrue(r.get("settings").has("cpu.threads"), r.toString());
            r.get("cached").fields().forEachRemaining(e ->
                    assertEquals(e.getValue().asText(), r.get("settings").get(e.getKey()).asText(), "the winner is in force"));
            String dirOnly = "{\"dir\": " + JSON.writeValueAsString(dir.toString()) + "}";
            JsonNode records = JSON.readTree(Auto.journal(dirOnly));
            assertEquals(r.get("decisions").size(), records.size());
            for (int i = 0; i < records.size(); i++) {
                assertEquals(r.get("decisions").get(i).get("id").asText(), records.get(i).get("id").asText());
                assertEquals("kernel", records.get(i).get("agent").asText());
            }
            WebtensorException e = assertThrows(WebtensorException.class, () -> Auto.rollback(dirOnly, "d0099"));
            assertTrue(e.getMessage().contains("no decision \"d0099\""), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> Auto.tuneGraph(g, new Tensor[] {x}, "[]"));
        } finally {
            Webtensor.setNumThreads(threads);
        }
    }

    /** Labels of every batch of an epoch, in order. */
    private static List<List<Long>> labels(DataLoader<List<Tensor>> loader) {
        List<List<Long>> out = new ArrayList<>();
        for (List<Tensor> batch : loader) {
            List<Long> ys = new ArrayList<>();
            for (long y : batch.get(1).toLongArray()) {
                ys.add(y);
            }
            out.add(ys);
            batch.forEach(Tensor::close);
        }
        return out;
    }

    @Test
    void tuneKeepsACacheOfDecodedImagesAndRollsItBack() throws Exception {
        Path root = Files.createTempDirectory("wt-auto-photos-");
        Random rng = new Random(0);
        for (int c = 0; c < 2; c++) {
            Files.createDirectories(root.resolve("photos/c" + c));
            for (int i = 0; i < 16; i++) {
                BufferedImage im = new BufferedImage(48, 48, BufferedImage.TYPE_INT_RGB);
                for (int y = 0; y < 48; y++) {
                    for (int x = 0; x < 48; x++) {
                        im.setRGB(x, y, rng.nextInt(1 << 24));
                    }
                }
                ImageIO.write(im, "png", root.resolve(String.format("photos/c%d/%02d.png", c, i)).toFile());
            }
        }
        String journal = JSON.writeValueAsString(root.resolve("journal").toString());
        try (NativeDataset ds = Data.imageFolder(root.resolve("photos"), "rgb", null);
             DataLoader<List<Tensor>> loader = DataLoader.of(ds, new DataLoader.Options().batchSize(8).shuffle(true).seed(1))) {
            List<List<Long>> before = labels(loader);
            JsonNode r = JSON.readTree(Auto.tune(loader, "{\"dir\": " + journal + ", \"name\": \"photos\", \"runs\": 5}"));
            JsonNode first = r.get("decisions").get(0);
            assertEquals("data.photos.cache=on", first.get("what").asText());
            assertEquals("kept", first.get("verdict").asText(), first.toString());
            assertTrue(r.get("pipeline_after").get("cache").asBoolean(), r.toString());
            loader.setEpoch(0);
            assertEquals(before, labels(loader), "the same samples in the same order");

            String dirOnly = "{\"dir\": " + journal + "}";
            String undo = Auto.rollback(dirOnly, first.get("id").asText());
            assertTrue(undo.startsWith("d"), undo);
            JsonNode again = JSON.readTree(Auto.tune(loader, "{\"dir\": " + journal + ", \"name\": \"photos\", \"measure\": false}"));
            assertEquals(0, again.get("decisions").size(), again.toString());
            assertTrue(!again.get("pipeline_after").get("cache").asBoolean(), "the rollback took the cache away");
        }
        Dataset<Integer> three = new Dataset<>() {
            @Override
            public long size() {
                return 3;
            }

            @Override
            public Integer get(long index) {
                return (int) index;
            }
        };
        var notNative = DataLoader.of(three, new DataLoader.Options(), records -> records);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Auto.tune(notNative, "{}"));
        assertTrue(e.getMessage().contains("NativeDataset"), e.getMessage());
    }

    @Test
    void planParallelPricesEveryPlan() throws Exception {
        String cluster = "{\"cluster\": {\"devices\": ["
                + "{\"name\": \"cpu\", \"kind\": \"cpu\", \"gflops\": 40, \"gbps\": 10, \"memory_bytes\": 1000000000},"
                + "{\"name\": \"proc0\", \"kind\": \"process\", \"gflops\": 20, \"gbps\": 10, \"memory_bytes\": 1000000000},"
                + "{\"name\": \"proc1\", \"kind\": \"process\", \"gflops\": 20, \"gbps\": 10, \"memory_bytes\": 1000000000}],"
                + "\"links\": [{\"a\": \"parent\", \"b\": \"proc0\", \"gbps\": 1, \"latency_us\": 50},"
                + "{\"a\": \"parent\", \"b\": \"proc1\", \"gbps\": 1, \"latency_us\": 50}]}}";
        float[] ones1 = new float[16 * 32];
        float[] ones2 = new float[32 * 8];
        float[] xs = new float[8 * 16];
        java.util.Arrays.fill(ones1, 1);
        java.util.Arrays.fill(ones2, 1);
        java.util.Arrays.fill(xs, 1);
        try (Tensor w1 = Tensor.of(ones1, 16, 32).requiresGrad(true);
             Tensor w2 = Tensor.of(ones2, 32, 8).requiresGrad(true);
             Tensor x = Tensor.of(xs, 8, 16);
             Graph g = Webtensor.trace(in -> new Tensor[] {in[0].matmul(w1).relu().matmul(w2)}, x)) {
            JsonNode r = JSON.readTree(Auto.planParallel(g, cluster));
            assertTrue(r.get("chosen").get("feasible").asBoolean(), r.toString());
            java.util.Set<String> kinds = new java.util.HashSet<>();
            for (JsonNode p : r.get("candidates")) {
                kinds.add(p.get("strategy").asText() + p.get("degree").asInt());
                assertTrue(p.get("feasible").asBoolean() || p.has("why"), p.toString());
            }
            assertTrue(kinds.contains("tensor2") && kinds.contains("sequence2"), kinds.toString());
            String tiny = "{\"cluster\": {\"devices\": [{\"name\": \"cpu\", \"kind\": \"cpu\", \"gflops\": 1, \"gbps\": 1, \"memory_bytes\": 100}]}}";
            JsonNode none = JSON.readTree(Auto.planParallel(g, tiny));
            assertTrue(none.get("chosen").isNull(), none.toString());
            assertThrows(IllegalArgumentException.class, () -> Auto.planParallel(g, "[]"));
        }
    }
}
