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
// silently are refused in older models; a model of ai.onnx.ml operators (LabelEncoder,
// ArrayFeatureExtractor, Binarizer, the tree ensembles) alone may import none), each node's operator and
// attributes (an unsupported one is an error naming the node and its
// op_type, never a silently ignored setting), that every input is defined
// and the graph has no cycle (nodes are sorted topologically), and that
// initializers' data matches their declared dims. Dims are bounded before
// anything is allocated, so hostile protobufs fail cleanly (FuzzLoad).
// Initializers are adopted without a copy on the CPU when Load read them
// from the file (or LoadBytes was given AdoptBytes), each moved within the
// bytes to its elements' alignment; from LoadBytes (whose caller keeps its
// buffer) they are copied once, into the backend's storage, never through
// the protobuf decoder (rawsplit.go); external data files are read relative to the model's
// directory through an os.Root, so no location can escape it. Symbolic
// dimensions (dim_param) load as such and are bound, consistently across
// inputs, when the model runs.
//
// ONNX element types webtensor had no dtype for are held widened into one
// it has, exactly: UINT16 as i32, UINT64 as i64 (the importer predates
// webtensor's u16 and u64 and keeps this holding, which runs on every
// device; the exporter writes u16 and u64 tensors as UINT16 and UINT64), INT4 and INT2 as i8, UINT4
// and UINT2 as u8, and the float8 types (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ,
// E8M0) and FLOAT4E2M1 as f32. A tensor of such a type carries only values
// of it: TensorProtos (packed 4- and 2-bit storage included) decode to
// them, graph inputs are checked (ValueInfo.Narrow names the declared type;
// a value outside it is an error naming the input and element), Cast,
// CastLike and QuantizeLinear round onto it (float8 and float4 to nearest,
// ties to even, with saturate and each variant's NaN/Inf rules; E8M0 by
// round_mode; integers wrap, as ONNX's Cast does between fixed-point types)
// and any other operator's result on it is brought back into it (a uint16
// Sub wraps at 2^16). UINT64 values above 2^63-1 do not fit the i64 that
// holds them: they are refused where they enter (initializers, test data,
// inputs) and where they would be returned, and a uint64 computed past
// 2^63-1 in between keeps its bits but compares as negative. Where ONNX's
// written rules and its reference implementation part, the importer follows
// the rules: NaN cast to FLOAT4E2M1 is +6 (float4.md; the reference gives a
// zero), and Inf cast to FLOAT8E8M0 saturates (or is NaN without saturate;
// the reference always gives NaN). Out-of-range floats cast to INT4, UINT4,
// INT2 and UINT2, which ONNX leaves undefined, give 0 as the reference
// does; to UINT16 they saturate, as webtensor's other casts do. The
// rounding is registry ops, so it runs on every device and traces.
//
// Quantized models: MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv take the zero points off in i32, as ONNX's reference does,
// so the integer products are exact: matmuls run as i32 matmuls, and a
// convolution as four f32 convolutions of the operands' 4-bit halves
// (exact to 65536 taps, where one f32 convolution of 8-bit values rounds
// past about 258). QLinear* requantize with round half to even.
//
// Detection and image geometry: NonMaxSuppression selects on the host
// (its output's length depends on the scores), RoiAlign computes its
// sample points and bilinear weights on the host (a region's sample grid
// follows from its size) and gathers and reduces with registry ops;
// AffineGrid (a matmul against a constant grid), Col2Im (an index_add at
// positions fixed by the shapes, any number of spatial dims) and
// MaxUnpool (a scatter into zeros) are registry ops throughout, as are
// DeformConv (each tap's bilinear corners taken with one take_along_axis,
// then a grouped matmul; any number of spatial dims) and ConvTranspose
// over three or more spatial dims (a matmul, then Col2Im's index_add).
// Unique
// (its output's length depends on the values) and BitCast (no registry
// op reinterprets bits) run on the host too. The operators that work on
// the host refuse to be traced (ir.Trace, Model.Compile), naming the
// node, since a traced graph would hold their result for the example
// inputs only. STFT (frames cut by one index_select, then the registry's
// FFTs), Scatter (opset 9's ScatterElements), TensorScatter,
// SwiGLU and ai.onnx.ml's ArrayFeatureExtractor and Binarizer are
// registry ops, and so are ai.onnx.ml's TreeEnsemble and the older
// TreeEnsembleRegressor and TreeEnsembleClassifier that skl2onnx and
// onnxmltools write: their trees become tables at load, and every sample
// walks every tree one level per step (gathers, compares and a where, as
// many steps as the deepest tree), the thresholds compared in X's type
// (TreeEnsemble) or in float32, float64 where X or an attribute is double
// and the device has float64 (the older two, whose outputs are float32).
// A classifier's string labels are picked on the host. TfIdfVectorizer (integer n-grams;
// string pools are refused) compares the input's windows, for each n-gram
// length and skip, with the whole pool and counts the matches with
// registry ops too.
//
// Integer inputs that ONNX uses as parameters (shapes, axes, slice bounds,
// pads, sizes) are read on the host, from copies kept at load for
// initializers and Constant nodes and at run time for Shape's outputs, so
// the common shape arithmetic does not round-trip through the device and
// a traced graph holds constant attributes: the arithmetic is dead code
// there and the passes remove it. MelWeightMatrix reads its scalar inputs
// the same way and builds its filterbank on the host, a constant.
//
// Sequences and optionals (SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
// SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
// OptionalHasElement, OptionalGetElement) are values the importer's
// runtime holds, not tensor dtypes: a Sequence is a list of tensors of one
// element type, an Optional none or one tensor or sequence. Identity, If,
// Loop and Scan carry them like tensors; every other operator takes
// tensors, and a sequence or optional given to one is an error naming
// the input. The tensor work inside (split, concat, stack) is registry
// ops, so it runs on every backend, and a traced graph holds it. Graph
// inputs and outputs of these types (ValueInfo.Kind) go through
// RunValues, and through the C ABI's onnx.run_values (wt_call), which every
// SDK uses for them; Run and Call (and onnx.run) carry tensors only and
// refuse such a model, naming the input or output. Maps, sparse tensors
// and sequences of anything but numeric tensors are refused at load.
//
// String tensors (ONNX's STRING) are held on the host as a *Strings, a
// shape and its strings in row-major order: webtensor's tensors live on
// devices and have no string dtype. Initializers, Constant nodes and
// graph inputs and outputs (ValueInfo.Kind KindStrings, through
// RunValues; Run, Call and the C ABI refuse them) may be
// strings. StringNormalizer, StringConcat, StringSplit, RegexFullMatch
// (Go's regexp, the RE2 syntax ONNX specifies, compiled at load), Equal
// and ai.onnx.ml's LabelEncoder (string, integer and float keys and
// values) run on the host; a result that is not strings (a comparison's
// booleans, StringSplit's counts, LabelEncoder's numbers) is a tensor on
// the model's device. Cast and CastLike convert both ways: numbers are
// written as NumPy writes them (ONNX's reference), with "INF", "-INF"
// and "NaN" for the special values, and a string that is no number is
// an error naming the element (ONNX leaves it undefined). The operators
// that only move values (Identity, Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Gather, GatherElements, GatherND,
// Expand, Tile, Compress, ReverseSequence, Where) and Shape and Size run
// their tensor form on the strings' positions, so their semantics and
// errors are those of the tensor form; If and Loop carry strings like
// tensors. Any other operator given a string tensor is an error naming
// the input.
//
// Control flow runs on the host: If picks its branch, Loop and Scan run
// their body once per iteration (the trip count and each condition read
// as numbers), so a traced graph holds the branch taken or the loop
// unrolled. The recurrent layers (RNN, GRU, LSTM) and opset 27's
// LinearAttention are unrolled over the sequence into matmuls and
// pointwise ops (CausalConvWithState is a depthwise conv1d over the
// carried state and the input), and GridSample gathers its taps
// with take_along_axis: no operator needs a kernel of its own, so each
// runs on every backend and autograd differentiates it. Where ONNX
// Runtime departs from ONNX's text the importer follows the text: a Loop
// with a trip count and no cond input ignores the body's condition, and
// cubic GridSample with border padding clamps per axis as the reference
// does (testdata/recurrent_cases.py records ONNX Runtime's outputs for
// the rest).
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
// The SDKs reach the importer through the C ABI's wt_call (onnx.* targets, package abi),
// so Python, Node, the browser and Java load and run models with this code
// and see its errors.
package onnx
