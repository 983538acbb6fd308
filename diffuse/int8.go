package diffuse

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Int8 weights: a diffusion model's linear and conv weights are nearly
// all of its parameters, and holding them as i8 with one f32 scale per
// output channel takes about a quarter of their f32 bytes. The
// quantisation is symmetric (no zero point: trained weights are centred
// on zero, and a zero point would cost a subtraction per weight at every
// call for nothing) and per output channel (channels of one layer differ
// in range by orders of magnitude; one scale per tensor would round the
// small ones to a few levels). A channel's scale is max|w|/127, so its
// largest weight maps to ±127 exactly and nothing clips; the values are
// rounded by core's quantize op, torch.quantize_per_channel's arithmetic.
//
// No matmul or conv kernel takes i8 weights, so a layer dequantises its
// weight when it is called (i8 to f32, times the channel's scale, then to
// the model's dtype) and the f32 copy is dropped when the op is done:
// what stays resident is the int8 data, and the activations stay f32 (or
// f16). The price is one elementwise pass over each weight per call.
//
// The int8 data is held packed, four values to a u32 word (each output
// channel's row padded to whole words), and dequantised by core's
// dequantize_int8x4: WebGPU holds an i8 tensor in 32-bit words (WGSL has
// no 8-bit storage type), which would make "int8" weights as big as f32
// ones on the GPU; packed, they take a byte a weight on every backend.
// Biases, norms and embeddings stay in the model's dtype: they are a small
// share of a real model's bytes (a tiny test DiT's class-embedding table
// is the exception), and the norms are where small errors matter most.

// int8Weight is a linear or conv layer's weight held as packed int8.
type int8Weight struct {
	packed *core.Tensor // u32 (out, words): row c's i8 values, four a word, little-endian, zero-padded
	scale  *core.Tensor // f32 (out): max|w|/127 of each output channel
	shape  core.Shape   // the weight's shape
	dtype  core.DType   // the model's dtype, which the dequantised weight takes
}

// int8Min is the smallest normal f32: a channel whose scale would fall
// below it (all zeros, or weights below 1e-36) gets scale 1 instead, as
// core's quantize refuses a zero scale and multiplies by 1/scale, which
// overflows for subnormal ones. Its weights then all round to 0.
const int8Min = 0x1p-126

// quantizeInt8 quantises w, an (out, ...) weight, per output channel.
func quantizeInt8(w *core.Tensor) (*int8Weight, error) {
	defer core.NoGradScope()()
	shape := w.Shape()
	if len(shape) < 2 {
		return nil, fmt.Errorf("weight of shape %v: want (out, in, ...)", shape)
	}
	axes := make([]int, len(shape)-1)
	for i := range axes {
		axes[i] = i + 1
	}
	f := w.Cast(core.F32)
	amax, err := f.Abs().Max(core.Attrs{"axes": axes}).Float32s()
	if err != nil {
		return nil, err
	}
	scales := make([]float64, len(amax))
	for c, a := range amax {
		if math.IsNaN(float64(a)) || math.IsInf(float64(a), 0) {
			return nil, fmt.Errorf("output channel %d has a non-finite weight (max |w| = %v)", c, a)
		}
		s := a / 127 // in f32, as the scale is used
		if s < int8Min {
			s = 1
		}
		scales[c] = float64(s)
	}
	q := f.Quantize(core.Attrs{"scale": scales, "axis": 0, "dtype": core.I8})
	packed, err := packInt8Rows(q, len(scales))
	q.Release()
	if err != nil {
		return nil, err
	}
	scale := core.FromFloat64s(core.F32, core.Shape{len(scales)}, scales).To(w.Device())
	if err := scale.Err(); err != nil {
		return nil, err
	}
	return &int8Weight{packed: packed, scale: scale, shape: shape.Clone(), dtype: w.DType()}, nil
}

// packInt8Rows packs q, an i8 tensor of rows rows, into u32 words on q's
// device: row c's values fill words [c*words, (c+1)*words), the last word
// zero-padded. A load-time host round trip, once per layer.
func packInt8Rows(q *core.Tensor, rows int) (*core.Tensor, error) {
	raw, err := q.Bytes()
	if err != nil {
		return nil, err
	}
	per := len(raw) / max(rows, 1)
	words := (per + 3) / 4
	buf := make([]byte, rows*words*4)
	for c := range rows {
		copy(buf[c*words*4:], raw[c*per:(c+1)*per])
	}
	packed := core.FromBytes(core.U32, core.Shape{rows, words}, buf, q.Device())
	return packed, packed.Err()
}

