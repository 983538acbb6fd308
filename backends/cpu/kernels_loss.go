package cpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Loss kernels. Per-element (or per-row) losses are computed in parallel and
// reduced sequentially, so a loss value does not depend on the core count.

func init() {
	register("cross_entropy", classLossKernel(false))
	register("_cross_entropy_backward", classLossBackwardKernel(false))
	register("nll_loss", classLossKernel(true))
	register("_nll_loss_backward", classLossBackwardKernel(true))
	for _, name := range []string{"mse_loss", "l1_loss", "smooth_l1_loss"} {
		register(name, pointwiseLossKernel(name))
	}
	register("_pointwise_loss_backward", pointwiseLossBackwardKernel)
	register("binary_cross_entropy_with_logits", bceWithLogitsKernel)
	register("_binary_cross_entropy_with_logits_backward", bceWithLogitsBackwardKernel)
}

// classLoss is a classification loss call laid out as rows of C classes:
// row r = (n, s) of an [N, C, S] input has class c at (n*C + c)*S + s.
type classLoss struct {
	n, c, s   int
	x         []float64
	labels    []int64   // class targets; nil for probability targets
	probs     []float64 // probability targets, laid out like x
	weight    []float64 // per class; nil means 1
	ignore    int64
	smoothing float64
	reduction string
}

func readClassLoss(k *core.KernelCall, weight *core.Tensor) (*classLoss, error) {
	x, t := k.Inputs[0], k.Inputs[1]
	l := &classLoss{x: readF64(x), weight: nnOptF64(weight), ignore: int64(k.Attrs.Int("ignore_index")),
		smoothing: k.Attrs.Float("label_smoothing"), reduction: k.Attrs.String("reduction")}
	l.n, l.c, l.s = oprules.ClassLayout(x.Shape())
	if t.DType().IsFloat() {
		l.probs = readF64(t)
		return l, nil
	}
	l.labels = readI64(t)
	for r, y := range l.labels {
		if y != l.ignore && (y < 0 || y >= int64(l.c)) {
			return nil, fmt.Errorf("target %d at position %d is out of range [0, %d)", y, r, l.c)
		}
	}
	return l, nil
}

func (l *classLoss) rows() int { return l.n * l.s }

// at is the flat index of class c in row r.
func (l *classLoss) at(r, c int) int { return (r/l.s*l.c+c)*l.s + r%l.s }

func (l *classLoss) w(c int) float64 { return nnWeightAt(l.weight, c) }

func (l *classLoss) ignored(r int) bool { return l.labels != nil && l.labels[r] == l.ignore }

// denominator is what a row contributes to the divisor of the mean: its
// target's class weight (0 when ignored), or 1 for probability targets.
func (l *classLoss) denominator(r int) float64 {
	switch {
	case l.labels == nil:
		return 1
	case l.ignored(r):
		return 0
	}
	return l.w(int(l.labels[r]))
}

// logSoftmaxRow writes row r's log-probabilities into lp.
func (l *classLoss) logSoftmaxRow(r int, lp []float64) {
	for c := range lp {
		lp[c] = l.x[l.at(r, c)]
	}
	softmaxLine(lp, lp, 0, len(lp), 1, true)
}

// targetWeight is q_c, the weight of -log p_c in the row's cross entropy.
func (l *classLoss) targetWeight(r, c int) float64 {
	uniform := l.smoothing / float64(l.c)
	if l.labels == nil {
		return l.w(c) * ((1-l.smoothing)*l.probs[l.at(r, c)] + uniform)
	}
	q := uniform * l.w(c)
	if int64(c) == l.labels[r] {
		q += (1 - l.smoothing) * l.w(c)
	}
	return q
}

// rowLoss is row r's loss: cross entropy of its logits, or the negative
// log-likelihood of its log-probabilities for nll_loss.
func (l *classLoss) rowLoss(r int, nll bool, lp []float64) float64 {
	if l.ignored(r) {
		return 0
	}
	if nll {
		y := int(l.labels[r])
		return -l.w(y) * l.x[l.at(r, y)]
	}
	l.logSoftmaxRow(r, lp)
	if l.labels != nil && l.smoothing == 0 {
		y := int(l.labels[r])
		return -l.w(y) * lp[y]
	}
	// Every class takes part, even at zero weight, so that 0*(-inf) makes
	// NaN exactly where PyTorch's sum over the class dim does.
	var loss float64
	for c, v := range lp {
		loss -= l.targetWeight(r, c) * v
	}
	return loss
}

// reduceRows applies the reduction to per-row losses.
func (l *classLoss) reduceRows(out *core.Tensor, losses []float64) {
	if l.reduction == "none" {
		writeF64(out, losses)
		return
	}
	var total, den float64
	for r, v := range losses {
		total += v
		den += l.denominator(r)
	}
	if l.reduction == "mean" {
		total /= den
	}
	writeF64(out, []float64{total})
}

