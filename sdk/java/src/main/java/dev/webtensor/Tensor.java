package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntFunction;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An n-dimensional array on a device, backed by one libwebtensor handle.
 *
 * <pre>{@code
 * try (var x = Tensor.randn(3, 4); var y = x.matmul(x.transpose(0, 1))) {
 *     float[] v = y.toFloatArray();
 * }
 * }</pre>
 *
 * Close tensors (try-with-resources); a {@link Cleaner} frees those that are
 * merely dropped, but only when the GC gets round to it, and native memory is
 * invisible to the GC's sizing. Using a closed tensor throws
 * {@link IllegalStateException}. Every op of the manifest is a method here
 * (for ops whose first input is a tensor) and a static function of
 * {@link Ops}; both are generated from the manifest. Tensors may be shared between threads.
 */
public final class Tensor extends TensorOps implements AutoCloseable {
    /** Shared with {@link Graph}: one cleaner thread for every native handle of the SDK. */
    static final Cleaner CLEANER = Cleaner.create();
    private static final java.nio.ByteOrder LE = java.nio.ByteOrder.LITTLE_ENDIAN;
    // Little-endian (the ABI's byte order) and unaligned: they write into byte[]-backed segments.
    private static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfDouble LE_DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    /**
     * The handle, apart from the Tensor so the Cleaner's action does not keep the
     * Tensor reachable. Swapping it ({@link #assign}) is how optimizers update
     * parameters without in-place ops in the ABI.
     */
    private static final class Handle implements Runnable {
        final AtomicLong h;

        Handle(long h) {
            this.h = new AtomicLong(h);
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.free(x); // a failure here has no one to report to: the handle is gone either way
            }
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;

    private Tensor(long handle) {
        this.state = new Handle(handle);
        this.cleanable = CLEANER.register(this, state);
        Scope.made(this);
    }

    /** Takes ownership of a new handle from the library. */
    static Tensor wrap(long handle) {
        if (handle == 0) {
            throw new IllegalStateException("webtensor returned the null handle");
        }
        return new Tensor(handle);
    }

    // ---- lifetime ---------------------------------------------------------------------

    /** The wt_tensor handle; throws {@link IllegalStateException} once closed. */
    public long handle() {
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException("tensor used after close()");
        }
        return h;
    }

    /** Frees the native tensor now. Closing twice is harmless. */
    @Override
    public void close() {
        cleanable.clean();
    }

    public boolean isClosed() {
        return state.h.get() == 0;
    }

    /**
     * Makes this tensor hold {@code value}'s data and closes {@code value} (its
     * handle moves here); the old data is released. A tensor that required
     * gradients still does (as a fresh leaf, even when {@code value} was a
     * graph node) and keeps its accumulated gradient, as a torch parameter
     * keeps {@code .grad} across an optimizer step. Optimizers and
     * {@code Module.loadStateDict} use it to update parameters in place as
     * seen from Java: the object, and every reference to it, stays the same.
     * Call it outside {@link Webtensor#noGrad} scopes (restoring the gradient
     * backpropagates into the leaf).
     */
    public void assign(Tensor value) {
        if (value == this) {
            return;
        }
        value.handle(); // a closed value fails here, before anything changes
        boolean trainable = requiresGrad();
        Tensor grad = trainable ? grad() : null;
        try {
            Tensor leaf = value;
            if (value.requiresGrad()) { // a graph node or a leaf: this must become a fresh leaf
                leaf = value.detach();
                value.close();
            }
            long nh = leaf.state.h.getAndSet(0);
            leaf.cleanable.clean();
            long old = state.h.getAndSet(nh);
            if (old == 0) {
                state.h.set(0);
                Native.free(nh);
                throw new IllegalStateException("tensor used after close()");
            }
            Native.check(Native.free(old));
            if (trainable) {
                requiresGrad(true);
                restoreGrad(grad);
            }
        } finally {
            if (grad != null) {
                grad.close();
            }
        }
    }

    /** Makes grad (moved to this tensor's device) the accumulated gradient of this fresh leaf. */
    private void restoreGrad(Tensor grad) {
        if (grad == null) {
            return;
        }
        String dev = device();
        if (grad.device().equals(dev)) {
            backward(grad); // the ABI has no gradient setter: backpropagating from the leaf stores it
            return;
        }
        try (Tensor moved = grad.to(dev)) {
            backward(moved);
        }
    }

