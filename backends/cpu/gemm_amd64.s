#include "textflag.h"
#include "gemm_amd64.h"

// Both kernels run the same k step and hold the same eight accumulators,
// so the step and the clearing are written once, as macros: a change to the
// schedule then reaches both, which must keep agreeing bit for bit.

// ZERO_ACC_4x16 clears the accumulators Y0-Y7 (row i in Y(2i), Y(2i+1)).
#define ZERO_ACC_4x16 EACH_ACC_0_7(ZERO_REG)

// EACH_ACC_0_7(F) applies the one-register macro F to the accumulators
// Y0-Y7: ZERO_REG clears one, SCALE_Y14 and SCALE_Y15 multiply one by the
// alpha the kernel holds there.
#define EACH_ACC_0_7(F) F(Y0); F(Y1); F(Y2); F(Y3); F(Y4); F(Y5); F(Y6); F(Y7)
#define ZERO_REG(y) VXORPS y, y, y
#define SCALE_Y14(y) VMULPS Y14, y, y
#define SCALE_Y15(y) VMULPS Y15, y, y

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
	TILE_LOOP(ZERO_ACC_4x16, STEP_4x16, 16, 64)
	STORE4(32, 0, Y0, Y1, Y2, Y3)
	STORE4(32, 128, Y4, Y5, Y6, Y7)
	VZEROUPPER
	RET

// TILE_ROWS points R9-R11 at rows 1-3 of the C tile at DX (row stride R8).
#define TILE_ROWS \
	LEAQ (DX)(R8*1), R9; \
	LEAQ (R9)(R8*1), R10; \
	LEAQ (R10)(R8*1), R11

// EPILOGUE_4x16 writes the accumulators into the 4x16 tile of C at DX (row
// stride R8 bytes): with Y15 zero, C = 0 + alpha*product (0 + x makes a -0
// product +0, as the Go loop's 0 + alpha*v does); with Y15 loaded from C,
// C += alpha*product. LOAD_ROW(r, off) puts C's values at r+off in Y15 or
// leaves it zero: the kernels pass ADD_C or ADD_ZERO. alpha is in Y14; R9-R11
// are left at rows 1-3.
#define EPILOGUE_4x16(ADD) \
	TILE_ROWS; \
	EACH_ACC_0_7(SCALE_Y14); \
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
	VBROADCASTSS alpha+40(FP), Y14
	VXORPS Y15, Y15, Y15
	LOAD_SLIVER_ARGS
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

// The 4x24 kernels: twelve accumulators (row i in Y(3i)..Y(3i+2)), B's 24
// values of a k step in Y12-Y14 and each of A's four broadcast in turn
// into Y15. Twelve independent multiply-add chains keep both FMA units
// busy through their latency, where the 4x16 kernel's eight fall short,
// and seven loads serve twelve multiply-adds instead of six serving eight.
// Each element is the same chain of fused multiply-adds in k order as the
// 4x16 kernel's, so the two give the same bits.

// ZERO_ACC_4x24 clears the accumulators Y0-Y11.
#define ZERO_ACC_4x24 \
	ZERO_ACC_4x16; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// ROW_4x24(a, r0, r1, r2) multiplies row r's A value at a into its three
// accumulators.
#define ROW_4x24(a, r0, r1, r2) \
	VBROADCASTSS a, Y15; \
	VFMADD231PS Y12, Y15, r0; \
	VFMADD231PS Y13, Y15, r1; \
	VFMADD231PS Y14, Y15, r2

// STEP_4x24(k) is k step k (counted from SI and DI).
#define STEP_4x24(k) \
	VMOVUPS (96*k)(DI), Y12; \
	VMOVUPS (96*k+32)(DI), Y13; \
	VMOVUPS (96*k+64)(DI), Y14; \
	ROW_4x24((16*k)(SI), Y0, Y1, Y2); \
	ROW_4x24((16*k+4)(SI), Y3, Y4, Y5); \
	ROW_4x24((16*k+8)(SI), Y6, Y7, Y8); \
	ROW_4x24((16*k+12)(SI), Y9, Y10, Y11)

