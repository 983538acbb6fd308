package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** Process-wide functions of the runtime: version, devices, seeds, no-grad scopes, ops by name, graph capture, plugins. */
public final class Webtensor {
    private Webtensor() {}

    /** The library version, e.g. "0.1.0". */
    public static String version() {
        return Native.cString((MemorySegment) Native.invoke(Abi.VERSION));
    }

    /** The C ABI version of the loaded library. */
    public static int abiVersion() {
        return (int) Native.invoke(Abi.ABI_VERSION_CALL);
    }

    /** Build information as JSON: version, abi, go, commit, os, arch. */
    public static String buildInfo() {
        return Native.readString((buf, cap, needed) -> (int) Abi.BUILD_INFO.invokeExact(buf, cap, needed));
    }

    /** The op manifest (every op, its inputs, attributes, dtypes, backends) as JSON. */
    public static String manifestJson() {
        return Native.readString((buf, cap, needed) -> (int) Abi.MANIFEST_JSON.invokeExact(buf, cap, needed));
    }

    /** The op manifest, parsed: {"version": n, "ops": [{"name", "inputs", "attrs", "dtypes", ...}, ...]}. */
    public static java.util.Map<String, Object> manifest() {
        return Json.object(manifestJson(), "wt_manifest_json");
    }

    /** Whether x is a webtensor {@link Tensor} (torch.is_tensor). */
    public static boolean isTensor(Object x) {
        return x instanceof Tensor;
    }

    /**
     * Opens a {@link Scope}: tensors this thread makes until it closes are
     * closed then, except those it keeps.
     */
    public static Scope scope() {
        return new Scope();
    }

