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
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The functions of capi/include/webtensor.h the SDK uses, as FFM downcall handles, the
 * library loading, and the status-to-exception mapping. Everything else in the
 * SDK calls through here; nothing outside this package sees a raw handle call.
 */
final class Native {
    private Native() {}

    static final int OK = 0, ERR_INVALID = 1, ERR_HANDLE = 2, ERR_UNSUPPORTED = 3, ERR_OOM = 4,
            ERR_BUFFER_TOO_SMALL = 5, ERR_INTERNAL = 6, ERR_IO = 7;
    static final int ABI_VERSION = 1;
    /** Where the jar carries the library (filled by `make java`). */
    static final String RESOURCE = "/dev/webtensor/native/linux-x86_64/libwebtensor.so";

    static final Linker LINKER = Linker.nativeLinker();
    static final SymbolLookup LIB = load();

    /** wt_attr: a flat struct, laid out field by field as the header says. */
    static final MemoryLayout ATTR = MemoryLayout.structLayout(
            ADDRESS.withName("name"), JAVA_INT.withName("kind"), MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("i"), JAVA_DOUBLE.withName("f"), ADDRESS.withName("s"),
            ADDRESS.withName("ints"), ADDRESS.withName("floats"), JAVA_LONG.withName("len"));

    private static final ValueLayout I = JAVA_INT, L = JAVA_LONG, A = ADDRESS;

