package kernelkit

// GradTolScale widens tolerances for gradients, which chain several ops.
const GradTolScale = 10
