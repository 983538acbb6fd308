"""ctypes bindings of capi/include/webtensor.h and dlpack.h, and error mapping.

Every function of the header is declared here with its argtypes and restype;
the rest of the package calls them through `call(name, *args)`, which raises
the Python exception that fits the status and the library's message.
"""

from __future__ import annotations

import ctypes as C
import errno
import os
import re
from pathlib import Path

# The DLPack structs (dlpack.h) live in _dlpack_h, shared with capi/test;
# re-exported here, where the rest of the package and its users find them.
from ._dlpack_h import (  # noqa: F401
    DELETER,
    FLAG_IS_COPIED,
    FLAG_READ_ONLY,
    DLDataType,
    DLDevice,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLPackVersion,
    DLTensor,
)

# ---- status codes and dtypes (webtensor.h) -----------------------------------

OK, ERR_INVALID, ERR_HANDLE, ERR_UNSUPPORTED, ERR_OOM, ERR_BUFFER_TOO_SMALL, ERR_INTERNAL, ERR_IO = range(8)
ATTR_INT, ATTR_FLOAT, ATTR_BOOL, ATTR_STRING, ATTR_INTS, ATTR_FLOATS, ATTR_DTYPE = range(1, 8)
ABI_VERSION = 1


class UnsupportedError(RuntimeError):
    """A valid request the library cannot serve (absent device, dtype, DLPack layout)."""


class Attr(C.Structure):
    """wt_attr: one named attribute of an op call."""

    _fields_ = [
        ("name", C.c_char_p),
        ("kind", C.c_int32),
        ("i", C.c_int64),
        ("f", C.c_double),
        ("s", C.c_char_p),
        ("ints", C.POINTER(C.c_int64)),
        ("floats", C.POINTER(C.c_double)),
        ("len", C.c_int64),
    ]


# ---- the library ----------------------------------------------------------------

_i32, _i64, _u64, _sz, _s = C.c_int32, C.c_int64, C.c_uint64, C.c_size_t, C.c_char_p
_p = C.POINTER
_BUF = [C.c_char_p, _sz, _p(_sz)]  # the buffer-size protocol: buf, cap, needed

