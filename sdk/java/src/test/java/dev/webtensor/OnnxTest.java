package dev.webtensor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Onnx: the runtime's importer through wt_call's onnx.* targets, on onnx/testdata/sdk_model.onnx
 * (y = relu(x @ W + b) * scale, top = argmax(y, 1)) against the outputs onnx's
 * reference evaluator gave (sdk_model.json; make_sdk_model.py writes both);
 * and sequences and optionals through runValues (onnx.run_values) on
 * sdk_values_model.onnx against sdk_values_model.json (make_sdk_values_model.py).
 */
class OnnxTest {
    static final Path TESTDATA = Path.of(System.getProperty("webtensor.repo", "../.."), "onnx", "testdata");
    static final Path MODEL = TESTDATA.resolve("sdk_model.onnx");

    /** The numbers of one array in sdk_model.json: the first "key": [...] (its "data" when the value is an object). */
    private static double[] numbers(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": (?:\\{[^}]*?\"data\": )?\\[([^\\]]*)\\]").matcher(json);
        assertTrue(m.find(), "sdk_model.json has " + key);
        String[] parts = m.group(1).split(",\\s*");
        double[] out = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Double.parseDouble(parts[i]);
        }
        return out;
    }

    private static float[] floats(double[] v) {
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) v[i];
        }
        return out;
    }

    private static long[] longs(double[] v) {
        long[] out = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (long) v[i];
        }
        return out;
    }

    private static void closeAll(Map<String, Tensor> m) {
        m.values().forEach(Tensor::close);
    }

    @Test
    void runsWithNamedInputsAndGivesTheReferenceOutputsByName() throws IOException, InterruptedException {
        String json = Files.readString(TESTDATA.resolve("sdk_model.json"));
        String outputsPart = json.substring(json.indexOf("\"outputs\""));
        String withB = json.substring(json.indexOf("\"outputs_with_b\""));
        long live = LeakTest.settledLiveCount();
        try (Onnx model = Onnx.load(MODEL);
             Tensor x = Tensor.of(floats(numbers(json, "x")), 2, 4);
             Tensor scale = Tensor.of(floats(numbers(json, "scale")), 1);
             Tensor b = Tensor.of(floats(numbers(json, "override_b")), 3)) {
            assertEquals(List.of("x", "scale"), model.inputNames());
            assertEquals(List.of("y", "top"), model.outputNames());
            assertTrue(model.info().contains("\"shape\":[\"batch\",4]"), model.info());
            Map<String, Tensor> in = new LinkedHashMap<>();
            in.put("scale", scale);
            in.put("x", x);
            SequencedMap<String, Tensor> out = model.run(in);
            assertEquals(List.of("y", "top"), List.copyOf(out.keySet()));
            assertArrayEquals(floats(numbers(outputsPart, "y")), out.get("y").toFloatArray(), 1e-6f);
            assertEquals(DType.I64, out.get("top").dtype());
            assertArrayEquals(longs(numbers(outputsPart, "top")), out.get("top").toLongArray());
            // An initializer the graph lists as an input, overridden by name.
            SequencedMap<String, Tensor> out2 = model.run(Map.of("x", x, "scale", scale, "b", b));
            assertArrayEquals(floats(numbers(withB, "y")), out2.get("y").toFloatArray(), 1e-5f);
            assertArrayEquals(longs(numbers(withB, "top")), out2.get("top").toLongArray());
            model.close();
            // The outputs outlive the model.
            assertArrayEquals(floats(numbers(outputsPart, "y")), out.get("y").toFloatArray(), 1e-6f);
            assertThrows(IllegalStateException.class, () -> model.run(in));
            closeAll(out);
            closeAll(out2);
        }
        assertEquals(live, Webtensor.liveTensors(), "every tensor freed");
    }

    @Test
    void loadsBytesAndReportsTheRuntimesErrors() throws IOException {
        byte[] raw = Files.readAllBytes(MODEL);
        try (Onnx model = Onnx.load(raw); Tensor x = Tensor.of(new float[8], 2, 4)) {
            assertEquals(List.of("y", "top"), model.outputNames());
            WebtensorException e = assertThrows(WebtensorException.class, () -> model.run(Map.of("x", x, "z", x)));
            assertEquals(WebtensorException.INVALID, e.status());
            assertTrue(e.getMessage().contains("the model has no input \"z\" (inputs: x, scale)"), e.getMessage());
            e = assertThrows(WebtensorException.class, () -> model.run(Map.of("x", x)));
            assertTrue(e.getMessage().contains("input \"scale\" is missing"), e.getMessage());
        }
        IOException io = assertThrows(IOException.class, () -> Onnx.load(TESTDATA.resolve("absent.onnx")));
        assertTrue(io.getMessage().contains("absent.onnx: no such file or directory"), io.getMessage());
        byte[] broken = new String(raw, StandardCharsets.ISO_8859_1).replace("Relu", "Relq").getBytes(StandardCharsets.ISO_8859_1);
        WebtensorException e = assertThrows(WebtensorException.class, () -> Onnx.load(broken));
        assertTrue(e.getMessage().contains("Relq"), e.getMessage());
        e = assertThrows(WebtensorException.class, () -> Onnx.load(new byte[] {-1, -1, -1}));
        assertTrue(e.getMessage().contains("parsing ModelProto"), e.getMessage());
    }

    static final Path VALUES_MODEL = TESTDATA.resolve("sdk_values_model.onnx");

    /** A value of sdk_values_model.json as runValues takes it: a Tensor, a List of them, null. */
    @SuppressWarnings("unchecked")
    private static Object value(Object ref, List<Tensor> made) {
        if (ref == null) {
            return null;
        }
        if (ref instanceof List<?> list) {
            return list.stream().map(r -> value(r, made)).toList();
        }
        Map<String, Object> m = (Map<String, Object>) ref;
        List<Object> data = (List<Object>) m.get("data");
        float[] vals = new float[data.size()];
        for (int i = 0; i < vals.length; i++) {
            vals[i] = ((Number) data.get(i)).floatValue();
        }
        long[] shape = ((List<Object>) m.get("shape")).stream().mapToLong(d -> (Long) d).toArray();
        Tensor t = Tensor.of(vals, shape);
        made.add(t);
        return t;
    }

    /** Compares an output with its reference value, closing the tensors it holds. */
    @SuppressWarnings("unchecked")
    private static void assertValue(Object want, Object got, String name) {
        if (want == null) {
            assertNull(got, name);
            return;
        }
        if (want instanceof List<?> list) {
            List<?> g = assertInstanceOf(List.class, got, name);
            assertEquals(list.size(), g.size(), name);
            for (int i = 0; i < list.size(); i++) {
                assertValue(list.get(i), g.get(i), name + "[" + i + "]");
            }
            return;
        }
        Map<String, Object> m = (Map<String, Object>) want;
        List<Object> data = (List<Object>) m.get("data");
        try (Tensor t = assertInstanceOf(Tensor.class, got, name)) {
            assertArrayEquals(((List<Object>) m.get("shape")).stream().mapToLong(d -> (Long) d).toArray(), t.shape(), name);
            if (data.get(0) instanceof Boolean b) {
                assertEquals(b, t.toBooleanArray()[0], name);
                return;
            }
            float[] vals = new float[data.size()];
            for (int i = 0; i < vals.length; i++) {
                vals[i] = ((Number) data.get(i)).floatValue();
            }
            assertArrayEquals(vals, t.toFloatArray(), name);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void runValuesCarriesSequencesAndOptionals() throws IOException, InterruptedException {
        List<Object> cases = (List<Object>) Json.parse(Files.readString(TESTDATA.resolve("sdk_values_model.json")), "sdk_values_model.json");
        long live = LeakTest.settledLiveCount();
        try (Onnx model = Onnx.load(VALUES_MODEL)) {
            assertEquals(List.of("tensor", "sequence", "optional_tensor", "optional_sequence"),
                    model.inputs().stream().map(Onnx.ValueInfo::kind).toList());
            assertEquals(new Onnx.ValueInfo("joined", "f32", List.of("total", 2L)), model.outputs().get(1));
            for (Object c : cases) {
                Map<String, Object> ref = (Map<String, Object>) c;
                List<Tensor> made = new ArrayList<>();
                Map<String, Object> in = new HashMap<>(); // Map.of refuses the nulls of empty optionals
                ((Map<String, Object>) ref.get("inputs")).forEach((name, v) -> in.put(name, value(v, made)));
                SequencedMap<String, Object> out = model.runValues(in);
                Map<String, Object> want = (Map<String, Object>) ref.get("outputs");
                assertEquals(List.copyOf(want.keySet()), List.copyOf(out.keySet()));
                want.forEach((name, w) -> assertValue(w, out.get(name), name));
                made.forEach(Tensor::close);
            }
            // The runtime names what does not fit; a tensor-only model runs this way too.
            try (Tensor x = Tensor.of(new float[6], 3, 2)) {
                Map<String, Object> in = new HashMap<>(Map.of("x", x, "parts", x, "maybe", x, "maybe_parts", List.of(x)));
                WebtensorException e = assertThrows(WebtensorException.class, () -> model.runValues(in));
                assertEquals(WebtensorException.INVALID, e.status());
                assertTrue(e.getMessage().contains("input \"parts\": the model declares a sequence of tensors, got a f32 tensor"), e.getMessage());
                in.put("parts", "nope");
                IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> model.runValues(in));
                assertTrue(bad.getMessage().contains("input parts must be a Tensor, a List<Tensor>"), bad.getMessage());
            }
        }
        try (Onnx model = Onnx.load(MODEL); Tensor x = Tensor.of(new float[8], 2, 4); Tensor scale = Tensor.of(new float[] {2}, 1)) {
            SequencedMap<String, Object> out = model.runValues(Map.of("x", x, "scale", scale));
            assertEquals(List.of("y", "top"), List.copyOf(out.keySet()));
            out.values().forEach(t -> ((Tensor) t).close());
        }
        assertEquals(live, Webtensor.liveTensors(), "every tensor freed");
    }
}
