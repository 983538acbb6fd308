package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// Fused elementwise kernels (fusion.MapFuser): a tree of map ops compiled into
// one WGSL expression over the leaves, so a chain like gelu(x * w + b) reads
// its inputs once and writes once instead of once per op. Only ops whose
// expressions need no attribute slots take part; f32 only.

// Fusable reports whether op, called with attrs, may appear in a fused tree
// (lower.Fusable: the dialect is shared with the CUDA backend).
func (b *Backend) Fusable(op string, attrs core.Attrs, dtype core.DType) bool {
	return lower.Fusable(op, attrs, dtype)
}

func (b *Backend) fusedExpr(e *fusion.Expr, nIn int) (string, error) {
	return b.fusedExprNamed(e, nIn, func(i int) string { return fmt.Sprintf("x%d", i) })
}

// fusedExprNamed writes e as WGSL with input i read as leaf(i).
func (b *Backend) fusedExprNamed(e *fusion.Expr, nIn int, leaf func(int) string) (string, error) {
	s, err := lower.Fused(e, nIn, leaf)
	if err != nil {
		return "", fmt.Errorf("webgpu: %w", err)
	}
	return s, nil
}

// FuseMap runs the tree as one map kernel over inputs broadcast to shape.
func (b *Backend) FuseMap(e *fusion.Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) (*core.Tensor, error) {
	b.profileOp("fused")
	if dtype != core.F32 {
		return nil, fmt.Errorf("webgpu: fused kernels are f32, not %s", dtype)
	}
	if err := f32OnGPU("fused input", inputs); err != nil {
		return nil, err
	}
	expr, err := b.fusedExpr(e, len(inputs))
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.mapRun(inputs, out, expr, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// TakesEpilogue names the producers whose store can run a fused tree.
func (b *Backend) TakesEpilogue(op string) bool {
	return op == "matmul" || op == "spmm" || op == "conv2d" || op == "conv1d"
}

// FuseEpilogue computes e over op's output (input 0) and extras (inputs
// 1..) in op's store: one pass over memory instead of one per op.
func (b *Backend) FuseEpilogue(op string, inputs []*core.Tensor, attrs core.Attrs, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	b.profileOp("fused_" + op)
	if room := b.epilogueRoom(epilogueBound(op)); len(extras) > room {
		return nil, fmt.Errorf("webgpu: %s epilogue with %d extra inputs; at most %d", op, len(extras), room)
	}
	if err := f32OnGPU(op+" epilogue input", extras); err != nil {
		return nil, err
	}
	switch {
	case op == "matmul" && len(inputs) == 2:
		return b.fuseMatmul(inputs[0], inputs[1], e, extras)
	case op == "spmm" && len(inputs) == 4:
		return b.fuseSpmm(inputs, e, extras)
	case (op == "conv2d" || op == "conv1d") && (len(inputs) == 2 || len(inputs) == 3):
		return b.fuseConv(op, inputs, attrs, e, extras)
	}
	return nil, fmt.Errorf("webgpu: %s with %d inputs takes no epilogue", op, len(inputs))
}

// epilogueBound is how many buffers op's kernel binds besides an
// epilogue's extras: its operands and its output. A convolution binds a
// third operand with or without a bias.
func epilogueBound(op string) int {
	switch op {
	case "spmm":
		return 5 // indptr, indices, values, dense, out
	case "conv2d", "conv1d":
		return 4 // x, weight, bias (or a stand-in), out
	}
	return 3 // a matmul's a, b and out
}

// TakesEpiloguePair names the producers that can store two trees: matmul.
func (b *Backend) TakesEpiloguePair(op string) bool { return op == "matmul" }

// FuseEpiloguePair computes e and also over a matmul's product and extras
// in its store, returning both.
func (b *Backend) FuseEpiloguePair(op string, inputs []*core.Tensor, attrs core.Attrs, e, also *fusion.Expr, extras []*core.Tensor) (*core.Tensor, *core.Tensor, error) {
	b.profileOp("fused_" + op)
	if op != "matmul" || len(inputs) != 2 || also == nil {
		return nil, nil, fmt.Errorf("webgpu: %s with %d inputs stores no second tree", op, len(inputs))
	}
	if room := b.epilogueRoom(epilogueBound(op) + 1); len(extras) > room {
		return nil, nil, fmt.Errorf("webgpu: matmul with two epilogues and %d extra inputs; at most %d", len(extras), room)
	}
	if err := f32OnGPU("matmul epilogue input", extras); err != nil {
		return nil, nil, err
	}
	return b.fuseMatmulWith(inputs[0], inputs[1], e, also, extras)
}

// MatmulColumnSums computes x @ y and the column sums of y in one kernel,
// for the TN layout of a weight gradient (x a transposed contiguous
// matrix, y contiguous rows).
func (b *Backend) MatmulColumnSums(x, y *core.Tensor) (*core.Tensor, *core.Tensor, error) {
	b.profileOp("matmul_colsum")
	if x.Rank() != 2 || y.Rank() != 2 {
		return nil, nil, fmt.Errorf("webgpu: column sums ride on a product of matrices, got shapes %v and %v", x.Shape(), y.Shape())
	}
	if err := f32OnGPU("matmul operand", []*core.Tensor{x, y}); err != nil {
		return nil, nil, err
	}
	m, kk, n := x.Shape()[0], x.Shape()[1], y.Shape()[1]
	if y.Shape()[0] != kk {
		return nil, nil, fmt.Errorf("webgpu: matmul of shapes %v and %v: inner sizes differ", x.Shape(), y.Shape())
	}
	if m == 0 || vecLayoutOf(x, y, nil, m, kk, n) != layoutTN {
		return nil, nil, fmt.Errorf("webgpu: column sums ride only on x^T @ g with vec4 rows, got shapes %v and %v", x.Shape(), y.Shape())
	}
	out, err := core.Empty(b, core.Shape{m, n}, core.F32)
	if err != nil {
		return nil, nil, err
	}
	sums, err := core.Empty(b, core.Shape{n}, core.F32)
	if err != nil {
		out.Release()
		return nil, nil, err
	}
	if err := b.matmulEpilogue(x, y, out, nil, m, kk, n, "", &epilogue{expr: "x0", colsum: sums}); err != nil {
		out.Release()
		sums.Release()
		return nil, nil, err
	}
	return out, sums, nil
}

// fuseMatmul computes e over the product x @ y in the matmul kernel's store.
func (b *Backend) fuseMatmul(x, y *core.Tensor, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	out, _, err := b.fuseMatmulWith(x, y, e, nil, extras)
	return out, err
}

// fuseMatmulWith is fuseMatmul that, when also is set, stores that second
// tree too and returns it as the second tensor.
func (b *Backend) fuseMatmulWith(x, y *core.Tensor, e, also *fusion.Expr, extras []*core.Tensor) (*core.Tensor, *core.Tensor, error) {
	if x.Rank() < 2 || y.Rank() < 2 {
		return nil, nil, fmt.Errorf("webgpu: fused matmul takes matrices, got shapes %v and %v", x.Shape(), y.Shape())
	}
	if err := f32OnGPU("fused matmul operand", []*core.Tensor{x, y}); err != nil {
		return nil, nil, err
	}
	d, err := oprules.PlanMatmul(x.Shape(), y.Shape())
	if err != nil {
		return nil, nil, err
	}
	for i, t := range extras {
		if t.Rank() > len(d.Out) || !fitsIn(t.Shape(), d.Out) {
			return nil, nil, fmt.Errorf("webgpu: fused matmul extra %d of shape %v does not broadcast to the product %v", i, t.Shape(), d.Out)
		}
	}
	ep := &epilogue{extras: extras}
	if ep.expr, err = b.fusedExpr(e, len(extras)+1); err != nil {
		return nil, nil, err
	}
	if also != nil {
		if ep.also, err = b.fusedExpr(also, len(extras)+1); err != nil {
			return nil, nil, err
		}
	}
	out, err := core.Empty(b, d.Out, core.F32)
	if err != nil {
		return nil, nil, err
	}
	if also != nil {
		if ep.out2, err = core.Empty(b, d.Out, core.F32); err != nil {
			out.Release()
			return nil, nil, err
		}
	}
	if err := b.matmulEpilogue(x, y, out, d.Batch, d.M, d.K, d.N, "", ep); err != nil {
		out.Release()
		ep.out2.Release() // Release takes nil
		return nil, nil, err
	}
	return out, ep.out2, nil
}

// f32OnGPU refuses any of ts (nil ones aside) that is not f32 on WebGPU,
// naming it as what, by position.
func f32OnGPU(what string, ts []*core.Tensor) error {
	for i, t := range ts {
		if t != nil && (t.DType() != core.F32 || t.Device().Kind != "webgpu") {
			return fmt.Errorf("webgpu: %s %d is %s on %s; f32 on webgpu only", what, i, t.DType(), t.Device())
		}
	}
	return nil
}

// fitsIn says whether shape s broadcasts to target without growing it.
func fitsIn(s, target core.Shape) bool {
	lead := len(target) - len(s)
	for i, v := range s {
		if v != 1 && v != target[lead+i] {
			return false
		}
	}
	return true
}

var (
	_ fusion.EpilogueFuser     = (*Backend)(nil)
	_ fusion.EpiloguePairFuser = (*Backend)(nil)
)

// fuseSpmm computes e over spmm(indptr, indices, values, dense) in the
// sparse product's store: thread (r, j) accumulates row r's entries as the
// plain kernel does, then applies the tree to the sum and the extras at
// (r, j).
func (b *Backend) fuseSpmm(ins []*core.Tensor, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	indptr, indices, values, dense := ins[0], ins[1], ins[2], ins[3]
	if values.DType() != core.F32 || dense.DType() != core.F32 || dense.Rank() != 2 || indptr.Rank() != 1 {
		return nil, fmt.Errorf("webgpu: fused spmm takes f32 values and a 2-D f32 matrix, got %s and %s%v",
			values.DType(), dense.DType(), dense.Shape())
	}
	shape := core.Shape{indptr.Numel() - 1, dense.Shape()[1]}
	for i, t := range extras {
		if t.Rank() > 2 || !fitsIn(t.Shape(), shape) {
			return nil, fmt.Errorf("webgpu: fused spmm extra %d of shape %v does not broadcast to the product %v", i, t.Shape(), shape)
		}
	}
	f, err := checkedCSR("spmm", indptr, indices, dense.Shape()[0])
	if err != nil {
		return nil, err
	}
	expr, err := b.fusedExpr(e, len(extras)+1)
	if err != nil {
		return nil, err
	}
	if b.spmmChunkSize(f, values, dense) > 0 {
		// Rows too long for one thread: the product in chunks
		// (kernels_kernels_sparse_chunks.go), then the tree as a map.
		prod := core.Call1("spmm", nil, indptr, indices, values, dense)
		if err := prod.Err(); err != nil {
			return nil, err
		}
		defer prod.Release()
		out, err := core.Empty(b, shape, core.F32)
		if err != nil {
			return nil, err
		}
		if err := b.mapRun(append([]*core.Tensor{prod}, extras...), out, expr, nil); err != nil {
			out.Release()
			return nil, err
		}
		return out, nil
	}
	if spmmVec4(values, dense) {
		out, err := core.Empty(b, shape, core.F32)
		if err != nil {
			return nil, err
		}
		if err := b.spmmVec4Run(indptr, indices, values, dense, extras, expr, out); err != nil {
			out.Release()
			return nil, err
		}
		return out, nil
	}
	var prm params
	d, err := spCSRDescs(&prm, indptr, indices, values, dense)
	if err != nil {
		return nil, err
	}
	prm.setN(0, shape[1])
	body := "\tlet r = t / pu(0u);\n\tlet j = t % pu(0u);\n" + spAccumulate(
		fmt.Sprintf("u32(in0[sp_at1(r, %du)])", d[0]), fmt.Sprintf("u32(in0[sp_at1(r + 1u, %du)])", d[0]),
		fmt.Sprintf("\t\tlet c = u32(in1[sp_at1(p, %du)]);\n", d[1]),
		fmt.Sprintf("in2[sp_at1(p, %du)] * in3[sp_at2(c, j, %du)]", d[2], d[3])) + "\tlet x0 = acc;\n"
	for i, t := range extras {
		slot := wgsl.OperandSlot(4 + i)
		writeOperand(&prm, slot, t.Offset(), lower.BroadcastStrides(t, shape))
		body += fmt.Sprintf("\tlet x%d = in%d[sp_at2(r, j, %du)];\n", i+1, 4+i, slot)
	}
	body += "\tout0[t] = " + expr + ";\n"
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.spRun(append(append([]*core.Tensor{}, ins...), extras...), []*core.Tensor{out}, out.Numel(), body, &prm); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// fuseConv computes e over a direct convolution (conv2d or conv1d, with its
// optional bias) in the convolution kernel's store.
func (b *Backend) fuseConv(op string, ins []*core.Tensor, attrs core.Attrs, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	if len(ins) == 3 && ins[2] == nil {
		ins = ins[:2] // no bias
	}
	if err := f32OnGPU("fused "+op+" input", ins); err != nil {
		return nil, err
	}
	a, err := core.NormalizeAttrs(op, attrs)
	if err != nil {
		return nil, err
	}
	geomOf := oprules.Conv2dGeom
	if op == "conv1d" {
		geomOf = oprules.Conv1dGeom
	}
	g, err := geomOf(ins[0].Shape(), ins[1].Shape(), a)
	if err != nil {
		return nil, err
	}
	metas, err := inferOp(op, ins, a)
	if err != nil {
		return nil, err
	}
	shape := metas[0].Shape
	for i, t := range extras {
		if t.Rank() > len(shape) || !fitsIn(t.Shape(), shape) {
			return nil, fmt.Errorf("webgpu: fused %s extra %d of shape %v does not broadcast to the output %v", op, i, t.Shape(), shape)
		}
	}
	expr, err := b.fusedExpr(e, len(extras)+1)
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	var bias *core.Tensor
	if len(ins) > 2 {
		bias = ins[2]
	}
	if err := b.conv(&g, "grid", ins[0], ins[1], bias, out, &epilogue{expr: expr, extras: extras}); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// inferOp is op's output metadata for ins (nil entries: absent optional
// inputs) and normalised attrs.
func inferOp(op string, ins []*core.Tensor, a core.Attrs) ([]core.Meta, error) {
	def, ok := core.LookupOp(op)
	if !ok || def.Infer == nil {
		return nil, fmt.Errorf("webgpu: %s has no shape rule", op)
	}
	metas := make([]core.Meta, len(ins))
	for i, t := range ins {
		if t != nil {
			metas[i] = t.Meta()
		}
	}
	return def.Infer(metas, a)
}
