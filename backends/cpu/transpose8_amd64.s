#include "textflag.h"

// LOAD_TRANSPOSE_ARGS loads both transposes' (dst *float32, dstStride int,
// src *float32, ld int, k int): DI dst, R10 its stride in bytes, R11 three
// strides, SI src, BX its row stride in bytes, DX three rows, CX k.
#define LOAD_TRANSPOSE_ARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ dstStride+8(FP), R10; \
	SHLQ $2, R10; \
	MOVQ src+16(FP), SI; \
	MOVQ ld+24(FP), BX; \
	SHLQ $2, BX; \
	MOVQ k+32(FP), CX; \
	LEAQ (BX)(BX*2), DX; \
	LEAQ (R10)(R10*2), R11

// func transpose8F32AVX2(dst *float32, dstStride int, src *float32, ld int, k int)
//
// Eight rows of src (ld floats apart), k columns (a multiple of 8), written
// k-major: column p's eight values (row 0 first) at dst + p*dstStride. Each
// 8x8 block is loaded as eight row vectors and transposed in registers
// (unpack, shuffle, 128-bit permute), so every load and store is a whole
// vector.
TEXT ·transpose8F32AVX2(SB), NOSPLIT, $0-40
	LOAD_TRANSPOSE_ARGS
	LEAQ (SI)(BX*4), R8 // row 4
	SHRQ $3, CX
	JZ   done

loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(DX*1), Y3
	VMOVUPS (R8), Y4
	VMOVUPS (R8)(BX*1), Y5
	VMOVUPS (R8)(BX*2), Y6
	VMOVUPS (R8)(DX*1), Y7

	// Pairs of rows interleaved: t0 = r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5], ...
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	// Four rows of a column in each 128-bit lane: Y0 = col 0 | col 4 of rows 0-3, ...
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	// Rows 0-3 and 4-7 of a column joined: columns 0..7 in order.
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R10*1)
	VMOVUPS Y10, (DI)(R10*2)
	VMOVUPS Y11, (DI)(R11*1)
	LEAQ    (DI)(R10*4), DI
	VMOVUPS Y12, (DI)
	VMOVUPS Y13, (DI)(R10*1)
	VMOVUPS Y14, (DI)(R10*2)
	VMOVUPS Y15, (DI)(R11*1)
	LEAQ    (DI)(R10*4), DI

	ADDQ $32, SI
	ADDQ $32, R8
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func transpose4F32AVX2(dst *float32, dstStride int, src *float32, ld int, k int)
//
// transpose8F32AVX2 for four rows: column p's four values at dst +
// p*dstStride. gemmPackA's four-row slivers (the AVX2 micro-kernel's
// height) take it; packed one value at a time, they were a twentieth of a
// MiniLM forward.
TEXT ·transpose4F32AVX2(SB), NOSPLIT, $0-40
	LOAD_TRANSPOSE_ARGS
	SHRQ $3, CX
	JZ   done4

loop4:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(DX*1), Y3

	VUNPCKLPS Y1, Y0, Y4 // r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5]
	VUNPCKHPS Y1, Y0, Y5 // columns 2, 3 | 6, 7 of rows 0-1
	VUNPCKLPS Y3, Y2, Y6
	VUNPCKHPS Y3, Y2, Y7

	// The four rows of a column in each 128-bit lane: Y0 = column 0 | column 4, ...
	VSHUFPS $0x44, Y6, Y4, Y0
	VSHUFPS $0xEE, Y6, Y4, Y1
	VSHUFPS $0x44, Y7, Y5, Y2
	VSHUFPS $0xEE, Y7, Y5, Y3

	VMOVUPS      X0, (DI)
	VMOVUPS      X1, (DI)(R10*1)
	VMOVUPS      X2, (DI)(R10*2)
	VMOVUPS      X3, (DI)(R11*1)
	LEAQ         (DI)(R10*4), DI
	VEXTRACTF128 $1, Y0, (DI)
	VEXTRACTF128 $1, Y1, (DI)(R10*1)
	VEXTRACTF128 $1, Y2, (DI)(R10*2)
	VEXTRACTF128 $1, Y3, (DI)(R11*1)
	LEAQ         (DI)(R10*4), DI

	ADDQ $32, SI
	DECQ CX
	JNZ  loop4

done4:
	VZEROUPPER
	RET
