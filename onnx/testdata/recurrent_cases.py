"""Write recurrent_cases.json: edge cases of RNN, GRU, LSTM, GridSample,
Loop and Scan that ONNX's node tests leave out, with ONNX Runtime's outputs.

TestRecurrentCases (ops_rnn_test.go) runs each model through the importer
and compares. The node tests never pass sequence_lens shorter than the
sequence, nor clip, input_forget, non-default activations, cubic sampling
with reflection or a Loop that ends on its condition; ONNX Runtime 1.31
(the runtime issue 25 compares against) computes the expectations. Where
ONNX Runtime refuses a case (batchwise layout) or disagrees with the onnx
package's reference implementation (cubic GridSample with border padding:
ONNX Runtime clamps differently), the reference, which the node tests come
from, gives the expectation, and the case says so in "source". The
reference ignores sequence_lens, so cases with shorter lengths run where
ONNX Runtime does.

Usage: python recurrent_cases.py > recurrent_cases.json
(with onnxruntime==1.31.1, onnx==1.23.2 and numpy).
"""

import base64
import json
import sys

import numpy as np

import onnxruntime as ort
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

rng = np.random.default_rng(25)


def rand(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def tensor_json(a):
    a = np.asarray(a)
    kind = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(bool): "bool"}[
        a.dtype
    ]
    return {"dtype": kind, "dims": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def elem(a):
    return {
        np.dtype(np.float32): TensorProto.FLOAT,
        np.dtype(np.int32): TensorProto.INT32,
        np.dtype(np.int64): TensorProto.INT64,
        np.dtype(bool): TensorProto.BOOL,
    }[np.asarray(a).dtype]


def case(name, nodes, inputs, outputs, opset, note, check_reference=False):
    """One single-graph model over named numpy inputs; outputs lists the
    graph outputs' names. With check_reference, the reference's outputs
    replace ONNX Runtime's where the two disagree (only where the reference
    implements every attribute the case sets: its RNNs ignore
    sequence_lens, clip, input_forget and activations, its Loop a missing
    cond)."""
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(k, elem(v), list(np.asarray(v).shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    data = model.SerializeToString()
    source = "onnxruntime " + ort.__version__
    ref = None
    try:
        ref = ReferenceEvaluator(model).run(outputs, inputs)
    except Exception:  # noqa: BLE001 - the reference lacks a few forms ONNX Runtime runs
        check_reference = False
    try:
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        got = sess.run(outputs, inputs)
    except Exception as e:  # noqa: BLE001 - fall back to the reference and say why
        source = "onnx reference (onnxruntime: " + str(e).splitlines()[0][:120] + ")"
        got = ref
    else:
        if check_reference:
            worst = max(
                float(np.max(np.abs(np.asarray(a, np.float64) - b), initial=0)) for a, b in zip(got, ref, strict=True)
            )
            if worst > 1e-4:
                source = f"onnx reference (onnxruntime {ort.__version__} differs by up to {worst:.3g})"
                got = ref
    return {
        "name": name,
        "note": note,
        "source": source,
        "model": base64.b64encode(data).decode(),
        "inputs": {k: tensor_json(v) for k, v in inputs.items()},
        "outputs": {o: tensor_json(g) for o, g in zip(outputs, got, strict=True)},
    }


def rnn_inputs(gates, T, B, In, H, dirs, lens, peep=False, layout=0):
    x = rand(T, B, In) if layout == 0 else rand(B, T, In)
    ins = {
        "X": x,
        "W": rand(dirs, gates * H, In),
        "R": rand(dirs, gates * H, H),
        "B": rand(dirs, 2 * gates * H),
        "sequence_lens": np.array(lens, dtype=np.int32),
    }
    st = (dirs, B, H) if layout == 0 else (B, dirs, H)
    ins["initial_h"] = rand(*st)
    if gates == 4:
        ins["initial_c"] = rand(*st)
        if peep:
            ins["P"] = rand(dirs, 3 * H)
    return ins


def rnn_case(name, note, ins, op, attrs):
    """One RNN, GRU or LSTM node (op) with the attributes attrs over ins
    (rnn_inputs'), at opset 14, returning every output the op has."""
    outputs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    node = helper.make_node(op, list(ins), outputs, name=op.lower(), **attrs)
    return case(name, [node], ins, outputs, 14, note)


cases = [
    rnn_case(
        "lstm_bidirectional_seq_lens",
        "both directions with lengths 4, 2, 1: reverse starts at each length's end, Y is 0 past it",
        rnn_inputs(4, 4, 3, 3, 2, 2, [4, 2, 1], peep=True),
        "LSTM",
        {"hidden_size": 2, "direction": "bidirectional"},
    ),
    rnn_case(
        "lstm_clip_input_forget_activations",
        "clip, input_forget and activations with alpha and beta",
        rnn_inputs(4, 3, 2, 2, 3, 1, [3, 2]),
        "LSTM",
        {
            "hidden_size": 3,
            "clip": 0.5,
            "input_forget": 1,
            "activations": ["HardSigmoid", "LeakyRelu", "Softsign"],
            "activation_alpha": [0.3, 0.2],
            "activation_beta": [0.6],
        },
    ),
    rnn_case(
        "lstm_batchwise_bidirectional",
        "layout 1 with both directions",
        rnn_inputs(4, 3, 2, 2, 3, 2, [3, 3], layout=1),
        "LSTM",
        {"hidden_size": 3, "direction": "bidirectional", "layout": 1},
    ),
    rnn_case(
        "gru_reverse_linear_before_reset",
        "reverse, linear_before_reset, Elu with alpha, lengths 3 and 1",
        rnn_inputs(3, 3, 2, 2, 3, 1, [3, 1]),
        "GRU",
        {
            "hidden_size": 3,
            "direction": "reverse",
            "linear_before_reset": 1,
            "activations": ["Sigmoid", "Elu"],
            "activation_alpha": [0.7],
        },
    ),
    rnn_case(
        "gru_bidirectional_clip",
        "both directions with clip and lengths",
        rnn_inputs(3, 3, 2, 2, 2, 2, [2, 3]),
        "GRU",
        {"hidden_size": 2, "direction": "bidirectional", "clip": 0.4},
    ),
    rnn_case(
        "rnn_bidirectional_activations",
        "a different activation per direction",
        rnn_inputs(1, 4, 2, 3, 2, 2, [4, 3]),
        "RNN",
        {
            "hidden_size": 2,
            "direction": "bidirectional",
            "activations": ["Relu", "Affine"],
            "activation_alpha": [0.5],
            "activation_beta": [0.25],
        },
    ),
]

x4 = rand(2, 3, 4, 5)
g4 = (rand(2, 3, 4, 2) * 1.6).astype(np.float32)  # reaches past [-1, 1]
for mode in ["cubic", "linear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        for align in [0, 1]:
            cases.append(
                case(
                    f"gridsample_{mode}_{pad}_align{align}",
                    [
                        helper.make_node(
                            "GridSample",
                            ["X", "grid"],
                            ["Y"],
                            name="gs",
                            mode=mode,
                            padding_mode=pad,
                            align_corners=align,
                        )
                    ],
                    {"X": x4, "grid": g4},
                    ["Y"],
                    20,
                    "4-D, the grid reaching outside the image",
                    check_reference=True,
                )
            )
x5 = rand(1, 2, 3, 4, 3)
g5 = (rand(1, 2, 3, 2, 3) * 1.5).astype(np.float32)
for mode in ["linear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        cases.append(
            case(
                f"gridsample_5d_{mode}_{pad}",
                [helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", mode=mode, padding_mode=pad)],
                {"X": x5, "grid": g5},
                ["Y"],
                20,
                "5-D, the grid reaching outside the volume",
                check_reference=True,
            )
        )
cases.append(
    case(
        "gridsample_bicubic_opset16",
        [helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", mode="bicubic", padding_mode="zeros")],
        {"X": x4, "grid": g4},
        ["Y"],
        16,
        "opset 16's mode names",
    )
)

# Loop as a while loop: no trip count, the body halves x until its sum
# drops below 1, scanning each iteration's sum.
body = helper.make_graph(
    [
        helper.make_node("Mul", ["x_in", "half"], ["x_out"]),
        helper.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "one"], ["cond_out"]),
        helper.make_node("Identity", ["s"], ["s_scan"]),
    ],
    "body",
    [
        helper.make_tensor_value_info("i", TensorProto.INT64, []),
        helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [3]),
    ],
    [
        helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [3]),
        helper.make_tensor_value_info("s_scan", TensorProto.FLOAT, []),
    ],
    [helper.make_tensor("half", TensorProto.FLOAT, [], [0.5]), helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])],
)
cases.append(
    case(
        "loop_while",
        [helper.make_node("Loop", ["", "cond", "x"], ["x_final", "sums"], name="loop", body=body)],
        {"cond": np.array(True), "x": np.array([3.0, 5.0, 2.0], dtype=np.float32)},
        ["x_final", "sums"],
        17,
        "a while loop: it ends when the body's condition does",
    )
)
# Not here: a trip count without a cond input, where the specification
# ignores the body's condition and ONNX Runtime 1.31 still stops on it
# (TestLoopTripCountIgnoresCondition checks the specification's reading).
cases.append(
    case(
        "loop_zero_trips",
        [helper.make_node("Loop", ["M", "cond", "x"], ["x_final", "sums"], name="loop", body=body)],
        {"M": np.array(0, dtype=np.int64), "cond": np.array(True), "x": np.array([3.0, 5.0, 2.0], dtype=np.float32)},
        ["x_final", "sums"],
        17,
        "no iterations: the carried value comes out unchanged, the scan output empty",
    )
)

