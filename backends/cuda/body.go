//go:build linux && cgo

package cuda

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// CUDA kernels of ops whose GPU kernel is one body (core.ElementBody): the
// body's statements translated (translateBody) into a lambda the kernel
// calls once per output element, with the input helpers as macros over
// the argument block. As on WebGPU, a view input is copied dense first and
// shapes travel in the arguments (input k's dims in st[k], its element
// count in s[k], the output's in shape and n), so one compiled kernel
// serves every shape of these ranks and types.

const bodyBlock = 256

// bodyKernel is the kernel of a GPUBody op: an element body, or a row
// body (body_rows.go).
func bodyKernel(def *core.OpDef) core.Kernel {
	return func(k *core.KernelCall) error {
		if len(k.Outputs) != 1 {
			return fmt.Errorf("cuda: %s: a GPU body writes one output, the op has %d", def.Name, len(k.Outputs))
		}
		out := k.Outputs[0]
		types := []string{computeType(out.DType())}
		for _, t := range k.Inputs {
			if t != nil {
				types = append(types, computeType(t.DType()))
			}
		}
		float := lower.F32
		if !single(types...) {
			float = lower.F64
		}
		dtypes, shapes := core.BodyInputs(k.Inputs)
		var sc lower.Scalars
		src := def.GPUBody.Body(core.BodyTypes{Float: float, Out: types[0], In: dtypes}, k.Attrs, &sc)
		stmts, err := lower.ParseGPUBody(def.Name, src, def.GPUBody.Rows != nil)
		if err != nil {
			return err
		}
		rows, err := def.GPUBody.RowsOf(def.Name, shapes, out.Shape(), k.Attrs, math.MaxUint32)
		if out.Numel() == 0 || rows == 0 || err != nil {
			return err
		}
		ins, err := contiguousAll(k.Inputs...)
		if err != nil {
			return err
		}
		for j, t := range ins {
			if t != k.Inputs[j] {
				defer t.Release()
			}
		}
		code := bodyCode{src: src, stmts: stmts, float: float, fails: lower.BodyFails(stmts)}
		b := cudaOf(k)
		if def.GPUBody.Rows != nil {
			return b.rowsRun(def.Name, ins, out, rows, code, &sc)
		}
		failed := -1
		if err = b.bodyRun(def.Name, ins, out, code, &sc, &failed); err != nil || !code.fails {
			return err
		}
		// A body that can fail is checked now, while its inputs live: the
		// CPU kernel words the error for them (the check it failed says
		// which rule, not the values).
		err = b.Sync()
		if failed < 0 {
			return err // nil, or an earlier op's failure this sync reports
		}
		return core.BodyFailure(def.Name, failed, k.Inputs, k.Attrs)
	}
}

// bodyCode is a body and what its kernel's source is made from.
type bodyCode struct {
	src   string // the dialect, part of the kernel's key
	stmts []lower.Stmt
	float string // the float compute type
	fails bool   // the body has a return fail(K)
}

// bodyRun launches the body; a body that can fail reports the check it
// failed (K of return fail(K)) in *failed when the stream next syncs.
func (b *Backend) bodyRun(op string, ins []*core.Tensor, out *core.Tensor, code bodyCode, sc *lower.Scalars, failed *int) error {
	n := out.Numel()
	if len(ins)+1 > maxOps || out.Shape().Rank() > maxRank {
		return fmt.Errorf("cuda: %s: a GPU body takes at most %d inputs and rank %d", op, maxOps-1, maxRank)
	}
	if n > math.MaxUint32 {
		return fmt.Errorf("cuda: %s: %d output elements; a GPU body indexes with u32", op, n)
	}
	a, ops, ranks, err := bodyArgs(op, ins, out, sc)
	if err != nil {
		return err
	}
	outS, outC := storageType(out.DType()), computeType(out.DType())
	var key strings.Builder
	fmt.Fprintf(&key, "body_%s|r%d|%v|%s|%s|%s", op, out.Shape().Rank(), ranks, outS, code.float, code.src)
	for _, o := range ops {
		key.WriteString("|" + o.storage)
	}
	k, err := b.kernelFor(key.String(), func() (string, error) {
		return bodySource(ops, ranks, outS, outC, out.Shape().Rank(), code), nil
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", op, err)
	}
	spec := launchSpec{op: op, k: k, grid: b.gridFor(int64(n), bodyBlock), block: bodyBlock}
	if code.fails {
		spec.check = func(check uint32, elem, _ int64) string {
			*failed = int(check) - 1
			return fmt.Sprintf("check %d of its GPU body failed at output element %d", check-1, elem)
		}
	}
	return b.launch(spec, a)
}

// bodySource is the kernel: the helpers, the body as a lambda, and a
// grid-stride loop that stores body(i) at every output element.
func bodySource(ops []operand, ranks []int, outS, outC string, rank int, code bodyCode) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", bodyBlock, entry)
	bodyHelpers(&sb, ops, ranks, outS, rank, code.float)
	fmt.Fprintf(&sb, "auto body = [&](const u32 i) -> %s {\n", outC)
	sb.WriteString(translateBody(code.stmts, code.float == lower.F32))
	sb.WriteString("};\n")
	fmt.Fprintf(&sb, "for (i64 t = (i64)blockIdx.x * %d + (i64)threadIdx.x; t < A.n; t += (i64)gridDim.x * %d) {\n", bodyBlock, bodyBlock)
	fmt.Fprintf(&sb, "  put(&out0[A.off[%d] + t], body((u32)t));\n}\n}\n", len(ops))
	return sb.String()
}

