#include "textflag.h"

// The small-head attention tile (kernels_attention_small.go): sixteen
// queries, one per zmm lane, against every key of one head. The caller
// scales the queries by scale·log2(e), so pass one's chain of fused
// multiply-adds in e order gives each score in base 2; it writes them
// and keeps their running maximum. Pass two weighs each key by
// 2^(score - max): VREDUCEPS splits x = score - max into floor(x) and
// f = x - floor(x) in [0, 1) exactly, a degree-5 polynomial (fits.py's
// exp2 fit, constant term 1, so the maximum's weight is exactly 1:
// 2.1 ulps, 2.9 evaluated in float32) gives 2^f, and VSCALEFPS multiplies
// it by 2^floor(x). That is 9 vector instructions where exp(x) took 17
// (no ln 2 split, no upper clamp: x <= 0), and the tile is bound by its
// FMA pipes: the degree-6 fit (1.05 ulps) cost one multiply-add more a
// key, and the 64x64 UNet's forward was 3% slower with it.
// It sums the weights and adds p*v into Ev accumulators. Head widths are
// 8 or 16, each a fully unrolled chain. Nothing is written but scores and
// out: out[e*16+lane] = acc[e] / sum. Z16-Z23 are zeroed before
// returning, as in gemm512_amd64.s: a live high register makes Go's
// scalar float code after the kernel pay the SSE/AVX transition.

// attnLo clamps x from below at -150, where 2^x rounds to 0: a key whose
// score is -Inf (x = -Inf) weighs 0 instead of taking VREDUCEPS's NaN.
DATA attnLo<>+0(SB)/4, $0xc3160000
GLOBL attnLo<>(SB), RODATA|NOPTR, $4
DATA attnP5<>+0(SB)/4, $0x3af42a38
GLOBL attnP5<>(SB), RODATA|NOPTR, $4
DATA attnP4<>+0(SB)/4, $0x3c13dd2e
GLOBL attnP4<>(SB), RODATA|NOPTR, $4
DATA attnP3<>+0(SB)/4, $0x3d648a06
GLOBL attnP3<>(SB), RODATA|NOPTR, $4
DATA attnP2<>+0(SB)/4, $0x3e75edce
GLOBL attnP2<>(SB), RODATA|NOPTR, $4
DATA attnP1<>+0(SB)/4, $0x3f31725e
GLOBL attnP1<>(SB), RODATA|NOPTR, $4
DATA attnOne<>+0(SB)/4, $0x3f800000
GLOBL attnOne<>(SB), RODATA|NOPTR, $4
DATA attnNegInf<>+0(SB)/4, $0xff800000
GLOBL attnNegInf<>(SB), RODATA|NOPTR, $4

// EXP2PS leaves 2^X in R for X <= 0 (X clamped to [-150, 0] by the
// caller's maximum and Z22), clobbering F. VREDUCEPS $0x09 is X - floor(X)
// (rounding down, precision exception suppressed); VSCALEFPS scales by
// 2^floor of its second operand.
#define EXP2PS(X, R, F) \
	VREDUCEPS $0x09, X, F \
	VBROADCASTSS attnP5<>(SB), R \
	VFMADD213PS.BCST attnP4<>(SB), F, R \
	VFMADD213PS.BCST attnP3<>(SB), F, R \
	VFMADD213PS.BCST attnP2<>(SB), F, R \
	VFMADD213PS.BCST attnP1<>(SB), F, R \
	VFMADD213PS.BCST attnOne<>(SB), F, R \
	VSCALEFPS X, R, R

// The tile's repeated steps, written once: a head of 16 runs the LO and HI
// halves, one of 8 the LO half only (the same instructions in the same
// order as writing them out, so the products do not change).

