package parallel

import (
	"fmt"
	"sync"
	"time"

	"github.com/webtensor/webtensor/core"
)

// The block's executors on worker processes. Each phase is a call per
// worker at once; the residual adds, the loss and every collective run in
// the parent (a star), as Predict prices them.

func newStep(b Block) Step {
	s := Step{Out: make([]float32, b.Batch*b.Seq*b.Dim)}
	for _, sh := range b.Shapes() {
		s.Grads = append(s.Grads, make([]float32, sh.Numel()))
	}
	return s
}

// RunBlockSP is sequence parallel: worker i holds positions [i*S/p,
// (i+1)*S/p) of every sequence and all the weights. Attention needs the
// K and V of the whole sequence: each worker computes its positions' K
// and V, the parent gathers them and sends the whole to every worker (an
// all-gather through the star); in the backward the parent sums the
// workers' gradients of the gathered K and V and hands each its
// positions' part (a reduce-scatter). The weights' gradients are summed
// (an all-reduce), as in data parallel.
func RunBlockSP(b Block, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	p := len(workers)
	if err := b.check(); err != nil {
		return Step{}, err
	}
	if b.Seq%p != 0 {
		return Step{}, fmt.Errorf("parallel: sequence parallel over %d workers needs a sequence length divisible by it, got %d", p, b.Seq)
	}
	start := time.Now()
	B, S, D, part := b.Batch, b.Seq, b.Dim, b.Seq/p
	sh := b.Shapes()
	s := newStep(b)
	kv, dkv := make([]float32, B*S*2*D), make([]float32, B*S*2*D)
	xs, hs := make([][]float32, p), make([][]float32, p)
	var mu sync.Mutex
	err := parallelDo(p, func(i int) error { // each position's K and V
		xs[i] = seqPart(x, B, S, D, i*part, (i+1)*part)
		r, err := workers[i].call(msg{Op: "fwd", Key: 300, Data: [][]float32{xs[i], ws[1]}, Shapes: []core.Shape{{B * part, D}, sh[1]}})
		if err != nil {
			return err
		}
		seqPut(kv, r.Data[0], B, S, 2*D, i*part, (i+1)*part, false)
		return nil
	})
	if err != nil {
		return Step{}, err
	}
	err = parallelDo(p, func(i int) error { // attention on the gathered K and V, the MLP, their backward
		xi := xs[i]
		r, err := workers[i].call(msg{Op: "attn", Key: 301, N: b.Heads, Data: [][]float32{xi, ws[0], ws[2], kv},
			Shapes: []core.Shape{{B, part, D}, sh[0], sh[2], {B, S, 2 * D}}})
		if err != nil {
			return err
		}
		hs[i] = sum(xi, r.Data[0])
		r, err = workers[i].call(msg{Op: "fwd", Key: 302, Relu: true, Data: [][]float32{hs[i], ws[3], ws[4]}, Shapes: []core.Shape{{B * part, D}, sh[3], sh[4]}})
		if err != nil {
			return err
		}
		out := sum(hs[i], r.Data[0])
		loss, g := lossGrad(out, seqPart(y, B, S, D, i*part, (i+1)*part), B*S)
		mlp, err := workers[i].call(msg{Op: "bwd", Key: 302, Data: [][]float32{g}})
		if err != nil {
			return err
		}
		dh := sum(g, mlp.Data[0])
		att, err := workers[i].call(msg{Op: "bwd", Key: 301, Data: [][]float32{dh}})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		seqPut(s.Out, out, B, S, D, i*part, (i+1)*part, false)
		s.Loss += loss
		addInto(s.Grads[0], att.Data[1])
		addInto(s.Grads[2], att.Data[2])
		addInto(s.Grads[3], mlp.Data[1])
		addInto(s.Grads[4], mlp.Data[2])
		addInto(dkv, att.Data[3])
		return nil
	})
	if err != nil {
		return Step{}, err
	}
	err = parallelDo(p, func(i int) error { // each position's share of the K and V gradients
		r, err := workers[i].call(msg{Op: "bwd", Key: 300, Data: [][]float32{seqPart(dkv, B, S, 2*D, i*part, (i+1)*part)}})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		addInto(s.Grads[1], r.Data[1])
		return nil
	})
	s.Seconds = time.Since(start).Seconds()
	return s, err
}

// RunBlockDP is data parallel: worker i runs the whole block on its share
// of the sequences; the weights' gradients are summed in the parent.
func RunBlockDP(b Block, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	p := len(workers)
	if err := b.check(); err != nil {
		return Step{}, err
	}
	if b.Batch%p != 0 {
		return Step{}, fmt.Errorf("parallel: data parallel over %d workers needs a batch divisible by it, got %d", p, b.Batch)
	}
	start := time.Now()
	n, per, D := b.Batch/p, b.Batch/p*b.Seq*b.Dim, b.Dim
	sh := b.Shapes()
	s := newStep(b)
	var mu sync.Mutex
	err := parallelDo(p, func(i int) error {
		xi := x[i*per : (i+1)*per]
		r, err := workers[i].call(msg{Op: "selfattn", Key: 320, N: b.Heads, Data: [][]float32{xi, ws[0], ws[2], ws[1]},
			Shapes: []core.Shape{{n, b.Seq, D}, sh[0], sh[2], sh[1]}})
		if err != nil {
			return err
		}
		h := sum(xi, r.Data[0])
		r, err = workers[i].call(msg{Op: "fwd", Key: 321, Relu: true, Data: [][]float32{h, ws[3], ws[4]}, Shapes: []core.Shape{{n * b.Seq, D}, sh[3], sh[4]}})
		if err != nil {
			return err
		}
		out := sum(h, r.Data[0])
		loss, g := lossGrad(out, y[i*per:(i+1)*per], b.Batch*b.Seq)
		mlp, err := workers[i].call(msg{Op: "bwd", Key: 321, Data: [][]float32{g}})
		if err != nil {
			return err
		}
		att, err := workers[i].call(msg{Op: "bwd", Key: 320, Data: [][]float32{sum(g, mlp.Data[0])}})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		copy(s.Out[i*per:], out)
		s.Loss += loss
		for j, gr := range [][]float32{att.Data[1], att.Data[3], att.Data[2], mlp.Data[1], mlp.Data[2]} {
			addInto(s.Grads[j], gr)
		}
		return nil
	})
	s.Seconds = time.Since(start).Seconds()
	return s, err
}

