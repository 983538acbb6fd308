package dev.webtensor.nn;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.webtensor.DType;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Safetensors checkpoints: the bytes Go's nn.Save and Python's wt.save write
 * (python-mlp.safetensors and go-mlp.safetensors, see make_reference.py),
 * round trips, strict loading and malformed files.
 */
class CheckpointsTest {
    @TempDir
    Path dir;

    static byte[] fixture(String name) throws IOException {
        try (InputStream in = CheckpointsTest.class.getResourceAsStream(name)) {
            return in.readAllBytes();
        }
    }

    /** The model of the fixtures: Sequential(Linear(3, 4), ReLU(), Linear(4, 2)) after manualSeed(seed). */
    static Sequential mlp(long seed) {
        Webtensor.manualSeed(seed);
        return new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
    }

    @Test
    void writesTheBytesGoAndPythonWrite() throws IOException {
        try (Sequential m = mlp(7)) {
            byte[] mine = Checkpoints.toBytes(m);
            assertArrayEquals(fixture("python-mlp.safetensors"), mine, "wt.save's bytes");
            assertArrayEquals(fixture("go-mlp.safetensors"), mine, "nn.Save's bytes");
            Path p = dir.resolve("m.safetensors");
            Checkpoints.save(m, p);
            assertArrayEquals(mine, Files.readAllBytes(p));
        }
    }