    static final MethodHandle VERSION = fn("wt_version", A);
    static final MethodHandle ABI = fn("wt_abi_version", I);
    static final MethodHandle BUILD_INFO = fn("wt_build_info", I, A, L, A);
    static final MethodHandle STATUS_STRING = fn("wt_status_string", A, I);
    static final MethodHandle LAST_ERROR = fn("wt_last_error", A);
    static final MethodHandle DEVICE_COUNT = fn("wt_device_count", I, A);
    static final MethodHandle DEVICE_NAME = fn("wt_device_name", I, I, A, L, A);
    static final MethodHandle DEFAULT_DEVICE = fn("wt_default_device", I, A, L, A);
    static final MethodHandle SET_DEFAULT_DEVICE = fn("wt_set_default_device", I, A);
    static final MethodHandle FALLBACKS = fn("wt_fallbacks_json", I, I, A, L, A);
    static final MethodHandle SET_NUM_THREADS = fn("wt_set_num_threads", I, I);
    static final MethodHandle GET_NUM_THREADS = fn("wt_get_num_threads", I, A);
    static final MethodHandle PROFILE_START = fn("wt_profile_start", I, I);
    static final MethodHandle PROFILE_STOP = fn("wt_profile_stop", I);
    static final MethodHandle PROFILE_WRITE = fn("wt_profile_write", I, A);
    static final MethodHandle PROFILE_JSON = fn("wt_profile_json", I, A, L, A);
    static final MethodHandle PROFILE_EXIT_PATH = fn("wt_profile_exit_path", I, A, L, A);
    static final MethodHandle FROM_DATA = fn("wt_tensor_from_data", I, A, L, I, A, I, A, A);
    static final MethodHandle ZEROS = fn("wt_tensor_zeros", I, I, A, I, A, A);
    static final MethodHandle RETAIN = fn("wt_tensor_retain", I, L);
    static final MethodHandle FREE = fn("wt_tensor_free", I, L);
    static final MethodHandle LIVE_TENSORS = fn("wt_live_tensors", I, A);
    static final MethodHandle NDIM = fn("wt_tensor_ndim", I, L, A);
    static final MethodHandle SHAPE = fn("wt_tensor_shape", I, L, A, I);
    static final MethodHandle STRIDES = fn("wt_tensor_strides", I, L, A, I);
    static final MethodHandle NUMEL = fn("wt_tensor_numel", I, L, A);
    static final MethodHandle DTYPE = fn("wt_tensor_dtype", I, L, A);
    static final MethodHandle DEVICE = fn("wt_tensor_device", I, L, A, L, A);
    static final MethodHandle IS_CONTIGUOUS = fn("wt_tensor_is_contiguous", I, L, A);
    static final MethodHandle TO_HOST = fn("wt_tensor_to_host", I, L, A, L);
    static final MethodHandle CONTIGUOUS = fn("wt_tensor_contiguous", I, L, A);
    static final MethodHandle TO_DEVICE = fn("wt_tensor_to_device", I, L, A, A);
    static final MethodHandle OP = fn("wt_op", I, A, A, I, A, I, A, I, A);
    static final MethodHandle MANIFEST = fn("wt_manifest_json", I, A, L, A);
    static final MethodHandle SET_REQUIRES_GRAD = fn("wt_tensor_set_requires_grad", I, L, I);
    static final MethodHandle REQUIRES_GRAD = fn("wt_tensor_requires_grad", I, L, A);
    static final MethodHandle BACKWARD = fn("wt_backward", I, L, L);
    static final MethodHandle GRAD = fn("wt_tensor_grad", I, L, A);
    static final MethodHandle ZERO_GRAD = fn("wt_tensor_zero_grad", I, L);
    static final MethodHandle DETACH = fn("wt_tensor_detach", I, L, A);
    static final MethodHandle NO_GRAD_ENTER = fn("wt_no_grad_enter", I);
    static final MethodHandle NO_GRAD_EXIT = fn("wt_no_grad_exit", I);
    static final MethodHandle MANUAL_SEED = fn("wt_manual_seed", I, L);
    static final MethodHandle RNG_STATE = fn("wt_rng_state", I, A, A);
    static final MethodHandle SET_RNG_STATE = fn("wt_set_rng_state", I, L, L);
    static final MethodHandle TO_DLPACK_VERSIONED = fn("wt_to_dlpack_versioned", I, L, A);
    static final MethodHandle TO_DLPACK = fn("wt_to_dlpack", I, L, A);
    static final MethodHandle FROM_DLPACK_VERSIONED = fn("wt_from_dlpack_versioned", I, A, A);
    static final MethodHandle FROM_DLPACK = fn("wt_from_dlpack", I, A, A);
    static final MethodHandle LIVE_DLPACK_EXPORTS = fn("wt_live_dlpack_exports", I, A);
    static final MethodHandle PLUGIN_LOAD = fn("wt_plugin_load", I, A, A, L, A);
    static final MethodHandle PLUGIN_LOAD_BYTES = fn("wt_plugin_load_bytes", I, A, L, A, A, L, A);
    static final MethodHandle PLUGIN_OPS = fn("wt_plugin_ops", I, A, A, L, A);
    static final MethodHandle TUNING_POLICY_SET = fn("wt_tuning_policy_set", I, A, A);
    static final MethodHandle DEVICE_TUNING = fn("wt_device_tuning_json", I, A, A, L, A);
    // Devices (Cuda, Webtensor.synchronize).
    static final MethodHandle DEVICE_SYNC = fn("wt_device_sync", I, A);
    static final MethodHandle DEVICE_INFO_JSON = fn("wt_device_info_json", I, A, A, L, A);
    static final MethodHandle DEVICE_EMPTY_CACHE = fn("wt_device_empty_cache", I, A);
    static final MethodHandle DEVICE_SET_OPTION = fn("wt_device_set_option", I, A, A, L);
    static final MethodHandle DEVICE_STREAM = fn("wt_device_stream", I, A, A);
    static final MethodHandle TRACE_BEGIN = fn("wt_trace_begin", I, A, I);
    static final MethodHandle TRACE_END = fn("wt_trace_end", I, A, I, A);
    static final MethodHandle TRACE_ABORT = fn("wt_trace_abort", I);
    static final MethodHandle GRAPH_RUN = fn("wt_graph_run", I, L, A, I, A, I, A);
    static final MethodHandle GRAPH_TEXT = fn("wt_graph_text", I, L, A, L, A);
    static final MethodHandle GRAPH_FREE = fn("wt_graph_free", I, L);
    static final MethodHandle SAFETENSORS_HEADER = fn("wt_safetensors_header", I, A, L, L, A, A, L, A);
    // Training and state dicts (StateDict, NativeOptimizer, Webtensor's lrSchedule and clipping).
    static final MethodHandle OPTIMIZER_NEW = fn("wt_optimizer_new", I, A, A, I, A, I, A);
    static final MethodHandle OPTIMIZER_SET = fn("wt_optimizer_set", I, L, A, I);
    static final MethodHandle OPTIMIZER_STEP = fn("wt_optimizer_step", I, L);
    static final MethodHandle OPTIMIZER_ZERO_GRAD = fn("wt_optimizer_zero_grad", I, L);
    static final MethodHandle OPTIMIZER_STATE = fn("wt_optimizer_state", I, L, A);
    static final MethodHandle OPTIMIZER_LOAD_STATE = fn("wt_optimizer_load_state", I, L, L);
    static final MethodHandle OPTIMIZER_FREE = fn("wt_optimizer_free", I, L);
    static final MethodHandle LR_SCHEDULE = fn("wt_lr_schedule", I, A, A, I, JAVA_DOUBLE, L, A);
    static final MethodHandle CLIP_GRAD_NORM = fn("wt_clip_grad_norm", I, A, I, JAVA_DOUBLE, JAVA_DOUBLE, A);
    static final MethodHandle CLIP_GRAD_VALUE = fn("wt_clip_grad_value", I, A, I, JAVA_DOUBLE);
    static final MethodHandle NN_INIT = fn("wt_nn_init", I, L, A, A, I);
    static final MethodHandle NN_CALCULATE_GAIN = fn("wt_nn_calculate_gain", I, A, JAVA_DOUBLE, A);
    static final MethodHandle STATE_NEW = fn("wt_state_new", I, A);
    static final MethodHandle STATE_FREE = fn("wt_state_free", I, L);
    static final MethodHandle STATE_PUT = fn("wt_state_put", I, L, A, L);
    static final MethodHandle STATE_COUNT = fn("wt_state_count", I, L, A);
    static final MethodHandle STATE_NAME = fn("wt_state_name", I, L, I, A, L, A);
    static final MethodHandle STATE_GET = fn("wt_state_get", I, L, I, A);
    static final MethodHandle STATE_SET_METADATA = fn("wt_state_set_metadata", I, L, A, A);
    static final MethodHandle STATE_METADATA_COUNT = fn("wt_state_metadata_count", I, L, A);
    static final MethodHandle STATE_METADATA_KEY = fn("wt_state_metadata_key", I, L, I, A, L, A);
    static final MethodHandle STATE_METADATA_VALUE = fn("wt_state_metadata_value", I, L, I, A, L, A);
    static final MethodHandle STATE_SAVE = fn("wt_state_save", I, L, A);
    static final MethodHandle STATE_TO_BYTES = fn("wt_state_to_bytes", I, L, A, L, A);
    static final MethodHandle STATE_LOAD = fn("wt_state_load", I, A, A, I, A);
    static final MethodHandle STATE_FROM_BYTES = fn("wt_state_from_bytes", I, A, L, A, A, A);
    static final MethodHandle STATE_ASSIGN = fn("wt_state_assign", I, L, L, I, A);
    // ONNX models (Onnx).
    static final MethodHandle ONNX_LOAD = fn("wt_onnx_load", I, A, A, A);
    static final MethodHandle ONNX_LOAD_BYTES = fn("wt_onnx_load_bytes", I, A, L, A, A);
    static final MethodHandle ONNX_FREE = fn("wt_onnx_free", I, L);
    static final MethodHandle ONNX_INPUT_COUNT = fn("wt_onnx_input_count", I, L, A);
    static final MethodHandle ONNX_INPUT_NAME = fn("wt_onnx_input_name", I, L, I, A, L, A);
    static final MethodHandle ONNX_OUTPUT_COUNT = fn("wt_onnx_output_count", I, L, A);
    static final MethodHandle ONNX_OUTPUT_NAME = fn("wt_onnx_output_name", I, L, I, A, L, A);
    static final MethodHandle ONNX_INFO_JSON = fn("wt_onnx_info_json", I, L, A, L, A);
    static final MethodHandle ONNX_RUN = fn("wt_onnx_run", I, L, A, A, I, A, I, A);
    static final MethodHandle ONNX_RUN_VALUES = fn("wt_onnx_run_values", I, L, A, I, A, A);
    static final MethodHandle ONNX_VALUES_LAYOUT_JSON = fn("wt_onnx_values_layout_json", I, L, A, L, A);
    static final MethodHandle ONNX_VALUES_TENSORS = fn("wt_onnx_values_tensors", I, L, A, I, A);
    static final MethodHandle ONNX_VALUES_FREE = fn("wt_onnx_values_free", I, L);
    // Datasets and loaders (NativeDataset, DataLoader, Data).
    static final MethodHandle DATASET_OPEN = fn("wt_dataset_open", I, A, A);
    static final MethodHandle DATASET_OPEN_BYTES = fn("wt_dataset_open_bytes", I, A, A, L, A);
    static final MethodHandle DATASET_FROM_TENSORS = fn("wt_dataset_from_tensors", I, A, A, I, A);
    static final MethodHandle DATASET_INFO_JSON = fn("wt_dataset_info_json", I, L, A, L, A);
    static final MethodHandle DATASET_GET = fn("wt_dataset_get", I, L, L, A, A, I, A);
    static final MethodHandle DATASET_FREE = fn("wt_dataset_free", I, L);
    static final MethodHandle LOADER_NEW = fn("wt_loader_new", I, L, A, A);
    static final MethodHandle LOADER_LEN = fn("wt_loader_len", I, L, A);
    static final MethodHandle LOADER_EPOCH = fn("wt_loader_epoch", I, L, L);
    static final MethodHandle LOADER_NEXT = fn("wt_loader_next", I, L, A, I, A);
    static final MethodHandle LOADER_FREE = fn("wt_loader_free", I, L);
    static final MethodHandle DATA_PERMUTATION = fn("wt_data_permutation", I, L, L, L, A);
    // The domain libraries (Multimodal, Diffusion).
    static final MethodHandle TOKENIZER_LOAD = fn("wt_tokenizer_load", I, A, A);
    static final MethodHandle TOKENIZER_LOAD_BYTES = fn("wt_tokenizer_load_bytes", I, A, L, A);
    static final MethodHandle TOKENIZER_FREE = fn("wt_tokenizer_free", I, L);
    static final MethodHandle TOKENIZER_VOCAB_SIZE = fn("wt_tokenizer_vocab_size", I, L, A);
    static final MethodHandle TOKENIZER_ENCODE = fn("wt_tokenizer_encode", I, L, A, I, I, L, A, A, A, A);
    static final MethodHandle TOKENIZER_DECODE = fn("wt_tokenizer_decode", I, L, A, L, I, A, L, A);
    static final MethodHandle IMAGE_PROCESSOR_LOAD = fn("wt_image_processor_load", I, A, A);
    static final MethodHandle IMAGE_PROCESSOR_LOAD_BYTES = fn("wt_image_processor_load_bytes", I, A, L, A);
    static final MethodHandle IMAGE_PROCESSOR_FREE = fn("wt_image_processor_free", I, L);
    static final MethodHandle IMAGE_PROCESSOR_PREPROCESS = fn("wt_image_processor_preprocess", I, L, A, I, A, A);
    static final MethodHandle IMAGE_PROCESSOR_PREPROCESS_VIDEO = fn("wt_image_processor_preprocess_video", I, L, A, I, A, A);
    static final MethodHandle VIDEO_SAMPLE_FRAME_INDICES = fn("wt_video_sample_frame_indices", I, I, I, I, I, A);
    static final MethodHandle VIDEO_UNIFORM_FRAME_INDICES = fn("wt_video_uniform_frame_indices", I, I, I, A);
    static final MethodHandle SENTENCE_ENCODER_LOAD = fn("wt_sentence_encoder_load", I, A, A, A);
    static final MethodHandle SENTENCE_ENCODER_LOAD_ZIP = fn("wt_sentence_encoder_load_zip", I, A, L, A, A);
    static final MethodHandle SENTENCE_ENCODER_FREE = fn("wt_sentence_encoder_free", I, L);
    static final MethodHandle SENTENCE_ENCODER_DIM = fn("wt_sentence_encoder_dim", I, L, A);
    static final MethodHandle SENTENCE_ENCODER_ENCODE = fn("wt_sentence_encoder_encode", I, L, A, I, I, A);
    static final MethodHandle CLIP_LOAD = fn("wt_clip_load", I, A, A, A);
    static final MethodHandle CLIP_LOAD_ZIP = fn("wt_clip_load_zip", I, A, L, A, A);
    static final MethodHandle CLIP_FREE = fn("wt_clip_free", I, L);
    static final MethodHandle CLIP_ZERO_SHOT = fn("wt_clip_zero_shot", I, L, L, A, I, A);
    static final MethodHandle CLIP_TEXT_FEATURES = fn("wt_clip_text_features", I, L, A, I, A);
    static final MethodHandle CLIP_IMAGE_FEATURES = fn("wt_clip_image_features", I, L, L, A);
    static final MethodHandle WHISPER_LOAD = fn("wt_whisper_load", I, A, A, A);
    static final MethodHandle WHISPER_FREE = fn("wt_whisper_free", I, L);
    static final MethodHandle WHISPER_SAMPLING_RATE = fn("wt_whisper_sampling_rate", I, L, A);
    static final MethodHandle WHISPER_TOKENIZER = fn("wt_whisper_tokenizer", I, L, A);
    static final MethodHandle WHISPER_GENERATE = fn("wt_whisper_generate", I, L, A, I, I, I, A);
    static final MethodHandle TIMESFORMER_LOAD = fn("wt_timesformer_load", I, A, A, A);
    static final MethodHandle TIMESFORMER_FREE = fn("wt_timesformer_free", I, L);
    static final MethodHandle TIMESFORMER_INFO_JSON = fn("wt_timesformer_info_json", I, L, A, L, A);
    static final MethodHandle TIMESFORMER_FORWARD = fn("wt_timesformer_forward", I, L, L, A, A);
    static final MethodHandle WHISPER_STREAM_NEW = fn("wt_whisper_stream_new", I, L, I, I, I, I, JAVA_DOUBLE, A);
    static final MethodHandle WHISPER_STREAM_FREE = fn("wt_whisper_stream_free", I, L);
    static final MethodHandle WHISPER_STREAM_PUSH = fn("wt_whisper_stream_push", I, L, L, I, A);
    static final MethodHandle WHISPER_STREAM_READ = fn("wt_whisper_stream_read", I, L, A, L, A);
    static final MethodHandle SPEECHT5_LOAD = fn("wt_speecht5_load", I, A, A, A, A);
    static final MethodHandle SPEECHT5_FREE = fn("wt_speecht5_free", I, L);
    static final MethodHandle SPEECHT5_SAMPLING_RATE = fn("wt_speecht5_sampling_rate", I, L, A);
    static final MethodHandle SPEECHT5_TOKENIZE = fn("wt_speecht5_tokenize", I, L, A, I, A, A);
    static final MethodHandle SPEECHT5_GENERATE = fn("wt_speecht5_generate", I, L, L, L, L, JAVA_DOUBLE, JAVA_DOUBLE,
            JAVA_DOUBLE, I, L, L, I, A, A, A);
    static final MethodHandle SPEECHT5_VOCODE = fn("wt_speecht5_vocode", I, L, L, A);
    static final MethodHandle CONFORMER_LOAD = fn("wt_conformer_load", I, A, A, A);
    static final MethodHandle CONFORMER_FREE = fn("wt_conformer_free", I, L);
    static final MethodHandle CONFORMER_SAMPLING_RATE = fn("wt_conformer_sampling_rate", I, L, A);
    static final MethodHandle CONFORMER_ENCODE = fn("wt_conformer_encode", I, L, A, I, A, A);
    static final MethodHandle AUDIO_RESAMPLE = fn("wt_audio_resample", I, L, I, I, A);
    static final MethodHandle DIFFUSION_LOAD = fn("wt_diffusion_load", I, A, A, A);
    static final MethodHandle DIFFUSION_LOAD_ZIP = fn("wt_diffusion_load_zip", I, A, L, A, A);
    static final MethodHandle DIFFUSION_FREE = fn("wt_diffusion_free", I, L);
    static final MethodHandle DIFFUSION_INFO_JSON = fn("wt_diffusion_info_json", I, L, A, L, A);
    static final MethodHandle DIFFUSION_GENERATE = fn("wt_diffusion_generate", I, L, I, I, L, A, A);
    static final MethodHandle DIFFUSION_GENERATE_CLASSES = fn("wt_diffusion_generate_classes", I, L, A, I, I, L, JAVA_DOUBLE, A, A);
    static final MethodHandle DIFFUSION_GENERATE_TEXT =
            fn("wt_diffusion_generate_text", I, L, A, I, A, I, I, I, L, JAVA_DOUBLE, I, I, A, L, A);
    static final MethodHandle DIFFUSION_ENCODE_TEXT = fn("wt_diffusion_encode_text", I, L, A, I, A);
    static final MethodHandle DIFFUSION_QUANTIZE_INT8 = fn("wt_diffusion_quantize_int8", I, L);
    static final MethodHandle AUTO_TUNE_GRAPH = fn("wt_auto_tune_graph", I, L, A, I, A, A, L, A);
    static final MethodHandle AUTO_JOURNAL_JSON = fn("wt_auto_journal_json", I, A, A, L, A);
    static final MethodHandle AUTO_PARALLEL_PLAN = fn("wt_auto_parallel_plan", I, L, A, A, L, A);
    static final MethodHandle AUTO_ROLLBACK = fn("wt_auto_rollback", I, A, A, A, L, A);