// rowUpstream returns each row's share of the upstream gradient.
func (l *classLoss) rowUpstream(g []float64) func(r int) float64 {
	switch l.reduction {
	case "none":
		return func(r int) float64 { return g[r] }
	case "mean":
		var den float64
		for r := range l.rows() {
			den += l.denominator(r)
		}
		scaled := g[0] / den
		return func(int) float64 { return scaled }
	}
	return func(int) float64 { return g[0] }
}

func classLossKernel(nll bool) core.Kernel {
	return func(k *core.KernelCall) error {
		l, err := readClassLoss(k, k.Inputs[2])
		if err != nil {
			return err
		}
		losses := make([]float64, l.rows())
		parallelFor(l.rows(), l.c*12, func(lo, hi int) {
			lp := make([]float64, l.c)
			for r := lo; r < hi; r++ {
				losses[r] = l.rowLoss(r, nll, lp)
			}
		})
		l.reduceRows(k.Outputs[0], losses)
		return nil
	}
}

// classLossBackwardKernel: for cross entropy, row r's gradient is
// up*(Q*softmax - q) with q the target weights and Q their sum; probability
// targets also get -up*w*(1-smoothing)*log_softmax. For nll_loss only the
// target's entry is non-zero: -up*w[y].
func classLossBackwardKernel(nll bool) core.Kernel {
	return func(k *core.KernelCall) error {
		l, err := readClassLoss(k, k.Inputs[3])
		if err != nil {
			return err
		}
		up := l.rowUpstream(readF64(k.Inputs[2]))
		dx := tempF64(len(l.x))
		var dt []float64
		if l.probs != nil {
			dt = tempF64(len(l.x))
		}
		parallelFor(l.rows(), l.c*16, func(lo, hi int) {
			lp := make([]float64, l.c)
			for r := lo; r < hi; r++ {
				if l.ignored(r) {
					continue
				}
				u := up(r)
				if nll {
					y := int(l.labels[r])
					dx[l.at(r, y)] = -l.w(y) * u
					continue
				}
				l.logSoftmaxRow(r, lp)
				var total float64
				for c := range lp {
					total += l.targetWeight(r, c)
				}
				for c, v := range lp {
					i := l.at(r, c)
					dx[i] = u * (total*math.Exp(v) - l.targetWeight(r, c))
					if dt != nil {
						dt[i] = -u * l.w(c) * (1 - l.smoothing) * v
					}
				}
			}
		})
		writeF64(k.Outputs[0], dx)
		if dt != nil {
			writeF64(k.Outputs[1], dt)
		}
		return nil
	}
}

// pointwiseLoss returns a loss of the difference d = input - target and its
// derivative.
func pointwiseLoss(name string, beta float64) (loss, grad func(d float64) float64) {
	sign := func(d float64) float64 {
		switch {
		case d > 0:
			return 1
		case d < 0:
			return -1
		}
		return d // 0 stays 0, NaN stays NaN
	}
	switch name {
	case "mse_loss":
		return func(d float64) float64 { return d * d }, func(d float64) float64 { return 2 * d }
	case "l1_loss":
		return math.Abs, sign
	}
	return func(d float64) float64 {
			if math.Abs(d) < beta {
				return 0.5 * d * d / beta
			}
			return math.Abs(d) - 0.5*beta
		}, func(d float64) float64 {
			if math.Abs(d) < beta {
				return d / beta
			}
			return sign(d)
		}
}

// nnReduceLoss writes per-element losses reduced as the attribute says;
// the mean of nothing is NaN, as in PyTorch.
func nnReduceLoss(out *core.Tensor, losses []float64, reduction string) {
	if reduction == "none" {
		writeF64(out, losses)
		return
	}
	var total float64
	for _, v := range losses {
		total += v
	}
	if reduction == "mean" {
		total /= float64(len(losses))
	}
	writeF64(out, []float64{total})
}

// nnUpstream returns element i's share of the upstream gradient of a loss
// over n elements.
func nnUpstream(g []float64, reduction string, n int) func(i int) float64 {
	switch reduction {
	case "none":
		return func(i int) float64 { return g[i] }
	case "mean":
		scaled := g[0] / float64(n)
		return func(int) float64 { return scaled }
	}
	return func(int) float64 { return g[0] }
}

func pointwiseLossKernel(name string) core.Kernel {
	return func(k *core.KernelCall) error {
		x, t := k.Inputs[0], k.Inputs[1]
		shape, err := core.BroadcastShapes(x.Shape(), t.Shape())
		if err != nil {
			return err
		}
		loss, _ := pointwiseLoss(name, k.Attrs.Float("beta"))
		if xs, ts, ok := sameShapeF32(x, t); ok {
			// The per-element losses straight from the f32 operands: the
			// same float64 values, without two float64 copies of the
			// inputs (an MSE over a transformer's 262k outputs spent more
			// time converting than computing).
			xv := tempF64(len(xs))
			parallelFor(len(xv), 4, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					xv[i] = loss(float64(xs[i]) - float64(ts[i]))
				}
			})
			nnReduceLoss(k.Outputs[0], xv, k.Attrs.String("reduction"))
			return nil
		}
		xv, tv := readF64As(x, shape), readF64As(t, shape)
		parallelFor(len(xv), 4, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				xv[i] = loss(xv[i] - tv[i])
			}
		})
		nnReduceLoss(k.Outputs[0], xv, k.Attrs.String("reduction"))
		return nil
	}
}