SIGNATURES: dict[str, tuple[list, object]] = {
    "wt_version": ([], _s),
    "wt_abi_version": ([], _i32),
    "wt_build_info": (_BUF, _i32),
    "wt_status_string": ([_i32], _s),
    "wt_last_error": ([], _s),
    "wt_device_count": ([_p(_i32)], _i32),
    "wt_device_name": ([_i32, *_BUF], _i32),
    "wt_default_device": (_BUF, _i32),
    "wt_set_default_device": ([_s], _i32),
    "wt_device_sync": ([_s], _i32),
    "wt_device_info_json": ([_s, *_BUF], _i32),
    "wt_device_empty_cache": ([_s], _i32),
    "wt_device_tuning_json": ([_s, *_BUF], _i32),
    "wt_device_set_option": ([_s, _s, _i64], _i32),
    "wt_device_stream": ([_s, _p(_u64)], _i32),
    "wt_fallbacks_json": ([_i32, *_BUF], _i32),
    "wt_set_num_threads": ([_i32], _i32),
    "wt_profile_start": ([_i32], _i32),
    "wt_profile_stop": ([], _i32),
    "wt_profile_write": ([_s], _i32),
    "wt_profile_json": (_BUF, _i32),
    "wt_profile_exit_path": (_BUF, _i32),
    "wt_get_num_threads": ([_p(_i32)], _i32),
    "wt_tensor_from_data": ([C.c_void_p, _sz, _i32, _p(_i64), _i32, _s, _p(_i64)], _i32),
    "wt_tensor_zeros": ([_i32, _p(_i64), _i32, _s, _p(_i64)], _i32),
    "wt_tensor_retain": ([_i64], _i32),
    "wt_tensor_free": ([_i64], _i32),
    "wt_live_tensors": ([_p(_i64)], _i32),
    "wt_tensor_ndim": ([_i64, _p(_i32)], _i32),
    "wt_tensor_shape": ([_i64, _p(_i64), _i32], _i32),
    "wt_tensor_strides": ([_i64, _p(_i64), _i32], _i32),
    "wt_tensor_numel": ([_i64, _p(_i64)], _i32),
    "wt_tensor_dtype": ([_i64, _p(_i32)], _i32),
    "wt_tensor_device": ([_i64, *_BUF], _i32),
    "wt_tensor_is_contiguous": ([_i64, _p(_i32)], _i32),
    "wt_tensor_to_host": ([_i64, C.c_void_p, _sz], _i32),
    "wt_tensor_contiguous": ([_i64, _p(_i64)], _i32),
    "wt_tensor_to_device": ([_i64, _s, _p(_i64)], _i32),
    "wt_op": ([_s, _p(_i64), _i32, _p(Attr), _i32, _p(_i64), _i32, _p(_i32)], _i32),
    "wt_manifest_json": (_BUF, _i32),
    "wt_tensor_set_requires_grad": ([_i64, _i32], _i32),
    "wt_tensor_requires_grad": ([_i64, _p(_i32)], _i32),
    "wt_backward": ([_i64, _i64], _i32),
    "wt_tensor_grad": ([_i64, _p(_i64)], _i32),
    "wt_tensor_zero_grad": ([_i64], _i32),
    "wt_tensor_detach": ([_i64, _p(_i64)], _i32),
    "wt_no_grad_enter": ([], _i32),
    "wt_no_grad_exit": ([], _i32),
    "wt_manual_seed": ([_u64], _i32),
    "wt_promote_types": ([_i32, _i32, _p(_i32)], _i32),
    "wt_rng_state": ([_p(_u64), _p(_u64)], _i32),
    "wt_set_rng_state": ([_u64, _u64], _i32),
    "wt_to_dlpack_versioned": ([_i64, _p(_p(DLManagedTensorVersioned))], _i32),
    "wt_to_dlpack": ([_i64, _p(_p(DLManagedTensor))], _i32),
    "wt_from_dlpack_versioned": ([C.c_void_p, _p(_i64)], _i32),
    "wt_from_dlpack": ([C.c_void_p, _p(_i64)], _i32),
    "wt_live_dlpack_exports": ([_p(_i64)], _i32),
    "wt_python_capsule_destructor": ([C.c_void_p, _p(C.c_void_p)], _i32),
    "wt_plugin_load": ([_s, *_BUF], _i32),
    "wt_plugin_load_bytes": ([C.c_void_p, _sz, _s, *_BUF], _i32),
    "wt_plugin_ops": ([_s, *_BUF], _i32),
    "wt_tuning_policy_set": ([_s, _s], _i32),
    "wt_trace_begin": ([_p(_i64), _i32], _i32),
    "wt_trace_end": ([_p(_i64), _i32, _p(_i64)], _i32),
    "wt_trace_abort": ([], _i32),
    "wt_graph_run": ([_i64, _p(_i64), _i32, _p(_i64), _i32, _p(_i32)], _i32),
    "wt_graph_text": ([_i64, *_BUF], _i32),
    "wt_graph_free": ([_i64], _i32),
    "wt_safetensors_header": ([C.c_void_p, _sz, _u64, _s, *_BUF], _i32),
    "wt_nn_init": ([_i64, _s, _p(Attr), _i32], _i32),
    "wt_nn_calculate_gain": ([_s, C.c_double, _p(C.c_double)], _i32),
    "wt_optimizer_new": ([_s, _p(_i64), _i32, _p(Attr), _i32, _p(_i64)], _i32),
    "wt_optimizer_set": ([_i64, _p(Attr), _i32], _i32),
    "wt_optimizer_step": ([_i64], _i32),
    "wt_optimizer_zero_grad": ([_i64], _i32),
    "wt_optimizer_state": ([_i64, _p(_i64)], _i32),
    "wt_optimizer_load_state": ([_i64, _i64], _i32),
    "wt_optimizer_free": ([_i64], _i32),
    "wt_lr_schedule": ([_s, _p(Attr), _i32, C.c_double, _i64, _p(C.c_double)], _i32),
    "wt_clip_grad_norm": ([_p(_i64), _i32, C.c_double, C.c_double, _p(_i64)], _i32),
    "wt_clip_grad_value": ([_p(_i64), _i32, C.c_double], _i32),
    "wt_state_new": ([_p(_i64)], _i32),
    "wt_state_free": ([_i64], _i32),
    "wt_state_put": ([_i64, _s, _i64], _i32),
    "wt_state_count": ([_i64, _p(_i32)], _i32),
    "wt_state_name": ([_i64, _i32, *_BUF], _i32),
    "wt_state_get": ([_i64, _i32, _p(_i64)], _i32),
    "wt_state_set_metadata": ([_i64, _s, _s], _i32),
    "wt_state_metadata_count": ([_i64, _p(_i32)], _i32),
    "wt_state_metadata_key": ([_i64, _i32, *_BUF], _i32),
    "wt_state_metadata_value": ([_i64, _i32, *_BUF], _i32),
    "wt_state_save": ([_i64, _s], _i32),
    "wt_state_to_bytes": ([_i64, C.c_void_p, _sz, _p(_sz)], _i32),
    "wt_state_load": ([_s, _s, _i32, _p(_i64)], _i32),
    "wt_state_from_bytes": ([C.c_void_p, _sz, _s, _s, _p(_i64)], _i32),
    "wt_state_assign": ([_i64, _i64, _i32, _s], _i32),
    "wt_onnx_load": ([_s, _s, _p(_i64)], _i32),
    "wt_onnx_load_bytes": ([C.c_void_p, _sz, _s, _p(_i64)], _i32),
    "wt_onnx_free": ([_i64], _i32),
    "wt_onnx_input_count": ([_i64, _p(_i32)], _i32),
    "wt_onnx_input_name": ([_i64, _i32, *_BUF], _i32),
    "wt_onnx_output_count": ([_i64, _p(_i32)], _i32),
    "wt_onnx_output_name": ([_i64, _i32, *_BUF], _i32),
    "wt_onnx_info_json": ([_i64, *_BUF], _i32),
    "wt_onnx_run": ([_i64, _p(_s), _p(_i64), _i32, _p(_i64), _i32, _p(_i32)], _i32),
    "wt_onnx_run_values": ([_i64, _p(_i64), _i32, _s, _p(_i64)], _i32),
    "wt_onnx_values_layout_json": ([_i64, *_BUF], _i32),
    "wt_onnx_values_tensors": ([_i64, _p(_i64), _i32, _p(_i32)], _i32),
    "wt_onnx_values_free": ([_i64], _i32),
    "wt_tokenizer_load": ([_s, _p(_i64)], _i32),
    "wt_tokenizer_load_bytes": ([C.c_void_p, _sz, _p(_i64)], _i32),
    "wt_tokenizer_free": ([_i64], _i32),
    "wt_tokenizer_vocab_size": ([_i64, _p(_i32)], _i32),
    "wt_tokenizer_encode": ([_i64, _p(_s), _i32, _i32, _i64, _s, _p(_i64), _p(_i64), _p(_i64)], _i32),
    "wt_tokenizer_decode": ([_i64, _p(_i64), _i64, _i32, *_BUF], _i32),
    "wt_image_processor_load": ([_s, _p(_i64)], _i32),
    "wt_image_processor_load_bytes": ([C.c_void_p, _sz, _p(_i64)], _i32),
    "wt_image_processor_free": ([_i64], _i32),
    "wt_image_processor_preprocess": ([_i64, _p(_i64), _i32, _s, _p(_i64)], _i32),
    "wt_image_processor_preprocess_video": ([_i64, _p(_i64), _i32, _s, _p(_i64)], _i32),
    "wt_video_sample_frame_indices": ([_i32, _i32, _i32, C.c_uint32, _p(_i64)], _i32),
    "wt_video_uniform_frame_indices": ([_i32, _i32, _p(_i64)], _i32),
    "wt_sentence_encoder_load": ([_s, _s, _p(_i64)], _i32),
    "wt_sentence_encoder_load_zip": ([C.c_void_p, _sz, _s, _p(_i64)], _i32),
    "wt_sentence_encoder_free": ([_i64], _i32),
    "wt_sentence_encoder_dim": ([_i64, _p(_i32)], _i32),
    "wt_sentence_encoder_encode": ([_i64, _p(_s), _i32, _i32, _p(_i64)], _i32),
    "wt_clip_load": ([_s, _s, _p(_i64)], _i32),
    "wt_clip_load_zip": ([C.c_void_p, _sz, _s, _p(_i64)], _i32),
    "wt_clip_free": ([_i64], _i32),
    "wt_clip_zero_shot": ([_i64, _i64, _p(_s), _i32, _p(_i64)], _i32),
    "wt_clip_text_features": ([_i64, _p(_s), _i32, _p(_i64)], _i32),
    "wt_clip_image_features": ([_i64, _i64, _p(_i64)], _i32),
    "wt_timesformer_load": ([_s, _s, _p(_i64)], _i32),
    "wt_timesformer_free": ([_i64], _i32),
    "wt_timesformer_info_json": ([_i64, *_BUF], _i32),
    "wt_timesformer_forward": ([_i64, _i64, _p(_i64), _p(_i64)], _i32),
    "wt_whisper_load": ([_s, _s, _p(_i64)], _i32),
    "wt_whisper_free": ([_i64], _i32),
    "wt_whisper_sampling_rate": ([_i64, _p(_i32)], _i32),
    "wt_whisper_tokenizer": ([_i64, _p(_i64)], _i32),
    "wt_whisper_generate": ([_i64, _p(_i64), _i32, _i32, _i32, _p(_i64)], _i32),
    "wt_whisper_stream_new": ([_i64, _i32, _i32, _i32, _i32, C.c_double, _p(_i64)], _i32),
    "wt_whisper_stream_free": ([_i64], _i32),
    "wt_whisper_stream_push": ([_i64, _i64, _i32, _p(_i32)], _i32),
    "wt_whisper_stream_read": ([_i64, *_BUF], _i32),
    "wt_speecht5_load": ([_s, _s, _s, _p(_i64)], _i32),
    "wt_speecht5_free": ([_i64], _i32),
    "wt_speecht5_sampling_rate": ([_i64, _p(_i32)], _i32),
    "wt_speecht5_tokenize": ([_i64, _p(_s), _i32, _p(_i64), _p(_i64)], _i32),
    "wt_speecht5_generate": ([_i64, _i64, _i64, _i64, C.c_double, C.c_double, C.c_double, _i32, _u64, _i64, _i32,
                              _p(_i64), _p(_i64), _p(_i64)], _i32),
    "wt_speecht5_vocode": ([_i64, _i64, _p(_i64)], _i32),
    "wt_conformer_load": ([_s, _s, _p(_i64)], _i32),
    "wt_conformer_free": ([_i64], _i32),
    "wt_conformer_sampling_rate": ([_i64, _p(_i32)], _i32),
    "wt_conformer_encode": ([_i64, _p(_i64), _i32, _p(_i64), _p(_i64)], _i32),
    "wt_audio_resample": ([_i64, _i32, _i32, _p(_i64)], _i32),
    "wt_diffusion_load": ([_s, _s, _p(_i64)], _i32),
    "wt_diffusion_load_zip": ([C.c_void_p, _sz, _s, _p(_i64)], _i32),
    "wt_diffusion_free": ([_i64], _i32),
    "wt_diffusion_info_json": ([_i64, *_BUF], _i32),
    "wt_diffusion_generate": ([_i64, _i32, _i32, _u64, _s, _p(_i64)], _i32),
    "wt_diffusion_generate_classes": ([_i64, _p(_i64), _i32, _i32, _u64, C.c_double, _s, _p(_i64)], _i32),
    "wt_diffusion_generate_text": ([_i64, _p(_s), _i32, _p(_s), _i32, _i32, _i32, _u64, C.c_double, _i32, _i32, _s,
                                    _i64, _p(_i64)], _i32),
    "wt_diffusion_encode_text": ([_i64, _p(_s), _i32, _p(_i64)], _i32),
    "wt_diffusion_quantize_int8": ([_i64], _i32),
    "wt_dataset_open": ([_s, _p(_i64)], _i32),
    "wt_dataset_open_bytes": ([_s, C.c_void_p, _sz, _p(_i64)], _i32),
    "wt_dataset_from_tensors": ([_p(_i64), _p(_s), _i32, _p(_i64)], _i32),
    "wt_dataset_free": ([_i64], _i32),
    "wt_dataset_len": ([_i64, _p(_i64)], _i32),
    "wt_dataset_info_json": ([_i64, *_BUF], _i32),
    "wt_dataset_get": ([_i64, _i64, _s, _p(_i64), _i32, _p(_i32)], _i32),
    "wt_loader_new": ([_i64, _s, _p(_i64)], _i32),
    "wt_loader_free": ([_i64], _i32),
    "wt_loader_len": ([_i64, _p(_i64)], _i32),
    "wt_loader_epoch": ([_i64, _i64], _i32),
    "wt_loader_next": ([_i64, _p(_i64), _i32, _p(_i32)], _i32),
    "wt_data_permutation": ([_i64, _u64, _i64, _p(_i64)], _i32),
    "wt_auto_tune_loader": ([_i64, _s, *_BUF], _i32),
    "wt_auto_tune_graph": ([_i64, _p(_i64), _i32, _s, *_BUF], _i32),
    "wt_auto_journal_json": ([_s, *_BUF], _i32),
    "wt_auto_rollback": ([_s, _s, *_BUF], _i32),
    "wt_auto_parallel_plan": ([_i64, _s, *_BUF], _i32),
}


