// Package gcpace lets the code that starts garbage collections itself see
// the collections others started.
//
// Three counters start collections in this library, each for memory the Go
// collector cannot see: the CPU backend's block cache (bytes handed out),
// capi's C memory (new C blocks) and abi's closed handles (storage bytes of
// closed tensors). In an SDK's process the same tensors pass all three, so
// each counter reached its trigger on the same bytes and started its own
// collection: a training step from Python collected twice as often as the
// same step from Go (112 collections in 650 steps against 55 in 600). A
// counter that reaches its trigger after another's collection now starts
// over instead of collecting again.
//
// Copy is the other courtesy to the collector: a large copy in steps it can
// stop between.
package gcpace
