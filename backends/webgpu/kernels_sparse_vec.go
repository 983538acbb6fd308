package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// spmm four features at a time. The scalar kernel has one thread per output
// element, each re-reading its row's indices and values and gathering one
// float per entry; on a SIMD software driver every gather costs the same
// whatever its width, so a thread that owns four adjacent features (one
// vec4 gather from the dense row) does a quarter of the index work and
// gathers per output. Each lane keeps its own Kahan compensation, so the
// sums are those of the scalar kernel.

// spmmVec4 says whether spmm can read dense four floats at a time: f32
// values and a contiguous f32 matrix whose width and offset are multiples
// of 4.
func spmmVec4(values, dense *core.Tensor) bool {
	if values.DType() != core.F32 || dense.DType() != core.F32 || dense.Rank() != 2 {
		return false
	}
	st, f := dense.Strides(), dense.Shape()[1]
	return f > 0 && f%4 == 0 && st[1] == 1 && st[0] == f && dense.Offset()%4 == 0
}

// spmmVec4Run writes spmm into out (a fresh [rows, F] f32 tensor), with an
// epilogue expr over x0 (the sum) and x1.. (extras at the same element)
// unless expr is "".
func (g *Backend) spmmVec4Run(indptr, indices, values, dense *core.Tensor, extras []*core.Tensor, expr string, out *core.Tensor) error {
	var prm params
	d, err := spCSRDescs(&prm, indptr, indices, values)
	if err != nil {
		return err
	}
	rows, nq := indptr.Numel()-1, dense.Shape()[1]/4
	// Each thread owns span quads spaced nt apart (nt threads per row), so
	// one read of an entry's column and value serves span gathers.
	span := spmmSpan(nq)
	nt := nq / span
	prm.setN(0, nq)
	prm.setN(1, dense.Offset()/4)
	prm.setN(2, nt)
	var b strings.Builder
	fmt.Fprintf(&b, `	let nq = pu(0u);
	let nt = pu(2u);
	let r = t / nt;
	let q0 = t %% nt;
	let base = pu(1u) + q0;
	var acc: array<vec4<f32>, %[4]d>;
	var acc_c: array<vec4<f32>, %[4]d>;
	let pend = u32(in0[sp_at1(r + 1u, %[1]du)]);
	for (var p = u32(in0[sp_at1(r, %[1]du)]); p < pend; p++) {
		let row = base + u32(in1[sp_at1(p, %[2]du)]) * nq;
		let w = in2[sp_at1(p, %[3]du)];
		for (var j = 0u; j < %[4]du; j++) {
			let ky = w * in3[row + j * nt] - acc_c[j];
			let ks = acc[j] + ky;
			acc_c[j] = select((ks - acc[j]) - ky, vec4<f32>(0.0), abs(ks) > vec4<f32>(3.40282347e38));
			acc[j] = ks;
		}
	}
`, d[0], d[1], d[2], span)
	fmt.Fprintf(&b, "\tfor (var j = 0u; j < %du; j++) {\n\t\tlet q = q0 + j * nt;\n", span)
	if expr == "" {
		b.WriteString("\t\tout0[r * nq + q] = acc[j];\n\t}\n")
	} else {
		b.WriteString("\t\tvar res = acc[j];\n\t\tfor (var k = 0u; k < 4u; k++) {\n\t\t\tlet x0 = acc[j][k];\n")
		shape := core.Shape{rows, 4 * nq}
		for i, e := range extras {
			slot := wgsl.OperandSlot(4 + i)
			writeOperand(&prm, slot, e.Offset(), lower.BroadcastStrides(e, shape))
			fmt.Fprintf(&b, "\t\t\tlet x%d = in%d[sp_at2(r, q * 4u + k, %du)];\n", i+1, 4+i, slot)
		}
		b.WriteString("\t\t\tres[k] = " + expr + ";\n\t\t}\n\t\tout0[r * nq + q] = res;\n\t}\n")
	}
	ins := append([]*core.Tensor{indptr, indices, values, dense}, extras...)
	inT := []string{physical(indptr.DType()), physical(indices.DType()), "f32", "vec4<f32>"}
	for range extras {
		inT = append(inT, "f32")
	}
	return g.spRunTyped(ins, []*core.Tensor{out}, inT, []string{"vec4<f32>"}, rows*nt, b.String(), &prm)
}

// spmmSpan is how many quads of a row one thread sums: up to 8 when they
// divide the row's quads evenly. On lavapipe, a 64-wide product over 116k
// entries took 4.7-4.9 ms with 8, 5.3-5.5 ms with 4 and 5.2-5.6 ms with 16
// (medians of alternating runs): more quads share each entry's index and
// value reads until the accumulators outgrow the registers.
func spmmSpan(nq int) int {
	for _, s := range []int{8, 4, 2} {
		if nq%s == 0 {
			return s
		}
	}
	return 1
}