def library_path() -> str:
    """$WEBTENSOR_LIBRARY when set, else the libwebtensor.so shipped in this package."""
    return os.environ.get("WEBTENSOR_LIBRARY") or str(Path(__file__).with_name("libwebtensor.so"))


def _python_sites() -> str:
    """This interpreter's site-packages folders, where pip's nvidia-* wheels
    (PyTorch's CUDA libraries: NVRTC, cuBLAS) live, for the CUDA backend's
    library search. It must be in the environment before the library loads:
    the Go runtime reads the environment once, when it starts."""
    import site
    import sys

    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: "")()
    if user:
        dirs.append(user)
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return os.pathsep.join(dict.fromkeys(dirs))


def _load() -> C.CDLL:
    path = library_path()
    os.environ.setdefault("WEBTENSOR_PYTHON_SITE", _python_sites())
    try:
        lib = C.CDLL(path)
    except OSError as e:
        raise ImportError(f"webtensor: cannot load the native library {path}: {e}") from e
    for name, (argtypes, restype) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    abi = lib.wt_abi_version()
    if abi != ABI_VERSION:
        raise ImportError(f"webtensor: {path} has C ABI version {abi}, this package needs {ABI_VERSION}")
    return lib


lib = _load()

# ---- errors -------------------------------------------------------------------------

