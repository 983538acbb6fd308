"""Write sdk_model.onnx and sdk_model.json, the model every SDK's ONNX test
loads (test-only; needs the onnx package, not webtensor).

The model is small enough to read: y = Relu(x @ W + b) * scale and
top = ArgMax(y, axis=1), with x's batch dimension symbolic ("batch") and b
an initializer the graph also lists as an input, so a caller may override
it by name. sdk_model.json holds an input and the outputs onnx's reference
evaluator computes for it, with b as stored and with b overridden.

Usage: python make_sdk_model.py  (writes next to this file)
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))


def build() -> onnx.ModelProto:
    w = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5).astype(np.float32)
    b = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["act"]),
        helper.make_node("Mul", ["act", "scale"], ["y"]),
        helper.make_node("ArgMax", ["y"], ["top"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "sdk_model",
        inputs=[
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
            helper.make_tensor_value_info("scale", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]),
        ],
        outputs=[
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3]),
            helper.make_tensor_value_info("top", TensorProto.INT64, ["batch"]),
        ],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="webtensor-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    model = build()
    x = np.array([[1, 2, 3, 4], [-1, 0, 1, 0]], dtype=np.float32)
    scale = np.array([2], dtype=np.float32)
    b2 = np.array([10, 0, -10], dtype=np.float32)
    ref = ReferenceEvaluator(model)
    y, top = ref.run(None, {"x": x, "scale": scale})
    y2, top2 = ref.run(None, {"x": x, "scale": scale, "b": b2})
    case = {
        "inputs": {"x": {"shape": list(x.shape), "data": x.ravel().tolist()}, "scale": scale.tolist()},
        "outputs": {"y": {"shape": list(y.shape), "data": y.ravel().tolist()}, "top": top.tolist()},
        "override_b": b2.tolist(),
        "outputs_with_b": {"y": y2.ravel().tolist(), "top": top2.tolist()},
    }
    onnx.save(model, os.path.join(HERE, "sdk_model.onnx"))
    with open(os.path.join(HERE, "sdk_model.json"), "w") as f:
        json.dump(case, f)
        f.write("\n")


if __name__ == "__main__":
    main()