    /**
     * Another handle to this same tensor (same data, same autograd node), to
     * close independently: what a module returns when its output is its input
     * (dropout in eval mode, an empty {@code Sequential}).
     */
    public Tensor newHandle() {
        try {
            long h = handle();
            Native.call(Abi.TENSOR_RETAIN, h);
            return wrap(h);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    // ---- construction ----------------------------------------------------------------------

    /** A tensor holding a copy of {@code data}; the shape defaults to [data.length]. */
    public static Tensor of(float[] data, long... shape) {
        return copyOf(MemorySegment.ofArray(data), DType.F32, shapeOr(shape, data.length));
    }

    public static Tensor of(double[] data, long... shape) {
        return copyOf(MemorySegment.ofArray(data), DType.F64, shapeOr(shape, data.length));
    }

    public static Tensor of(long[] data, long... shape) {
        return copyOf(MemorySegment.ofArray(data), DType.I64, shapeOr(shape, data.length));
    }

    public static Tensor of(int[] data, long... shape) {
        return copyOf(MemorySegment.ofArray(data), DType.I32, shapeOr(shape, data.length));
    }

    public static Tensor of(short[] data, long... shape) {
        return copyOf(MemorySegment.ofArray(data), DType.I16, shapeOr(shape, data.length));
    }

    /** An i8 tensor; for u8, f16 or bf16 bytes use {@link #fromBytes}. */
    public static Tensor of(byte[] data, long... shape) {
        return copyOf(MemorySegment.ofArray(data), DType.I8, shapeOr(shape, data.length));
    }

    public static Tensor of(boolean[] data, long... shape) {
        byte[] b = new byte[data.length];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (data[i] ? 1 : 0);
        }
        return copyOf(MemorySegment.ofArray(b), DType.BOOL, shapeOr(shape, data.length));
    }

    /**
     * A c64 tensor from its elements' parts interleaved, real first ({@code re0,
     * im0, re1, im1, ...}: the layout the library stores, PyTorch's
     * view_as_real); the shape defaults to [parts.length / 2].
     */
    public static Tensor ofComplex(float[] parts, long... shape) {
        return copyOf(MemorySegment.ofArray(parts), DType.C64, shapeOr(shape, pairs(parts.length)));
    }

    /** A c128 tensor from interleaved parts, as {@link #ofComplex(float[], long...)}. */
    public static Tensor ofComplex(double[] parts, long... shape) {
        return copyOf(MemorySegment.ofArray(parts), DType.C128, shapeOr(shape, pairs(parts.length)));
    }

    private static int pairs(int n) {
        if (n % 2 != 0) {
            throw new IllegalArgumentException("ofComplex: the parts are real and imaginary interleaved, "
                    + n + " values are not pairs");
        }
        return n / 2;
    }

    /** A tensor from raw row-major little-endian bytes of any dtype. */
    public static Tensor fromBytes(byte[] raw, DType dtype, long... shape) {
        return copyOf(MemorySegment.ofArray(raw), dtype, shape);
    }

    /** As {@link #fromBytes(byte[], DType, long...)}, made on {@code device} (null: the default device). */
    public static Tensor fromBytes(byte[] raw, DType dtype, String device, long... shape) {
        return copyOf(MemorySegment.ofArray(raw), dtype, device, shape);
    }

    /** A 0-d f32 tensor. */
    public static Tensor scalar(double value) {
        return scalar(value, DType.F32);
    }

    /**
     * The u64 bits of value as the library casts it: truncated toward zero,
     * saturating at 0 and 2^64 - 1, NaN giving 0 (Java's (long) saturates
     * at 2^63 - 1 instead).
     */
    static long unsignedBits(double value) {
        if (!(value > 0)) {
            return 0;
        }
        if (value >= 0x1p64) {
            return -1L;
        }
        return value < 0x1p63 ? (long) value : (long) (value - 0x1p63) ^ Long.MIN_VALUE;
    }

    /** A 0-d tensor of dtype (integer dtypes truncate, bool is value != 0, complex is value + 0i). */
    public static Tensor scalar(double value, DType dtype) {
        MemorySegment s = MemorySegment.ofArray(new byte[dtype.byteSize()]);
        switch (dtype) {
            case F32 -> s.set(LE_FLOAT, 0, (float) value);
            case F64 -> s.set(LE_DOUBLE, 0, value);
            case F16 -> s.set(LE_SHORT, 0, Float.floatToFloat16((float) value));
            case BF16 -> s.set(LE_SHORT, 0, (short) (Float.floatToIntBits((float) value) >>> 16));
            case I64 -> s.set(LE_LONG, 0, (long) value);
            case U64 -> s.set(LE_LONG, 0, unsignedBits(value));
            case I32, U32 -> s.set(LE_INT, 0, (int) (long) value);
            case I16, U16 -> s.set(LE_SHORT, 0, (short) (long) value);
            case I8, U8 -> s.set(JAVA_BYTE, 0, (byte) (long) value);
            case BOOL -> s.set(JAVA_BYTE, 0, (byte) (value != 0 ? 1 : 0));
            case C64 -> s.set(LE_FLOAT, 0, (float) value); // the imaginary part stays 0
            case C128 -> s.set(LE_DOUBLE, 0, value);
        }
        return copyOf(s, dtype);
    }

    /**
     * A tensor over {@code segment}'s memory: zero copy for native memory (the
     * segment must stay alive while the tensor or any view of it lives; a segment
     * from an automatic arena is kept alive for you), a copy for heap segments.
     * Writes on either side are seen by the other. Read-only segments give
     * read-only tensors.
     */
    public static Tensor fromSegment(MemorySegment segment, DType dtype, long... shape) {
        return fromSegment(segment, dtype, shape, null);
    }

    /** As {@link #fromSegment(MemorySegment, DType, long...)} with strides in elements (null: row-major). */
    public static Tensor fromSegment(MemorySegment segment, DType dtype, long[] shape, long[] strides) {
        if (!segment.isNative()) {
            if (strides != null) {
                throw new IllegalArgumentException("fromSegment: strides need native memory");
            }
            return copyOf(segment, dtype, shape);
        }
        return wrap(DLPack.importSegment(segment, dtype, shape, strides));
    }

    /**
     * A tensor over another library's DLPack export, Python's
     * {@code wt.from_dlpack}: managed is a {@code DLManagedTensorVersioned*}
     * (DLPack 1.x) that the tensor takes over without a copy (CPU and CUDA
     * memory; the library calls its deleter once the tensor and its views are
     * gone). On failure the caller still owns it. Java has no capsule
     * protocol, so this takes the pointer a native library hands out.
     */
    public static Tensor fromDlpack(MemorySegment managed) {
        if (managed == null || managed.equals(MemorySegment.NULL)) {
            throw new IllegalArgumentException("fromDlpack: the DLManagedTensorVersioned pointer is NULL");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.FROM_DLPACK_VERSIONED, managed, out);
            return wrap(out.get(JAVA_LONG, 0));
        }
    }

