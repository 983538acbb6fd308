// Package ir is Polygraph, webtensor's graph IR: Trace captures what a Go
// function does with tensors as a Graph of registry ops (by running it once
// on example inputs with a core.Tracer installed), passes simplify the graph
// (constant folding, layout simplification, slice gradients combined,
// common subexpression elimination, dead code elimination), and Run replays it on new inputs
// through core.Call, so a compiled graph computes exactly what the eager
// code computes, on any backend, with autograd.
//
// Nodes are typed: Node.Kind, derived from the op registry, says whether a
// node is dense, a layout view, a sparse (CSR) product, a segment
// reduction, an FFT, a random draw, a select (where), control flow (a loop)
// or a fused kernel. The passes respect what each kind allows (random nodes
// are never folded or merged) and the printer marks every node that is not
// dense.
//
// A whole training step traces into one graph: core.Gradients (or
// Backward and a leaf's Grad, whose detached copy the tracer follows) runs
// the backward pass as ordinary op calls, so the graph holds forward and
// backward and the passes reach both. Two passes are for backward passes:
// CombineSliceGrads makes the sum of slice gradients that tile an axis (a
// fused q/k/v projection's) one concat, and ConcatBeforeReshape lets that
// concat read permuted parts through their strides; ones_like and
// zeros_like, which read only a shape, are captured as constants, so the
// seed of a backward pass folds.
//
// Control flow in the traced function is taken as it went on the example
// inputs (shapes and branches are specialised, as torch.jit.trace does),
// with two exceptions the graph keeps: where is an elementwise select, and
// Loop records a counted loop as one node whose body is a nested graph,
// traced once and run n times by Run; the passes work inside bodies too.
//
// Run releases each intermediate tensor's storage after its last use
// (MemoryPlan shows what is freed where and the peak bytes held), so a
// device's buffer pool hands it to a later node; it keeps inputs, constants,
// outputs and anything sharing their storage, and releases nothing while
// autograd records the run.
//
// Fuse(dev) turns op chains into generated kernels on a backend that can
// run them (WebGPU): trees of elementwise ops become one kernel
// (FuseElementwise, fusion.MapFuser), a tree feeding a sum or mean runs
// inside the reduction's loop (FuseReductions, fusion.ReduceFuser), and a tree
// consuming a matmul, a sparse product or a convolution runs in that
// kernel's store (FuseEpilogues, fusion.EpilogueFuser) - relu(x @ w + b),
// relu(A h + b) or relu(conv(x, w) + r) write their result once. Loop
// bodies are fused like the graph around them. Constant folding stores a
// folded view dense (a transposed weight), which the vec4 matmul needs. Each fold is checked legal first (the folded
// value has no other use, shapes broadcast into the producer's output,
// the device's binding and rank limits from its core.Capabilities) and the differential tests compare fused and unfused
// graphs on random programs. With autograd recording, a fused tree still
// runs as one kernel and records one node whose backward is generated too:
// each input's gradient is itself an elementwise tree (fuse_grad.go), run as
// one kernel; a folded matmul, spmm or reduction then runs as its own
// recorded op beside the tree. A fused node keeps its original nodes and
// runs them where the device cannot fuse (FusionCounts says how often each
// path ran).
package ir
