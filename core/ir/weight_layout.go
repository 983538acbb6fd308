package ir

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// ChooseWeightLayouts picks, by measurement on dev, how each constant
// weight matrix of a product is stored. Constant folding leaves a linear
// layer's weight as W^T, [K, N] row-major; the device's kernels also read
// the torch layout, W [N, K] row-major seen through a transposed view, and
// which is faster depends on the device and the shape (on lavapipe the
// view is 17% faster for a 4000x64x64 product and 30% slower for
// 256x256x64). Each product is run both ways on inputs of its shapes,
// alternating, and the other layout is kept only when its median is at
// least 5% lower. Fused products count with their epilogues. It returns
// how many weights changed layout; devices that cannot wait for their
// work (to time it) are left alone, and so is every graph while
// WEBTENSOR_TUNE=off turns the backend's timing off.
func (g *Graph) ChooseWeightLayouts(dev core.Device) (int, error) {
	b, err := core.BackendFor(dev)
	if err != nil {
		return 0, err
	}
	syncer, ok := b.(interface{ Sync() error })
	if !ok || config.String("WEBTENSOR_TUNE") == "off" {
		return 0, nil
	}
	changed := 0
	for _, n := range g.Nodes {
		w, ok := constWeight(n)
		if !ok {
			continue
		}
		key := layoutKey(n, dev)
		faster, known := layoutChoices.Load(key)
		if known && !faster.(bool) {
			continue
		}
		alt := g.newValue(w.Shape, w.DType)
		alt.Const = core.Call1("contiguous", nil, w.Const.Transpose()).Transpose()
		if err := alt.Const.Err(); err != nil {
			return changed, err
		}
		if !known {
			// A product that fails here keeps its layout: Run reports its
			// error where the caller expects one.
			f, err := timeLayouts(n, w, alt, dev, syncer.Sync)
			faster = err == nil && f
			if err == nil {
				layoutChoices.Store(key, faster)
			}
		}
		if faster.(bool) {
			swapInput(n, w, alt)
			changed++
		} else {
			alt.Const.Release()
		}
	}
	return changed, nil
}

// layoutChoices remembers what timing chose per device and product, so a
// model compiled again in this process (another input signature, a
// training step after inference) is not timed again.
var layoutChoices sync.Map // layoutKey -> bool (the other layout is faster)

// layoutKey names a product for layoutChoices: its device, op, fused trees
// and operand shapes.
func layoutKey(n *Node, dev core.Device) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s", dev, n.Op)
	for _, e := range []*fusion.Expr{n.Fused, n.Also} {
		if e != nil {
			b.WriteString("|" + exprString(e))
		}
	}
	for _, v := range n.Inputs {
		if v != nil {
			fmt.Fprintf(&b, "|%v", []int(v.Shape))
		}
	}
	return b.String()
}

// constWeight is the constant f32 matrix n multiplies by, for a plain or
// fused matmul.
func constWeight(n *Node) (*Value, bool) {
	p := n
	if n.Op != "matmul" {
		if n.Fused == nil || len(n.Sub) == 0 || n.Sub[0].Op != "matmul" || n.Op != "fused_matmul" {
			return nil, false
		}
		p = n.Sub[0]
	}
	if p.Fused != nil || len(p.Inputs) != 2 || len(n.Inputs) < 2 || n.Inputs[1] != p.Inputs[1] {
		return nil, false
	}
	w := n.Inputs[1]
	if w == nil || w.Const == nil || w.DType != core.F32 || len(w.Shape) != 2 || !w.Const.IsContiguous() ||
		w.Const.Device().Kind == "cpu" {
		return nil, false
	}
	return w, true
}

// swapInput makes n (and the ops it fused) read to where they read from.
func swapInput(n *Node, from, to *Value) {
	for _, m := range append([]*Node{n}, n.Sub...) {
		for i, v := range m.Inputs {
			if v == from {
				m.Inputs[i] = to
			}
		}
	}
}

// timeLayouts says whether n runs at least 5% faster reading alt than w,
// on random inputs of its shapes (values do not change a kernel's time).
func timeLayouts(n *Node, w, alt *Value, dev core.Device, sync func() error) (bool, error) {
	env := map[*Value]*core.Tensor{}
	var made []*core.Tensor
	defer func() {
		for _, t := range made {
			t.Release()
		}
	}()
	for i, v := range n.Inputs {
		if v == nil || v.Const != nil || env[v] != nil {
			continue
		}
		t := core.Call1("randn", core.Attrs{"shape": []int(v.Shape), "seed": i, "device": dev.String()})
		if err := t.Err(); err != nil {
			return false, err
		}
		env[v] = t
		made = append(made, t)
	}
	defer core.NoGradScope()()
	run := func() error {
		if err := execNode(n, env); err != nil {
			return err
		}
		for _, o := range n.Outputs {
			if t := env[o]; t != nil {
				t.Release()
			}
		}
		return nil
	}
	const rounds, reps = 9, 2
	var asIs, other []time.Duration
	for r := range 2*rounds + 2 {
		useAlt := r%2 == 1
		if useAlt {
			swapInput(n, w, alt)
		}
		start := time.Now()
		for range reps {
			if err := run(); err != nil {
				swapInput(n, alt, w)
				return false, err
			}
		}
		err := sync()
		d := time.Since(start)
		if useAlt {
			swapInput(n, alt, w)
		}
		if err != nil {
			return false, err
		}
		switch {
		case r < 2: // each layout's first runs build its kernels
		case useAlt:
			other = append(other, d)
		default:
			asIs = append(asIs, d)
		}
	}
	slices.Sort(asIs)
	slices.Sort(other)
	return other[rounds/2] < asIs[rounds/2]*95/100, nil
}
