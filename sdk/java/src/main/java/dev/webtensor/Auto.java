package dev.webtensor;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import static dev.webtensor.NativeObject.args;
import static dev.webtensor.NativeObject.call;
import static dev.webtensor.NativeObject.callJson;

/**
 * The runtime's auto-agents (Go's package auto, through wt_call's auto.*
 * methods): an agent measures a change A/B on your own workload, in this
 * process, keeps it only when it wins, remembers it under a name and
 * journals every decision in a folder; a policy (a sandboxed WebAssembly
 * module) proposes and never changes anything itself. Options and results
 * are JSON ({@code {"dir": ..., "runs": 9, "margin": 0.1}}; see
 * docs/calls.md).
 *
 * <pre>{@code
 * try (Graph g = Webtensor.trace(in -> new Tensor[] {in[0].mul(in[0]).relu()}, x)) {
 *     String report = Auto.tuneGraph(g, new Tensor[] {x}, "{\"name\": \"square\"}");
 *     String records = Auto.journal("{}");
 * }
 * }</pre>
 *
 * The data agent (auto.tune_loader) tunes a DataLoader over a NativeDataset
 * (one of Data's readers): {@link #tune}.
 */
public final class Auto {
    private Auto() {}

    /** The policy module the jar carries, loaded once: its plugin name, or null without one. */
    private static volatile String shipped;

    /**
     * The policy spec an agent ("kernel", "data") asks when the options name
     * none: the jar's policy-auto.wasm (loaded as a plugin on first use), or
     * "default#agent", which the library finds as
     * build/plugins/policy-auto.wasm from the working folder.
     */
    public static synchronized String defaultPolicy(String agent) {
        if (shipped == null) {
            try (var in = Auto.class.getResourceAsStream("policy-auto.wasm")) {
                shipped = in == null ? "" : Webtensor.loadPlugin(in.readAllBytes(), "policy-auto.wasm");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return (shipped.isEmpty() ? "default" : shipped) + "#" + agent;
    }

    /**
     * optionsJson (null or blank: {}) as the object the agents read, with
     * defaultPolicy(agent) when it names no "policy" (agent null: none added).
     * Anything but a JSON object is an IllegalArgumentException.
     */
    private static Map<String, Object> options(String optionsJson, String agent) {
        String o = optionsJson == null || optionsJson.isBlank() ? "{}" : optionsJson.trim();
        Object v;
        try {
            v = Json.parse(o, "auto: the options");
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("auto: the options are not JSON: " + e.getMessage(), e);
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("auto: the options must be a JSON object, got " + o);
        }
        Map<String, Object> opts = new LinkedHashMap<>();
        m.forEach((k, x) -> opts.put((String) k, x));
        if (agent != null && opts.get("policy") == null) {
            opts.put("policy", defaultPolicy(agent));
        }
        return opts;
    }

    /**
     * The kernel agent on a graph run on inputs: the CPU backend's thread
     * count and storage cache, for the whole process, remembered under the
     * options' "name" ("graph"). Returns the report as JSON: the settings in
     * force, those remembered and each decision summed up.
     */
    public static String tuneGraph(Graph graph, Tensor[] inputs, String optionsJson) {
        return callJson("auto.tune_graph", 0,
                args("graph", graph, "inputs", Arrays.asList(inputs), "options", options(optionsJson, "kernel")), null);
    }

    /**
     * The data agent on a loader over a NativeDataset: its pipeline (workers,
     * prefetch, a cache of decoded records) measured on the loader's own
     * throughput, each run reading the options' "batches" batches of "epoch";
     * the loader changes in place for the passes after, with the same samples
     * in the same order. Options (JSON) as {@link #tuneGraph}'s, with "name"
     * ("loader"), "batches", "epoch" and "measure" (false applies what an
     * earlier tune under the name kept, measuring nothing). Returns the report
     * as JSON: pipeline_before/after, samples_per_s_before/after, the cache's
     * stats and each decision summed up.
     */
    public static String tune(DataLoader<?> loader, String optionsJson) {
        loader.nativeHandle(); // a loader over a Java dataset is refused before the policy loads
        return callJson("auto.tune_loader", 0, args("loader", loader, "options", options(optionsJson, "data")), null);
    }

    /**
     * Auto-parallel: how to split a training step of a traced model (input 0
     * is the batch) across a cluster - one device, data, tensor, sequence or
     * pipeline parallel - from a cost model of the graph. Options (JSON):
     * "cluster" (devices with name, kind cpu|webgpu|process, gflops, gbps,
     * memory_bytes; links from "parent" to each process), or "workers",
     * "worker_exe" and "webgpu" to measure this machine; "param_inputs".
     * Returns the report as JSON: "chosen" (null when nothing fits, with
     * "error") and every "candidates" plan with its prediction or "why".
     */
    public static String planParallel(Graph graph, String optionsJson) {
        return callJson("auto.parallel_plan", 0, args("graph", graph, "options", options(optionsJson, null)), null);
    }

    /** The journal's records as a JSON array, oldest first; options: "dir", "ids". */
    public static String journal(String optionsJson) {
        return callJson("auto.journal", 0, args("options", options(optionsJson, null)), null);
    }

    /**
     * Restores the state from before kept decision id (undoing the kept ones
     * after it); returns the rollback record's journal id.
     */
    public static String rollback(String optionsJson, String id) {
        return (String) call("auto.rollback", 0, args("options", options(optionsJson, null), "id", id), null);
    }
}
