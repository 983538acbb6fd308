"""Failures become Python exceptions of the right class, with the library's message."""

import pytest

import webtensor as wt


def test_shape_mismatch_is_value_error():
    with pytest.raises(ValueError, match=r"matmul: inner dims differ: \[2 2\] x \[3 5\]"):
        wt.ones(2, 2) @ wt.ones(3, 5)
    with pytest.raises(ValueError, match="cannot reshape"):
        wt.reshape(wt.ones(2, 2), (3,))


def test_axis_and_index_out_of_range_are_index_errors():
    with pytest.raises(IndexError, match="axis 5 out of range for rank 2"):
        wt.softmax(wt.ones(2, 2), axis=5)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        wt.index_select(wt.ones(2, 2), wt.tensor([5]))


def test_dtype_errors_are_type_errors():
    with pytest.raises(TypeError, match="floating-point"):
        wt.tensor([1, 2]).requires_grad = True
    with pytest.raises(TypeError, match="unknown dtype 'f128'"):
        wt.cast(wt.ones(2), dtype="f128")


def test_absent_backend_is_unsupported():
    with pytest.raises(wt.UnsupportedError, match="no backend") as info:
        wt.ones(2).to("nosuchdevice:0")
    assert isinstance(info.value, RuntimeError)


def test_use_after_close_and_double_free():
    t = wt.tensor([1.0, 2.0])
    with t:
        assert t.shape == (2,)
    assert t.handle == 0
    t.close()  # closing twice is harmless
    with pytest.raises(RuntimeError, match="after close"):
        _ = t + 1
    with pytest.raises(RuntimeError, match="after close"):
        _ = t.shape
    u = wt.tensor([1.0])
    h = u.handle
    u.close()
    with pytest.raises(RuntimeError, match="already freed"):
        wt._lib.call("wt_tensor_free", h)
    assert repr(t) == "tensor(<closed>)"


def test_no_grad_exit_without_enter():
    with pytest.raises(ValueError, match="without a matching enter"):
        wt.no_grad().__exit__(None, None, None)


def test_item_and_len_errors():
    with pytest.raises(ValueError, match="4 elements"):
        wt.ones(2, 2).item()
    with pytest.raises(TypeError, match="0-d"):
        len(wt.tensor(1.0))


def test_unknown_op_and_bad_attribute():
    with pytest.raises(ValueError):
        wt._tensor.op1("no_such_op", [wt.ones(1)])
    with pytest.raises((ValueError, TypeError)):
        wt.softmax(wt.ones(2), axis="x")
