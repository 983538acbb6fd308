package webgpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// mapWG is the workgroup size of elementwise kernels.
const mapWG = 64

// mapRun writes out[i] = expr over ins broadcast to out's shape. expr names
// the inputs x0, x1, ... in their physical types and may read scalar slots
// that set fills in. Large launches use the workgroup size the tuner
// measured fastest for their size class on this device.
func (b *Backend) mapRun(ins []*core.Tensor, out *core.Tensor, expr string, set func(*params)) error {
	wg := b.workgroupFor("map", out.Numel(), func(wg int) error { return b.mapRunWG(ins, out, expr, "", nil, set, wg) })
	return b.mapRunWG(ins, out, expr, "", nil, set, wg)
}

// guard is a condition over a map kernel's inputs x0, x1, ... and its
// result res under which the op fails with err.
type guard struct {
	cond string
	err  error
}

// mapRunGuarded is mapRun for an op that fails where one of guards holds
// for some element: the kernel marks the guard's bit in a flag and the op
// returns the error of the first guard marked.
func (b *Backend) mapRunGuarded(op string, ins []*core.Tensor, out *core.Tensor, expr string, guards []guard, set func(*params)) error {
	if len(guards) == 0 {
		return b.mapRun(ins, out, expr, set)
	}
	if out.Numel() == 0 {
		return nil
	}
	flag, err := b.newFlag()
	if err != nil {
		return err
	}
	code := ""
	errs := make([]error, len(guards))
	for i, g := range guards {
		code += fmt.Sprintf("\tif %s { atomicOr(&flag[0], %du); }\n", g.cond, 1<<i)
		errs[i] = g.err
	}
	if err := b.mapRunWG(ins, out, expr, code, flag, set, mapWG); err != nil {
		flag.Release()
		return err
	}
	return b.checkFlag(op, flag, errs...)
}

// workgroupSizes are the sizes the tuner tries for the big families; small
// launches (under tuneMinThreads) keep mapWG, where the choice is noise.
var workgroupSizes = []string{"64", "256"}

const tuneMinThreads = 1 << 18

// workgroupFor returns the workgroup size for a launch of n threads of a
// family, measuring the candidates once per device and size class.
func (b *Backend) workgroupFor(family string, n int, run func(wg int) error) int {
	if n < tuneMinThreads {
		return mapWG
	}
	v := b.tuner.choose(family+"-wg", fmt.Sprintf("n%d", bucket(n)), map[string]int{"n": n}, workgroupSizes, "64",
		func(v string) error {
			wg, _ := strconv.Atoi(v)
			return run(wg)
		})
	wg, err := strconv.Atoi(v)
	if err != nil {
		return mapWG
	}
	return wg
}

func (b *Backend) mapRunWG(ins []*core.Tensor, out *core.Tensor, expr, guard string, flag *core.Tensor, set func(*params), wg int) error {
	n := out.Numel()
	if n == 0 {
		return nil
	}
	types := make([]string, len(ins))
	for i, t := range ins {
		types[i] = physical(t.DType())
	}
	outT := physical(out.DType())
	expr = storeExpr(out.DType(), expr)
	var prm params
	if set != nil {
		set(&prm)
	}
	it := newIteration(out.Shape(), ins...)
	if err := it.write(&prm, n); err != nil {
		return err
	}
	// The iteration's rank is part of the kernel: indexing is straight code.
	rank := len(it.Shape)
	key := fmt.Sprintf("map|%d|r%d|%s|%s|%s", wg, rank, strings.Join(types, ","), outT, expr)
	operands, nOut := append(append([]*core.Tensor{}, ins...), out), 1
	if guard != "" {
		key += "|guards " + guard
		operands, nOut = append(operands, flag), 2
	}
	p, err := b.pipelineFor(key, len(ins), nOut, func() (string, error) {
		return wgsl.Render("map", map[string]any{"WG": wg, "Rank": rank, "Ins": types, "Out": outT, "Expr": expr, "Guard": guard, "Helpers": ""})
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(operands...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, n, wg, bufs...)
}

// storeExpr narrows a value of d's physical type to what d can hold: f16
// and bf16 round, small integers wrap, bools become 0 or 1.
func storeExpr(d core.DType, e string) string {
	switch d {
	case core.F16:
		return "r_f16(" + e + ")"
	case core.BF16:
		return "r_bf16(" + e + ")"
	case core.I8:
		return "((" + e + " << 24u) >> 24u)"
	case core.I16:
		return "((" + e + " << 16u) >> 16u)"
	case core.U8:
		return "(" + e + " & 0xffu)"
	case core.U16:
		return "(" + e + " & 0xffffu)"
	case core.Bool:
		return "select(0u, 1u, " + e + " != 0u)"
	}
	return e
}