// int8s is the weight's int8 values in row-major order, read back (tests
// and the ABI's reports use it).
func (w *int8Weight) int8s() ([]int8, error) {
	raw, err := w.packed.Bytes()
	if err != nil {
		return nil, err
	}
	rows := w.packed.Shape()[0]
	per := w.shape.Numel() / max(rows, 1)
	words := w.packed.Shape()[1]
	out := make([]int8, 0, w.shape.Numel())
	for c := range rows {
		for _, b := range raw[c*words*4 : c*words*4+per] {
			out = append(out, int8(b))
		}
	}
	return out, nil
}

// dequantize is the weight in the model's dtype: each value times its
// channel's scale in f32, one rounding per element (what core's
// dequantize op gives), then cast. Rows padded to whole words lose their
// padding by a slice, which a reshape then copies.
func (w *int8Weight) dequantize() *core.Tensor {
	t := w.packed.DequantizeInt8x4(w.scale)
	if per := w.shape.Numel() / max(w.shape[0], 1); 4*w.packed.Shape()[1] != per {
		t = t.Slice(core.Attrs{"axis": 1, "stop": per})
	}
	t = t.Reshape(w.shape)
	if w.dtype != core.F32 {
		t = t.Cast(w.dtype)
	}
	return t
}

// param is the dequantised weight as a parameter for nn's forward, or,
// when that failed, nil and a tensor carrying the error (a detached
// tensor that requires a gradient is a valid parameter unless it failed).
func (w *int8Weight) param() (*nn.Parameter, *core.Tensor) {
	t := w.dequantize().Detach().SetRequiresGrad(true)
	p, err := nn.ParameterOf(t)
	if err != nil {
		return nil, t
	}
	return p, nil
}

// bytes is what the weight holds: the packed words (a byte a value plus a
// row's padding to a whole word) and the scales.
func (w *int8Weight) bytes() int64 {
	return int64(w.packed.Numel()*core.U32.Size() + w.scale.Numel()*core.F32.Size())
}

// own is the linear layer's forward without adapters.
func (l *linearLayer) own(x *core.Tensor) *core.Tensor {
	if l.int8 == nil {
		return l.Linear.Forward(x)
	}
	w, failed := l.int8.param()
	if failed != nil {
		return failed
	}
	return (&nn.Linear{In: l.In, Out: l.Out, Weight: w, Bias: l.Bias}).Forward(x)
}

// own is the conv layer's forward without adapters.
func (c *convLayer) own(x *core.Tensor) *core.Tensor {
	if c.int8 == nil {
		return c.Conv2d.Forward(x)
	}
	w, failed := c.int8.param()
	if failed != nil {
		return failed
	}
	return (&nn.Conv2d{ConvGeometry: c.ConvGeometry, Weight: w, Bias: c.Bias}).Forward(x)
}

func (t adaptedLayer) weight() *nn.Parameter {
	if t.lin != nil {
		return t.lin.Weight
	}
	return t.conv.Weight
}

func (t adaptedLayer) quantized() *int8Weight {
	if t.lin != nil {
		return t.lin.int8
	}
	return t.conv.int8
}

// setInt8 makes q the layer's weight; the parameter keeps a 0-dim
// placeholder (from int8Placeholder), so the f32 tensor can be freed.
func (t adaptedLayer) setInt8(q *int8Weight, placeholder *core.Tensor) {
	// A placeholder that did not fail is a leaf requiring a gradient:
	// Bind cannot fail.
	_ = t.weight().Bind(placeholder)
	if t.lin != nil {
		t.lin.int8 = q
	} else {
		t.conv.int8 = q
	}
}

// int8Placeholder is what a quantised layer's weight parameter holds: a
// leaf requiring a gradient, as nn.Parameter requires.
func int8Placeholder(dtype core.DType, dev core.Device) (*core.Tensor, error) {
	t := core.Scalar(0, dtype, dev).SetRequiresGrad(true)
	return t, t.Err()
}

// WithInt8Weights loads the model with its linear and conv weights held
// as int8, one f32 scale per output channel (see QuantizeInt8), each
// layer quantised as it is read, so the f32 weights are never all
// resident at once. LoadUNet2DConditionStreamed and NewUNet2D refuse it.
func WithInt8Weights() LoadOption { return func(o *loadOptions) { o.int8 = true } }

