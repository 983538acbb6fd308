package dev.webtensor;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.opentest4j.AssertionFailedError;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every op's reference vectors (conformance/vectors, made with NumPy and
 * PyTorch) through the Java SDK, as backends/backendtest/vectors.go runs them
 * in Go: inputs as stored (strided ones as real strided views, imported
 * without a copy), attributes converted by the manifest's kinds, outputs
 * within the op's tolerance (index.json's dtype tolerance times the op's
 * tol_scale), and for differentiable cases the gradients of sum(out * upstream)
 * within grad_tol_scale times that. ConformanceRunner runs the same cases as
 * a graded result file for `make conformance`.
 */
class VectorsTest {
    /**
     * Tolerances come from conformance/vectors/index.json (per dtype, the op's
     * tol_scale, grad_tol_scale), the registry's own rules, as every runner reads them.
     */
    static final VectorIndex INDEX = VectorIndex.get();

    /** Tensors compared, and how many the files hold: every stored output and gradient must be checked. */
    static final AtomicInteger OUTPUTS = new AtomicInteger(), GRADS = new AtomicInteger();
    static int storedOutputs, storedGrads;

    @AfterAll
    static void everyStoredTensorWasCompared() {
        assertEquals(storedOutputs, OUTPUTS.get(), "outputs compared");
        assertEquals(storedGrads, GRADS.get(), "gradients compared");
    }

    @Test
    void compareCatchesDifferences() {
        byte[] raw;
        try (Tensor w = Tensor.of(new float[] {1, 2})) {
            raw = w.toBytes();
        }
        Safetensors.Entry want = new Safetensors.Entry(DType.F32, new long[] {2}, raw);
        try (Tensor near = Tensor.of(new float[] {1, 2.0001f}); Tensor far = Tensor.of(new float[] {1, 2.01f});
             Tensor wide = Tensor.of(new double[] {1, 2})) {
            compare("near", near, want, 1);
            assertThrows(AssertionFailedError.class, () -> compare("far", far, want, 1));
            assertThrows(AssertionFailedError.class, () -> compare("dtype", wide, want, 1));
        }
        assertTrue(close(Double.NaN, Double.NaN, 0, 0) && !close(1, Double.NaN, 1, 1));
        assertTrue(!close(Double.POSITIVE_INFINITY, 1e308, 1e308, 1));
    }

    static Path vectorsDir() {
        return Path.of(System.getProperty("webtensor.repo", "../.."), "conformance", "vectors");
    }

    /** op name -> attribute name -> kind, from the loaded library's manifest (internal ops included). */
    static Map<String, Map<String, String>> attrKinds() throws IOException {
        Map<String, Map<String, String>> out = new HashMap<>();
        for (JsonNode op : Safetensors.JSON.readTree(Webtensor.manifestJson()).get("ops")) {
            Map<String, String> kinds = new HashMap<>();
            op.get("attrs").forEach(a -> kinds.put(a.get("name").asText(), a.get("kind").asText()));
            out.put(op.get("name").asText(), kinds);
        }
        return out;
    }

