"""Native memory: handles are freed by GC, close() and with-blocks; threads share the library."""

import gc
import threading

import numpy as np

import webtensor as wt


def test_100000_tensors_leave_no_handles():
    gc.collect()
    start = wt.live_tensors()
    one = wt.ones(2)
    for i in range(50_000):
        t = wt.tensor([float(i)])
        u = t + one  # an op result too
        del t, u
    with wt.ones(3) as c:
        assert wt.live_tensors() > start
    assert c.handle == 0
    del one
    gc.collect()
    assert wt.live_tensors() == start


def test_views_and_grads_are_released(no_leaks):
    x = wt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = (x.T * x).sum()
    y.backward()
    g = x.grad
    assert g is not None
    del x, y, g


def test_dlpack_imports_are_released(no_leaks):
    a = np.ones((4, 4), dtype=np.float32)
    for _ in range(200):
        t = wt.from_dlpack(a)
        np.from_dlpack(t)
        del t
    gc.collect()


def test_threads_call_ops_at_once():
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    want = np.exp(x - x.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    shared = wt.tensor(x)
    errors = []

    def work(seed):
        try:
            for i in range(60):
                got = wt.softmax(shared, axis=-1).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
                own = wt.tensor(np.full(8, seed, np.float32))
                assert (own + i).tolist() == [float(seed + i)] * 8
            try:
                wt.reshape(shared, (3,))
            except ValueError as e:  # per-thread error messages
                assert "reshape" in str(e)
        except Exception as e:  # collected for the main thread's assertion
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_scope_closes_what_it_made():
    gc.collect()
    start = wt.live_tensors()
    outside = wt.ones(2)
    with wt.scope() as s:
        a = wt.ones(2) * 2
        b = a + outside
        kept = s.keep(b * b)
        with wt.scope():
            inner = b - 1
    assert a.handle == 0 and b.handle == 0 and inner.handle == 0 and outside.handle != 0
    assert kept.tolist() == [9.0, 9.0]
    kept.close()
    outside.close()
    assert wt.live_tensors() == start
