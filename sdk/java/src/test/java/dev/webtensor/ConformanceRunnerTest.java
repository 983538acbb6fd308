package dev.webtensor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The Java SDK's conformance runner (conformance/README.md): every case of
 * every op in conformance/vectors/index.json through the public Java API
 * ({@link Tensor#fromBytes}, {@link Tensor#slice}, {@link Webtensor#op},
 * {@link Tensor#backward}) on one device, graded with index.json's tolerances,
 * written as a result file for `make conformance`. It does nothing unless
 * {@code -Dwebtensor.conformance.out=FILE} is given, so `make java-test` skips it:
 *
 * <pre>
 * mvn test -Dtest=ConformanceRunnerTest -Dwebtensor.conformance.device=webgpu \
 *     -Dwebtensor.conformance.out=$PWD/../../build/conformance/java-webgpu.json
 * </pre>
 *
 * A failing case is a result, not a test failure: the report judges the file.
 * The file also carries the cross-SDK training check ({@link ConformanceTraining}):
 * the loss curve, the checkpoint written beside it ({@code java-<device>.ckpt.safetensors})
 * and which other columns' checkpoints load here.
 */
class ConformanceRunnerTest {
    static final String OUT = "webtensor.conformance.out", DEVICE = "webtensor.conformance.device";

    @Test
    @EnabledIfSystemProperty(named = OUT, matches = ".+")
    void writeResult() throws IOException {
        String device = System.getProperty(DEVICE, "cpu");
        Path out = Path.of(System.getProperty(OUT));
        Files.createDirectories(out.toAbsolutePath().getParent()); // the checkpoint goes there during the run
        Map<String, Object> result = run(device, out);
        Files.writeString(out, Safetensors.JSON.writer().with(SerializationFeature.INDENT_OUTPUT)
                .writeValueAsString(result) + "\n");
    }

    /** The training check itself (runs in `make java-test`): the loss falls, and the checkpoint reloads. */
    @Test
    void trainingCheckTrainsAndItsCheckpointLoads(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path ckpt = dir.resolve("java-cpu" + ConformanceTraining.SUFFIX);
        List<Double> losses = ConformanceTraining.train("cpu", ckpt);
        org.junit.jupiter.api.Assertions.assertEquals(ConformanceTraining.STEPS, losses.size());
        org.junit.jupiter.api.Assertions.assertTrue(losses.getLast() < losses.getFirst(), "loss " + losses);
        Files.copy(ckpt, dir.resolve("other" + ConformanceTraining.SUFFIX));
        Files.write(dir.resolve("broken" + ConformanceTraining.SUFFIX), new byte[] {1, 2, 3});
        Map<String, String> loads = ConformanceTraining.loadOthers(ckpt);
        org.junit.jupiter.api.Assertions.assertEquals("ok", loads.get("other"));
        // The library's checkpoint checker names the file and the problem.
        org.junit.jupiter.api.Assertions.assertTrue(loads.get("broken").startsWith("IllegalArgumentException: ")
                && loads.get("broken").contains("broken" + ConformanceTraining.SUFFIX)
                && loads.get("broken").contains("too short"), loads.get("broken"));
        org.junit.jupiter.api.Assertions.assertEquals(2, loads.size(), "its own checkpoint is not counted");
    }

    /** The grader itself (runs in `make java-test`): worst ratio, exact integers, NaN and infinities. */
    @Test
    void gradeRatiosAndMismatches() {
        List<Tensor> owned = new ArrayList<>();
        try {
            Tensor near = own(owned, Tensor.of(new float[] {1, 2.0001f, Float.NaN}));
            byte[] raw = own(owned, Tensor.of(new float[] {1, 2, Float.NaN})).toBytes();
            Safetensors.Entry want = new Safetensors.Entry(DType.F32, new long[] {3}, raw);
            double r = grade("near", near, want, new double[] {1e-5, 1e-4}, owned);
            org.junit.jupiter.api.Assertions.assertTrue(r > 0.4 && r < 0.5, "ratio " + r);
            org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                    () -> grade("far", near, want, new double[] {1e-6, 1e-6}, owned));
            Tensor ints = own(owned, Tensor.of(new int[] {1, 3}));
            Safetensors.Entry wantInts = new Safetensors.Entry(DType.I32, new long[] {2},
                    own(owned, Tensor.of(new int[] {1, 2})).toBytes());
            org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                    () -> grade("ints", ints, wantInts, new double[] {1, 1}, owned));
        } finally {
            owned.forEach(Tensor::close);
        }
    }

    /** The result of one column (written to out): conformance.Result's fields. */
    static Map<String, Object> run(String device, Path out) throws IOException {
        String kind = device.split(":", 2)[0];
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("sdk", "java");
        result.put("backend", kind);
        List<String> here = Webtensor.devices().stream().filter(d -> d.split(":", 2)[0].equals(kind)).toList();
        if (here.isEmpty()) {
            result.put("detail", openProblem(device));
            result.put("ops", Map.of());
            return result;
        }
        result.put("detail", "webtensor " + Webtensor.version() + " on " + here.get(0) + ", Java " + Runtime.version());
        Webtensor.fallbacks(true);
        VectorIndex index = VectorIndex.get();
        Map<String, JsonNode> specs = new HashMap<>();
        for (JsonNode op : Safetensors.JSON.readTree(Webtensor.manifestJson()).get("ops")) {
            specs.put(op.get("name").asText(), op);
        }
        String previous = Webtensor.defaultDevice();
        Webtensor.setDefaultDevice(device); // Tensor.fromBytes and friends make tensors there
        try {
            Map<String, Object> ops = new TreeMap<>();
            for (Map.Entry<String, VectorIndex.Op> e : index.ops.entrySet()) {
                ops.put(e.getKey(), runOp(e.getKey(), e.getValue(), specs.get(e.getKey()), index, device));
            }
            result.put("ops", ops);
            result.put("identity", identity(device));
        } finally {
            Webtensor.setDefaultDevice(previous);
        }
        String file = out.toAbsolutePath().toString();
        Path ckpt = Path.of(file.replaceFirst("\\.json$", "") + ConformanceTraining.SUFFIX);
        try {
            result.put("training", ConformanceTraining.train(device, ckpt));
            result.put("checkpoint", ckpt.toString());
        } catch (IOException | RuntimeException e) { // a failed training is a result, not a crash
            result.put("checkpoint", "error: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        result.put("loads_checkpoints", ConformanceTraining.loadOthers(ckpt));
        // Counted since the reset above: the cases, streams and training.
        result.put("fallbacks", Safetensors.JSON.readTree(Webtensor.fallbacksJson(false)));
        return result;
    }

    /**
     * core.NoDeviceText: the library's message says so when the machine has no
     * such device at all (no adapter, no driver), as opposed to a backend that
     * failed to open, which fails the column (conformance/columns.go).
     */
    static final String NO_DEVICE = "no such device on this machine";

    /** The detail of a column whose device is not listed: "unavailable: ..." or "open failed: ...". */
    static String openProblem(String device) {
        String previous = Webtensor.defaultDevice();
        try {
            Webtensor.setDefaultDevice(device); // fails, saying why
            Webtensor.setDefaultDevice(previous);
            return "open failed: " + device + " opens but is not in devices()";
        } catch (WebtensorException e) {
            return (e.getMessage().contains(NO_DEVICE) ? "unavailable: " : "open failed: ") + e.getMessage();
        }
    }

    /** conformance.OpResult for one op. */
    static Map<String, Object> runOp(String op, VectorIndex.Op entry, JsonNode spec, VectorIndex index, String device) {
        Map<String, Object> r = new LinkedHashMap<>();
        String status = "pass", detail = null;
        int cases = 0, skipped = 0;
        double worst = 0;
        try {
            Safetensors st = new Safetensors(VectorsTest.vectorsDir().resolve(entry.file()));
            Map<String, String> kinds = new HashMap<>();
            if (spec != null) {
                spec.get("attrs").forEach(a -> kinds.put(a.get("name").asText(), a.get("kind").asText()));
            }
            Grading g = new Grading(index, entry.tolScale());
            for (JsonNode c : Safetensors.JSON.readTree(st.metadata.get("cases"))) {
                if (!holds(device, c.get("name").asText(), st)) {
                    skipped++;
                    continue;
                }
                cases++;
                try {
                    worst = Math.max(worst, runCase(op, c, st, kinds, device, g));
                } catch (RuntimeException | AssertionError ex) { // a failing case is a result, not a crash
                    if (status.equals("pass")) {
                        status = "fail";
                        detail = "case " + c.get("name").asText() + ": " + ex.getClass().getSimpleName() + ": "
                                + ex.getMessage();
                    }
                }
            }
        } catch (IOException | RuntimeException ex) {
            status = "fail";
            detail = "reading " + entry.file() + ": " + ex;
        }
        if (cases == 0 && status.equals("pass")) {
            status = "n/a";
            detail = "every case needs a dtype " + device + " cannot hold";
        }
        r.put("status", status);
        r.put("cases", cases);
        r.put("skipped", skipped);
        r.put("worst", Double.isFinite(worst) ? worst : 1e308);
        if (detail != null) {
            r.put("detail", detail);
        }
        return r;
    }

    /** Tolerances of one op: index.json's per dtype, times the op's tol_scale (and grad_tol_scale for gradients). */
    record Grading(VectorIndex index, double scale) {
        double[] tol(DType dt, boolean grad) {
            double s = scale * (grad ? index.gradTolScale : 1);
            double[] t = index.tol(dt);
            return new double[] {t[0] * s, t[1] * s};
        }
    }

    /** False when the case needs what the device cannot hold (f64, or i64 beyond i32, on WebGPU). */
    static boolean holds(String device, String name, Safetensors st) {
        if (!device.startsWith("webgpu")) {
            return true;
        }
        for (Map.Entry<String, Safetensors.Entry> e : st.tensors.entrySet()) {
            String k = e.getKey();
            if (!k.startsWith(name + "/") || !(k.contains("/in") || k.contains("/out"))) {
                continue;
            }
            DType dt = e.getValue().dtype();
            if (dt == DType.F64) {
                return false;
            }
            if (dt == DType.I64) {
                for (double v : e.getValue().values()) {
                    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    /** Runs one case; returns its worst ratio, throws on a mismatch. */
    static double runCase(String op, JsonNode c, Safetensors st, Map<String, String> kinds, String device,
                          Grading g) {
        String name = c.get("name").asText();
        boolean grad = c.get("grad").asBoolean();
        List<Tensor> owned = new ArrayList<>();
        try {
            JsonNode specs = c.get("inputs");
            Tensor[] ins = new Tensor[specs.size()];
            for (int i = 0; i < ins.length; i++) {
                JsonNode spec = specs.get(i);
                if (spec.path("absent").asBoolean()) {
                    continue;
                }
                Safetensors.Entry e = st.tensors.get(name + "/in" + i);
                if (e == null) {
                    throw new AssertionError("input " + i + " missing from the vector file");
                }
                ins[i] = makeInput(e, spec.path("strided").asBoolean(), owned);
                if (grad && spec.path("grad").asBoolean()) {
                    ins[i].requiresGrad(true);
                }
            }
            List<Attr> attrs = new ArrayList<>();
            boolean hasDevice = false;
            for (Iterator<Map.Entry<String, JsonNode>> it = c.get("attrs").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> a = it.next();
                String kind = kinds.get(a.getKey());
                if (a.getValue().isNull() || kind == null) {
                    continue;
                }
                if (a.getKey().equals("device")) {
                    if (a.getValue().asText().isEmpty()) {
                        continue;
                    }
                    hasDevice = true;
                }
                attrs.add(VectorsTest.attr(a.getKey(), kind, a.getValue()));
            }
            if (!hasDevice && kinds.containsKey("device")) {
                attrs.add(Attr.of("device", device)); // creation ops make their tensor on the tested device
            }
            Tensor[] outs = Webtensor.op(op, VectorsTest.complexInputs(ins, specs, owned), attrs.toArray(new Attr[0]));
            owned.addAll(List.of(outs));
            VectorsTest.filedOutputs(outs, c.get("outputs"), owned);
            int want = c.get("outputs").size();
            if (outs.length != want) {
                throw new AssertionError(outs.length + " outputs, want " + want);
            }
            double worst = 0;
            Tensor loss = null;
            for (int j = 0; j < outs.length; j++) {
                Safetensors.Entry w = st.tensors.get(name + "/out" + j);
                if (w == null) {
                    throw new AssertionError("output " + j + " missing from the vector file");
                }
                worst = Math.max(worst, grade("output " + j, outs[j], w, g.tol(w.dtype(), false), owned));
                Safetensors.Entry up = st.tensors.get(name + "/up" + j);
                if (up != null && outs[j].requiresGrad()) {
                    Tensor u = makeInput(up, false, owned);
                    Tensor term = own(owned, own(owned, outs[j].mul(u)).sum());
                    loss = loss == null ? term : own(owned, loss.add(term));
                }
            }
            if (grad && loss != null) {
                loss.backward();
                for (int i = 0; i < ins.length; i++) {
                    if (!specs.get(i).path("grad").asBoolean()) {
                        continue;
                    }
                    Safetensors.Entry w = st.tensors.get(name + "/grad" + i);
                    if (w == null) {
                        continue;
                    }
                    Tensor gr = ins[i].grad();
                    gr = own(owned, gr != null ? gr : ins[i].zerosLike());
                    worst = Math.max(worst, grade("gradient of input " + i, gr, w, g.tol(w.dtype(), true), owned));
                }
            }
            return worst;
        } finally {
            owned.forEach(Tensor::close);
        }
    }

    /**
     * A vector tensor on the default (tested) device; a strided one is a step-2
     * slice of a zero-filled base twice as wide in the last dim, so its strides
     * are twice the contiguous ones in every dim (index.json's "strided" rule).
     */
    static Tensor makeInput(Safetensors.Entry e, boolean strided, List<Tensor> owned) {
        long[] shape = e.shape();
        if (!strided || shape.length == 0) {
            return own(owned, Tensor.fromBytes(e.data(), e.dtype(), shape));
        }
        int size = e.dtype().byteSize();
        long last = shape[shape.length - 1];
        long[] wide = shape.clone();
        wide[wide.length - 1] = 2 * last;
        byte[] base = new byte[2 * e.data().length];
        for (int i = 0; i < e.data().length / size; i++) {
            System.arraycopy(e.data(), i * size, base, 2 * i * size, size);
        }
        Tensor b = own(owned, Tensor.fromBytes(base, e.dtype(), wide));
        return own(owned, b.slice(-1, 0, 2 * last, 2));
    }

    static Tensor own(List<Tensor> owned, Tensor t) {
        owned.add(t);
        return t;
    }

    /** Worst |got - want| / (atol + rtol |want|); throws on a dtype, shape or value mismatch. */
    static double grade(String what, Tensor got, Safetensors.Entry want, double[] tol, List<Tensor> owned) {
        if (got.dtype() != want.dtype()) {
            throw new AssertionError(what + ": dtype " + got.dtype() + ", want " + want.dtype());
        }
        if (!java.util.Arrays.equals(got.shape(), want.shape())) {
            throw new AssertionError(what + ": shape " + java.util.Arrays.toString(got.shape()) + ", want "
                    + java.util.Arrays.toString(want.shape()));
        }
        Tensor host = own(owned, got.to("cpu"));
        double[] g = Safetensors.decode(host.dtype(), host.toBytes()), w = want.values();
        double atol = want.dtype().isFloating() ? tol[0] : 0, rtol = want.dtype().isFloating() ? tol[1] : 0;
        double worst = 0;
        for (int i = 0; i < w.length; i++) {
            double a = g[i], b = w[i];
            if (Double.isNaN(a) || Double.isNaN(b) || Double.isInfinite(a) || Double.isInfinite(b)) {
                if (!(Double.isNaN(a) && Double.isNaN(b)) && a != b) {
                    throw new AssertionError(what + ": element " + i + ": got " + a + ", want " + b);
                }
                continue;
            }
            double d = Math.abs(a - b), bound = atol + rtol * Math.abs(b);
            worst = Math.max(worst, bound > 0 ? d / bound : (d > 0 ? Double.POSITIVE_INFINITY : 0));
            if (d > bound) {
                throw new AssertionError(String.format("%s: element %d: got %s, want %s (atol %g, rtol %g)", what, i,
                        a, b, atol, rtol));
            }
        }
        return worst;
    }

    /**
     * SHA-256 of seeded random tensors made through this SDK, the cases of
     * conformance/identity.go (rand and randint of shape [64], bernoulli of
     * full([64], 0.3)); every column must agree.
     */
    static Map<String, String> identity(String device) {
        Map<String, Supplier<Tensor[]>> cases = new LinkedHashMap<>();
        Tensor[] none = new Tensor[0];
        cases.put("rand_seed7", () -> Webtensor.op("rand", none, Attr.of("shape", new long[] {64}),
                Attr.of("seed", 7L), Attr.of("device", device)));
        cases.put("randint_seed7", () -> Webtensor.op("randint", none, Attr.of("shape", new long[] {64}),
                Attr.of("seed", 7L), Attr.of("low", -5L), Attr.of("high", 50L), Attr.of("device", device)));
        cases.put("bernoulli_seed3", () -> {
            try (Tensor p = Tensor.full(0.3, 64)) { // on the default device, the tested one
                if (!p.device().split(":", 2)[0].equals(device.split(":", 2)[0])) {
                    throw new IllegalStateException("full made its tensor on " + p.device());
                }
                return Webtensor.op("bernoulli", new Tensor[] {p}, Attr.of("seed", 3L));
            }
        });
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Supplier<Tensor[]>> c : cases.entrySet()) {
            Tensor[] ts = null;
            try {
                ts = c.getValue().get();
                try (Tensor cpu = ts[0].to("cpu")) {
                    out.put(c.getKey(), HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                            .digest(cpu.toBytes())));
                }
            } catch (RuntimeException | NoSuchAlgorithmException e) {
                out.put(c.getKey(), "error: " + e.getMessage());
            } finally {
                if (ts != null) {
                    for (Tensor t : ts) {
                        t.close();
                    }
                }
            }
        }
        return out;
    }
}
