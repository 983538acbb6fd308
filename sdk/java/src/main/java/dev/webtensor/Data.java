package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Python's {@code wt.data}: the library's dataset readers (the Go package
 * data, through wt_dataset_*), the shuffle every loader uses, and the
 * default batch collation. {@link DataLoader} loads them.
 *
 * <pre>{@code
 * try (NativeDataset ds = Data.npy(Path.of("x.npy"), Path.of("y.npy"));
 *      DataLoader<List<Tensor>> loader = DataLoader.of(ds, new DataLoader.Options().batchSize(32).shuffle(true))) {
 *     for (List<Tensor> batch : loader) { ... }
 * }
 * }</pre>
 */
public final class Data {
    private Data() {}

    private static String list(List<String> xs) {
        if (xs == null) {
            return "null";
        }
        StringJoiner j = new StringJoiner(",", "[", "]");
        xs.forEach(x -> j.add(Json.quote(x)));
        return j.toString();
    }

    private static NativeDataset open(String spec) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            try {
                Native.call(Abi.DATASET_OPEN, arena.allocateFrom(spec), out);
            } catch (WebtensorException e) {
                if (e.status() == WebtensorException.IO) {
                    throw new IOException(e.getMessage(), e);
                }
                throw e;
            }
            return new NativeDataset(out.get(JAVA_LONG, 0));
        }
    }

    /** NumPy .npy files, one field per file named by its stem; record i is row i of every file. */
    public static NativeDataset npy(Path... paths) throws IOException {
        return open("{\"format\":\"npy\",\"paths\":" + list(java.util.Arrays.stream(paths).map(Path::toString).toList()) + "}");
    }

    /** The arrays keys of an .npz archive (null: all, in archive order). */
    public static NativeDataset npz(Path path, List<String> keys) throws IOException {
        return open("{\"format\":\"npz\",\"path\":" + Json.quote(path.toString()) + ",\"keys\":" + list(keys) + "}");
    }

    /** The tensors keys of a safetensors file (null: all, in file order), a record being one index along their first dim. */
    public static NativeDataset safetensors(Path path, List<String> keys) throws IOException {
        return open("{\"format\":\"safetensors\",\"path\":" + Json.quote(path.toString()) + ",\"keys\":" + list(keys) + "}");
    }

    /**
     * The columns of a Parquet file (null: all), a record being a row: a column
     * of numbers is a scalar field, one of equal-length lists a vector field;
     * nulls, strings and ragged lists are refused, naming the column and row.
     */
    public static NativeDataset parquet(Path path, List<String> columns) throws IOException {
        return open("{\"format\":\"parquet\",\"path\":" + Json.quote(path.toString()) + ",\"keys\":" + list(columns) + "}");
    }

    /**
     * torchvision's ImageFolder: root/CLASS/*.png|jpg, classes sorted; records
     * are (image u8 [C, H, W], label i64). mode is "rgb" or "gray"; size
     * {height, width} resizes (bilinear), null keeps the first image's size
     * for all. Images are decoded when read, by the loader's workers.
     */
    public static NativeDataset imageFolder(Path root, String mode, int[] size) throws IOException {
        String spec = "{\"format\":\"images\",\"path\":" + Json.quote(root.toString()) + ",\"mode\":" + Json.quote(mode);
        if (size != null) {
            if (size.length != 2) {
                throw new IllegalArgumentException("imageFolder: size is {height, width}, got " + size.length + " values");
            }
            spec += ",\"size\":[" + size[0] + "," + size[1] + "]";
        }
        return open(spec + "}");
    }

    /** A dataset from one file's bytes (format npy, npz, safetensors or parquet); keys as the file readers', name labels it in errors. */
    public static NativeDataset fromBytes(String format, byte[] bytes, List<String> keys, String name) {
        String spec = "{\"format\":" + Json.quote(format) + ",\"keys\":" + list(keys) + ",\"name\":" + Json.quote(name == null ? format : name) + "}";
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = NativeObject.nativeBytes(arena, bytes);
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.DATASET_OPEN_BYTES, arena.allocateFrom(spec), b, (long) bytes.length, out);
            return new NativeDataset(out.get(JAVA_LONG, 0));
        }
    }

    /**
     * PyTorch's TensorDataset: record i is t[i] of each tensor, all of one
     * first dim; names (null: "0", "1", ...) name the fields. The values are
     * copied into the library; the tensors stay the caller's.
     */
    public static NativeDataset tensorDataset(List<Tensor> tensors, List<String> names) {
        if (tensors.isEmpty()) {
            throw new IllegalArgumentException("tensorDataset needs at least one tensor");
        }
        if (names != null && names.size() != tensors.size()) {
            throw new IllegalArgumentException(names.size() + " names for " + tensors.size() + " tensors");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment hs = arena.allocate(JAVA_LONG, tensors.size());
            for (int i = 0; i < tensors.size(); i++) {
                hs.setAtIndex(JAVA_LONG, i, tensors.get(i).handle());
            }
            MemorySegment ns = names == null ? MemorySegment.NULL : NativeObject.texts(arena, names);
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.DATASET_FROM_TENSORS, hs, ns, tensors.size(), out);
            return new NativeDataset(out.get(JAVA_LONG, 0));
        } finally {
            Reference.reachabilityFence(tensors);
        }
    }

    /** {@link #tensorDataset(List, List)} with fields named "0", "1", ... */
    public static NativeDataset tensorDataset(Tensor... tensors) {
        return tensorDataset(List.of(tensors), null);
    }

    /** The record order of shuffled epoch epoch: what every loader with this seed reads, in every SDK. */
    public static long[] permutation(long n, long seed, long epoch) {
        if (n < 0) {
            throw new IllegalArgumentException("permutation: n must be >= 0, got " + n);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, Math.max(n, 1));
            Native.call(Abi.DATA_PERMUTATION, n, seed, epoch, out);
            return out.asSlice(0, n * JAVA_LONG.byteSize()).toArray(JAVA_LONG);
        }
    }

    /**
     * Stacks samples into a batch as PyTorch's default_collate: Tensors stack
     * along a new first dim (the stack op), integers become an i64 tensor and
     * other numbers an f32 one (as Python's ints and floats), booleans a bool
     * one, float[] and long[] rows a 2-d tensor, Lists and Maps collate field
     * by field (into a List, a Map in the first sample's key order), anything
     * else (Strings) stays a List.
     */
    public static Object defaultCollate(List<?> samples) {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("defaultCollate: no samples");
        }
        Object first = samples.get(0);
        int n = samples.size();
        if (first instanceof Tensor) {
            return Ops.stack(samples.toArray(new Tensor[0]));
        }
        if (first instanceof Long || first instanceof Integer || first instanceof Short || first instanceof Byte) {
            return Tensor.of(samples.stream().mapToLong(x -> ((Number) x).longValue()).toArray());
        }
        if (first instanceof Number) {
            float[] v = new float[n];
            for (int i = 0; i < n; i++) {
                v[i] = ((Number) samples.get(i)).floatValue();
            }
            return Tensor.of(v);
        }
        if (first instanceof Boolean) {
            boolean[] v = new boolean[n];
            for (int i = 0; i < n; i++) {
                v[i] = (Boolean) samples.get(i);
            }
            return Tensor.of(v);
        }
        if (first instanceof float[] row) {
            float[] v = new float[n * row.length];
            for (int i = 0; i < n; i++) {
                System.arraycopy(sameLength((float[]) samples.get(i), row.length), 0, v, i * row.length, row.length);
            }
            return Tensor.of(v, n, row.length);
        }
        if (first instanceof long[] row) {
            long[] v = new long[n * row.length];
            for (int i = 0; i < n; i++) {
                System.arraycopy(sameLength((long[]) samples.get(i), row.length), 0, v, i * row.length, row.length);
            }
            return Tensor.of(v, n, row.length);
        }
        if (first instanceof List<?> fields) {
            List<Object> out = new ArrayList<>(fields.size());
            for (int k = 0; k < fields.size(); k++) {
                int field = k;
                out.add(defaultCollate(samples.stream().map(s -> {
                    List<?> l = (List<?>) s;
                    if (l.size() != fields.size()) {
                        throw new IllegalArgumentException("defaultCollate: samples have " + fields.size() + " and " + l.size() + " fields");
                    }
                    return l.get(field);
                }).toList()));
            }
            return out;
        }
        if (first instanceof Map<?, ?> m) {
            Map<Object, Object> out = new LinkedHashMap<>();
            for (Object k : m.keySet()) {
                out.put(k, defaultCollate(samples.stream().map(s -> ((Map<?, ?>) s).get(k)).toList()));
            }
            return out;
        }
        return java.util.Collections.unmodifiableList(new ArrayList<>(samples));
    }

    private static float[] sameLength(float[] row, int n) {
        if (row.length != n) {
            throw new IllegalArgumentException("defaultCollate: rows of " + n + " and " + row.length + " values");
        }
        return row;
    }

    private static long[] sameLength(long[] row, int n) {
        if (row.length != n) {
            throw new IllegalArgumentException("defaultCollate: rows of " + n + " and " + row.length + " values");
        }
        return row;
    }
}