    /** A copy of {@code data} (any segment) as a new tensor on the default device. */
    static Tensor copyOf(MemorySegment data, DType dtype, long... shape) {
        return copyOf(data, dtype, null, shape);
    }

    /** A copy of {@code data} as a new tensor on {@code device} (null or "": the default device). */
    static Tensor copyOf(MemorySegment data, DType dtype, String device, long... shape) {
        try (Arena arena = Arena.ofConfined()) {
            // Heap segments cannot go to a plain downcall; one copy into native memory.
            MemorySegment src = data.isNative() ? data : arena.allocate(Math.max(data.byteSize(), 1)).copyFrom(data);
            MemorySegment cshape = arena.allocateFrom(JAVA_LONG, shape.length == 0 ? new long[1] : shape);
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment cdev = device == null ? MemorySegment.NULL : arena.allocateFrom(device);
            int st = (int) Abi.TENSOR_FROM_DATA.invokeExact(src, data.byteSize(), dtype.code(), cshape, shape.length,
                    cdev, out);
            Native.check(st);
            return wrap(out.get(JAVA_LONG, 0));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static long[] shapeOr(long[] shape, int n) {
        return shape.length == 0 ? new long[] {n} : shape;
    }

    /** Zeros (f32). */
    public static Tensor zeros(long... shape) {
        return Ops.zeros(shape);
    }

    public static Tensor ones(long... shape) {
        return Ops.ones(shape);
    }

    /** Standard normal samples (f32) from the global Philox generator ({@link Webtensor#manualSeed}). */
    public static Tensor randn(long... shape) {
        return Ops.randn(shape);
    }

    /** Uniform samples in [0, 1) (f32). */
    public static Tensor rand(long... shape) {
        return Ops.rand(shape);
    }

    public static Tensor full(double value, long... shape) {
        return Ops.full(shape, value);
    }

    /** 0, 1, ..., stop-1 (i64, as in PyTorch). */
    public static Tensor arange(long stop) {
        return arange(0, stop, 1);
    }

    /**
     * start, start+step, ... below stop (i64), exact over the whole long range:
     * the bounds go to the library as integers, not through double.
     */
    public static Tensor arange(long start, long stop, long step) {
        return Op.call1("arange", new Tensor[] {},
                Attr.ofInt("start", start), Attr.ofInt("stop", stop), Attr.ofInt("step", step));
    }

    /** start, start+step, ... below stop (f32). */
    public static Tensor arange(double start, double stop, double step) {
        return Ops.arange(stop, start, step, DType.F32, null);
    }

    // ---- metadata --------------------------------------------------------------------

    public int ndim() {
        try {
            return Native.handleInt(Abi.TENSOR_NDIM, handle());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    public long[] shape() {
        return extents(Abi.TENSOR_SHAPE);
    }

    /** Strides in elements. */
    public long[] strides() {
        return extents(Abi.TENSOR_STRIDES);
    }

    private long[] extents(java.lang.invoke.MethodHandle mh) {
        try (Arena arena = Arena.ofConfined()) {
            long h = handle();
            int nd = Native.handleInt(Abi.TENSOR_NDIM, h);
            MemorySegment buf = arena.allocate(JAVA_LONG, Math.max(nd, 1));
            Native.check((int) mh.invokeExact(h, buf, nd));
            return nd == 0 ? new long[0] : buf.toArray(JAVA_LONG);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    public long numel() {
        try {
            return Native.handleLong(Abi.TENSOR_NUMEL, handle());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    public DType dtype() {
        try {
            return DType.fromCode(Native.handleInt(Abi.TENSOR_DTYPE, handle()));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** "cpu", "webgpu:0", ... */
    public String device() {
        try {
            long h = handle();
            return Native.readString((buf, cap, needed) -> (int) Abi.TENSOR_DEVICE.invokeExact(h, buf, cap, needed));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    public boolean isContiguous() {
        try {
            return Native.handleInt(Abi.TENSOR_IS_CONTIGUOUS, handle()) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    // ---- conversions --------------------------------------------------------------------

    /** A dense copy, or a new handle to the same tensor when already dense. */
    @Override
    public Tensor contiguous() {
        return newFrom(Abi.TENSOR_CONTIGUOUS);
    }

    /** A tensor sharing this one's data, cut from the autograd graph. */
    public Tensor detach() {
        return newFrom(Abi.TENSOR_DETACH);
    }

    private Tensor newFrom(java.lang.invoke.MethodHandle mh) {
        try {
            return wrap(Native.handleLong(mh, handle()));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** A copy on another device ("cpu", "webgpu:0"). */
    public Tensor to(String device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.TENSOR_TO_DEVICE, handle(), arena.allocateFrom(device), out);
            return wrap(out.get(JAVA_LONG, 0));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** A copy with another dtype (the cast op). */
    public Tensor to(DType dtype) {
        return cast(dtype);
    }

    /** Copies the elements, row-major, into {@code dst} (at least numel * byteSize bytes, native or heap). */
    public void copyTo(MemorySegment dst) {
        long n = numel() * dtype().byteSize();
        if (dst.byteSize() < n) {
            throw new IllegalArgumentException("copyTo: " + dst.byteSize() + " bytes, the tensor has " + n);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = dst.isNative() ? dst : arena.allocate(Math.max(n, 1));
            Native.check((int) Abi.TENSOR_TO_HOST.invokeExact(handle(), buf, n));
            if (buf != dst) {
                MemorySegment.copy(buf, 0, dst, 0, n);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The raw row-major little-endian bytes. */
    public byte[] toBytes() {
        byte[] out = new byte[Math.toIntExact(numel() * dtype().byteSize())];
        copyTo(MemorySegment.ofArray(out));
        return out;
    }

    /** A copy in native memory of {@code arena}. */
    public MemorySegment toSegment(Arena arena) {
        MemorySegment s = arena.allocate(Math.max(numel() * dtype().byteSize(), 1), 16);
        copyTo(s);
        return s.asSlice(0, numel() * dtype().byteSize());
    }

    /**
     * The tensor's own memory as a segment, without a copy (DLPack export): writes
     * through it are seen by the tensor. The memory stays valid until
     * {@code arena} closes, even if the tensor is closed first. A non-contiguous
     * tensor is made dense first, and a tensor on another device is copied to
     * the host, so then the segment is a copy.
     */
    public MemorySegment asSegment(Arena arena) {
        try {
            if (isContiguous()) {
                // This handle itself: wt_tensor_contiguous's new handle would drop a read-only import's flag.
                return DLPack.exportSegment(handle(), arena);
            }
            try (Tensor dense = contiguous()) {
                return DLPack.exportSegment(dense.handle(), arena);
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }


    /**
     * The elements as floats (other dtypes are cast to f32 first; a complex
     * tensor is refused, as the cast would drop its imaginary parts: use
     * {@link #toComplexFloatArray()}, or real() and imag()).
     */
    public float[] toFloatArray() {
        return copyAs(DType.F32, 1, float[]::new, MemorySegment::ofArray);
    }

    /** The elements as doubles (other dtypes are cast to f64 first; complex: {@link #toComplexDoubleArray()}). */
    public double[] toDoubleArray() {
        return copyAs(DType.F64, 1, double[]::new, MemorySegment::ofArray);
    }

    /**
     * A c64 tensor's elements as interleaved parts, real first: 2 * numel
     * floats (other dtypes are cast to c64 first, real ones with 0 imaginary parts).
     */
    public float[] toComplexFloatArray() {
        return copyAs(DType.C64, 2, float[]::new, MemorySegment::ofArray);
    }

    /** As {@link #toComplexFloatArray()} in c128: 2 * numel doubles. */
    public double[] toComplexDoubleArray() {
        return copyAs(DType.C128, 2, double[]::new, MemorySegment::ofArray);
    }

    /** The elements as longs (other dtypes are cast to i64 first; a u64 gives its bits, see {@link DType#U64}). */
    public long[] toLongArray() {
        return copyAs(DType.I64, 1, long[]::new, MemorySegment::ofArray);
    }

    /** The elements as ints (other dtypes are cast to i32 first). */
    public int[] toIntArray() {
        return copyAs(DType.I32, 1, int[]::new, MemorySegment::ofArray);
    }

    public boolean[] toBooleanArray() {
        try (Tensor t = as(DType.BOOL)) {
            byte[] b = t.toBytes();
            boolean[] out = new boolean[b.length];
            for (int i = 0; i < b.length; i++) {
                out[i] = b[i] != 0;
            }
            return out;
        }
    }

    /**
     * The elements cast to d ({@link #as}) in a new Java array of perElement
     * values each (2 for the complex dtypes' interleaved parts); newArray and
     * segment are the array type's constructor and MemorySegment.ofArray.
     */
    private <A> A copyAs(DType d, int perElement, IntFunction<A> newArray, Function<A, MemorySegment> segment) {
        try (Tensor t = as(d)) {
            A out = newArray.apply(Math.toIntExact(perElement * t.numel()));
            t.copyTo(segment.apply(out));
            return out;
        }
    }

    /**
     * This tensor (a new handle) when it has dtype d, else a cast copy, made on
     * the CPU for tensors elsewhere: they are read back anyway, and a GPU may
     * not hold d (WGSL has no f64).
     */
    private Tensor as(DType d) {
        if (dtype() == d) {
            return detach();
        }
        if (device().equals("cpu")) {
            return cast(d);
        }
        try (Tensor host = to("cpu")) {
            return host.cast(d);
        }
    }

    /** The value of a one-element real tensor as a double (a complex one: {@link #complexItem()}). */
    public double item() {
        if (numel() != 1) {
            throw new IllegalArgumentException("item(): the tensor has " + numel() + " elements, not one");
        }
        DType d = dtype();
        if (d.isComplex()) {
            throw new IllegalArgumentException("item(): the tensor is " + d + ", whose value has two parts; "
                    + "read them with complexItem()");
        }
        return toDoubleArray()[0];
    }

    /** The value of a one-element tensor as {re, im} (a real tensor's im is 0). */
    public double[] complexItem() {
        if (numel() != 1) {
            throw new IllegalArgumentException("complexItem(): the tensor has " + numel() + " elements, not one");
        }
        return toComplexDoubleArray();
    }

    // ---- autograd ----------------------------------------------------------------------

    public boolean requiresGrad() {
        try {
            return Native.handleInt(Abi.TENSOR_REQUIRES_GRAD, handle()) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Marks a floating-point leaf as requiring gradients; returns this. */
    public Tensor requiresGrad(boolean on) {
        try {
            Native.call(Abi.TENSOR_SET_REQUIRES_GRAD, handle(), on ? 1 : 0);
            return this;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Backpropagates from this one-element tensor; gradients accumulate into the leaves. */
    public void backward() {
        try {
            Native.call(Abi.BACKWARD, handle(), 0L);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Backpropagates with {@code grad} as this tensor's gradient. */
    public void backward(Tensor grad) {
        try {
            Native.call(Abi.BACKWARD, handle(), grad.handle());
        } finally {
            Reference.reachabilityFence(this);
            Reference.reachabilityFence(grad);
        }
    }

    /** The accumulated gradient (a new tensor the caller closes), or null when none. */
    public Tensor grad() {
        try {
            long g = Native.handleLong(Abi.TENSOR_GRAD, handle());
            return g == 0 ? null : wrap(g);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Drops the accumulated gradient. */
    public void zeroGrad() {
        try {
            Native.call(Abi.TENSOR_ZERO_GRAD, handle());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    // ---- arithmetic with Java numbers --------------------------------------------------

    /** this + v, with v as a 0-d tensor of this tensor's dtype. */
    public Tensor add(double v) {
        return withScalar("add", v);
    }

    public Tensor sub(double v) {
        return withScalar("sub", v);
    }

    public Tensor mul(double v) {
        return withScalar("mul", v);
    }

    public Tensor div(double v) {
        return withScalar("div", v);
    }

    public Tensor pow(double v) {
        return withScalar("pow", v);
    }

    private Tensor withScalar(String op, double v) {
        DType d = dtype();
        // A complex tensor takes any double, as v + 0i.
        try (Tensor s = scalar(v, d.isFloating() || d.isComplex() || v == Math.rint(v) ? d : DType.F32)) {
            String dev = device();
            if (!dev.equals("cpu")) {
                try (Tensor moved = s.to(dev)) {
                    return Op.call1(op, new Tensor[] {this, moved});
                }
            }
            return Op.call1(op, new Tensor[] {this, s});
        }
    }

    @Override
    public String toString() {
        if (isClosed()) {
            return "Tensor(<closed>)";
        }
        String head = "Tensor(" + dtype() + Arrays.toString(shape()) + ", " + device();
        if (numel() > 16) {
            return head + ")";
        }
        DType d = dtype();
        String body = d.isComplex() ? complexBody() : d.isFloating() ? Arrays.toString(toDoubleArray())
                : Arrays.toString(toLongArray());
        return head + ", " + body + ")";
    }

    /** The elements as [1.0+2.0i, ...], as Python writes complex numbers (with i for j). */
    private String complexBody() {
        double[] p = toComplexDoubleArray();
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < p.length; i += 2) {
            // The sign bit, not < 0: -0.0 writes its own "-" too.
            String sign = Math.copySign(1.0, p[i + 1]) < 0 ? "" : "+";
            b.append(i == 0 ? "" : ", ").append(p[i]).append(sign).append(p[i + 1]).append('i');
        }
        return b.append(']').toString();
    }
}
