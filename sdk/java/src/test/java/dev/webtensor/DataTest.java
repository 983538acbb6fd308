package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Python's wt.data from Java: the library's readers on data/testdata (x:
 * arange(30) f32 as (5, 2, 3), y: arange(5)·10 i64; table.parquet; a cat/dog
 * image folder), its loader and shuffle, and Java datasets read in the same
 * order and batched by defaultCollate.
 */
class DataTest {
    static final Path TESTDATA = Path.of(System.getProperty("webtensor.repo", "../.."), "data", "testdata");

    private static float[] arange(int from, int to) {
        float[] v = new float[to - from];
        for (int i = 0; i < v.length; i++) {
            v[i] = from + i;
        }
        return v;
    }

    @Test
    void readersDescribeAndReadRecords() throws IOException {
        try (NativeDataset npy = Data.npy(TESTDATA.resolve("x.npy"), TESTDATA.resolve("y.npy"))) {
            assertEquals(5, npy.size());
            assertEquals(List.of("x", "y"), npy.fields());
            assertEquals(List.of("f32", "i64"), npy.dtypes());
            assertArrayEquals(new long[] {2, 3}, npy.shapes().get(0));
            assertNull(npy.classes());
            List<Tensor> r = npy.get(-1);
            assertArrayEquals(arange(24, 30), r.get(0).toFloatArray());
            assertArrayEquals(new long[] {40}, r.get(1).toLongArray());
            r.forEach(Tensor::close);
        }
        for (NativeDataset ds : List.of(Data.npz(TESTDATA.resolve("xy.npz"), List.of("y", "x")),
                Data.safetensors(TESTDATA.resolve("xy.safetensors"), null))) {
            try (ds) {
                assertEquals(5, ds.size());
                assertTrue(ds.fields().containsAll(List.of("x", "y")), ds.toString());
            }
        }
        try (NativeDataset pq = Data.parquet(TESTDATA.resolve("table.parquet"), List.of("b", "v"))) {
            List<Tensor> r = pq.get(2);
            assertArrayEquals(new double[] {1.0}, r.get(0).toDoubleArray());
            assertArrayEquals(new float[] {2, 3, 4}, r.get(1).toFloatArray());
            r.forEach(Tensor::close);
        }
        try (NativeDataset img = Data.imageFolder(TESTDATA.resolve("images"), "rgb", new int[] {3, 4})) {
            assertEquals(List.of("cat", "dog"), img.classes());
            List<Tensor> r = img.get(0);
            assertArrayEquals(new long[] {3, 3, 4}, r.get(0).shape());
            assertEquals(DType.U8, r.get(0).dtype());
            assertArrayEquals(new long[] {0}, r.get(1).toLongArray());
            r.forEach(Tensor::close);
        }
        IOException missing = assertThrows(IOException.class, () -> Data.npy(TESTDATA.resolve("absent.npy")));
        assertTrue(missing.getMessage().contains("absent.npy"), missing.getMessage());
        byte[] bytes = Files.readAllBytes(TESTDATA.resolve("y.npy"));
        try (NativeDataset b = Data.fromBytes("npy", bytes, null, "y.npy")) {
            assertEquals(5, b.size());
        }
    }

    @Test
    void theLibrarysLoaderShufflesByPermutation() {
        long[] perm = Data.permutation(5, 3, 0);
        assertEquals(5, perm.length);
        assertArrayEquals(new long[] {0, 1, 2, 3, 4}, java.util.Arrays.stream(perm).sorted().toArray());
        try (Tensor x = Tensor.of(new long[] {0, 10, 20, 30, 40});
             NativeDataset ds = Data.tensorDataset(List.of(x), List.of("x"));
             DataLoader<List<Tensor>> loader = DataLoader.of(ds, new DataLoader.Options().batchSize(2).shuffle(true).seed(3).numWorkers(2))) {
            assertEquals(3, loader.size());
            List<Long> seen = new ArrayList<>();
            for (List<Tensor> batch : loader) {
                for (long v : batch.get(0).toLongArray()) {
                    seen.add(v / 10);
                }
                batch.forEach(Tensor::close);
            }
            assertEquals(java.util.Arrays.stream(perm).boxed().toList(), seen);
            loader.setEpoch(4);
            List<Long> again = new ArrayList<>();
            for (List<Tensor> batch : loader) {
                for (long v : batch.get(0).toLongArray()) {
                    again.add(v / 10);
                }
                batch.forEach(Tensor::close);
            }
            assertEquals(java.util.Arrays.stream(Data.permutation(5, 3, 4)).boxed().toList(), again);
        }
    }

