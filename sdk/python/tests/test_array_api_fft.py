"""webtensor.fft, the array API's fft extension (2024.12): its names and
keyword-only signatures against array-api-strict's, every function against
numpy.fft (complex64 and complex128, axes, s, the three norms), gradients
against PyTorch's, and the same calls on WebGPU (complex64) when this
machine has an adapter.
"""

import inspect

import numpy as np
import pytest
import torch

import webtensor as wt
from conftest import webgpu_or_none

R = np.random.default_rng(1224)
NORMS = ["backward", "ortho", "forward"]


def crand(*shape, dtype=np.complex128):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)


def close(got, want, dtype):
    t = 1e-10 if np.dtype(dtype) in (np.complex128, np.float64) else 2e-5
    scale = max(1.0, float(np.max(np.abs(want)))) if np.size(want) else 1.0
    np.testing.assert_allclose(np.asarray(got), want, rtol=t, atol=t * scale)


def cases():
    gpu = webgpu_or_none()
    out = [("cpu", np.complex64), ("cpu", np.complex128)]
    return out + ([(gpu, np.complex64)] if gpu else [])


CASES = cases()
IDS = [f"{d}-{np.dtype(t).name}" for d, t in CASES]


def test_names_and_signatures_match_the_standard():
    xp = pytest.importorskip("array_api_strict")
    xp.set_array_api_strict_flags(api_version="2024.12")
    names = set(xp.fft.__all__)
    assert names == set(wt.fft.__all__)
    for name in names:
        theirs = inspect.signature(getattr(xp.fft, name))
        ours = inspect.signature(getattr(wt.fft, name))
        assert [(p.name, p.kind) for p in ours.parameters.values()] == \
               [(p.name, p.kind) for p in theirs.parameters.values()], name


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
@pytest.mark.parametrize("norm", NORMS)
def test_complex_transforms_match_numpy(device, dtype, norm):
    a = crand(3, 5, 4, dtype=dtype)
    x = wt.tensor(a, device=device)
    f = wt.fft
    close(f.fft(x, norm=norm).numpy(), np.fft.fft(a, norm=norm), dtype)
    close(f.fft(x, n=7, axis=1, norm=norm).numpy(), np.fft.fft(a, n=7, axis=1, norm=norm), dtype)
    close(f.ifft(x, n=3, axis=0, norm=norm).numpy(), np.fft.ifft(a, n=3, axis=0, norm=norm), dtype)
    close(f.fftn(x, norm=norm).numpy(), np.fft.fftn(a, norm=norm), dtype)
    close(f.fftn(x, axes=(2, 0), norm=norm).numpy(), np.fft.fftn(a, axes=(2, 0), norm=norm), dtype)
    close(f.ifftn(x, s=(6, 3), norm=norm).numpy(), np.fft.ifftn(a, s=(6, 3), axes=(-2, -1), norm=norm), dtype)
    assert f.fft(x).dtype.name == {np.complex64: "c64", np.complex128: "c128"}[dtype]


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
@pytest.mark.parametrize("norm", NORMS)
def test_real_transforms_match_numpy(device, dtype, norm):
    real = np.float32 if dtype == np.complex64 else np.float64
    r = R.standard_normal((4, 6)).astype(real)
    c = crand(4, 5, dtype=dtype)
    xr, xc = wt.tensor(r, device=device), wt.tensor(c, device=device)
    f = wt.fft
    close(f.rfft(xr, norm=norm).numpy(), np.fft.rfft(r, norm=norm), dtype)
    close(f.rfft(xr, n=5, axis=0, norm=norm).numpy(), np.fft.rfft(r, n=5, axis=0, norm=norm), dtype)
    close(f.irfft(xc, norm=norm).numpy(), np.fft.irfft(c, norm=norm), real)
    close(f.irfft(xc, n=9, norm=norm).numpy(), np.fft.irfft(c, n=9, norm=norm), real)
    close(f.rfftn(xr, norm=norm).numpy(), np.fft.rfftn(r, norm=norm), dtype)
    close(f.irfftn(xc, norm=norm).numpy(), np.fft.irfftn(c, norm=norm), real)
    close(f.irfftn(xc, s=(4, 7), norm=norm).numpy(), np.fft.irfftn(c, s=(4, 7), axes=(0, 1), norm=norm), real)
    close(f.hfft(xc, norm=norm).numpy(), np.fft.hfft(c, norm=norm), real)
    close(f.ihfft(xr, norm=norm).numpy(), np.fft.ihfft(r, norm=norm), dtype)


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
def test_frequencies_and_shifts_match_numpy(device, dtype):
    real = np.float32 if dtype == np.complex64 else np.float64
    rd = wt.f32 if real == np.float32 else wt.f64
    for n in (1, 6, 7):
        close(wt.fft.fftfreq(n, d=0.5, dtype=rd, device=device).numpy(), np.fft.fftfreq(n, d=0.5), real)
        close(wt.fft.rfftfreq(n, d=2.0, dtype=rd, device=device).numpy(), np.fft.rfftfreq(n, d=2.0), real)
    a = crand(4, 5, dtype=dtype)
    x = wt.tensor(a, device=device)
    close(wt.fft.fftshift(x).numpy(), np.fft.fftshift(a), dtype)
    close(wt.fft.ifftshift(x, axes=1).numpy(), np.fft.ifftshift(a, axes=1), dtype)
    r = a.real.copy()
    close(wt.fft.fftshift(wt.tensor(r, device=device), axes=(0,)).numpy(), np.fft.fftshift(r, axes=(0,)), real)


def test_real_input_to_a_complex_transform_is_converted():
    r = R.standard_normal(8)
    got = wt.fft.fft(wt.tensor(r))
    assert got.dtype == wt.c128
    close(got.numpy(), np.fft.fft(r), np.complex128)
    assert wt.fft.fft(wt.tensor(r.astype(np.float32))).dtype == wt.c64


def test_gradients_match_torch():
    a = crand(4, 6)
    x = wt.tensor(a, requires_grad=True)
    y = wt.fft.irfftn(wt.fft.fftn(x, norm="ortho") * wt.fft.fftshift(x), s=(4, 6))
    (wt.sum(y * y)).backward()
    t = torch.tensor(a, requires_grad=True)
    ty = torch.fft.irfftn(torch.fft.fftn(t, norm="ortho") * torch.fft.fftshift(t), s=(4, 6))
    (ty * ty).sum().backward()
    close(x.grad.numpy(), t.grad.numpy(), np.complex128)


def test_errors_name_the_problem():
    x = wt.tensor(crand(4))
    with pytest.raises(ValueError, match="norm"):
        wt.fft.fft(x, norm="both")
    with pytest.raises(TypeError, match="real-valued"):
        wt.fft.rfft(x)
    with pytest.raises(ValueError):
        wt.fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError):
        wt.fft.fftfreq(4, d=0.0)
