package dev.webtensor.nn;

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

    @Test
    void malformedFilesSayWhatIsWrong() {
        byte[] good;
        try (Tensor t = Tensor.of(new float[] {1, 2})) {
            good = Checkpoints.toBytes(Map.of("t", t));
        }
        assertProblem(new byte[3], "3 bytes, too short for safetensors");
        assertProblem(java.util.Arrays.copyOf(good, 20), "exceeds the 20-byte file: truncated or not safetensors");
        assertProblem(java.util.Arrays.copyOf(good, good.length - 1), "data offsets [0, 8] do not fit shape [2] of f32 within 7 data bytes");
        assertProblem(withHeader("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"),
                "the header is not valid JSON");
        assertProblem(withHeader("{\"t\":{\"dtype\":\"F8\",\"shape\":[2],\"data_offsets\":[0,8]}}"),
                "tensor \"t\": unsupported dtype F8");
        assertProblem(withHeader("{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}"),
                "tensor \"t\": bad shape [-2]");
        assertProblem(withHeader("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}"), "overlaps another tensor's data");
    }

    /** A file with this header (padded) and 8 data bytes. */
    static byte[] withHeader(String json) {
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + h.length + 8).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length).put(h)
                .array();
    }

    static void assertProblem(byte[] file, String want) {
        var e = assertThrows(IllegalArgumentException.class, () -> Checkpoints.fromBytes(file));
        assertTrue(e.getMessage().startsWith("load: ") && e.getMessage().contains(want), e.getMessage());
    }
}
