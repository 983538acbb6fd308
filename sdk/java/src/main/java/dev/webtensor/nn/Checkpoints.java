package dev.webtensor.nn;

import dev.webtensor.StateDict;
import dev.webtensor.Tensor;
import dev.webtensor.WebtensorException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.SequencedMap;

/**
 * Checkpoints in the safetensors format: the runtime writes and reads them
 * ({@link StateDict}), so the bytes are what Go's nn.Save and the Python and
 * JavaScript SDKs write (tensors sorted by name, a compact header with
 * {@code __metadata__ {"format":"pt"}}, padded so the data starts 8-byte
 * aligned), and a model saved here loads in Go, Python, JavaScript and torch
 * ({@code safetensors.torch.load_file}), and the other way round.
 *
 * <pre>{@code
 * Checkpoints.save(model, Path.of("mlp.safetensors"));
 * Checkpoints.load(Path.of("mlp.safetensors"), model);       // strict, see Module.loadStateDict
 * }</pre>
 *
 * I/O failures are {@link IOException}s; a malformed file or a state dict that
 * does not fit is an {@link IllegalArgumentException} that says what and where,
 * worded by the runtime's validator as in every SDK.
 */
public final class Checkpoints {
    private Checkpoints() {}

    private static final Map<String, String> PT = Map.of("format", "pt");

    /** Runs a call whose WT_ERR_INVALID (a malformed file or state) becomes an IllegalArgumentException. */
    private static <T> T checked(IOCall<T> call) throws IOException {
        try {
            return call.run();
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.INVALID) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            throw e;
        }
    }

    @FunctionalInterface
    private interface IOCall<T> {
        T run() throws IOException;
    }

    private static <T> T unchecked(IOCall<T> call) {
        try {
            return checked(call);
        } catch (IOException e) {
            throw new IllegalStateException(e); // no file is touched here
        }
    }

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
        return unchecked(() -> {
            try (StateDict s = StateDict.of(state, metadata)) {
                return s.toBytes();
            }
        });
    }

    /** Writes m's state dict to path (see {@link #save(Map, Path, Map)}). */
    public static void save(Module m, Path path) throws IOException {
        save(m.stateDict(), path, PT);
    }

    public static void save(Map<String, Tensor> state, Path path) throws IOException {
        save(state, path, PT);
    }

    /**
     * Writes a state dict to path. The bytes go to a temporary file beside
     * path, which is synced and renamed over path, so a failed save never
     * leaves a broken file where a good one was; the temporaries of earlier
     * saves to path that were killed mid-write are removed first.
     */
    public static void save(Map<String, Tensor> state, Path path, Map<String, String> metadata) throws IOException {
        checked(() -> {
            try (StateDict s = StateDict.of(state, metadata)) {
                s.save(path.toAbsolutePath());
            }
            return null;
        });
    }

    // ---- reading ------------------------------------------------------------------------

    /** The tensors of a safetensors file by name, in file order, on the default device. The caller closes them. */
    public static SequencedMap<String, Tensor> load(Path path) throws IOException {
        return load(path, (String) null);
    }

    /** As {@link #load(Path)}, on device (null: the default device). */
    public static SequencedMap<String, Tensor> load(Path path, String device) throws IOException {
        return checked(() -> {
            try (StateDict s = StateDict.load(path, device)) {
                return s.tensors();
            }
        });
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
        return unchecked(() -> {
            try (StateDict s = StateDict.fromBytes(bytes, device, "")) {
                return s.tensors();
            }
        });
    }

    /** The __metadata__ of a safetensors file (empty when it has none); reads only its header. */
    public static Map<String, String> metadata(Path path) throws IOException {
        return checked(() -> StateDict.loadMetadata(path));
    }
}
