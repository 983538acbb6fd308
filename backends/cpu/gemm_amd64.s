#include "textflag.h"
#include "gemm_amd64.h"

// Both kernels run the same k step and hold the same eight accumulators,
// so the step and the clearing are written once, as macros: a change to the
// schedule then reaches both, which must keep agreeing bit for bit.

// ZERO_ACC_4x16 clears the accumulators Y0-Y7 (row i in Y(2i), Y(2i+1)).
#define ZERO_ACC_4x16 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// STEP_4x16(k) is k step k (counted from SI and DI): B's 16 values of the
// step in Y8:Y9, each of A's 4 values broadcast into its own register and
// fused-multiply-added into its row's two accumulators.
#define STEP_4x16(k) \
	VMOVUPS (64*k)(DI), Y8; \
	VMOVUPS (64*k+32)(DI), Y9; \
	VBROADCASTSS (16*k)(SI), Y10; \
	VFMADD231PS Y8, Y10, Y0; \
	VFMADD231PS Y9, Y10, Y1; \
	VBROADCASTSS (16*k+4)(SI), Y11; \
	VFMADD231PS Y8, Y11, Y2; \
	VFMADD231PS Y9, Y11, Y3; \
	VBROADCASTSS (16*k+8)(SI), Y12; \
	VFMADD231PS Y8, Y12, Y4; \
	VFMADD231PS Y9, Y12, Y5; \
	VBROADCASTSS (16*k+12)(SI), Y13; \
	VFMADD231PS Y8, Y13, Y6; \
	VFMADD231PS Y9, Y13, Y7

// func gemmMicro4x16AVX2(ap, bp *float32, kp int, tile *float32)
// tile[i*16+j] = sum over p < kp of ap[p*4+i] * bp[p*16+j], each step one
// fused multiply-add per element, in k order.
TEXT ·gemmMicro4x16AVX2(SB), NOSPLIT, $0-32
	LOAD_TILE_ARGS
	ZERO_ACC_4x16
	TESTQ CX, CX
	JEQ done

loop:
	STEP_4x16(0)
	ADDQ $16, SI
	ADDQ $64, DI
	DECQ CX
	JNE loop

done:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VZEROUPPER
	RET

// EPILOGUE_4x16 writes the accumulators into the 4x16 tile of C at DX (row
// stride R8 bytes): with Y15 zero, C = 0 + alpha*product (0 + x makes a -0
// product +0, as the Go loop's 0 + alpha*v does); with Y15 loaded from C,
// C += alpha*product. LOAD_ROW(r, off) puts C's values at r+off in Y15 or
// leaves it zero: the kernels pass ADD_C or ADD_ZERO. alpha is in Y14; R9-R11
// are left at rows 1-3.
#define EPILOGUE_4x16(ADD) \
	LEAQ (DX)(R8*1), R9; \
	LEAQ (R9)(R8*1), R10; \
	LEAQ (R10)(R8*1), R11; \
	VMULPS Y14, Y0, Y0; \
	VMULPS Y14, Y1, Y1; \
	VMULPS Y14, Y2, Y2; \
	VMULPS Y14, Y3, Y3; \
	VMULPS Y14, Y4, Y4; \
	VMULPS Y14, Y5, Y5; \
	VMULPS Y14, Y6, Y6; \
	VMULPS Y14, Y7, Y7; \
	ADD((DX), Y0); \
	ADD(32(DX), Y1); \
	ADD((R9), Y2); \
	ADD(32(R9), Y3); \
	ADD((R10), Y4); \
	ADD(32(R10), Y5); \
	ADD((R11), Y6); \
	ADD(32(R11), Y7); \
	VMOVUPS Y0, (DX); \
	VMOVUPS Y1, 32(DX); \
	VMOVUPS Y2, (R9); \
	VMOVUPS Y3, 32(R9); \
	VMOVUPS Y4, (R10); \
	VMOVUPS Y5, 32(R10); \
	VMOVUPS Y6, (R11); \
	VMOVUPS Y7, 32(R11)

// ADD_C adds C's values; ADD_ZERO adds zero (Y15).
#define ADD_C(m, y) VADDPS m, y, y
#define ADD_ZERO(m, y) VADDPS Y15, y, y

// func gemmMicro4x16AVX2C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int)
// The same product as gemmMicro4x16AVX2 (kp even), written straight into
// full 4x16 tiles of C with row stride ldc: C = 0 + alpha*product, or with
// accumulate C += alpha*product, what gemmMacroKernel's Go loop does with
// the tile buffer, without the buffer's round trip. It runs slivers A
// slivers (kp*4 floats each, one after another) against the one B sliver,
// into C's row blocks four rows apart: the loop over them in Go, a call
// and its checks a tile, was a twentieth of a MiniLM forward.
TEXT ·gemmMicro4x16AVX2C(SB), NOSPLIT, $0-64
	LOAD_FULL_ARGS
	MOVQ DI, R13              // B's sliver, from the start for each A sliver
	MOVQ CX, R14
	SHRQ $1, R14              // k steps in pairs
	MOVQ slivers+56(FP), R12
	VBROADCASTSS alpha+40(FP), Y14
	VXORPS Y15, Y15, Y15
	MOVQ accumulate+48(FP), AX
	TESTQ R12, R12
	JEQ done

sliver:
	ZERO_ACC_4x16
	MOVQ R13, DI
	MOVQ R14, CX
	TESTQ CX, CX
	JEQ epilogue

loopc:
	STEP_4x16(0)
	STEP_4x16(1)
	ADDQ $32, SI
	ADDQ $128, DI
	DECQ CX
	JNE loopc

epilogue:
	TESTQ AX, AX
	JNE add
	EPILOGUE_4x16(ADD_ZERO)
	JMP next

add:
	EPILOGUE_4x16(ADD_C)

next:
	LEAQ (R11)(R8*1), DX      // four rows down
	DECQ R12
	JNE sliver

done:
	VZEROUPPER
	RET
