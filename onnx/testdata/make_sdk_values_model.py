"""Write sdk_values_model.onnx and sdk_values_model.json, the model every
SDK's test of ONNX sequences and optionals loads (test-only; needs the onnx
package, not webtensor).

One value of each kind crosses the C ABI each way (onnx.run_values):

    pieces     = SplitToSequence(x, axis=0, keepdims=0)  a sequence output
    joined     = ConcatFromSequence(parts, axis=0)        from a sequence input
    has        = OptionalHasElement(maybe)                from an optional tensor input
    maybe_out  = Identity(maybe)                          an optional tensor output
    parts_out  = Identity(maybe_parts)                    an optional sequence, in and out

It also writes strings_model.onnx (build_strings), a model with STRING input
and output, which the C ABI refuses naming them.

sdk_values_model.json holds two cases, one with the optionals given and one
with them empty (None), and the outputs onnx's reference evaluator computes
for each: a sequence as a list of {shape, data}, an empty optional as null.

Usage: python make_sdk_values_model.py  (writes next to this file)
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))


def f32_sequence(dims):
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, dims))


def build() -> onnx.ModelProto:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["pieces"], axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["parts"], ["joined"], axis=0),
        helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
        helper.make_node("Identity", ["maybe"], ["maybe_out"]),
        helper.make_node("Identity", ["maybe_parts"], ["parts_out"]),
    ]
    optional_tensor = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    optional_sequence = helper.make_optional_type_proto(f32_sequence(["n"]))
    graph = helper.make_graph(
        nodes,
        "sdk_values_model",
        inputs=[
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2]),
            helper.make_value_info("parts", f32_sequence(["rows", 2])),
            helper.make_value_info("maybe", optional_tensor),
            helper.make_value_info("maybe_parts", optional_sequence),
        ],
        outputs=[
            helper.make_value_info("pieces", f32_sequence([2])),
            helper.make_tensor_value_info("joined", TensorProto.FLOAT, ["total", 2]),
            helper.make_tensor_value_info("has", TensorProto.BOOL, []),
            helper.make_value_info("maybe_out", optional_tensor),
            helper.make_value_info("parts_out", optional_sequence),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="webtensor-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def encode(v):
    """A value as the JSON holds it: a tensor {shape, data}, a sequence a list, None null."""
    if v is None:
        return None
    if isinstance(v, list):
        return [encode(t) for t in v]
    a = np.asarray(v)
    return {"shape": list(a.shape), "data": a.ravel().tolist()}


def main() -> None:
    model = build()
    ref = ReferenceEvaluator(model)
    x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    parts = [np.array([[7, 8]], dtype=np.float32), np.array([[9, 10], [11, 12]], dtype=np.float32)]
    maybe = np.array([0.5, -0.5], dtype=np.float32)
    maybe_parts = [np.array([1, 2, 3], dtype=np.float32), np.array([4], dtype=np.float32)]
    given = {"x": x, "parts": parts, "maybe": maybe, "maybe_parts": maybe_parts}
    outs = dict(zip([o.name for o in model.graph.output], ref.run(None, given), strict=True))
    # The reference evaluator's Identity refuses None (onnx 1.23: "no ONNX
    # corresponding type"), so the empty case's outputs are ONNX's rules
    # applied to the given case's: Identity passes None through and
    # OptionalHasElement says false; pieces and joined do not depend on
    # the optionals.
    empty = {**given, "maybe": None, "maybe_parts": None}
    empty_outs = {**outs, "has": np.array(False), "maybe_out": None, "parts_out": None}
    cases = [{"inputs": {k: encode(v) for k, v in ins.items()}, "outputs": {k: encode(v) for k, v in res.items()}}
             for ins, res in ((given, outs), (empty, empty_outs))]
    onnx.save(model, os.path.join(HERE, "sdk_values_model.onnx"))
    with open(os.path.join(HERE, "sdk_values_model.json"), "w") as f:
        json.dump(cases, f)
        f.write("\n")
    onnx.save(build_strings(), os.path.join(HERE, "strings_model.onnx"))


def build_strings() -> onnx.ModelProto:
    """strings_model.onnx: a STRING input lower-cased to a STRING output,
    which the C ABI refuses by name (only Go runs string tensors)."""
    node = helper.make_node("StringNormalizer", ["words"], ["lower"], case_change_action="LOWER")
    graph = helper.make_graph([node], "strings",
                              [helper.make_tensor_value_info("words", TensorProto.STRING, [2])],
                              [helper.make_tensor_value_info("lower", TensorProto.STRING, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    main()
