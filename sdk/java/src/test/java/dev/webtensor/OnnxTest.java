package dev.webtensor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Onnx: the runtime's importer through wt_onnx_*, on onnx/testdata/sdk_model.onnx
 * (y = relu(x @ W + b) * scale, top = argmax(y, 1)) against the outputs onnx's
 * reference evaluator gave (sdk_model.json; make_sdk_model.py writes both).
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
    void runsWithNamedInputsAndGivesTheReferenceOutputsByName() throws IOException {
        String json = Files.readString(TESTDATA.resolve("sdk_model.json"));
        String outputsPart = json.substring(json.indexOf("\"outputs\""));
        String withB = json.substring(json.indexOf("\"outputs_with_b\""));
        long live = Webtensor.liveTensors();
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
}
