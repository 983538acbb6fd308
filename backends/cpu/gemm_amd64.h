// The calling convention of the gemm micro-kernels (gemm_amd64.s,
// gemm512_amd64.s), written once because every kernel has one of the two
// Go signatures of gemm_amd64.go's asmTile and asmFull: SI walks A's packed
// sliver, DI B's, CX counts the k steps, DX points at the output, and the
// asmFull form adds R8, C's row stride in bytes.

// LOAD_TILE_ARGS loads asmTile's (ap, bp *float32, kp int, tile *float32).
#define LOAD_TILE_ARGS \
	MOVQ ap+0(FP), SI; \
	MOVQ bp+8(FP), DI; \
	MOVQ kp+16(FP), CX; \
	MOVQ tile+24(FP), DX

// LOAD_FULL_ARGS loads asmFull's (ap, bp *float32, kp int, c *float32,
// ldc int, ...); alpha and accumulate are read where the epilogue needs
// them.
#define LOAD_FULL_ARGS \
	MOVQ ap+0(FP), SI; \
	MOVQ bp+8(FP), DI; \
	MOVQ kp+16(FP), CX; \
	MOVQ c+24(FP), DX; \
	MOVQ ldc+32(FP), R8; \
	SHLQ $2, R8

// LOAD_SLIVER_ARGS follows LOAD_FULL_ARGS in the kernels that run every A
// sliver against one B sliver: B's sliver start in R13 (restarted for each
// A sliver), the k steps in pairs in R14, accumulate in AX and the sliver
// count in R12, tested (a JEQ after it skips the loop).
#define LOAD_SLIVER_ARGS \
	MOVQ DI, R13; \
	MOVQ CX, R14; \
	SHRQ $1, R14; \
	MOVQ accumulate+48(FP), AX; \
	MOVQ slivers+56(FP), R12; \
	TESTQ R12, R12

// TILE_LOOP(ZERO, STEP, sa, sb) is an asmTile kernel up to its stores:
// the arguments loaded, the accumulators cleared (ZERO), then kp k steps
// of STEP(0), SI and DI moving sa and sb bytes a step. Every tile kernel
// runs the same loop; only its accumulators and step differ.
#define TILE_LOOP(ZERO, STEP, sa, sb) \
	LOAD_TILE_ARGS; \
	ZERO; \
	TESTQ CX, CX; \
	JEQ done; \
loop: \
	STEP(0); \
	ADDQ $sa, SI; \
	ADDQ $sb, DI; \
	DECQ CX; \
	JNE loop; \
done:

// STORE4(w, o, a, b, c, d) writes four accumulators, w bytes wide, to the
// tile at DX from byte o on: the tile kernels' rows, in register order.
#define STORE4(w, o, a, b, c, d) \
	VMOVUPS a, (o)(DX); \
	VMOVUPS b, (o+w)(DX); \
	VMOVUPS c, (o+2*w)(DX); \
	VMOVUPS d, (o+3*w)(DX)
