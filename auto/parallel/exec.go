package parallel

import (
	"fmt"
	"sync"
	"time"

	"github.com/webtensor/webtensor/core"
)

// MLP is a model the executors run: Dims[0] inputs through len(Dims)-1
// linear layers with ReLU between them, a squared-error loss over Rows
// rows (mean over rows).
type MLP struct {
	Rows int
	Dims []int
}

// Step is one training step's results: the output, the loss and each
// weight's gradient, and the wall time.
type Step struct {
	Out     []float32
	Loss    float64
	Grads   [][]float32
	Seconds float64
}

func (m MLP) wshape(l int) core.Shape { return core.Shape{m.Dims[l], m.Dims[l+1]} }

// lossGrad is the loss and the output's gradient for rows of out and y.
func (m MLP) lossGrad(out, y []float32) (float64, []float32) { return lossGrad(out, y, m.Rows) }

// RunSingle is the step in this process, on dev: the reference.
func RunSingle(m MLP, dev core.Device, x, y []float32, ws [][]float32) (Step, error) {
	start := time.Now()
	h := core.FromSlice(x, core.Shape{m.Rows, m.Dims[0]}, dev)
	var params []*core.Tensor
	for l, w := range ws {
		p := core.FromSlice(w, m.wshape(l), dev).SetRequiresGrad(true)
		params = append(params, p)
		h = h.Matmul(p)
		if l < len(ws)-1 {
			h = h.ReLU()
		}
	}
	return localStep(h, y, m.Rows, params, start)
}

// localStep finishes a step run in this process: h's values, the squared
// error's loss against y over rows, its backward, and the parameters'
// gradients, timed from start.
func localStep(h *core.Tensor, y []float32, rows int, params []*core.Tensor, start time.Time) (Step, error) {
	out, err := h.Float32s()
	if err != nil {
		return Step{}, err
	}
	loss, g := lossGrad(out, y, rows)
	if err := h.Backward(core.FromSlice(g, h.Shape(), h.Device())); err != nil {
		return Step{}, err
	}
	s := Step{Out: out, Loss: loss}
	for _, p := range params {
		v, err := p.Grad().Float32s()
		if err != nil {
			return Step{}, err
		}
		s.Grads = append(s.Grads, v)
	}
	s.Seconds = time.Since(start).Seconds()
	return s, nil
}

func shapesOf(m MLP, rows int) []core.Shape {
	s := []core.Shape{{rows, m.Dims[0]}}
	for l := range len(m.Dims) - 1 {
		s = append(s, m.wshape(l))
	}
	return s
}

func addInto(dst, src []float32) {
	for i := range src {
		dst[i] += src[i]
	}
}

// parallelDo runs f(i) for i < n at once and returns the first error.
func parallelDo(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f(i) }()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// RunDP is data parallel: each worker runs the whole model on its share
// of the rows, and the gradients are summed in the parent (an all-reduce
// through the star).
func RunDP(m MLP, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	p := len(workers)
	if m.Rows%p != 0 {
		return Step{}, fmt.Errorf("parallel: data parallel over %d workers needs rows divisible by it, got %d", p, m.Rows)
	}
	start := time.Now()
	rows, in, outD := m.Rows/p, m.Dims[0], m.Dims[len(m.Dims)-1]
	s := Step{Out: make([]float32, m.Rows*outD)}
	for _, w := range ws {
		s.Grads = append(s.Grads, make([]float32, len(w)))
	}
	var mu sync.Mutex
	err := parallelDo(p, func(i int) error {
		data := append([][]float32{x[i*rows*in : (i+1)*rows*in]}, ws...)
		r, err := workers[i].call(msg{Op: "fwd", Key: i, Data: data, Shapes: shapesOf(m, rows), Relu: true})
		if err != nil {
			return err
		}
		loss, g := m.lossGrad(r.Data[0], y[i*rows*outD:(i+1)*rows*outD])
		b, err := workers[i].call(msg{Op: "bwd", Key: i, Data: [][]float32{g}})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		copy(s.Out[i*rows*outD:], r.Data[0])
		s.Loss += loss
		for l := range ws {
			addInto(s.Grads[l], b.Data[l+1])
		}
		return nil
	})
	s.Seconds = time.Since(start).Seconds()
	return s, err
}