// The score chain and the weighing chain walk the same values of a row
// at DI, four bytes apart, one broadcast fused multiply-add each: EACH4
// applies F(offset, register) to the four from offset o, SCORE_FMA adds a
// key value times query element q to the score Z18, WEIGH_FMA the weight
// Z19 times a value into output acc.
#define EACH4(F, o, a, b, c, d) F(o, a); F(o+4, b); F(o+8, c); F(o+12, d)
#define SCORE_FMA(off, q) VFMADD231PS.BCST (off)(DI), q, Z18
#define WEIGH_FMA(off, acc) VFMADD231PS.BCST (off)(DI), Z19, acc

// SCORE_LO8 starts a key's score in Z18 from query elements 0-7 (Z0-Z7)
// and the key's first eight values at DI; SCORE_HI8 adds elements 8-15.
#define SCORE_LO8 \
	VMULPS.BCST (DI), Z0, Z18; \
	SCORE_FMA(4, Z1); SCORE_FMA(8, Z2); SCORE_FMA(12, Z3); \
	EACH4(SCORE_FMA, 16, Z4, Z5, Z6, Z7)

#define SCORE_HI8 \
	EACH4(SCORE_FMA, 32, Z8, Z9, Z10, Z11); \
	EACH4(SCORE_FMA, 48, Z12, Z13, Z14, Z15)

// SCORE_BIAS adds the key's bias at R9 to its score and steps R9 on.
#define SCORE_BIAS \
	VADDPS.BCST (R9), Z18, Z18; \
	ADDQ $4, R9

// SCORE_END stores the score, keeps the running maximum and steps to
// the next key.
#define SCORE_END \
	VMOVUPS Z18, (DX); \
	VMAXPS Z18, Z17, Z17; \
	ADDQ R8, DI; \
	ADDQ $64, DX

// WEIGH_START turns a key's score at DX into its weight Z19 (Z17 holds
// minus the maximum: -max + score is score - max exactly) and adds it to
// the sum Z16; WEIGH_LO8 and WEIGH_HI8 add the weight times the value
// row at DI to the outputs Z0-Z7 and Z8-Z15; WEIGH_END steps to the next key.
#define WEIGH_START \
	VADDPS (DX), Z17, Z18; \
	VMAXPS Z18, Z22, Z18; \
	EXP2PS(Z18, Z19, Z20); \
	VADDPS Z19, Z16, Z16

#define WEIGH_LO8 \
	EACH4(WEIGH_FMA, 0, Z0, Z1, Z2, Z3); \
	EACH4(WEIGH_FMA, 16, Z4, Z5, Z6, Z7)

#define WEIGH_HI8 \
	EACH4(WEIGH_FMA, 32, Z8, Z9, Z10, Z11); \
	EACH4(WEIGH_FMA, 48, Z12, Z13, Z14, Z15)

#define WEIGH_END \
	ADDQ R8, DI; \
	ADDQ $64, DX

// SCALE8 multiplies eight query vectors by Z16, the scale·log2(e).
#define SCALE8(A, B, C, D, E, F, G, H) \
	VMULPS Z16, A, A; VMULPS Z16, B, B; VMULPS Z16, C, C; VMULPS Z16, D, D; \
	VMULPS Z16, E, E; VMULPS Z16, F, F; VMULPS Z16, G, G; VMULPS Z16, H, H