// columns are columns [lo, hi) of a row-major rows x cols matrix.
func columns(w []float32, rows, cols, lo, hi int) []float32 {
	out := make([]float32, 0, rows*(hi-lo))
	for r := range rows {
		out = append(out, w[r*cols+lo:r*cols+hi]...)
	}
	return out
}

// putColumns writes part (columns [lo, hi) of rows x cols) into w.
func putColumns(w, part []float32, rows, cols, lo, hi int) {
	n := hi - lo
	for r := range rows {
		copy(w[r*cols+lo:r*cols+hi], part[r*n:(r+1)*n])
	}
}

// RunBlockTP is tensor parallel (Megatron): worker i holds heads [i*H/p,
// (i+1)*H/p) - their columns of Wq, Wk and Wv and rows of Wo - and
// columns [i*F/p, (i+1)*F/p) of W1 with the rows of W2, so attention and
// the MLP each end in a partial sum: two all-reduces forward (the parent
// sums the partials and sends the whole back for the next part) and two
// backward.
func RunBlockTP(b Block, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	p := len(workers)
	if err := b.check(); err != nil {
		return Step{}, err
	}
	if b.Heads%p != 0 || b.Hidden%p != 0 {
		return Step{}, fmt.Errorf("parallel: tensor parallel over %d workers splits heads and the MLP's width, got %d heads and width %d", p, b.Heads, b.Hidden)
	}
	start := time.Now()
	B, S, D, F := b.Batch, b.Seq, b.Dim, b.Hidden
	dl, fl := D/p, F/p
	wq, wkv, wo, w1, w2 := make([][]float32, p), make([][]float32, p), make([][]float32, p), make([][]float32, p), make([][]float32, p)
	for i := range p {
		wq[i] = columns(ws[0], D, D, i*dl, (i+1)*dl)
		k, v := columns(ws[1], D, 2*D, i*dl, (i+1)*dl), columns(ws[1], D, 2*D, D+i*dl, D+(i+1)*dl)
		wkv[i] = make([]float32, D*2*dl)
		putColumns(wkv[i], k, D, 2*dl, 0, dl)
		putColumns(wkv[i], v, D, 2*dl, dl, 2*dl)
		wo[i] = ws[2][i*dl*D : (i+1)*dl*D]
		w1[i] = columns(ws[3], D, F, i*fl, (i+1)*fl)
		w2[i] = ws[4][i*fl*D : (i+1)*fl*D]
	}
	allReduce := func(base []float32, call func(i int) ([]float32, error)) ([]float32, error) {
		parts := make([][]float32, p)
		err := parallelDo(p, func(i int) (err error) { parts[i], err = call(i); return err })
		return sum(base, parts...), err
	}
	h, err := allReduce(x, func(i int) ([]float32, error) {
		r, err := workers[i].call(msg{Op: "selfattn", Key: 310, N: b.Heads / p, Data: [][]float32{x, wq[i], wo[i], wkv[i]},
			Shapes: []core.Shape{{B, S, D}, {D, dl}, {dl, D}, {D, 2 * dl}}})
		return r.data0(), err
	})
	if err != nil {
		return Step{}, err
	}
	out, err := allReduce(h, func(i int) ([]float32, error) {
		r, err := workers[i].call(msg{Op: "fwd", Key: 311, Relu: true, Data: [][]float32{h, w1[i], w2[i]}, Shapes: []core.Shape{{B * S, D}, {D, fl}, {fl, D}}})
		return r.data0(), err
	})
	if err != nil {
		return Step{}, err
	}
	loss, g := lossGrad(out, y, B*S)
	s := newStep(b)
	s.Out, s.Loss = out, loss
	var mu sync.Mutex
	dh, err := allReduce(g, func(i int) ([]float32, error) {
		r, err := workers[i].call(msg{Op: "bwd", Key: 311, Data: [][]float32{g}})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		putColumns(s.Grads[3], r.Data[1], D, F, i*fl, (i+1)*fl)
		copy(s.Grads[4][i*fl*D:], r.Data[2])
		return r.Data[0], nil
	})
	if err != nil {
		return Step{}, err
	}
	_, err = allReduce(dh, func(i int) ([]float32, error) {
		r, err := workers[i].call(msg{Op: "bwd", Key: 310, Data: [][]float32{dh}})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		putColumns(s.Grads[0], r.Data[1], D, D, i*dl, (i+1)*dl)
		copy(s.Grads[2][i*dl*D:], r.Data[2])
		putColumns(s.Grads[1], columns(r.Data[3], D, 2*dl, 0, dl), D, 2*D, i*dl, (i+1)*dl)
		putColumns(s.Grads[1], columns(r.Data[3], D, 2*dl, dl, 2*dl), D, 2*D, D+i*dl, D+(i+1)*dl)
		return r.Data[0], nil
	})
	s.Seconds = time.Since(start).Seconds()
	return s, err
}

// data0 is the reply's first operand (nil when there is none).
func (r reply) data0() []float32 {
	if len(r.Data) == 0 {
		return nil
	}
	return r.Data[0]
}
