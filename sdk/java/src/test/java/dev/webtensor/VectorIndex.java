package dev.webtensor;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * conformance/vectors/index.json: the ops with their files and {@code tol_scale},
 * the base tolerance per dtype and {@code grad_tol_scale}. The registry writes it
 * (make generate), so the Java tests grade exactly as the other
 * SDKs do and cannot drift from core.Tolerances or an op's TolScale.
 */
final class VectorIndex {
    /** An op's entry: its vector file and the factor on both terms of the dtype's tolerance. */
    record Op(String file, double tolScale) {
    }

    final Map<DType, double[]> tolerances = new HashMap<>();
    final Map<String, Op> ops = new TreeMap<>();
    final double gradTolScale;

    private static VectorIndex loaded;

    /** The index of {@code dir} (conformance/vectors). */
    VectorIndex(Path dir) throws IOException {
        JsonNode ix = Safetensors.JSON.readTree(dir.resolve("index.json").toFile());
        gradTolScale = need(ix, "grad_tol_scale").asDouble();
        need(ix, "tolerances").fields().forEachRemaining(e -> tolerances.put(DType.of(e.getKey()),
                new double[] {need(e.getValue(), "atol").asDouble(), need(e.getValue(), "rtol").asDouble()}));
        need(ix, "ops").fields().forEachRemaining(e -> ops.put(e.getKey(),
                new Op(need(e.getValue(), "file").asText(), e.getValue().path("tol_scale").asDouble(1))));
        for (DType d : DType.values()) {
            // Complex results are compared as their real pairs, under the part dtype's tolerance.
            if (!d.isComplex() && !tolerances.containsKey(d)) {
                throw new IOException(dir + "/index.json has no tolerance for " + d);
            }
        }
    }

    /** The index of the repository's vectors, read once. */
    static synchronized VectorIndex get() {
        if (loaded == null) {
            try {
                loaded = new VectorIndex(VectorsTest.vectorsDir());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return loaded;
    }

    /** The op's tol_scale (1 for an op the index does not list). */
    double tolScale(String op) {
        Op o = ops.get(op);
        return o == null ? 1 : o.tolScale();
    }

    /** {atol, rtol} for values of dtype, before any scale (0, 0 for integers and bools). */
    double[] tol(DType dtype) {
        return tolerances.get(dtype);
    }

    private static JsonNode need(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            throw new IllegalStateException("index.json: missing " + field);
        }
        return v;
    }
}
