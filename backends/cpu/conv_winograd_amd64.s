#include "textflag.h"

// func wgInput8AVX2(dst *float32, dstStride int, src *float32, rowStride int, half int, plane int, dstStep int, channels int)
//
// The Winograd input transform V = Bᵀ d B of eight adjacent tiles, for
// each of channels channels. src is the tiles' top row in a plane whose
// rows hold the even columns and then, half bytes on, the odd ones, so
// that each of a tile's four columns is one vector over the eight tiles:
// even[x], odd[x], even[x+1], odd[x+1]. Point ξ's eight values go to
// dst + ξ*dstStride; the next channel is plane bytes on in src and
// dstStep bytes on in dst. Strides are in bytes.
TEXT ·wgInput8AVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ rowStride+24(FP), R8
	MOVQ half+32(FP), R9
	MOVQ plane+40(FP), R10
	MOVQ dstStep+48(FP), R11
	MOVQ channels+56(FP), CX
	TESTQ CX, CX
	JZ   indone

inloop:
	// Row 2 (c0..c3 in Y0..Y3): d B = [e0-e1, o0+e1, e1-o0, o0-o1].
	LEAQ (SI)(R8*2), AX
	VMOVUPS (AX), Y12
	VMOVUPS 4(AX), Y13
	VMOVUPS (AX)(R9*1), Y14
	VMOVUPS 4(AX)(R9*1), Y15
	VSUBPS Y13, Y12, Y0
	VADDPS Y13, Y14, Y1
	VSUBPS Y14, Y13, Y2
	VSUBPS Y15, Y14, Y3

	// Row 0 (a0..a3 in Y4..Y7); point row 0 = a - c.
	VMOVUPS (SI), Y12
	VMOVUPS 4(SI), Y13
	VMOVUPS (SI)(R9*1), Y14
	VMOVUPS 4(SI)(R9*1), Y15
	VSUBPS Y13, Y12, Y4
	VADDPS Y13, Y14, Y5
	VSUBPS Y14, Y13, Y6
	VSUBPS Y15, Y14, Y7
	MOVQ DI, BX
	VSUBPS Y0, Y4, Y4
	VSUBPS Y1, Y5, Y5
	VSUBPS Y2, Y6, Y6
	VSUBPS Y3, Y7, Y7
	VMOVUPS Y4, (BX)
	ADDQ DX, BX
	VMOVUPS Y5, (BX)
	ADDQ DX, BX
	VMOVUPS Y6, (BX)
	ADDQ DX, BX
	VMOVUPS Y7, (BX)
	ADDQ DX, BX

	// Row 1 (b0..b3 in Y4..Y7); point rows 1 = b + c and 2 = c - b.
	LEAQ (SI)(R8*1), AX
	VMOVUPS (AX), Y12
	VMOVUPS 4(AX), Y13
	VMOVUPS (AX)(R9*1), Y14
	VMOVUPS 4(AX)(R9*1), Y15
	VSUBPS Y13, Y12, Y4
	VADDPS Y13, Y14, Y5
	VSUBPS Y14, Y13, Y6
	VSUBPS Y15, Y14, Y7
	VADDPS Y0, Y4, Y8
	VADDPS Y1, Y5, Y9
	VADDPS Y2, Y6, Y10
	VADDPS Y3, Y7, Y11
	VMOVUPS Y8, (BX)
	ADDQ DX, BX
	VMOVUPS Y9, (BX)
	ADDQ DX, BX
	VMOVUPS Y10, (BX)
	ADDQ DX, BX
	VMOVUPS Y11, (BX)
	ADDQ DX, BX
	VSUBPS Y4, Y0, Y8
	VSUBPS Y5, Y1, Y9
	VSUBPS Y6, Y2, Y10
	VSUBPS Y7, Y3, Y11
	VMOVUPS Y8, (BX)
	ADDQ DX, BX
	VMOVUPS Y9, (BX)
	ADDQ DX, BX
	VMOVUPS Y10, (BX)
	ADDQ DX, BX
	VMOVUPS Y11, (BX)
	ADDQ DX, BX

	// Row 3 (e0..e3 in Y0..Y3); point row 3 = b - e.
	LEAQ (AX)(R8*2), AX
	VMOVUPS (AX), Y12
	VMOVUPS 4(AX), Y13
	VMOVUPS (AX)(R9*1), Y14
	VMOVUPS 4(AX)(R9*1), Y15
	VSUBPS Y13, Y12, Y0
	VADDPS Y13, Y14, Y1
	VSUBPS Y14, Y13, Y2
	VSUBPS Y15, Y14, Y3
	VSUBPS Y0, Y4, Y8
	VSUBPS Y1, Y5, Y9
	VSUBPS Y2, Y6, Y10
	VSUBPS Y3, Y7, Y11
	VMOVUPS Y8, (BX)
	ADDQ DX, BX
	VMOVUPS Y9, (BX)
	ADDQ DX, BX
	VMOVUPS Y10, (BX)
	ADDQ DX, BX
	VMOVUPS Y11, (BX)

	ADDQ R10, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  inloop

