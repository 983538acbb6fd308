#include "textflag.h"
#include "gemm_amd64.h"

// The AVX-512 micro-kernels: 8 rows of A broadcast against 32 columns of B
// in two zmm registers, sixteen accumulators - twice the fused
// multiply-adds in flight that the latency of two FMA ports needs, where
// AVX2's 4x16 has exactly as many (eight) and so stalls on any load. Each
// element is the same chain of fused multiply-adds in k order as in the
// AVX2 kernels, so results equal theirs bit for bit.
//
// Each kernel zeroes the registers above 15 it used before returning:
// VZEROUPPER leaves them alone, and while one holds a value every legacy
// SSE instruction after the kernel (Go's scalar float code) pays the
// SSE/AVX transition (see _asm/highregs.go for the measurement).

// Both kernels run the same k step and hold the same sixteen accumulators,
// so the step and the clearing are written once, as macros (as in
// gemm_amd64.s): a change to the schedule then reaches both.

// EACH_ACC_8x32(F) applies the one-register macro F to the accumulators
// Z0-Z15 (row i in Z(2i), Z(2i+1)): ZERO_ACC_8x32 clears them, and the
// epilogue's SCALE_ACC_8x32 multiplies them by alpha (held in Z30) and
// ZERO_ADD_8x32 adds +0 (Z31) to them, for C = 0 + alpha*product: the
// sign of a zero as the scalar path gives it.
#define EACH_ACC_8x32(F) F(Z0); F(Z1); F(Z2); F(Z3); F(Z4); F(Z5); F(Z6); F(Z7); F(Z8); F(Z9); F(Z10); F(Z11); F(Z12); F(Z13); F(Z14); F(Z15)
#define ZERO_Z(z) VPXORD z, z, z
#define MUL_Z30(z) VMULPS Z30, z, z
#define ADD_Z31(z) VADDPS Z31, z, z
#define ZERO_ACC_8x32 EACH_ACC_8x32(ZERO_Z)
#define SCALE_ACC_8x32 VBROADCASTSS alpha+40(FP), Z30; EACH_ACC_8x32(MUL_Z30)
#define ZERO_ADD_8x32 VPXORD Z31, Z31, Z31; EACH_ACC_8x32(ADD_Z31)

// ROW_8x32(a, b, lo, hi) broadcasts A's value at address a (a row's
// value for one k step) into b and fused-multiply-adds it with B's step
// (Z24:Z25) into lo:hi, the row's accumulators. STEP_8x32 gives the rows
// the broadcast registers Z26-Z29 in turn, as the hand-written kernel did.
#define ROW_8x32(a, b, lo, hi) \
	VBROADCASTSS a, b; \
	VFMADD231PS Z24, b, lo; \
	VFMADD231PS Z25, b, hi

// STEP_8x32(k) is k step k (counted from SI and DI): B's 32 values of the
// step in Z24:Z25 against A's 8 values.
#define STEP_8x32(k) \
	VMOVUPS (128*k)(DI), Z24; \
	VMOVUPS (128*k+64)(DI), Z25; \
	ROW_8x32((32*k)(SI), Z26, Z0, Z1); \
	ROW_8x32((32*k+4)(SI), Z27, Z2, Z3); \
	ROW_8x32((32*k+8)(SI), Z28, Z4, Z5); \
	ROW_8x32((32*k+12)(SI), Z29, Z6, Z7); \
	ROW_8x32((32*k+16)(SI), Z26, Z8, Z9); \
	ROW_8x32((32*k+20)(SI), Z27, Z10, Z11); \
	ROW_8x32((32*k+24)(SI), Z28, Z12, Z13); \
	ROW_8x32((32*k+28)(SI), Z29, Z14, Z15)

// EACH_C_ROW(ROW) applies ROW(lo, hi) to the 8 rows of the C tile in
// order, R9 walking from DX by the row stride R8; ADD_C_ROW adds a row of
// C into its accumulators, STORE_C_ROW writes them back.
#define EACH_C_ROW(ROW) \
	MOVQ DX, R9; \
	ROW(Z0, Z1); \
	ADDQ R8, R9; \
	ROW(Z2, Z3); \
	ADDQ R8, R9; \
	ROW(Z4, Z5); \
	ADDQ R8, R9; \
	ROW(Z6, Z7); \
	ADDQ R8, R9; \
	ROW(Z8, Z9); \
	ADDQ R8, R9; \
	ROW(Z10, Z11); \
	ADDQ R8, R9; \
	ROW(Z12, Z13); \
	ADDQ R8, R9; \
	ROW(Z14, Z15)

#define ADD_C_ROW(lo, hi) \
	VADDPS (R9), lo, lo; \
	VADDPS 64(R9), hi, hi

