"""wt.onnx: the library's ONNX importer through the C ABI (wt_call's onnx.* targets), on
onnx/testdata/sdk_model.onnx against the outputs onnx's reference evaluator
gave (sdk_model.json; both written by make_sdk_model.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

import webtensor as wt
from conftest import webgpu_or_none

TESTDATA = Path(__file__).resolve().parents[3] / "onnx" / "testdata"
MODEL = TESTDATA / "sdk_model.onnx"
CASE = json.loads((TESTDATA / "sdk_model.json").read_text())
X = np.array(CASE["inputs"]["x"]["data"], dtype=np.float32).reshape(CASE["inputs"]["x"]["shape"])
SCALE = np.array(CASE["inputs"]["scale"], dtype=np.float32)
Y = np.array(CASE["outputs"]["y"]["data"], dtype=np.float32).reshape(CASE["outputs"]["y"]["shape"])


def check_model(model, device):
    assert model.input_names == ["x", "scale"]
    assert model.output_names == ["y", "top"]
    assert model.inputs[0] == wt.onnx.ValueInfo("x", "f32", ("batch", 4))
    assert model.outputs[1] == wt.onnx.ValueInfo("top", "i64", ("batch",))
    assert model.opset == 17 and model.device == device
    x, scale = wt.tensor(X, device=device), wt.tensor(SCALE, device=device)
    out = model(x=x, scale=scale)
    assert list(out) == ["y", "top"]
    np.testing.assert_allclose(out["y"].numpy(), Y, rtol=1e-6, atol=1e-6)
    assert out["top"].dtype == wt.i64
    assert out["top"].numpy().tolist() == CASE["outputs"]["top"]
    # Positional in input order, NumPy arrays as they are, an initializer overridden by name.
    out2 = model(X, SCALE, b=np.array(CASE["override_b"], dtype=np.float32))
    np.testing.assert_allclose(out2["y"].numpy().ravel(), CASE["outputs_with_b"]["y"], rtol=1e-6, atol=1e-5)
    assert out2["top"].numpy().tolist() == CASE["outputs_with_b"]["top"]


def test_load_path_and_run_by_name(no_leaks):
    with wt.onnx.load(MODEL) as model:
        check_model(model, "cpu")
        assert "inputs=['x', 'scale']" in repr(model)


def test_load_bytes_and_outputs_outlive_the_model(no_leaks):
    model = wt.onnx.load(MODEL.read_bytes())
    out = model(x=X, scale=SCALE)
    model.close()
    model.close()  # harmless
    np.testing.assert_allclose(out["y"].numpy(), Y, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="after close"):
        model(x=X, scale=SCALE)
    del out


def test_webgpu():
    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine (wt.devices() lists no webgpu)")
    with wt.onnx.load(MODEL, device=dev) as model:
        check_model(model, dev)


def test_errors_are_the_librarys():
    with pytest.raises(FileNotFoundError, match="absent.onnx: no such file or directory"):
        wt.onnx.load(TESTDATA / "absent.onnx")
    with pytest.raises(ValueError, match="parsing ModelProto"):
        wt.onnx.load(b"\xff\xff\xff")
    with pytest.raises(ValueError, match="Relq"):
        wt.onnx.load(MODEL.read_bytes().replace(b"Relu", b"Relq"))
    with pytest.raises(TypeError, match="a path or the model's bytes"):
        wt.onnx.load(3)
    with wt.onnx.load(MODEL) as model:
        with pytest.raises(ValueError, match=r'the model has no input "z" \(inputs: x, scale\)'):
            model(x=X, scale=SCALE, z=X)
        with pytest.raises(ValueError, match='input "scale" is missing'):
            model(x=X)
        with pytest.raises(TypeError, match="dtype i64, the model declares f32"):
            model(x=X.astype(np.int64), scale=SCALE)
        with pytest.raises(TypeError, match="both by position and by name"):
            model(X, x=X)
        with pytest.raises(TypeError, match="takes 2 inputs"):
            model(X, SCALE, X)


# ---- sequences and optionals (onnx.run_values) -------------------------------
# onnx/testdata/sdk_values_model.onnx: pieces = SplitToSequence(x), joined =
# ConcatFromSequence(parts), has = OptionalHasElement(maybe), maybe_out and
# parts_out the optionals passed through; sdk_values_model.json holds a case
# with the optionals given and one with them empty, and the outputs onnx's
# reference evaluator gave (make_sdk_values_model.py writes both).

VALUES_MODEL = TESTDATA / "sdk_values_model.onnx"
VALUES_CASES = json.loads((TESTDATA / "sdk_values_model.json").read_text())


def _ref(v):
    """A case's value as the model takes or gives it: an array, a list of them, None."""
    if v is None:
        return None
    if isinstance(v, list):
        return [_ref(t) for t in v]
    return np.array(v["data"], dtype=np.bool_ if isinstance(v["data"][0], bool) else np.float32).reshape(v["shape"])


def _same(got, want, name):
    if want is None:
        assert got is None, name
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), name
        for g, w in zip(got, want, strict=True):
            _same(g, w, name)
    else:
        assert isinstance(got, wt.Tensor), name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)


@pytest.mark.parametrize("case", VALUES_CASES, ids=["given", "empty"])
def test_sequences_and_optionals(case, no_leaks):
    with wt.onnx.load(VALUES_MODEL) as model:
        assert [v.kind for v in model.inputs] == ["tensor", "sequence", "optional_tensor", "optional_sequence"]
        assert [v.kind for v in model.outputs] == ["sequence", "tensor", "tensor", "optional_tensor",
                                                   "optional_sequence"]
        ins = {k: _ref(v) for k, v in case["inputs"].items()}
        # Tensors and NumPy arrays alike; a tuple is a sequence too.
        ins["parts"] = tuple(wt.tensor(p) for p in ins["parts"])
        out = model(**ins)
        assert list(out) == ["pieces", "joined", "has", "maybe_out", "parts_out"]
        for name, want in case["outputs"].items():
            _same(out[name], _ref(want), name)
        del out, ins


def test_sequence_errors_are_the_librarys():
    given = {k: _ref(v) for k, v in VALUES_CASES[0]["inputs"].items()}
    with wt.onnx.load(VALUES_MODEL) as model:
        with pytest.raises(ValueError, match='input "parts": the model declares a sequence of tensors, got a f32'):
            model(**{**given, "parts": given["x"]})
        with pytest.raises(ValueError, match='input "x": the model declares a tensor, got an empty optional'):
            model(**{**given, "x": None})
        with pytest.raises(ValueError, match='input "maybe_parts" is missing'):
            model(given["x"], given["parts"], None)
    # A list is a sequence only where the model declares one: elsewhere it is a tensor's data, as before.
    with wt.onnx.load(MODEL) as model:
        np.testing.assert_allclose(model(x=X, scale=[2.0])["y"].numpy(), Y, rtol=1e-6, atol=1e-6)