indone:
	VZEROUPPER
	RET

// func wgOutput8AVX2(m *float32, mStride int, out *float32, rowStride int, ld int, outStep int, bias *float32, channels int)
//
// The Winograd output transform Y = Aᵀ M A (+ bias) of eight adjacent
// tiles whose outputs all lie inside the grid, for each of channels
// output channels. Point ξ's eight values are at m + ξ*mStride; the four
// outputs of each tile go to out (rows rowStride apart), 16 values a row,
// interleaved. The next channel is ld bytes on in m, outStep bytes on in
// out and 4 bytes on in bias. Strides are in bytes.
TEXT ·wgOutput8AVX2(SB), NOSPLIT, $0-64
	MOVQ m+0(FP), SI
	MOVQ mStride+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ rowStride+24(FP), R8
	MOVQ ld+32(FP), R9
	MOVQ outStep+40(FP), R10
	MOVQ bias+48(FP), R11
	MOVQ channels+56(FP), CX
	LEAQ (DX*4), R12          // 4 points: one row of M
	LEAQ (R12)(R12*1), R13    // 8 points
	LEAQ (R13)(R12*1), R14    // 12 points
	TESTQ CX, CX
	JZ   outdone

outloop:
	// Column j of M: s_j = m0j+m1j+m2j (Y0..Y3), z_j = m1j-m2j-m3j (Y4..Y7).
	MOVQ SI, BX
	VMOVUPS (BX), Y8
	VMOVUPS (BX)(R12*1), Y9
	VMOVUPS (BX)(R13*1), Y10
	VMOVUPS (BX)(R14*1), Y11
	VADDPS Y9, Y8, Y0
	VSUBPS Y10, Y9, Y4
	VADDPS Y10, Y0, Y0
	VSUBPS Y11, Y4, Y4
	ADDQ DX, BX
	VMOVUPS (BX), Y8
	VMOVUPS (BX)(R12*1), Y9
	VMOVUPS (BX)(R13*1), Y10
	VMOVUPS (BX)(R14*1), Y11
	VADDPS Y9, Y8, Y1
	VSUBPS Y10, Y9, Y5
	VADDPS Y10, Y1, Y1
	VSUBPS Y11, Y5, Y5
	ADDQ DX, BX
	VMOVUPS (BX), Y8
	VMOVUPS (BX)(R12*1), Y9
	VMOVUPS (BX)(R13*1), Y10
	VMOVUPS (BX)(R14*1), Y11
	VADDPS Y9, Y8, Y2
	VSUBPS Y10, Y9, Y6
	VADDPS Y10, Y2, Y2
	VSUBPS Y11, Y6, Y6
	ADDQ DX, BX
	VMOVUPS (BX), Y8
	VMOVUPS (BX)(R12*1), Y9
	VMOVUPS (BX)(R13*1), Y10
	VMOVUPS (BX)(R14*1), Y11
	VADDPS Y9, Y8, Y3
	VSUBPS Y10, Y9, Y7
	VADDPS Y10, Y3, Y3
	VSUBPS Y11, Y7, Y7

	// y00 = s0+s1+s2, y01 = s1-s2-s3 (Y8, Y9); y10, y11 from z (Y10, Y11).
	VBROADCASTSS (R11), Y15
	VADDPS Y1, Y0, Y8
	VSUBPS Y2, Y1, Y9
	VADDPS Y2, Y8, Y8
	VSUBPS Y3, Y9, Y9
	VADDPS Y5, Y4, Y10
	VSUBPS Y6, Y5, Y11
	VADDPS Y6, Y10, Y10
	VSUBPS Y7, Y11, Y11
	VADDPS Y15, Y8, Y8
	VADDPS Y15, Y9, Y9
	VADDPS Y15, Y10, Y10
	VADDPS Y15, Y11, Y11

	// Interleave each row's pair: tile x's two outputs at 2x, 2x+1.
	VUNPCKLPS Y9, Y8, Y12
	VUNPCKHPS Y9, Y8, Y13
	VPERM2F128 $0x20, Y13, Y12, Y14
	VPERM2F128 $0x31, Y13, Y12, Y15
	VMOVUPS Y14, (DI)
	VMOVUPS Y15, 32(DI)
	VUNPCKLPS Y11, Y10, Y12
	VUNPCKHPS Y11, Y10, Y13
	VPERM2F128 $0x20, Y13, Y12, Y14
	VPERM2F128 $0x31, Y13, Y12, Y15
	VMOVUPS Y14, (DI)(R8*1)
	VMOVUPS Y15, 32(DI)(R8*1)

	ADDQ R9, SI
	ADDQ R10, DI
	ADDQ $4, R11
	DECQ CX
	JNZ  outloop

outdone:
	VZEROUPPER
	RET
