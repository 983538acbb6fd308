package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * CUDA devices, as Python's {@code wt.cuda} and torch.cuda: whether one is
 * here, what it is, its memory and options. Every answer is the library's
 * (wt_device_info_json and the other wt_device_* functions): the caching
 * allocator and the driver and library versions live in Go. Where CUDA does
 * not open, {@link #isAvailable} is false, {@link #deviceCount} 0, and the
 * calls that need a device throw an {@link UnsupportedError} whose message is
 * the library's reason (no driver library, no device).
 */
public final class Cuda {
    private Cuda() {}

    private static String name(String device) {
        if (device == null || !device.startsWith("cuda")) {
            throw new IllegalArgumentException("\"" + device + "\" is not a CUDA device (want \"cuda\" or \"cuda:N\")");
        }
        return device;
    }

    /** Whether a CUDA device opens here. */
    public static boolean isAvailable() {
        return deviceCount() > 0;
    }

    /** How many CUDA devices open here. */
    public static int deviceCount() {
        return (int) Webtensor.devices().stream().filter(d -> d.startsWith("cuda")).count();
    }

    /**
     * What the library reports on device: the GPU and its libraries ("cuda"),
     * the allocator's counters ("memory"), the driver's free and total bytes
     * ("device_free_bytes", "device_total_bytes"), "allow_tf32" and the
     * fallback count, as the JSON's Maps, Lists, Strings, Longs, Doubles and
     * Booleans.
     */
    public static Map<String, Object> getDeviceProperties(String device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = arena.allocateFrom(name(device));
            return Json.object(Native.readString((buf, cap, needed) -> (int) Abi.DEVICE_INFO_JSON.invokeExact(d, buf, cap, needed)),
                    "wt_device_info_json");
        }
    }

    public static Map<String, Object> getDeviceProperties() {
        return getDeviceProperties("cuda");
    }

    /** The caching allocator's counters in bytes: Allocated, Reserved, PeakAllocated, ... */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> memoryStats(String device) {
        Object m = getDeviceProperties(device).get("memory");
        if (!(m instanceof Map)) {
            throw new IllegalStateException(device + " reports no memory counters");
        }
        return (Map<String, Object>) m;
    }

    public static Map<String, Object> memoryStats() {
        return memoryStats("cuda");
    }

    /** Bytes held by tensors (in the allocator's size classes). */
    public static long memoryAllocated(String device) {
        return ((Number) memoryStats(device).getOrDefault("Allocated", 0L)).longValue();
    }

    public static long memoryAllocated() {
        return memoryAllocated("cuda");
    }

    /** Bytes taken from the driver: held by tensors or cached for reuse. */
    public static long memoryReserved(String device) {
        return ((Number) memoryStats(device).getOrDefault("Reserved", 0L)).longValue();
    }

    public static long memoryReserved() {
        return memoryReserved("cuda");
    }

    /** Gives cached, unused device memory back to the driver. */
    public static void emptyCache(String device) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.DEVICE_EMPTY_CACHE, arena.allocateFrom(name(device)));
        }
    }

    public static void emptyCache() {
        emptyCache("cuda");
    }

    /** Waits for every op queued on device; a check a kernel failed since the last wait is thrown here. */
    public static void synchronize(String device) {
        Webtensor.synchronize(name(device));
    }

    public static void synchronize() {
        synchronize("cuda");
    }

    /** Lets f32 matrix products use TF32 tensor cores (off by default). */
    public static void setAllowTf32(boolean on, String device) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.DEVICE_SET_OPTION, arena.allocateFrom(name(device)), arena.allocateFrom("allow_tf32"), on ? 1L : 0L);
        }
    }

    public static void setAllowTf32(boolean on) {
        setAllowTf32(on, "cuda");
    }

    /** The CUstream the device's work is queued on, as an integer (for DLPack exchange with other CUDA code). */
    public static long currentStream(String device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.DEVICE_STREAM, arena.allocateFrom(name(device)), out);
            return out.get(JAVA_LONG, 0);
        }
    }

    public static long currentStream() {
        return currentStream("cuda");
    }
}
