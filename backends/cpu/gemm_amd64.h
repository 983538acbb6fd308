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