// maybeInt8 quantises a layer just built when the load asked for int8
// weights; a failure is a load problem naming the tensor.
func (w *weights) maybeInt8(name string, t adaptedLayer) {
	if !w.int8 || t.weight() == w.dummy {
		return
	}
	var err error
	if w.placeholder == nil {
		w.placeholder, err = int8Placeholder(w.dtype, w.dev)
	}
	var q *int8Weight
	if err == nil {
		q, err = quantizeInt8(t.weight().Tensor())
	}
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("tensor %s.weight: int8: %v", name, err))
		return
	}
	t.setInt8(q, w.placeholder)
}

// QuantizeInt8 holds the linear and conv weights of m (a UNet2DModel,
// UNet2DConditionModel, DiTTransformer2DModel, AutoencoderKL or
// ControlNetModel) as int8 with one f32 scale per output channel: scale =
// max|w|/127 of the channel, values rounded half to even (within ±127 by
// the choice of scale). Each layer then dequantises its weight at its
// call, and the activations keep the model's dtype. It returns how many
// layers it quantised (none when m is quantised already) and changes
// nothing when it fails.
//
// Afterwards StateDict lists 0-dim placeholders for the quantised
// weights, WeightBytes reports the bytes held, LoRA.Apply works (the
// adapter's own weights stay in the model's dtype) and LoRA.Merge and
// Unmerge are refused: merge before quantising. A UNet2DConditionModel
// that streams its weights, and a UNet2DModel in training mode, are
// refused.
func QuantizeInt8(m nn.Module) (int, error) {
	if u, ok := m.(*UNet2DConditionModel); ok && u.stream != nil {
		return 0, fmt.Errorf("diffuse: QuantizeInt8: the UNet streams its weights from the checkpoint (LoadUNet2DConditionStreamed), so none are resident to quantise; load it whole (LoadUNet2DCondition, WithInt8Weights)")
	}
	if u, ok := m.(*UNet2DModel); ok && u.Training() {
		return 0, fmt.Errorf("diffuse: QuantizeInt8: the UNet2DModel is in training mode, and int8 weights do not train; call Train(false) first")
	}
	layers := layersOf(m)
	if len(layers) == 0 {
		return 0, fmt.Errorf("diffuse: QuantizeInt8: a %T has no linear or conv layer of this package's models", m)
	}
	names := make([]string, 0, len(layers))
	for name, t := range layers {
		if t.quantized() == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	sort.Strings(names)
	qs := make([]*int8Weight, len(names))
	for i, name := range names {
		q, err := quantizeInt8(layers[name].weight().Tensor())
		if err != nil {
			return 0, fmt.Errorf("diffuse: QuantizeInt8: layer %s: %w", name, err)
		}
		qs[i] = q
	}
	w := layers[names[0]].weight().Tensor()
	placeholder, err := int8Placeholder(w.DType(), w.Device())
	if err != nil {
		return 0, fmt.Errorf("diffuse: QuantizeInt8: %w", err)
	}
	for i, name := range names {
		layers[name].setInt8(qs[i], placeholder)
	}
	return len(names), nil
}

// WeightBytes is how many bytes m's weights take as held: every
// parameter and buffer at its dtype's size, and for an int8 layer its i8
// weight and f32 scales in place of the parameter (an applied LoRA's
// weights are the adapter's, not counted). For a UNet that streams its
// weights, WeightMemory says what is resident. These are the bytes the
// CPU backend stores; WebGPU stores every element in a 32-bit lane, so
// there an i8 weight occupies as much device memory as an f32 one.
func WeightBytes(m nn.Module) int64 {
	var n int64
	skip := map[*core.Tensor]bool{}
	for _, t := range layersOf(m) {
		if q := t.quantized(); q != nil {
			n += q.bytes()
			skip[t.weight().Tensor()] = true
		}
	}
	for _, s := range m.StateDict() {
		t := s.Value.Tensor()
		if skip[t] {
			continue
		}
		skip[t] = true // a tensor shared by two entries is held once
		n += int64(t.Numel() * t.DType().Size())
	}
	return n
}

// refuseInt8Merge is LoRA.Merge's and Unmerge's check: merging into int8
// weights would requantise them, and Unmerge could not restore them.
func refuseInt8Merge(op string, mine []*LoRALayer, targets []adaptedLayer) error {
	var q []string
	for i, t := range targets {
		if t.quantized() != nil {
			q = append(q, mine[i].Name)
		}
	}
	if len(q) == 0 {
		return nil
	}
	return fmt.Errorf("diffuse: LoRA.%s: %d of the layers hold int8 weights (QuantizeInt8, WithInt8Weights), e.g. %s: merging would requantise them and Unmerge could not restore them; Merge before quantising, or apply the LoRA at run time with Apply",
		op, len(q), strings.Join(q[:min(len(q), 3)], ", "))
}