    /**
     * Waits for every op queued on device (WebGPU, CUDA; the CPU has no
     * queue); a check a kernel failed since the last wait (an index out of
     * range) is thrown here.
     */
    public static void synchronize(String device) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.DEVICE_SYNC, arena.allocateFrom(device));
        }
    }

    /** Names of the devices whose backend opens here, best first ("cpu" at least). */
    public static List<String> devices() {
        int n;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment c = arena.allocate(JAVA_INT);
            Native.call(Abi.DEVICE_COUNT, c);
            n = c.get(JAVA_INT, 0);
        }
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int idx = i;
            out.add(Native.readString((buf, cap, needed) -> (int) Abi.DEVICE_NAME.invokeExact(idx, buf, cap, needed)));
        }
        return out;
    }

    /**
     * The op calls that ran on the CPU instead of their device (kind "cpu": no
     * kernel there) and those whose device kernel did declared host-side work
     * (kind "host", with a reason; docs/ops.md lists them), since the start or
     * the last reset; reset clears the counts after reading them.
     */
    public static List<Fallback> fallbacks(boolean reset) {
        return Fallback.parse(fallbacksJson(reset));
    }

    /** {@link #fallbacks} as the library's JSON: {@code [{"device", "op", "count", "kind", "reason"}]}. */
    public static String fallbacksJson(boolean reset) {
        int r = reset ? 1 : 0;
        return Native.readString((buf, cap, needed) -> (int) Abi.FALLBACKS_JSON.invokeExact(r, buf, cap, needed));
    }

    /**
     * Records every op call {@code body} makes (op, device, shapes, dtypes, bytes, time,
     * device memory) and returns the Chrome trace as JSON, which Perfetto opens and
     * {@code webtensor flame} draws; sync waits for the device after each op so GPU ops
     * carry their execution time. The recording is the runtime's (wt_profile_*).
     */
    public static String profile(Runnable body, boolean sync) {
        Native.call(Abi.PROFILE_START, sync ? 1 : 0);
        try {
            body.run();
        } finally {
            Native.call(Abi.PROFILE_STOP);
        }
        return Native.readString((buf, cap, needed) -> (int) Abi.PROFILE_JSON.invokeExact(buf, cap, needed));
    }

    /**
     * How many threads the CPU backend's kernels use, like torch.set_num_threads;
     * n <= 0 restores the default (the process's CPU quota, or WEBTENSOR_NUM_THREADS).
     */
    public static void setNumThreads(int n) {
        Native.call(Abi.SET_NUM_THREADS, n);
    }

    /** The threads a CPU op may use now. */
    public static int getNumThreads() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment c = arena.allocate(JAVA_INT);
            Native.call(Abi.GET_NUM_THREADS, c);
            return c.get(JAVA_INT, 0);
        }
    }

    /** The device new tensors go to when none is named. */
    public static String defaultDevice() {
        return Native.readString((buf, cap, needed) -> (int) Abi.DEFAULT_DEVICE.invokeExact(buf, cap, needed));
    }

    public static void setDefaultDevice(String device) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.SET_DEFAULT_DEVICE, arena.allocateFrom(device));
        }
    }

    /** Number of live native tensor handles in the process (for leak checks). */
    public static long liveTensors() {
        return Native.outLong(Abi.LIVE_TENSORS);
    }

    /** Number of DLPack exports ({@link Tensor#asSegment}) whose memory is still held. */
    public static long liveDlpackExports() {
        return Native.outLong(Abi.LIVE_DLPACK_EXPORTS);
    }

    /** Resets the global Philox generator: the same seed gives the same tensors in every SDK. */
    public static void manualSeed(long seed) {
        Native.call(Abi.MANUAL_SEED, seed);
    }

    /** The generator's (seed, offset). */
    public static long[] rngState() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(JAVA_LONG), o = arena.allocate(JAVA_LONG);
            Native.call(Abi.RNG_STATE, s, o);
            return new long[] {s.get(JAVA_LONG, 0), o.get(JAVA_LONG, 0)};
        }
    }

    public static void setRngState(long seed, long offset) {
        Native.call(Abi.SET_RNG_STATE, seed, offset);
    }

    /** A scope for try-with-resources; ops inside are not recorded for autograd. */
    public static final class NoGrad implements AutoCloseable {
        private boolean open = true;

        private NoGrad() {
            Native.call(Abi.NO_GRAD_ENTER);
        }

        @Override
        public void close() {
            if (open) {
                open = false;
                Native.call(Abi.NO_GRAD_EXIT);
            }
        }
    }

    /**
     * {@code try (var g = Webtensor.noGrad()) { ... }}: ops this thread makes
     * inside are not recorded; other threads keep recording. The scope belongs
     * to the OS thread (the ABI's), so close it on the thread that opened it,
     * and open it on a platform thread: a virtual thread may move between OS
     * threads.
     */
    public static NoGrad noGrad() {
        return new NoGrad();
    }

    /**
     * Runs any registry op by name (plugin ops, internal ops): null inputs are
     * absent optional inputs, null attributes are left out. Returns every output.
     */
    public static Tensor[] op(String name, Tensor[] inputs, Attr... attrs) {
        return Op.call(name, inputs, attrs);
    }

    /**
     * Python's {@code wt.call} for an op with one output: runs the registry op
     * (a plugin's too) and returns its output. An op with several outputs is
     * an {@link IllegalArgumentException} naming {@link #op}, which returns
     * them all (nothing is left open).
     */
    public static Tensor call(String name, Tensor[] inputs, Attr... attrs) {
        Tensor[] outs = op(name, inputs, attrs);
        if (outs.length != 1) {
            for (Tensor t : outs) {
                t.close();
            }
            throw new IllegalArgumentException(name + " has " + outs.length + " outputs: call it with Webtensor.op");
        }
        return outs[0];
    }

    /**
     * Runs {@code fn(examples)} once, recording its ops, and returns them as a
     * {@link Graph} to replay on new inputs of the same shapes and dtypes. fn
     * must return tensors it computed or its inputs, not outside tensors; what
     * it returned is closed once captured, the examples excepted (use
     * {@link #compile} to keep a first call's result). If fn throws, the capture is dropped and the exception
     * propagates; a bad output is an {@link IllegalArgumentException} or a
     * {@link WebtensorException} naming it. The next capture starts cleanly.
     */
    public static Graph trace(Function<Tensor[], Tensor[]> fn, Tensor... examples) {
        Graph.Traced t = Graph.capture(fn, examples);
        for (Tensor o : t.outputs()) {
            o.close();
        }
        return t.graph();
    }

    /**
     * fn compiled: one graph per input signature (shapes, dtypes, devices),
     * captured on the signature's first call (which returns fn's eager result)
     * and replayed afterwards. See {@link Compiled}.
     */
    public static Compiled compile(Function<Tensor[], Tensor[]> fn) {
        return new Compiled(fn);
    }

    /** Loads a WebAssembly plugin (.wasm) and registers its ops; returns the plugin's name. */
    public static String loadPlugin(Path wasm) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(wasm.toString());
            return Native.readString((buf, cap, needed) -> (int) Abi.PLUGIN_LOAD.invokeExact(p, buf, cap, needed));
        }
    }

    /** Loads a WebAssembly plugin from memory; label names it in error messages. Returns the plugin's name. */
    public static String loadPlugin(byte[] wasm, String label) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment w = NativeObject.nativeBytes(arena, wasm);
            MemorySegment l = arena.allocateFrom(label);
            long n = wasm.length;
            return Native.readString((buf, cap, needed) ->
                    (int) Abi.PLUGIN_LOAD_BYTES.invokeExact(w, n, l, buf, cap, needed));
        }
    }

    /**
     * Checks a safetensors file with the library's validator (wt_safetensors_header, the
     * one every SDK uses) and describes its layout as JSON: {@code {"data_start": n,
     * "metadata": {...}, "tensors": [{"name", "dtype", "shape", "offsets"}, ...]}}, the
     * tensors in data order. prefix holds the file's first bytes (at least the 8-byte
     * length and the header), fileSize is its length and name what errors call it. A
     * malformed file is a {@link WebtensorException} ({@code INVALID}) naming it and the
     * problem. {@code nn.Checkpoints} loads through it.
     */
    public static String safetensorsHeader(byte[] prefix, long fileSize, String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = NativeObject.nativeBytes(arena, prefix);
            MemorySegment l = arena.allocateFrom(name);
            long n = prefix.length;
            return Native.readString((buf, cap, needed) ->
                    (int) Abi.SAFETENSORS_HEADER.invokeExact(p, n, fileSize, l, buf, cap, needed));
        }
    }

    /**
     * The learning rate at step (0 before the first scheduler step) of a
     * torch.optim.lr_scheduler schedule, from base: a pure function of the
     * runtime (wt_lr_schedule), so {@code optim}'s schedulers agree with every
     * SDK's. kind: "step", "multistep", "exponential", "cosine", "linear" or
     * "warmup_cosine", with torch's settings as attributes.
     */
    public static double lrSchedule(String kind, List<Attr> settings, double base, long step) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment lr = arena.allocate(java.lang.foreign.ValueLayout.JAVA_DOUBLE);
            int n = (int) settings.stream().filter(java.util.Objects::nonNull).count();
            Native.call(Abi.LR_SCHEDULE, arena.allocateFrom(kind), Op.encodeAll(arena, settings), n, base, step, lr);
            return lr.get(java.lang.foreign.ValueLayout.JAVA_DOUBLE, 0);
        }
    }

    /**
     * torch.nn.utils.clip_grad_norm_: scales the gradients of params so that
     * their total normType-norm ({@code Double.POSITIVE_INFINITY}: the largest
     * |g|) is at most maxNorm, on the device; returns the total norm before
     * clipping (a 0-d tensor the caller closes). Parameters without a gradient
     * are skipped.
     */
    public static Tensor clipGradNorm(List<Tensor> params, double maxNorm, double normType) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.CLIP_GRAD_NORM, NativeOptimizer.handles(arena, params), params.size(), maxNorm, normType, out);
            return Tensor.wrap(out.get(JAVA_LONG, 0));
        } finally {
            java.lang.ref.Reference.reachabilityFence(params);
        }
    }

    /** torch.nn.utils.clip_grad_value_: every gradient element of params into [-clip, clip]. */
    public static void clipGradValue(List<Tensor> params, double clip) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.CLIP_GRAD_VALUE, NativeOptimizer.handles(arena, params), params.size(), clip);
        } finally {
            java.lang.ref.Reference.reachabilityFence(params);
        }
    }

    /** Policy modules loaded by {@link #setTuningPolicy(String)}, by where they came from: loading one twice is an error. */
    private static final java.util.Map<String, String> POLICY_PLUGINS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Makes the WebGPU tuner of every device ask a tuning policy which kernel
     * variant to try (the proposal is still timed and kept only when faster):
     * "default" (the policy the jar carries), the path of a policy module, or
     * null to go back to timing every variant.
     */
    public static void setTuningPolicy(String module) {
        if (module == null) {
            setTuningPolicy(null, null);
            return;
        }
        String plugin = POLICY_PLUGINS.computeIfAbsent(module, m -> m.equals("default")
                ? loadPlugin(defaultPolicy(), "policy-kernel-variant.wasm")
                : loadPlugin(Path.of(m)));
        setTuningPolicy(plugin, null);
    }

    /** {@link #setTuningPolicy(String)} with a plugin already loaded and, when it has several, the policy's name. */
    public static void setTuningPolicy(String plugin, String policy) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = plugin == null ? MemorySegment.NULL : arena.allocateFrom(plugin);
            MemorySegment q = policy == null ? MemorySegment.NULL : arena.allocateFrom(policy);
            Native.call(Abi.TUNING_POLICY_SET, p, q);
        }
    }

    private static byte[] defaultPolicy() {
        try (var in = Webtensor.class.getResourceAsStream("policy-kernel-variant.wasm")) {
            if (in == null) {
                throw new IllegalStateException("webtensor: this jar was built without the default tuning policy "
                        + "(make java copies build/plugins/policy-kernel-variant.wasm into it)");
            }
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * A device's kernel-variant decisions as JSON: "op|class" to the variant
     * kept, its timings and any tuning policy's proposal; {} for a device that
     * tunes nothing (the CPU).
     */
    public static String deviceTuningJson(String device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = arena.allocateFrom(device);
            return Native.readString((buf, cap, needed) -> (int) Abi.DEVICE_TUNING_JSON.invokeExact(d, buf, cap, needed));
        }
    }

    /**
     * A device's kernel-variant decisions, parsed: "op|class" to the variant
     * kept ("variant"), its timings ("timings_ns") and any tuning policy's
     * proposal ("policy", "proposed", "reason", "kept"); empty for a device
     * that tunes nothing (the CPU).
     */
    public static java.util.Map<String, Object> deviceTuning(String device) {
        return Json.object(deviceTuningJson(device), "wt_device_tuning_json");
    }

    /**
     * torch.nn.init in place, for {@code nn.Init}: the tensor behind t's handle
     * gets values the library's initialiser draws (Go's nn package: the same
     * seed gives the same weights in every SDK), keeping its handle, shape,
     * dtype and device; a leaf that requires a gradient stays one with its
     * gradient. method and settings are wt_nn_init's (capi/include/webtensor.h).
     */
    public static void nnInit(Tensor t, String method, List<Attr> settings) {
        try (Arena arena = Arena.ofConfined()) {
            int n = (int) settings.stream().filter(java.util.Objects::nonNull).count();
            Native.call(Abi.NN_INIT, t.handle(), arena.allocateFrom(method), Op.encodeAll(arena, settings), n);
        } finally {
            java.lang.ref.Reference.reachabilityFence(t);
        }
    }

    /** torch.nn.init.calculate_gain, the library's: param is leaky_relu's negative slope. */
    public static double nnCalculateGain(String nonlinearity, double param) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(java.lang.foreign.ValueLayout.JAVA_DOUBLE);
            Native.call(Abi.NN_CALCULATE_GAIN, arena.allocateFrom(nonlinearity), param, out);
            return out.get(java.lang.foreign.ValueLayout.JAVA_DOUBLE, 0);
        }
    }

    /** The op names of a loaded plugin, as the JSON array the library returns. */
    public static String pluginOpsJson(String plugin) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(plugin);
            return Native.readString((buf, cap, needed) -> (int) Abi.PLUGIN_OPS.invokeExact(p, buf, cap, needed));
        }
    }
}
