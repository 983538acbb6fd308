"""webtensor._fast, the C hot path of op calls, against the ctypes path it
replaces: the same results, dtypes, exceptions and messages, with the
extension in use here and switched off (WEBTENSOR_CTYPES_ONLY=1) in a child
process running the same cases."""

import gc
import json
import os
import subprocess
import sys
import threading

import pytest

import webtensor as wt
from webtensor import _tensor

CASES = r'''
import json
import webtensor as wt
from webtensor._tensor import run_op
from webtensor.nn import Parameter


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # the class and the message are what must match
        return ["error", type(e).__name__, str(e)]
    if r is NotImplemented:
        return ["NotImplemented"]
    rs = r if isinstance(r, (list, tuple)) else [r]
    return ["ok", type(r).__name__, [[t.dtype.name, list(t.shape), t.tolist()] for t in rs]]


def cases():
    a, b = wt.tensor([1.0, 2.0, 3.0]), wt.tensor([4.0, 5.0, 6.0])
    i = wt.tensor([1, 2, 3])
    m = wt.tensor([[1.0], [2.0]])
    closed = wt.tensor([1.0, 2.0, 3.0])
    closed.close()
    p = Parameter(wt.tensor([1.0, 1.0, 1.0]))
    return {
        "add": lambda: a + b,
        "sub reflected": lambda: b.__rsub__(a),
        "mul": lambda: a * b,
        "div ints": lambda: i / i,
        "floordiv by zero": lambda: i // wt.tensor([0, 1, 1]),
        "promotion": lambda: a + i,
        "broadcast": lambda: a + m,
        "mismatch": lambda: a + wt.tensor([1.0, 2.0]),
        "scalar": lambda: a + 2,
        "reflected scalar": lambda: 2 - a,
        "pow": lambda: a ** b,
        "matmul": lambda: m @ wt.tensor([[1.0, 2.0]]),
        "matmul error": lambda: a @ m,
        "eq": lambda: a == b,
        "lt": lambda: a < b,
        "logical and": lambda: (a > 1.5) & (b > 4.5),
        "closed left": lambda: closed + a,
        "closed right": lambda: a + closed,
        "parameter": lambda: p + a,
        "bound method": lambda: a.__add__(b),
        "unbound": lambda: wt.Tensor.__mul__(a, b),
        "not a tensor": lambda: a.__add__("x"),
        "function": lambda: wt.add(a, b),
        "neg": lambda: -a,
        "abs": lambda: abs(-a),
        "invert": lambda: ~(a > 2),
        "unary wrong arity": lambda: wt.Tensor.__neg__(a, b),
        "binary wrong arity": lambda: wt.Tensor.__add__(a),
        "unary op": lambda: wt.exp(a),
        "optional inputs absent": lambda: run_op("binary_cross_entropy_with_logits",
                                                 [a, wt.tensor([0.0, 1.0, 1.0]), None, None]),
        "required input absent": lambda: run_op("where", [a > 2, a, None]),
        "unknown op": lambda: run_op("no_such_op", [a]),
        "too few inputs": lambda: run_op("add", [a]),
        "list output": lambda: run_op("add", [a, b]),
        "tuple inputs": lambda: run_op("mul", (a, b)),
        "multiple outputs": lambda: wt.topk(b, k=2),
    }


print(json.dumps({k: outcome(f) for k, f in cases().items()}))
'''


def _run_cases(ctypes_only: bool) -> dict:
    env = {**os.environ, "WEBTENSOR_CTYPES_ONLY": "1" if ctypes_only else "0"}
    out = subprocess.run([sys.executable, "-c", CASES], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_extension_is_in_use_when_built():
    if _tensor._fast is None:
        pytest.skip("webtensor._fast was not built (no C compiler): the ctypes path runs everything")
    if os.environ.get("WEBTENSOR_CTYPES_ONLY", "") not in ("", "0"):
        pytest.skip("switched off by WEBTENSOR_CTYPES_ONLY for this run")
    assert _tensor.fast_path()
    assert type(wt.Tensor.__add__).__name__ == "Method"
    assert wt.Tensor.__add__.__wrapped__.__name__ == "add"


def test_fast_and_ctypes_paths_agree():
    fast, slow = _run_cases(False), _run_cases(True)
    assert fast.keys() == slow.keys()
    for k in fast:
        assert fast[k] == slow[k], k
    assert fast["add"] == ["ok", "Tensor", [["f32", [3], [5.0, 7.0, 9.0]]]]
    assert fast["not a tensor"] == ["NotImplemented"]
    assert fast["mismatch"][0:2] == ["error", "ValueError"]
    assert fast["closed left"] == ["error", "RuntimeError", "tensor used after close()"]
    assert fast["unknown op"][0:2] == ["error", "ValueError"] and "unknown op" in fast["unknown op"][2]


def test_switched_off_by_the_environment():
    code = "import webtensor as wt; from webtensor import _tensor; print(_tensor.fast_path(), type(wt.Tensor.__add__))"
    env = {**os.environ, "WEBTENSOR_CTYPES_ONLY": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False" and "function" in out


def test_results_are_freed_and_scopes_hold(no_leaks):
    a, b = wt.ones(4), wt.ones(4)
    for _ in range(100):
        a + b  # dropped at once: Tensor.__del__ frees the handle
    with wt.scope() as s:
        c = a + b
        kept = s.keep(a * b)
        with wt.scope():
            d = c - a
    assert c.handle == 0 and d.handle == 0, "made inside a scope, closed by it"
    assert kept.handle != 0 and kept.tolist() == [1.0] * 4
    kept.close()
    a.close()
    b.close()
    gc.collect()


def test_tensors_dying_while_an_exception_propagates_keep_it(no_leaks):
    """Tensor's finalizer runs without a method call when the extension is
    in use (_fast.direct_finalizer), as the Python __del__ otherwise; either
    way a tensor freed while an exception is on its way out must leave that
    exception as it was, and a dropped tensor's handle is freed."""

    def fail():
        t = wt.ones(3) + wt.ones(3)  # freed by the unwinding below
        assert t.handle != 0
        raise KeyError("kept")

    with pytest.raises(KeyError, match="kept"):
        fail()
    a = wt.ones(2)
    h = a.handle
    del a  # the finalizer frees the handle at once
    with pytest.raises(Exception, match="freed|unknown"):
        _tensor.call("wt_tensor_free", h)


def test_scope_on_another_thread_does_not_capture_this_threads_results():
    a = wt.ones(2)
    entered, done = threading.Event(), threading.Event()

    def other():
        with wt.scope():
            entered.set()
            done.wait(10)

    t = threading.Thread(target=other)
    t.start()
    entered.wait(10)
    c = a + a
    done.set()
    t.join()
    assert c.handle != 0 and c.tolist() == [2.0, 2.0]


def test_autograd_through_the_fast_path():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    y = wt.tensor([3.0, 4.0])
    z = wt.sum(x * y + x)
    z.backward()
    assert x.grad.tolist() == [4.0, 5.0]