#define STORE_C_ROW(lo, hi) \
	VMOVUPS lo, (R9); \
	VMOVUPS hi, 64(R9)

// CLEAR_HIGH_8x32 ends a kernel: VZEROUPPER, then the registers above 15
// it used cleared (see the top of this file).
#define CLEAR_HIGH_8x32 \
	VZEROUPPER; \
	VPXORD X24, X24, X24; \
	VPXORD X25, X25, X25; \
	VPXORD X26, X26, X26; \
	VPXORD X27, X27, X27; \
	VPXORD X28, X28, X28; \
	VPXORD X29, X29, X29; \
	VPXORD X30, X30, X30; \
	VPXORD X31, X31, X31

// func gemmMicro8x32AVX512(ap, bp *float32, kp int, tile *float32)
// tile[i*32+j] = sum over p < kp of ap[p*8+i] * bp[p*32+j].
TEXT ·gemmMicro8x32AVX512(SB), NOSPLIT, $0-32
	TILE_LOOP(ZERO_ACC_8x32, STEP_8x32, 32, 128)
	STORE4(64, 0, Z0, Z1, Z2, Z3)
	STORE4(64, 256, Z4, Z5, Z6, Z7)
	STORE4(64, 512, Z8, Z9, Z10, Z11)
	STORE4(64, 768, Z12, Z13, Z14, Z15)
	CLEAR_HIGH_8x32
	RET

// func gemmMicro8x32AVX512C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)
// The same product (kp even) written straight into a full 8x32 tile of C
// with row stride ldc: C = 0 + alpha*product, or with accumulate
// C += alpha*product (gemmMicro4x16AVX2C's contract).
TEXT ·gemmMicro8x32AVX512C(SB), NOSPLIT, $0-56
	LOAD_FULL_ARGS
	ZERO_ACC_8x32
	SHRQ $1, CX
	JEQ epilogue

loopc:
	STEP_8x32(0)
	STEP_8x32(1)
	ADDQ $64, SI
	ADDQ $256, DI
	DECQ CX
	JNE loopc

epilogue:
	SCALE_ACC_8x32
	MOVQ accumulate+48(FP), AX
	TESTQ AX, AX
	JNE add
	ZERO_ADD_8x32
	JMP store

add:
	EACH_C_ROW(ADD_C_ROW)

store:
	EACH_C_ROW(STORE_C_ROW)
	CLEAR_HIGH_8x32
	RET

// STEP_8x32R(k) is STEP_8x32 with A read in place: row r's k step k at
// (4*k) bytes past its start, rows 0-3 from SI and 4-7 from R10 (4 rows
// further), BX holding lda in bytes and R9 3*lda.
#define STEP_8x32R(k) \
	VMOVUPS (128*k)(DI), Z24; \
	VMOVUPS (128*k+64)(DI), Z25; \
	ROW_8x32((4*k)(SI), Z26, Z0, Z1); \
	ROW_8x32((4*k)(SI)(BX*1), Z27, Z2, Z3); \
	ROW_8x32((4*k)(SI)(BX*2), Z28, Z4, Z5); \
	ROW_8x32((4*k)(SI)(R9*1), Z29, Z6, Z7); \
	ROW_8x32((4*k)(R10), Z26, Z8, Z9); \
	ROW_8x32((4*k)(R10)(BX*1), Z27, Z10, Z11); \
	ROW_8x32((4*k)(R10)(BX*2), Z28, Z12, Z13); \
	ROW_8x32((4*k)(R10)(R9*1), Z29, Z14, Z15)

// func gemmMicro8x32AVX512R(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, lda int)
// gemmMicro8x32AVX512C reading A where it is rather than packed: rows 0-7
// of a row-major A (row stride lda floats) from ap, kp (even) steps of
// each. The same multiply-adds in the same order as the packed kernel, so
// the same bits.
TEXT ·gemmMicro8x32AVX512R(SB), NOSPLIT, $0-64
	LOAD_FULL_ARGS
	MOVQ lda+56(FP), BX
	SHLQ $2, BX
	LEAQ (BX)(BX*2), R9
	LEAQ (SI)(BX*4), R10
	ZERO_ACC_8x32
	SHRQ $1, CX
	JEQ epilogueR

loopR:
	STEP_8x32R(0)
	STEP_8x32R(1)
	ADDQ $8, SI
	ADDQ $8, R10
	ADDQ $256, DI
	DECQ CX
	JNE loopR

epilogueR:
	SCALE_ACC_8x32
	MOVQ accumulate+48(FP), AX
	TESTQ AX, AX
	JNE addR
	ZERO_ADD_8x32
	JMP storeR

addR:
	EACH_C_ROW(ADD_C_ROW)

storeR:
	EACH_C_ROW(STORE_C_ROW)
	CLEAR_HIGH_8x32
	RET
