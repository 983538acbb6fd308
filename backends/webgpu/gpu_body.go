package webgpu

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// WebGPU kernels of ops whose GPU kernel is one body (core.ElementBody):
// the body, checked against the dialect CUDA also translates, inside
// wgsl/body.wgsl, one thread per output element. A view input is copied
// dense first: the helpers read element j at offset + j, which keeps the
// body free of strides at the cost of a copy the op's own kernel might
// avoid.

// bodyKernel is the kernel of a GPUBody op: an element body, or a row
// body (gpu_rows.go).
func bodyKernel(def *core.OpDef) core.Kernel {
	return func(k *core.KernelCall) error {
		if len(k.Outputs) != 1 {
			return fmt.Errorf("webgpu: %s: a GPU body writes one output, the op has %d", def.Name, len(k.Outputs))
		}
		out := k.Outputs[0]
		dtypes, shapes := core.BodyInputs(k.Inputs)
		var sc lower.Scalars
		src := def.GPUBody.Body(core.BodyTypes{Float: lower.F32, Out: physical(out.DType()), In: dtypes}, k.Attrs, &sc)
		stmts, err := lower.ParseGPUBody(def.Name, src, def.GPUBody.Rows != nil)
		if err != nil {
			return err
		}
		rows, err := def.GPUBody.RowsOf(def.Name, shapes, out.Shape(), k.Attrs, math.MaxInt32/lower.RowLanes)
		if out.Numel() == 0 || rows == 0 || err != nil {
			return err
		}
		ins, release, err := denseInputs(k.Inputs)
		if err != nil {
			return err
		}
		defer release()
		g := gpuOf(k)
		if def.GPUBody.Rows != nil {
			if err := g.checkTrips(def.Name+"'s row body", rowTrips(stmts, ins, out, rows)); err != nil {
				return err
			}
			return g.rowsRun(def.Name, ins, out, rows, src, &sc)
		}
		if !lower.BodyFails(stmts) {
			return g.bodyRun(def.Name, ins, out, src, &sc, nil)
		}
		// The body can fail: its kernel marks the checks that failed in a
		// flag word, read back after the launch, and the CPU kernel words
		// the error for the same inputs.
		flag, err := g.newFlag()
		if err != nil {
			return err
		}
		if err := g.bodyRun(def.Name, ins, out, src, &sc, flag); err != nil {
			flag.Release()
			return err
		}
		return validate(def.Name, func() error {
			defer flag.Release()
			v, err := flag.Int64s()
			if err != nil || v[0] == 0 {
				return err
			}
			return core.BodyFailure(def.Name, bits.TrailingZeros64(uint64(v[0])), k.Inputs, k.Attrs)
		})
	}
}

// bodyRun launches body over out's elements; the pipeline is keyed by the
// ranks and types (and the body's source), never the shapes. flag, for a
// body that can fail, is where its kernel marks the checks that failed.
func (b *Backend) bodyRun(op string, ins []*core.Tensor, out *core.Tensor, src string, sc *lower.Scalars, flag *core.Tensor) error {
	if len(ins) > 26 || out.Shape().Rank() > wgsl.MaxRank {
		return fmt.Errorf("webgpu: %s: a GPU body takes at most 26 inputs of rank %d", op, wgsl.MaxRank)
	}
	prm, types, ranks, err := bodyParams(op, ins, out, sc)
	if err != nil {
		return err
	}
	outT := physical(out.DType())
	key := fmt.Sprintf("body|%s|r%d|%v|%s|%v|%t|%s", op, out.Shape().Rank(), ranks, strings.Join(types, ","), out.DType(), flag != nil, src)
	operands := append(append([]*core.Tensor{}, ins...), out)
	if flag != nil {
		operands = append(operands, flag)
	}
	p, err := b.pipelineFor(key, len(ins), len(operands)-len(ins), func() (string, error) {
		return wgsl.Render("body", map[string]any{"WG": mapWG, "Rank": out.Shape().Rank(), "Ins": types, "Ranks": ranks,
			"Out": outT, "OutCT": outT, "Body": src, "Store": storeExpr(out.DType(), "body(i)"), "Fails": flag != nil})
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(operands...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, out.Numel(), mapWG, bufs...)
}

// denseInputs is ins with every view copied dense (nil stays nil: an
// absent optional input) and the function that releases the copies.
func denseInputs(ins []*core.Tensor) ([]*core.Tensor, func(), error) {
	dense := make([]*core.Tensor, len(ins))
	release := func() {
		for j, t := range dense {
			if t != nil && t != ins[j] {
				t.Release()
			}
		}
	}
	for j, t := range ins {
		dense[j] = t
		if t != nil && !t.IsContiguous() {
			dense[j] = t.Contiguous()
			if err := dense[j].Err(); err != nil {
				release()
				return nil, nil, err
			}
		}
	}
	return dense, release, nil
}

// bodyParams is a body kernel's uniform block (the attributes' slots, the
// output's element count, offset and dims, each given input's offset and
// dims at its operand slot) and the given inputs' physical types and
// ranks ("" and -1 for an absent one).
func bodyParams(op string, ins []*core.Tensor, out *core.Tensor, sc *lower.Scalars) (params, []string, []int, error) {
	var prm params
	prm.setScalars(sc)
	prm.setN(wgsl.SlotN, out.Numel())
	prm.setN(wgsl.SlotRank, out.Offset()) // a body kernel's rank is in its source; slot 9 is the output offset
	for d, n := range out.Shape() {
		prm.setN(wgsl.SlotShape+d, n)
	}
	types, ranks := make([]string, len(ins)), make([]int, len(ins))
	for j, t := range ins {
		if t == nil {
			ranks[j] = -1
			continue
		}
		if t.Shape().Rank() > wgsl.MaxRank {
			return prm, nil, nil, fmt.Errorf("webgpu: %s: input %d has rank %d; a GPU body reads at most %d", op, j, t.Shape().Rank(), wgsl.MaxRank)
		}
		types[j], ranks[j] = physical(t.DType()), t.Shape().Rank()
		slot := wgsl.OperandSlot(j)
		prm.setN(slot, t.Offset())
		for d, n := range t.Shape() {
			prm.setN(slot+1+d, n)
		}
	}
	return prm, types, ranks, nil
}
