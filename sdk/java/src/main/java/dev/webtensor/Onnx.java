package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An imported ONNX model (the ABI's wt_onnx): the runtime's importer checks
 * every node at load (an unsupported operator is an error naming the node) and
 * runs the model on its device; this class only turns a map of named tensors
 * into the names and handles the runtime takes. {@link #runValues} carries
 * ONNX sequences (a {@code List<Tensor>}) and optionals (null when empty) too.
 *
 * <pre>{@code
 * try (Onnx model = Onnx.load(Path.of("model.onnx"));
 *      Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 1, 4)) {
 *     SequencedMap<String, Tensor> out = model.run(Map.of("x", x));
 *     float[] y = out.get("y").toFloatArray();
 * }
 * }</pre>
 *
 * Close models (tensors a run returned stay valid); a {@link Cleaner} frees
 * dropped ones. A model may be run from several threads at once.
 */
public final class Onnx implements AutoCloseable {
    private static final class Handle implements Runnable {
        final AtomicLong h;

        Handle(long h) {
            this.h = new AtomicLong(h);
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.invoke(Abi.ONNX_FREE, x); // nothing to report a failure to: the handle is gone either way
            }
        }
    }

    /**
     * A declared input or output, Python's {@code wt.onnx.ValueInfo}: kind is
     * "tensor", "sequence", "optional_tensor", "optional_sequence" or "strings" (ONNX STRING
     * tensors, which only Go runs), and dtype
     * and shape describe the tensors inside; dtype is "f32", "i64", ... (""
     * when undeclared); shape is null when the rank is undeclared, else one
     * entry per dim: a Long, a String (a symbolic dim_param) or null
     * (undeclared).
     */
    public record ValueInfo(String name, String dtype, List<Object> shape, String kind) {
        /** A tensor's declaration. */
        public ValueInfo(String name, String dtype, List<Object> shape) {
            this(name, dtype, shape, "tensor");
        }

        @SuppressWarnings("unchecked")
        static List<ValueInfo> of(Object declared) {
            List<ValueInfo> out = new ArrayList<>();
            for (Object o : (List<Object>) declared) {
                Map<String, Object> v = (Map<String, Object>) o;
                out.add(new ValueInfo((String) v.get("name"), (String) v.get("dtype"), (List<Object>) v.get("shape"),
                        (String) v.get("kind")));
            }
            return List.copyOf(out);
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;
    private final List<String> inputs, outputs;
    private final List<ValueInfo> inputInfo, outputInfo;

    private Onnx(long handle) {
        this.state = new Handle(handle);
        this.cleanable = Tensor.CLEANER.register(this, state);
        this.inputs = names(handle, Abi.ONNX_INPUT_COUNT, Abi.ONNX_INPUT_NAME);
        this.outputs = names(handle, Abi.ONNX_OUTPUT_COUNT, Abi.ONNX_OUTPUT_NAME);
        Map<String, Object> info = Json.object(info(), "wt_onnx_info_json");
        this.inputInfo = ValueInfo.of(info.get("inputs"));
        this.outputInfo = ValueInfo.of(info.get("outputs"));
    }

    /** Imports the model at path onto the default device; external data files are read from its folder. */
    public static Onnx load(Path path) throws IOException {
        return load(path, null);
    }

    /** Imports the model at path with its weights on device (null: the default). A missing file is an IOException. */
    public static Onnx load(Path path, String device) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            try {
                Native.call(Abi.ONNX_LOAD, arena.allocateFrom(path.toString()), cString(arena, device), out);
            } catch (WebtensorException e) {
                if (e.status() == WebtensorException.IO) {
                    throw new IOException(e.getMessage(), e);
                }
                throw e;
            }
            return new Onnx(out.get(JAVA_LONG, 0));
        }
    }

    /** Imports a serialized model onto the default device. */
    public static Onnx load(byte[] bytes) {
        return load(bytes, null);
    }

    /** Imports a serialized model with its weights on device (null: the default); it may have no external data. */
    public static Onnx load(byte[] bytes, String device) {
        if (bytes == null) {
            throw new IllegalArgumentException("onnx: the model's bytes are null");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = NativeObject.nativeBytes(arena, bytes);
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.ONNX_LOAD_BYTES, b, (long) bytes.length, cString(arena, device), out);
            return new Onnx(out.get(JAVA_LONG, 0));
        }
    }

    /** The inputs a caller supplies (initializers excluded), in the model's order. */
    public List<String> inputNames() {
        return inputs;
    }

    public List<String> outputNames() {
        return outputs;
    }

    /** The declared inputs a caller supplies (initializers excluded), in the model's order. */
    public List<ValueInfo> inputs() {
        return inputInfo;
    }

    /** The declared outputs, in the model's order. */
    public List<ValueInfo> outputs() {
        return outputInfo;
    }

    /**
     * The opset, the device and the declared inputs and outputs as the runtime's
     * JSON (wt_onnx_info_json): a dim is a number, a symbolic name or null.
     */
    public String info() {
        long h = handle();
        return Native.readString((buf, cap, needed) -> (int) Abi.ONNX_INFO_JSON.invokeExact(h, buf, cap, needed));
    }

    /**
     * Runs the model on named inputs (an initializer the graph lists as an input
     * may be named too, to override it) and returns the outputs by name, in the
     * model's order, as new tensors the caller closes. Inputs on another device
     * are copied to the model's.
     */
    public SequencedMap<String, Tensor> run(Map<String, Tensor> namedInputs) {
        long h = handle();
        int n = namedInputs.size();
        List<Tensor> held = new ArrayList<>(n);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment names = arena.allocate(ADDRESS, Math.max(n, 1));
            MemorySegment handles = arena.allocate(JAVA_LONG, Math.max(n, 1));
            int i = 0;
            for (Map.Entry<String, Tensor> e : namedInputs.entrySet()) {
                if (e.getKey() == null || e.getValue() == null) {
                    throw new IllegalArgumentException("onnx: null " + (e.getKey() == null ? "input name" : "tensor for input " + e.getKey()));
                }
                names.setAtIndex(ADDRESS, i, arena.allocateFrom(e.getKey()));
                handles.setAtIndex(JAVA_LONG, i, e.getValue().handle());
                held.add(e.getValue());
                i++;
            }
            int cap = Math.max(outputs.size(), 1);
            MemorySegment out = arena.allocate(JAVA_LONG, cap);
            MemorySegment nOut = arena.allocate(JAVA_INT);
            Native.call(Abi.ONNX_RUN, h, names, handles, n, out, cap, nOut);
            SequencedMap<String, Tensor> res = new LinkedHashMap<>();
            for (int k = 0; k < nOut.get(JAVA_INT, 0); k++) {
                res.put(outputs.get(k), Tensor.wrap(out.getAtIndex(JAVA_LONG, k)));
            }
            return res;
        } finally {
            Reference.reachabilityFence(held);
        }
    }

    /**
     * Runs a model whose inputs or outputs may be ONNX sequences or optionals
     * (any model: {@link #run} is the shorter way for tensors only). Each input
     * is a {@link Tensor}, a {@code List<Tensor>} for a sequence, or null for an
     * empty optional (Map.of refuses nulls: use a HashMap); an optional holding
     * a value is given as that value. The outputs come by name, in the model's
     * order, the same way: a Tensor, an unmodifiable {@code List<Tensor>} for a
     * sequence, null for an empty optional; all new tensors the caller closes.
     * A value that does not fit its input's kind is a WebtensorException naming
     * the input, the kind declared and the value given.
     */
    public SequencedMap<String, Object> runValues(Map<String, ?> namedInputs) {
        long h = handle();
        List<Tensor> flat = new ArrayList<>();
        StringBuilder layout = new StringBuilder("{");
        for (Map.Entry<String, ?> e : namedInputs.entrySet()) {
            if (e.getKey() == null) {
                throw new IllegalArgumentException("onnx: null input name");
            }
            layout.append(layout.length() > 1 ? "," : "").append(Json.quote(e.getKey())).append(':');
            switch (e.getValue()) {
                case null -> layout.append("null");
                case Tensor t -> layout.append(index(flat, t, e.getKey()));
                case List<?> seq -> {
                    layout.append('[');
                    for (int k = 0; k < seq.size(); k++) {
                        layout.append(k > 0 ? "," : "").append(index(flat, seq.get(k), e.getKey()));
                    }
                    layout.append(']');
                }
                default -> throw new IllegalArgumentException("onnx: input " + e.getKey()
                        + " must be a Tensor, a List<Tensor> (a sequence) or null (an empty optional), got a "
                        + e.getValue().getClass().getName());
            }
        }
        layout.append('}');
        long values;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment handles = arena.allocate(JAVA_LONG, Math.max(flat.size(), 1));
            for (int i = 0; i < flat.size(); i++) {
                handles.setAtIndex(JAVA_LONG, i, flat.get(i).handle());
            }
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.ONNX_RUN_VALUES, h, handles, flat.size(), arena.allocateFrom(layout.toString()), out);
            values = out.get(JAVA_LONG, 0);
        } finally {
            Reference.reachabilityFence(flat);
        }
        Map<String, Object> outLayout;
        Tensor[] tensors;
        try (Arena arena = Arena.ofConfined()) {
            outLayout = Json.object(Native.readString((buf, cap, needed) ->
                    (int) Abi.ONNX_VALUES_LAYOUT_JSON.invokeExact(values, buf, cap, needed)), "wt_onnx_values_layout_json");
            tensors = Op.outputs(arena, 16, (o, cap, n) -> (int) Native.invoke(Abi.ONNX_VALUES_TENSORS, values, o, cap, n));
        } finally {
            Native.call(Abi.ONNX_VALUES_FREE, values);
        }
        SequencedMap<String, Object> res = new LinkedHashMap<>();
        outLayout.forEach((name, v) -> res.put(name, switch (v) {
            case null -> null;
            case Long k -> tensors[k.intValue()];
            case List<?> seq -> seq.stream().map(k -> tensors[((Long) k).intValue()]).toList();
            default -> throw new IllegalStateException("wt_onnx_values_layout_json: output " + name + " is " + v);
        }));
        return res;
    }

    /** t's index in flat, where it is appended; input names the value in errors. */
    private static int index(List<Tensor> flat, Object t, String input) {
        if (!(t instanceof Tensor tensor)) {
            throw new IllegalArgumentException("onnx: input " + input + ": a sequence holds Tensors, got "
                    + (t == null ? "null" : "a " + t.getClass().getName()));
        }
        flat.add(tensor);
        return flat.size() - 1;
    }

    /** Frees the model; tensors it returned stay valid. Closing twice is harmless. */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "Onnx(inputs=" + inputs + ", outputs=" + outputs + ")";
    }

    private long handle() {
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException("onnx model used after close()");
        }
        return h;
    }

    private static MemorySegment cString(Arena arena, String s) {
        return s == null ? MemorySegment.NULL : arena.allocateFrom(s);
    }

    private static List<String> names(long h, MethodHandle count, MethodHandle name) {
        int n;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            Native.call(count, h, out);
            n = out.get(JAVA_INT, 0);
        }
        List<String> res = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int idx = i;
            res.add(Native.readString((buf, cap, needed) -> (int) name.invokeExact(h, idx, buf, cap, needed)));
        }
        return Collections.unmodifiableList(res);
    }
}