// EPILOGUE_4x24(ADD) is EPILOGUE_4x16 for the 4x24 tile, with alpha in
// Y15 (reloaded: the steps use it) and zero in Y14 for ADD_ZERO24.
#define EPILOGUE_4x24(ADD) \
	TILE_ROWS; \
	VBROADCASTSS alpha+40(FP), Y15; \
	VXORPS Y14, Y14, Y14; \
	EACH_ACC_0_7(SCALE_Y15); \
	VMULPS Y15, Y8, Y8; \
	VMULPS Y15, Y9, Y9; \
	VMULPS Y15, Y10, Y10; \
	VMULPS Y15, Y11, Y11; \
	ADD((DX), Y0); \
	ADD(32(DX), Y1); \
	ADD(64(DX), Y2); \
	ADD((R9), Y3); \
	ADD(32(R9), Y4); \
	ADD(64(R9), Y5); \
	ADD((R10), Y6); \
	ADD(32(R10), Y7); \
	ADD(64(R10), Y8); \
	ADD((R11), Y9); \
	ADD(32(R11), Y10); \
	ADD(64(R11), Y11); \
	VMOVUPS Y0, (DX); \
	VMOVUPS Y1, 32(DX); \
	VMOVUPS Y2, 64(DX); \
	VMOVUPS Y3, (R9); \
	VMOVUPS Y4, 32(R9); \
	VMOVUPS Y5, 64(R9); \
	VMOVUPS Y6, (R10); \
	VMOVUPS Y7, 32(R10); \
	VMOVUPS Y8, 64(R10); \
	VMOVUPS Y9, (R11); \
	VMOVUPS Y10, 32(R11); \
	VMOVUPS Y11, 64(R11)

#define ADD_ZERO24(m, y) VADDPS Y14, y, y

// func gemmMicro4x24AVX2(ap, bp *float32, kp int, tile *float32)
// tile[i*24+j] = sum over p < kp of ap[p*4+i] * bp[p*24+j].
TEXT ·gemmMicro4x24AVX2(SB), NOSPLIT, $0-32
	TILE_LOOP(ZERO_ACC_4x24, STEP_4x24, 16, 96)
	STORE4(32, 0, Y0, Y1, Y2, Y3)
	STORE4(32, 128, Y4, Y5, Y6, Y7)
	STORE4(32, 256, Y8, Y9, Y10, Y11)
	VZEROUPPER
	RET

// func gemmMicro4x24AVX2C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int)
// gemmMicro4x16AVX2C for the 4x24 tile.
TEXT ·gemmMicro4x24AVX2C(SB), NOSPLIT, $0-64
	LOAD_FULL_ARGS
	LOAD_SLIVER_ARGS
	JEQ doneC24

sliver24:
	ZERO_ACC_4x24
	MOVQ R13, DI
	MOVQ R14, CX
	TESTQ CX, CX
	JEQ epilogue24

loopC24:
	STEP_4x24(0)
	STEP_4x24(1)
	ADDQ $32, SI
	ADDQ $192, DI
	DECQ CX
	JNE loopC24

epilogue24:
	TESTQ AX, AX
	JNE add24
	EPILOGUE_4x24(ADD_ZERO24)
	JMP next24

add24:
	EPILOGUE_4x24(ADD_C)

next24:
	LEAQ (R11)(R8*1), DX
	DECQ R12
	JNE sliver24

doneC24:
	VZEROUPPER
	RET

// STEP_4x24R(k) is STEP_4x24 with A read in place: row r's k step k at
// (4*k)(SI) plus r*lda bytes (BX; R9 holds 3*lda).
#define STEP_4x24R(k) \
	VMOVUPS (96*k)(DI), Y12; \
	VMOVUPS (96*k+32)(DI), Y13; \
	VMOVUPS (96*k+64)(DI), Y14; \
	ROW_4x24((4*k)(SI), Y0, Y1, Y2); \
	ROW_4x24((4*k)(SI)(BX*1), Y3, Y4, Y5); \
	ROW_4x24((4*k)(SI)(BX*2), Y6, Y7, Y8); \
	ROW_4x24((4*k)(SI)(R9*1), Y9, Y10, Y11)

// func gemmMicro4x24AVX2R(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int, lda int)
// gemmMicro4x24AVX2C reading A where it is rather than packed: sliver s is
// rows 4s..4s+3 of a row-major A (row stride lda floats) from ap, kp (even)
// steps of each row. The same multiply-adds in the same order as the
// packed kernel, so the same bits.
TEXT ·gemmMicro4x24AVX2R(SB), NOSPLIT, $0-72
	LOAD_FULL_ARGS
	MOVQ lda+64(FP), BX
	SHLQ $2, BX
	LOAD_SLIVER_ARGS
	JEQ doneR24

sliverR24:
	ZERO_ACC_4x24
	LEAQ (BX)(BX*2), R9
	MOVQ R13, DI
	MOVQ R14, CX
	TESTQ CX, CX
	JEQ epilogueR24

loopR24:
	STEP_4x24R(0)
	STEP_4x24R(1)
	ADDQ $8, SI
	ADDQ $192, DI
	DECQ CX
	JNE loopR24

epilogueR24:
	TESTQ AX, AX
	JNE addR24
	EPILOGUE_4x24(ADD_ZERO24)
	JMP nextR24

addR24:
	EPILOGUE_4x24(ADD_C)

nextR24:
	LEAQ (R11)(R8*1), DX
	MOVQ R14, R10
	SHLQ $3, R10
	SUBQ R10, SI
	LEAQ (SI)(BX*4), SI
	DECQ R12
	JNE sliverR24

doneR24:
	VZEROUPPER
	RET