    /** A Java dataset: record i is (the row [i, i²] as float[], the label i). */
    record Squares(long size) implements Dataset<List<Object>> {
        @Override
        public List<Object> get(long i) {
            return List.of(new float[] {i, i * i}, i);
        }
    }

    @Test
    void javaDatasetsLoadInTheSameOrderAndCollate() {
        for (int workers : new int[] {0, 2}) {
            try (DataLoader<Object> loader = DataLoader.of(new Squares(5),
                    new DataLoader.Options().batchSize(2).shuffle(true).seed(3).numWorkers(workers))) {
                assertEquals(3, loader.size());
                List<Long> seen = new ArrayList<>();
                for (Object b : loader) {
                    List<?> batch = (List<?>) b;
                    try (Tensor x = (Tensor) batch.get(0); Tensor y = (Tensor) batch.get(1)) {
                        assertEquals(DType.I64, y.dtype(), "integer labels collate to i64, as Python ints");
                        long[] ys = y.toLongArray();
                        float[] want = new float[2 * ys.length];
                        for (int k = 0; k < ys.length; k++) {
                            seen.add(ys[k]);
                            want[2 * k] = ys[k];
                            want[2 * k + 1] = ys[k] * ys[k];
                        }
                        assertArrayEquals(want, x.toFloatArray());
                    }
                }
                assertEquals(java.util.Arrays.stream(Data.permutation(5, 3, 0)).boxed().toList(), seen, workers + " workers");
            }
        }
        try (DataLoader<Object> dropped = DataLoader.of(new Squares(5), new DataLoader.Options().batchSize(2).dropLast(true))) {
            assertEquals(2, dropped.size());
        }
    }

    @Test
    void defaultCollateStacksFieldByField() {
        Map<String, Object> a = new LinkedHashMap<>(), b = new LinkedHashMap<>();
        a.put("p", 1.5);
        a.put("q", List.of(true, "x"));
        b.put("p", 2.0);
        b.put("q", List.of(false, "y"));
        Map<?, ?> batch = (Map<?, ?>) Data.defaultCollate(List.of(a, b));
        try (Tensor p = (Tensor) batch.get("p")) {
            assertEquals(DType.F32, p.dtype());
            assertArrayEquals(new float[] {1.5f, 2}, p.toFloatArray());
        }
        List<?> q = (List<?>) batch.get("q");
        try (Tensor flags = (Tensor) q.get(0)) {
            assertArrayEquals(new boolean[] {true, false}, flags.toBooleanArray());
        }
        assertEquals(List.of("x", "y"), q.get(1));
        try (Tensor t1 = Tensor.of(new float[] {1, 2}); Tensor t2 = Tensor.of(new float[] {3, 4});
             Tensor s = (Tensor) Data.defaultCollate(List.of(t1, t2))) {
            assertArrayEquals(new long[] {2, 2}, s.shape());
        }
        try (Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 3, 2); NativeDataset ds = Data.tensorDataset(x);
             DataLoader<Tensor> sums = DataLoader.of(ds, new DataLoader.Options().batchSize(3),
                     (List<List<Tensor>> records) -> Ops.sum(Ops.stack(records.stream().map(r -> r.get(0)).toArray(Tensor[]::new))))) {
            for (Tensor s : sums) {
                try (s) {
                    assertEquals(21.0, s.item());
                }
            }
        }
        assertInstanceOf(IllegalArgumentException.class, assertThrows(IllegalArgumentException.class, () -> Data.defaultCollate(List.of())));
    }
}
