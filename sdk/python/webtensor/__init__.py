"""webtensor: tensors, autograd and ops on WebGPU, CUDA and the CPU, over libwebtensor.

    import webtensor as wt
    x = wt.randn(3, 4)
    y = wt.softmax(x @ x.T, axis=-1)

Every public op of the manifest is a function here (webtensor._ops, generated
by `make generate`) and, where its first argument is a tensor, a Tensor method.
"""

from __future__ import annotations

from . import _lib
from . import _index  # noqa: F401 (adds Tensor.__getitem__)
from . import _mutate  # noqa: F401 (adds Tensor.__setitem__ and the in-place operators)
from ._compile import compile as compile  # noqa: A004 (torch.compile's name)
from ._compile import trace as trace
from ._dlpack import from_dlpack
from ._dtype import BY_NAME as _DT
from ._dtype import DType
from ._lib import UnsupportedError
from ._plugins import Plugin as Plugin
from ._plugins import call as call
from ._plugins import device_tuning as device_tuning
from ._plugins import load_plugin as load_plugin
from ._plugins import set_tuning_policy as set_tuning_policy
from ._profile import profile as profile
from ._serialize import load as load
from ._serialize import save as save
from ._ops import *  # noqa: F403 (every public op, generated)
from ._ops import METHODS as _METHODS
from ._tensor import (
    Tensor,
    arange,
    is_tensor,
    manual_seed,
    no_grad,
    ones,
    rand,
    scope,
    randn,
    tensor,
    zeros,
)

# The array API standard (version 2024.12) over the ops above: its names
# for ops spelled otherwise, its defaults where PyTorch's differ (a
# Tensor method keeps PyTorch's), its dtype functions and constants.
from ._array_api import *  # noqa: F403, E402
from ._array_api_dtypes import *  # noqa: F403, E402
from ._array_api_dtypes import __array_api_version__ as __array_api_version__  # noqa: E402
from ._array_api_dtypes import __array_namespace_info__ as __array_namespace_info__  # noqa: E402
from ._array_api_search import *  # noqa: F403, E402
from ._array_api_shape import *  # noqa: F403, E402
from ._array_api_shape import full as full  # noqa: E402 (the standard's full: an int fill gives i64)
from . import linalg as linalg  # noqa: E402 (the standard's linalg extension, over the ops above)
# The standard's fft extension: wt.fft is this module (complex in, complex
# out); the transforms over real pairs stay ops (wt._ops.fft, Tensor.fft).
# The op's name is dropped first: `from . import` takes an attribute of
# that name over the submodule.
globals().pop("fft", None)
from . import fft as fft  # noqa: E402

__version__ = _lib.version()

f32, f16, bf16, f64 = _DT["f32"], _DT["f16"], _DT["bf16"], _DT["f64"]
i64, i32, u32, i16, i8, u8 = _DT["i64"], _DT["i32"], _DT["u32"], _DT["i16"], _DT["i8"], _DT["u8"]
float32, float16, bfloat16, float64 = f32, f16, bf16, f64
int64, int32, uint32, int16, int8, uint8 = i64, i32, u32, i16, i8, u8
u16, u64 = _DT["u16"], _DT["u64"]
uint16, uint64 = u16, u64
bool_ = _DT["bool"]
c64, c128 = _DT["c64"], _DT["c128"]
complex64, complex128 = c64, c128
globals()["bool"] = bool_  # wt.bool, as in PyTorch, without shadowing the builtin in this module


def _attach_methods() -> None:
    from . import _ops

    for name in _METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, getattr(_ops, name))


_attach_methods()

from . import nn as nn  # noqa: E402 (torch-style layers, optimizers over the ops above)
from . import optim as optim  # noqa: E402
from . import cuda as cuda  # noqa: E402
from . import onnx as onnx  # noqa: E402
from . import multimodal as multimodal  # noqa: E402
from . import diffuse as diffuse  # noqa: E402
from . import data as data  # noqa: E402
from . import auto as auto  # noqa: E402 (after data: it tunes DataLoaders)


def live_tensors() -> int:
    """Number of live native tensor handles in the process (for leak checks)."""
    return _lib.live_tensors()


def devices() -> list[str]:
    """Names of the devices whose backend opens here, best first."""
    import ctypes

    n = ctypes.c_int32()
    _lib.call("wt_device_count", ctypes.byref(n))
    return [_lib.read_string("wt_device_name", i) for i in range(n.value)]


def default_device() -> str:
    return _lib.read_string("wt_default_device")


def set_default_device(device: str) -> None:
    _lib.call("wt_set_default_device", device.encode())


def set_num_threads(n: int) -> None:
    """How many threads the CPU backend's kernels use, like
    torch.set_num_threads; n <= 0 restores the default (the process's CPU
    quota, or WEBTENSOR_NUM_THREADS). Small ops stay on one thread."""
    import builtins  # bool and int are dtypes in this namespace

    if not isinstance(n, builtins.int) or isinstance(n, builtins.bool):
        raise TypeError(f"set_num_threads: need an int, got {type(n).__name__}")
    _lib.call("wt_set_num_threads", n)


def get_num_threads() -> int:
    """The threads a CPU op may use now (torch.get_num_threads)."""
    import ctypes

    n = ctypes.c_int32()
    _lib.call("wt_get_num_threads", ctypes.byref(n))
    return n.value


def fallbacks(reset: bool = False) -> list[dict]:
    """Op calls that ran on the CPU instead of their device (no kernel
    there, "kind": "cpu"), and calls whose device kernel did declared work
    on the host ("kind": "host", with a "reason"; docs/ops.md lists them),
    as [{"device", "op", "count", "kind", "reason"}] since the start or
    the last reset; reset clears the counts after reading them."""
    import json

    return json.loads(_lib.read_string("wt_fallbacks_json", 1 if reset else 0))


def synchronize(device: str) -> None:
    """Wait for every op queued on device (WebGPU, CUDA), raising a failed check."""
    _lib.call("wt_device_sync", device.encode())


def manifest() -> dict:
    """The op manifest (ops, inputs, attributes, dtypes, backends)."""
    import json

    return json.loads(_lib.read_string("wt_manifest_json"))


__all__ = [
    "DType", "Tensor", "UnsupportedError", "arange", "compile", "cuda", "data", "trace", "default_device", "devices",
    "fallbacks", "from_dlpack", "full", "profile", "synchronize",
    "is_tensor", "live_tensors", "load", "manifest", "manual_seed", "nn", "no_grad", "ones", "optim", "rand",
    "randn", "save", "scope", "set_default_device", "tensor", "zeros",
]