// func attentionTile16AVX512(qt *float32, e int, k *float32, ldk int, v *float32, ldv int, ev int, s int, scale2 float32, scores *float32, out *float32, bias *float32)
// qt holds the sixteen queries transposed (qt[e*16+lane]), which the
// kernel scales by scale2 = scale·log2(e); k and v are the head's first
// key and value rows, ldk and ldv floats apart; s >= 1 keys; bias, when
// not nil, holds s floats added to the keys' scores (a key-padding mask
// times log2(e)); scores has room for s*16 floats.
TEXT ·attentionTile16AVX512(SB), NOSPLIT, $0-96
	MOVQ bias+88(FP), R9
	MOVQ qt+0(FP), SI
	MOVQ e+8(FP), BX
	MOVQ k+16(FP), DI
	MOVQ ldk+24(FP), R8
	SHLQ $2, R8
	MOVQ s+56(FP), CX
	MOVQ scores+72(FP), DX
	VBROADCASTSS attnNegInf<>(SB), Z17
	VBROADCASTSS scale2+64(FP), Z16

	VMOVUPS 0(SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS 256(SI), Z4
	VMOVUPS 320(SI), Z5
	VMOVUPS 384(SI), Z6
	VMOVUPS 448(SI), Z7
	SCALE8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	CMPQ BX, $16
	JNE narrow
	VMOVUPS 512(SI), Z8
	VMOVUPS 576(SI), Z9
	VMOVUPS 640(SI), Z10
	VMOVUPS 704(SI), Z11
	VMOVUPS 768(SI), Z12
	VMOVUPS 832(SI), Z13
	VMOVUPS 896(SI), Z14
	VMOVUPS 960(SI), Z15
	SCALE8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)

	TESTQ R9, R9
	JNE scores16m

scores16:
	SCORE_LO8
	SCORE_HI8
	SCORE_END
	DECQ CX
	JNE scores16
	JMP weigh

scores16m:
	SCORE_LO8
	SCORE_HI8
	SCORE_BIAS
	SCORE_END
	DECQ CX
	JNE scores16m
	JMP weigh

narrow:
	TESTQ R9, R9
	JNE scores8m

scores8:
	SCORE_LO8
	SCORE_END
	DECQ CX
	JNE scores8
	JMP weigh

scores8m:
	SCORE_LO8
	SCORE_BIAS
	SCORE_END
	DECQ CX
	JNE scores8m
	JMP weigh

weigh:
	MOVQ v+32(FP), DI
	MOVQ ldv+40(FP), R8
	SHLQ $2, R8
	MOVQ ev+48(FP), BX
	MOVQ s+56(FP), CX
	MOVQ scores+72(FP), DX
	VBROADCASTSS attnLo<>(SB), Z22
	VPXORD Z16, Z16, Z16
	VSUBPS Z17, Z16, Z17
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	CMPQ BX, $16
	JNE weigh8

weigh16:
	WEIGH_START
	WEIGH_LO8
	WEIGH_HI8
	WEIGH_END
	DECQ CX
	JNE weigh16

	JMP store

weigh8:
	WEIGH_START
	WEIGH_LO8
	WEIGH_END
	DECQ CX
	JNE weigh8

store:
	MOVQ out+80(FP), SI
	VBROADCASTSS attnOne<>(SB), Z18
	VDIVPS Z16, Z18, Z18
	VMULPS Z18, Z0, Z0
	VMOVUPS Z0, 0(SI)
	VMULPS Z18, Z1, Z1
	VMOVUPS Z1, 64(SI)
	VMULPS Z18, Z2, Z2
	VMOVUPS Z2, 128(SI)
	VMULPS Z18, Z3, Z3
	VMOVUPS Z3, 192(SI)
	VMULPS Z18, Z4, Z4
	VMOVUPS Z4, 256(SI)
	VMULPS Z18, Z5, Z5
	VMOVUPS Z5, 320(SI)
	VMULPS Z18, Z6, Z6
	VMOVUPS Z6, 384(SI)
	VMULPS Z18, Z7, Z7
	VMOVUPS Z7, 448(SI)
	CMPQ BX, $16
	JNE done
	VMULPS Z18, Z8, Z8
	VMOVUPS Z8, 512(SI)
	VMULPS Z18, Z9, Z9
	VMOVUPS Z9, 576(SI)
	VMULPS Z18, Z10, Z10
	VMOVUPS Z10, 640(SI)
	VMULPS Z18, Z11, Z11
	VMOVUPS Z11, 704(SI)
	VMULPS Z18, Z12, Z12
	VMOVUPS Z12, 768(SI)
	VMULPS Z18, Z13, Z13
	VMOVUPS Z13, 832(SI)
	VMULPS Z18, Z14, Z14
	VMOVUPS Z14, 896(SI)
	VMULPS Z18, Z15, Z15
	VMOVUPS Z15, 960(SI)

