package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Zero-copy exchange of CPU memory through the ABI's DLPack functions: a
 * MemorySegment becomes a tensor (wt_from_dlpack_versioned) and a tensor's
 * memory becomes a MemorySegment (wt_to_dlpack_versioned). The offsets are
 * those of DLManagedTensorVersioned in dlpack.h on a 64-bit target.
 */
final class DLPack {
    private DLPack() {}

    // DLManagedTensorVersioned: version{u32,u32} @0, manager_ctx @8, deleter @16, flags @24, dl_tensor @32.
    private static final long DELETER = 16, FLAGS = 24, T = 32;
    // DLTensor: data @0, device{i32,i32} @8, ndim @16, dtype{u8 code,u8 bits,u16 lanes} @20,
    // shape @24, strides @32, byte_offset @40; 48 bytes.
    private static final long MANAGED_SIZE = T + 48;
    private static final long FLAG_READ_ONLY = 1;
    private static final int KDL_CPU = 1;

    /**
     * Segments the library holds through an import, by the address of the struct
     * it was handed: the struct's own arena and the user's segment, which an
     * automatic arena would otherwise free while the tensor lives.
     */
    private static final Map<Long, Object[]> IMPORTS = new ConcurrentHashMap<>();

    /** The deleter the library calls (from one of its own threads) when an import is gone. */
    private static final MemorySegment DELETER_STUB;
    /** Calls a producer's deleter: void (*)(void *). */
    private static final MethodHandle CALL_DELETER = Native.LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    static {
        try {
            MethodHandle h = MethodHandles.lookup().findStatic(DLPack.class, "released",
                    MethodType.methodType(void.class, MemorySegment.class));
            DELETER_STUB = Native.LINKER.upcallStub(h, FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The upcall: must not throw (an exception in an upcall ends the JVM). */
    private static void released(MemorySegment self) {
        try {
            IMPORTS.remove(self.address());
        } catch (Throwable ignored) {
            // nothing to do: dropping the entry is all this does
        }
    }

    /** Number of imported segments the library still holds (for tests). */
    static int liveImports() {
        return IMPORTS.size();
    }

    private static int[] codeBits(DType d) {
        return switch (d) {
            case F32 -> new int[] {2, 32};
            case F64 -> new int[] {2, 64};
            case F16 -> new int[] {2, 16};
            case BF16 -> new int[] {4, 16};
            case I64 -> new int[] {0, 64};
            case I32 -> new int[] {0, 32};
            case I16 -> new int[] {0, 16};
            case I8 -> new int[] {0, 8};
            case U32 -> new int[] {1, 32};
            case U8 -> new int[] {1, 8};
            case U16 -> new int[] {1, 16};
            case U64 -> new int[] {1, 64};
            case BOOL -> new int[] {6, 8};
            case C64 -> new int[] {5, 64}; // kDLComplex: both parts in the bits
            case C128 -> new int[] {5, 128};
        };
    }

    /** A new handle over seg's memory with the given layout; the library checks it fits. */
    static long importSegment(MemorySegment seg, DType dtype, long[] shape, long[] strides) {
        if (strides != null && strides.length != shape.length) {
            throw new IllegalArgumentException("fromSegment: " + strides.length + " strides for " + shape.length + " dims");
        }
        long span = extent(shape, strides) * dtype.byteSize();
        if (span > seg.byteSize()) {
            throw new IllegalArgumentException("fromSegment: the layout spans " + span + " bytes, the segment has "
                    + seg.byteSize());
        }
        // The struct must outlive this call (the library keeps it until the deleter runs),
        // so it lives in an automatic arena that IMPORTS keeps reachable until then.
        Arena arena = Arena.ofAuto();
        MemorySegment m = arena.allocate(MANAGED_SIZE + 16L * Math.max(shape.length, 1), 16);
        MemorySegment cshape = m.asSlice(MANAGED_SIZE, 8L * shape.length);
        MemorySegment cstrides = m.asSlice(MANAGED_SIZE + 8L * shape.length, 8L * shape.length);
        for (int i = 0; i < shape.length; i++) {
            cshape.setAtIndex(JAVA_LONG, i, shape[i]);
            if (strides != null) {
                cstrides.setAtIndex(JAVA_LONG, i, strides[i]);
            }
        }
        int[] cb = codeBits(dtype);
        m.set(JAVA_INT, 0, 1); // DLPack 1.1
        m.set(JAVA_INT, 4, 1);
        m.set(ADDRESS, DELETER, DELETER_STUB);
        m.set(JAVA_LONG, FLAGS, seg.isReadOnly() ? FLAG_READ_ONLY : 0);
        m.set(ADDRESS, T, seg);
        m.set(JAVA_INT, T + 8, KDL_CPU);
        m.set(JAVA_INT, T + 12, 0);
        m.set(JAVA_INT, T + 16, shape.length);
        m.set(JAVA_BYTE, T + 20, (byte) cb[0]);
        m.set(JAVA_BYTE, T + 21, (byte) cb[1]);
        m.set(JAVA_SHORT, T + 22, (short) 1);
        m.set(ADDRESS, T + 24, shape.length == 0 ? MemorySegment.NULL : cshape);
        m.set(ADDRESS, T + 32, strides == null || shape.length == 0 ? MemorySegment.NULL : cstrides);
        m.set(JAVA_LONG, T + 40, 0L);
        IMPORTS.put(m.address(), new Object[] {arena, m, seg});
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment out = tmp.allocate(JAVA_LONG);
            int st = (int) Abi.FROM_DLPACK_VERSIONED.invokeExact(m, out);
            if (st != Abi.OK) {
                IMPORTS.remove(m.address()); // on failure the caller (we) still own the struct
                throw Native.error(st);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Elements from the first to one past the last addressed (0 for an empty tensor). */
    private static long extent(long[] shape, long[] strides) {
        long far = 0, stride = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] == 0) {
                return 0;
            }
            long s = strides == null ? stride : strides[i];
            if (s < 0) {
                throw new IllegalArgumentException("fromSegment: negative stride " + s);
            }
            far += (shape[i] - 1) * s;
            stride *= shape[i];
        }
        return far + 1;
    }

    /** The memory of dense tensor h as a segment whose lifetime is arena's; closing arena runs the deleter. */
    static MemorySegment exportSegment(long h, Arena arena) {
        MemorySegment m;
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment out = tmp.allocate(ADDRESS);
            Native.check((int) Abi.TO_DLPACK_VERSIONED.invokeExact(h, out));
            m = out.get(ADDRESS, 0).reinterpret(MANAGED_SIZE);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        MemorySegment deleter = m.get(ADDRESS, DELETER);
        Runnable release = () -> {
            try {
                CALL_DELETER.invokeExact(deleter, m);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        };
        try {
            int nd = m.get(JAVA_INT, T + 16);
            int bits = Byte.toUnsignedInt(m.get(JAVA_BYTE, T + 21));
            MemorySegment shape = m.get(ADDRESS, T + 24).reinterpret(8L * nd);
            long numel = 1;
            for (int i = 0; i < nd; i++) {
                numel *= shape.getAtIndex(JAVA_LONG, i);
            }
            long bytes = numel * (bits / 8);
            long offset = m.get(JAVA_LONG, T + 40);
            boolean readOnly = (m.get(JAVA_LONG, FLAGS) & FLAG_READ_ONLY) != 0;
            MemorySegment data = MemorySegment.ofAddress(m.get(ADDRESS, T).address() + offset)
                    .reinterpret(bytes, arena, s -> release.run());
            return readOnly ? data.asReadOnly() : data;
        } catch (RuntimeException | Error e) {
            release.run();
            throw e;
        }
    }
}
