package parallel

import (
	"fmt"
	"time"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// Block is a transformer block the executors run, on x of shape [Batch,
// Seq, Dim]: h = x + attention(x Wq, x Wk, x Wv) Wo over Heads heads, out
// = h + relu(h W1) W2, with W1 Hidden wide; a squared-error loss, mean
// over the Batch*Seq rows. Its weights, in order: Wq [Dim Dim], Wkv [Dim
// 2*Dim] (K's columns, then V's), Wo [Dim Dim], W1 [Dim Hidden], W2
// [Hidden Dim]. It has no norms: they act on one position's features, so
// sequence parallel leaves them alone, and tensor parallel is priced
// gathering for them (Analyze) but this block is the Megatron one that
// does not.
type Block struct {
	Batch, Seq, Dim, Heads, Hidden int
}

// Shapes are the weights' shapes, in order.
func (b Block) Shapes() []core.Shape {
	d := b.Dim
	return []core.Shape{{d, d}, {d, 2 * d}, {d, d}, {d, b.Hidden}, {b.Hidden, d}}
}

func (b Block) check() error {
	if b.Batch < 1 || b.Seq < 1 || b.Heads < 1 || b.Dim%b.Heads != 0 || b.Hidden < 1 {
		return fmt.Errorf("parallel: a block needs batch, seq and hidden of at least 1 and heads dividing dim, got %+v", b)
	}
	return nil
}

// attend is softmax(q k^T / sqrt(head dim)) v over heads, for q [B Sq D]
// and k, v [B Sk D]; the result is [B Sq D].
func attend(q, k, v *core.Tensor, heads int) *core.Tensor {
	split := func(t *core.Tensor) *core.Tensor {
		s := t.Shape()
		return t.Reshape(core.Shape{s[0], s[1], heads, s[2] / heads}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	}
	a := core.Call1("scaled_dot_product_attention", core.Attrs{"is_causal": false}, split(q), split(k), split(v))
	s := q.Shape()
	return a.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(s)
}

// attention is attend(xq Wq, K, V) Wo with K and V the halves of kv's
// last dimension.
func attention(xq, wq, wo, kv *core.Tensor, heads int) *core.Tensor {
	d := kv.Shape()[2] / 2
	k := kv.Slice(core.Attrs{"axis": -1, "start": 0, "stop": d, "step": 1})
	v := kv.Slice(core.Attrs{"axis": -1, "start": d, "stop": 2 * d, "step": 1})
	return attend(xq.Matmul(wq), k, v, heads).Matmul(wo)
}

// forward is the block on x with weights ws (Shapes' order).
func (b Block) forward(x *core.Tensor, ws []*core.Tensor) *core.Tensor {
	h := x.Add(attention(x, ws[0], ws[2], x.Matmul(ws[1]), b.Heads))
	return h.Add(h.Matmul(ws[3]).ReLU().Matmul(ws[4]))
}

// BlockModel traces the block's forward pass on the CPU (zero weights
// that require gradients) and analyses it.
func BlockModel(b Block) (Model, error) {
	if err := b.check(); err != nil {
		return Model{}, err
	}
	g, err := b.Trace(core.Device{Kind: "cpu"})
	if err != nil {
		return Model{}, err
	}
	return Analyze(g)
}

// Trace is the block's forward pass as a graph on dev, its weights zero
// constants that require gradients.
func (b Block) Trace(dev core.Device) (*ir.Graph, error) {
	var ws []*core.Tensor
	for _, s := range b.Shapes() {
		ws = append(ws, core.FromSlice(make([]float32, s.Numel()), s, dev).SetRequiresGrad(true))
	}
	x := core.FromSlice(make([]float32, b.Batch*b.Seq*b.Dim), core.Shape{b.Batch, b.Seq, b.Dim}, dev)
	g, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		out := b.forward(in[0], ws)
		return []*core.Tensor{out}, out.Err()
	}, x)
	if err != nil {
		return nil, fmt.Errorf("parallel: tracing the block %+v: %w", b, err)
	}
	return g, nil
}

// attnOp is a worker's "attn" (Data: xq, Wq, Wo, and the gathered KV of
// the whole sequence) or "selfattn" (Data: x, Wq, Wo, Wkv: K and V from
// its own x); N is the heads. It keeps the backward's leaves in Data's
// order.
func attnOp(m msg, state map[int]saved) ([][]float32, error) {
	if len(m.Data) != 4 || len(m.Shapes) != 4 || m.N < 1 {
		return nil, fmt.Errorf("parallel: %s wants 4 operands with shapes and heads, got %d, %d, heads %d", m.Op, len(m.Data), len(m.Shapes), m.N)
	}
	var leaves []*core.Tensor
	for i := range m.Data {
		leaves = append(leaves, tensor(m.Data[i], m.Shapes[i], true))
	}
	kv := leaves[3]
	if m.Op == "selfattn" {
		kv = leaves[0].Matmul(leaves[3])
	}
	out := attention(leaves[0], leaves[1], leaves[2], kv, m.N)
	if err := out.Err(); err != nil {
		return nil, err
	}
	state[m.Key] = saved{out: out, leaves: leaves}
	return values(out)
}

// RunBlockSingle is the block's step in this process, on dev: the reference.
func RunBlockSingle(b Block, dev core.Device, x, y []float32, ws [][]float32) (Step, error) {
	if err := b.check(); err != nil {
		return Step{}, err
	}
	start := time.Now()
	var params []*core.Tensor
	for i, s := range b.Shapes() {
		params = append(params, core.FromSlice(ws[i], s, dev).SetRequiresGrad(true))
	}
	h := b.forward(core.FromSlice(x, core.Shape{b.Batch, b.Seq, b.Dim}, dev), params)
	return localStep(h, y, b.Batch*b.Seq, params, start)
}

// lossGrad is the squared error's mean over rows and its gradient.
func lossGrad(out, y []float32, rows int) (float64, []float32) {
	g := make([]float32, len(out))
	loss := 0.0
	for i := range out {
		d := out[i] - y[i]
		loss += float64(d) * float64(d) / float64(rows)
		g[i] = 2 * d / float32(rows)
	}
	return loss, g
}

// seqPart is positions [lo, hi) of a [B S D] tensor.
func seqPart(x []float32, b, s, d, lo, hi int) []float32 {
	out := make([]float32, 0, b*(hi-lo)*d)
	for i := range b {
		out = append(out, x[(i*s+lo)*d:(i*s+hi)*d]...)
	}
	return out
}

// seqPut writes part (positions [lo, hi) of [B S D]) into x, adding when add.
func seqPut(x, part []float32, b, s, d, lo, hi int, add bool) {
	n := (hi - lo) * d
	for i := range b {
		dst, src := x[(i*s+lo)*d:(i*s+hi)*d], part[i*n:(i+1)*n]
		if add {
			addInto(dst, src)
		} else {
			copy(dst, src)
		}
	}
}

func sum(dst []float32, parts ...[]float32) []float32 {
	out := append([]float32(nil), dst...)
	for _, p := range parts {
		addInto(out, p)
	}
	return out
}
