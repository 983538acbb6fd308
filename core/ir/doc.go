// Package ir is Polygraph, webtensor's graph IR: Trace captures what a Go
// function does with tensors as a Graph of registry ops (by running it once
// on example inputs with a core.Tracer installed), passes simplify the graph
// (dead code elimination, common subexpression elimination, constant
// folding), and Run replays it on new inputs through core.Call, so a
// compiled graph computes exactly what the eager code computes, on any
// backend, with autograd.
//
// A graph is straight-line: control flow in the traced function is taken as
// it went on the example inputs (shapes and branches are specialised, as
// torch.jit.trace does). Fusion of op chains into generated kernels builds
// on this package.
package ir
