package dev.webtensor;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

/**
 * An imported ONNX model (wt_call's onnx.* methods): the runtime's importer checks
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
public final class Onnx extends NativeObject {
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

    private final List<String> inputs, outputs;
    private final List<ValueInfo> inputInfo, outputInfo;

    private Onnx(long handle) {
        super(handle, "onnx", "onnx model");
        Map<String, Object> info = Json.object(info(), "onnx.info");
        this.inputInfo = ValueInfo.of(info.get("inputs"));
        this.outputInfo = ValueInfo.of(info.get("outputs"));
        this.inputs = inputInfo.stream().map(ValueInfo::name).toList();
        this.outputs = outputInfo.stream().map(ValueInfo::name).toList();
    }

    /** Imports the model at path onto the default device; external data files are read from its folder. */
    public static Onnx load(Path path) throws IOException {
        return load(path, null);
    }

    /** Imports the model at path with its weights on device (null: the default). A missing file is an IOException. */
    public static Onnx load(Path path, String device) throws IOException {
        return new Onnx(loadPath("onnx.load", path, args("device", device)));
    }

    /** Imports a serialized model onto the default device. */
    public static Onnx load(byte[] bytes) {
        return load(bytes, null);
    }

    /** Imports a serialized model with its weights on device (null: the default); it may have no external data. */
    public static Onnx load(byte[] bytes, String device) {
        return new Onnx(loadData("onnx.load", bytes, args("device", device), "onnx"));
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
     * JSON (onnx.info): a dim is a number, a symbolic name or null.
     */
    public String info() {
        return callJson("onnx.info", handle(), null, null);
    }

    /**
     * Runs the model on named inputs (an initializer the graph lists as an input
     * may be named too, to override it) and returns the outputs by name, in the
     * model's order, as new tensors the caller closes. Inputs on another device
     * are copied to the model's.
     */
    public SequencedMap<String, Tensor> run(Map<String, Tensor> namedInputs) {
        namedInputs.forEach((name, t) -> {
            if (name == null || t == null) {
                throw new IllegalArgumentException("onnx: null " + (name == null ? "input name" : "tensor for input " + name));
            }
        });
        List<?> handles = (List<?>) call("onnx.run", handle(), args("inputs", namedInputs), null);
        SequencedMap<String, Tensor> res = new LinkedHashMap<>();
        for (int k = 0; k < handles.size(); k++) {
            res.put(outputs.get(k), tensor(handles.get(k)));
        }
        return res;
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
        List<Tensor> flat = new ArrayList<>();
        Map<String, Object> layout = new LinkedHashMap<>(); // input name: a tensor's index in flat, a list of them, or null
        namedInputs.forEach((name, v) -> {
            if (name == null) {
                throw new IllegalArgumentException("onnx: null input name");
            }
            layout.put(name, switch (v) {
                case null -> null;
                case Tensor t -> index(flat, t, name);
                case List<?> seq -> seq.stream().map(t -> index(flat, t, name)).toList();
                default -> throw new IllegalArgumentException("onnx: input " + name
                        + " must be a Tensor, a List<Tensor> (a sequence) or null (an empty optional), got a " + v.getClass().getName());
            });
        });
        Map<?, ?> r = map(call("onnx.run_values", handle(), args("tensors", flat, "layout", layout), null));
        Tensor[] tensors = ((List<?>) r.get("tensors")).stream().map(NativeObject::tensor).toArray(Tensor[]::new);
        SequencedMap<String, Object> res = new LinkedHashMap<>();
        map(r.get("layout")).forEach((name, v) -> res.put((String) name, switch (v) {
            case null -> null;
            case Long k -> tensors[k.intValue()];
            case List<?> seq -> seq.stream().map(k -> tensors[asInt(k)]).toList();
            default -> throw new IllegalStateException("onnx.run_values: output " + name + " is " + v);
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

    @Override
    public String toString() {
        return "Onnx(inputs=" + inputs + ", outputs=" + outputs + ")";
    }
}