// bodyArgs is a body kernel's argument block: the scalars, the output's
// element count, dims and offset (after the inputs), each given input's
// pointer, offset, dims and element count at its position, with the
// inputs' operand types and ranks (a zero operand and -1 for an absent
// optional input, whose position stays empty).
func bodyArgs(op string, ins []*core.Tensor, out *core.Tensor, sc *lower.Scalars) (*wtArgs, []operand, []int, error) {
	var a wtArgs
	a.N = int64(out.Numel())
	for d, s := range out.Shape() {
		a.Shape[d] = int64(s)
	}
	a.setScalars(sc)
	ops := make([]operand, len(ins))
	ranks := make([]int, len(ins))
	for k, t := range ins {
		if t == nil {
			ranks[k] = -1
			continue
		}
		if t.Shape().Rank() > maxRank || t.Numel() > math.MaxUint32 {
			return nil, nil, nil, fmt.Errorf("cuda: %s: input %d (%v): a GPU body reads at most rank %d and 2^32 elements", op, k, t.Shape(), maxRank)
		}
		p, err := ptrOf(t)
		if err != nil {
			return nil, nil, nil, err
		}
		a.Buf[k] = p
		a.setOperand(k, t.Offset(), t.Shape())
		a.S[k] = int64(t.Numel())
		ops[k] = operand{storage: storageType(t.DType()), compute: computeType(t.DType())}
		ranks[k] = t.Shape().Rank()
	}
	p, err := ptrOf(out)
	if err != nil {
		return nil, nil, nil, err
	}
	a.Buf[len(ins)] = p
	a.Off[len(ins)] = int64(out.Offset())
	return &a, ops, ranks, nil
}

// bodyHelpers writes the helpers a body reads its given inputs (input k's
// at position k; none for an absent one) and the output's shape through.
func bodyHelpers(sb *strings.Builder, ops []operand, ranks []int, outS string, rank int, float string) {
	for k, o := range ops {
		if ranks[k] < 0 {
			continue
		}
		fmt.Fprintf(sb, "const %s* __restrict__ in%d = (const %s*)A.buf[%d];\n", o.storage, k, o.storage, k)
		fmt.Fprintf(sb, "const u32 rank%d = %du;\n", k, ranks[k])
		at := fmt.Sprintf("in%d[A.off[%d] + (i64)(j)]", k, k)
		fmt.Fprintf(sb, "#define x%d(j) ((%s)ld(%s))\n", k, float, at)
		fmt.Fprintf(sb, "#define x%di(j) ((i32)ld(%s))\n", k, at)
		fmt.Fprintf(sb, "#define x%du(j) ((u32)ld(%s))\n", k, at)
		fmt.Fprintf(sb, "#define x%dv(j) (ld(%s))\n", k, at)
		fmt.Fprintf(sb, "#define dim%d(d) ((u32)A.st[%d][(d)])\n", k, k)
		fmt.Fprintf(sb, "#define numel%d() ((u32)A.s[%d])\n", k, k)
	}
	fmt.Fprintf(sb, "%s* __restrict__ out0 = (%s*)A.buf[%d];\n", outS, outS, len(ops))
	fmt.Fprintf(sb, "const u32 orank = %du;\n", rank)
	sb.WriteString("#define odim(d) ((u32)A.shape[(d)])\n#define onumel() ((u32)A.n)\n")
}