_TYPE_WORDS = re.compile(r"\b(dtype|dtypes|kind|floating-point tensors)\b")
_INDEX_WORDS = re.compile(r"out of range|out of bounds")
# The file system's words (Go's os errors) and the errno that makes OSError
# the matching subclass (FileNotFoundError, PermissionError, ...).
_IO_ERRNOS = {"no such file or directory": errno.ENOENT, "permission denied": errno.EACCES,
              "is a directory": errno.EISDIR, "not a directory": errno.ENOTDIR, "no space left": errno.ENOSPC}


def error_for(status: int, message: str) -> Exception:
    """The Python exception for a failed status and the library's message."""
    if status == ERR_INVALID:
        if _INDEX_WORDS.search(message):
            return IndexError(message)
        if _TYPE_WORDS.search(message):
            return TypeError(message)
        return ValueError(message)
    if status == ERR_UNSUPPORTED:
        return UnsupportedError(message)
    if status == ERR_OOM:
        return MemoryError(message)
    if status == ERR_IO:
        code = next((n for words, n in _IO_ERRNOS.items() if words in message), errno.EIO)
        return OSError(code, message)
    name = lib.wt_status_string(status).decode()
    return RuntimeError(f"{message} ({name})" if status == ERR_INTERNAL else message)


def check(status: int) -> None:
    """Raise the exception for status unless it is WT_OK."""
    if status != OK:
        raise error_for(status, lib.wt_last_error().decode(errors="replace"))


def call(name: str, *args) -> None:
    check(getattr(lib, name)(*args))


def read_string(name: str, *args) -> str:
    """Call a function that fills a string buffer, growing the buffer as told."""
    fn = getattr(lib, name)
    needed = C.c_size_t(0)
    cap = 256
    while True:
        buf = C.create_string_buffer(cap)
        st = fn(*args, buf, cap, C.byref(needed))
        if st == ERR_BUFFER_TOO_SMALL and needed.value > cap:
            cap = needed.value
            continue
        check(st)
        return buf.value.decode()


def i64_array(values) -> C.Array:
    values = list(values)
    return (C.c_int64 * max(len(values), 1))(*values)


def version() -> str:
    return lib.wt_version().decode()


def live_tensors() -> int:
    n = C.c_int64()
    call("wt_live_tensors", C.byref(n))
    return n.value


def live_dlpack_exports() -> int:
    n = C.c_int64()
    call("wt_live_dlpack_exports", C.byref(n))
    return n.value
