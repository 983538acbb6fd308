package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// WebGPU kernels of ops whose GPU kernel is one row body (core.ElementBody
// with Rows; bodyKernel parses it, against the row dialect CUDA also
// translates): the body inside wgsl/rows.wgsl, one workgroup of lower.RowLanes lanes
// per row. As for element bodies, views are copied dense first and the
// shapes travel in the uniform block, so one pipeline serves every shape
// of these ranks.

// rowTrips estimates how often a lane of a row body loops: each of its for
// loops stepping over a row's share of the largest operand in steps of
// lanes (a row body's loops are the lanes' walks over their row). Past the
// driver's loop limit the launch is refused rather than stopped short.
func rowTrips(stmts []lower.Stmt, ins []*core.Tensor, out *core.Tensor, rows int) int {
	loops := 0
	for _, s := range stmts {
		if s.Kind == lower.StmtFor {
			loops++
		}
	}
	largest := out.Numel()
	for _, t := range ins {
		if t != nil {
			largest = max(largest, t.Numel())
		}
	}
	perRow := (largest + rows - 1) / max(rows, 1)
	return loops * ((perRow + lower.RowLanes - 1) / lower.RowLanes)
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
	key := fmt.Sprintf("rows|%s|r%d|%v|%s|%v|%s", op, out.Shape().Rank(), ranks, strings.Join(types, ","), out.DType(), src)
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
