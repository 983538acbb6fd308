package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Einsum runs as one reduction over label space: every operand is viewed
// with one dim per label (strides of repeated letters add up, which walks
// diagonals; absent or broadcast letters step by 0), the output labels are
// the kept dims and the summed labels the reduced ones. One thread per
// output element multiplies the operands along its summed labels.

// labelView views t over the label sizes: dim i of the view is label
// labels[i].
func labelView(t *core.Tensor, dimLabels, labels, sizes []int) *core.Tensor {
	st := t.Strides()
	sh := t.Shape()
	strides := make([]int, len(labels))
	for i, l := range labels {
		for d, dl := range dimLabels {
			if dl == l && sh[d] != 1 {
				strides[i] += st[d]
			}
		}
	}
	return core.NewView(t, core.Shape(sizes), strides, t.Offset())
}

func einsumKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	shapes := make([]core.Shape, len(k.Inputs))
	for i, t := range k.Inputs {
		shapes[i] = t.Shape()
	}
	p, err := oprules.ParseEinsum(k.Attrs.String("equation"), shapes)
	if err != nil {
		return err
	}
	if len(k.Inputs) > maxFrameOperands-1 {
		return fmt.Errorf("webgpu: einsum over %d operands; at most %d", len(k.Inputs), maxFrameOperands-1)
	}
	inOut := map[int]bool{}
	for _, l := range p.Output {
		inOut[l] = true
	}
	labels := append([]int{}, p.Output...)
	var summed []int
	for l, s := range p.Sizes {
		if s >= 0 && !inOut[l] {
			summed = append(summed, len(labels))
			labels = append(labels, l)
		}
	}
	sizes := make([]int, len(labels))
	for i, l := range labels {
		sizes[i] = p.Sizes[l]
	}
	views := make([]*core.Tensor, len(k.Inputs))
	terms := make([]string, len(k.Inputs))
	for i, t := range k.Inputs {
		views[i] = labelView(t, p.Operands[i], labels, sizes)
		terms[i] = lower.Conv(fmt.Sprintf("v%d(o, r)", i), physical(t.DType()), physical(out.DType()))
	}
	ct := physical(out.DType())
	prod := strings.Join(terms, " * ")
	f := newFrame(core.Shape(sizes), summed)
	if ct == "f32" {
		return gpuOf(k).sumRun(f, views, out, prod, sumFinal(false))
	}
	if out.DType() == core.I64 {
		return gpuOf(k).einsumI64(f, views, out, terms)
	}
	body := fmt.Sprintf("\tvar acc = %s;\n\tfor (var r = 0u; r < R; r++) { acc += %s; }\n", lower.Zero(ct), prod)
	return gpuOf(k).reduceRun(f, views, out, false, body+"\tout0[o] = "+storeExpr(out.DType(), "acc")+";\n", nil)
}

// einsumScatterKernel is the adjoint of taking diagonals and summing dims:
// zero the output, then copy x onto the view of the output that walks its
// diagonals, broadcasting x along the letters x lacks.
func einsumScatterKernel(k *core.KernelCall) error {
	g := gpuOf(k)
	x, out := k.Inputs[0], k.Outputs[0]
	eq := k.Attrs.String("equation")
	if _, err := oprules.ParseEinsumScatter(eq, x.Shape(), out.Shape()); err != nil {
		return err
	}
	if err := g.fill(out, 0); err != nil {
		return err
	}
	kIn, s, _ := strings.Cut(eq, "->")
	var letters []byte
	for i := range len(s) {
		if strings.IndexByte(string(letters), s[i]) < 0 {
			letters = append(letters, s[i])
		}
	}
	outShape, outStrides := out.Shape(), out.Strides()
	xShape, xStrides := x.Shape(), x.Strides()
	sizes, vs, xs := make([]int, len(letters)), make([]int, len(letters)), make([]int, len(letters))
	for i, c := range letters {
		for d := range len(s) {
			if s[d] == c {
				sizes[i] = outShape[d]
				vs[i] += outStrides[d]
			}
		}
		if d := strings.IndexByte(kIn, c); d >= 0 && xShape[d] != 1 {
			xs[i] = xStrides[d]
		}
	}
	diag := core.NewView(out, core.Shape(sizes), vs, out.Offset())
	src := core.NewView(x, core.Shape(sizes), xs, x.Offset())
	body := "\tout0[oat(o, 0u)] = " + storeExpr(out.DType(), lower.Conv("v0(o, 0u)", physical(x.DType()), physical(out.DType()))) + ";\n"
	return g.reduceRun(newFrame(core.Shape(sizes), nil), []*core.Tensor{src}, diag, false, body, nil)
}

func init() {
	register("einsum", einsumKernel)
	register("_einsum_scatter", einsumScatterKernel)
}
