package dev.webtensor;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The functions of capi/include/webtensor.h the SDK uses, as FFM downcall handles, the
 * library loading, and the status-to-exception mapping. Everything else in the
 * SDK calls through here; nothing outside this package sees a raw handle call.
 */
final class Native {
    private Native() {}

    /** Where the jar carries the library (filled by `make java`). */
    static final String RESOURCE = "/dev/webtensor/native/linux-x86_64/libwebtensor.so";

    static final Linker LINKER = Linker.nativeLinker();
    static final SymbolLookup LIB = load();

    // This block looks its two functions up itself rather than through Abi:
    // Abi's handles are made by fn below, so a program whose first touch is
    // an Abi handle initialises Abi, then Native, and Abi's fields are still
    // null while this block runs.
    static {
        int abi = (int) invoke(fn("wt_abi_version", JAVA_INT));
        if (abi != Abi.ABI_VERSION) {
            throw new UnsatisfiedLinkError("webtensor: the loaded libwebtensor has C ABI version " + abi
                    + ", this SDK needs " + Abi.ABI_VERSION);
        }
        // WEBTENSOR_TRACE=path: the library records from its first op; write the trace when the JVM exits.
        MethodHandle exitPath = fn("wt_profile_exit_path", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
        String tracePath = readString((buf, cap, needed) -> (int) exitPath.invokeExact(buf, cap, needed));
        if (!tracePath.isEmpty()) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    call(Abi.PROFILE_WRITE, arena.allocateFrom(tracePath));
                } catch (RuntimeException e) {
                    System.err.println("webtensor: could not write the trace WEBTENSOR_TRACE asked for: " + e.getMessage());
                }
            }, "webtensor-trace"));
        }
    }

    // ---- loading ---------------------------------------------------------------------

    /**
     * -Dwebtensor.library.path (the .so itself or its directory) when set, else the
     * copy inside the jar, written to a temporary file because dlopen needs a path.
     */
    private static SymbolLookup load() {
        String prop = System.getProperty("webtensor.library.path");
        if (prop != null && !prop.isEmpty()) {
            Path p = Path.of(prop);
            if (Files.isDirectory(p)) {
                p = p.resolve("libwebtensor.so");
            }
            if (!Files.isRegularFile(p)) {
                throw new UnsatisfiedLinkError("webtensor: -Dwebtensor.library.path=" + prop + ": no such library");
            }
            return SymbolLookup.libraryLookup(p, Arena.global());
        }
        try (InputStream in = Native.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("webtensor: the jar carries no " + RESOURCE
                        + " (built without `make java`?); set -Dwebtensor.library.path");
            }
            Path tmp = Files.createTempFile("libwebtensor-", ".so");
            try {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                return SymbolLookup.libraryLookup(tmp, Arena.global());
            } finally {
                // Linux keeps a mapped file alive after unlink, so no temp file is left behind.
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("webtensor: cannot extract the native library", e);
        }
    }

    static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
        MemorySegment addr = LIB.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError("webtensor: libwebtensor has no symbol " + name));
        return LINKER.downcallHandle(addr, FunctionDescriptor.of(ret, args));
    }

    // ---- calling ---------------------------------------------------------------------

    /**
     * Calls a handle with boxed arguments. The hot paths (ops, free, metadata) go
     * through the typed helpers below, which use invokeExact.
     */
    static Object invoke(MethodHandle mh, Object... args) {
        try {
            return mh.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Calls a status-returning function and throws on failure. */
    static void call(MethodHandle mh, Object... args) {
        check((int) invoke(mh, args));
    }

    static void check(int status) {
        if (status != Abi.OK) {
            throw error(status);
        }
    }

    /**
     * The exception for a failed status. wt_last_error is per OS thread, and this
     * runs right after the failing downcall on the same thread (a virtual thread
     * cannot be unmounted between the two: there is no blocking point).
     */
    static WebtensorException error(int status) {
        String msg = cString((MemorySegment) invoke(Abi.LAST_ERROR));
        return status == Abi.ERR_UNSUPPORTED ? new UnsupportedError(statusName(status), msg)
                : new WebtensorException(status, statusName(status), msg);
    }

    static String statusName(int status) {
        return cString((MemorySegment) invoke(Abi.STATUS_STRING, status));
    }

    static String cString(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? "" : p.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** One function that fills a buffer under the header's cap/needed protocol. */
    @FunctionalInterface
    interface BufferCall {
        int call(MemorySegment buf, long cap, MemorySegment needed) throws Throwable;
    }

    /** Calls f, growing the buffer to the size the library asks for. */
    static String readString(BufferCall f) {
        long cap = 256;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment needed = arena.allocate(JAVA_LONG);
            while (true) {
                MemorySegment buf = arena.allocate(cap);
                int st = f.call(buf, cap, needed);
                long want = needed.get(JAVA_LONG, 0);
                if (st == Abi.ERR_BUFFER_TOO_SMALL && want > cap) {
                    cap = want;
                    continue;
                }
                check(st);
                return buf.getString(0);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // ---- typed hot paths ----------------------------------------------------------------

    static int free(long h) {
        try {
            return (int) Abi.TENSOR_FREE.invokeExact(h);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int op(MemorySegment name, MemorySegment in, int nIn, MemorySegment attrs, int nAttrs,
                  MemorySegment out, int cap, MemorySegment nOut) {
        try {
            return (int) Abi.OP.invokeExact(name, in, nIn, attrs, nAttrs, out, cap, nOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int graphRun(long graph, MemorySegment in, int nIn, MemorySegment out, int cap, MemorySegment nOut) {
        try {
            return (int) Abi.GRAPH_RUN.invokeExact(graph, in, nIn, out, cap, nOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int graphFree(long graph) {
        try {
            return (int) Abi.GRAPH_FREE.invokeExact(graph);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A function of (handle, int32_t* out); returns *out. */
    static int handleInt(MethodHandle mh, long h) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            check((int) mh.invokeExact(h, out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A function of (handle, int64_t* out); returns *out. */
    static long handleLong(MethodHandle mh, long h) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            check((int) mh.invokeExact(h, out));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A function of (int64_t* out) with no handle; returns *out. */
    static long outLong(MethodHandle mh) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            check((int) mh.invokeExact(out));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
