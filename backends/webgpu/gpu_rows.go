package webgpu

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// WebGPU kernels of ops whose GPU kernel is one row body (core.ElementBody
// with Rows): the body, checked against the row dialect CUDA also
// translates, inside wgsl/rows.wgsl, one workgroup of lower.RowLanes lanes
// per row. As for element bodies, views are copied dense first and the
// shapes travel in the uniform block, so one pipeline serves every shape
// of these ranks.

// rowsKernel is the kernel of a GPUBody op with Rows.
func rowsKernel(def *core.OpDef) core.Kernel {
	return func(k *core.KernelCall) error {
		if len(k.Outputs) != 1 {
			return fmt.Errorf("webgpu: %s: a GPU row body writes one output, the op has %d", def.Name, len(k.Outputs))
		}
		out := k.Outputs[0]
		outT := physical(out.DType())
		dtypes, shapes := core.BodyInputs(k.Inputs)
		var sc lower.Scalars
		src := def.GPUBody.Body(core.BodyTypes{Float: lower.F32, Out: outT, In: dtypes}, k.Attrs, &sc)
		if _, err := lower.ParseRowBody(def.Name, src); err != nil {
			return err
		}
		rows := def.GPUBody.Rows(shapes, out.Shape(), k.Attrs)
		if out.Numel() == 0 || rows == 0 {
			return nil
		}
		if rows < 0 || rows > math.MaxInt32/lower.RowLanes {
			return fmt.Errorf("webgpu: %s: %d rows; a GPU row body runs 1 to %d", def.Name, rows, math.MaxInt32/lower.RowLanes)
		}
		ins, release, err := denseInputs(k.Inputs)
		if err != nil {
			return err
		}
		defer release()
		return gpuOf(k).rowsRun(def.Name, ins, out, rows, src, &sc)
	}
}

// rowInput is one given input of a row kernel: its name's index K (its
// position among the op's inputs), its binding and uniform slot.
type rowInput struct {
	K, Bind, Rank, Slot int
	Type                string
}

// rowsRun launches a row body over rows workgroups.
func (b *Backend) rowsRun(op string, ins []*core.Tensor, out *core.Tensor, rows int, src string, sc *lower.Scalars) error {
	if len(ins) > 26 || out.Shape().Rank() > wgsl.MaxRank {
		return fmt.Errorf("webgpu: %s: a GPU row body takes at most 26 inputs of rank %d", op, wgsl.MaxRank)
	}
	prm, types, ranks, err := bodyParams(op, ins, out, sc)
	if err != nil {
		return err
	}
	rowsSlot := wgsl.OperandSlot(len(ins))
	prm.setN(rowsSlot, rows)
	var given []rowInput
	operands := []*core.Tensor{}
	for j, t := range ins {
		if t != nil {
			given = append(given, rowInput{K: j, Bind: len(given) + 1, Rank: ranks[j], Slot: wgsl.OperandSlot(j), Type: types[j]})
			operands = append(operands, t)
		}
	}
	outT := physical(out.DType())
	key := fmt.Sprintf("rows|%s|r%d|%v|%s|%s|%s", op, out.Shape().Rank(), ranks, strings.Join(types, ","), outT, src)
	p, err := b.pipelineFor(key, len(operands), 1, func() (string, error) {
		return wgsl.Render("rows", map[string]any{"WG": lower.RowLanes, "Rank": out.Shape().Rank(), "Ins": given,
			"OutBind": len(given) + 1, "Out": outT, "Body": src, "Store": storeExpr(out.DType(), "v"), "RowsSlot": rowsSlot})
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(append(operands, out)...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, rows*lower.RowLanes, lower.RowLanes, bufs...)
}
