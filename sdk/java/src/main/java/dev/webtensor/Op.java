package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** Calls registry ops through wt_op: the one path every generated op method takes. */
final class Op {
    private Op() {}

    /** Outputs most ops fit in; more (split, chunk) take a second call with the size the library reports. */
    private static final int FIRST_CAP = 4;

    /** Runs op `name`; null inputs are absent optional inputs, null attrs are left out. */
    static Tensor[] call(String name, Tensor[] inputs, Attr... attrs) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = arena.allocate(JAVA_LONG, Math.max(inputs.length, 1));
            for (int i = 0; i < inputs.length; i++) {
                in.setAtIndex(JAVA_LONG, i, inputs[i] == null ? 0 : inputs[i].handle());
            }
            int n = 0;
            for (Attr a : attrs) {
                n += a == null ? 0 : 1;
            }
            MemorySegment cattrs = n == 0 ? MemorySegment.NULL : arena.allocate(Abi.ATTR, n);
            int k = 0;
            for (Attr a : attrs) {
                if (a != null) {
                    encode(arena, cattrs.asSlice(k++ * Abi.ATTR.byteSize(), Abi.ATTR.byteSize()), a);
                }
            }
            MemorySegment cname = arena.allocateFrom(name);
            final int nAttrs = n;
            return outputs(arena, FIRST_CAP,
                    (out, cap, nOut) -> Native.op(cname, in, inputs.length, cattrs, nAttrs, out, cap, nOut));
        } finally {
            // The inputs' Cleaners must not free a handle while the library reads it.
            Reference.reachabilityFence(inputs);
        }
    }

    /** A native call that writes up to cap output handles into out and their count into nOut. */
    @FunctionalInterface
    interface OutputsCall {
        int call(MemorySegment out, int cap, MemorySegment nOut);
    }

    /**
     * Runs c with room for cap outputs, again with the room the library asks for when
     * that was too little (WT_ERR_BUFFER_TOO_SMALL), and wraps the handles it wrote:
     * the output protocol of wt_op and wt_graph_run alike.
     */
    static Tensor[] outputs(Arena arena, int cap, OutputsCall c) {
        MemorySegment nOut = arena.allocate(JAVA_INT);
        while (true) {
            MemorySegment out = arena.allocate(JAVA_LONG, cap);
            int st = c.call(out, cap, nOut);
            int got = nOut.get(JAVA_INT, 0);
            if (st == Abi.ERR_BUFFER_TOO_SMALL && got > cap) {
                cap = got;
                continue;
            }
            Native.check(st);
            Tensor[] res = new Tensor[got];
            for (int i = 0; i < got; i++) {
                res[i] = Tensor.wrap(out.getAtIndex(JAVA_LONG, i));
            }
            return res;
        }
    }

    /** The first (usually only) output. */
    static Tensor call1(String name, Tensor[] inputs, Attr... attrs) {
        Tensor[] out = call(name, inputs, attrs);
        for (int i = 1; i < out.length; i++) {
            out[i].close();
        }
        return out[0];
    }

    /** attrs as a wt_attr array in arena (NULL for none); null entries are left out. */
    static MemorySegment encodeAll(Arena arena, java.util.List<Attr> attrs) {
        java.util.List<Attr> given = attrs.stream().filter(java.util.Objects::nonNull).toList();
        if (given.isEmpty()) {
            return MemorySegment.NULL;
        }
        MemorySegment out = arena.allocate(Abi.ATTR, given.size());
        for (int k = 0; k < given.size(); k++) {
            encode(arena, out.asSlice(k * Abi.ATTR.byteSize(), Abi.ATTR.byteSize()), given.get(k));
        }
        return out;
    }

    private static void encode(Arena arena, MemorySegment s, Attr a) {
        s.set(java.lang.foreign.ValueLayout.ADDRESS, 0, arena.allocateFrom(a.name()));
        s.set(JAVA_INT, 8, a.kind().code);
        switch (a.kind()) {
            case INT -> s.set(JAVA_LONG, 16, (Long) a.value());
            case FLOAT -> s.set(JAVA_DOUBLE, 24, (Double) a.value());
            case BOOL -> s.set(JAVA_LONG, 16, (Boolean) a.value() ? 1 : 0);
            case DTYPE -> s.set(JAVA_LONG, 16, ((DType) a.value()).code());
            case STRING -> s.set(java.lang.foreign.ValueLayout.ADDRESS, 32, arena.allocateFrom((String) a.value()));
            case INTS -> {
                long[] v = (long[]) a.value();
                s.set(java.lang.foreign.ValueLayout.ADDRESS, 40, v.length == 0 ? MemorySegment.NULL
                        : arena.allocateFrom(JAVA_LONG, v));
                s.set(JAVA_LONG, 56, v.length);
            }
            case FLOATS -> {
                double[] v = (double[]) a.value();
                s.set(java.lang.foreign.ValueLayout.ADDRESS, 48, v.length == 0 ? MemorySegment.NULL
                        : arena.allocateFrom(JAVA_DOUBLE, v));
                s.set(JAVA_LONG, 56, v.length);
            }
        }
    }
}
