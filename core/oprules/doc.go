// Package oprules holds the rules an op's shape inference and every
// backend's kernels apply alike, so that they cannot disagree: the geometry
// of convolutions, pooling and resampling (ConvGeom, PoolGeom, InterpGeom),
// attention and matmul shapes, einsum plans, the axes of softmax,
// reductions and scans, arange's length and elements, quantisation
// parameters, the class layout of losses, reshape strides and axis
// normalisation.
//
// It is for backend and plugin authors, not model code, and imports only
// core/types (whose Shape, Attrs and DType it names by alias): core's OpDefs
// call it from their shape inference, and kernels call it with the same
// attributes. What only kernels apply lives in core/kernelkit; the element
// codec and the random stream in core/numerics.
package oprules
