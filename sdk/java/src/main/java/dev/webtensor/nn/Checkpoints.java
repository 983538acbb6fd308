package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;
import dev.webtensor.WebtensorException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SequencedMap;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

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
 * Files are checked by the library's validator ({@link Webtensor#safetensorsHeader},
 * the one every SDK uses), so a file is refused here exactly when Go, Python
 * and JavaScript refuse it, with the same message.
 */
public final class Checkpoints {
    private Checkpoints() {}

    /** Headers past this the validator refuses anyway: no more is read or handed to it. */
    private static final long MAX_HEADER = 100L << 20;
    /** How long a temporary without its writer's PID (an older version's) must be untouched to be stale. */
    private static final long STALE_AFTER_MILLIS = 3_600_000;
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
        removeStaleTemps(abs);
        Path tmp = dir.resolve(tempPrefix(abs) + ProcessHandle.current().pid() + "-"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()));
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
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

    /** What every SDK names a save's temporary beside path, before the writer's PID. */
    private static String tempPrefix(Path abs) {
        return "." + abs.getFileName() + ".tmp-";
    }

    /**
     * Removes the temporaries of earlier saves to path whose writer has exited (a save
     * killed mid-write left one, up to the checkpoint's size, forever), or, for names
     * without a PID, untouched for an hour; a save in progress in a live process is left
     * alone. Best effort, as Go's safetensors.RemoveStaleTemps.
     */
    static void removeStaleTemps(Path abs) {
        String prefix = tempPrefix(abs);
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(abs.getParent(),
                p -> p.getFileName().toString().startsWith(prefix))) {
            for (Path t : temps) {
                try {
                    String rest = t.getFileName().toString().substring(prefix.length());
                    if (Files.isRegularFile(t, LinkOption.NOFOLLOW_LINKS) && stale(t, rest)) {
                        Files.deleteIfExists(t);
                    }
                } catch (IOException | RuntimeException ignored) {
                    // gone already, or not ours to remove
                }
            }
        } catch (IOException ignored) {
            // an unreadable directory: the save itself will say so
        }
    }

    private static boolean stale(Path t, String rest) throws IOException {
        int dash = rest.indexOf('-');
        if (dash > 0 && rest.substring(0, dash).chars().allMatch(Character::isDigit) && dash <= 18) {
            long pid = Long.parseLong(rest.substring(0, dash));
            if (pid > 0) {
                return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
            }
        }
        return System.currentTimeMillis() - Files.getLastModifiedTime(t).toMillis() > STALE_AFTER_MILLIS;
    }

    // ---- reading ------------------------------------------------------------------------

    /** The tensors of a safetensors file by name, in file order, on the default device. The caller closes them. */
    public static SequencedMap<String, Tensor> load(Path path) throws IOException {
        return load(path, (String) null);
    }

    /** As {@link #load(Path)}, on device (null: the default device). */
    public static SequencedMap<String, Tensor> load(Path path, String device) throws IOException {
        byte[] bytes = Files.readAllBytes(path);
        return decode(bytes, device, path.toString());
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
        return decode(bytes, device, "");
    }

    /** The __metadata__ of a safetensors file (empty when it has none); reads only its header. */
    public static Map<String, String> metadata(Path path) throws IOException {
        byte[] prefix;
        long size;
        try (InputStream in = Files.newInputStream(path)) {
            size = Files.size(path);
            byte[] len = in.readNBytes(8);
            long hl = len.length == 8 ? ByteBuffer.wrap(len).order(ByteOrder.LITTLE_ENDIAN).getLong() : -1;
            byte[] head = hl >= 0 && hl <= Math.min(MAX_HEADER, size - 8) ? in.readNBytes((int) hl) : new byte[0];
            prefix = ByteBuffer.allocate(len.length + head.length).put(len).put(head).array();
        }
        Map<String, String> out = new LinkedHashMap<>();
        if (layout(prefix, size, path.toString()).get("metadata") instanceof Map<?, ?> mm) {
            mm.forEach((k, v) -> out.put(String.valueOf(k), String.valueOf(v)));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * The layout of a safetensors file from the library's validator; a malformed file is
     * an IllegalArgumentException naming it (name) and the problem.
     */
    private static Map<?, ?> layout(byte[] prefix, long fileSize, String name) {
        try {
            return (Map<?, ?>) Json.parse(Webtensor.safetensorsHeader(prefix, fileSize, name));
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.INVALID) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            throw e;
        }
    }

    private static SequencedMap<String, Tensor> decode(byte[] bytes, String device, String name) {
        // Only the header goes to the validator: the file's first 8 + header-length bytes.
        int n = Math.min(bytes.length, 8);
        if (bytes.length >= 8) {
            long hl = ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            if (hl >= 0 && hl <= MAX_HEADER) {
                n = (int) Math.min(bytes.length, 8 + hl);
            }
        }
        Map<?, ?> layout = layout(Arrays.copyOf(bytes, n), bytes.length, name);
        int base = Math.toIntExact((Long) layout.get("data_start"));
        SequencedMap<String, Tensor> out = new LinkedHashMap<>();
        try {
            for (Object o : (List<?>) layout.get("tensors")) {
                Map<?, ?> t = (Map<?, ?>) o;
                List<?> off = (List<?>) t.get("offsets");
                int from = base + Math.toIntExact((Long) off.get(0));
                int to = base + Math.toIntExact((Long) off.get(1));
                long[] shape = ((List<?>) t.get("shape")).stream().mapToLong(x -> (Long) x).toArray();
                byte[] raw = Arrays.copyOfRange(bytes, from, to);
                out.put((String) t.get("name"), Tensor.fromBytes(raw, dtype((String) t.get("dtype")), device, shape));
            }
        } catch (RuntimeException ex) {
            out.values().forEach(Tensor::close);
            throw ex;
        }
        return out;
    }

    /** The DType of a webtensor dtype name ("f32"). */
    private static DType dtype(String label) {
        for (DType d : DType.values()) {
            if (d.label().equals(label)) {
                return d;
            }
        }
        throw new IllegalStateException("the library described a tensor of dtype " + label + ", which this SDK lacks");
    }
}
