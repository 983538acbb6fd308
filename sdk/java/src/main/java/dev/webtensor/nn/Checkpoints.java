package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Tensor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SequencedMap;
import java.util.TreeMap;

/**
 * Checkpoints in the safetensors format, byte for byte what Go's nn.Save and
 * the Python and JavaScript SDKs write: tensors sorted by name, a compact
 * JSON header (keys sorted, {@code __metadata__ {"format":"pt"}}) padded with
 * spaces so the data starts 8-byte aligned. So a model saved here loads in
 * Go, Python, JavaScript and torch ({@code safetensors.torch.load_file}), and
 * the other way round.
 *
 * <pre>{@code
 * Checkpoints.save(model, Path.of("mlp.safetensors"));
 * Checkpoints.load(Path.of("mlp.safetensors"), model);       // strict, see Module.loadStateDict
 * }</pre>
 *
 * I/O failures are {@link IOException}s; a malformed file or a state dict
 * that does not fit is an {@link IllegalArgumentException} that says what and where.
 */
public final class Checkpoints {
    private Checkpoints() {}

    private static final long MAX_HEADER = 100L << 20;
    private static final Map<String, String> PT = Map.of("format", "pt");

    // ---- writing ------------------------------------------------------------------------

    /** m's state dict as safetensors bytes, with metadata {"format": "pt"}. */
    public static byte[] toBytes(Module m) {
        return toBytes(m.stateDict(), PT);
    }

    /** A state dict (name to tensor, any device or layout) as safetensors bytes, with metadata {"format": "pt"}. */
    public static byte[] toBytes(Map<String, Tensor> state) {
        return toBytes(state, PT);
    }

