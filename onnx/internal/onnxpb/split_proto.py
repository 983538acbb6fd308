"""Splits onnx.proto (ONNX's schema, copied unchanged from the onnx
package) into files of the same protobuf package, one per part of the
schema, so that protoc-gen-go writes one Go file per part and none is over
the repository's 850-line limit. generate.sh runs it into a temporary
directory; only onnx.proto and the generated Go files are committed.

    python3 split_proto.py onnx.proto OUT_DIR

Each part keeps its messages' comments and imports the parts it refers to.
Attributes, nodes and graphs refer to each other, so they share a part.
"""

import re
import sys
from pathlib import Path

# part: (top-level messages and enums, parts it imports, what it holds)
PARTS = {
    "onnx_common": (["Version", "StringStringEntryProto", "OperatorSetIdProto", "OperatorStatus"], [],
                    "the IR version, string key/value entries, operator set ids and statuses"),
    "onnx_tensor": (["TensorProto", "SparseTensorProto", "TensorAnnotation"], ["onnx_common"],
                    "dense and sparse tensor values and quantization annotations"),
    "onnx_type": (["TensorShapeProto", "TypeProto"], [], "shapes and the type system"),
    "onnx_value": (["ValueInfoProto"], ["onnx_common", "onnx_type"], "the value infos that declare a graph's values"),
    "onnx_device": (["IntIntListEntryProto", "NodeDeviceConfigurationProto", "ShardingSpecProto", "ShardedDimProto",
                     "SimpleShardedDimProto", "DeviceConfigurationProto"], [],
                    "multi-device configuration: nodes' sharding and models' device configurations"),
    "onnx_graph": (["AttributeProto", "NodeProto", "GraphProto"],
                   ["onnx_common", "onnx_tensor", "onnx_type", "onnx_value", "onnx_device"],
                   "attributes, nodes and graphs (attributes hold graphs, graphs nodes, nodes attributes)"),
    "onnx_model": (["TrainingInfoProto", "ModelProto", "FunctionProto"],
                   ["onnx_common", "onnx_graph", "onnx_value", "onnx_device"],
                   "training information, the model and model-local functions"),
}


def top_level(lines):
    """(name, first line, closing line) of each top-level message and enum."""
    items, i = [], 0
    while i < len(lines):
        m = re.match(r"^(message|enum) (\w+) \{", lines[i])
        if not m:
            i += 1
            continue
        j = i
        while not lines[j].startswith("}"):
            j += 1
        items.append((m.group(2), i, j))
        i = j + 1
    return items


def main(src, out):
    lines = Path(src).read_text().split("\n")
    pkg = next(k for k, line in enumerate(lines) if line.startswith("package onnx;"))
    items = top_level(lines)
    chunks, prev = {}, pkg
    for name, _, end in items:  # each item keeps the comments above it
        chunks[name] = "\n".join(lines[prev + 1:end + 1]).strip("\n")
        prev = end
    tail = "\n".join(lines[prev + 1:]).strip()  # the file options
    placed = [n for names, _, _ in PARTS.values() for n in names]
    if sorted(placed) != sorted(chunks):
        sys.exit(f"split_proto.py: PARTS places {sorted(placed)}, onnx.proto has {sorted(chunks)}")
    head = "\n".join(lines[:pkg + 1])
    for part, (names, imports, what) in PARTS.items():
        note = (f"// webtensor: {part}.proto is the part of onnx.proto that holds {what};\n"
                "// split_proto.py writes it (onnx/internal/onnxpb).\n\n")
        text = head.replace('syntax = "proto2";', note + 'syntax = "proto2";')
        text += "\n\n" + "".join(f'import "{i}.proto";\n' for i in imports)
        text += "\n" + "\n\n".join(chunks[n] for n in names) + "\n\n" + tail + "\n"
        Path(out, part + ".proto").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
