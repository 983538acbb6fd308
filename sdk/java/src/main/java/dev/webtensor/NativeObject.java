package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A runtime object behind a handle (a tokenizer, a model, a pipeline) with
 * {@link Onnx}'s lifetime rules: close it, or a {@link Cleaner} frees it once
 * dropped; tensors it returned stay valid. The argument conversions the
 * domain classes share live here too.
 */
abstract class NativeObject implements AutoCloseable {
    private static final class Handle implements Runnable {
        final AtomicLong h;
        final MethodHandle free;

        Handle(long h, MethodHandle free) {
            this.h = new AtomicLong(h);
            this.free = free;
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.invoke(free, x); // nothing to report a failure to: the handle is gone either way
            }
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;
    private final String what;

    NativeObject(long handle, MethodHandle free, String what) {
        this.state = new Handle(handle, free);
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

    static MemorySegment cString(Arena arena, String s) {
        return s == null ? MemorySegment.NULL : arena.allocateFrom(s);
    }

    /** texts as the C array of UTF-8 strings the runtime takes. */
    static MemorySegment texts(Arena arena, List<String> texts) {
        MemorySegment arr = arena.allocate(ADDRESS, Math.max(texts.size(), 1));
        for (int i = 0; i < texts.size(); i++) {
            String t = texts.get(i);
            if (t == null) {
                throw new IllegalArgumentException("texts[" + i + "] is null");
            }
            arr.setAtIndex(ADDRESS, i, arena.allocateFrom(t));
        }
        return arr;
    }

    static MemorySegment longs(Arena arena, long[] values) {
        MemorySegment arr = arena.allocate(JAVA_LONG, Math.max(values.length, 1));
        MemorySegment.copy(values, 0, arr, JAVA_LONG, 0, values.length);
        return arr;
    }

    /** The handles of tensors as a C array of int64 (a closed tensor throws here). */
    static MemorySegment handles(Arena arena, List<Tensor> tensors) {
        long[] hs = new long[tensors.size()];
        for (int i = 0; i < hs.length; i++) {
            hs[i] = tensors.get(i).handle();
        }
        return longs(arena, hs);
    }

    /** A native copy of bytes for a call to read (never empty, so it has an address). */
    static MemorySegment nativeBytes(Arena arena, byte[] bytes) {
        return arena.allocate(Math.max(bytes.length, 1)).copyFrom(MemorySegment.ofArray(bytes));
    }

    /**
     * The handle fn (a wt_*_load_zip) loads from a zip archive's bytes, copied
     * into native memory for the call; what names the kind in the null check.
     */
    static long loadZip(MethodHandle fn, byte[] zip, String device, String what) {
        if (zip == null) {
            throw new IllegalArgumentException(what + ": the zip archive's bytes are null");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(fn, nativeBytes(arena, zip), (long) zip.length, cString(arena, device), out);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * The handle fn (a wt_*_load_bytes) loads from a JSON file's bytes, copied
     * into native memory for the call; what names the kind in the null check.
     */
    static long loadJson(MethodHandle fn, byte[] json, String what) {
        if (json == null) {
            throw new IllegalArgumentException(what + ": the bytes are null");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(fn, nativeBytes(arena, json), (long) json.length, out);
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * A wt_*_load(path, [device,] out) call (a tokenizer takes no device): a
     * missing or unreadable file is an IOException.
     */
    static long load(MethodHandle fn, Path path, String... device) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Object[] args = new Object[device.length + 2];
            args[0] = arena.allocateFrom(path.toString());
            for (int i = 0; i < device.length; i++) {
                args[i + 1] = cString(arena, device[i]);
            }
            args[args.length - 1] = out;
            try {
                Native.call(fn, args);
            } catch (WebtensorException e) {
                if (e.status() == WebtensorException.IO) {
                    throw new IOException(e.getMessage(), e);
                }
                throw e;
            }
            return out.get(JAVA_LONG, 0);
        }
    }

    /** Calls fn(args..., out) for a new tensor handle and wraps it. */
    static Tensor newTensor(MethodHandle fn, Arena arena, Object... args) {
        MemorySegment out = arena.allocate(JAVA_LONG);
        Object[] all = new Object[args.length + 1];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = out;
        Native.call(fn, all);
        return Tensor.wrap(out.get(JAVA_LONG, 0));
    }

    /** Calls fn(handle, out) for an int32 result. */
    static int int32(MethodHandle fn, long h) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            Native.call(fn, h, out);
            return out.get(JAVA_INT, 0);
        }
    }
}
