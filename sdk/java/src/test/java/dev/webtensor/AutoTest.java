package dev.webtensor;

import java.nio.file.Files;
import java.nio.file.Path;

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