// RunTP is tensor parallel over a two-layer MLP: worker i holds columns
// of the first weight and the matching rows of the second, so its partial
// output needs no exchange until the parent sums the partials (the
// all-reduce of Megatron's MLP).
func RunTP(m MLP, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	p := len(workers)
	if len(ws) != 2 || m.Dims[1]%p != 0 {
		return Step{}, fmt.Errorf("parallel: tensor parallel runs a two-layer MLP whose hidden width divides over %d workers, got dims %v", p, m.Dims)
	}
	start := time.Now()
	in, hid, outD := m.Dims[0], m.Dims[1], m.Dims[2]
	part := hid / p
	partials := make([][]float32, p)
	w1s, w2s := make([][]float32, p), make([][]float32, p)
	for i := range p {
		w1s[i] = make([]float32, in*part)
		for r := range in {
			copy(w1s[i][r*part:(r+1)*part], ws[0][r*hid+i*part:r*hid+(i+1)*part])
		}
		w2s[i] = ws[1][i*part*outD : (i+1)*part*outD]
	}
	shapes := []core.Shape{{m.Rows, in}, {in, part}, {part, outD}}
	err := parallelDo(p, func(i int) error {
		r, err := workers[i].call(msg{Op: "fwd", Key: 100 + i, Data: [][]float32{x, w1s[i], w2s[i]}, Shapes: shapes, Relu: true})
		partials[i] = r.Data[0]
		if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return Step{}, err
	}
	out := make([]float32, m.Rows*outD)
	for _, pp := range partials {
		addInto(out, pp)
	}
	loss, g := m.lossGrad(out, y)
	s := Step{Out: out, Loss: loss, Grads: [][]float32{make([]float32, in*hid), make([]float32, hid*outD)}}
	err = parallelDo(p, func(i int) error {
		b, err := workers[i].call(msg{Op: "bwd", Key: 100 + i, Data: [][]float32{g}})
		if err != nil {
			return err
		}
		for r := range in {
			copy(s.Grads[0][r*hid+i*part:r*hid+(i+1)*part], b.Data[1][r*part:(r+1)*part])
		}
		copy(s.Grads[1][i*part*outD:], b.Data[2])
		return nil
	})
	s.Seconds = time.Since(start).Seconds()
	return s, err
}

// RunPP is pipeline parallel: layer l runs on worker l, the rows go
// through in micro-batches (GPipe: every forward, then every backward),
// and activations and their gradients pass through the parent.
func RunPP(m MLP, workers []*Worker, micro int, x, y []float32, ws [][]float32) (Step, error) {
	stages := len(ws)
	if len(workers) < stages || m.Rows%micro != 0 {
		return Step{}, fmt.Errorf("parallel: pipeline parallel needs a worker per layer (%d layers, %d workers) and rows divisible by %d micro-batches (rows %d)",
			stages, len(workers), micro, m.Rows)
	}
	start := time.Now()
	rows, outD := m.Rows/micro, m.Dims[stages]
	s := Step{Out: make([]float32, m.Rows*outD)}
	for _, w := range ws {
		s.Grads = append(s.Grads, make([]float32, len(w)))
	}
	// acts[l][j]: the input of stage l for micro-batch j.
	fwdDone := make([][]chan []float32, stages+1)
	for l := range fwdDone {
		fwdDone[l] = make([]chan []float32, micro)
		for j := range micro {
			fwdDone[l][j] = make(chan []float32, 1)
		}
	}
	bwdDone := make([][]chan []float32, stages+1)
	for l := range bwdDone {
		bwdDone[l] = make([]chan []float32, micro)
		for j := range micro {
			bwdDone[l][j] = make(chan []float32, 1)
		}
	}
	in := m.Dims[0]
	for j := range micro {
		fwdDone[0][j] <- x[j*rows*in : (j+1)*rows*in]
	}
	err := parallelDo(stages+1, func(l int) error {
		if l == stages { // the loss, in the parent
			for j := range micro {
				out := <-fwdDone[stages][j]
				copy(s.Out[j*rows*outD:], out)
				loss, g := m.lossGrad(out, y[j*rows*outD:(j+1)*rows*outD])
				s.Loss += loss
				bwdDone[stages][j] <- g
			}
			return nil
		}
		shape := []core.Shape{{rows, m.Dims[l]}, m.wshape(l)}
		pos := make([][]bool, micro) // where this stage's output passed the ReLU
		for j := range micro {
			act := <-fwdDone[l][j]
			r, err := workers[l].call(msg{Op: "fwd", Key: 200 + j, Data: [][]float32{act, ws[l]}, Shapes: shape})
			if err != nil {
				return err
			}
			if l < stages-1 { // the ReLU between layers, on the boundary
				pos[j] = make([]bool, len(r.Data[0]))
				for i, v := range r.Data[0] {
					pos[j][i] = v > 0
					r.Data[0][i] = max(v, 0)
				}
			}
			fwdDone[l+1][j] <- r.Data[0]
		}
		for j := range micro {
			g := <-bwdDone[l+1][j]
			if l < stages-1 {
				for i := range g {
					if !pos[j][i] {
						g[i] = 0
					}
				}
			}
			b, err := workers[l].call(msg{Op: "bwd", Key: 200 + j, Data: [][]float32{g}})
			if err != nil {
				return err
			}
			addInto(s.Grads[l], b.Data[1])
			bwdDone[l][j] <- b.Data[0]
		}
		return nil
	})
	s.Seconds = time.Since(start).Seconds()
	return s, err
}
