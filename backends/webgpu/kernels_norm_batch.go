package webgpu

import (
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Group and batch normalisation reuse the row-norm machinery on reshaped
// views: group_norm sees x [N, C, ...] as [N, G, C/G, S] normalised over
// the last two dims; batch_norm sees it as [N, C, S] normalised over N and S.

// ncs is x's [N, C, S] split (S = 1 without spatial dims).
func ncs(x *core.Tensor) (n, c, s int) {
	sh := x.Shape()
	s = 1
	for _, d := range sh[2:] {
		s *= d
	}
	return sh[0], sh[1], s
}

// reshaped views t with another shape (a view for contiguous tensors, a
// GPU copy otherwise).
func reshaped(t *core.Tensor, shape core.Shape) *core.Tensor {
	if t == nil {
		return nil
	}
	return t.Reshape(shape)
}

func groupNormShapes(k *core.KernelCall) (xs, ws core.Shape) {
	n, c, s := ncs(k.Inputs[0])
	grp := k.Attrs.Int("num_groups")
	return core.Shape{n, grp, c / grp, s}, core.Shape{grp, c / grp, 1}
}

func groupNormKernel(k *core.KernelCall) error {
	xs, ws := groupNormShapes(k)
	x := reshaped(k.Inputs[0], xs)
	f := newFrame(xs, []int{2, 3})
	return affineNorm(gpuOf(k), f, x, reshaped(k.Inputs[1], ws), reshaped(k.Inputs[2], ws),
		reshaped(k.Outputs[0], xs), k.Attrs.Float("eps"), k.Attrs.String("activation") == "silu")
}

func groupNormBackwardKernel(k *core.KernelCall) error {
	xs, ws := groupNormShapes(k)
	f := newFrame(xs, []int{2, 3})
	outs := []*core.Tensor{reshaped(k.Outputs[0], xs), nil, nil}
	for i := 1; i < 3 && i < len(k.Outputs); i++ {
		outs[i] = k.Outputs[i]
	}
	return normBackward(gpuOf(k), f, []int{0, 3}, reshaped(k.Inputs[0], xs), reshaped(k.Inputs[1], xs),
		reshaped(k.Inputs[2], ws), outs, k.Attrs.Float("eps"))
}

// batchStats writes per-channel mean and biased variance of x [N, C, S]:
// by split reductions where a channel is too long for one thread's loops
// (launch_rows_long.go).
func batchStats(g *Backend, x *core.Tensor, f frame) (mean, variance *core.Tensor, err error) {
	if !g.frameFits(meanRstdWGSL(), f) {
		if mean, err = g.groupReduce(f, []*core.Tensor{x}, "v0(o, r)", sumFinal(true)); err != nil {
			return nil, nil, err
		}
		variance, err = g.groupReduce(f, []*core.Tensor{x, mean}, "(v0(o, r) - v1(o, r)) * (v0(o, r) - v1(o, r))", sumFinal(true))
		if err != nil {
			mean.Release()
		}
		return mean, variance, err
	}
	mean, err = rowStat(g, x, f, kahanSum("sum", "v0(o, r)")+"\tlet stat = sum / f32(R);\n", 0)
	if err != nil {
		return nil, nil, err
	}
	variance, err = rowStat(g, x, f, kahanSum("sum", "v0(o, r)")+"\tlet mean = sum / f32(R);\n"+
		kahanSum("ss", "(v0(o, r) - mean) * (v0(o, r) - mean)")+"\tlet stat = ss / f32(R);\n", 0)
	if err != nil {
		mean.Release()
	}
	return mean, variance, err
}

// batchNormKernel normalises per channel. Training uses the batch mean and
// biased variance and returns running statistics updated with the unbiased
// variance (or the batch statistics themselves when none are given); eval
// uses the running statistics and returns them unchanged.
func batchNormKernel(k *core.KernelCall) error {
	g := gpuOf(k)
	x, rm, rv, w, b := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Inputs[4]
	n, c, s := ncs(x)
	xs := core.Shape{n, c, s}
	x3 := reshaped(x, xs)
	f := newFrame(xs, []int{0, 2})
	chans := core.Shape{c, 1}
	training := k.Attrs.Bool("training")
	momentum, eps := k.Attrs.Float("momentum"), k.Attrs.Float("eps")
	var mean, variance *core.Tensor
	if training {
		var err error
		if mean, variance, err = batchStats(g, x3, f); err != nil {
			return err
		}
		defer mean.Release()
		defer variance.Release()
		count := float64(n * s)
		unbiased := "x1 * pf(1u)"
		set := func(p *params) { p.setF(0, momentum); p.setF(1, count/(count-1)) }
		if rm != nil {
			if err := g.mapRun([]*core.Tensor{reshaped(rm, chans), mean}, reshaped(k.Outputs[1], chans), "(1.0 - pf(0u)) * x0 + pf(0u) * x1", set); err != nil {
				return err
			}
			if err := g.mapRun([]*core.Tensor{reshaped(rv, chans), variance}, reshaped(k.Outputs[2], chans), "(1.0 - pf(0u)) * x0 + pf(0u) * "+unbiased, set); err != nil {
				return err
			}
		} else {
			if err := g.mapRun([]*core.Tensor{mean}, reshaped(k.Outputs[1], chans), "x0", nil); err != nil {
				return err
			}
			if err := g.mapRun([]*core.Tensor{mean, variance}, reshaped(k.Outputs[2], chans), unbiased, set); err != nil {
				return err
			}
		}
	} else {
		mean, variance = reshaped(rm, chans), reshaped(rv, chans)
		if err := g.mapRun([]*core.Tensor{mean}, reshaped(k.Outputs[1], chans), "x0", nil); err != nil {
			return err
		}
		if err := g.mapRun([]*core.Tensor{variance}, reshaped(k.Outputs[2], chans), "x0", nil); err != nil {
			return err
		}
	}
	ins := []*core.Tensor{x3, mean, variance}
	y := "(x0 - x1) / sqrt(x2 + pf(0u))"
	if w != nil {
		ins = append(ins, reshaped(w, chans))
		y += " * x3"
	}
	if b != nil {
		ins = append(ins, reshaped(b, chans))
		y = "(" + y + " + x" + string(rune('0'+len(ins)-1)) + ")"
	}
	return g.mapRun(ins, reshaped(k.Outputs[0], xs), y, func(p *params) { p.setF(0, eps) })
}

// batchNormBackwardKernel: in training the y path is the usual
// normalisation gradient over each channel's N*S values, and the updated
// running statistics add a*g_mean/count and a*g_var*2*(x-mean)/(count-1),
// with a the momentum (1 when no running statistics were given, since the
// batch statistics are returned directly). In eval mode y is affine in x.
// One thread per channel.
func batchNormBackwardKernel(k *core.KernelCall) error {
	g := gpuOf(k)
	x := k.Inputs[0]
	n, c, s := ncs(x)
	xs, chans := core.Shape{n, c, s}, core.Shape{c, 1}
	f := newFrame(xs, []int{0, 2})
	training := k.Attrs.Bool("training")
	a := k.Attrs.Float("momentum")
	if k.Inputs[2] == nil {
		a = 1
	}
	ins := []*core.Tensor{reshaped(x, xs), reshaped(k.Inputs[1], xs)}
	name := map[int]string{}
	for i := 2; i < 7; i++ {
		if t := k.Inputs[i]; t != nil {
			name[i] = "v" + string(rune('0'+len(ins))) + "(o, r)"
			ins = append(ins, reshaped(t, chans))
		}
	}
	stats := meanRstdWGSL()
	if !training {
		stats = "\tlet mean = " + name[2] + ";\n\tlet rstd = 1.0 / sqrt(" + name[3] + " + pf(0u));\n"
		stats = strings.ReplaceAll(stats, "(o, r)", "(o, 0u)")
	}
	d := "v1(o, r)"
	if w, ok := name[4]; ok {
		d = "(v1(o, r) * " + w + ")"
	}
	xhat := "((v0(o, r) - mean) * rstd)"
	dx := d + " * rstd"
	pre := ""
	if training {
		pre = kahanSum("sd", d) + kahanSum("sdx", d+" * "+xhat)
		dx = "rstd * (" + d + " - sd / f32(R) - " + xhat + " * (sdx / f32(R)))"
		if gm, ok := name[5]; ok {
			dx += " + " + gm + " * pf(1u) / f32(R)"
		}
		if gv, ok := name[6]; ok {
			dx += " + " + gv + " * pf(1u) * 2.0 * (v0(o, r) - mean) / (f32(R) - 1.0)"
		}
	}
	set := func(p *params) { p.setF(0, k.Attrs.Float("eps")); p.setF(1, a) }
	body := stats + pre + "\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(k.Outputs[0].DType(), dx) + "; }\n"
	if !g.frameFits(body, f) {
		var opt [5]*core.Tensor
		for i := range opt {
			if t := k.Inputs[2+i]; t != nil {
				opt[i] = reshaped(t, chans)
			}
		}
		outs := append([]*core.Tensor{reshaped(k.Outputs[0], xs)}, k.Outputs[1:]...)
		return g.batchNormBackwardLong(f, ins[0], ins[1], opt, outs, training, a, k.Attrs.Float("eps"))
	}
	if err := g.reduceRun(f, ins, reshaped(k.Outputs[0], xs), false, body, set); err != nil {
		return err
	}
	if len(k.Outputs) > 1 && k.Outputs[1] != nil {
		body := stats + kahanSum("acc", "v1(o, r) * "+xhat) + "\tout0[o] = " + storeExpr(k.Outputs[1].DType(), "acc") + ";\n"
		if err := g.reduceRun(f, ins, k.Outputs[1], false, body, set); err != nil {
			return err
		}
	}
	if len(k.Outputs) > 2 && k.Outputs[2] != nil {
		body := kahanSum("acc", "v1(o, r)") + "\tout0[o] = " + storeExpr(k.Outputs[2].DType(), "acc") + ";\n"
		return g.reduceRun(f, ins, k.Outputs[2], false, body, set)
	}
	return nil
}

func init() {
	register("group_norm", groupNormKernel)
	register("_group_norm_backward", groupNormBackwardKernel)
	register("batch_norm", batchNormKernel)
	register("_batch_norm_backward", batchNormBackwardKernel)
}
