package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A runtime object behind a handle (a tokenizer, a model, a pipeline) with
 * {@link Onnx}'s lifetime rules: close it, or a {@link Cleaner} frees it once
 * dropped; tensors it returned stay valid. The argument conversions the
 * domain classes share live here too, and {@link #call}, wt_call: the domain
 * methods by name, which the domain classes (multimodal, diffusion, ONNX,
 * datasets and loaders, the auto-agents) use for every method (and their
 * free) instead of a downcall of their own.
 */
abstract class NativeObject implements AutoCloseable {
    private static final class Handle implements Runnable {
        final AtomicLong h;
        final String kind;

        Handle(long h, String kind) {
            this.h = new AtomicLong(h);
            this.kind = kind;
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x == 0) {
                return;
            }
            try {
                call(kind + ".free", x, null, null);
            } catch (RuntimeException e) {
                // Nothing to report a failure to: the handle is gone either way.
            }
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;
    private final String what;

    /** An object of a wt_call kind ("tokenizer"), freed by its target kind.free. */
    NativeObject(long handle, String kind, String what) {
        this.state = new Handle(handle, kind);
        this.cleanable = Tensor.CLEANER.register(this, state);
        this.what = what;
    }

    /** Frees the object; tensors it returned stay valid. Closing twice is harmless. */
    @Override
    public void close() {
        cleanable.clean();
    }

    final long handle() {
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException(what + " used after close()");
        }
        return h;
    }

    /** A native copy of bytes for a call to read (never empty, so it has an address). */
    static MemorySegment nativeBytes(Arena arena, byte[] bytes) {
        return arena.allocate(Math.max(bytes.length, 1)).copyFrom(MemorySegment.ofArray(bytes));
    }

    /** A load's failure: reading the file (WT_ERR_IO) is an IOException, the rest stays e. */
    static IOException ioOf(WebtensorException e) {
        if (e.status() == WebtensorException.IO) {
            return new IOException(e.getMessage(), e);
        }
        throw e;
    }

    // ---- wt_call: the domain methods by name (docs/calls.md) ----------------------------

    /**
     * Runs target ("kind.method") on self (0 for a load or a plain function)
     * with args by name (null or a null value: the runtime's default; tensors
     * and runtime objects as their handles, see {@link Json#write}) and data
     * (the bytes a loader reads, or null), and returns the result parsed as
     * {@link Json} reads it: tensors in it are new handles the caller owns.
     */
    static Object call(String target, long self, Map<String, ?> args, byte[] data) {
        return Json.parse(callJson(target, self, args, data), target);
    }

    /** call for a method without arguments. */
    static Object call(String target, long self) {
        return call(target, self, null, null);
    }

    /** call's result as the JSON text wt_call_result_json gives. */
    static String callJson(String target, long self, Map<String, ?> args, byte[] data) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment json = args == null ? MemorySegment.NULL : arena.allocateFrom(Json.write(args));
            MemorySegment bytes = data == null ? MemorySegment.NULL : nativeBytes(arena, data);
            Native.call(Abi.CALL, arena.allocateFrom(target), self, json, bytes, data == null ? 0L : (long) data.length, out);
            long result = out.get(JAVA_LONG, 0);
            try {
                // The result is kept until freed, so asking its size first costs nothing.
                return Native.readString((buf, cap, needed) -> (int) Abi.CALL_RESULT_JSON.invokeExact(result, buf, cap, needed));
            } finally {
                Native.invoke(Abi.CALL_RESULT_FREE, result);
            }
        } finally {
            Reference.reachabilityFence(args); // its tensors and objects stay alive until the call returns
        }
    }

    /**
     * A load (target "kind.load") from a path: a missing or unreadable file
     * is an IOException. args holds the other arguments (a device), or is null.
     */
    static long loadPath(String target, Path path, Map<String, ?> args) throws IOException {
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("path", path.toString());
        if (args != null) {
            all.putAll(args);
        }
        try {
            return asLong(call(target, 0, all, null));
        } catch (WebtensorException e) {
            throw ioOf(e);
        }
    }

    /** A load (target "kind.load") from bytes (a file's, a zip archive's); what names the kind in the null check. */
    static long loadData(String target, byte[] data, Map<String, ?> args, String what) {
        if (data == null) {
            throw new IllegalArgumentException(what + ": the bytes are null");
        }
        return asLong(call(target, 0, args, data));
    }

    /** A map of args by name, in order: name, value, name, value (values may be null, unlike Map.of). */
    static Map<String, Object> args(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static long asLong(Object v) {
        return ((Number) v).longValue();
    }

    static int asInt(Object v) {
        return Math.toIntExact(asLong(v));
    }

    /** A result's tensor handle as a Tensor, null for JSON null. */
    static Tensor tensor(Object v) {
        return v == null ? null : Tensor.wrap(asLong(v));
    }

    /** A result's list of tensor handles (a record, a batch) as Tensors. */
    static List<Tensor> tensors(Object list) {
        return ((List<?>) list).stream().map(NativeObject::tensor).toList();
    }

    /** A result's list of integers. */
    static long[] longs(Object list) {
        return ((List<?>) list).stream().mapToLong(NativeObject::asLong).toArray();
    }

    /** A result's object: its fields by name. */
    static Map<?, ?> map(Object v) {
        return (Map<?, ?>) v;
    }
}
