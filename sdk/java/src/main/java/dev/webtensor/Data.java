package dev.webtensor;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.webtensor.NativeObject.args;
import static dev.webtensor.NativeObject.asLong;
import static dev.webtensor.NativeObject.call;

/**
 * Python's {@code wt.data}: the library's dataset readers (the Go package
 * data, through wt_call's dataset targets), the shuffle every loader uses,
 * and the default batch collation. {@link DataLoader} loads them.
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

    /** dataset.open of the files spec names (a key's null value: its default). */
    private static NativeDataset open(Object... spec) throws IOException {
        try {
            return new NativeDataset(asLong(call("dataset.open", 0, args("spec", args(spec)), null)));
        } catch (WebtensorException e) {
            throw NativeObject.ioOf(e);
        }
    }

    /** NumPy .npy files, one field per file named by its stem; record i is row i of every file. */
    public static NativeDataset npy(Path... paths) throws IOException {
        return open("format", "npy", "paths", Arrays.stream(paths).map(Path::toString).toList());
    }

    /** The arrays keys of an .npz archive (null: all, in archive order). */
    public static NativeDataset npz(Path path, List<String> keys) throws IOException {
        return open("format", "npz", "path", path.toString(), "keys", keys);
    }

    /** The tensors keys of a safetensors file (null: all, in file order), a record being one index along their first dim. */
    public static NativeDataset safetensors(Path path, List<String> keys) throws IOException {
        return open("format", "safetensors", "path", path.toString(), "keys", keys);
    }

    /**
     * The columns of a Parquet file (null: all), a record being a row: a column
     * of numbers is a scalar field, one of equal-length lists a vector field;
     * nulls, strings and ragged lists are refused, naming the column and row.
     */
    public static NativeDataset parquet(Path path, List<String> columns) throws IOException {
        return open("format", "parquet", "path", path.toString(), "keys", columns);
    }

    /**
     * torchvision's ImageFolder: root/CLASS/*.png|jpg, classes sorted; records
     * are (image u8 [C, H, W], label i64). mode is "rgb" or "gray"; size
     * {height, width} resizes (bilinear), null keeps the first image's size
     * for all. Images are decoded when read, by the loader's workers.
     */
    public static NativeDataset imageFolder(Path root, String mode, int[] size) throws IOException {
        if (size != null && size.length != 2) {
            throw new IllegalArgumentException("imageFolder: size is {height, width}, got " + size.length + " values");
        }
        return open("format", "images", "path", root.toString(), "mode", mode, "size", size);
    }

    /** A dataset from one file's bytes (format npy, npz, safetensors or parquet); keys as the file readers', name labels it in errors. */
    public static NativeDataset fromBytes(String format, byte[] bytes, List<String> keys, String name) {
        Map<String, Object> spec = args("format", format, "keys", keys, "name", name == null ? format : name);
        return new NativeDataset(NativeObject.loadData("dataset.open", bytes, args("spec", spec), "Data.fromBytes"));
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
        return new NativeDataset(asLong(call("dataset.from_tensors", 0, args("tensors", tensors, "names", names), null)));
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
        return NativeObject.longs(call("data.permutation", 0, args("n", n, "seed", Long.toUnsignedString(seed), "epoch", epoch), null));
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
