"""Write tree_models/*.onnx and tree_models/cases.json: small ai.onnx.ml
TreeEnsembleRegressor and TreeEnsembleClassifier models (what skl2onnx and
onnxmltools write for scikit-learn, XGBoost and LightGBM trees) with an
input and the outputs onnx's reference evaluator computes for it
(test-only; needs the onnx package and numpy, not webtensor).

TestTreeEnsembleMLCases (ops_tree_ml_test.go) runs each model through the
importer and compares: floats to 1e-5 relative, labels exactly.

The forest has three trees over three features, its nodes listed out of
tree order (tree 0's leaves come last), with every branch mode
(BRANCH_LEQ, LT, GTE, GT, EQ, NEQ), NaN inputs on nodes whose
nodes_missing_value_tracks_true is 0 and 1, inputs equal to the
thresholds, and a tree that is one leaf. The regressor cases cover SUM,
AVERAGE, MIN and MAX, base_values, two targets (leaves giving a target
twice, or one target only), the *_as_tensor attributes (doubles) and
ai.onnx.ml opset 1; the classifier cases three classes with int64 and with
string labels under each post_transform, and the binary case (two labels,
one class id).

Where onnxruntime and the reference differ the importer follows
onnxruntime, and so do the expectations, which the case's "source" says:
- The reference regressor implements no post_transform: the expectation
  is the reference's output without it, transformed by the reference's
  own functions (_common_classifier), as onnxruntime transforms it.
- The binary case: onnxruntime scores [1-s, s] whenever no class weight
  is negative (whatever post_transform; the label is the second one where
  s > 0.5) and [-s, s] otherwise ([sigmoid(-s), sigmoid(s)] under
  LOGISTIC; the second label where s > 0). The reference takes [1-s, s]
  under NONE and transforms [-s, s] otherwise, labels by the highest
  transformed score. Where they differ, s comes from the reference run
  with post_transform NONE (Z[:, 1] = s) and onnxruntime's rule gives the
  expectation. (onnxruntime is not installed here, so its rule is applied
  as its source, onnxruntime/core/providers/cpu/ml/tree_ensemble_aggregator.h
  and ml_common.h, states it. Recent releases write [s, -s] where s <= 0
  in the mixed, non-LOGISTIC case; the importer and these expectations
  keep [-s, s], as older releases do.)
Every classifier case checks that the reference's labels are those of the
highest score before the transform, which onnxruntime uses.

Usage: python make_tree_models.py  (writes next to this file, into tree_models/)
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops.aionnxml._common_classifier import logistic, softmax, softmax_zero

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tree_models")
NAN = float("nan")

# (tree id, node id, feature, mode, threshold, true id, false id, missing tracks true)
NODES = [
    (0, 0, 0, "BRANCH_LEQ", 0.5, 1, 2, 0),
    (0, 1, 1, "BRANCH_LT", 2.0, 3, 4, 1),
    (1, 0, 2, "BRANCH_GTE", 1.0, 1, 2, 0),
    (1, 1, 0, "BRANCH_GT", -1.0, 3, 4, 0),
    (1, 2, 1, "BRANCH_EQ", 3.0, 5, 6, 0),
    (1, 3, 0, "LEAF", 0.0, 0, 0, 0),
    (1, 4, 0, "LEAF", 0.0, 0, 0, 0),
    (1, 5, 0, "LEAF", 0.0, 0, 0, 0),
    (1, 6, 2, "BRANCH_NEQ", 0.25, 7, 8, 1),
    (1, 7, 0, "LEAF", 0.0, 0, 0, 0),
    (1, 8, 0, "LEAF", 0.0, 0, 0, 0),
    (2, 0, 0, "LEAF", 0.0, 0, 0, 0),
    (0, 2, 0, "LEAF", 0.0, 0, 0, 0),
    (0, 3, 0, "LEAF", 0.0, 0, 0, 0),
    (0, 4, 0, "LEAF", 0.0, 0, 0, 0),
]
LEAVES = [(t, n) for t, n, _, mode, *_ in NODES if mode == "LEAF"]

X = np.array(
    [
        [0.5, 2.0, 1.0],
        [0.6, 1.0, 0.99],
        [-1.0, NAN, 0.25],
        [NAN, 3.0, NAN],
        [2.0, 3.0, 0.0],
        [0.0, 0.0, 5.0],
        [-2.0, 5.0, 1.0],
        [1.0, -1.0, NAN],
    ],
    dtype=np.float32,
)


def node_attrs(as_tensor=False):
    a = {
        "nodes_treeids": [n[0] for n in NODES],
        "nodes_nodeids": [n[1] for n in NODES],
        "nodes_featureids": [n[2] for n in NODES],
        "nodes_modes": [n[3] for n in NODES],
        "nodes_truenodeids": [n[5] for n in NODES],
        "nodes_falsenodeids": [n[6] for n in NODES],
        "nodes_missing_value_tracks_true": [n[7] for n in NODES],
    }
    values = [n[4] for n in NODES]
    if as_tensor:
        a["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(values, dtype=np.float64), "nodes_values")
    else:
        a["nodes_values"] = values
    return a


def leaf_attrs(prefix, entries, as_tensor=False):
    """entries: (leaf index into LEAVES, target or class, weight)."""
    a = {
        prefix + "_treeids": [LEAVES[i][0] for i, _, _ in entries],
        prefix + "_nodeids": [LEAVES[i][1] for i, _, _ in entries],
        prefix + "_ids": [t for _, t, _ in entries],
    }
    weights = [w for _, _, w in entries]
    if as_tensor:
        a[prefix + "_weights_as_tensor"] = numpy_helper.from_array(np.array(weights, dtype=np.float64), "weights")
    else:
        a[prefix + "_weights"] = weights
    return a


def model(op, attrs, outputs, ml_opset=3, x_type=TensorProto.FLOAT):
    node = helper.make_node(op, ["X"], [name for name, _, _ in outputs], domain="ai.onnx.ml", name="trees", **attrs)
    graph = helper.make_graph(
        [node],
        "trees",
        [helper.make_tensor_value_info("X", x_type, ["N", 3])],
        [helper.make_tensor_value_info(name, t, shape) for name, t, shape in outputs],
    )
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", ml_opset)], ir_version=8
    )
    onnx.checker.check_model(m)
    return m


def regressor(targets=1, **attrs):
    return model("TreeEnsembleRegressor", {"n_targets": targets, **attrs}, [("Y", TensorProto.FLOAT, ["N", targets])])


def classifier(string_labels=False, **attrs):
    y_type = TensorProto.STRING if string_labels else TensorProto.INT64
    return model("TreeEnsembleClassifier", attrs, [("Y", y_type, ["N"]), ("Z", TensorProto.FLOAT, ["N", None])])


def run(m, x=X):
    return ReferenceEvaluator(m).run(None, {"X": x})


def tensor_json(a):
    a = np.asarray(a)
    if a.dtype.kind in "OU":
        return {"dtype": "string", "dims": list(a.shape), "strings": [str(s) for s in a.reshape(-1)]}
    kind = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int64): "i64"}[a.dtype]
    data = [None if isinstance(v, float) and np.isnan(v) else v for v in a.reshape(-1).tolist()]
    return {"dtype": kind, "dims": list(a.shape), "data": data}


CASES = []


def case(name, m, outputs, source="reference", note=""):
    os.makedirs(HERE, exist_ok=True)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))
    names = [o.name for o in m.graph.output]
    CASES.append(
        {
            "name": name,
            "file": name + ".onnx",
            "source": source,
            "note": note,
            "inputs": {"X": tensor_json(X)},
            "outputs": {n: tensor_json(v) for n, v in zip(names, outputs, strict=True)},
        }
    )


# Regressors. One target: every leaf a value, base 0.5.
ONE = [(i, 0, w) for i, w in enumerate([1.0, 2.0, -3.0, 0.25, 4.0, -1.5, 8.0, 0.125, 16.0])]
# Two targets (indices into LEAVES): leaves 1, 3, 5 and 6 give target 0
# only, so rows 1 and 7 (leaves 6, 3 and 5) reach no value for target 1
# (MIN and MAX leave float32's extreme there); leaf 4 gives target 1
# twice, leaf 0 target 0 twice.
TWO = ONE + [(0, 0, 0.5), (0, 1, -2.0), (2, 1, 3.0), (4, 1, 1.0), (4, 1, -6.0), (7, 1, -0.5), (8, 1, 2.5)]

for agg in ["SUM", "AVERAGE", "MIN", "MAX"]:
    m = regressor(aggregate_function=agg, base_values=[0.5], **node_attrs(), **leaf_attrs("target", ONE))
    case("regressor_" + agg.lower(), m, run(m))
    m = regressor(2, aggregate_function=agg, **node_attrs(), **leaf_attrs("target", TWO))
    case("regressor_two_targets_" + agg.lower(), m, run(m))

m = regressor(2, base_values=[1.0, -1.0], **node_attrs(), **leaf_attrs("target", TWO))
case("regressor_two_targets_base", m, run(m))

# The reference reads no *_as_tensor attribute: the same model with float
# attributes (every value exact in float32) gives the expectation.
plain = regressor(
    2, aggregate_function="AVERAGE", base_values=[0.125, 0.25], **node_attrs(), **leaf_attrs("target", TWO)
)
m = regressor(
    2,
    aggregate_function="AVERAGE",
    base_values_as_tensor=numpy_helper.from_array(np.array([0.125, 0.25]), "base"),
    **node_attrs(as_tensor=True),
    **leaf_attrs("target", TWO, as_tensor=True),
)
case(
    "regressor_as_tensor",
    m,
    run(plain),
    source="reference on the model with float attributes",
    note="thresholds, weights and base values as double tensors",
)

m = model(
    "TreeEnsembleRegressor",
    {"n_targets": 1, "base_values": [0.5], **node_attrs(), **leaf_attrs("target", ONE)},
    [("Y", TensorProto.FLOAT, ["N", 1])],
    ml_opset=1,
)
case("regressor_opset1", m, run(m))

transforms = {"LOGISTIC": logistic, "SOFTMAX": softmax, "SOFTMAX_ZERO": softmax_zero}
# For SOFTMAX_ZERO, target 1 scores in two leaves only (so is often zero).
TWO_SPARSE = [(i, t, w) for i, t, w in TWO if t == 0 or i in (2, 5)]
for post, fn in transforms.items():
    entries = TWO_SPARSE if post == "SOFTMAX_ZERO" else TWO
    base = [0.0, 0.0] if post == "SOFTMAX_ZERO" else [0.0, 1.0]
    plain = regressor(2, base_values=base, **node_attrs(), **leaf_attrs("target", entries))
    (y,) = run(plain)
    want = fn(y.astype(np.float32).copy()).astype(np.float32)
    m = regressor(2, base_values=base, post_transform=post, **node_attrs(), **leaf_attrs("target", entries))
    case(
        "regressor_" + post.lower(),
        m,
        [want],
        source="reference without post_transform, then _common_classifier's " + post,
        note="the reference regressor implements no post_transform; onnxruntime's does",
    )

# Classifiers, three classes: each leaf scores every class (class 2's
# weight is 0 in some leaves, so SOFTMAX_ZERO meets zeros).
PROBS = [
    [0.2, 0.5, 0.3],
    [0.6, 0.1, 0.3],
    [0.1, 0.2, 0.7],
    [0.3, 0.3, 0.0],
    [0.5, 0.5, 0.0],
    [0.3, 0.4, 0.3],
    [0.4, 0.25, 0.35],
    [0.9, 0.1, 0.0],
    [0.0, 0.6, 0.4],
]
MULTI = [(i, c, p) for i, row in enumerate(PROBS) for c, p in enumerate(row)]
# For SOFTMAX_ZERO, class 2 scores in two leaves only, so its total is
# often exactly zero.
SPARSE = [(i, c, p) for i, c, p in MULTI if c < 2 or i in (0, 2)]
LABELS = {"int": {"classlabels_int64s": [10, 20, 30]}, "str": {"classlabels_strings": ["cat", "dog", "eel"]}}


def check_labels(m, labels, attrs):
    """The reference's labels are those of the highest raw score."""
    plain = classifier(isinstance(labels[0], str), **{**attrs, "post_transform": "NONE"})
    _, raw = run(plain)
    y, _ = run(m)
    assert [str(v) for v in y] == [str(labels[i]) for i in np.argmax(raw, axis=1)], (y, raw)


