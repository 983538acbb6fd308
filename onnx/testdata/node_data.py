"""Print the directory of ONNX's node tests, writing it first when needed.

The onnx wheel ships the test cases as Python (onnx.backend.test.case.node)
but, since 1.16 or so, not always their serialized form (backend/test/data/
node): when that folder is missing, the cases are written to
<cache>/onnx-<version>/node with the writer onnx's own cmd_tools uses, once
per onnx version. Usage: python node_data.py CACHE_DIR
"""

import os
import sys
import types
import warnings

import onnx
from onnx.backend.test import cmd_tools
import onnx.backend.test.case.node as node_cases


def main() -> None:
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if os.path.isdir(shipped):
        print(shipped)
        return
    root = os.path.join(sys.argv[1], f"onnx-{onnx.__version__}")
    out = os.path.join(root, "node")
    stamp = os.path.join(root, "complete")
    if not os.path.exists(stamp):
        warnings.simplefilter("ignore")
        # cmd_tools writes the cases model_test collects; hand it the node cases.
        cmd_tools.model_test = types.SimpleNamespace(collect_testcases=node_cases.collect_testcases)
        cmd_tools.generate_data(types.SimpleNamespace(output=root))
        with open(stamp, "w") as f:
            f.write(onnx.__version__ + "\n")
    print(out)


if __name__ == "__main__":
    main()
