// Package onnx imports ONNX models: Load parses a ModelProto (through
// google.golang.org/protobuf, with types generated from ONNX's own
// onnx.proto in internal/onnxpb) and returns a Model whose Call is a Go
// function over core tensors. Each ONNX node becomes registry ops (through
// core.Call), so a model runs eagerly on any backend, and ir.Trace
// captures it like hand-written code: Model.Compile traces it, runs the
// IR's passes and fuses what the device can fuse (WebGPU).
//
// Everything that can be checked without input values is checked at load:
// the default-domain opset (7 and later; operators whose meaning changed
// silently are refused in older models), each node's operator and
// attributes (an unsupported one is an error naming the node and its
// op_type, never a silently ignored setting), that every input is defined
// and the graph has no cycle (nodes are sorted topologically), and that
// initializers' data matches their declared dims. Dims are bounded before
// anything is allocated, so hostile protobufs fail cleanly (FuzzLoad).
// Initializers are adopted without a copy on the CPU when their raw data
// is aligned; external data files are read relative to the model's
// directory through an os.Root, so no location can escape it. Symbolic
// dimensions (dim_param) load as such and are bound, consistently across
// inputs, when the model runs.
//
// Integer inputs that ONNX uses as parameters (shapes, axes, slice bounds,
// pads, sizes) are read on the host, from copies kept at load for
// initializers and Constant nodes and at run time for Shape's outputs, so
// the common shape arithmetic does not round-trip through the device and
// a traced graph holds constant attributes: the arithmetic is dead code
// there and the passes remove it.
//
// ONNX's node tests (the onnx Python package's cases) run through
// TestNodeTests against testdata/node_pass.txt and node_fail.txt (the
// reason for each failure), and node_pass_webgpu.txt for the WebGPU
// backend. Real models exported by torch.onnx (testdata/make_models.py: a
// ResNet-18 layout, a ViT, a GPT-2-style decoder with past keys and
// values, and all-MiniLM-L6-v2 with its real weights, exported by `make
// onnx-models`) are held to onnxruntime's outputs on the CPU and WebGPU
// (TestRealModelsMatchOnnxruntime).
//
// Export goes the other way: a traced graph (ir.Trace, Model.Compile) is
// written as an ONNX model (opset 20) op by op, fused nodes as the ops
// they fused, an op without an ONNX form an error naming the node; the
// tests import the exports back, and make_models.py check-export runs
// them in onnxruntime.
//
// The SDKs reach the importer through the C ABI's wt_onnx_* (package abi),
// so Python, Node, the browser and Java load and run models with this code
// and see its errors.
package onnx