for kind, labels in LABELS.items():
    for post in ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"]:
        entries = SPARSE if post == "SOFTMAX_ZERO" else MULTI
        attrs = {"post_transform": post, **labels, **node_attrs(), **leaf_attrs("class", entries)}
        if post == "NONE":
            attrs["base_values"] = [0.0, 0.1, -0.1]
        m = classifier(kind == "str", **attrs)
        check_labels(m, list(labels.values())[0], attrs)
        case(f"classifier_{kind}_{post.lower()}", m, run(m))

# Binary: one class id (0), two labels. Mixed-sign weights with LOGISTIC
# (gradient boosting) and positive weights with NONE (a forest's
# probabilities) agree with onnxruntime.
SCORES = [0.4, -1.2, -2.0, 0.3, -0.7, 1.1, -0.05, -0.2, 0.6]
MIXED = [(i, 0, s) for i, s in enumerate(SCORES)]
POSITIVE = [(i, 0, p / 3) for i, p in enumerate([0.2, 0.9, 0.6, 0.35, 0.8, 0.1, 0.55, 0.4, 0.95])]
BIN_INT = {"classlabels_int64s": [0, 1]}
BIN_STR = {"classlabels_strings": ["no", "yes"]}

m = classifier(post_transform="LOGISTIC", base_values=[0.2], **BIN_INT, **node_attrs(), **leaf_attrs("class", MIXED))
case("binary_logistic", m, run(m))
m = classifier(True, post_transform="LOGISTIC", **BIN_STR, **node_attrs(), **leaf_attrs("class", MIXED))
case("binary_logistic_strings", m, run(m))
m = classifier(True, **BIN_STR, **node_attrs(), **leaf_attrs("class", POSITIVE))
case("binary_probabilities", m, run(m))
m = classifier(base_values=[0.1], **BIN_INT, **node_attrs(), **leaf_attrs("class", POSITIVE))
case("binary_probabilities_base", m, run(m))

# Where the two differ: mixed weights without a transform ([-s, s]) and
# positive weights under LOGISTIC ([1-s, s], untransformed).
plain = classifier(base_values=[0.2], **BIN_INT, **node_attrs(), **leaf_attrs("class", MIXED))
_, z = run(plain)
s = z[:, 1]
m = plain
case(
    "binary_mixed_none",
    m,
    [np.where(s > 0, 1, 0).astype(np.int64), np.stack([-s, s], axis=1).astype(np.float32)],
    source="onnxruntime's rule on the reference's s",
    note="the reference scores [1-s, s] and labels by s > 0.5",
)
plain = classifier(**BIN_INT, **node_attrs(), **leaf_attrs("class", POSITIVE))
y, z = run(plain)
m = classifier(post_transform="LOGISTIC", **BIN_INT, **node_attrs(), **leaf_attrs("class", POSITIVE))
case(
    "binary_positive_logistic",
    m,
    [y, z],
    source="onnxruntime's rule on the reference's s (its output without post_transform)",
    note="the reference scores [sigmoid(-s), sigmoid(s)]",
)

with open(os.path.join(HERE, "cases.json"), "w") as f:
    json.dump({"cases": CASES}, f, indent=1)
    f.write("\n")
