"""wt.onnx: the library's ONNX importer through the C ABI (wt_onnx_*), on
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
