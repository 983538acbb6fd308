"""Autograd through the SDK: requires_grad, backward, grad, no_grad."""

import numpy as np
import pytest

import webtensor as wt


def test_grad_of_sum_of_squares_is_2x():
    x = wt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    assert x.requires_grad
    wt.sum(x * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])


def test_gradients_accumulate_and_zero_grad():
    x = wt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 6.0))
    x.zero_grad()
    assert x.grad is None


def test_matmul_softmax_chain_against_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((4, 2)).astype(np.float32)
    x, y = wt.tensor(a, requires_grad=True), wt.tensor(w, requires_grad=True)
    (wt.softmax(x @ y, axis=-1) * wt.tensor([[1.0, 2.0]])).sum().backward()
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    (torch.softmax(tx @ ty, -1) * torch.tensor([[1.0, 2.0]])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backward_with_explicit_grad():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(wt.tensor([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 40.0])


def test_no_grad_and_detach():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    with wt.no_grad():
        y = x * 2
    assert not y.requires_grad
    assert (x * 2).requires_grad
    d = x.detach()
    assert not d.requires_grad and d.tolist() == [1.0, 2.0]

    @wt.no_grad()
    def double(t):
        return t * 2

    assert not double(x).requires_grad