done:
	VZEROUPPER
	VPXORD X16, X16, X16
	VPXORD X17, X17, X17
	VPXORD X18, X18, X18
	VPXORD X19, X19, X19
	VPXORD X20, X20, X20
	VPXORD X21, X21, X21
	VPXORD X22, X22, X22
	VPXORD X23, X23, X23
	RET

// SCORE_ACC_LO8 adds query elements 16-23 (now in Z0-Z7) times the key's
// elements at DI to the partial score at DX, into Z18; SCORE_HI8 then
// adds 24-31.
#define SCORE_ACC_LO8 \
	VMOVUPS (DX), Z18; \
	VFMADD231PS.BCST (DI), Z0, Z18; \
	VFMADD231PS.BCST 4(DI), Z1, Z18; \
	VFMADD231PS.BCST 8(DI), Z2, Z18; \
	VFMADD231PS.BCST 12(DI), Z3, Z18; \
	VFMADD231PS.BCST 16(DI), Z4, Z18; \
	VFMADD231PS.BCST 20(DI), Z5, Z18; \
	VFMADD231PS.BCST 24(DI), Z6, Z18; \
	VFMADD231PS.BCST 28(DI), Z7, Z18

// LOAD16 loads sixteen vectors from SI into Z0-Z15; ZERO16 clears them;
// STORE16 multiplies them by Z18 and stores them at SI.
#define LOAD16 \
	VMOVUPS 0(SI), Z0; VMOVUPS 64(SI), Z1; VMOVUPS 128(SI), Z2; VMOVUPS 192(SI), Z3; \
	VMOVUPS 256(SI), Z4; VMOVUPS 320(SI), Z5; VMOVUPS 384(SI), Z6; VMOVUPS 448(SI), Z7; \
	VMOVUPS 512(SI), Z8; VMOVUPS 576(SI), Z9; VMOVUPS 640(SI), Z10; VMOVUPS 704(SI), Z11; \
	VMOVUPS 768(SI), Z12; VMOVUPS 832(SI), Z13; VMOVUPS 896(SI), Z14; VMOVUPS 960(SI), Z15

#define ZERO16 \
	VPXORD Z0, Z0, Z0; VPXORD Z1, Z1, Z1; VPXORD Z2, Z2, Z2; VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; VPXORD Z5, Z5, Z5; VPXORD Z6, Z6, Z6; VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; VPXORD Z9, Z9, Z9; VPXORD Z10, Z10, Z10; VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; VPXORD Z13, Z13, Z13; VPXORD Z14, Z14, Z14; VPXORD Z15, Z15, Z15

#define STORE16 \
	VMULPS Z18, Z0, Z0; VMOVUPS Z0, 0(SI); VMULPS Z18, Z1, Z1; VMOVUPS Z1, 64(SI); \
	VMULPS Z18, Z2, Z2; VMOVUPS Z2, 128(SI); VMULPS Z18, Z3, Z3; VMOVUPS Z3, 192(SI); \
	VMULPS Z18, Z4, Z4; VMOVUPS Z4, 256(SI); VMULPS Z18, Z5, Z5; VMOVUPS Z5, 320(SI); \
	VMULPS Z18, Z6, Z6; VMOVUPS Z6, 384(SI); VMULPS Z18, Z7, Z7; VMOVUPS Z7, 448(SI); \
	VMULPS Z18, Z8, Z8; VMOVUPS Z8, 512(SI); VMULPS Z18, Z9, Z9; VMOVUPS Z9, 576(SI); \
	VMULPS Z18, Z10, Z10; VMOVUPS Z10, 640(SI); VMULPS Z18, Z11, Z11; VMOVUPS Z11, 704(SI); \
	VMULPS Z18, Z12, Z12; VMOVUPS Z12, 768(SI); VMULPS Z18, Z13, Z13; VMOVUPS Z13, 832(SI); \
	VMULPS Z18, Z14, Z14; VMOVUPS Z14, 896(SI); VMULPS Z18, Z15, Z15; VMOVUPS Z15, 960(SI)