# Scan: a running sum of rows taken from the end, output along axis 1 and
# reversed, with a second scan input read forwards along axis 1.
sbody = helper.make_graph(
    [helper.make_node("Add", ["acc_in", "row"], ["acc_out"]), helper.make_node("Mul", ["acc_out", "col"], ["prod"])],
    "sbody",
    [
        helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2]),
        helper.make_tensor_value_info("row", TensorProto.FLOAT, [2]),
        helper.make_tensor_value_info("col", TensorProto.FLOAT, [2]),
    ],
    [
        helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
        helper.make_tensor_value_info("prod", TensorProto.FLOAT, [2]),
    ],
)
cases.append(
    case(
        "scan_axes_directions",
        [
            helper.make_node(
                "Scan",
                ["acc", "rows", "cols"],
                ["acc_final", "prods"],
                name="scan",
                body=sbody,
                num_scan_inputs=2,
                scan_input_axes=[0, 1],
                scan_input_directions=[1, 0],
                scan_output_axes=[1],
                scan_output_directions=[1],
            )
        ],
        {"acc": np.zeros(2, dtype=np.float32), "rows": rand(4, 2), "cols": rand(2, 4)},
        ["acc_final", "prods"],
        16,
        "a reversed scan input, a scan input along axis 1, a reversed output along axis 1",
    )
)

json.dump({"cases": cases}, sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
