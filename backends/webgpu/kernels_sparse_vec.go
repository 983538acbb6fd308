package webgpu

import (
	"fmt"

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
	prm.setU(0, uint32(nq))
	prm.setU(1, uint32(dense.Offset()/4))
	body := fmt.Sprintf(`	let nq = pu(0u);
	let r = t / nq;
	let q = t %% nq;
	var acc = vec4<f32>(0.0);
	var acc_c = vec4<f32>(0.0);
	for (var p = u32(in0[sp_at1(r, %[1]du)]); p < u32(in0[sp_at1(r + 1u, %[1]du)]); p++) {
		let c = u32(in1[sp_at1(p, %[2]du)]);
		let ky = in2[sp_at1(p, %[3]du)] * in3[pu(1u) + c * nq + q] - acc_c;
		let ks = acc + ky;
		acc_c = select((ks - acc) - ky, vec4<f32>(0.0), abs(ks) > vec4<f32>(3.40282347e38));
		acc = ks;
	}
`, d[0], d[1], d[2])
	if expr == "" {
		body += "\tout0[t] = acc;\n"
	} else {
		body += "\tvar res = acc;\n\tfor (var k = 0u; k < 4u; k++) {\n\t\tlet x0 = acc[k];\n"
		shape := core.Shape{rows, 4 * nq}
		for i, e := range extras {
			slot := wgsl.OperandSlot(4 + i)
			writeOperand(&prm, slot, e.Offset(), broadcastStrides(e, shape))
			body += fmt.Sprintf("\t\tlet x%d = in%d[sp_at2(r, q * 4u + k, %du)];\n", i+1, 4+i, slot)
		}
		body += "\t\tres[k] = " + expr + ";\n\t}\n\tout0[t] = res;\n"
	}
	ins := append([]*core.Tensor{indptr, indices, values, dense}, extras...)
	inT := []string{physical(indptr.DType()), physical(indices.DType()), "f32", "vec4<f32>"}
	for range extras {
		inT = append(inT, "f32")
	}
	return g.spRunTyped(ins, []*core.Tensor{out}, inT, []string{"vec4<f32>"}, rows*nq, body, &prm)
}
