#include "textflag.h"

// WG_ROW loads one row of eight tiles from base (even columns there, odd
// ones R9 bytes on) and writes d B into u0..u3: [e0-e1, o0+e1, e1-o0, o0-o1].
#define WG_ROW(base, u0, u1, u2, u3) \
	VMOVUPS (base), Y12; \
	VMOVUPS 4(base), Y13; \
	VMOVUPS (base)(R9*1), Y14; \
	VMOVUPS 4(base)(R9*1), Y15; \
	VSUBPS Y13, Y12, u0; \
	VADDPS Y13, Y14, u1; \
	VSUBPS Y14, Y13, u2; \
	VSUBPS Y15, Y14, u3

// WG_STORE4 stores four vectors at BX, DX bytes apart, and leaves BX
// past the last (the next four points).
#define WG_STORE4(a, b, c, d) \
	VMOVUPS a, (BX); \
	ADDQ DX, BX; \
	VMOVUPS b, (BX); \
	ADDQ DX, BX; \
	VMOVUPS c, (BX); \
	ADDQ DX, BX; \
	VMOVUPS d, (BX); \
	ADDQ DX, BX

// WG_COLUMN loads column j of M (points j, 4+j, 8+j, 12+j from BX, R12,
// R13 and R14 bytes apart) and writes s = m0+m1+m2 and z = m1-m2-m3.
#define WG_COLUMN(s, z) \
	VMOVUPS (BX), Y8; \
	VMOVUPS (BX)(R12*1), Y9; \
	VMOVUPS (BX)(R13*1), Y10; \
	VMOVUPS (BX)(R14*1), Y11; \
	VADDPS Y9, Y8, s; \
	VSUBPS Y10, Y9, z; \
	VADDPS Y10, s, s; \
	VSUBPS Y11, z, z

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
	WG_ROW(AX, Y0, Y1, Y2, Y3)

	// Row 0 (a0..a3 in Y4..Y7); point row 0 = a - c.
	WG_ROW(SI, Y4, Y5, Y6, Y7)
	MOVQ DI, BX
	VSUBPS Y0, Y4, Y4
	VSUBPS Y1, Y5, Y5
	VSUBPS Y2, Y6, Y6
	VSUBPS Y3, Y7, Y7
	WG_STORE4(Y4, Y5, Y6, Y7)

	// Row 1 (b0..b3 in Y4..Y7); point rows 1 = b + c and 2 = c - b.
	LEAQ (SI)(R8*1), AX
	WG_ROW(AX, Y4, Y5, Y6, Y7)
	VADDPS Y0, Y4, Y8
	VADDPS Y1, Y5, Y9
	VADDPS Y2, Y6, Y10
	VADDPS Y3, Y7, Y11
	WG_STORE4(Y8, Y9, Y10, Y11)
	VSUBPS Y4, Y0, Y8
	VSUBPS Y5, Y1, Y9
	VSUBPS Y6, Y2, Y10
	VSUBPS Y7, Y3, Y11
	WG_STORE4(Y8, Y9, Y10, Y11)

	// Row 3 (e0..e3 in Y0..Y3); point row 3 = b - e.
	LEAQ (AX)(R8*2), AX
	WG_ROW(AX, Y0, Y1, Y2, Y3)
	VSUBPS Y0, Y4, Y8
	VSUBPS Y1, Y5, Y9
	VSUBPS Y2, Y6, Y10
	VSUBPS Y3, Y7, Y11
	WG_STORE4(Y8, Y9, Y10, Y11)

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
	WG_COLUMN(Y0, Y4)
	ADDQ DX, BX
	WG_COLUMN(Y1, Y5)
	ADDQ DX, BX
	WG_COLUMN(Y2, Y6)
	ADDQ DX, BX
	WG_COLUMN(Y3, Y7)

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