// func attentionTile16x32AVX512(qt *float32, k *float32, ldk int, v *float32, ldv int, s int, scale2 float32, scores *float32, out *float32, bias *float32)
// is attentionTile16AVX512 for heads of 32 (e = ev = 32), whose queries or
// accumulators would take all 32 registers: the scores are summed in two
// passes over the keys (elements 0-15, then 16-31 added to the stored
// partial sums, keeping the maximum), the weights in two (the first
// stores each key's weight over its score and accumulates values 0-15,
// the second reads the weights back for values 16-31); the bias, as
// attentionTile16AVX512's, is added as the second pass ends each score.
TEXT ·attentionTile16x32AVX512(SB), NOSPLIT, $0-80
	MOVQ bias+72(FP), R9
	MOVQ ldk+16(FP), R8
	SHLQ $2, R8
	VBROADCASTSS scale2+48(FP), Z16

	// Scores, elements 0-15.
	MOVQ qt+0(FP), SI
	LOAD16
	SCALE8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	SCALE8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ k+8(FP), DI
	MOVQ s+40(FP), CX
	MOVQ scores+56(FP), DX
half1:
	SCORE_LO8
	SCORE_HI8
	VMOVUPS Z18, (DX)
	ADDQ R8, DI
	ADDQ $64, DX
	DECQ CX
	JNE half1

	// Elements 16-31, and the maximum.
	ADDQ $1024, SI
	LOAD16
	SCALE8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	SCALE8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ k+8(FP), DI
	ADDQ $64, DI
	MOVQ s+40(FP), CX
	MOVQ scores+56(FP), DX
	VBROADCASTSS attnNegInf<>(SB), Z17
	TESTQ R9, R9
	JNE half2m
half2:
	SCORE_ACC_LO8
	SCORE_HI8
	SCORE_END
	DECQ CX
	JNE half2
	JMP weighs

half2m:
	SCORE_ACC_LO8
	SCORE_HI8
	SCORE_BIAS
	SCORE_END
	DECQ CX
	JNE half2m

weighs:

	// Weights and values 0-15.
	MOVQ v+24(FP), DI
	MOVQ ldv+32(FP), R8
	SHLQ $2, R8
	MOVQ s+40(FP), CX
	MOVQ scores+56(FP), DX
	VBROADCASTSS attnLo<>(SB), Z22
	VPXORD Z16, Z16, Z16
	VSUBPS Z17, Z16, Z17
	ZERO16
weighA:
	WEIGH_START
	VMOVUPS Z19, (DX)
	WEIGH_LO8
	WEIGH_HI8
	WEIGH_END
	DECQ CX
	JNE weighA
	MOVQ out+64(FP), SI
	VBROADCASTSS attnOne<>(SB), Z18
	VDIVPS Z16, Z18, Z18
	STORE16

	// Values 16-31 with the stored weights; Z18 still holds 1/sum.
	MOVQ v+24(FP), DI
	ADDQ $64, DI
	MOVQ s+40(FP), CX
	MOVQ scores+56(FP), DX
	ZERO16
weighB:
	VMOVUPS (DX), Z19
	WEIGH_LO8
	WEIGH_HI8
	WEIGH_END
	DECQ CX
	JNE weighB
	ADDQ $1024, SI
	STORE16

	VZEROUPPER
	VPXORD X16, X16, X16
	VPXORD X17, X17, X17
	VPXORD X18, X18, X18
	VPXORD X19, X19, X19
	VPXORD X20, X20, X20
	VPXORD X21, X21, X21
	VPXORD X22, X22, X22
	VPXORD X23, X23, X23
	RET
