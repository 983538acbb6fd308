package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SequencedMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Named tensors with string metadata, held by the runtime (the ABI's wt_state):
 * what a checkpoint holds. The runtime writes safetensors files (atomically,
 * removing the temporaries of saves that were killed), reads them through the
 * validator every SDK uses, and loads values into a module's tensors, so
 * {@code nn.Checkpoints} and {@code Module.loadStateDict} are thin over it.
 *
 * <pre>{@code
 * try (StateDict s = StateDict.of(model.stateDict(), Map.of("format", "pt"))) {
 *     s.save(Path.of("model.safetensors"));
 * }
 * }</pre>
 *
 * A state holds the tensors themselves: closing a tensor after {@link #put} does
 * not empty its entry. Close states; a {@link Cleaner} frees dropped ones.
 */
public final class StateDict implements AutoCloseable {
    private static final class Handle implements Runnable {
        final AtomicLong h;

        Handle(long h) {
            this.h = new AtomicLong(h);
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.invoke(Abi.STATE_FREE, x); // nothing to report a failure to: the handle is gone either way
            }
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;

    StateDict(long handle) {
        this.state = new Handle(handle);
        this.cleanable = Tensor.CLEANER.register(this, state);
    }

    /** An empty state dict. */
    public StateDict() {
        this(newHandle(Abi.STATE_NEW));
    }

    /** A state dict of these tensors (in the map's order) and metadata. */
    public static StateDict of(Map<String, Tensor> tensors, Map<String, String> metadata) {
        StateDict s = new StateDict();
        try {
            tensors.forEach(s::put);
            metadata.forEach(s::putMetadata);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** The wt_state handle; throws {@link IllegalStateException} once closed. */
    long handle() {
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException("state dict used after close()");
        }
        return h;
    }

    /** Appends t under name (a name given twice is an error). The state keeps the tensor, and t's handle for {@link #loadInto}. */
    public void put(String name, Tensor t) {
        if (name == null || t == null) {
            throw new IllegalArgumentException("state dict: null " + (name == null ? "name" : "tensor for " + name));
        }
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.STATE_PUT, handle(), arena.allocateFrom(name), t.handle());
        } finally {
            Reference.reachabilityFence(t);
        }
    }

    /** Sets a key of the file's __metadata__. */
    public void putMetadata(String key, String value) {
        if (key == null || value == null) {
            throw new IllegalArgumentException("state dict: metadata must map strings to strings, got " + key + "=" + value);
        }
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.STATE_SET_METADATA, handle(), arena.allocateFrom(key), arena.allocateFrom(value));
        }
    }

    /** The entries in order, as new tensors the caller closes. */
    public SequencedMap<String, Tensor> tensors() {
        long h = handle();
        int n = count(Abi.STATE_COUNT, h);
        SequencedMap<String, Tensor> out = new LinkedHashMap<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment t = arena.allocate(JAVA_LONG);
            for (int i = 0; i < n; i++) {
                int idx = i;
                String name = Native.readString((buf, cap, needed) -> (int) Abi.STATE_NAME.invokeExact(h, idx, buf, cap, needed));
                Native.call(Abi.STATE_GET, h, i, t);
                out.put(name, Tensor.wrap(t.get(JAVA_LONG, 0)));
            }
        } catch (RuntimeException e) {
            out.values().forEach(Tensor::close);
            throw e;
        }
        return out;
    }

    /** The metadata, by key. */
    public Map<String, String> metadata() {
        long h = handle();
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0, n = count(Abi.STATE_METADATA_COUNT, h); i < n; i++) {
            int idx = i;
            out.put(Native.readString((buf, cap, needed) -> (int) Abi.STATE_METADATA_KEY.invokeExact(h, idx, buf, cap, needed)),
                    Native.readString((buf, cap, needed) -> (int) Abi.STATE_METADATA_VALUE.invokeExact(h, idx, buf, cap, needed)));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * Writes the state to path as safetensors (waiting for the devices): a
     * temporary beside path, synced and renamed over it, so a failed save never
     * leaves a broken file where a good one was.
     */
    public void save(Path path) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            io(() -> Native.call(Abi.STATE_SAVE, handle(), arena.allocateFrom(path.toString())));
        }
    }

    /** The safetensors file's bytes. */
    public byte[] toBytes() {
        long h = handle();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment needed = arena.allocate(JAVA_LONG);
            int st = (int) Native.invoke(Abi.STATE_TO_BYTES, h, MemorySegment.NULL, 0L, needed);
            if (st != Abi.ERR_BUFFER_TOO_SMALL) {
                Native.check(st);
            }
            long n = needed.get(JAVA_LONG, 0);
            MemorySegment buf = arena.allocate(Math.max(n, 1));
            Native.call(Abi.STATE_TO_BYTES, h, buf, n, needed);
            return buf.asSlice(0, n).toArray(JAVA_BYTE);
        }
    }

    /** Reads a safetensors file (checked by the one validator) onto device (null: the default). */
    public static StateDict load(Path path, String device) throws IOException {
        return new StateDict(loadHandle(path, device, 0));
    }

    /** A file's __metadata__, reading only its header. */
    public static Map<String, String> loadMetadata(Path path) throws IOException {
        try (StateDict s = new StateDict(loadHandle(path, null, 1))) {
            return s.metadata();
        }
    }

    /** A state dict from a file's bytes onto device (null: the default); name labels them in errors. */
    public static StateDict fromBytes(byte[] bytes, String device, String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = NativeObject.nativeBytes(arena, bytes);
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.STATE_FROM_BYTES, b, (long) bytes.length, device == null ? MemorySegment.NULL
                    : arena.allocateFrom(device), arena.allocateFrom(name == null ? "" : name), out);
            return new StateDict(out.get(JAVA_LONG, 0));
        }
    }

    /**
     * Loads this state's values into module's tensors (the ones {@link #put} into
     * it), moved to their devices, all or none: every name, shape and dtype must
     * match (with strict; without, names on one side only are skipped), else one
     * {@link WebtensorException} lists every problem, naming the module as
     * moduleName says. The tensor objects stay the same: the runtime points their
     * handles at the values, and a parameter keeps requiring and its gradient.
     */
    public void loadInto(StateDict module, boolean strict, String moduleName) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.STATE_ASSIGN, module.handle(), handle(), strict ? 1 : 0, arena.allocateFrom(moduleName));
        } finally {
            Reference.reachabilityFence(module);
        }
    }

    /** Frees the state (its tensors stay wherever else they are held). Closing twice is harmless. */
    @Override
    public void close() {
        cleanable.clean();
    }

    private static long loadHandle(Path path, String device, int metadataOnly) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            io(() -> Native.call(Abi.STATE_LOAD, arena.allocateFrom(path.toString()),
                    device == null ? MemorySegment.NULL : arena.allocateFrom(device), metadataOnly, out));
            return out.get(JAVA_LONG, 0);
        }
    }

    /** Runs a call whose file system errors (WT_ERR_IO) become IOExceptions. */
    private static void io(Runnable call) throws IOException {
        try {
            call.run();
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.IO) {
                throw new IOException(e.getMessage(), e);
            }
            throw e;
        }
    }

    static long newHandle(java.lang.invoke.MethodHandle mh) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(mh, out);
            return out.get(JAVA_LONG, 0);
        }
    }

    private static int count(java.lang.invoke.MethodHandle mh, long h) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            Native.call(mh, h, out);
            return out.get(JAVA_INT, 0);
        }
    }
}