    @Test
    void headerIsCompactSortedAndPadded() {
        try (Sequential m = mlp(7)) {
            byte[] b = Checkpoints.toBytes(m);
            long n = ByteBuffer.wrap(b, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            assertEquals(0, (8 + n) % 8);
            String h = new String(b, 8, (int) n, StandardCharsets.UTF_8);
            assertTrue(h.startsWith("{\"0.bias\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"), h);
            assertTrue(h.stripTrailing().endsWith(",\"__metadata__\":{\"format\":\"pt\"}}"), h);
            assertEquals(8 + n + 4 * (4 + 12 + 2 + 8), b.length);
        }
    }

    @Test
    void loadsGoAndPythonCheckpoints() throws IOException {
        for (String name : List.of("go-mlp.safetensors", "python-mlp.safetensors")) {
            Path p = dir.resolve(name);
            Files.write(p, fixture(name));
            try (Sequential m = mlp(99); Sequential want = mlp(7)) {
                Checkpoints.load(p, m);
                for (var e : want.stateDict().entrySet()) {
                    assertArrayEquals(e.getValue().toFloatArray(), m.stateDict().get(e.getKey()).toFloatArray(),
                            name + ": " + e.getKey());
                }
            }
        }
    }

    @Test
    void roundTripsEveryDtypeAndShape() throws IOException {
        Map<String, Tensor> sd = new LinkedHashMap<>();
        try {
            sd.put("z.f64", Tensor.of(new double[] {1.5, -2.25}));
            sd.put("a.i64", Tensor.of(new long[] {1L << 40, -3}, 2, 1));
            sd.put("bool", Tensor.of(new boolean[] {true, false, true}));
            sd.put("bf16", Tensor.fromBytes(new byte[] {0, 0x3f, 0, (byte) 0xc0}, DType.BF16, 2));
            sd.put("scalar", Tensor.scalar(3.5));
            sd.put("empty", Tensor.zeros(0, 3));
            try (Tensor base = Tensor.arange(0, 6, 1).reshape(2, 3)) {
                sd.put("strided", base.transpose(0, 1)); // written row-major whatever the layout
            }
            Path p = dir.resolve("all.safetensors");
            Checkpoints.save(sd, p, Map.of("note", "<&>", "format", "pt"));
            assertEquals(Map.of("note", "<&>", "format", "pt"), Checkpoints.metadata(p));
            SequencedMap<String, Tensor> back = Checkpoints.load(p);
            try {
                assertEquals(List.of("a.i64", "bf16", "bool", "empty", "scalar", "strided", "z.f64"),
                        List.copyOf(back.keySet()), "file order: sorted names");
                for (var e : sd.entrySet()) {
                    Tensor got = back.get(e.getKey());
                    assertEquals(e.getValue().dtype(), got.dtype(), e.getKey());
                    assertArrayEquals(e.getValue().shape(), got.shape(), e.getKey());
                    assertArrayEquals(e.getValue().toBytes(), got.toBytes(), e.getKey());
                }
                assertArrayEquals(new float[] {0, 3, 1, 4, 2, 5}, back.get("strided").toFloatArray());
            } finally {
                back.values().forEach(Tensor::close);
            }
            byte[] noMeta = Checkpoints.toBytes(Map.of("x", sd.get("scalar")), Map.of());
            String h = new String(noMeta, 8, noMeta.length - 8 - 4, StandardCharsets.UTF_8);
            assertTrue(h.startsWith("{\"x\":") && !h.contains("__metadata__"), "an empty metadata map writes none: " + h);
        } finally {
            sd.values().forEach(Tensor::close);
        }
    }

    @Test
    void saveIsAtomic() throws IOException {
        Path p = dir.resolve("keep.safetensors");
        try (Sequential m = mlp(7)) {
            Checkpoints.save(m, p);
        }
        byte[] good = Files.readAllBytes(p);
        Tensor closed = Tensor.ones(2);
        closed.close();
        assertThrows(IllegalStateException.class, () -> Checkpoints.save(Map.of("x", closed), p));
        assertThrows(IOException.class, () -> Checkpoints.save(Map.of(), dir.resolve("no/such/dir.safetensors")));
        assertArrayEquals(good, Files.readAllBytes(p), "a failed save leaves the good file");
        try (var files = Files.list(dir)) {
            assertEquals(List.of(p), files.toList(), "no temporary files are left behind");
        }
    }

    @Test
    void strictLoadListsEveryProblem() throws IOException {
        Path p = dir.resolve("mlp.safetensors");
        try (Sequential m = mlp(7)) {
            Checkpoints.save(m, p);
        }
        Webtensor.manualSeed(1);
        try (Sequential other = new Sequential(new Linear(3, 5), new ReLU(), new Linear(5, 2), new Linear(2, 2))) {
            float[] before = other.parameters().get(0).toFloatArray();
            var e = assertThrows(IllegalArgumentException.class, () -> Checkpoints.load(p, other));
            assertEquals("load " + p + ": loadStateDict: the state dict does not match the Sequential (4 problem(s)):\n"
                    + "  0.weight: shape [4, 3] in state dict, [5, 3] in module\n"
                    + "  0.bias: shape [4] in state dict, [5] in module\n"
                    + "  2.weight: shape [2, 4] in state dict, [2, 5] in module\n"
                    + "  missing from state dict: 3.weight, 3.bias", e.getMessage());
            assertArrayEquals(before, other.parameters().get(0).toFloatArray(), "nothing was loaded");
        }
        try (Linear l = new Linear(3, 4)) {
            var e = assertThrows(IllegalArgumentException.class, () -> Checkpoints.load(p, l));
            assertTrue(e.getMessage().endsWith("missing from state dict: weight, bias\n"
                    + "  not in module: 0.bias, 0.weight, 2.bias, 2.weight"), e.getMessage());
        }
    }

    /** The shared corpus of malformed (and odd but valid) files every SDK treats alike. */
    static final Path CORPUS = Path.of(System.getProperty("webtensor.repo", "../.."), "core", "safetensors", "testdata",
            "malformed.json");

    /** The file of one corpus case (the corpus's doc says how). */
    static byte[] caseBytes(Map<?, ?> c) {
        if (c.get("raw_hex") instanceof String hex) {
            return HexFormat.of().parseHex(hex);
        }
        byte[] header = c.get("header_hex") instanceof String hex ? HexFormat.of().parseHex(hex)
                : ((String) c.get("header")).getBytes(StandardCharsets.UTF_8);
        if (c.get("fill") instanceof Map<?, ?> fill) {
            String h = new String(header, StandardCharsets.ISO_8859_1);
            String with = ((String) fill.get("text")).repeat(((Number) fill.get("times")).intValue());
            header = h.replaceFirst("@@", with).getBytes(StandardCharsets.ISO_8859_1);
        }
        long length = c.get("length") instanceof String l ? Long.parseUnsignedLong(l) : header.length;
        int data = ((Number) c.get("data")).intValue();
        return ByteBuffer.allocate(8 + header.length + data).order(ByteOrder.LITTLE_ENDIAN).putLong(length).put(header)
                .array();
    }

    /**
     * Every malformed file of the corpus is one IllegalArgumentException naming the file and
     * the problem (the library's validator decides, as in Go, Python and JavaScript); the
     * valid ones load.
     */
    @Test
    void malformedCorpus() throws IOException {
        List<?> cases = (List<?>) new ObjectMapper().readValue(Files.readString(CORPUS), Map.class).get("cases");
        assertTrue(cases.size() > 40);
        for (Object o : cases) {
            Map<?, ?> c = (Map<?, ?>) o;
            Path p = dir.resolve("model.safetensors");
            Files.write(p, caseBytes(c));
            String want = (String) c.get("want");
            if (want == null) {
                SequencedMap<String, Tensor> state = Checkpoints.load(p);
                assertEquals(c.get("tensors"), List.copyOf(state.keySet()), (String) c.get("name"));
                state.values().forEach(Tensor::close);
                assertTrue(Checkpoints.metadata(p).isEmpty());
                continue;
            }
            for (var load : List.<org.junit.jupiter.api.function.Executable>of(() -> Checkpoints.load(p),
                    () -> Checkpoints.metadata(p))) {
                var e = assertThrows(IllegalArgumentException.class, load, (String) c.get("name"));
                assertTrue(e.getMessage().startsWith(p + ": safetensors: ") && e.getMessage().contains(want),
                        c.get("name") + ": " + e.getMessage());
            }
            var e = assertThrows(IllegalArgumentException.class, () -> Checkpoints.fromBytes(Files.readAllBytes(p)));
            assertTrue(e.getMessage().startsWith("safetensors: ") && e.getMessage().contains(want), e.getMessage());
        }
    }

    /** A temporary of a save killed mid-write goes on the next save to that path; a live writer's stays. */
    @Test
    void saveRemovesTemporariesOfKilledSaves() throws IOException, InterruptedException {
        Process done = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(), "-version")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        done.waitFor();
        long dead = done.pid();
        String killed = temp(".m.safetensors.tmp-" + dead + "-abc", 0);
        String live = temp(".m.safetensors.tmp-" + ProcessHandle.current().pid() + "-xyz", 0);
        String old = temp(".m.safetensors.tmp-1234567", 7_200_000); // an older version's, long untouched
        String recent = temp(".m.safetensors.tmp-7654321", 60_000);
        String other = temp(".n.safetensors.tmp-" + dead + "-1", 0);
        try (Tensor t = Tensor.of(new float[] {1})) {
            Checkpoints.save(Map.of("t", t), dir.resolve("m.safetensors"));
        }
        List<String> left;
        try (var files = Files.list(dir)) {
            left = files.map(f -> f.getFileName().toString()).sorted().toList();
        }
        assertEquals(List.of(live, recent, other, "m.safetensors").stream().sorted().toList(), left,
                "removed " + killed + " and " + old);
    }

    private String temp(String name, long ageMillis) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, new byte[4096]);
        Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - ageMillis));
        return name;
    }
}