    @TestFactory
    Stream<DynamicNode> vectors() throws IOException {
        Map<String, Map<String, String>> kinds = attrKinds();
        List<Path> files;
        try (Stream<Path> s = Files.list(vectorsDir())) {
            files = s.filter(p -> p.toString().endsWith(".safetensors")).sorted().toList();
        }
        assertTrue(files.size() > 100, "expected the reference vectors in " + vectorsDir());
        List<DynamicNode> ops = new ArrayList<>();
        for (Path f : files) {
            Safetensors st = new Safetensors(f);
            storedOutputs += (int) st.tensors.keySet().stream().filter(k -> k.contains("/out")).count();
            storedGrads += (int) st.tensors.keySet().stream().filter(k -> k.contains("/grad")).count();
            String op = st.metadata.get("op");
            assertEquals("true", st.metadata.get("complete"), f + " has no reference outputs");
            assertTrue(kinds.containsKey(op), "vector file for " + op + ", which the library does not have");
            assertEquals(f.getFileName().toString(), INDEX.ops.containsKey(op) ? INDEX.ops.get(op).file() : null,
                    op + " in index.json");
            List<DynamicTest> cases = new ArrayList<>();
            for (JsonNode c : Safetensors.JSON.readTree(st.metadata.get("cases"))) {
                cases.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> runCase(op, c, st, kinds.get(op))));
            }
            ops.add(DynamicContainer.dynamicContainer(op, cases));
        }
        return ops.stream();
    }

    static void runCase(String op, JsonNode c, Safetensors st, Map<String, String> kinds) {
        String name = c.get("name").asText();
        boolean grad = c.get("grad").asBoolean();
        List<Tensor> owned = new ArrayList<>();
        long before = Webtensor.liveTensors();
        try (Arena arena = Arena.ofConfined()) {
            JsonNode specs = c.get("inputs");
            Tensor[] ins = new Tensor[specs.size()];
            for (int i = 0; i < ins.length; i++) {
                JsonNode spec = specs.get(i);
                if (spec.path("absent").asBoolean()) {
                    continue;
                }
                Safetensors.Entry e = st.tensors.get(name + "/in" + i);
                assertNotNull(e, "input " + i + " missing from the vector file");
                ins[i] = own(owned, spec.path("strided").asBoolean() ? strided(e, arena)
                        : Tensor.fromBytes(e.data(), e.dtype(), e.shape()));
                if (grad && spec.path("grad").asBoolean()) {
                    ins[i].requiresGrad(true);
                }
            }
            List<Attr> attrs = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = c.get("attrs").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> a = it.next();
                if (a.getValue().isNull()) {
                    continue;
                }
                String kind = kinds.get(a.getKey());
                assertNotNull(kind, op + " has no attribute " + a.getKey() + " in the manifest");
                attrs.add(attr(a.getKey(), kind, a.getValue()));
            }
            Tensor[] outs = Webtensor.op(op, complexInputs(ins, specs, owned), attrs.toArray(new Attr[0]));
            Arrays.stream(outs).forEach(t -> owned.add(t));
            filedOutputs(outs, c.path("outputs"), owned);
            int want = 0;
            while (st.tensors.containsKey(name + "/out" + want)) {
                want++;
            }
            assertEquals(want, outs.length, "number of outputs");
            double scale = INDEX.tolScale(op);
            Tensor loss = null;
            for (int j = 0; j < outs.length; j++) {
                Safetensors.Entry w = st.tensors.get(name + "/out" + j);
                compare("output " + j, outs[j], w, scale);
                OUTPUTS.incrementAndGet();
                Safetensors.Entry up = st.tensors.get(name + "/up" + j);
                if (up != null && outs[j].requiresGrad()) {
                    Tensor u = own(owned, Tensor.fromBytes(up.data(), up.dtype(), up.shape()));
                    Tensor term = own(owned, own(owned, outs[j].mul(u)).sum());
                    loss = loss == null ? term : own(owned, loss.add(term));
                }
            }
            if (grad) {
                checkGrads(loss, ins, specs, st, name, scale, owned);
            }
        } finally {
            owned.forEach(Tensor::close);
        }
        // <=, not ==: a Cleaner may free other tests' dropped tensors meanwhile.
        long after = Webtensor.liveTensors();
        assertTrue(after <= before, (after - before) + " handles leaked by the case");
    }

    /**
     * What the op gets: a complex input is filed as its real pairs (index.json's "complex"),
     * so it is view_as_complex of them; the gradients arrive at the pairs.
     */
    static Tensor[] complexInputs(Tensor[] ins, JsonNode specs, List<Tensor> owned) {
        Tensor[] call = ins.clone();
        for (int i = 0; i < ins.length; i++) {
            if (ins[i] != null && specs.get(i).path("complex").asBoolean()) {
                call[i] = own(owned, Webtensor.op("view_as_complex", new Tensor[] {ins[i]})[0]);
            }
        }
        return call;
    }

    /** Replaces each complex output by its real pairs, as the files hold it. */
    static void filedOutputs(Tensor[] outs, JsonNode specs, List<Tensor> owned) {
        for (int j = 0; j < outs.length; j++) {
            if (specs.path(j).path("complex").asBoolean()) {
                outs[j] = own(owned, Webtensor.op("view_as_real", new Tensor[] {outs[j]})[0]);
            }
        }
    }

    static void checkGrads(Tensor loss, Tensor[] ins, JsonNode specs, Safetensors st, String name, double scale,
                           List<Tensor> owned) {
        assertNotNull(loss, "differentiable case but no output requires grad");
        loss.backward();
        for (int i = 0; i < ins.length; i++) {
            if (!specs.get(i).path("grad").asBoolean()) {
                continue;
            }
            Safetensors.Entry w = st.tensors.get(name + "/grad" + i);
            assertNotNull(w, "gradient " + i + " missing from the vector file");
            Tensor g = ins[i].grad();
            g = own(owned, g != null ? g : ins[i].zerosLike());
            compare("gradient of input " + i, g, w, scale * INDEX.gradTolScale);
            GRADS.incrementAndGet();
        }
    }

    static Tensor own(List<Tensor> owned, Tensor t) {
        owned.add(t);
        return t;
    }

    /** The values at doubled strides in a twice-as-large native buffer, imported as a strided view (no copy). */
    static Tensor strided(Safetensors.Entry e, Arena arena) {
        long[] shape = e.shape();
        if (shape.length == 0) {
            return Tensor.fromBytes(e.data(), e.dtype(), shape);
        }
        int size = e.dtype().byteSize();
        long[] strides = new long[shape.length];
        long s = 2;
        for (int k = shape.length - 1; k >= 0; k--) {
            strides[k] = s;
            s *= shape[k];
        }
        long n = e.data().length / size;
        MemorySegment buf = arena.allocate(Math.max(2 * n * size, 1), 16);
        long[] idx = new long[shape.length];
        for (long i = 0; i < n; i++) {
            long pos = 0;
            for (int k = 0; k < shape.length; k++) {
                pos += idx[k] * strides[k];
            }
            MemorySegment.copy(MemorySegment.ofArray(e.data()), i * size, buf, pos * size, size);
            for (int k = shape.length - 1; k >= 0; k--) {
                if (++idx[k] < shape[k]) {
                    break;
                }
                idx[k] = 0;
            }
        }
        Tensor t = Tensor.fromSegment(buf, e.dtype(), shape, strides);
        if (n > 1) {
            assertFalse(t.isContiguous(), "a strided input should be a non-contiguous view");
        }
        return t;
    }

    static Attr attr(String name, String kind, JsonNode v) {
        return switch (kind) {
            case "int" -> Attr.of(name, v.asLong());
            case "float" -> Attr.of(name, number(v));
            case "bool" -> Attr.of(name, v.asBoolean());
            case "string" -> Attr.of(name, v.asText());
            case "dtype" -> Attr.of(name, DType.of(v.asText()));
            case "ints" -> {
                long[] a = new long[v.isArray() ? v.size() : 1];
                for (int i = 0; i < a.length; i++) {
                    a[i] = (v.isArray() ? v.get(i) : v).asLong();
                }
                yield Attr.of(name, a);
            }
            case "floats" -> {
                double[] a = new double[v.isArray() ? v.size() : 1];
                for (int i = 0; i < a.length; i++) {
                    a[i] = number(v.isArray() ? v.get(i) : v);
                }
                yield Attr.of(name, a);
            }
            default -> throw new IllegalArgumentException("unknown attribute kind " + kind);
        };
    }

    /** conformance.JSONAttrs writes non-finite floats as "inf", "-inf", "nan". */
    static double number(JsonNode v) {
        if (v.isTextual()) {
            return switch (v.asText()) {
                case "inf" -> Double.POSITIVE_INFINITY;
                case "-inf" -> Double.NEGATIVE_INFINITY;
                case "nan" -> Double.NaN;
                default -> throw new IllegalArgumentException("not a number: " + v);
            };
        }
        return v.asDouble();
    }

    /** Dtype, shape and values; integers and bools exactly, floats within the dtype's tolerance times scale. */
    static void compare(String what, Tensor got, Safetensors.Entry want, double scale) {
        assertEquals(want.dtype(), got.dtype(), what + " dtype");
        assertArrayEquals(want.shape(), got.shape(), what + " shape");
        double[] g = Safetensors.decode(got.dtype(), got.toBytes()), w = want.values();
        double[] tol = want.dtype().isFloating() ? INDEX.tol(want.dtype()) : new double[] {0, 0};
        double atol = tol[0] * scale, rtol = tol[1] * scale;
        int bad = 0, first = -1;
        for (int i = 0; i < w.length; i++) {
            if (!close(g[i], w[i], atol, rtol)) {
                if (bad++ == 0) {
                    first = i;
                }
            }
        }
        if (bad > 0) {
            fail(String.format("%s: %d of %d values differ beyond atol=%g rtol=%g; first at flat index %d: got %s, want %s",
                    what, bad, w.length, atol, rtol, first, g[first], w[first]));
        }
    }

    /** core.Tol.Close: NaN matches NaN, infinities must match exactly. */
    static boolean close(double got, double want, double atol, double rtol) {
        if (Double.isNaN(want) || Double.isNaN(got)) {
            return Double.isNaN(want) && Double.isNaN(got);
        }
        if (Double.isInfinite(want) || Double.isInfinite(got)) {
            return got == want;
        }
        return Math.abs(got - want) <= atol + rtol * Math.abs(want);
    }
}
