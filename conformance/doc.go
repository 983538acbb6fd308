// Package conformance turns the op registry's sample cases into reference
// vectors and reads them back.
//
// The export tool (conformance/gen/export) writes each op's sample inputs and
// case descriptions into conformance/vectors/<op>.safetensors; the Python
// generator (conformance/gen/make_vectors.py, NumPy and PyTorch) adds the
// expected outputs and the gradients of sum(out*upstream). Go tests read the
// files and need no Python. A key derived from the registry's samples is
// stored in each file, so a sample changed without `make vectors` fails the
// tests as stale instead of passing against old data.
package conformance
