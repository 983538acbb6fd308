package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The runtime's auto-agents (Go's package auto, through the C ABI's
 * wt_auto_*): an agent measures a change A/B on your own workload, in this
 * process, keeps it only when it wins, remembers it under a name and
 * journals every decision in a folder; a policy (a sandboxed WebAssembly
 * module) proposes and never changes anything itself. Options and results
 * are the header's JSON ({@code {"dir": ..., "runs": 9, "margin": 0.1}};
 * see capi/include/webtensor.h).
 *
 * <pre>{@code
 * try (Graph g = Webtensor.trace(in -> new Tensor[] {in[0].mul(in[0]).relu()}, x)) {
 *     String report = Auto.tuneGraph(g, new Tensor[] {x}, "{\"name\": \"square\"}");
 *     String records = Auto.journal("{}");
 * }
 * }</pre>
 *
 * The data agent (wt_auto_tune_loader) tunes a DataLoader over a NativeDataset
 * (one of Data's readers): {@link #tune}.
 */
public final class Auto {
    private Auto() {}

    /** A tune's report fits this many bytes; the library checks the buffer before it runs. */
    private static final long REPORT_BYTES = 16384;

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
     * optionsJson with defaultPolicy(agent) as its first key: a key given
     * twice takes its last value in the library's reader (Go's encoding/json),
     * so a "policy" the options name wins.
     */
    private static String withPolicy(String optionsJson, String agent) {
        String o = optionsJson == null || optionsJson.isBlank() ? "{}" : optionsJson.trim();
        if (!o.startsWith("{")) {
            throw new IllegalArgumentException("auto: the options must be a JSON object, got " + o);
        }
        String spec = defaultPolicy(agent).replace("\\", "\\\\").replace("\"", "\\\"");
        String rest = o.substring(1).trim();
        return "{\"policy\": \"" + spec + "\"" + (rest.equals("}") ? "}" : ", " + rest);
    }

    /**
     * The kernel agent on a graph run on inputs: the CPU backend's thread
     * count and storage cache, for the whole process, remembered under the
     * options' "name" ("graph"). Returns the report as JSON: the settings in
     * force, those remembered and each decision summed up.
     */
    public static String tuneGraph(Graph graph, Tensor[] inputs, String optionsJson) {
        String opts = withPolicy(optionsJson, "kernel");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = arena.allocate(JAVA_LONG, Math.max(inputs.length, 1));
            for (int i = 0; i < inputs.length; i++) {
                in.setAtIndex(JAVA_LONG, i, inputs[i].handle());
            }
            MemorySegment o = arena.allocateFrom(opts);
            long g = graph.handle();
            return Native.oneShot(REPORT_BYTES, (buf, cap, needed) ->
                    (int) Abi.AUTO_TUNE_GRAPH.invokeExact(g, in, inputs.length, o, buf, cap, needed));
        } finally {
            Reference.reachabilityFence(inputs);
            Reference.reachabilityFence(graph);
        }
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
        long h = loader.nativeHandle();
        String opts = withPolicy(optionsJson, "data");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = arena.allocateFrom(opts);
            return Native.oneShot(REPORT_BYTES, (buf, cap, needed) ->
                    (int) Abi.AUTO_TUNE_LOADER.invokeExact(h, o, buf, cap, needed));
        } finally {
            Reference.reachabilityFence(loader);
        }
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
        String o = optionsJson == null || optionsJson.isBlank() ? "{}" : optionsJson.trim();
        if (!o.startsWith("{")) {
            throw new IllegalArgumentException("auto: the options must be a JSON object, got " + o);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment opts = arena.allocateFrom(o);
            long g = graph.handle();
            return Native.readString((buf, cap, needed) -> (int) Abi.AUTO_PARALLEL_PLAN.invokeExact(g, opts, buf, cap, needed));
        } finally {
            Reference.reachabilityFence(graph);
        }
    }

    /** The journal's records as a JSON array, oldest first; options: "dir", "ids". */
    public static String journal(String optionsJson) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = arena.allocateFrom(optionsJson == null ? "{}" : optionsJson);
            return Native.readString((buf, cap, needed) -> (int) Abi.AUTO_JOURNAL_JSON.invokeExact(o, buf, cap, needed));
        }
    }

    /**
     * Restores the state from before kept decision id (undoing the kept ones
     * after it); returns the rollback record's journal id.
     */
    public static String rollback(String optionsJson, String id) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = arena.allocateFrom(optionsJson == null ? "{}" : optionsJson);
            MemorySegment d = arena.allocateFrom(id);
            return Native.oneShot(32, (buf, cap, needed) -> (int) Abi.AUTO_ROLLBACK.invokeExact(o, d, buf, cap, needed));
        }
    }
}