func pointwiseLossBackwardKernel(k *core.KernelCall) error {
	x, t := k.Inputs[0], k.Inputs[1]
	shape := k.Outputs[0].Shape()
	_, grad := pointwiseLoss(k.Attrs.String("loss"), k.Attrs.Float("beta"))
	dx, dt := k.Outputs[0], k.Outputs[1]
	if xs, ts, ok := sameShapeF32(x, t); ok && denseF32(dx) && denseF32(dt) {
		// Each gradient is the float64 value rounded once, as writeF64
		// rounds it, computed without float64 copies of the operands.
		up := nnUpstream(readF64(k.Inputs[2]), k.Attrs.String("reduction"), len(xs))
		gx, gt := f32s(dx), f32s(dt)
		parallelFor(len(xs), 4, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				g := up(i) * grad(float64(xs[i])-float64(ts[i]))
				gx[i], gt[i] = float32(g), float32(-g)
			}
		})
		return nil
	}
	xv, tv := readF64As(x, shape), readF64As(t, shape)
	up := nnUpstream(readF64(k.Inputs[2]), k.Attrs.String("reduction"), len(xv))
	parallelFor(len(xv), 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xv[i] = up(i) * grad(xv[i]-tv[i])
			tv[i] = -xv[i]
		}
	})
	writeF64(k.Outputs[0], xv)
	writeF64(k.Outputs[1], tv)
	return nil
}

// sameShapeF32 is x's and t's elements when both are dense f32 tensors of
// one shape (no broadcasting).
func sameShapeF32(x, t *core.Tensor) (xs, ts []float32, ok bool) {
	if !denseF32(x) || !denseF32(t) || !x.Shape().Equal(t.Shape()) {
		return nil, nil, false
	}
	return f32s(x), f32s(t), true
}

// bceInputs reads input, target, weight and pos_weight (broadcast to the
// input; nil when absent).
func bceInputs(k *core.KernelCall, weight, posWeight *core.Tensor) (x, t, w, pw []float64) {
	shape := k.Inputs[0].Shape()
	x, t = readF64(k.Inputs[0]), readF64(k.Inputs[1])
	if weight != nil {
		w = readF64As(weight, shape)
	}
	if posWeight != nil {
		pw = readF64As(posWeight, shape)
	}
	return x, t, w, pw
}

// softplusNeg is log(1 + exp(-x)) without overflow.
func softplusNeg(x float64) float64 { return math.Log1p(math.Exp(-math.Abs(x))) + math.Max(-x, 0) }

// bceLogWeight is 1 + (pos_weight - 1)*target, the weight of the positive
// term; 1 without pos_weight.
func bceLogWeight(pw []float64, t float64, i int) float64 {
	if pw == nil {
		return 1
	}
	return 1 + (pw[i]-1)*t
}

// bceWithLogitsKernel: loss = w*((1-t)*x + lw*log(1 + exp(-x))), the
// stable form PyTorch uses.
func bceWithLogitsKernel(k *core.KernelCall) error {
	x, t, w, pw := bceInputs(k, k.Inputs[2], k.Inputs[3])
	parallelFor(len(x), 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i] = nnWeightAt(w, i) * ((1-t[i])*x[i] + bceLogWeight(pw, t[i], i)*softplusNeg(x[i]))
		}
	})
	nnReduceLoss(k.Outputs[0], x, k.Attrs.String("reduction"))
	return nil
}

// bceWithLogitsBackwardKernel: d/dx = w*((1-t) - lw*sigmoid(-x)),
// d/dt = w*(-x + (pos_weight-1)*log(1 + exp(-x))).
func bceWithLogitsBackwardKernel(k *core.KernelCall) error {
	x, t, w, pw := bceInputs(k, k.Inputs[3], k.Inputs[4])
	up := nnUpstream(readF64(k.Inputs[2]), k.Attrs.String("reduction"), len(x))
	parallelFor(len(x), 12, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			u := up(i) * nnWeightAt(w, i)
			sp := softplusNeg(x[i])
			pos := 0.0
			if pw != nil {
				pos = pw[i] - 1
			}
			dx := u * ((1 - t[i]) - bceLogWeight(pw, t[i], i)/(1+math.Exp(x[i])))
			t[i] = u * (-x[i] + pos*sp)
			x[i] = dx
		}
	})
	writeF64(k.Outputs[0], x)
	writeF64(k.Outputs[1], t)
	return nil
}