    /** As {@link #toBytes(Map)} with other metadata (an empty map writes none). */
    public static byte[] toBytes(Map<String, Tensor> state, Map<String, String> metadata) {
        List<String> names = new ArrayList<>(state.keySet());
        for (String n : names) {
            if (n == null || n.equals("__metadata__")) {
                throw new IllegalArgumentException("save: invalid tensor name " + n);
            }
            if (state.get(n) == null) {
                throw new IllegalArgumentException("save: " + n + " is null, not a tensor");
            }
        }
        names.sort(Json::compareCodePoints);
        Map<String, String> header = new TreeMap<>(Json::compareCodePoints); // key -> JSON value
        if (!metadata.isEmpty()) {
            header.put("__metadata__", metadataJson(metadata));
        }
        List<byte[]> blobs = new ArrayList<>(names.size());
        long offset = 0;
        for (String n : names) {
            Tensor t = state.get(n);
            byte[] data = t.toBytes(); // row-major, whatever the strides or device
            header.put(n, "{\"dtype\":\"" + stName(t.dtype()) + "\",\"shape\":" + jsonInts(t.shape())
                    + ",\"data_offsets\":[" + offset + "," + (offset + data.length) + "]}");
            offset += data.length;
            blobs.add(data);
        }
        StringBuilder hj = new StringBuilder("{");
        header.forEach((k, v) -> hj.append(hj.length() > 1 ? "," : "").append(Json.quote(k)).append(':').append(v));
        byte[] head = hj.append('}').toString().getBytes(StandardCharsets.UTF_8);
        int padded = head.length + (8 - (8 + head.length) % 8) % 8;
        ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(8 + padded + offset)).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(padded).put(head);
        for (int i = head.length; i < padded; i++) {
            out.put((byte) ' ');
        }
        blobs.forEach(out::put);
        return out.array();
    }

    private static String metadataJson(Map<String, String> metadata) {
        StringBuilder b = new StringBuilder("{");
        List<Map.Entry<String, String>> entries = new ArrayList<>(metadata.entrySet());
        for (Map.Entry<String, String> e : entries) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new IllegalArgumentException("save: metadata must map strings to strings, got " + e);
            }
        }
        entries.sort(Map.Entry.comparingByKey(Json::compareCodePoints));
        for (Map.Entry<String, String> e : entries) {
            b.append(b.length() > 1 ? "," : "").append(Json.quote(e.getKey())).append(':')
                    .append(Json.quote(e.getValue()));
        }
        return b.append('}').toString();
    }

    private static String jsonInts(long[] v) {
        return Arrays.toString(v).replace(" ", "");
    }

    private static String stName(DType d) {
        return d.label().toUpperCase(Locale.ROOT);
    }

    /** Writes m's state dict to path (see {@link #save(Map, Path, Map)}). */
    public static void save(Module m, Path path) throws IOException {
        write(path, toBytes(m));
    }

    public static void save(Map<String, Tensor> state, Path path) throws IOException {
        write(path, toBytes(state));
    }

    /**
     * Writes a state dict to path. The bytes go to a temporary file beside
     * path, which is synced and renamed over path, so a failed save never
     * leaves a broken file where a good one was.
     */
    public static void save(Map<String, Tensor> state, Path path, Map<String, String> metadata) throws IOException {
        write(path, toBytes(state, metadata));
    }

    private static void write(Path path, byte[] bytes) throws IOException {
        Path abs = path.toAbsolutePath();
        Path dir = abs.getParent();
        Path tmp = Files.createTempFile(dir, "." + abs.getFileName() + ".tmp-", "");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true); // make the rename durable
        } catch (IOException ignored) {
            // best effort: not every file system syncs directories
        }
    }

    // ---- reading ------------------------------------------------------------------------

    /** The tensors of a safetensors file by name, in file order, on the default device. The caller closes them. */
    public static SequencedMap<String, Tensor> load(Path path) throws IOException {
        return load(path, (String) null);
    }

    /** As {@link #load(Path)}, on device (null: the default device). */
    public static SequencedMap<String, Tensor> load(Path path, String device) throws IOException {
        byte[] bytes = Files.readAllBytes(path);
        return decode(bytes, device, "load " + path);
    }

    /**
     * Loads a checkpoint into m, strictly: every name, shape and dtype must
     * match m's state dict, else nothing changes and the error lists every
     * mismatch. Values go to the devices m's parameters are on.
     */
    public static void load(Path path, Module m) throws IOException {
        SequencedMap<String, Tensor> state = load(path, (String) null);
        try {
            m.loadStateDict(state);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("load " + path + ": " + e.getMessage(), e);
        } finally {
            state.values().forEach(Tensor::close);
        }
    }

    /** The tensors of safetensors bytes by name, in file order, on the default device. The caller closes them. */
    public static SequencedMap<String, Tensor> fromBytes(byte[] bytes) {
        return fromBytes(bytes, null);
    }

    /** As {@link #fromBytes(byte[])}, on device (null: the default device). */
    public static SequencedMap<String, Tensor> fromBytes(byte[] bytes, String device) {
        return decode(bytes, device, "load");
    }

    /** The __metadata__ of a safetensors file (empty when it has none). */
    public static Map<String, String> metadata(Path path) throws IOException {
        byte[] bytes = Files.readAllBytes(path);
        Map<String, String> out = new LinkedHashMap<>();
        Object meta = header(bytes, "load " + path).get("__metadata__");
        if (meta instanceof Map<?, ?> mm) {
            mm.forEach((k, v) -> out.put(String.valueOf(k), String.valueOf(v)));
        }
        return Collections.unmodifiableMap(out);
    }

    private record Entry(String name, DType dtype, long[] shape, long from, long to) {}

    private static Map<?, ?> header(byte[] bytes, String where) {
        if (bytes.length < 8) {
            throw new IllegalArgumentException(where + ": " + bytes.length + " bytes, too short for safetensors");
        }
        long hl = ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (hl < 0 || hl > MAX_HEADER || hl > bytes.length - 8) {
            throw new IllegalArgumentException(where + ": header length " + Long.toUnsignedString(hl)
                    + " exceeds the " + bytes.length + "-byte file: truncated or not safetensors");
        }
        Object h;
        try {
            h = Json.parse(StandardCharsets.UTF_8.newDecoder()
                    .decode(ByteBuffer.wrap(bytes, 8, (int) hl)).toString());
        } catch (java.nio.charset.CharacterCodingException | IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": the header is not valid JSON: " + e.getMessage());
        }
        if (!(h instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(where + ": the header is not a JSON object");
        }
        return m;
    }

    private static SequencedMap<String, Tensor> decode(byte[] bytes, String device, String where) {
        Map<?, ?> header = header(bytes, where);
        int base = 8 + (int) ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        long size = bytes.length - base;
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<?, ?> e : header.entrySet()) {
            String name = (String) e.getKey();
            if (!name.equals("__metadata__")) {
                entries.add(entry(name, e.getValue(), size, where));
            }
        }
        entries.sort(Comparator.comparingLong(Entry::from).thenComparingLong(Entry::to));
        long end = 0;
        for (Entry e : entries) {
            if (e.from() < end) {
                throw new IllegalArgumentException(where + ": tensor \"" + e.name() + "\" overlaps another tensor's data");
            }
            end = e.to();
        }
        SequencedMap<String, Tensor> out = new LinkedHashMap<>();
        try {
            for (Entry e : entries) {
                byte[] raw = Arrays.copyOfRange(bytes, base + (int) e.from(), base + (int) e.to());
                out.put(e.name(), Tensor.fromBytes(raw, e.dtype(), device, e.shape()));
            }
        } catch (RuntimeException ex) {
            out.values().forEach(Tensor::close);
            throw ex;
        }
        return out;
    }

    private static Entry entry(String name, Object value, long size, String where) {
        String what = where + ": tensor \"" + name + "\"";
        if (!(value instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(what + ": the entry is not an object");
        }
        DType dt = null;
        for (DType d : DType.values()) {
            if (stName(d).equals(m.get("dtype"))) {
                dt = d;
            }
        }
        if (dt == null) {
            throw new IllegalArgumentException(what + ": unsupported dtype " + m.get("dtype"));
        }
        long[] shape = longs(m.get("shape"), -1);
        if (shape == null || Arrays.stream(shape).anyMatch(s -> s < 0)) {
            throw new IllegalArgumentException(what + ": bad shape " + m.get("shape"));
        }
        long[] off = longs(m.get("data_offsets"), 2);
        long n = dt.byteSize();
        try {
            for (long s : shape) {
                n = Math.multiplyExact(n, s);
            }
        } catch (ArithmeticException overflow) {
            n = -1; // fits no offsets
        }
        if (off == null || off[0] < 0 || off[1] < off[0] || off[1] > size || off[1] - off[0] != n) {
            throw new IllegalArgumentException(what + ": data offsets " + m.get("data_offsets") + " do not fit shape "
                    + Arrays.toString(shape) + " of " + dt + " within " + size + " data bytes");
        }
        return new Entry(name, dt, shape, off[0], off[1]);
    }

    /** A JSON array of integers (of length n when n >= 0), or null. */
    private static long[] longs(Object v, int n) {
        if (!(v instanceof List<?> l) || (n >= 0 && l.size() != n)) {
            return null;
        }
        long[] out = new long[l.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(l.get(i) instanceof Long x)) {
                return null;
            }
            out[i] = x;
        }
        return out;
    }
}
