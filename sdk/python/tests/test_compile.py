"""wt.compile: graph capture through the C ABI, replayed on new inputs."""

import numpy as np
import pytest

import webtensor as wt


def test_compiled_function_equals_eager_on_new_inputs():
    w = wt.tensor(np.array([0.5, -1.0, 2.0, 0.25], dtype=np.float32))

    def f(x):
        y = (x * w).exp()
        _ = x.sin()  # dead: dropped from the graph
        return y + 1.0, y.sum()

    cf = wt.compile(f)
    x1 = wt.tensor(np.array([1, 2, 3, 4], dtype=np.float32))
    first = cf(x1)  # traced (eager result)
    assert len(cf.graphs) == 1
    graph = next(iter(cf.graphs.values()))
    assert "exp(" in str(graph) and "sin(" not in str(graph)
    x2 = wt.tensor(np.array([-1, 0, 1, 2], dtype=np.float32))
    got = cf(x2)  # replayed
    want = f(x2)
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), rtol=1e-6)
    np.testing.assert_allclose(first[0].numpy(), f(x1)[0].numpy(), rtol=1e-6)
    cf(wt.tensor(np.zeros((2, 4), dtype=np.float32)))  # a new shape: a second graph
    assert len(cf.graphs) == 2


def test_compile_refuses_what_it_cannot_capture():
    outside = wt.tensor([1.0, 2.0])

    with pytest.raises(TypeError, match="must return a Tensor"):
        wt.compile(lambda x: 3)(wt.tensor([1.0]))
    with pytest.raises(ValueError, match="not computed"):
        wt.compile(lambda x: outside)(wt.tensor([1.0]))
    with pytest.raises(TypeError, match="take Tensors only"):
        wt.compile(lambda x: x * 2)(3.0)
    with pytest.raises(ZeroDivisionError):
        wt.compile(lambda x: 1 / 0)(wt.tensor([1.0]))
    # After each failure the capture was dropped: a new one starts cleanly.
    assert float(wt.compile(lambda x: (x * 3).sum())(wt.tensor([1.0, 2.0])).item()) == 9.0


def test_gradients_flow_through_a_compiled_graph():
    cf = wt.compile(lambda x, w: ((x * w).tanh()).sum())
    x = wt.tensor([0.5, -0.25], requires_grad=True)
    w = wt.tensor([2.0, 4.0])
    cf(x, w)
    x2 = wt.tensor([0.1, 0.3], requires_grad=True)
    loss = cf(x2, w)
    loss.backward()
    want = (1 - np.tanh(np.array([0.1, 0.3]) * np.array([2.0, 4.0])) ** 2) * np.array([2.0, 4.0])
    np.testing.assert_allclose(x2.grad.numpy(), want, rtol=1e-5)


def test_a_whole_training_step_compiles():
    # Forward, backward and the gradients returned: the graph holds the
    # backward pass, and replayed on new values it gives their gradients.
    def step(x, w):
        loss = ((x @ w).tanh() ** 2).sum()
        loss.backward()
        return loss, w.grad

    cf = wt.compile(step)
    x = wt.tensor(np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32))
    for seed in range(3):
        w = wt.tensor(np.random.default_rng(seed).standard_normal((2, 3)).astype(np.float32), requires_grad=True)
        loss, grad = cf(x, w)
        w_eager = wt.tensor(w.numpy(), requires_grad=True)
        want_loss, want_grad = step(x, w_eager)
        np.testing.assert_allclose(loss.numpy(), want_loss.numpy(), rtol=1e-5)
        np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=1e-5, atol=1e-6)
    assert len(cf.graphs) == 1
