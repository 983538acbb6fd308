package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Integer sums and products are i64 (u32 for u32 input), and the GPU holds
// i64 in i32. A sum is kept exact in two words (low u32, high i32) through
// every level; a product keeps its low 32 bits with two marks, overflowed
// and met a zero. The last level scales by the repeat count of a
// broadcast view and writes the i64 result when it fits in i32, and fails
// the op otherwise (it used to wrap: three 2^30 summed to -2^30); a u32
// result wraps, as on the CPU.

type intKind int

const (
	intSum intKind = iota
	intProd
)

// intReduce sums or multiplies the members of in's groups over frame f.
func (b *Backend) intReduce(op string, f frame, in, out *core.Tensor, kind intKind) error {
	d := distinctFrame(f.Shape, f.Reduced, in)
	unsigned := physical(in.DType()) == "u32"
	exact := out.DType() == core.I64
	var red reducer
	var first []string
	if kind == intSum {
		red, first = intSumReducer(exact), []string{"bitcast<u32>(v0(o, r))", "select(0, -1, v0(o, r) < 0)"}
		if unsigned {
			first = []string{"v0(o, r)", "0"}
		}
	} else {
		red, first = intProdReducer(exact), []string{"v0(o, r)", "0u"}
		if unsigned {
			// A u32 past i32 cannot be a factor of an i64 product that fits.
			first = []string{"bitcast<i32>(v0(o, r))", "select(0u, 1u, v0(o, r) > 0x7fffffffu)"}
			if !exact {
				first[1] = "0u"
			}
		}
	}
	red.set = d.setRepeat
	return b.runReducer(op, d.f, d.ins, out, red, first)
}

// intSumReducer: read[0] is a member's low word (u32), read[1] its high
// word (i32).
func intSumReducer(exact bool) reducer {
	final := "\tout0[o] = lo * pu(45u);\n"
	if exact {
		// The sum fits in i32 when its high word is the low word's sign;
		// times the repeat count it must still fit.
		final = `	let v = bitcast<i32>(lo);
	var res = v * i32(pu(44u));
	if hi != select(0, -1, v < 0) || (v != 0 && (pf(41u) > 2147483647.0 || i_mul_ovf(v, i32(pu(44u))))) {
		fail();
		res = 0;
	}
	out0[o] = res;
`
	}
	return reducer{partial: core.I32, words: 2, flagged: exact,
		accum: func(read []string, loop string) string {
			return fmt.Sprintf(`	var lo = 0u;
	var hi = 0;
	%s {
		let a = %s;
		let s = lo + a;
		hi = hi + %s + select(0, 1, s < lo);
		lo = s;
	}
`, loop, read[0], read[1])
		},
		keep:  "\tout0[t] = bitcast<i32>(lo);\n\tout0[t + pu(52u)] = hi;\n",
		final: final,
		next:  []string{"bitcast<u32>(v0(o, r))", "v1(o, r)"},
	}
}

// intProdReducer: read[0] is a factor (i32), read[1] marks (bit 0: the
// product so far overflowed i32; bit 1: it met a zero).
func intProdReducer(exact bool) reducer {
	final := "\tout0[o] = u_pow(bitcast<u32>(v), pu(43u));\n"
	if exact {
		final = `	var res = 0;
	if (st & 2u) == 0u {
		if (st & 1u) != 0u {
			fail();
		} else if v == 1 || v == -1 {
			res = select(1, v, (pu(43u) & 1u) == 1u);
		} else if pf(41u) > 2147483647.0 || i_pow_ovf(v, i32(pu(44u))) {
			fail();
		} else {
			res = i_pow(v, i32(pu(44u)));
		}
	}
	out0[o] = res;
`
	}
	return reducer{partial: core.I32, words: 2, flagged: exact,
		accum: func(read []string, loop string) string {
			return fmt.Sprintf(`	var v = 1;
	var st = 0u;
	%s {
		let a = %s;
		st = st | %s;
		if a == 0 { st = st | 2u; }
		if i_mul_ovf(v, a) { st = st | 1u; }
		v = v * a;
	}
`, loop, read[0], read[1])
		},
		keep:  "\tout0[t] = v;\n\tout0[t + pu(52u)] = bitcast<i32>(st);\n",
		final: final,
		next:  []string{"v0(o, r)", "bitcast<u32>(v1(o, r))"},
	}
}

// matmulI64 is an integer product into i64, which the GPU holds in i32: a
// reduction over K of [batch..., M, N, K] whose members are the exact
// 64-bit products a[m, k] * b[k, n] (i_mul_wide), summed in two words like
// an integer sum, the result refused when it leaves i32 (the matmul
// kernels accumulate in i32 and wrapped).
func (g *Backend) matmulI64(a, b, out *core.Tensor, batch core.Shape, m, kk, n int) error {
	if out.Numel() == 0 {
		return nil
	}
	ar, br := a.Rank(), b.Rank()
	as, bs := a.Strides(), b.Strides()
	av := core.NewView(a, append(a.Shape()[:ar-1:ar-1], 1, kk), append(as[:ar-1:ar-1], 0, as[ar-1]), a.Offset())
	bv := core.NewView(b, append(b.Shape()[:br-2:br-2], 1, n, kk), append(bs[:br-2:br-2], 0, bs[br-1], bs[br-2]), b.Offset())
	shape := append(batch.Clone(), m, n, kk)
	d := distinctFrame(shape, []int{len(shape) - 1}, av, bv)
	red := intSumReducer(true)
	red.set = d.setRepeat
	term := lower.Conv("v0(o, r)", physical(a.DType()), "i32") + ", " + lower.Conv("v1(o, r)", physical(b.DType()), "i32")
	return g.runReducer("matmul", d.f, d.ins, out, red, []string{"i_mul_wide(" + term + ").x", "bitcast<i32>(i_mul_wide(" + term + ").y)"})
}

// einsumI64 sums products of one or two integer terms into i64 exactly,
// as matmulI64 does; more terms would need wider products than it keeps.
func (g *Backend) einsumI64(f frame, views []*core.Tensor, out *core.Tensor, terms []string) error {
	var read []string
	switch len(terms) {
	case 1:
		read = []string{"bitcast<u32>(" + terms[0] + ")", "select(0, -1, " + terms[0] + " < 0)"}
	case 2:
		w := "i_mul_wide(" + terms[0] + ", " + terms[1] + ")"
		read = []string{w + ".x", "bitcast<i32>(" + w + ".y)"}
	default:
		return fmt.Errorf("webgpu: an einsum of %d integer operands into i64 is not exact here (the GPU holds i64 in i32 and multiplies two at a time); use device cpu", len(terms))
	}
	d := distinctFrame(f.Shape, f.Reduced, views...)
	red := intSumReducer(true)
	red.set = d.setRepeat
	return g.runReducer("einsum", d.f, d.ins, out, red, read)
}