    static {
        int abi = (int) invoke(ABI);
        if (abi != ABI_VERSION) {
            throw new UnsatisfiedLinkError("webtensor: the loaded libwebtensor has C ABI version " + abi
                    + ", this SDK needs " + ABI_VERSION);
        }
        // WEBTENSOR_TRACE=path: the library records from its first op; write the trace when the JVM exits.
        String tracePath = readString((buf, cap, needed) -> (int) PROFILE_EXIT_PATH.invokeExact(buf, cap, needed));
        if (!tracePath.isEmpty()) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    call(PROFILE_WRITE, arena.allocateFrom(tracePath));
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

    private static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
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
        if (status != OK) {
            throw error(status);
        }
    }

    /**
     * The exception for a failed status. wt_last_error is per OS thread, and this
     * runs right after the failing downcall on the same thread (a virtual thread
     * cannot be unmounted between the two: there is no blocking point).
     */
    static WebtensorException error(int status) {
        String msg = cString((MemorySegment) invoke(LAST_ERROR));
        return status == ERR_UNSUPPORTED ? new UnsupportedError(statusName(status), msg)
                : new WebtensorException(status, statusName(status), msg);
    }

    static String statusName(int status) {
        return cString((MemorySegment) invoke(STATUS_STRING, status));
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
                if (st == ERR_BUFFER_TOO_SMALL && want > cap) {
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

    /**
     * Calls f once into a buffer of cap bytes: for calls whose work cannot be
     * redone to fill a larger buffer (an auto-agent's tune, a rollback), which
     * the header bounds.
     */
    static String oneShot(long cap, BufferCall f) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment needed = arena.allocate(JAVA_LONG);
            MemorySegment buf = arena.allocate(cap);
            check(f.call(buf, cap, needed));
            return buf.getString(0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // ---- typed hot paths ----------------------------------------------------------------

    static int free(long h) {
        try {
            return (int) FREE.invokeExact(h);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int op(MemorySegment name, MemorySegment in, int nIn, MemorySegment attrs, int nAttrs,
                  MemorySegment out, int cap, MemorySegment nOut) {
        try {
            return (int) OP.invokeExact(name, in, nIn, attrs, nAttrs, out, cap, nOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int graphRun(long graph, MemorySegment in, int nIn, MemorySegment out, int cap, MemorySegment nOut) {
        try {
            return (int) GRAPH_RUN.invokeExact(graph, in, nIn, out, cap, nOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int graphFree(long graph) {
        try {
            return (int) GRAPH_FREE.invokeExact(graph);
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
