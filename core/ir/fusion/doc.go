// Package fusion is the contract between the code that fuses ops and the
// backends that run fused kernels: Expr, a tree of elementwise registry ops
// over numbered inputs, and the interfaces a backend implements to run such
// trees as one kernel - alone (MapFuser, MultiMapFuser), in a producer's
// store (EpilogueFuser, EpiloguePairFuser), as a reduction's prologue
// (ReduceFuser) - with two fused layouts of its own (ColumnSumFuser,
// AttentionTransposer).
//
// Its callers are the graph IR's passes (core/ir) and nn's fused optimiser
// steps; core itself never fuses, so none of this is in core's API. It is a
// package of its own, not part of core/ir, so that backends and nn can
// implement and call it without importing the IR, whose tests run on the
// backends and nn.
package fusion
